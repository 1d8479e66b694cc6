//! `vernier sessions`: the stored sessions, all or those a selector names.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::SessionsArgs;
use crate::db;
use crate::out::{clipped, local_time, outln, printable};
use vernier_report::format::describe_session as describe;

/// The widest the host column gets, in characters.
const HOST_COLUMN: usize = 64;

pub fn sessions(args: SessionsArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let mut sessions = store.session_headers()?;
    let total = sessions.len();
    if let Some(selector) = &args.selector {
        let ids = store.select(selector)?;
        sessions.retain(|s| ids.contains(&s.id));
    }
    if total == 0 {
        outln!("no sessions stored");
        return Ok(ExitCode::SUCCESS);
    }
    // A host name has at most 64 bytes on Linux (HOST_NAME_MAX, gethostname(2)); an imported
    // one may be of any length, and is cut so that the column stays readable.
    let host = |s: &vernier_store::SessionHeader| {
        let name = printable(s.hostname.as_deref().unwrap_or("unknown")).into_owned();
        clipped(&name, HOST_COLUMN).into_owned()
    };
    let host_width = sessions
        .iter()
        .map(|s| host(s).chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    outln!(
        "{:<36}  {:<19}  {:<11}  {:<16}  {:<host_width$}  what / tags",
        "id",
        "started",
        "status",
        "fingerprint",
        "host"
    );
    for s in &sessions {
        // A skipped session ran nothing; its note is why.
        let why = match (&s.status, &s.note, &s.copying) {
            // A copy stored part by part reads as running until its last part: say it is
            // being copied, and how far (docs/farm.md).
            (_, _, Some(copy)) => format!(
                "  (being copied: {} of {} runs so far; the next sync stores the rest)",
                copy.runs, copy.of
            ),
            (vernier_model::SessionStatus::Skipped, Some(note), None) => {
                format!("  ({})", printable(note))
            }
            _ => String::new(),
        };
        let status = match s.copying {
            Some(_) => "copying".to_string(),
            None => s.status.to_string(),
        };
        let tags: Vec<String> = s
            .tags
            .iter()
            .map(|(k, v)| format!("{}={}", printable(k), printable(v)))
            .collect();
        outln!(
            "{:<36}  {:<19}  {:<11}  {:<16}  {:<host_width$}  {}{}{}{}",
            s.id,
            local_time(s.started_at_ns),
            status,
            s.fingerprint,
            host(s),
            printable(&describe(s.suite.as_deref(), &s.specs)),
            why,
            if tags.is_empty() { "" } else { "  " },
            tags.join(" ")
        );
    }
    let hidden = total - sessions.len();
    if hidden > 0 {
        outln!(
            "{hidden} other session{} not shown (not selected by '{}')",
            if hidden == 1 { "" } else { "s" },
            printable(args.selector.as_deref().unwrap_or_default())
        );
    }
    Ok(ExitCode::SUCCESS)
}
