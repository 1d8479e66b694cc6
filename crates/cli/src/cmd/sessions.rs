//! `vernier sessions`: the stored sessions.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_store::Store;

use crate::db;
use crate::out::outln;

/// A Unix timestamp in nanoseconds as local time.
pub fn local_time(ns: i64) -> String {
    use chrono::{Local, TimeZone};
    Local
        .timestamp_nanos(ns)
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

pub fn sessions(db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let sessions = store.sessions()?;
    if sessions.is_empty() {
        outln!("no sessions stored");
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{:<36}  {:<19}  {:<11}  {:<16}  what / tags",
        "id",
        "started",
        "status",
        "fingerprint"
    );
    for s in sessions {
        let what = s
            .suite
            .clone()
            .map(|n| format!("suite {n}"))
            .unwrap_or_else(|| s.specs.join(" "));
        let tags: Vec<String> = s.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        outln!(
            "{:<36}  {:<19}  {:<11}  {:<16}  {}{}{}",
            s.id,
            local_time(s.started_at_ns),
            s.status.to_string(),
            s.fingerprint,
            what,
            if tags.is_empty() { "" } else { "  " },
            tags.join(" ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
