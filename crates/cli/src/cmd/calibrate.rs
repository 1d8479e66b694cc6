//! `vernier calibrate [SPEC...]`: short A/A sessions of the same configurations, one after the
//! other, to measure how much whole sessions differ on this machine beyond what their runs
//! explain. The estimate is stored with the environment fingerprint; `compare` widens the
//! interval of one session a side by it (docs/compare.md, "Sessions").

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use uuid::Uuid;
use vernier_engine::suite::find_suite;
use vernier_engine::{build_plan, Interrupt, SignalEvent};
use vernier_model::{Calibration, ConfigKey, Settings, StoredSession};
use vernier_stats::{between_session_variance, SessionMedian};
use vernier_store::Load;

use crate::cli::CalibrateArgs;
use crate::db;
use crate::out::{out, outln};

/// Exit status after Ctrl-C (128 + SIGINT), as `run` gives it.
const EXIT_INTERRUPTED: u8 = 130;

/// Most sessions one calibration runs: beyond this the estimate no longer improves noticeably
/// (its relative standard error falls as 1/sqrt(2 (k - 1))) and a typo would run for days.
const MAX_SESSIONS: u32 = 1000;

pub fn calibrate(args: CalibrateArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    // Everything the user can get wrong is checked before anything runs.
    if !(2..=MAX_SESSIONS).contains(&args.sessions) {
        bail!(
            "--sessions {} is out of range: at least 2 sessions (the noise between sessions \
             needs two to show) and at most {MAX_SESSIONS}",
            args.sessions
        );
    }
    if args.runs < 2 {
        bail!(
            "--runs {} is too few: at least 2 measured runs per session (the noise within a \
             session needs two to show)",
            args.runs
        );
    }
    // Only a suite's specs: calibration sets its own repetition.
    let specs: Vec<String> = match (&args.suite, args.specs.is_empty()) {
        (Some(name), _) => find_suite(name, crate::config::suite_dir().as_deref())?.specs,
        (None, true) => find_suite("quick", None)?.specs,
        (None, false) => args.specs.clone(),
    };
    let settings = Settings {
        warmup: args.warmup,
        min_runs: args.runs,
        max_runs: args.runs,
        min_time_s: 0.0,
        max_time_s: args.max_time,
        interleave: false,
        seed: 0,
        ..Settings::default()
    };
    let online_cpus = vernier_sys::cpulist::online_cpus().len() as u32;
    let infos = crate::config::benchmark_infos(&specs)?;
    build_plan(&specs, settings, &infos, online_cpus)
        .map_err(crate::config::naming_user_benchmarks)?;
    vernier_setup::plan_setup(&args.setup, &vernier_sys::Roots::real())?;
    let database = db::location(db_arg)?;
    let exe = std::env::current_exe().context("cannot find the vernier executable")?;

    // Ctrl-C (and a terminal's hang-up) reach the session in progress too, which stops, keeps
    // its runs and restores the system; SIGTERM, sent to this process alone, is passed on to it.
    // This process only has to start no further session and say so.
    let interrupt = Arc::new(Interrupt::new());
    let child_pid = Arc::new(AtomicI32::new(0));
    let pid = Arc::clone(&child_pid);
    vernier_engine::watch_signals(Arc::clone(&interrupt), move |event| {
        if let SignalEvent::First(libc::SIGTERM) | SignalEvent::Repeated(libc::SIGTERM) = event {
            let child = pid.load(Ordering::SeqCst);
            if child > 0 {
                // SAFETY: kill(2) with a pid of our own child (reaped only after `status`
                // returns, when the pid is reset first).
                unsafe { libc::kill(child, libc::SIGTERM) };
            }
        }
    })
    .context("cannot install the signal handlers")?;

    let id = Uuid::new_v4();
    let tag = format!("calibration={id}");
    let started = Instant::now();
    for i in 1..=args.sessions {
        let start_at = session_start(args.spread, i, args.sessions);
        let wait = start_at.saturating_sub(started.elapsed());
        if !wait.is_zero() {
            eprintln!(
                "calibrate: session {i} of {} starts in {:.0} s",
                args.sessions,
                wait.as_secs_f64()
            );
            if !wait_unless_interrupted(&interrupt, wait) {
                eprintln!(
                    "interrupted: no calibration stored (the finished sessions are kept, tag {tag})"
                );
                let signal = interrupt.signal().unwrap_or(libc::SIGINT);
                return Ok(ExitCode::from(
                    u8::try_from(128 + signal).unwrap_or(EXIT_INTERRUPTED),
                ));
            }
        }
        eprintln!("calibrate: session {i} of {}", args.sessions);
        let mut cmd = Command::new(&exe);
        cmd.arg("--db")
            .arg(database.as_arg())
            .arg("run")
            .args(&specs)
            .args(["--min-runs", &args.runs.to_string()])
            .args(["--max-runs", &args.runs.to_string()])
            .args(["--warmup", &args.warmup.to_string()])
            .args(["--max-time", &args.max_time.to_string()])
            .args(["--tag", &tag])
            .args(["--tag", &format!("calibration-session={i}")])
            .arg("--quiet")
            .env_remove("VERNIER_DB")
            .stdout(Stdio::null());
        for setup in &args.setup {
            cmd.args(["--setup", setup]);
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", exe.display()))?;
        child_pid.store(i32::try_from(child.id()).unwrap_or(0), Ordering::SeqCst);
        let status = child.wait();
        child_pid.store(0, Ordering::SeqCst);
        let status = status.with_context(|| format!("cannot wait for {}", exe.display()))?;
        if let Some(signal) = interrupt.signal() {
            eprintln!(
                "interrupted: no calibration stored (the finished sessions are kept, tag {tag})"
            );
            return Ok(ExitCode::from(
                u8::try_from(128 + signal).unwrap_or(EXIT_INTERRUPTED),
            ));
        }
        if status.code() == Some(i32::from(EXIT_INTERRUPTED)) {
            eprintln!(
                "interrupted: no calibration stored (the finished sessions are kept, tag {tag})"
            );
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        if !status.success() {
            bail!("session {i} of the calibration failed ({status}); no calibration stored");
        }
    }

    let mut store = db::open_for_writing(db_arg)?;
    let sessions: Vec<StoredSession> = store
        .find_sessions_by_tags(&[("calibration".to_string(), id.to_string())])?
        .into_iter()
        .map(|sid| {
            store
                .load_session(sid, Load::MEASUREMENTS)
                .with_context(|| format!("cannot load session {sid}"))
        })
        .collect::<Result<_>>()?;
    let created_at_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let (calibrations, skipped) = estimate(created_at_ns, &sessions)?;
    if calibrations.is_empty() {
        bail!("no configuration has measured runs in two sessions: nothing to calibrate");
    }
    store
        .add_calibrations(&calibrations)
        .context("cannot store the calibration")?;
    out!("{}", vernier_report::calibration::table(&calibrations));
    for s in &skipped {
        outln!("note: {s}");
    }
    if args.spread.is_none() {
        // docs/compare.md: adjacent sessions agree better than sessions minutes apart.
        outln!(
            "note: the sessions ran back to back; noise between sessions further apart is not \
             seen (--spread SECONDS spaces them, e.g. --spread 600)"
        );
    }
    let mut fingerprints: Vec<&str> = calibrations
        .iter()
        .map(|c| c.fingerprint.as_str())
        .collect();
    fingerprints.sort_unstable();
    fingerprints.dedup();
    outln!(
        "calibration {id} of environment {} ({} sessions, tag {tag}) stored in {}",
        fingerprints.join(", "),
        args.sessions,
        store.location()
    );
    Ok(ExitCode::SUCCESS)
}

/// When session `i` (1-based) of `sessions` starts, after the first: spread evenly over
/// `spread` seconds (the last one starts at `spread`), or at once without a spread.
fn session_start(spread: Option<f64>, i: u32, sessions: u32) -> Duration {
    match spread {
        Some(s) if sessions > 1 => {
            Duration::from_secs_f64(s * f64::from(i - 1) / f64::from(sessions - 1))
        }
        _ => Duration::ZERO,
    }
}

/// Waits `wait`, or less when a signal asks to stop: true when the whole time passed.
fn wait_unless_interrupted(interrupt: &Interrupt, wait: Duration) -> bool {
    // Short steps keep Ctrl-C prompt; the wait is between sessions, never during a run.
    const STEP: Duration = Duration::from_millis(100);
    let until = Instant::now() + wait;
    loop {
        if interrupt.is_requested() {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(STEP));
    }
}

/// One configuration in one environment, over the calibration's sessions.
struct Group {
    fingerprint: String,
    config: ConfigKey,
    metric: String,
    medians: Vec<SessionMedian>,
    runs: u32,
    session_ids: Vec<Uuid>,
}

/// The calibration of every configuration with measured runs in at least two sessions, and
/// notes on those left out.
fn estimate(
    created_at_ns: i64,
    sessions: &[StoredSession],
) -> Result<(Vec<Calibration>, Vec<String>)> {
    let mut groups: BTreeMap<(String, ConfigKey, String), Group> = BTreeMap::new();
    let mut notes = Vec::new();
    for session in sessions {
        for config in &session.configurations {
            let r = &config.record;
            let key = ConfigKey::new(&r.benchmark, &r.options);
            let values = config.values();
            if values.is_empty() {
                continue;
            }
            if values.iter().any(|v| !(*v > 0.0 && v.is_finite())) {
                notes.push(format!(
                    "{key}: session {} left out, its values are not all positive",
                    session.info.id
                ));
                continue;
            }
            let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
            let g = groups
                .entry((
                    session.info.fingerprint.clone(),
                    key.clone(),
                    r.metric.name.clone(),
                ))
                .or_insert_with(|| Group {
                    fingerprint: session.info.fingerprint.clone(),
                    config: key,
                    metric: r.metric.name.clone(),
                    medians: Vec::new(),
                    runs: 0,
                    session_ids: Vec::new(),
                });
            g.medians.push(SessionMedian::of(&logs)?);
            g.runs += logs.len() as u32;
            g.session_ids.push(session.info.id);
        }
    }
    let mut out = Vec::new();
    for g in groups.into_values() {
        if g.medians.len() < 2 {
            // Sessions of one calibration differ in environment when something changed the
            // system between them (a sysctl, the kernel command line, ...).
            notes.push(format!(
                "{}: measured in {} session(s) of environment {}, two are needed (the \
                 environment changed during the calibration; `vernier env diff` shows how)",
                g.config,
                g.medians.len(),
                g.fingerprint
            ));
            continue;
        }
        let b = between_session_variance(&[&g.medians])?;
        out.push(Calibration {
            id: Uuid::new_v4(),
            created_at_ns,
            fingerprint: g.fingerprint,
            benchmark: g.config.benchmark,
            options: g.config.options,
            metric: g.metric,
            sessions: g.medians.len() as u32,
            runs: g.runs,
            session_sd: b.mean_square.sqrt(),
            within_sd: b.within.sqrt(),
            between_sd: b.variance.sqrt(),
            df: b.df,
            session_ids: g.session_ids,
        });
    }
    Ok((out, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_start_evenly_over_the_spread() {
        let at = |spread, i, n| session_start(spread, i, n).as_secs_f64();
        assert_eq!(at(None, 3, 5), 0.0);
        assert_eq!(at(Some(600.0), 1, 5), 0.0);
        assert_eq!(at(Some(600.0), 2, 5), 150.0);
        assert_eq!(at(Some(600.0), 5, 5), 600.0);
    }
}
