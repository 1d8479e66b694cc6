//! `vernier show`: the statistics of a stored session.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use vernier_store::Store;

use crate::cli::{ShowArgs, ShowFormat};
use crate::cmd::run::terminal_width;
use crate::db;

pub fn show(args: ShowArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let id = store.resolve(&args.session)?;
    let session = store
        .load_session(id)
        .with_context(|| format!("cannot load session {id}"))?;
    let summaries = vernier_report::summarize_session(&session);
    match args.format {
        ShowFormat::Json => {
            println!("{}", serde_json::to_string_pretty(&summaries)?);
        }
        ShowFormat::Table => {
            let info = &session.info;
            println!(
                "session {}  {}  {}  fingerprint {}",
                info.id,
                crate::cmd::sessions::local_time(info.started_at_ns),
                info.status,
                info.fingerprint
            );
            if !info.tags.is_empty() {
                let tags: Vec<String> = info.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
                println!("tags: {}", tags.join(" "));
            }
            if let Some(note) = &info.note {
                println!("note: {note}");
            }
            println!();
            print!(
                "{}",
                vernier_report::table::show_text(&summaries, terminal_width())
            );
            if args.histogram {
                for s in &summaries {
                    println!("{}: {} in {}", s.label(), s.metric, s.unit);
                    println!(
                        "{}",
                        vernier_report::histogram::histogram(&s.values, 12, 50)
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
