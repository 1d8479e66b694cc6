//! `vernier monitor`: continuous monitoring, a session of intervals of the `latency` benchmark
//! (`vernier_app::monitor`) that a signal ends.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_app::monitor::{monitoring_session, MonitorRequest};
use vernier_app::{Notice, Observer};
use vernier_engine::stopping::SettingsWarning;
use vernier_engine::Event;

use crate::cli::MonitorArgs;
use crate::cmd::sync::PeriodicSync;
use crate::db;
use crate::progress::Progress;

pub fn monitor(args: MonitorArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let mut progress = Monitoring(Progress::new(args.quiet));
    let request = monitoring_session(MonitorRequest {
        spec: args.spec,
        interval_s: args.interval,
        for_s: args.for_,
        tags: args.tags,
        note: args.note,
        monitors: args.monitors,
        setup: args.setup,
        loads: args.loads,
    })?;
    let database = db::location(db_arg)?;
    let syncing = match (&args.sync_to, args.sync_every) {
        (Some(to), Some(every)) => Some(PeriodicSync::start(&database, to, every)?),
        _ => None,
    };
    let mut signals = crate::session::signals();
    let end = vernier_app::run_session(&request, &database, &mut signals, &mut progress);
    if let Some(syncing) = syncing {
        syncing.stop();
    }
    crate::session::print_end(end?)
}

/// The progress of monitoring: the run count is the number of intervals, so a warning that
/// it is below what an interval of the median or the modality check needs would blame a
/// `--max-runs` nobody gave.
struct Monitoring(Progress);

impl Observer for Monitoring {
    fn event(&mut self, event: &Event) {
        if !matches!(
            event,
            Event::Warning {
                warning: SettingsWarning::MaxRunsBelowInterval { .. }
                    | SettingsWarning::MaxRunsBelowModality { .. },
                ..
            }
        ) {
            self.0.event(event);
        }
    }

    fn notice(&mut self, notice: &Notice) {
        self.0.notice(notice);
    }
}
