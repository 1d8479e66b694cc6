//! `vernier delete`: remove stored sessions with everything recorded under them.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use vernier_model::SessionStatus;

use crate::cli::DeleteArgs;
use crate::db;
use crate::out::{local_time, outln, printable};
use vernier_report::format::{describe_session as describe, plural};

pub fn delete(args: DeleteArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let mut store = db::open_existing_for_writing(db_arg)?;
    let ids = store.select(&args.selector)?;
    let sessions: Vec<_> = store
        .session_headers()?
        .into_iter()
        .filter(|s| ids.contains(&s.id))
        .collect();
    if !args.force {
        if let Some(s) = sessions.iter().find(|s| s.status == SessionStatus::Running) {
            bail!(
                "session {} is recorded as running and its process may still be writing it; \
                 give --force to delete it anyway",
                s.id
            );
        }
    }
    let count = plural(sessions.len(), "session");
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            bail!(
                "not deleting {count} without confirmation: standard input is not a terminal; \
                 give --yes"
            );
        }
        let mut stderr = std::io::stderr().lock();
        for s in &sessions {
            writeln!(
                stderr,
                "  {}  {}  {}",
                s.id,
                local_time(s.started_at_ns),
                printable(&describe(s.suite.as_deref(), &s.specs))
            )?;
        }
        write!(
            stderr,
            "delete {count} with {} runs and monitor data? [y/N] ",
            if sessions.len() == 1 { "its" } else { "their" }
        )?;
        stderr.flush()?;
        let mut answer = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut answer)
            .context("cannot read the answer")?;
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            writeln!(stderr, "nothing deleted")?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    let report = store.delete_sessions(&ids)?;
    for id in &ids {
        outln!("deleted session {id}");
    }
    outln!(
        "deleted {}, {}, {}, {} and {}",
        plural(report.sessions, "session"),
        plural(report.configurations, "configuration"),
        plural(report.runs, "run"),
        plural(report.monitor_records, "monitor record"),
        plural(report.kernel_configs, "kernel configuration"),
    );
    Ok(ExitCode::SUCCESS)
}
