//! Runs a whole session: every configuration of a plan, warmups first, then measured runs until
//! the stopping rule says stop, one after another or in randomized rounds. Every run is handed
//! to the [`Recorder`] as soon as it ends.

use std::collections::BTreeMap;
use std::path::PathBuf;

use uuid::Uuid;
use vernier_model::{
    ChangedSetting, ConfigurationRecord, Environment, Finding, Recorder, RunRecord, SessionInfo,
    SessionStatus, SetupStep, Severity, StopReason, Texts,
};
use vernier_stats::SeededRng;
use vernier_sys::clock::unix_now_ns;

use crate::child::ChildRequest;
use crate::event::Event;
use crate::executor::{ExecError, Executor, RunOutcome};
use crate::interrupt::Interrupt;
use crate::plan::Plan;
use crate::stopping::{self, Elapsed};

/// What describes a session besides its plan.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// The session's id; a new random one when not given. The application layer
    /// (`vernier_app`) gives one, so that its restore record and its signal handling can name
    /// the session before it starts.
    pub id: Option<Uuid>,
    pub suite: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub note: Option<String>,
    pub environment: Environment,
    pub vernier_version: String,
    pub findings: Vec<Finding>,
    /// Setup plugins and monitors as given, stored with the session.
    pub setup: Vec<String>,
    pub monitors: Vec<String>,
    /// Canonical specs of the loads that run during every measured run (`--load`), stored
    /// with each configuration; the hooks start and stop them.
    pub loads: Vec<String>,
    /// Applied to the child of every run (real-time priority, pinning).
    pub child_setup: vernier_model::ChildSetup,
    /// Where the work directories of benchmarks prepared once per session are made
    /// (`vernier_bench::Benchmark::preparation`); removed with everything in it when the
    /// session ends. `None`: `vernier-work-SESSION` in the system's temporary directory.
    pub work_root: Option<PathBuf>,
    /// How profiled runs are recorded, when the settings ask for some
    /// (`Settings::profile`), as checked at plan time ([`crate::profile::check`]).
    pub profiler: Option<crate::profile::Profiler>,
}

/// What runs around every measured run: the per-run setup plugins and the loads.
pub trait RunHooks {
    /// Prepares the system for a measured run and starts its loads, right before its child
    /// starts; the steps are stored with the run.
    fn before_run(&mut self) -> Result<Vec<SetupStep>, String>;

    /// Stops what [`RunHooks::before_run`] started, right after the run's child has ended
    /// (also when the run failed or was interrupted). Returns the CPU time the loads used
    /// (`None`: no loads), which the run's foreign CPU time then leaves out; an error (a load
    /// that died during the run) fails the run.
    fn after_run(&mut self) -> Result<Option<i64>, String> {
        Ok(None)
    }

    /// The values that the session's setup set and that no longer hold (something else
    /// changed them), each with the value found: asked right before a measured run's child
    /// starts (after [`RunHooks::before_run`]) and right after it has ended (after
    /// [`RunHooks::after_run`]). The run is marked with what either finds
    /// (`RunRecord::setup_changed`).
    fn check_setup(&mut self) -> Vec<ChangedSetting> {
        Vec::new()
    }
}

/// No per-run preparation.
pub struct NoHooks;

impl RunHooks for NoHooks {
    fn before_run(&mut self) -> Result<Vec<SetupStep>, String> {
        Ok(Vec::new())
    }
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionOutcome {
    pub session: Uuid,
    pub status: SessionStatus,
    /// Configurations whose runs failed, with the error.
    pub failures: Vec<(String, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The recorder's error, boxed so that the engine does not name a store's error type;
    /// `downcast_ref` recovers it.
    #[error("cannot record the session: {0}")]
    Record(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl EngineError {
    fn record<E: std::error::Error + Send + Sync + 'static>(e: E) -> Self {
        EngineError::Record(Box::new(e))
    }
}

/// The progress of one configuration.
struct ConfigState {
    record: ConfigurationRecord,
    label: String,
    values: stopping::Values,
    warmups_done: u32,
    elapsed: Elapsed,
    runs: u32,
    stop: Option<StopReason>,
    /// The last estimate of the measured runs still to come
    /// ([`stopping::Values::estimated_remaining_runs`]), as the progress estimate asks for it
    /// before and after every run ([`Remaining`]).
    last_remaining: std::cell::Cell<Option<Remaining>>,
}

/// An estimate of a configuration's remaining runs, and when it was made. The estimate
/// decides and projects over every value (a search over run counts, each an interval of the
/// median): made after every run of a short command it cost the controller a twentieth of
/// its time per run. It is made again once the configuration has spent [`REMAINING_REFRESH_S`]
/// more (every run of a command that takes longer); in between, each measured run counts one
/// off it.
#[derive(Debug, Clone, Copy)]
struct Remaining {
    runs: u32,
    at_values: usize,
    at_total_s: f64,
}

/// Seconds of a configuration's time between two estimates of its remaining runs: the
/// progress display shows the estimate about this often.
const REMAINING_REFRESH_S: f64 = 0.25;

impl ConfigState {
    /// The measured runs still to come, estimated afresh when [`Remaining`] says so.
    fn remaining_runs(&self, settings: &vernier_model::Settings) -> u32 {
        if let Some(last) = self.last_remaining.get() {
            if self.elapsed.total_s - last.at_total_s < REMAINING_REFRESH_S {
                let since = u32::try_from(self.values.len() - last.at_values).unwrap_or(u32::MAX);
                return last.runs.saturating_sub(since);
            }
        }
        let runs = self.values.estimated_remaining_runs(self.elapsed, settings);
        self.last_remaining.set(Some(Remaining {
            runs,
            at_values: self.values.len(),
            at_total_s: self.elapsed.total_s,
        }));
        runs
    }

    fn executions(&self) -> u32 {
        self.warmups_done
            .saturating_add(u32::try_from(self.values.len()).unwrap_or(u32::MAX))
    }
}

/// Runs `plan`, recording into `recorder` and reporting to `observer`.
///
/// When a write to the recorder fails (the database stayed locked, the disk is full), the
/// session ends with that error and is marked `failed`. If even that write fails, the session
/// stays `running` in the store, and reads as `abandoned` once this process has ended.
pub fn run_session<R: Recorder + ?Sized>(
    plan: &Plan,
    options: SessionOptions,
    executor: &mut dyn Executor,
    hooks: &mut dyn RunHooks,
    recorder: &mut R,
    interrupt: &Interrupt,
    observer: &mut dyn FnMut(&Event),
) -> Result<SessionOutcome, EngineError> {
    let id = options.id.unwrap_or_else(Uuid::new_v4);
    let result = record_session(
        id, plan, options, executor, hooks, recorder, interrupt, observer,
    );
    if result.is_err() {
        // Best effort: the error to report is the first one.
        let _ = recorder.finish_session(id, SessionStatus::Failed, unix_now_ns());
    }
    result
}

#[allow(clippy::too_many_arguments)]
fn record_session<R: Recorder + ?Sized>(
    id: Uuid,
    plan: &Plan,
    options: SessionOptions,
    executor: &mut dyn Executor,
    hooks: &mut dyn RunHooks,
    recorder: &mut R,
    interrupt: &Interrupt,
    observer: &mut dyn FnMut(&Event),
) -> Result<SessionOutcome, EngineError> {
    let settings = &plan.settings;
    // What is recorded holds no control character (vernier_model::text): the environment, the
    // findings and the suite's name come from files of the machine. The fingerprint is of the
    // environment as recorded, as an import computes it.
    let mut environment = options.environment;
    environment.escape_controls();
    let fingerprint = environment.fingerprint();
    let mut session = SessionInfo {
        id,
        started_at_ns: unix_now_ns(),
        ended_at_ns: None,
        status: SessionStatus::Running,
        suite: options.suite,
        specs: plan.specs.clone(),
        tags: options.tags,
        note: options.note,
        settings: settings.clone(),
        vernier_version: options.vernier_version,
        environment,
        fingerprint,
        findings: options.findings,
        setup: options.setup,
        monitors: options.monitors,
    };
    session.escape_controls();
    recorder
        .begin_session(&session)
        .map_err(EngineError::record)?;
    observer(&Event::SessionStarted {
        session: session.id,
        configurations: plan.configurations.len(),
    });
    for warning in stopping::plan_warnings(settings) {
        observer(&Event::Warning {
            position: None,
            warning,
        });
    }
    let mut states = Vec::with_capacity(plan.configurations.len());
    for (position, planned) in plan.configurations.iter().enumerate() {
        let mut record = ConfigurationRecord {
            id: Uuid::new_v4(),
            position: position as u32,
            benchmark: planned.info.name().to_string(),
            benchmark_version: planned.info.version().to_string(),
            options: planned.options.clone(),
            metric: planned.info.metric().clone(),
            secondary_metrics: planned.info.secondary_metrics().to_vec(),
            loads: options.loads.clone(),
            stop_reason: None,
            converged: false,
            error: None,
        };
        // A user benchmark's description names its metrics.
        record.escape_controls();
        recorder
            .add_configuration(session.id, &record)
            .map_err(EngineError::record)?;
        states.push(ConfigState {
            record,
            label: planned.label(),
            values: stopping::Values::default(),
            warmups_done: 0,
            elapsed: Elapsed::default(),
            runs: 0,
            stop: None,
            last_remaining: std::cell::Cell::new(None),
        });
    }

    let work_root = options
        .work_root
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("vernier-work-{id}")));
    let mut runner = Runner {
        session: session.id,
        reported_changes: BTreeMap::new(),
        settings,
        child_setup: options.child_setup,
        prepared: Prepared::new(work_root, plan),
        profiler: options
            .profiler
            .clone()
            .filter(|_| !settings.profile.is_off()),
        executor,
        hooks,
        recorder,
        interrupt,
        observer,
        failures: Vec::new(),
    };
    if settings.interleave {
        // The seed is stored with the session's settings; SeededRng's stream is fixed across
        // versions, so the seed replays this order.
        let mut rng = SeededRng::new(settings.seed);
        let mut round = 0;
        loop {
            let mut order: Vec<usize> = (0..states.len())
                .filter(|&i| states[i].stop.is_none())
                .collect();
            if order.is_empty() {
                break;
            }
            rng.shuffle(&mut order);
            for i in order {
                runner.step(&mut states, i, round)?;
            }
            round += 1;
        }
    } else {
        for i in 0..states.len() {
            while states[i].stop.is_none() {
                runner.step(&mut states, i, 0)?;
            }
        }
    }

    let status = if interrupt.is_requested() {
        SessionStatus::Interrupted
    } else if runner.failures.is_empty() {
        SessionStatus::Completed
    } else {
        SessionStatus::Failed
    };
    let failures = std::mem::take(&mut runner.failures);
    runner
        .recorder
        .finish_session(session.id, status, unix_now_ns())
        .map_err(EngineError::record)?;
    (runner.observer)(&Event::SessionFinished {
        session: session.id,
        status,
    });
    Ok(SessionOutcome {
        session: session.id,
        status,
        failures,
    })
}

/// The work directories of a session's configurations, prepared once per session
/// (`vernier_bench::Benchmark::preparation`): one per key, made under `root` before the first
/// run that needs it, removed when no unfinished configuration needs it and, with `root`, when
/// this is dropped: at the end of the session, on an error and on a panic. (A repeated signal
/// leaves at once; the application layer's signal handling, `vernier_app::signals`, then
/// removes `root` itself.)
struct Prepared {
    root: PathBuf,
    /// Per configuration: its benchmark and preparation key, when it needs one.
    needs: Vec<Option<(Box<dyn vernier_bench::Benchmark>, String)>>,
    /// Per key: the directory and the seconds a run is expected to take, if known.
    dirs: BTreeMap<String, (PathBuf, Option<f64>)>,
}

impl Prepared {
    fn new(root: PathBuf, plan: &Plan) -> Self {
        let needs = plan
            .configurations
            .iter()
            .map(|c| {
                let benchmark = crate::plan::builtin(&c.info)?;
                let key = benchmark.preparation(&c.options)?;
                Some((benchmark, key))
            })
            .collect();
        Prepared {
            root,
            needs,
            dirs: BTreeMap::new(),
        }
    }

    /// The work directory of configuration `i`, prepared now if it is not yet, and the
    /// seconds a run is expected to take: `Ok(None)` when it needs none.
    fn dir_for(
        &mut self,
        i: usize,
        options: &vernier_model::Options,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Option<(PathBuf, Option<f64>)>, String> {
        let Some(Some((benchmark, key))) = self.needs.get(i) else {
            return Ok(None);
        };
        if let Some(prepared) = self.dirs.get(key) {
            return Ok(Some(prepared.clone()));
        }
        let dir = self.root.join(format!("prepared-{}", self.dirs.len() + 1));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create the work directory {}: {e}", dir.display()))?;
        let expected_s = match benchmark.prepare(options, &dir, cancelled) {
            Ok(expected_s) => expected_s,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(format!("preparation failed: {e}"));
            }
        };
        self.dirs.insert(key.clone(), (dir.clone(), expected_s));
        Ok(Some((dir, expected_s)))
    }

    /// True when configuration `i` needs a work directory that is not prepared yet.
    fn pending(&self, i: usize) -> bool {
        matches!(self.needs.get(i), Some(Some((_, key))) if !self.dirs.contains_key(key))
    }

    /// Removes the work directories that no configuration still running needs.
    fn release(&mut self, states: &[ConfigState]) {
        let needed: Vec<&String> = self
            .needs
            .iter()
            .zip(states)
            .filter(|(_, st)| st.stop.is_none())
            .filter_map(|(need, _)| need.as_ref().map(|(_, key)| key))
            .collect();
        let unneeded: Vec<String> = self
            .dirs
            .keys()
            .filter(|key| !needed.contains(key))
            .cloned()
            .collect();
        for key in unneeded {
            if let Some((dir, _)) = self.dirs.remove(&key) {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if self.root.exists() {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

struct Runner<'a, R: Recorder + ?Sized> {
    session: Uuid,
    /// The changed settings said so far, with the value found: each is said (an event and a
    /// finding) when first found and again only when it is found otherwise.
    reported_changes: BTreeMap<String, String>,
    settings: &'a vernier_model::Settings,
    child_setup: vernier_model::ChildSetup,
    prepared: Prepared,
    profiler: Option<crate::profile::Profiler>,
    executor: &'a mut dyn Executor,
    hooks: &'a mut dyn RunHooks,
    recorder: &'a mut R,
    interrupt: &'a Interrupt,
    observer: &'a mut dyn FnMut(&Event),
    failures: Vec<(String, String)>,
}

impl<R: Recorder + ?Sized> Runner<'_, R> {
    /// One step of configuration `i`: its warmups when they are due, then one measured run and
    /// the stopping rule. Finishes the configuration when it stops.
    fn step(
        &mut self,
        states: &mut [ConfigState],
        i: usize,
        round: u32,
    ) -> Result<(), EngineError> {
        if states[i].runs == 0 {
            (self.observer)(&Event::ConfigurationStarted {
                position: i,
                label: states[i].label.clone(),
            });
        }
        while states[i].warmups_done < self.settings.warmup {
            if stopping::out_of_time(states[i].elapsed, self.settings) {
                return self.finish(states, i, StopReason::MaxTime, None);
            }
            if !self.run_once(states, i, round, true)? {
                return Ok(());
            }
        }
        if !self.run_once(states, i, round, false)? {
            return Ok(());
        }
        let state = &states[i];
        if let Some(reason) = state.values.decide(state.elapsed, self.settings) {
            // Before the configuration finishes: its work directory is still prepared.
            self.profile_runs(states, i)?;
            self.finish(states, i, reason, None)?;
        }
        Ok(())
    }

    /// The profiled runs of configuration `i` after its timed runs (`--profile`): each run
    /// under `perf record`, its stacks recorded. A failure is said and stored as a finding;
    /// the timed runs stand.
    fn profile_runs(&mut self, states: &mut [ConfigState], i: usize) -> Result<(), EngineError> {
        let Some(profiler) = self.profiler.clone() else {
            return Ok(());
        };
        let runs = self.settings.profile.runs;
        let state = &states[i];
        let measured = state.values.len();
        let mean_run_s = (measured > 0).then(|| state.elapsed.measured_s / measured as f64);
        for index in 0..runs {
            if self.interrupt.is_requested() {
                return Ok(());
            }
            let interrupt = self.interrupt;
            let prepared = match self
                .prepared
                .dir_for(i, &states[i].record.options, &|| interrupt.is_requested())
            {
                Ok(dir) => dir,
                Err(e) => return self.profile_failed(states, i, index, e),
            };
            let state = &states[i];
            let request = ChildRequest {
                benchmark: state.record.benchmark.clone(),
                options: state.record.options.clone(),
                warmup: false,
                index,
                setup: self.child_setup.clone(),
                work_dir: prepared.as_ref().map(|(dir, _)| dir.clone()),
                expected_s: prepared.and_then(|(_, expected_s)| expected_s),
            };
            // The same per-run steps and loads as a measured run, so that the profile is of
            // what was measured.
            if let Err(e) = self.hooks.before_run() {
                return self.profile_failed(states, i, index, e);
            }
            let profiled = self.executor.profile(&request, self.interrupt, &profiler);
            let after = self.hooks.after_run();
            let (outcome, stacks) = match profiled {
                Ok(done) => done,
                Err(ExecError::Interrupted) => return Ok(()),
                Err(e) => return self.profile_failed(states, i, index, e.to_string()),
            };
            if let Err(e) = after {
                let error = format!("a load failed during the profiled run: {e}");
                return self.profile_failed(states, i, index, error);
            }
            let state = &states[i];
            let mut record = vernier_model::ProfileRecord {
                id: Uuid::new_v4(),
                index,
                event: profiler.event.clone(),
                frequency_hz: profiler.settings.frequency_hz,
                scope: profiler.settings.scope,
                started_at_ns: outcome.started_at_ns,
                ended_at_ns: outcome.ended_at_ns,
                value: outcome
                    .values
                    .get(&state.record.metric.name)
                    .copied()
                    .filter(|v| v.is_finite()),
                stacks,
            };
            // Frame names are the symbols of whatever ran.
            record.escape_controls();
            self.recorder
                .add_profile(state.record.id, &record)
                .map_err(EngineError::record)?;
            let wall_s = record.duration_ns() as f64 / 1e9;
            (self.observer)(&Event::ProfileFinished {
                position: i,
                label: state.label.clone(),
                index,
                runs,
                event: record.event.clone(),
                distinct_stacks: record.stacks.stacks.len(),
                overhead: mean_run_s.filter(|m| *m > 0.0).map(|m| wall_s / m),
            });
        }
        Ok(())
    }

    /// Says and stores that profiled run `index` of configuration `i` failed.
    fn profile_failed(
        &mut self,
        states: &[ConfigState],
        i: usize,
        index: u32,
        error: String,
    ) -> Result<(), EngineError> {
        let label = states[i].label.clone();
        let error = vernier_model::escape_controls(&error).into_owned();
        let finding = Finding::new(
            "profile-failed",
            Severity::Warning,
            "a profiled run failed",
            format!("profiled run {} of {label}: {error}", index + 1),
        );
        self.recorder
            .add_finding(self.session, &finding)
            .map_err(EngineError::record)?;
        (self.observer)(&Event::ProfileFailed {
            position: i,
            label,
            index,
            error,
        });
        Ok(())
    }

    /// Executes and records one run. Returns false when the configuration (or the session)
    /// has stopped instead.
    fn run_once(
        &mut self,
        states: &mut [ConfigState],
        i: usize,
        round: u32,
        warmup: bool,
    ) -> Result<bool, EngineError> {
        if self.interrupt.is_requested() {
            self.finish_all_interrupted(states)?;
            return Ok(false);
        }
        if self.prepared.pending(i) {
            (self.observer)(&Event::Preparing {
                position: i,
                label: states[i].label.clone(),
            });
        }
        let interrupt = self.interrupt;
        let prepared = match self
            .prepared
            .dir_for(i, &states[i].record.options, &|| interrupt.is_requested())
        {
            Ok(dir) => dir,
            Err(_) if self.interrupt.is_requested() => {
                self.finish_all_interrupted(states)?;
                return Ok(false);
            }
            Err(e) => {
                self.finish(states, i, StopReason::Failed, Some(e))?;
                return Ok(false);
            }
        };
        let state = &states[i];
        let index = if warmup {
            state.warmups_done
        } else {
            state.values.len() as u32
        };
        let request = ChildRequest {
            benchmark: state.record.benchmark.clone(),
            options: state.record.options.clone(),
            warmup,
            index,
            setup: self.child_setup.clone(),
            work_dir: prepared.as_ref().map(|(dir, _)| dir.clone()),
            expected_s: prepared.and_then(|(_, expected_s)| expected_s),
        };
        let setup_steps = if warmup {
            Vec::new()
        } else {
            (self.observer)(&Event::RunPreparing { position: i, index });
            match self.hooks.before_run() {
                Ok(steps) => steps,
                Err(_) if self.interrupt.is_requested() => {
                    self.finish_all_interrupted(states)?;
                    return Ok(false);
                }
                Err(e) => {
                    let error = format!("setup before the run failed: {e}");
                    self.finish(states, i, StopReason::Failed, Some(error))?;
                    return Ok(false);
                }
            }
        };
        let mut setup_changed = if warmup {
            Vec::new()
        } else {
            self.check_setup(&states[i].label, i, index, "before")?
        };
        let started = states.iter().any(|st| st.runs > 0);
        let eta_s = started.then(|| self.eta_s(states));
        (self.observer)(&Event::RunStarted {
            position: i,
            warmup,
            index,
            eta_s,
        });
        let executed = self.executor.execute(&request, self.interrupt);
        let load_cpu_ns = if warmup {
            None
        } else {
            match self.hooks.after_run() {
                Ok(cpu) => cpu,
                Err(_) if self.interrupt.is_requested() => {
                    self.finish_all_interrupted(states)?;
                    return Ok(false);
                }
                Err(e) => {
                    let error = format!("a load failed during the run: {e}");
                    self.finish(states, i, StopReason::Failed, Some(error))?;
                    return Ok(false);
                }
            }
        };
        if !warmup {
            for changed in self.check_setup(&states[i].label, i, index, "after")? {
                if !setup_changed.contains(&changed) {
                    setup_changed.push(changed);
                }
            }
        }
        let outcome = match executed {
            Ok(outcome) => outcome,
            Err(ExecError::Interrupted) => {
                self.finish_all_interrupted(states)?;
                return Ok(false);
            }
            Err(e) => {
                self.finish(states, i, StopReason::Failed, Some(e.to_string()))?;
                return Ok(false);
            }
        };
        let metric = &states[i].record.metric;
        let mut outcome = outcome;
        let mut values = std::mem::take(&mut outcome.values);
        // SQL has no NaN: a secondary value that is not a number is not recorded.
        values.retain(|name, v| v.is_finite() || *name == metric.name);
        let primary = values.get(&metric.name).copied();
        // The check an import applies (vernier_model::validate), so that what is recorded
        // can always be exported and imported again.
        let checked = vernier_model::validate::check_values(metric, &values);
        let value = match (checked, primary) {
            (Ok(()), Some(value)) => value,
            (checked, _) => {
                let problem = checked.err().unwrap_or_else(|| {
                    format!("field 'values' lacks the primary metric '{}'", metric.name)
                });
                let error = format!("the benchmark reported invalid values: {problem}");
                self.finish(states, i, StopReason::Failed, Some(error))?;
                return Ok(false);
            }
        };
        let state = &mut states[i];
        let place = vernier_model::RunPlace {
            configuration: state.record.id,
            warmup,
            index,
        };
        let (started_at_ns, ended_at_ns) = (outcome.started_at_ns, outcome.ended_at_ns);
        // The outcome moves into the record: its monitor series are not copied.
        let mut record = run_record(outcome, values, place, round, state.executions());
        record.setup_steps = setup_steps;
        record.setup_changed = setup_changed;
        if let Some(cpu) = load_cpu_ns {
            // The loads ran during the measurement window; what they used is theirs, not
            // foreign.
            record.foreign_cpu_ns -= cpu;
            record.load_cpu_ns = Some(cpu);
        }
        // Monitor keys and failures, setup steps and a user benchmark's value names come from
        // outside.
        record.escape_controls();
        self.recorder
            .add_run(state.record.id, &record)
            .map_err(EngineError::record)?;
        let wall_s = (ended_at_ns - started_at_ns) as f64 / 1e9;
        // Setup waits (idle gate, cooldown) are part of what a run costs: they count against
        // max-time and in the estimate of the next run.
        let waited_s = record
            .setup_steps
            .iter()
            .map(|st| st.waited_ms as f64 / 1e3)
            .sum::<f64>();
        state.runs += 1;
        state.elapsed.total_s += wall_s + waited_s;
        state.elapsed.waits_s += waited_s;
        if warmup {
            state.warmups_done += 1;
        } else {
            state.values.push(value);
            state.elapsed.measured_s += wall_s;
        }
        state.elapsed.mean_run_s = if state.values.is_empty() {
            state.elapsed.total_s / f64::from(state.runs)
        } else {
            (state.elapsed.measured_s + state.elapsed.waits_s) / state.values.len() as f64
        };
        let event = Event::RunFinished {
            position: i,
            label: state.label.clone(),
            warmup,
            index,
            value,
            unit: state.record.metric.unit.clone(),
            precision: state.values.precision(self.settings),
            target: self.settings.target,
            waited_s,
            waits_s: state.elapsed.waits_s,
            eta_s: self.eta_s(states),
        };
        (self.observer)(&event);
        let state = &states[i];
        if !warmup && state.values.len() == 1 {
            for warning in stopping::run_warnings(1, state.elapsed, self.settings) {
                (self.observer)(&Event::Warning {
                    position: Some(i),
                    warning,
                });
            }
        }
        Ok(true)
    }

    /// Asks the hooks which values of the setup no longer hold ([`RunHooks::check_setup`]),
    /// `when` ("before", "after") measured run `index` of configuration `i`. What was not said
    /// yet is said now: an event for the CLI and a finding stored with the session.
    fn check_setup(
        &mut self,
        label: &str,
        i: usize,
        index: u32,
        when: &str,
    ) -> Result<Vec<ChangedSetting>, EngineError> {
        let changed = self.hooks.check_setup();
        // A setting back at its value is said again when it changes again.
        self.reported_changes
            .retain(|setting, _| changed.iter().any(|c| &c.setting == setting));
        let new: Vec<ChangedSetting> = changed
            .iter()
            .filter(|c| self.reported_changes.get(&c.setting) != Some(&c.found))
            .cloned()
            .collect();
        if new.is_empty() {
            return Ok(changed);
        }
        for c in &new {
            self.reported_changes
                .insert(c.setting.clone(), c.found.clone());
        }
        let list: Vec<String> = new.iter().map(ToString::to_string).collect();
        let finding = Finding::new(
            "setup-changed",
            Severity::Warning,
            "something else changed a value the session's setup set",
            format!(
                "{} {when} measured run {} of {label}; the runs measured while it differs are \
                 marked (setup_changed)",
                list.join("; "),
                index + 1
            ),
        )
        .with_fix(
            "find what else sets it (a tuning daemon such as tuned, another benchmark, an \
             administrator) and measure again",
        );
        self.recorder
            .add_finding(self.session, &finding)
            .map_err(EngineError::record)?;
        (self.observer)(&Event::SetupChanged {
            position: i,
            label: label.to_string(),
            index,
            when: when.to_string(),
            changes: new,
        });
        Ok(changed)
    }

    /// Estimated time left: the runs each open configuration still needs at its mean run time,
    /// bounded by its time limit; configurations not started yet are estimated from the others.
    fn eta_s(&self, states: &[ConfigState]) -> f64 {
        let s = self.settings;
        let mut known = Vec::new();
        let mut unknown = 0usize;
        for state in states.iter().filter(|st| st.stop.is_none()) {
            if state.runs == 0 {
                unknown += 1;
                continue;
            }
            let remaining = state.remaining_runs(s);
            let left = f64::from(remaining) * state.elapsed.mean_run_s;
            // A configuration measures once whatever its time limit says (its warmups may
            // have spent it all): that run is still to come.
            let floor = if state.values.is_empty() {
                state.elapsed.mean_run_s
            } else {
                0.0
            };
            known.push(
                left.min((s.max_time_s - state.elapsed.total_s).max(0.0))
                    .max(floor),
            );
        }
        let finished: Vec<f64> = states
            .iter()
            .filter(|st| st.stop.is_some())
            .map(|st| st.elapsed.total_s)
            .collect();
        let typical = if finished.is_empty() {
            states
                .iter()
                .filter(|st| st.runs > 0)
                // In f64: --warmup and --min-runs may each be up to u32::MAX.
                .map(|st| st.elapsed.mean_run_s * (f64::from(s.min_runs) + f64::from(s.warmup)))
                .fold(0.0, f64::max)
        } else {
            finished.iter().sum::<f64>() / finished.len() as f64
        };
        known.iter().sum::<f64>() + unknown as f64 * typical.min(s.max_time_s)
    }

    fn finish(
        &mut self,
        states: &mut [ConfigState],
        i: usize,
        reason: StopReason,
        error: Option<String>,
    ) -> Result<(), EngineError> {
        states[i].stop = Some(reason);
        self.prepared.release(states);
        let state = &mut states[i];
        let converged = reason == StopReason::Converged;
        // The error may quote a child's or a tool's output (a user benchmark's standard error
        // with colour sequences): recorded, shown by `run` and by `show` alike, escaped.
        let error = error.map(|e| vernier_model::escape_controls(&e).into_owned());
        self.recorder
            .finish_configuration(state.record.id, reason, converged, error.as_deref())
            .map_err(EngineError::record)?;
        if let Some(e) = &error {
            self.failures.push((state.label.clone(), e.clone()));
        }
        let reachable = (reason == StopReason::Unreachable)
            .then(|| {
                state
                    .values
                    .reachable_precision(state.elapsed, self.settings)
            })
            .flatten();
        (self.observer)(&Event::ConfigurationFinished {
            position: i,
            label: state.label.clone(),
            reason,
            converged,
            reachable,
            precision: state.values.precision(self.settings),
            metric: state.record.metric.name.clone(),
            unit: state.record.metric.unit.clone(),
            error,
        });
        Ok(())
    }

    fn finish_all_interrupted(&mut self, states: &mut [ConfigState]) -> Result<(), EngineError> {
        for i in 0..states.len() {
            if states[i].stop.is_none() {
                self.finish(states, i, StopReason::Interrupted, None)?;
            }
        }
        Ok(())
    }
}

/// The record of a run in `place`, with the id its place gives (which the store need not keep).
fn run_record(
    outcome: RunOutcome,
    values: BTreeMap<String, f64>,
    place: vernier_model::RunPlace,
    round: u32,
    preceding_executions: u32,
) -> RunRecord {
    RunRecord {
        id: place.derived_id(),
        index: place.index,
        warmup: place.warmup,
        round,
        preceding_executions,
        started_at_ns: outcome.started_at_ns,
        ended_at_ns: outcome.ended_at_ns,
        values: values.into(),
        rusage: outcome.rusage,
        foreign_cpu_ns: outcome.foreign_cpu_ns,
        controller_cpu_ns: outcome.controller_cpu_ns,
        load_cpu_ns: None,
        monitors: outcome.monitors.map(Box::new),
        setup_steps: Vec::new(),
        setup_changed: Vec::new(),
        histograms: outcome.histograms,
    }
}
