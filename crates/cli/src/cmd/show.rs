//! `vernier show`: the statistics of a stored session.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use vernier_store::Store;

use crate::cli::{ShowArgs, ShowFormat};
use crate::cmd::run::terminal_width;
use crate::db;
use crate::out::{out, outln};

pub fn show(args: ShowArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let id = store.resolve(&args.session)?;
    let session = store
        .load_session(id)
        .with_context(|| format!("cannot load session {id}"))?;
    let summaries = vernier_report::summarize_session(&session);
    match args.format {
        ShowFormat::Json => {
            outln!("{}", serde_json::to_string_pretty(&summaries)?);
        }
        ShowFormat::Table => {
            let info = &session.info;
            outln!(
                "session {}  {}  {}  fingerprint {}",
                info.id,
                crate::cmd::sessions::local_time(info.started_at_ns),
                info.status,
                info.fingerprint
            );
            if !info.tags.is_empty() {
                let tags: Vec<String> = info.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
                outln!("tags: {}", tags.join(" "));
            }
            if let Some(note) = &info.note {
                outln!("note: {note}");
            }
            outln!();
            out!(
                "{}",
                vernier_report::table::show_text(&summaries, terminal_width())
            );
            let important: Vec<_> = info
                .findings
                .iter()
                .filter(|f| f.severity >= vernier_model::Severity::Warning)
                .cloned()
                .collect();
            if !important.is_empty() {
                outln!("validity findings when the session started:");
                out!("{}", crate::cmd::system::findings_text(&important));
                outln!();
            }
            if args.monitors {
                for c in &session.configurations {
                    outln!(
                        "{}:{}: monitors",
                        c.record.benchmark,
                        c.record.options.label()
                    );
                    out!("{}", vernier_report::monitors::monitor_text(c));
                    outln!();
                }
            }
            if let Some(key) = &args.series {
                let mut found = false;
                for c in &session.configurations {
                    if let Some(text) = vernier_report::monitors::series_text(c, key) {
                        found = true;
                        outln!("{}:{}: {key}", c.record.benchmark, c.record.options.label());
                        out!("{text}");
                    }
                }
                if !found {
                    anyhow::bail!(
                        "no run of this session recorded the series '{key}'; \
                         `vernier show --monitors` lists the recorded ones"
                    );
                }
            }
            if args.histogram {
                for s in &summaries {
                    outln!("{}: {} in {}", s.label(), s.metric, s.unit);
                    outln!(
                        "{}",
                        vernier_report::histogram::histogram(&s.values, 12, 50)
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
