//! The sampler: samples every monitor at the start of a run, at each monitor's interval, and
//! at the end, recording into memory allocated up front.
//!
//! What a sample allocates: nothing, once the start sample has made each series (with room
//! for [`POINTS_CAPACITY`] points) and each monitor its metric names ([`crate::MetricNames`])
//! and read buffers. A series that outgrows its room doubles it; a metric first seen mid-run
//! (a new IRQ line) makes its name and series then. `tests/sampler.rs` counts the sampler
//! thread's allocations per round with the default monitors.
//!
//! The start sample is taken in the caller's thread before [`RunSampler::start`] returns, and
//! the end sample in the caller's thread by [`RunSampler::finish`]: neither waits for another
//! thread to wake up (on a 2-vCPU KVM guest a wake-up on the other CPU takes tens of
//! microseconds, four of them per run when a thread of its own took both samples, besides
//! that thread's creation and exit). The samples between, at each monitor's interval, are
//! taken by the interval thread, which a [`MonitorSet`] keeps for its configuration's runs;
//! it is told of each run before the start sample (so that it wakes while that is taken, not
//! when the run begins) and waits for the first one due (a run shorter than every interval
//! gets none). `sampler_cpu_ns` is the CPU time of a run's
//! sampling in either thread.
//!
//! The interval thread is given SCHED_FIFO priority 1 (sched(7)) so that its samples are taken
//! on time even when the benchmark keeps every CPU busy; it runs for microseconds per sample,
//! so the preemption it causes is small and is measured ([`RunMonitorData::sampler_cpu_ns`]).
//! The thread that starts it sets the policy, so that the run need not wait for the new
//! thread to be scheduled first. Without the privilege it falls back to nice -5, then to the
//! default; the data records which. The start and end samples need no priority: the
//! benchmark does not run then.

use std::collections::{BTreeMap, HashMap};
use std::panic::AssertUnwindSafe;
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use vernier_model::monitor::{
    summarize_series, MonitorFailure, MonitorPoint, MonitorSeries, RunMonitorData,
};

use vernier_sys::Roots;

use crate::spec::{build, MonitorSpec};
use crate::{Metric, Monitor, MonitorError, Reading, SeriesKind};

/// Points reserved per series before the run: 2 minutes at the default interval.
pub const POINTS_CAPACITY: usize = 128;
/// Monitors due this close to a wake-up are sampled in it rather than in a wake-up of their
/// own.
const COALESCE: Duration = Duration::from_millis(2);
/// Readings reserved for one sample of one monitor.
const READINGS_CAPACITY: usize = 512;

/// A sampler running for one run. Create it before the child starts its work (the `perf`
/// counters must exist by then, and the start sample is taken before it returns), call
/// [`RunSampler::finish`] when the run has ended.
pub struct RunSampler {
    /// The thread that takes the interval samples, with the run's state while it lasts.
    worker: Option<Worker>,
    /// What the monitors of a [`MonitorSet`] are built from, to give them back to it; `None`
    /// for [`RunSampler::start_monitors`], whose thread ends with the run.
    origin: Option<(Vec<MonitorSpec>, Roots)>,
    /// The machine's busy ticks as the start sample read them ([`Monitor::machine_busy_ticks`]).
    busy_start_ticks: Option<u64>,
}

/// What a run's sampling gives: its data, the monitors kept for the next run and the machine's
/// busy ticks at its end sample.
type RunResult = (RunMonitorData, Vec<Kept>, Option<u64>);

/// The machine's busy CPU time in clock ticks (/proc/stat) at a run's start and end samples,
/// as the `stat` monitor read it ([`Monitor::machine_busy_ticks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusyTicks {
    pub start: u64,
    pub end: u64,
}

/// What the caller's thread and the interval thread share.
#[derive(Default)]
struct Shared {
    /// The run being sampled; `None` between runs.
    run: Option<RunState>,
    /// When the first interval sample of the run being started will be due, at the earliest:
    /// the thread is told this before the start sample and waits until then, so that it is
    /// not woken when the run begins. `None` once it has passed without a run.
    expected: Option<Instant>,
    /// What the thread is doing: a thread that waits no longer than the next run's first
    /// interval sample need not be woken for it.
    thread: ThreadState,
    /// Set when the worker is dropped: the thread ends.
    closed: bool,
    /// The panic of an interval sample, which ended the thread.
    panicked: Option<String>,
}

/// What the interval thread is doing, as it last said under the lock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum ThreadState {
    /// Running: it reads the shared state before it waits again.
    #[default]
    Awake,
    /// Waiting until then (or until woken).
    WaitsUntil(Instant),
    /// Waiting until woken.
    Waits,
}

impl ThreadState {
    /// Whether a thread in this state would sleep past `due` unless woken.
    fn sleeps_past(self, due: Instant) -> bool {
        match self {
            ThreadState::Awake => false,
            ThreadState::WaitsUntil(until) => until > due,
            ThreadState::Waits => true,
        }
    }
}

/// The thread that takes a run's interval samples (see the module documentation); a
/// [`MonitorSet`] keeps it for its configuration's runs. It ends when this is dropped.
struct Worker {
    shared: Arc<(Mutex<Shared>, Condvar)>,
    handle: Option<JoinHandle<()>>,
    /// The scheduling the thread got ([`fifo_priority`] or [`raise_priority`]).
    priority: String,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panic while sampling is caught and recorded before the lock is released.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Worker {
    fn spawn() -> Result<Worker, MonitorError> {
        use std::os::unix::thread::JoinHandleExt as _;
        let shared = Arc::new((Mutex::new(Shared::default()), Condvar::new()));
        let (priority_tx, priority_rx) = mpsc::sync_channel(1);
        let theirs = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("vernier-monitor".into())
            .spawn(move || {
                // Unless the caller has given it SCHED_FIFO already, the thread tries itself
                // and says what it got (a message nobody reads when the caller's attempt
                // succeeded after this one).
                if !has_fifo_priority() {
                    let _ = priority_tx.send(raise_priority());
                }
                interval_thread(&theirs);
            })
            .map_err(|e| MonitorError::Thread(format!("cannot spawn: {e}")))?;
        // SCHED_FIFO is set from here when this process may: the run need not wait for the
        // new thread to be scheduled (on a busy machine, behind every runnable task of the
        // default policy) before it starts; as a real-time thread it runs at once when woken.
        // Without the privilege the thread falls back to nice -5, which it sets itself (its
        // own tid), and says so.
        let priority = match fifo_priority(handle.as_pthread_t()) {
            Ok(()) => FIFO_PRIORITY.to_string(),
            Err(_) => priority_rx
                .recv()
                .map_err(|_| MonitorError::Thread("ended at its start".into()))?,
        };
        Ok(Worker {
            shared,
            handle: Some(handle),
            priority,
        })
    }

    /// Tells the thread, before a run's start sample, when the run's first interval sample
    /// will be due at the earliest. A thread that would sleep past it is woken now, while the
    /// start sample is taken; one that waits less long (for the due sample of the run before,
    /// which ended since) finds the run when it wakes. Between a configuration's back-to-back
    /// runs shorter than the interval, the thread is not woken at all.
    fn expect(&self, first_due: Instant) {
        let (mutex, wake) = &*self.shared;
        let mut shared = lock(mutex);
        shared.expected = Some(first_due);
        let sleeps_past = shared.thread.sleeps_past(first_due);
        drop(shared);
        if sleeps_past {
            wake.notify_one();
        }
    }

    /// Hands the run, its start sample taken, to the thread for its interval samples. The
    /// thread is woken only when it would sleep past the run's first due sample (it stopped
    /// waiting for the run: a start sample that took longer than an interval): the run itself
    /// begins undisturbed.
    fn give(&self, run: RunState) {
        let (mutex, wake) = &*self.shared;
        let mut shared = lock(mutex);
        let sleeps_past = run
            .next_due()
            .is_some_and(|due| shared.thread.sleeps_past(due));
        shared.run = Some(run);
        drop(shared);
        if sleeps_past {
            wake.notify_one();
        }
    }

    /// Takes the run back (after an interval sample under way), and the panic that ended the
    /// thread, if one did. The thread is not woken: waiting for the run's next interval
    /// sample, it finds no run when it wakes and then waits to be told of the next one.
    fn take(&self) -> (Option<RunState>, Option<String>) {
        let (mutex, _) = &*self.shared;
        let mut shared = lock(mutex);
        let run = shared.run.take();
        shared.expected = None;
        let panicked = shared.panicked.clone();
        (run, panicked)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let (mutex, wake) = &*self.shared;
        lock(mutex).closed = true;
        wake.notify_one();
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// The interval thread: waits for a run, then for its next due sample, until closed.
fn interval_thread(shared: &(Mutex<Shared>, Condvar)) {
    let (mutex, wake) = shared;
    let mut guard = lock(mutex);
    loop {
        if guard.closed || guard.panicked.is_some() {
            return;
        }
        let due = match guard.run.as_ref() {
            Some(run) => run.next_due(),
            None => guard.expected,
        };
        guard = match due {
            None => {
                guard.thread = ThreadState::Waits;
                let mut woken = wake.wait(guard).unwrap_or_else(|e| e.into_inner());
                woken.thread = ThreadState::Awake;
                woken
            }
            Some(due) => {
                let now = Instant::now();
                if due > now {
                    guard.thread = ThreadState::WaitsUntil(due);
                    let mut woken = wake
                        .wait_timeout(guard, due - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                    woken.thread = ThreadState::Awake;
                    woken
                } else {
                    let Some(run) = guard.run.as_mut() else {
                        // Expected and not given yet: the run wakes the thread when given.
                        guard.expected = None;
                        continue;
                    };
                    let sampled = std::panic::catch_unwind(AssertUnwindSafe(|| run.round(false)));
                    if let Err(panic) = sampled {
                        guard.panicked = Some(panic_message(&*panic));
                    }
                    guard
                }
            }
        };
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// The data of a run whose sampling panicked.
fn panicked_data(message: &str) -> RunMonitorData {
    RunMonitorData {
        failures: vec![MonitorFailure {
            monitor: "sampler".into(),
            t_ns: 0,
            message: format!("sampler thread panicked: {message}"),
        }],
        sampler_priority: "unknown".into(),
        ..Default::default()
    }
}

/// The monitors of one configuration's runs, kept from one run to the next
/// ([`RunSampler::start_set`]): a monitor that reads files ([`Monitor::reusable`]) is built
/// and started at the first run only, keeps its files open ([`crate::Reader`]) and records
/// the same parts unsupported in every run; any other monitor, and one that failed in a run,
/// is built and started afresh for the next run, as every monitor was before.
pub struct MonitorSet {
    specs: Vec<MonitorSpec>,
    roots: Roots,
    /// The monitors kept from the last run, in the order of `specs`; empty before the first.
    kept: Vec<Kept>,
    /// The thread that sampled the last run, kept for the next; `None` before the first run.
    worker: Option<Worker>,
}

/// A monitor as the last run left it.
pub struct Kept {
    monitor: Option<Box<dyn Monitor>>,
    started: Option<Started>,
}

/// How a kept monitor's start went, which holds for every later run.
#[derive(Clone)]
enum Started {
    /// It works, with these parts unsupported.
    Working(Vec<(String, String)>),
    /// The whole monitor is unsupported here, for this reason.
    Unsupported(String),
}

impl std::fmt::Debug for MonitorSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.specs.iter().map(|s| s.name.as_str()).collect();
        f.debug_struct("MonitorSet")
            .field("monitors", &names)
            .field(
                "kept",
                &self.kept.iter().filter(|k| k.monitor.is_some()).count(),
            )
            .finish()
    }
}

impl MonitorSet {
    pub fn new(specs: &[MonitorSpec], roots: &Roots) -> Self {
        MonitorSet {
            specs: specs.to_vec(),
            roots: roots.clone(),
            kept: Vec::new(),
            worker: None,
        }
    }
}

impl RunSampler {
    /// Builds the monitors of `specs` and starts sampling them for the run of `child_pid`.
    /// Returns once the start sample has been taken.
    pub fn start(
        specs: &[MonitorSpec],
        roots: &Roots,
        child_pid: i32,
    ) -> Result<RunSampler, MonitorError> {
        let mut sampler = Self::start_set(MonitorSet::new(specs, roots), child_pid)?;
        sampler.origin = None;
        Ok(sampler)
    }

    /// [`RunSampler::start`] with the monitors `set` kept from the configuration's earlier
    /// runs; [`RunSampler::finish_set`] gives them back for its next run.
    pub fn start_set(set: MonitorSet, child_pid: i32) -> Result<RunSampler, MonitorError> {
        let MonitorSet {
            specs,
            roots,
            kept,
            worker,
        } = set;
        let mut kept = kept.into_iter();
        let mut monitors = Vec::with_capacity(specs.len());
        for spec in &specs {
            let entry = match kept.next() {
                Some(Kept {
                    monitor: Some(monitor),
                    started: Some(started),
                }) => Kept {
                    monitor: Some(monitor),
                    started: Some(started),
                },
                _ => Kept {
                    monitor: Some(build(spec, &roots)?),
                    started: None,
                },
            };
            monitors.push((entry, spec.interval()));
        }
        Self::launch(worker, monitors, child_pid, Some((specs, roots)))
    }

    /// Starts sampling the given monitors, each at its interval (external or test monitors).
    pub fn start_monitors(
        monitors: Vec<(Box<dyn Monitor>, Duration)>,
        child_pid: i32,
    ) -> Result<RunSampler, MonitorError> {
        let monitors = monitors
            .into_iter()
            .map(|(monitor, interval)| {
                let kept = Kept {
                    monitor: Some(monitor),
                    started: None,
                };
                (kept, interval)
            })
            .collect();
        Self::launch(None, monitors, child_pid, None)
    }

    /// Starts the monitors and takes the start sample in the caller's thread, then hands the
    /// run to the interval thread (`worker`, or a new one).
    fn launch(
        worker: Option<Worker>,
        monitors: Vec<(Kept, Duration)>,
        child_pid: i32,
        origin: Option<(Vec<MonitorSpec>, Roots)>,
    ) -> Result<RunSampler, MonitorError> {
        let worker = match worker {
            Some(worker) => worker,
            None => Worker::spawn()?,
        };
        let t0 = Instant::now();
        if let Some(first) = monitors.iter().map(|(_, interval)| *interval).min() {
            worker.expect(t0 + first);
        }
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let cpu_before_ns = thread_cpu_ns();
            let mut run = RunState::begin(monitors, child_pid, t0);
            run.sample_round(true);
            run.cpu_ns += thread_cpu_ns() - cpu_before_ns;
            run
        }));
        let busy_start_ticks = started.as_ref().ok().and_then(RunState::machine_busy_ticks);
        let run = started.map_err(|panic| {
            MonitorError::Thread(format!(
                "ended before the start sample: sampler thread panicked: {}",
                panic_message(&*panic)
            ))
        })?;
        worker.give(run);
        Ok(RunSampler {
            worker: Some(worker),
            origin,
            busy_start_ticks,
        })
    }

    /// Takes the end sample and returns everything recorded.
    pub fn finish(mut self) -> RunMonitorData {
        self.end().0
    }

    /// The machine's busy ticks as the start sample read them, when a monitor read them
    /// (`stat`; [`Monitor::machine_busy_ticks`]).
    pub fn machine_busy_ticks(&self) -> Option<u64> {
        self.busy_start_ticks
    }

    /// [`RunSampler::finish`], the monitors for the configuration's next run (`None` for a
    /// sampler started with [`RunSampler::start_monitors`]) and the machine's busy ticks at
    /// the start and end samples, when a monitor read them at both.
    pub fn finish_set(mut self) -> (RunMonitorData, Option<MonitorSet>, Option<BusyTicks>) {
        let (data, kept, busy_end_ticks) = self.end();
        let busy = self
            .busy_start_ticks
            .zip(busy_end_ticks)
            .map(|(start, end)| BusyTicks { start, end });
        let worker = self.worker.take();
        let set = self.origin.take().map(|(specs, roots)| MonitorSet {
            specs,
            roots,
            kept,
            worker,
        });
        (data, set, busy)
    }

    /// Takes the run back from the interval thread and its end sample in the caller's thread.
    /// A thread that panicked is dropped, so that the next run gets a new one.
    fn end(&mut self) -> RunResult {
        let Some(worker) = self.worker.as_ref() else {
            return (RunMonitorData::default(), Vec::new(), None);
        };
        let priority = worker.priority.clone();
        let (run, panicked) = worker.take();
        if let Some(message) = panicked {
            self.worker = None;
            return (panicked_data(&message), Vec::new(), None);
        }
        let Some(run) = run else {
            return (RunMonitorData::default(), Vec::new(), None);
        };
        let ended = std::panic::catch_unwind(AssertUnwindSafe(move || {
            let mut run = run;
            let cpu_before_ns = thread_cpu_ns();
            run.sample_round(true);
            let busy_end_ticks = run.machine_busy_ticks();
            let (data, kept) = run.end(priority, cpu_before_ns);
            (data, kept, busy_end_ticks)
        }));
        ended.unwrap_or_else(|panic| {
            self.worker = None;
            (panicked_data(&panic_message(&*panic)), Vec::new(), None)
        })
    }
}

impl Drop for RunSampler {
    /// Stops the sampling of a run abandoned without `finish` (an error in the engine).
    fn drop(&mut self) {
        if let Some(worker) = self.worker.as_ref() {
            let _ = worker.take();
        }
    }
}

/// A series while its run lasts. Its names become the strings of a [`MonitorSeries`] at the
/// end of the run, and only if the monitor keeps it ([`Monitor::keep`]): most of the IRQ
/// lines of `interrupts` are not kept.
struct Series {
    metric: Metric,
    unit: &'static str,
    kind: SeriesKind,
    points: Vec<MonitorPoint>,
    /// First value of a counter: its points are the increase since then.
    base: f64,
}

struct Slot {
    monitor: Box<dyn Monitor>,
    interval: Duration,
    due: Instant,
    /// False when unsupported or failed: no more samples.
    active: bool,
    failed: bool,
    series: Vec<Series>,
    index: HashMap<Metric, usize>,
}

impl Slot {
    fn record(&mut self, t_ns: i64, readings: &mut Vec<Reading>) {
        for (position, r) in readings.drain(..).enumerate() {
            // A monitor gives its metrics in the same order at every sample, from its shared
            // names ([`crate::MetricNames`]): the series at the reading's position is almost
            // always its own, found without hashing the name.
            let guess = self
                .series
                .get(position)
                .filter(|s| Arc::ptr_eq(&s.metric, &r.metric) || *s.metric == *r.metric)
                .map(|_| position);
            let i = match guess.or_else(|| self.index.get(&*r.metric).copied()) {
                Some(i) => i,
                None => {
                    let i = self.series.len();
                    self.series.push(Series {
                        metric: Arc::clone(&r.metric),
                        unit: r.unit,
                        kind: r.kind,
                        points: Vec::with_capacity(POINTS_CAPACITY),
                        base: if r.kind == SeriesKind::Counter {
                            r.value
                        } else {
                            0.0
                        },
                    });
                    self.index.insert(r.metric, i);
                    i
                }
            };
            let s = &mut self.series[i];
            s.points.push(MonitorPoint {
                t_ns,
                value: r.value - s.base,
            });
        }
    }
}

struct State {
    t0: Instant,
    readings: Vec<Reading>,
    failures: Vec<MonitorFailure>,
}

impl State {
    fn t_ns(&self) -> i64 {
        i64::try_from(self.t0.elapsed().as_nanos()).unwrap_or(i64::MAX)
    }

    fn sample(&mut self, slot: &mut Slot) {
        self.readings.clear();
        let t_ns = self.t_ns();
        match slot.monitor.sample(&mut self.readings) {
            Ok(()) => slot.record(t_ns, &mut self.readings),
            Err(e) => {
                // A partial sample is dropped; the monitor stops, the others go on.
                self.failures.push(MonitorFailure {
                    monitor: slot.monitor.name().to_string(),
                    t_ns,
                    message: e.to_string(),
                });
                slot.active = false;
                slot.failed = true;
            }
        }
    }
}

/// One run's sampling: its monitors and what their samples recorded, sampled by the caller's
/// thread at the start and the end and by the interval thread between.
struct RunState {
    slots: Vec<Slot>,
    state: State,
    unsupported: BTreeMap<String, String>,
    /// How each monitor's start went, to keep for the next run.
    kept_starts: Vec<Option<Started>>,
    rounds: u32,
    /// CPU time of the sampling so far, in whichever thread it ran.
    cpu_ns: i64,
}

impl RunState {
    /// Starts the monitors not kept from an earlier run. Its CPU time is the caller's to count,
    /// with the start round's: the thread's CPU clock is a system call.
    fn begin(monitors: Vec<(Kept, Duration)>, child_pid: i32, t0: Instant) -> RunState {
        let mut state = State {
            t0,
            readings: Vec::with_capacity(READINGS_CAPACITY),
            failures: Vec::new(),
        };
        let mut unsupported = BTreeMap::new();
        let mut slots: Vec<Slot> = Vec::with_capacity(monitors.len());
        let mut kept_starts: Vec<Option<Started>> = Vec::with_capacity(monitors.len());
        for (kept, interval) in monitors {
            let Some(mut monitor) = kept.monitor else {
                continue;
            };
            let name = monitor.name();
            // A kept monitor's start holds for this run too (see [`MonitorSet`]).
            let started = match kept.started {
                Some(started) => Ok(started),
                None => match monitor.start(child_pid) {
                    Ok(()) => Ok(Started::Working(monitor.unsupported())),
                    Err(e) if e.is_unsupported() => Ok(Started::Unsupported(e.reason())),
                    Err(e) => Err(e),
                },
            };
            let active = match &started {
                Ok(Started::Working(parts)) => {
                    for (metric, why) in parts {
                        unsupported.insert(format!("{name}.{metric}"), why.clone());
                    }
                    true
                }
                Ok(Started::Unsupported(why)) => {
                    unsupported.insert(name.to_string(), why.clone());
                    false
                }
                Err(e) => {
                    state.failures.push(MonitorFailure {
                        monitor: name.to_string(),
                        t_ns: state.t_ns(),
                        message: e.to_string(),
                    });
                    false
                }
            };
            kept_starts.push(started.ok());
            slots.push(Slot {
                monitor,
                interval,
                due: t0,
                active,
                failed: !active,
                series: Vec::with_capacity(64),
                index: HashMap::with_capacity(64),
            });
        }
        RunState {
            slots,
            state,
            unsupported,
            kept_starts,
            rounds: 0,
            cpu_ns: 0,
        }
    }

    /// An interval round ([`RunState::sample_round`]), its CPU time counted.
    fn round(&mut self, all: bool) {
        let cpu_before_ns = thread_cpu_ns();
        self.sample_round(all);
        self.cpu_ns += thread_cpu_ns() - cpu_before_ns;
    }

    /// Samples the monitors that are due (or, with `all`, every active one). The start round
    /// sets every schedule, so that monitors with equal intervals fall due together and share
    /// one wake-up; after a stall, missed samples are skipped rather than taken in a burst.
    /// The start and end rounds' CPU time is counted by their caller, with the work around
    /// them.
    fn sample_round(&mut self, all: bool) {
        let now = Instant::now();
        if self.rounds == 0 {
            for slot in &mut self.slots {
                slot.due = now;
            }
        }
        for slot in self.slots.iter_mut().filter(|s| s.active) {
            if all || slot.due <= now + COALESCE {
                self.state.sample(slot);
                slot.due = (slot.due + slot.interval).max(now + slot.interval / 2);
            }
        }
        self.rounds += 1;
    }

    /// The machine's busy ticks as the last round read them: from a monitor that read them
    /// ([`Monitor::machine_busy_ticks`]) and is still active, so that its last sample, the
    /// round's, succeeded.
    fn machine_busy_ticks(&self) -> Option<u64> {
        self.slots
            .iter()
            .filter(|s| s.active)
            .find_map(|s| s.monitor.machine_busy_ticks())
    }

    /// When the next interval sample is due; `None` when no monitor is active.
    fn next_due(&self) -> Option<Instant> {
        self.slots.iter().filter(|s| s.active).map(|s| s.due).min()
    }

    /// The run's data, and its monitors as the next run may keep them; the CPU time of the
    /// sampling counts this thread's since `cpu_before_ns` (before the end round).
    fn end(self, sampler_priority: String, cpu_before_ns: i64) -> (RunMonitorData, Vec<Kept>) {
        let RunState {
            slots,
            state,
            mut unsupported,
            kept_starts,
            rounds,
            cpu_ns,
        } = self;
        // From the start sample to the end sample: the run as its monitors saw it.
        let span = state.t0.elapsed();
        let mut series = Vec::new();
        let mut failed = Vec::new();
        let mut kept = Vec::with_capacity(slots.len());
        for (slot, started) in slots.into_iter().zip(kept_starts) {
            let min_run = slot.monitor.min_run();
            if slot.active && span < min_run {
                // Too short a run for this monitor: its series are dropped, and the
                // configuration's later runs do not sample it, as if it were unsupported.
                let why = format!(
                    "not sampled in runs shorter than {} (its min-run; this configuration's \
                     run: {}); {}:min-run=0 samples every run",
                    milliseconds(min_run),
                    milliseconds(span),
                    slot.monitor.name()
                );
                unsupported.insert(slot.monitor.name().to_string(), why.clone());
                kept.push(Kept {
                    monitor: Some(slot.monitor),
                    started: Some(Started::Unsupported(why)),
                });
                continue;
            }
            let unsupported_here = matches!(started, Some(Started::Unsupported(_)));
            if slot.failed {
                failed.push(slot.monitor.name());
            }
            let changes: Vec<(&str, f64)> = slot
                .series
                .iter()
                .map(|s| {
                    let first = s.points.first().map_or(0.0, |p| p.value);
                    let last = s.points.last().map_or(0.0, |p| p.value);
                    (&*s.metric, last - first)
                })
                .collect();
            let keep = slot.monitor.keep(&changes);
            drop(changes);
            let monitor = slot.monitor.name();
            for (s, keep) in slot.series.into_iter().zip(keep) {
                if keep {
                    series.push(MonitorSeries {
                        monitor: monitor.to_string(),
                        metric: s.metric.to_string(),
                        unit: s.unit.to_string(),
                        kind: s.kind,
                        points: s.points,
                    });
                }
            }
            // Kept for the next run when it can be and neither its start nor a sample failed.
            let reusable = slot.monitor.reusable() && (unsupported_here || !slot.failed);
            kept.push(if reusable {
                Kept {
                    monitor: Some(slot.monitor),
                    started,
                }
            } else {
                Kept {
                    monitor: None,
                    started: None,
                }
            });
        }
        let summary = summarize_series(&series, &failed);
        let data = RunMonitorData {
            summary,
            series,
            unsupported,
            failures: state.failures,
            sampler_priority,
            sampler_cpu_ns: cpu_ns + thread_cpu_ns() - cpu_before_ns,
            rounds,
        };
        (data, kept)
    }
}

/// `d` in milliseconds for a message: "10 ms", "0.84 ms".
fn milliseconds(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// What is recorded when the thread got SCHED_FIFO priority 1.
const FIFO_PRIORITY: &str = "fifo:1";

/// Gives `thread` SCHED_FIFO priority 1 (pthread_setschedparam(3)).
fn fifo_priority(thread: libc::pthread_t) -> Result<(), std::io::Error> {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: `thread` is a live thread of this process; `param` is a valid sched_param.
    match unsafe { libc::pthread_setschedparam(thread, libc::SCHED_FIFO, &param) } {
        0 => Ok(()),
        rc => Err(std::io::Error::from_raw_os_error(rc)),
    }
}

/// Whether the calling thread runs under SCHED_FIFO (sched_getscheduler(2)).
fn has_fifo_priority() -> bool {
    // SAFETY: sched_getscheduler(0) only reads the calling thread's policy.
    unsafe { libc::sched_getscheduler(0) == libc::SCHED_FIFO }
}

/// Raises the calling thread to SCHED_FIFO 1, or nice -5; returns what it got.
fn raise_priority() -> String {
    // SAFETY: pthread_self() is the calling thread.
    let fifo = match fifo_priority(unsafe { libc::pthread_self() }) {
        Ok(()) => return FIFO_PRIORITY.into(),
        Err(e) => e,
    };
    // On Linux the nice value is per thread: PRIO_PROCESS with a tid changes only that thread
    // (setpriority(2), BUGS).
    // SAFETY: gettid and setpriority have no memory preconditions.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, -5) };
    if rc == 0 {
        return "nice:-5".into();
    }
    let nice = std::io::Error::last_os_error();
    format!("default (SCHED_FIFO: {fifo}; nice -5: {nice})")
}

/// CPU time of the calling thread in ns (clock_gettime(CLOCK_THREAD_CPUTIME_ID)). Unlike
/// getrusage(RUSAGE_THREAD), which reports the runtime as of the last tick or context switch,
/// this clock includes the time since (clock_gettime(2)), so short stretches measure right.
pub fn thread_cpu_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Counts up by one per sample; fails at sample `fail_at` if set.
    struct Scripted {
        name: &'static str,
        n: u32,
        fail_at: Option<u32>,
        start_error: Option<fn() -> MonitorError>,
    }

    impl Monitor for Scripted {
        fn name(&self) -> &'static str {
            self.name
        }
        fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
            self.start_error.map_or(Ok(()), |f| Err(f()))
        }
        fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
            if Some(self.n) == self.fail_at {
                out.push(Reading::counter("partial", "count", 1.0));
                return Err(MonitorError::Thread("scripted failure".into()));
            }
            self.n += 1;
            out.push(Reading::counter("n", "count", 100.0 + self.n as f64));
            out.push(Reading::gauge("level", "count", 2.0));
            Ok(())
        }
    }

    fn scripted(name: &'static str) -> Scripted {
        Scripted {
            name,
            n: 0,
            fail_at: None,
            start_error: None,
        }
    }

    #[test]
    fn start_and_end_samples_for_a_short_run() {
        let s =
            RunSampler::start_monitors(vec![(Box::new(scripted("a")), Duration::from_secs(60))], 0)
                .unwrap();
        let data = s.finish();
        let n = data.find("a", "n").unwrap();
        assert_eq!(n.points.len(), 2);
        assert_eq!(n.points[0].value, 0.0);
        assert_eq!(n.points[1].value, 1.0);
        assert!(n.points[1].t_ns >= n.points[0].t_ns);
        assert_eq!(data.summary["a.n"], 1.0);
        assert_eq!(data.summary["a.level"], 2.0);
        assert_eq!(data.rounds, 2);
        assert!(data.failures.is_empty());
        assert!(!data.sampler_priority.is_empty());
    }

    #[test]
    fn unsupported_and_failing_monitors_do_not_stop_the_others() {
        let failing = Scripted {
            fail_at: Some(1),
            ..scripted("bad")
        };
        let absent = Scripted {
            start_error: Some(|| MonitorError::Unsupported {
                what: "not here".into(),
            }),
            ..scripted("absent")
        };
        let broken = Scripted {
            start_error: Some(|| MonitorError::Thread("cannot start".into())),
            ..scripted("broken")
        };
        let s = RunSampler::start_monitors(
            vec![
                (Box::new(failing), Duration::from_secs(60)),
                (Box::new(absent), Duration::from_secs(60)),
                (Box::new(broken), Duration::from_secs(60)),
                (Box::new(scripted("good")), Duration::from_secs(60)),
            ],
            0,
        )
        .unwrap();
        let data = s.finish();
        assert_eq!(data.find("good", "n").unwrap().points.len(), 2);
        // The failing monitor has its start sample, no partial one, and no summary.
        assert_eq!(data.find("bad", "n").unwrap().points.len(), 1);
        assert!(data.find("bad", "partial").is_none());
        assert!(!data.summary.contains_key("bad.n"));
        assert_eq!(data.summary["good.n"], 1.0);
        assert_eq!(data.unsupported["absent"], "not here");
        let failed: Vec<&str> = data.failures.iter().map(|f| f.monitor.as_str()).collect();
        assert_eq!(failed, ["broken", "bad"]);
        assert!(data.failures[1].message.contains("scripted failure"));
    }

    /// Reports its third sample on a channel, so a test can wait for interval sampling
    /// without timing anything.
    struct Signalling {
        n: u32,
        tx: mpsc::Sender<()>,
    }

    impl Monitor for Signalling {
        fn name(&self) -> &'static str {
            "sig"
        }
        fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
            Ok(())
        }
        fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
            self.n += 1;
            if self.n == 3 {
                let _ = self.tx.send(());
            }
            out.push(Reading::gauge("n", "count", self.n as f64));
            Ok(())
        }
    }

    #[test]
    fn samples_at_the_interval_between_start_and_end() {
        let (tx, rx) = mpsc::channel();
        let s = RunSampler::start_monitors(
            vec![
                (Box::new(Signalling { n: 0, tx }), Duration::from_millis(10)),
                (Box::new(scripted("slow")), Duration::from_secs(3600)),
            ],
            0,
        )
        .unwrap();
        rx.recv().unwrap();
        let data = s.finish();
        let n = data.find("sig", "n").unwrap();
        assert!(n.points.len() >= 4, "{} points", n.points.len());
        assert!(n.points.windows(2).all(|w| w[1].t_ns >= w[0].t_ns));
        // The slow monitor was only sampled at the start and the end.
        assert_eq!(data.find("slow", "n").unwrap().points.len(), 2);
        assert!(data.rounds as usize >= n.points.len());
    }

    #[test]
    fn a_set_keeps_its_file_monitors_from_run_to_run_with_the_same_record() {
        let specs = crate::parse_monitor_list("stat,meminfo,schedstat,pressure,perf").unwrap();
        let roots = Roots::real();
        let pid = std::process::id() as i32;
        let mut set = MonitorSet::new(&specs, &roots);
        let mut runs = Vec::new();
        for _ in 0..3 {
            let sampler = RunSampler::start_set(set, pid).unwrap();
            let start = sampler.machine_busy_ticks();
            let (data, back, busy) = sampler.finish_set();
            // stat read the machine's busy ticks at the start and the end sample, which only
            // grow.
            let busy = busy.unwrap();
            assert_eq!(Some(busy.start), start);
            assert!(busy.end >= busy.start, "{busy:?}");
            set = back.unwrap();
            runs.push(data);
        }
        // stat, meminfo, schedstat and pressure are kept (working or unsupported here); perf,
        // whose counters belong to the run, is built anew each time.
        let kept: Vec<&str> = set
            .kept
            .iter()
            .filter_map(|k| k.monitor.as_ref().map(|m| m.name()))
            .collect();
        assert_eq!(kept, ["stat", "meminfo", "schedstat", "pressure"]);
        let keys = |d: &RunMonitorData| d.summary.keys().cloned().collect::<Vec<_>>();
        for later in &runs[1..] {
            assert_eq!(keys(later), keys(&runs[0]));
            assert_eq!(later.unsupported, runs[0].unsupported);
            assert_eq!(later.failures.len(), runs[0].failures.len());
            assert_eq!(later.series.len(), runs[0].series.len());
        }
        assert!(
            runs[2].summary.contains_key("stat.ctxt"),
            "{:?}",
            runs[2].summary
        );
        // A sampler started without a set gives nothing back.
        let (_, none, busy) = RunSampler::start_monitors(Vec::new(), 0)
            .unwrap()
            .finish_set();
        assert!(none.is_none());
        assert!(busy.is_none());
    }

    /// Reports the id of the thread that samples it; says on `interval` when another thread
    /// than the test's sampled it; panics in such a sample when asked to.
    struct ThreadId {
        test_thread: i32,
        interval: mpsc::Sender<()>,
        panic: Arc<std::sync::atomic::AtomicBool>,
    }

    fn gettid() -> i32 {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() }
    }

    impl Monitor for ThreadId {
        fn name(&self) -> &'static str {
            "tid"
        }
        fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
            Ok(())
        }
        fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
            let tid = gettid();
            if tid != self.test_thread {
                assert!(
                    !self.panic.load(std::sync::atomic::Ordering::Relaxed),
                    "scripted panic"
                );
                let _ = self.interval.send(());
            }
            out.push(Reading::gauge("tid", "id", f64::from(tid)));
            Ok(())
        }
        fn reusable(&self) -> bool {
            true
        }
    }

    #[test]
    fn back_to_back_runs_shorter_than_the_interval_do_not_wake_the_interval_thread() {
        let specs = crate::parse_monitor_list("stat:interval=3600").unwrap();
        let thread_state = |set: &MonitorSet| {
            set.worker
                .as_ref()
                .map(|w| lock(&w.shared.0).thread)
                .unwrap()
        };
        let (_, first, _) = RunSampler::start_set(MonitorSet::new(&specs, &Roots::real()), 0)
            .unwrap()
            .finish_set();
        let mut set = first.unwrap();
        // The thread, woken for the first run, goes back to wait for its due sample.
        let given_up = Instant::now() + Duration::from_secs(10);
        let waits = loop {
            match thread_state(&set) {
                ThreadState::WaitsUntil(until) => break until,
                other if Instant::now() > given_up => panic!("the thread is {other:?}"),
                _ => std::thread::yield_now(),
            }
        };
        for _ in 0..5 {
            let (data, back, _) = RunSampler::start_set(set, 0).unwrap().finish_set();
            assert_eq!(data.rounds, 2);
            set = back.unwrap();
        }
        // Still in the same wait: none of the five runs woke it.
        assert_eq!(thread_state(&set), ThreadState::WaitsUntil(waits));
    }

    #[test]
    fn start_and_end_samples_in_the_callers_thread_interval_samples_on_one_kept_thread() {
        // One monitor sampled every 10 ms, whose kept instance is the test's.
        let specs = crate::parse_monitor_list("stat:interval=0.01").unwrap();
        let (interval_tx, interval_rx) = mpsc::channel();
        let panic = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let with_monitor = || {
            let mut set = MonitorSet::new(&specs, &Roots::real());
            set.kept = vec![Kept {
                monitor: Some(Box::new(ThreadId {
                    test_thread: gettid(),
                    interval: interval_tx.clone(),
                    panic: Arc::clone(&panic),
                })),
                started: Some(Started::Working(Vec::new())),
            }];
            set
        };
        let tids = |data: &RunMonitorData| -> Vec<i32> {
            data.series[0]
                .points
                .iter()
                .map(|p| p.value as i32)
                .collect()
        };
        let me = gettid();
        let mut set = with_monitor();
        let mut interval_threads = Vec::new();
        for _ in 0..3 {
            let sampler = RunSampler::start_set(set, 0).unwrap();
            // Wait for an interval sample, then end the run.
            interval_rx.recv().unwrap();
            let (data, back, _) = sampler.finish_set();
            assert!(data.failures.is_empty(), "{:?}", data.failures);
            let tids = tids(&data);
            assert!(tids.len() >= 3, "{tids:?}");
            assert_eq!((tids[0], tids[tids.len() - 1]), (me, me), "{tids:?}");
            assert!(tids[1..tids.len() - 1].iter().all(|&t| t != me), "{tids:?}");
            interval_threads.push(tids[1]);
            set = back.unwrap();
        }
        assert!(
            interval_threads.iter().all(|&t| t == interval_threads[0]),
            "{interval_threads:?}"
        );
        // A run ended before any interval fell due has its two samples, both the caller's.
        let specs_slow = crate::parse_monitor_list("stat:interval=3600").unwrap();
        let mut slow = MonitorSet::new(&specs_slow, &Roots::real());
        slow.kept = with_monitor().kept;
        let (data, _, _) = RunSampler::start_set(slow, 0).unwrap().finish_set();
        assert_eq!(tids(&data), [me, me]);
        assert_eq!(data.rounds, 2);

        // A panic in an interval sample is the run's failure; the next run of the set gets a
        // thread of its own.
        panic.store(true, std::sync::atomic::Ordering::Relaxed);
        let sampler = RunSampler::start_set(set, 0).unwrap();
        let panicked = |s: &RunSampler| {
            s.worker
                .as_ref()
                .is_some_and(|w| lock(&w.shared.0).panicked.is_some())
        };
        while !panicked(&sampler) {
            std::thread::yield_now();
        }
        let (data, back, _) = sampler.finish_set();
        assert!(
            data.failures[0].message.contains("scripted panic"),
            "{:?}",
            data.failures
        );
        assert!(back.unwrap().worker.is_none());
        panic.store(false, std::sync::atomic::Ordering::Relaxed);
        let sampler = RunSampler::start_set(with_monitor(), 0).unwrap();
        interval_rx.recv().unwrap();
        let (data, _, _) = sampler.finish_set();
        assert!(data.failures.is_empty(), "{:?}", data.failures);
        assert!(!tids(&data).contains(&interval_threads[0]));
    }

    /// Takes `first` long over its first sample (the start sample), then says on `later` that
    /// it was sampled again.
    struct SlowStart {
        first: Duration,
        n: u32,
        later: mpsc::Sender<()>,
    }

    impl Monitor for SlowStart {
        fn name(&self) -> &'static str {
            "slow-start"
        }
        fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
            Ok(())
        }
        fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
            self.n += 1;
            if self.n == 1 {
                std::thread::sleep(self.first);
            } else {
                let _ = self.later.send(());
            }
            out.push(Reading::gauge("n", "count", f64::from(self.n)));
            Ok(())
        }
    }

    #[test]
    fn a_start_sample_longer_than_the_interval_still_gets_interval_samples() {
        // The interval thread stops waiting for the run when its first interval could have
        // fallen due; the run, handed over later, wakes it.
        let (tx, rx) = mpsc::channel();
        let monitor = SlowStart {
            first: Duration::from_millis(50),
            n: 0,
            later: tx,
        };
        let s = RunSampler::start_monitors(vec![(Box::new(monitor), Duration::from_millis(10))], 0)
            .unwrap();
        rx.recv_timeout(Duration::from_secs(60))
            .expect("no interval sample after a slow start sample");
        let data = s.finish();
        assert!(data.find("slow-start", "n").unwrap().points.len() >= 3);
    }

    #[test]
    fn drop_without_finish_stops_the_thread() {
        let s =
            RunSampler::start_monitors(vec![(Box::new(scripted("a")), Duration::from_secs(60))], 0)
                .unwrap();
        drop(s);
    }

    #[test]
    fn thread_cpu_time_is_counted() {
        let before = thread_cpu_ns();
        let mut x = 0u64;
        while thread_cpu_ns() == before {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(thread_cpu_ns() > before);
    }
}
