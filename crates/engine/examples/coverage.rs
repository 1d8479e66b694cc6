//! Coverage of the stopping rule's interval, measured through the real engine: many sessions
//! of the `mock` benchmark drawing random values (`dist=...`), each run by `run_session` with
//! the stopping rule under test; the interval the engine reports when it stops is checked
//! against the distribution's true median. Driven by bench/coverage.sh.
//!
//! Usage: coverage [--sessions N] [--rule confidence-sequence|fixed-n] [--process VERNIER]
//!                 [--target F] [--max-runs N] MOCK-OPTIONS...
//! e.g. `coverage --sessions 500 dist=lognormal:sigma=0.1:slow=0.02`. Without --process, runs
//! execute in this process (the mock benchmark's own code, one simulated millisecond each);
//! with it, every run is a fresh `VERNIER __child` process, as in `vernier run`.
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example is a program that prints what it measured

use std::process::ExitCode;

use uuid::Uuid;
use vernier_engine::child::ChildRequest;
use vernier_engine::executor::ExecError;
use vernier_engine::{
    build_plan, run_session, Event, Executor, Interrupt, NoHooks, ProcessExecutor, RunOutcome,
    SessionOptions,
};
use vernier_model::{
    ConfigurationRecord, Recorder, RunRecord, Rusage, SessionInfo, SessionStatus, Settings,
    StopReason, StoppingRule,
};
/// Records nothing: the figures come from the engine's events.
struct NullRecorder;

impl Recorder for NullRecorder {
    type Error = std::convert::Infallible;

    fn begin_session(&mut self, _: &SessionInfo) -> Result<(), Self::Error> {
        Ok(())
    }
    fn add_configuration(&mut self, _: Uuid, _: &ConfigurationRecord) -> Result<(), Self::Error> {
        Ok(())
    }
    fn add_run(&mut self, _: Uuid, _: &RunRecord) -> Result<(), Self::Error> {
        Ok(())
    }
    fn add_profile(
        &mut self,
        _: Uuid,
        _: &vernier_model::ProfileRecord,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
    fn finish_configuration(
        &mut self,
        _: Uuid,
        _: StopReason,
        _: bool,
        _: Option<&str>,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
    fn add_finding(&mut self, _: Uuid, _: &vernier_model::Finding) -> Result<(), Self::Error> {
        Ok(())
    }
    fn finish_session(&mut self, _: Uuid, _: SessionStatus, _: i64) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Runs the benchmark's code in this process, one simulated millisecond per run.
struct InProcess {
    clock_ns: i64,
}

impl Executor for InProcess {
    fn execute(&mut self, r: &ChildRequest, _: &Interrupt) -> Result<RunOutcome, ExecError> {
        let bench = vernier_bench::builtin(&r.benchmark)
            .ok_or_else(|| ExecError::Benchmark(format!("unknown benchmark {}", r.benchmark)))?;
        let ctx = vernier_bench::RunContext {
            warmup: r.warmup,
            index: r.index,
            ..vernier_bench::RunContext::default()
        };
        let m = bench
            .run(&r.options, &ctx)
            .map_err(|e| ExecError::Benchmark(e.to_string()))?;
        let started_at_ns = self.clock_ns;
        self.clock_ns += 1_000_000;
        Ok(RunOutcome {
            started_at_ns,
            ended_at_ns: self.clock_ns,
            values: m.values,
            histograms: Vec::new(),
            rusage: Rusage::default(),
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            monitors: None,
        })
    }
}

struct Args {
    sessions: u64,
    rule: StoppingRule,
    process: Option<String>,
    target: f64,
    max_runs: u32,
    dists: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        sessions: 500,
        rule: StoppingRule::ConfidenceSequence,
        process: None,
        target: Settings::default().target,
        max_runs: Settings::default().max_runs,
        dists: vec![],
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--sessions" => {
                a.sessions = value("--sessions")?
                    .parse()
                    .map_err(|e| format!("--sessions: {e}"))?
            }
            "--rule" => a.rule = value("--rule")?.parse()?,
            "--process" => a.process = Some(value("--process")?),
            "--target" => {
                a.target = value("--target")?
                    .parse()
                    .map_err(|e| format!("--target: {e}"))?
            }
            "--max-runs" => {
                a.max_runs = value("--max-runs")?
                    .parse()
                    .map_err(|e| format!("--max-runs: {e}"))?
            }
            d if !d.starts_with("--") => a.dists.push(d.to_string()),
            other => return Err(format!("unknown option {other}")),
        }
    }
    if a.dists.is_empty() {
        return Err("give at least one set of mock options, e.g. dist=lognormal:sigma=0.1".into());
    }
    Ok(a)
}

#[derive(Default)]
struct Tally {
    sessions: u64,
    covered: u64,
    with_interval: u64,
    runs: Vec<usize>,
    converged: u64,
    converged_covered: u64,
    /// Sessions whose values `show` flags as possibly multimodal.
    multimodal: u64,
    /// Sessions that converged with an interval missing the median, and how many of them
    /// `show` flags as possibly multimodal (a missed median with that warning is said; one
    /// without it is not).
    converged_missed: u64,
    converged_missed_flagged: u64,
    /// Runs of the converged sessions that missed.
    converged_missed_runs: Vec<usize>,
    reasons: std::collections::BTreeMap<String, u64>,
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("coverage: {e}");
            return ExitCode::from(2);
        }
    };
    let infos: Vec<_> = vernier_bench::builtin_infos();
    println!(
        "rule {} target {} max-runs {} sessions {} executor {}",
        args.rule.as_str(),
        args.target,
        args.max_runs,
        args.sessions,
        if args.process.is_some() {
            "process"
        } else {
            "in-process"
        }
    );
    println!(
        "{:<48} {:>8} {:>9} {:>9} {:>9} {:>10} {:>12}  stops",
        "distribution", "median", "coverage", "mean-runs", "max-runs", "converged", "cov-if-conv"
    );
    println!("  (multimodal: sessions that show flags as possibly multimodal)");
    for dist in &args.dists {
        let mut t = Tally::default();
        let mut truth = None;
        for seed in 0..args.sessions {
            let settings = Settings {
                target: args.target,
                max_runs: args.max_runs,
                stopping_rule: args.rule,
                seed,
                ..Settings::default()
            };
            let spec = format!("mock:{dist}:seed={seed}");
            let plan = match build_plan(std::slice::from_ref(&spec), settings, &infos, 1) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("coverage: {spec}: {e}");
                    return ExitCode::from(2);
                }
            };
            let median =
                match vernier_bench::mock::distribution_median(&plan.configurations[0].options) {
                    Ok(Some(m)) => m,
                    _ => {
                        eprintln!("coverage: {spec}: not a random distribution (give dist=...)");
                        return ExitCode::from(2);
                    }
                };
            truth = Some(median);
            let mut finished = None;
            let mut values = Vec::new();
            let mut observer = |e: &Event| {
                if let Event::RunFinished {
                    warmup: false,
                    value,
                    ..
                } = e
                {
                    values.push(*value);
                }
                if let Event::ConfigurationFinished {
                    reason,
                    converged,
                    precision,
                    ..
                } = e
                {
                    finished = Some((*reason, *converged, *precision));
                }
            };
            let interrupt = Interrupt::new();
            let result = match &args.process {
                Some(exe) => {
                    let mut exec = ProcessExecutor::new(exe.into(), vec!["__child".to_string()]);
                    run_session(
                        &plan,
                        SessionOptions::default(),
                        &mut exec,
                        &mut NoHooks,
                        &mut NullRecorder,
                        &interrupt,
                        &mut observer,
                    )
                }
                None => run_session(
                    &plan,
                    SessionOptions::default(),
                    &mut InProcess { clock_ns: 0 },
                    &mut NoHooks,
                    &mut NullRecorder,
                    &interrupt,
                    &mut observer,
                ),
            };
            if let Err(e) = result {
                eprintln!("coverage: {spec}: {e}");
                return ExitCode::from(1);
            }
            let Some((reason, converged, p)) = finished else {
                eprintln!("coverage: {spec}: the configuration never finished");
                return ExitCode::from(1);
            };
            t.sessions += 1;
            let checks = vernier_analysis::summary::distribution_checks(&values);
            t.multimodal += u64::from(checks.bimodality.is_some());
            t.runs.push(p.n);
            *t.reasons.entry(reason.to_string()).or_default() += 1;
            let covered = p.ci.is_some_and(|ci| ci.low <= median && median <= ci.high);
            t.with_interval += u64::from(p.ci.is_some());
            t.covered += u64::from(covered);
            if converged {
                t.converged += 1;
                t.converged_covered += u64::from(covered);
                if !covered {
                    t.converged_missed += 1;
                    t.converged_missed_flagged += u64::from(checks.bimodality.is_some());
                    t.converged_missed_runs.push(p.n);
                }
            }
        }
        let pct = |a: u64, b: u64| {
            if b == 0 {
                "-".to_string()
            } else {
                format!("{:.1}%", 100.0 * a as f64 / b as f64)
            }
        };
        let mean = t.runs.iter().sum::<usize>() as f64 / t.runs.len().max(1) as f64;
        let reasons: Vec<String> = t.reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let missed = if t.converged_missed == 0 {
            String::new()
        } else {
            format!(
                "; converged and missed {} (flagged multimodal {}, after {}-{} runs)",
                t.converged_missed,
                t.converged_missed_flagged,
                t.converged_missed_runs.iter().min().copied().unwrap_or(0),
                t.converged_missed_runs.iter().max().copied().unwrap_or(0)
            )
        };
        println!(
            "{:<48} {:>8.5} {:>9} {:>9.1} {:>9} {:>10} {:>12}  {}; multimodal {}{missed}",
            dist,
            truth.unwrap_or(f64::NAN),
            pct(t.covered, t.with_interval),
            mean,
            t.runs.iter().max().copied().unwrap_or(0),
            pct(t.converged, t.sessions),
            pct(t.converged_covered, t.converged),
            reasons.join(", "),
            pct(t.multimodal, t.sessions)
        );
    }
    ExitCode::SUCCESS
}
