//! `vernier run`: plan, measure, store, summarize (`vernier_app::run_session`).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_app::{OnSignal, SessionRequest, TimeLimit};
use vernier_model::SettingsLayer;

use crate::cli::{RunArgs, TimeLimitArg};
use crate::db;
use crate::progress::Progress;

pub fn run(args: RunArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let mut progress = Progress::new(args.quiet);
    let request = request(args);
    let database = db::location(db_arg)?;
    let mut signals = crate::session::signals();
    let end = vernier_app::run_session(&request, &database, &mut signals, &mut progress)?;
    crate::session::print_end(end)
}

/// The session the flags ask for.
fn request(args: RunArgs) -> SessionRequest {
    SessionRequest {
        specs: args.specs,
        suite: args.suite,
        settings: SettingsLayer {
            warmup: args.limits.warmup,
            target: args.target,
            min_runs: args.limits.min_runs,
            max_runs: args.limits.max_runs,
            min_time_s: args.min_time,
            max_time_s: args.limits.max_time,
            run_timeout_s: args.run_timeout,
            // Of the two flags, clap keeps only the last given (overrides_with).
            interleave: match (args.interleave, args.no_interleave) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            seed: args.seed,
            stopping_rule: args.stopping_rule,
            profile: args.profile,
            profile_scope: args.profile_scope,
            profile_frequency: args.profile_frequency,
        },
        monitors: args.monitors,
        setup: args.setup,
        loads: args.loads,
        tags: args.tags,
        note: args.note,
        busy: args.busy.into(),
        on_signal: OnSignal::Interrupt,
        time_limit: match args.time_limit {
            Some(TimeLimitArg::Seconds(s)) => TimeLimit::Seconds(s),
            Some(TimeLimitArg::Budget) => TimeLimit::FromBudget,
            Some(TimeLimitArg::Off) | None => TimeLimit::Off,
        },
    }
}
