//! [`run_session`]: a [`SessionRequest`] checked, then measured and stored, with the system
//! restored on every way out (docs/architecture.md, "`vernier run`").
//!
//! 1. Everything the user can get wrong is checked before the database or the system is
//!    touched: the specs and the settings layered once ([`crate::request`]), the plan, the
//!    monitors, the loads (started and stopped once), the setup plan, the host's record
//!    directory and the machine's limits.
//! 2. The database is opened, the environment captured (the kernel configuration stored
//!    beside it) and a busy machine waited for or skipped (`--if-busy`, [`crate::busy`]).
//! 3. From here on the signals are the session's ([`crate::signals`]), and the setup is
//!    applied: its guard restores the system when dropped, also on an error or a panic.
//! 4. The engine runs the plan ([`vernier_engine::run_session`]) with the per-run hooks
//!    ([`crate::hooks`]); its events go to the [`Observer`].
//! 5. The loads end, the system is restored, and the stored session is read back and
//!    summarized for the caller to show.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use uuid::Uuid;
use vernier_analysis::ConfigSummary;
use vernier_engine::suite::{Suite, SuiteSource};
use vernier_engine::{
    build_plan, Event, Interrupt, Plan, ProcessExecutor, RunTimeout, SessionOptions, SessionOutcome,
};
use vernier_load::LoadPlan;
use vernier_model::{Environment, Finding, SessionStatus, Texts as _};
use vernier_monitor::MonitorSpec;
use vernier_setup::{SetupError, SetupGuard, SetupPlan};
use vernier_store::{Access, Load, Location, Store};
use vernier_sys::Roots;

use crate::busy::{self, BusyPolicy, IfBusy};
use crate::hooks::PerRunHooks;
use crate::request::{
    default_time_limit_s, layered_settings, resolve_specs, SessionRequest, TimeLimit,
};
use crate::signals::{Leaving, OnSignal, Signals};
use crate::{database, host, AppError};

/// How long a load's program must run without failing before the session counts as started.
const LOAD_START_CHECK: Duration = Duration::from_secs(1);

/// Where a session's progress goes: the engine's events as they come and the application
/// layer's own notices. The binary renders them; nothing here prints.
pub trait Observer {
    fn event(&mut self, event: &Event);
    fn notice(&mut self, notice: &Notice);
}

/// What the application layer tells the user besides the engine's events.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// An optional setup plugin (`NAME?`) that cannot work on this machine is left out.
    SetupSkipped(vernier_setup::Skipped),
    /// `calibrate`: session `index` (from 1) of `sessions` starts after `wait`, as the spread
    /// says.
    CalibrationWaits {
        index: u32,
        sessions: u32,
        wait: Duration,
    },
    /// `calibrate`: session `index` (from 1) of `sessions` starts.
    CalibrationSession { index: u32, sessions: u32 },
    /// What the profiles of this session will lack on this machine, and what would give it
    /// (`--profile`: kernel frames without names, or none at all).
    Profile(String),
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEnd {
    /// The session ran: to its end, or until a failure or a signal ended it.
    Ran(RanSession),
    /// The machine was busy: stored as a session with status `skipped` and the reason in
    /// its note.
    Skipped {
        session: Uuid,
        reason: String,
        location: Location,
    },
    /// A signal came while the session waited for the machine: nothing was measured or
    /// stored.
    NotStarted { signal: Option<i32> },
}

/// A session that ran, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RanSession {
    pub session: Uuid,
    pub status: SessionStatus,
    pub ending: Ending,
    /// Every configuration's summary, in plan order.
    pub summaries: Vec<ConfigSummary>,
    /// The database it is stored in.
    pub location: Location,
}

/// How a session that ran ended, for the command: what [`OnSignal`] made of a signal.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Completed,
    /// Configurations failed, each with its error.
    Failed {
        failures: Vec<(String, String)>,
    },
    /// A signal interrupted it (`signal`: which; `None` when it was no signal).
    Interrupted {
        signal: Option<i32>,
    },
    /// A signal ended it as [`OnSignal::End`] says: the way monitoring ends.
    Ended,
    /// It ran past its time limit (`limit_s` seconds, [`crate::TimeLimit`]) and was stopped
    /// as an interrupt stops it, with a `time-limit` finding.
    TimedOut {
        limit_s: f64,
    },
}

/// A request checked into what runs: nothing in the database or on the system has changed.
pub(crate) struct Checked {
    suite: Option<Suite>,
    plan: Plan,
    run_timeout_s: Option<f64>,
    /// The session's time limit, seconds (`None`: none).
    time_limit_s: Option<f64>,
    tags: BTreeMap<String, String>,
    monitors: Vec<MonitorSpec>,
    loads: LoadPlan,
    /// `--setup` as given (or the suite's), stored with the session.
    setup: Vec<String>,
    setup_plan: SetupPlan,
    roots: Roots,
    /// This executable, which runs every run's child (`vernier __child`).
    exe: PathBuf,
    /// How profiled runs are recorded (`--profile`), checked against the machine.
    profiler: Option<vernier_engine::Profiler>,
}

/// Runs the session `request` asks for, recording into the database at `database`, with its
/// progress to `observer`. The ending signals are `signals`' from the moment anything may
/// change ([`Signals::watch`]). Whatever the setup changed is restored before this returns,
/// also on an error or a panic; a repeated signal restores it and exits.
pub fn run_session(
    request: &SessionRequest,
    database: &Location,
    signals: &mut Signals,
    observer: &mut dyn Observer,
) -> Result<SessionEnd, AppError> {
    // The machine's limits, the environment and the system check read what they share once.
    let reads = vernier_sys::Reads::new();
    let checked = check(request, observer, &reads)?;
    let mut store = database::open(database, Access::Create)?;
    // No checkpoint, with its fsyncs, when `vernier run` exits (docs/schema.md).
    store.defer_checkpoint().map_err(AppError::Store)?;
    let environment = capture_environment(&checked, store.as_mut(), &reads)?;
    if let Some(reason) =
        busy::skip_reason(&request.busy, store.as_ref(), &checked.roots, &|| false)?
    {
        return record_skipped(store.as_mut(), request, checked, environment, &reason);
    }
    let mut findings = system_check(&checked.roots, &reads);
    findings.extend(vernier_setup::trace_finding(&checked.setup_plan));

    let id = Uuid::new_v4();
    let record = host::session_record();
    // Work directories of benchmarks prepared once per session (compile's kernel tree): the
    // engine removes it at the end, leaving at once on a repeated signal removes it too.
    let work_root = std::env::temp_dir().join(format!("vernier-work-{id}"));
    signals.watch()?;
    let _in_session = signals.session(Leaving {
        record: record.clone(),
        database: store.location().clone(),
        session: id,
        work_root: work_root.clone(),
    });
    let interrupt = Arc::clone(signals.interrupt());
    // From here on the system may change; the guard restores it when dropped, also on error
    // and panic, and a repeated signal restores from the record before leaving at once.
    let waiting = Arc::clone(&interrupt);
    let guard = match apply_setup(
        &checked,
        id,
        &record,
        &request.busy,
        store.as_ref(),
        move || waiting.is_requested(),
    )? {
        Applied::Guard(guard) => guard.map(|g| g.with_cancel_flag(interrupt.flag())),
        Applied::Busy(reason) => {
            return record_skipped(store.as_mut(), request, checked, environment, &reason)
        }
        Applied::Interrupted => {
            return Ok(SessionEnd::NotStarted {
                signal: interrupt.signal(),
            })
        }
    };
    let options = SessionOptions {
        id: Some(id),
        suite: checked.suite.as_ref().map(|s| s.name.clone()),
        tags: checked.tags.clone(),
        note: request.note.clone(),
        environment,
        vernier_version: crate::VERSION.to_string(),
        findings,
        setup: checked.setup.clone(),
        monitors: checked.monitors.iter().map(ToString::to_string).collect(),
        loads: checked.loads.canonical(),
        child_setup: checked.setup_plan.child.clone(),
        work_root: Some(work_root),
        profiler: checked.profiler.clone(),
    };
    let (outcome, timed_out) = measure(
        &checked,
        options,
        guard,
        store.as_mut(),
        &interrupt,
        observer,
    )?;
    if let (true, Some(limit_s)) = (timed_out, checked.time_limit_s) {
        store.add_finding(outcome.session, &time_limit_finding(limit_s))?;
    }

    let session = database::load_for_display(store.as_ref(), outcome.session, Load::DISTRIBUTIONS)
        .map_err(|e| AppError::ReadBack(Box::new(e)))?;
    let ending = match outcome.status {
        SessionStatus::Interrupted if timed_out => Ending::TimedOut {
            limit_s: checked.time_limit_s.unwrap_or_default(),
        },
        SessionStatus::Interrupted if request.on_signal == OnSignal::End => Ending::Ended,
        SessionStatus::Interrupted => Ending::Interrupted {
            signal: interrupt.signal(),
        },
        SessionStatus::Failed => Ending::Failed {
            failures: outcome.failures,
        },
        _ => Ending::Completed,
    };
    Ok(SessionEnd::Ran(RanSession {
        session: outcome.session,
        status: outcome.status,
        ending,
        summaries: vernier_analysis::summarize_session(&session),
        location: store.location().clone(),
    }))
}

/// The finding of a session stopped at its time limit of `limit_s` seconds.
fn time_limit_finding(limit_s: f64) -> Finding {
    Finding::new(
        "time-limit",
        vernier_model::Severity::Warning,
        "the session ran past its time limit and was stopped",
        format!(
            "still running after {limit_s:.0} s (--time-limit; by default twice the session's \
             budget of max-time per configuration, and at least that plus 30 minutes): a run \
             or a setup wait that did not end; the runs completed before are stored"
        ),
    )
    .with_fix("find what hung (the last run's configuration), or give a longer --time-limit")
}

/// Runs the checked plan through the engine, with the setup `guard` holds and the loads
/// around every measured run, then ends the loads and restores the system, also when the
/// engine failed. Past the session's time limit, a watcher requests the interrupt, which
/// stops it as a signal would; the second value says whether it did.
fn measure(
    checked: &Checked,
    options: SessionOptions,
    mut guard: Option<SetupGuard>,
    store: &mut dyn Store,
    interrupt: &Arc<Interrupt>,
    observer: &mut dyn Observer,
) -> Result<(SessionOutcome, bool), AppError> {
    let watch = Arc::new(TimeLimitWatch::default());
    if let Some(limit_s) = checked.time_limit_s {
        let (interrupt, watch) = (Arc::clone(interrupt), Arc::clone(&watch));
        let limit = Duration::from_secs_f64(limit_s);
        // Not joined: the session ends without waiting for the watcher to be woken and
        // scheduled (on a loaded machine, a wait for a CPU); `TimeLimitWatch::end` settles
        // whether the limit was passed.
        std::thread::Builder::new()
            .name("time limit".into())
            .spawn(move || watch.watch(limit, &interrupt))
            .map_err(AppError::TimeLimitWatcher)?;
    }
    let outcome = measure_until_stopped(checked, options, guard.take(), store, interrupt, observer);
    let timed_out = watch.end();
    Ok((outcome?, timed_out))
}

/// Whether a session ended before its time limit, or the limit was passed first; shared by
/// the session and the watcher thread of [`measure`].
#[derive(Default)]
struct TimeLimitWatch {
    /// (the session has ended, the limit was passed first)
    state: Mutex<(bool, bool)>,
    ended: Condvar,
}

impl TimeLimitWatch {
    /// Waits up to `limit` for the session to end; requests `interrupt` when it has not.
    fn watch(&self, limit: Duration, interrupt: &Interrupt) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut state, _) = self
            .ended
            .wait_timeout_while(state, limit, |(ended, _)| !*ended)
            .unwrap_or_else(PoisonError::into_inner);
        if !state.0 {
            state.1 = true;
            interrupt.request();
        }
    }

    /// Marks the session ended; true when the limit was passed before.
    fn end(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 = true;
        self.ended.notify_all();
        state.1
    }
}

/// [`measure`] without the time limit.
fn measure_until_stopped(
    checked: &Checked,
    options: SessionOptions,
    mut guard: Option<SetupGuard>,
    store: &mut dyn Store,
    interrupt: &Interrupt,
    observer: &mut dyn Observer,
) -> Result<SessionOutcome, AppError> {
    let mut executor = ProcessExecutor::new(checked.exe.clone(), vec!["__child".to_string()]);
    executor.serve_args = Some(vec!["__child".to_string(), "--serve".to_string()]);
    executor.monitors = checked.monitors.clone();
    if let Some(seconds) = checked.run_timeout_s {
        executor.timeout = RunTimeout::Fixed(Duration::from_secs_f64(seconds));
    }
    let mut hooks = PerRunHooks {
        setup: guard.as_mut(),
        loads: checked.loads.clone(),
        running: None,
    };
    let outcome = vernier_engine::run_session(
        &checked.plan,
        options,
        &mut executor,
        &mut hooks,
        store,
        interrupt,
        &mut |event| observer.event(event),
    );
    // Loads left running by an error end here, before the system is restored.
    drop(hooks);
    if let Some(mut g) = guard.take() {
        g.restore().map_err(AppError::Restore)?;
    }
    Ok(outcome?)
}

/// Checks `request` into what runs, before the database or the system is touched.
pub(crate) fn check(
    request: &SessionRequest,
    observer: &mut dyn Observer,
    reads: &vernier_sys::Reads,
) -> Result<Checked, AppError> {
    let (suite, specs) = resolve_specs(&request.specs, request.suite.as_deref())?;
    let (settings, run_timeout_s) = layered_settings(suite.as_ref(), &request.settings)?;
    // A list given on the command line replaces the suite's.
    let from_suite = |given: &Vec<String>, of_suite: fn(&Suite) -> &Vec<String>| match (
        &suite,
        given.is_empty(),
    ) {
        (Some(s), true) => of_suite(s).clone(),
        _ => given.clone(),
    };
    let monitor_lists = from_suite(&request.monitors, |s| &s.monitors);
    let setup = from_suite(&request.setup, |s| &s.setup);
    let load_lists = from_suite(&request.loads, |s| &s.loads);
    let online_cpus = vernier_sys::cpulist::online_cpus().len() as u32;
    let infos = crate::config::benchmark_infos(&specs)?;
    let plan = build_plan(&specs, settings, &infos, online_cpus)
        .map_err(crate::config::naming_user_benchmarks)
        .map_err(|e| match &suite {
            Some(Suite {
                source: SuiteSource::File(path),
                ..
            }) => AppError::SuitePlan {
                path: path.clone(),
                source: Box::new(e),
            },
            _ => e.into(),
        })?;
    let tags = tags(suite.as_ref(), &request.tags)?;
    let monitors = monitors(&plan, &monitor_lists)?;
    let loads = vernier_load::LoadSet::parse(&load_lists)?;
    let roots = Roots::real();
    let mut setup_plan = vernier_setup::plan_setup(&setup, &roots)?;
    if let Some(cpus) = traced_cpus(&plan, setup_plan.child.cpus.as_deref()) {
        setup_plan.add_trace(&roots, &cpus)?;
    }
    for skipped in &setup_plan.skipped {
        observer.notice(&Notice::SetupSkipped(skipped.clone()));
    }
    // A setup that sets host state keeps the host's restore record (crate::host): this
    // process must be able to write it, and a record an earlier vernier left in this user's
    // state directory must be restored first.
    if setup_plan.sets_host_state() {
        host::prepare(
            "--setup",
            " (rt, pin, cooldown, idle-gate and drop-caches set no host state and need no \
             record)",
        )?;
        host::check_per_user_records()?;
    }
    // What each configuration needs from the machine (tasks, files, memory, CPUs), with the
    // CPUs that `--setup pin` leaves to the runs.
    let mut limits = vernier_sys::MachineLimits::read_through(&roots, reads);
    if let Some(cpus) = &setup_plan.child.cpus {
        limits.cpus = cpus.clone();
    }
    vernier_engine::check_machine(&plan, &limits)?;
    let profiler = profiler(&plan.settings.profile, &roots)?;
    for note in profiler.iter().flat_map(|p| &p.notes) {
        observer.notice(&Notice::Profile(note.clone()));
    }
    // A load that cannot start (a missing program, a command that fails at once) is an error
    // now, not a failed first run. Once, with a second for a failing program to fail even on a
    // busy machine; before every run the check is the supervisor's short one.
    if !loads.is_empty() {
        let trial = loads
            .clone()
            .with_start_check(LOAD_START_CHECK)
            .start()?
            .stop();
        if let Some(problem) = trial.problems.into_iter().next() {
            return Err(AppError::LoadTrial(problem));
        }
    }
    let exe = std::env::current_exe().map_err(AppError::Executable)?;
    let time_limit_s = match request.time_limit {
        TimeLimit::FromBudget => Some(default_time_limit_s(
            plan.configurations.len(),
            plan.settings.max_time_s,
        )),
        TimeLimit::Seconds(s) => Some(s),
        TimeLimit::Off => None,
    };
    Ok(Checked {
        suite,
        plan,
        run_timeout_s,
        time_limit_s,
        tags,
        monitors,
        loads,
        setup,
        setup_plan,
        roots,
        exe,
        profiler,
    })
}

/// The CPUs that the plan's configurations trace (`latency:trace=US`): each one's `cpus`, or
/// every CPU its runs may use (those `--setup pin` leaves, or this process's); `None` when
/// none traces.
fn traced_cpus(plan: &vernier_engine::Plan, pinned: Option<&[usize]>) -> Option<Vec<usize>> {
    let mut cpus: Vec<usize> = Vec::new();
    let mut any = false;
    for c in &plan.configurations {
        if c.info.name() != "latency" {
            continue;
        }
        let Some(traced) = vernier_bench::latency::traced_cpus(&c.options) else {
            continue;
        };
        any = true;
        let all = || match pinned {
            Some(p) => p.to_vec(),
            None => vernier_sys::affinity::current_affinity().unwrap_or_default(),
        };
        cpus.extend(traced.unwrap_or_else(all));
    }
    cpus.sort_unstable();
    cpus.dedup();
    any.then_some(cpus)
}

/// What `perf record` needs of this machine, when the settings ask for profiled runs: perf
/// itself and the privileges to sample (vernier_engine::profile::check).
fn profiler(
    settings: &vernier_model::ProfileSettings,
    roots: &Roots,
) -> Result<Option<vernier_engine::Profiler>, AppError> {
    if settings.is_off() {
        return Ok(None);
    }
    let perf = vernier_engine::profile::find_perf(std::env::var_os("PATH").as_deref());
    let privileges = vernier_engine::profile::Privileges::read(roots);
    Ok(Some(vernier_engine::profile::check(
        *settings,
        &privileges,
        perf,
    )?))
}

/// The suite's tags, each replaced by a given one of the same key.
fn tags(
    suite: Option<&Suite>,
    given: &[(String, String)],
) -> Result<BTreeMap<String, String>, AppError> {
    let mut by_key = BTreeMap::new();
    for (k, v) in given {
        if by_key.insert(k.clone(), v.clone()).is_some() {
            return Err(AppError::TagTwice(k.clone()));
        }
    }
    let mut tags = suite.map(|s| s.tags.clone()).unwrap_or_default();
    tags.extend(by_key);
    Ok(tags)
}

/// The monitors of `lists`; without any, the default ones and those that explain the plan's
/// benchmarks (`latency`: softirqs and cpuidle).
fn monitors(plan: &Plan, lists: &[String]) -> Result<Vec<MonitorSpec>, AppError> {
    if !lists.is_empty() {
        return Ok(vernier_monitor::parse_monitor_list(&lists.join(","))?);
    }
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
    Ok(monitors)
}

/// The environment of the session, with the versions of the plan's tools; its kernel
/// configuration is stored in `store` (or, when it cannot be read, not referred to).
fn capture_environment(
    checked: &Checked,
    store: &mut dyn Store,
    reads: &vernier_sys::Reads,
) -> Result<Environment, AppError> {
    // What cannot change before a reboot is read once per boot (sys::environment).
    let cache = dirs::cache_dir().map(|dir| dir.join("vernier/environment.json"));
    let captured = vernier_sys::environment::capture_with_kernel_config(
        &checked.roots,
        cache.as_deref(),
        reads,
    );
    let mut environment = captured.environment;
    vernier_sys::environment::record_tool_versions(&mut environment, &checked.plan.tools());
    if let Some(sha) = environment.kernel_config_sha256.clone() {
        match &captured.kernel_config {
            Some(text) => store.put_kernel_config(&sha, text)?,
            None => environment.kernel_config_sha256 = None,
        }
    }
    Ok(environment)
}

/// The system check's findings. The sampled and measured checks cost ~250 ms; their findings
/// are cached per boot (the window's for a few minutes) so that short sessions do not pay
/// that every time.
fn system_check(roots: &Roots, reads: &vernier_sys::Reads) -> Vec<Finding> {
    let check_options = vernier_setup::CheckOptions {
        window: Duration::from_millis(200),
        round_trips: 500,
        ..Default::default()
    };
    match dirs::cache_dir() {
        Some(dir) => vernier_setup::system_check_cached(
            roots,
            &check_options,
            &dir.join("vernier/system-check.json"),
            reads,
        ),
        None => vernier_setup::system_check_with(roots, &check_options, reads),
    }
}

/// What applying the setup came to.
enum Applied {
    /// The guard that restores the setup (`None`: no setup).
    Guard(Option<SetupGuard>),
    /// Another session held the host's setup, and `--if-busy` says to skip, for this reason.
    Busy(String),
    /// A signal came while waiting for the host's setup.
    Interrupted,
}

/// Applies the session's setup, writing the host's restore record first. Another session
/// may have taken the host since the check: as `--if-busy` says, that is refused (naming it),
/// or waited for, or skipped.
fn apply_setup(
    checked: &Checked,
    session: Uuid,
    record: &Path,
    busy: &BusyPolicy,
    store: &dyn Store,
    interrupted: impl Fn() -> bool,
) -> Result<Applied, AppError> {
    while !checked.setup_plan.is_empty() {
        match checked
            .setup_plan
            .apply_for_session(record, &session.to_string())
        {
            Ok(guard) => return Ok(Applied::Guard(Some(guard))),
            Err(e @ SetupError::RecordInUse { .. }) if busy.if_busy == IfBusy::Run => {
                return Err(AppError::SetupHeld(e))
            }
            Err(SetupError::RecordInUse { .. }) => {
                if let Some(reason) = busy::skip_reason(busy, store, &checked.roots, &interrupted)?
                {
                    return Ok(Applied::Busy(reason));
                }
                if interrupted() {
                    return Ok(Applied::Interrupted);
                }
            }
            Err(e) => return Err(AppError::ApplySetup(e)),
        }
    }
    Ok(Applied::Guard(None))
}

/// Stores a session that did not run because the machine was busy (status `skipped`, the
/// reason in its note, no configurations), so the gap shows in `vernier sessions`.
fn record_skipped(
    store: &mut dyn Store,
    request: &SessionRequest,
    checked: Checked,
    mut environment: Environment,
    reason: &str,
) -> Result<SessionEnd, AppError> {
    let now = vernier_sys::clock::unix_now_ns();
    // Recorded as a session records it (vernier_model::text).
    environment.escape_controls();
    let note = match &request.note {
        Some(note) => format!("{note} (skipped: {reason})"),
        None => format!("skipped: {reason}"),
    };
    let mut session = vernier_model::SessionInfo {
        id: Uuid::new_v4(),
        started_at_ns: now,
        ended_at_ns: Some(now),
        status: SessionStatus::Running,
        suite: checked.suite.map(|s| s.name),
        specs: checked.plan.specs,
        tags: checked.tags,
        note: Some(note),
        settings: checked.plan.settings,
        vernier_version: crate::VERSION.to_string(),
        fingerprint: environment.fingerprint(),
        environment,
        findings: Vec::new(),
        setup: checked.setup,
        monitors: Vec::new(),
    };
    session.escape_controls();
    store.begin_session(&session)?;
    store.finish_session(session.id, SessionStatus::Skipped, now)?;
    Ok(SessionEnd::Skipped {
        session: session.id,
        reason: reason.to_string(),
        location: store.location().clone(),
    })
}
