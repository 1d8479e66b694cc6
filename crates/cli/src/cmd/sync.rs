//! `vernier sync --to TARGET [--from SOURCE]`: copies every session that the target lacks, and
//! the runs recorded since the last sync of sessions still running then
//! (`vernier_store::copy_sessions`), one transaction per session, and reports what it copied,
//! what was already there and what is still running.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use vernier_model::text::plural;
use vernier_store::{Access, Location, SyncStep};

use crate::cli::SyncArgs;
use crate::db;
use crate::out::{self, outln};

/// The source and target of a sync, checked: not one database, a target that may be created.
fn locations(from: &Path, to: &Path, option: &str) -> Result<(Location, Location)> {
    let source_location = db::location(Some(from))?;
    let target_location = db::parse(to)?;
    if db::same_database(&source_location, &target_location) {
        bail!(
            "{option} {target_location} is the database synced from; give another database to \
             copy to"
        );
    }
    db::check_copy_target(option, &target_location)?;
    Ok((source_location, target_location))
}

pub fn sync(args: SyncArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let from = db::location(args.from.as_deref().or(db_arg))?;
    let (source_location, target_location) = locations(from.as_arg().as_ref(), &args.to, "--to")?;
    let source = db::open(Some(source_location.as_arg().as_ref()), Access::Read)?;
    let mut target = db::open(Some(&args.to), Access::Create)?;
    // Each session's line is printed as soon as it is stored; the first failure to write
    // standard output is reported after the copy, which it does not stop.
    let mut printed = Ok(());
    let copied = vernier_store::copy_sessions(source.as_ref(), target.as_mut(), |step| {
        let still = |running: bool| {
            if running {
                "still running, later runs copied by later syncs"
            } else {
                "ended, copied whole"
            }
        };
        let line = match step {
            SyncStep::Copied { id, runs, running } if args.verbose => {
                format!("copied {id} ({}, {})", plural(runs, "run"), still(running))
            }
            SyncStep::Extended { id, runs, running } if args.verbose => {
                format!("added {} to {id} ({})", plural(runs, "run"), still(running))
            }
            SyncStep::Differs { id } => {
                format!("kept {id}: the target holds it with other tags, note, status or runs")
            }
            SyncStep::Running { id } if args.verbose => {
                format!("left {id}: still running, no run recorded since the last sync")
            }
            _ => return,
        };
        if printed.is_ok() {
            printed = out::write_fmt(format_args!("{line}\n"));
        }
    });
    printed?;
    let report = copied?;
    outln!(
        "{} -> {}: copied {} ({}), {} already present{}, {} added to {} copied before, {} still \
         running (later runs copied by later syncs)",
        source_location,
        target_location,
        plural(report.copied, "session"),
        plural(report.runs, "run"),
        report.present + report.differs,
        if report.differs > 0 {
            format!(
                " ({} with other tags, note, status or runs, kept)",
                report.differs
            )
        } else {
            String::new()
        },
        plural(report.added_runs, "run"),
        plural(report.extended, "session"),
        report.running
    );
    Ok(ExitCode::SUCCESS)
}

/// Syncs `database` to `to` every `every` seconds on a thread of its own while a monitor
/// records (`vernier monitor --sync-every`), until the returned handle is stopped. Each sync
/// is one `vernier sync --to` without its output; a failure (the server down) is one line on
/// standard error, and the next sync copies what this one could not.
pub struct PeriodicSync {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl PeriodicSync {
    /// Checks the two databases as `sync` does, then starts.
    pub fn start(database: &Location, to: &Path, every: f64) -> Result<PeriodicSync> {
        let (source, target) = locations(database.as_arg().as_ref(), to, "--sync-to")?;
        let every = std::time::Duration::from_secs_f64(every);
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("vernier-sync".into())
            .spawn(move || {
                // Until stopped: a message, or the sender dropped.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(every)
                {
                    if let Err(e) = sync_quietly(&source, &target) {
                        eprintln!(
                            "warning: the sync to {target} failed, the next one tries again: {}",
                            out::error_line(&e)
                        );
                    }
                }
            })?;
        Ok(PeriodicSync { stop, thread })
    }

    /// Stops it, after the sync in progress, if any.
    pub fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}

/// One sync of `source` to `target`, saying nothing.
fn sync_quietly(source: &Location, target: &Location) -> Result<()> {
    let source = db::open(Some(source.as_arg().as_ref()), Access::Read)?;
    let mut target = db::open(Some(target.as_arg().as_ref()), Access::Create)?;
    vernier_store::copy_sessions(source.as_ref(), target.as_mut(), |_| {})?;
    Ok(())
}
