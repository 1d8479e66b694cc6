//! `vernier monitor`: continuous monitoring as the OSADL QA Farm does it ("the only relevant
//! result is the maximum of consecutive 5-min maxima", RESEARCH.md 1.5). One session whose runs
//! are consecutive intervals of the `latency` benchmark, each stored with its histograms as it
//! ends, so a crash or a reboot loses at most the interval in progress. It is `vernier run`
//! with the repetition fixed: no warmup, no stopping rule, as many runs as the time allows.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use vernier_model::{parse_spec, StoppingRule};

use crate::cli::{MonitorArgs, RunArgs};
use crate::cmd::run::{run_with, OnSignal};

/// Benchmarks that can be monitored: those whose runs are intervals of a given length.
const MONITORABLE: &[&str] = &["latency"];

/// How much longer than its interval a run may take before it counts as hung: starting the
/// child, locking memory, preparing histograms and sending them back.
const RUN_SLACK_S: f64 = 120.0;

/// Without `--for`: runs until a signal ends it (about 30,000 years of 5-minute intervals).
const UNTIL_STOPPED: u32 = u32::MAX;

pub fn monitor(args: MonitorArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let spec = parse_spec(&args.spec)?;
    if !MONITORABLE.contains(&spec.name.as_str()) {
        bail!(
            "'{}' cannot be monitored; valid: {}",
            spec.name,
            MONITORABLE.join(", ")
        );
    }
    if spec.options.iter().any(|(k, _)| k == "duration") {
        bail!("the interval sets the duration of each run: give --interval instead of duration=");
    }
    let intervals = match args.for_ {
        Some(total) if total < args.interval => bail!(
            "--for {total} s is shorter than one --interval of {} s",
            args.interval
        ),
        Some(total) => (total / args.interval).floor() as u32,
        None => UNTIL_STOPPED,
    };
    let spec_text = format!("{}:duration={}", args.spec, args.interval);
    let mut tags = args.tags;
    if !tags.iter().any(|(k, _)| k == "monitor") {
        tags.push(("monitor".to_string(), spec.name.clone()));
    }
    let run = RunArgs {
        specs: vec![spec_text],
        suite: None,
        warmup: Some(0),
        // Ignored: with min_runs = max_runs nothing but the count and the time ends it.
        target: None,
        min_runs: Some(intervals),
        max_runs: Some(intervals),
        min_time: None,
        max_time: Some(if intervals == UNTIL_STOPPED {
            1e15
        } else {
            f64::from(intervals) * (args.interval + RUN_SLACK_S)
        }),
        run_timeout: Some(args.interval + RUN_SLACK_S),
        stopping_rule: Some(StoppingRule::FixedN),
        interleave: false,
        no_interleave: false,
        seed: None,
        tags,
        note: args.note,
        monitors: args.monitors,
        setup: args.setup,
        loads: args.loads,
        quiet: args.quiet,
        busy: Default::default(),
    };
    run_with(run, db_arg, OnSignal::End)
}
