//! `vernier env show` and `vernier env diff`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use vernier_analysis::environment::{diff, kernel_config_diff};
use vernier_model::Environment;
use vernier_store::Load;
use vernier_sys::Roots;

use crate::cli::EnvCommand;
use crate::db;
use crate::db::resolve_one;
use crate::out::{out, outln, printable};

pub fn env(command: EnvCommand, db_arg: Option<&Path>) -> Result<ExitCode> {
    match command {
        EnvCommand::Show { session } => {
            let environment = match session {
                None => vernier_sys::environment::capture(&Roots::real()),
                Some(selector) => {
                    let store = db::open_for_reading(db_arg)?;
                    let id = resolve_one(store.as_ref(), &selector)?;
                    store.load_session(id, Load::INFO)?.info.environment
                }
            };
            out!("{}", show_text(&environment));
        }
        EnvCommand::Diff { a, b } => {
            let store = db::open_for_reading(db_arg)?;
            let load = |selector: &str| -> Result<Environment> {
                let id = resolve_one(store.as_ref(), selector)?;
                Ok(store
                    .load_session(id, Load::INFO)
                    .with_context(|| format!("cannot load session {id}"))?
                    .info
                    .environment)
            };
            let (ea, eb) = (load(&a)?, load(&b)?);
            outln!("--- {} (fingerprint {})", printable(&a), ea.fingerprint());
            outln!("+++ {} (fingerprint {})", printable(&b), eb.fingerprint());
            let compared = diff(&ea, &eb);
            if compared.is_empty() {
                outln!("the environments do not differ");
            } else if compared.differences.is_empty() {
                outln!("the fields both recorded do not differ");
            }
            if let Some(line) = compared.not_compared(&printable(&a), &printable(&b)) {
                outln!("{line}");
            }
            let mut group = "";
            for d in &compared.differences {
                if d.group != group {
                    group = d.group;
                    outln!("\n[{group}]");
                }
                let show = |v: &Option<String>| {
                    v.as_deref()
                        .map_or_else(|| "(absent)".into(), |v| printable(v).into_owned())
                };
                outln!("  {}:\n  - {}\n  + {}", d.field, show(&d.a), show(&d.b));
            }
            if let (Some(ha), Some(hb)) = (&ea.kernel_config_sha256, &eb.kernel_config_sha256) {
                if ha != hb {
                    match (store.kernel_config(ha)?, store.kernel_config(hb)?) {
                        (Some(ca), Some(cb)) => {
                            outln!("\n[kernel config]");
                            for c in kernel_config_diff(&ca, &cb) {
                                let option = printable(&c.option);
                                let show = |v: &Option<String>| match v {
                                    Some(v) => format!("{option}={}", printable(v)),
                                    None => format!("# {option} is not set"),
                                };
                                outln!("  - {}\n  + {}", show(&c.a), show(&c.b));
                            }
                        }
                        _ => outln!("\n[kernel config] differs; the texts are not stored"),
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The environment as `name: value` lines, maps indented below their name.
fn show_text(e: &Environment) -> String {
    let value = serde_json::to_value(e).unwrap_or_default();
    let mut out = format!("fingerprint: {}\n", e.fingerprint());
    if let serde_json::Value::Object(fields) = value {
        for (name, v) in fields {
            match v {
                // The machine's identity is always listed, so a session from a machine that
                // had none says so rather than leaving the line out.
                serde_json::Value::Null if name == "hostname" || name == "machine_id" => {
                    out.push_str(&format!("{name}: unknown\n"));
                }
                serde_json::Value::Null => {}
                serde_json::Value::Object(map) if map.is_empty() => {}
                serde_json::Value::Object(map) => {
                    out.push_str(&format!("{name}:\n"));
                    for (k, v) in map {
                        out.push_str(&format!("  {}: {}\n", printable(&k), plain(&v)));
                    }
                }
                other => out.push_str(&format!("{name}: {}\n", plain(&other))),
            }
        }
    }
    out
}

/// A JSON value as text for the terminal: strings unquoted, with control characters escaped.
fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => printable(s).into_owned(),
        other => other.to_string(),
    }
}
