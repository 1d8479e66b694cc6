//! `vernier run`: plan, measure, store, summarize.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use uuid::Uuid;
use vernier_engine::suite::{find_suite, Suite, SuiteSource};
use vernier_engine::{
    build_plan, run_session, Interrupt, ProcessExecutor, RunHooks, RunTimeout, SessionOptions,
    SignalEvent,
};
use vernier_load::{LoadPlan, RunningLoads};
use vernier_model::Texts as _;
use vernier_model::{SessionStatus, Settings, SetupStep};
use vernier_setup::{RestoreRecord, SetupError, SetupGuard};
use vernier_store::{Access, Load, Location};
use vernier_sys::Roots;

use crate::cli::{IfBusy, RunArgs};
use crate::db;
use crate::out::outln;
use crate::progress::Progress;

/// How long leaving at once (a repeated signal) waits for the database to mark the session
/// interrupted; if it stays locked, the session reads as abandoned once vernier has exited.
const LEAVING_LOCK_WAIT: Duration = Duration::from_secs(5);

/// How long a load's program must run without failing before the session to count as started.
const LOAD_START_CHECK: Duration = Duration::from_secs(1);

/// What an ending signal (SIGINT, SIGTERM, SIGHUP) means to the command that runs a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnSignal {
    /// `run`: the session was interrupted; exit with 128 + the signal's number.
    Interrupt,
    /// `monitor`: the signal is how monitoring ends; exit 0. The session is stored as
    /// interrupted all the same, since that is what happened to its last interval.
    End,
}

fn is_max_runs_warning(event: &vernier_engine::Event) -> bool {
    matches!(
        event,
        vernier_engine::Event::Warning {
            warning: vernier_engine::stopping::SettingsWarning::MaxRunsBelowInterval { .. }
                | vernier_engine::stopping::SettingsWarning::MaxRunsBelowModality { .. },
            ..
        }
    )
}

pub fn run(args: RunArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    run_with(args, db_arg, OnSignal::Interrupt)
}

/// Runs the session `args` describe; `on_signal` says how an ending signal ends the command.
pub(crate) fn run_with(
    args: RunArgs,
    db_arg: Option<&Path>,
    on_signal: OnSignal,
) -> Result<ExitCode> {
    // Everything the user can get wrong is checked before the database or the system is touched.
    let suite = match (&args.suite, args.specs.is_empty()) {
        (Some(name), _) => Some(find_suite(name, crate::config::suite_dir().as_deref())?),
        (None, true) => Some(find_suite("quick", None)?),
        (None, false) => None,
    };
    let specs: Vec<String> = match &suite {
        Some(s) => s.specs.clone(),
        None => args.specs.clone(),
    };
    // Precedence: the defaults, then the suite's settings, then the flags given.
    let mut settings = Settings {
        seed: rand::random(),
        ..Settings::default()
    };
    if let Some(suite) = &suite {
        suite.apply(&mut settings);
    }
    settings.warmup = args.warmup.unwrap_or(settings.warmup);
    settings.target = args.target.unwrap_or(settings.target);
    settings.min_runs = args.min_runs.unwrap_or(settings.min_runs);
    settings.max_runs = args.max_runs.unwrap_or(settings.max_runs);
    settings.min_time_s = args.min_time.unwrap_or(settings.min_time_s);
    settings.max_time_s = args.max_time.unwrap_or(settings.max_time_s);
    // Of the two flags, clap keeps only the last given (overrides_with).
    if args.interleave {
        settings.interleave = true;
    } else if args.no_interleave {
        settings.interleave = false;
    }
    if args.seed.is_some() && !settings.interleave {
        bail!(
            "--seed sets the order of interleaved rounds, but this session does not interleave: \
             give --interleave too, or a suite with interleave = true"
        );
    }
    settings.seed = args.seed.unwrap_or(settings.seed);
    settings.stopping_rule = args.stopping_rule.unwrap_or(settings.stopping_rule);
    let run_timeout = args
        .run_timeout
        .or(suite.as_ref().and_then(|s| s.settings.run_timeout));
    // A list given on the command line replaces the suite's.
    let from_suite = |given: &Vec<String>, of_suite: fn(&Suite) -> &Vec<String>| match (
        &suite,
        given.is_empty(),
    ) {
        (Some(s), true) => of_suite(s).clone(),
        _ => given.clone(),
    };
    let monitor_lists = from_suite(&args.monitors, |s| &s.monitors);
    let setup_lists = from_suite(&args.setup, |s| &s.setup);
    let load_lists = from_suite(&args.loads, |s| &s.loads);
    let online_cpus = vernier_sys::cpulist::online_cpus().len() as u32;
    let infos = crate::config::benchmark_infos(&specs)?;
    let plan = build_plan(&specs, settings, &infos, online_cpus)
        .map_err(crate::config::naming_user_benchmarks)
        .map_err(|e| match &suite {
            Some(Suite {
                source: SuiteSource::File(path),
                ..
            }) => anyhow::anyhow!("suite {}: {e}", path.display()),
            _ => e.into(),
        })?;
    // The suite's tags, each replaced by a --tag of the same key.
    let mut given = std::collections::BTreeMap::new();
    for (k, v) in &args.tags {
        if given.insert(k.clone(), v.clone()).is_some() {
            bail!("tag '{k}' is given twice");
        }
    }
    let mut tags = suite.as_ref().map(|s| s.tags.clone()).unwrap_or_default();
    tags.extend(given);
    let monitors = if monitor_lists.is_empty() {
        let mut monitors = vernier_monitor::default_monitors();
        let explaining: Vec<&str> = plan
            .configurations
            .iter()
            .filter_map(|c| vernier_bench::builtin(c.info.name()))
            .flat_map(|b| b.explaining_monitors().iter().copied())
            .collect();
        if !explaining.is_empty() {
            for extra in vernier_monitor::parse_monitor_list(&explaining.join(","))? {
                if !monitors.iter().any(|m| m.to_string() == extra.to_string()) {
                    monitors.push(extra);
                }
            }
        }
        monitors
    } else {
        vernier_monitor::parse_monitor_list(&monitor_lists.join(","))?
    };
    let loads = vernier_load::LoadSet::parse(&load_lists)?;
    let roots = Roots::real();
    let setup_plan = vernier_setup::plan_setup(&setup_lists, &roots)?;
    for skipped in &setup_plan.skipped {
        eprintln!(
            "note: optional setup '{}' skipped: {}",
            skipped.plugin, skipped.reason
        );
    }
    // A setup that sets host state keeps the host's restore record (crate::host): this
    // process must be able to write it, and a record an earlier vernier left in this user's
    // state directory must be restored first.
    if setup_plan.sets_host_state() {
        crate::host::prepare(
            "--setup",
            " (rt, pin, cooldown, idle-gate and drop-caches set no host state and need no \
             record)",
        )?;
        crate::host::check_per_user_records()?;
    }
    // What each configuration needs from the machine (tasks, files, memory, CPUs), with the
    // CPUs that `--setup pin` leaves to the runs.
    let mut limits = vernier_sys::MachineLimits::read(&roots);
    if let Some(cpus) = &setup_plan.child.cpus {
        limits.cpus = cpus.clone();
    }
    vernier_engine::check_machine(&plan, &limits)?;
    // A load that cannot start (a missing program, a command that fails at once) is an error
    // now, not a failed first run. Once, with a second for a failing program to fail even on a
    // busy machine; before every run the check is the supervisor's short one.
    if !loads.is_empty() {
        let trial = loads
            .clone()
            .with_start_check(LOAD_START_CHECK)
            .start()?
            .stop();
        if let Some(problem) = trial.problems.first() {
            bail!("{problem}");
        }
    }
    let exe = std::env::current_exe().context("cannot find the vernier executable")?;

    let mut store = db::open_for_writing(db_arg)?;
    let mut environment = vernier_sys::environment::capture(&roots);
    vernier_sys::environment::record_tool_versions(&mut environment, &plan.tools());
    if let Some(sha) = environment.kernel_config_sha256.clone() {
        let release = environment.kernel_release.clone().unwrap_or_default();
        if let Ok(text) = vernier_sys::environment::read_kernel_config(&roots, &release) {
            store.put_kernel_config(&sha, &text)?;
        } else {
            environment.kernel_config_sha256 = None;
        }
    }
    if let Some(reason) = super::busy::skip_reason(&args.busy, store.as_ref(), &roots, &|| false)? {
        let skipped = Skipped {
            suite: suite.as_ref().map(|s| s.name.clone()),
            tags,
            setup: setup_lists,
            environment,
        };
        return record_skipped(
            store.as_mut(),
            &plan,
            args.note.as_deref(),
            skipped,
            &reason,
        );
    }
    // The sampled and measured checks cost ~250 ms; their findings are cached per boot (the
    // window's for a few minutes) so that short sessions do not pay that every time.
    let check_options = vernier_setup::CheckOptions {
        window: std::time::Duration::from_millis(200),
        round_trips: 500,
        ..Default::default()
    };
    let findings = match dirs::cache_dir() {
        Some(dir) => vernier_setup::system_check_cached(
            &roots,
            &check_options,
            &dir.join("vernier/system-check.json"),
        ),
        None => vernier_setup::system_check_with(&roots, &check_options),
    };

    let session_id = Uuid::new_v4();
    let interrupt = Arc::new(Interrupt::new());
    let record = crate::host::session_record();
    // Work directories of benchmarks prepared once per session (compile's kernel tree); the
    // engine removes it at the end, leaving at once on a repeated signal removes it here.
    let work_root = std::env::temp_dir().join(format!("vernier-work-{session_id}"));
    handle_signals(
        Arc::clone(&interrupt),
        record.clone(),
        store.location().clone(),
        session_id,
        work_root.clone(),
    )?;
    // From here on the system may change; the guard restores it when dropped, also on error
    // and panic, and a repeated signal restores from the record before leaving at once.
    let mut guard = None;
    while !setup_plan.is_empty() && guard.is_none() {
        match setup_plan.apply_for_session(&record, &session_id.to_string()) {
            Ok(applied) => guard = Some(applied.with_cancel_flag(interrupt.flag())),
            // Another session took the host since the check above: as --if-busy says, refused
            // (naming it), or waited for, or skipped.
            Err(e @ SetupError::RecordInUse { .. }) if args.busy.if_busy == IfBusy::Run => {
                bail!("cannot apply the setup: {e}, or give --if-busy wait to wait for it")
            }
            Err(SetupError::RecordInUse { .. }) => {
                let waited = super::busy::skip_reason(&args.busy, store.as_ref(), &roots, &|| {
                    interrupt.is_requested()
                })?;
                if let Some(reason) = waited {
                    let skipped = Skipped {
                        suite: suite.as_ref().map(|s| s.name.clone()),
                        tags,
                        setup: setup_lists,
                        environment,
                    };
                    return record_skipped(
                        store.as_mut(),
                        &plan,
                        args.note.as_deref(),
                        skipped,
                        &reason,
                    );
                }
                if interrupt.is_requested() {
                    eprintln!("interrupted while waiting for the machine: nothing was measured");
                    return Ok(ExitCode::from(exit_status_after(interrupt.signal())));
                }
            }
            Err(e) => return Err(anyhow::Error::new(e).context("cannot apply the setup")),
        }
    }

    let mut executor = ProcessExecutor::new(exe, vec!["__child".to_string()]);
    executor.monitors = monitors.clone();
    if let Some(seconds) = run_timeout {
        executor.timeout = RunTimeout::Fixed(std::time::Duration::from_secs_f64(seconds));
    }
    let mut progress = Progress::new(args.quiet);
    let options = SessionOptions {
        id: Some(session_id),
        suite: suite.as_ref().map(|s| s.name.clone()),
        tags,
        note: args.note.clone(),
        environment,
        vernier_version: env!("CARGO_PKG_VERSION").to_string(),
        findings,
        setup: setup_lists,
        monitors: monitors.iter().map(|m| m.to_string()).collect(),
        loads: loads.canonical(),
        child_setup: setup_plan.child.clone(),
        work_root: Some(work_root),
    };
    let mut hooks = PerRunHooks {
        setup: guard.as_mut(),
        loads,
        running: None,
    };
    let outcome = run_session(
        &plan,
        options,
        &mut executor,
        &mut hooks,
        store.as_mut(),
        &interrupt,
        &mut |e| {
            // `monitor` sets the run count to the number of intervals itself: a warning that
            // the count is below what an interval needs would blame a flag nobody gave.
            let monitoring = on_signal == OnSignal::End;
            if !(monitoring && is_max_runs_warning(e)) {
                progress.handle(e)
            }
        },
    );
    // Loads left running by an error end here, before the system is restored.
    drop(hooks);
    if let Some(mut g) = guard.take() {
        g.restore()
            .context("cannot restore the system after the session")?;
    }
    let outcome = outcome?;

    let session = db::load_for_display(store.as_ref(), outcome.session, Load::DISTRIBUTIONS)
        .context("cannot read back the session")?;
    let summaries = vernier_analysis::summarize_session(&session);
    outln!(
        "\n{}",
        vernier_report::table::run_summary_table(&summaries, crate::out::terminal_width())
    );
    for s in &summaries {
        if let Some(latency) = &s.latency {
            outln!(
                "{}: latency per CPU\n{}",
                s.label(),
                vernier_report::latency::latency_text(latency)
            );
        }
    }
    outln!(
        "session {} ({}), stored in {}",
        outcome.session,
        outcome.status,
        store.location()
    );
    match outcome.status {
        SessionStatus::Interrupted if on_signal == OnSignal::End => {
            eprintln!("ended: the completed intervals are stored");
            Ok(ExitCode::SUCCESS)
        }
        SessionStatus::Interrupted => {
            eprintln!("interrupted: the completed runs are stored");
            Ok(ExitCode::from(exit_status_after(interrupt.signal())))
        }
        SessionStatus::Failed => {
            for (label, error) in &outcome.failures {
                eprintln!("error: {label}: {error}");
            }
            Ok(ExitCode::from(2))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// What a skipped session records of the run it would have been.
struct Skipped {
    suite: Option<String>,
    tags: std::collections::BTreeMap<String, String>,
    setup: Vec<String>,
    environment: vernier_model::Environment,
}

/// Stores a session that did not run because the machine was busy (status `skipped`, the
/// reason in its note, no configurations), so the gap shows in `vernier sessions`.
fn record_skipped(
    store: &mut dyn vernier_store::Store,
    plan: &vernier_engine::Plan,
    note: Option<&str>,
    skipped: Skipped,
    reason: &str,
) -> Result<ExitCode> {
    let now = vernier_sys::clock::unix_now_ns();
    let Skipped {
        suite,
        tags,
        setup,
        mut environment,
    } = skipped;
    // Recorded as a session records it (vernier_model::text).
    environment.escape_controls();
    let note = match note {
        Some(note) => format!("{note} (skipped: {reason})"),
        None => format!("skipped: {reason}"),
    };
    let mut session = vernier_model::SessionInfo {
        id: Uuid::new_v4(),
        started_at_ns: now,
        ended_at_ns: Some(now),
        status: SessionStatus::Running,
        suite,
        specs: plan.specs.clone(),
        tags,
        note: Some(note),
        settings: plan.settings.clone(),
        vernier_version: env!("CARGO_PKG_VERSION").to_string(),
        fingerprint: environment.fingerprint(),
        environment,
        findings: Vec::new(),
        setup,
        monitors: Vec::new(),
    };
    session.escape_controls();
    store.begin_session(&session)?;
    store.finish_session(session.id, SessionStatus::Skipped, now)?;
    outln!(
        "skipped: {reason}; stored as session {} in {}",
        session.id,
        store.location()
    );
    Ok(ExitCode::SUCCESS)
}

/// Around every measured run: the per-run setup steps, then the loads, started last so that an
/// idle gate or a cooldown waits for a quiet machine without them; the loads stop right after
/// the run.
struct PerRunHooks<'a> {
    setup: Option<&'a mut SetupGuard>,
    loads: LoadPlan,
    running: Option<RunningLoads>,
}

impl RunHooks for PerRunHooks<'_> {
    fn check_setup(&mut self) -> Vec<vernier_model::ChangedSetting> {
        self.setup
            .as_ref()
            .map(|guard| guard.changed_settings())
            .unwrap_or_default()
    }

    fn before_run(&mut self) -> Result<Vec<SetupStep>, String> {
        let steps = match self.setup.as_mut() {
            Some(guard) => guard
                .before_run()
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|r| SetupStep {
                    plugin: r.plugin,
                    waited_ms: r.waited_ms,
                    timed_out: r.timed_out,
                    detail: r.detail,
                })
                .collect(),
            None => Vec::new(),
        };
        if !self.loads.is_empty() {
            self.running = Some(self.loads.start().map_err(|e| e.to_string())?);
        }
        Ok(steps)
    }

    fn after_run(&mut self) -> Result<Option<i64>, String> {
        let Some(running) = self.running.take() else {
            return Ok(None);
        };
        let usage = running.stop();
        if !usage.problems.is_empty() {
            return Err(usage.problems.join("; "));
        }
        Ok(Some(usage.cpu_ns))
    }
}

/// Exit status after an ending signal (Ctrl-C when none is known): 128 + its number, as a
/// shell reports death by that signal.
fn exit_status_after(signal: Option<i32>) -> u8 {
    let signal = signal.unwrap_or(libc::SIGINT);
    u8::try_from(128 + signal).unwrap_or(u8::MAX)
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "interrupt (SIGINT)",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "hangup (SIGHUP)",
        _ => "signal",
    }
}

/// Writes a line to stderr from a thread of its own: a write to a terminal that is stopped
/// (Ctrl-S) or to a pipe nobody reads blocks, and the signal thread must stay free to act on
/// the next signal and to restore the system. When stderr is gone (a closed terminal), there is
/// no one to tell, and the error is dropped.
fn say(line: String) {
    let _ = std::thread::Builder::new()
        .name("signal message".into())
        .spawn(move || {
            let _ = writeln!(std::io::stderr(), "{line}");
        });
}

/// Ctrl-C, SIGTERM and SIGHUP all end the session alike. The first: the run in progress is
/// killed, no new one starts, the completed runs stay, the session is marked interrupted and
/// the system restored on the ordinary way out. A repeated one leaves at once, for when that
/// way is stuck: the system is restored from the restore record, the session marked
/// interrupted (if the database lets it within [`LEAVING_LOCK_WAIT`]), and vernier exits.
fn handle_signals(
    interrupt: Arc<Interrupt>,
    record: PathBuf,
    database: Location,
    session: Uuid,
    work_root: PathBuf,
) -> Result<()> {
    // SAFETY: isatty(3) only inspects the descriptor.
    let terminals =
        [libc::STDOUT_FILENO, libc::STDERR_FILENO].map(|fd| (fd, unsafe { libc::isatty(fd) } == 1));
    vernier_engine::watch_signals(interrupt, move |event| match event {
        SignalEvent::First(signal) => {
            if signal == libc::SIGHUP {
                detach_from_terminal(&terminals);
            }
            say(format!(
                "\n{}: stopping after ending the run in progress (send it again to leave at once)",
                signal_name(signal)
            ));
        }
        SignalEvent::Repeated(signal) => {
            say(format!(
                "{}: restoring the system and leaving at once",
                signal_name(signal)
            ));
            leave_now(&record, &database, session, &work_root, signal);
        }
    })
    .context("cannot install the signal handlers")
}

/// After SIGHUP the terminal is gone and writing to it fails (EIO): what went to it goes to
/// /dev/null instead, so the session can still end in order. Pipes and files are kept.
fn detach_from_terminal(terminals: &[(i32, bool)]) {
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    for &(fd, was_terminal) in terminals {
        if was_terminal {
            // SAFETY: dup2(2) on two open descriptors; `fd` is stdout or stderr.
            unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), fd) };
        }
    }
}

fn leave_now(
    record: &Path,
    database: &Location,
    session: Uuid,
    work_root: &Path,
    signal: i32,
) -> ! {
    if work_root.exists() {
        if let Err(e) = std::fs::remove_dir_all(work_root) {
            say(format!("error: cannot remove {}: {e}", work_root.display()));
        }
    }
    // Only this session's record: another live session's is not ours to undo, and one left
    // by a killed session is for `system reset` to replay.
    let ours = RestoreRecord::load(record)
        .ok()
        .flatten()
        .is_some_and(|r| r.session == Some(session.to_string()) && r.owner().is_current());
    if ours {
        if let Err(e) = vernier_setup::restore_from_record(record) {
            say(format!("error: cannot restore the system: {e}"));
        }
    }
    let ended = vernier_store::open_with_lock_wait(database, Access::Write, LEAVING_LOCK_WAIT)
        .and_then(|mut s| {
            s.end_running_session(
                session,
                SessionStatus::Interrupted,
                vernier_sys::clock::unix_now_ns(),
            )
        });
    if let Err(e) = ended {
        say(format!(
            "error: cannot mark session {session} interrupted: {e}"
        ));
    }
    std::process::exit(128 + signal)
}
