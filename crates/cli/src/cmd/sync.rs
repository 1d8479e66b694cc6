//! `vernier sync --to TARGET [--from SOURCE]`: copies every session that the target lacks, and
//! the runs recorded since the last sync of sessions still running then
//! (`vernier_store::copy_sessions`), one transaction per session, and reports what it copied,
//! what was already there and what is still running.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use vernier_model::text::plural;
use vernier_store::{Access, SyncStep};

use crate::cli::SyncArgs;
use crate::db;
use crate::out::{self, outln};

pub fn sync(args: SyncArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let source_location = db::location(args.from.as_deref().or(db_arg))?;
    let target_location = db::parse(&args.to)?;
    if db::same_database(&source_location, &target_location) {
        bail!(
            "--to {target_location} is the database synced from; give another database to copy to"
        );
    }
    db::check_copy_target("--to", &target_location)?;
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
