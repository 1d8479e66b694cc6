//! The sampler thread: samples every monitor at the start of a run, at each monitor's
//! interval, and at the end, recording into memory allocated up front.
//!
//! What a sample allocates: nothing, once the start sample has made each series (with room
//! for [`POINTS_CAPACITY`] points) and each monitor its metric names ([`crate::MetricNames`])
//! and read buffers. A series that outgrows its room doubles it; a metric first seen mid-run
//! (a new IRQ line) makes its name and series then. `tests/sampler.rs` counts the sampler
//! thread's allocations per round with the default monitors.
//!
//! A [`MonitorSet`] keeps its thread from one run to the next: a configuration's runs are
//! sampled by one thread, woken for each run, instead of a thread created and joined in every
//! run (on a 2-vCPU KVM guest that was about a tenth of a millisecond of every run's harness
//! cost: the clone, the new stack's page faults and the exit's unmapping). The thread's
//! work for a run is the same either way, and `sampler_cpu_ns` is the CPU time of that work
//! alone.
//!
//! The thread raises itself to SCHED_FIFO priority 1 (sched(7)) so that samples are taken on
//! time even when the benchmark keeps every CPU busy; it runs for microseconds per sample, so
//! the preemption it causes is small and is measured ([`RunMonitorData::sampler_cpu_ns`]).
//! Without the privilege it falls back to nice -5, then to the default; the data records which.

use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::{self, RecvTimeoutError};
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
/// counters must exist by then), call [`RunSampler::finish`] when the run has ended.
pub struct RunSampler {
    stop: mpsc::Sender<()>,
    /// Where the run's data comes from: a thread of its own, or the kept thread of a
    /// [`MonitorSet`].
    done: Done,
    /// What the monitors of a [`MonitorSet`] are built from, to give them back to it.
    origin: Option<(Vec<MonitorSpec>, Roots)>,
    /// The kept thread, to give back to the [`MonitorSet`] when the run has ended.
    worker: Option<Worker>,
}

/// What a sampler thread returns for one run.
type RunResult = (RunMonitorData, Vec<Kept>);

/// How a [`RunSampler`] gets its run's data when the run ends.
enum Done {
    /// A thread of its own, joined.
    Thread(JoinHandle<RunResult>),
    /// The kept thread's answer: the data, or the panic message of its work.
    Kept(mpsc::Receiver<Result<RunResult, String>>),
    /// Already taken.
    Taken,
}

/// One run's sampling, as the kept thread of a [`MonitorSet`] receives it.
struct Job {
    monitors: Vec<(Kept, Duration)>,
    child_pid: i32,
    t0: Instant,
    ready: mpsc::SyncSender<()>,
    stop: mpsc::Receiver<()>,
    done: mpsc::Sender<Result<RunResult, String>>,
}

/// The thread a [`MonitorSet`] keeps for its runs; it ends when this is dropped (its job
/// channel closes).
struct Worker {
    jobs: mpsc::Sender<Job>,
}

impl Worker {
    fn spawn() -> Result<Worker, MonitorError> {
        let (jobs, receiver) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("vernier-monitor".into())
            .spawn(move || {
                for job in receiver {
                    let Job {
                        monitors,
                        child_pid,
                        t0,
                        ready,
                        stop,
                        done,
                    } = job;
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        sampler_thread(monitors, child_pid, t0, ready, stop)
                    }))
                    .map_err(|panic| panic_message(&*panic));
                    let panicked = result.is_err();
                    let _ = done.send(result);
                    if panicked {
                        // Its monitors may be left half-way: the next run gets a new thread.
                        break;
                    }
                }
            })
            .map_err(|e| MonitorError::Thread(format!("cannot spawn: {e}")))?;
        Ok(Worker { jobs })
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
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
        Self::start_set(MonitorSet::new(specs, roots), child_pid)
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
        let worker = match worker {
            Some(worker) => worker,
            None => Worker::spawn()?,
        };
        Self::launch_on(worker, monitors, child_pid, (specs, roots))
    }

    /// Starts sampling `monitors` on the kept thread `worker` (see [`MonitorSet`]); a
    /// thread that has ended (a panic in an earlier run) is replaced.
    fn launch_on(
        worker: Worker,
        monitors: Vec<(Kept, Duration)>,
        child_pid: i32,
        origin: (Vec<MonitorSpec>, Roots),
    ) -> Result<RunSampler, MonitorError> {
        let t0 = Instant::now();
        let (stop_tx, stop_rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let (done_tx, done_rx) = mpsc::channel();
        let job = Job {
            monitors,
            child_pid,
            t0,
            ready: ready_tx,
            stop: stop_rx,
            done: done_tx,
        };
        let worker = match worker.jobs.send(job) {
            Ok(()) => worker,
            Err(mpsc::SendError(job)) => {
                let worker = Worker::spawn()?;
                worker
                    .jobs
                    .send(job)
                    .map_err(|_| MonitorError::Thread("ended at once".into()))?;
                worker
            }
        };
        let mut sampler = RunSampler {
            stop: stop_tx,
            done: Done::Kept(done_rx),
            origin: Some(origin),
            worker: Some(worker),
        };
        if ready_rx.recv().is_err() {
            let (data, _) = sampler.join();
            let why = data
                .failures
                .first()
                .map_or_else(String::new, |f| f.message.clone());
            return Err(MonitorError::Thread(format!(
                "ended before the start sample: {why}"
            )));
        }
        Ok(sampler)
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
        Self::launch(monitors, child_pid, None)
    }

    fn launch(
        monitors: Vec<(Kept, Duration)>,
        child_pid: i32,
        origin: Option<(Vec<MonitorSpec>, Roots)>,
    ) -> Result<RunSampler, MonitorError> {
        let t0 = Instant::now();
        let (stop_tx, stop_rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let handle = std::thread::Builder::new()
            .name("vernier-monitor".into())
            .spawn(move || sampler_thread(monitors, child_pid, t0, ready_tx, stop_rx))
            .map_err(|e| MonitorError::Thread(format!("cannot spawn: {e}")))?;
        let mut sampler = RunSampler {
            stop: stop_tx,
            done: Done::Thread(handle),
            origin,
            worker: None,
        };
        if ready_rx.recv().is_err() {
            // The thread ended before its first sample: only a panic does that.
            let (data, _) = sampler.join();
            let why = data
                .failures
                .first()
                .map_or_else(String::new, |f| f.message.clone());
            return Err(MonitorError::Thread(format!(
                "ended before the start sample: {why}"
            )));
        }
        Ok(sampler)
    }

    /// Takes the end sample, stops the thread and returns everything recorded.
    pub fn finish(mut self) -> RunMonitorData {
        self.join().0
    }

    /// [`RunSampler::finish`], and the monitors for the configuration's next run (`None` for
    /// a sampler started with [`RunSampler::start_monitors`]).
    pub fn finish_set(mut self) -> (RunMonitorData, Option<MonitorSet>) {
        let (data, kept) = self.join();
        let worker = self.worker.take();
        let set = self.origin.take().map(|(specs, roots)| MonitorSet {
            specs,
            roots,
            kept,
            worker,
        });
        (data, set)
    }

    fn join(&mut self) -> RunResult {
        // A send error means the thread is already gone; joining tells why.
        let _ = self.stop.send(());
        let result = match std::mem::replace(&mut self.done, Done::Taken) {
            Done::Taken => return (RunMonitorData::default(), Vec::new()),
            Done::Thread(handle) => handle.join().map_err(|panic| panic_message(&*panic)),
            Done::Kept(done) => done.recv().unwrap_or_else(|_| Err("ended".into())),
        };
        result.unwrap_or_else(|message| {
            // The kept thread ended with the panic: the next run starts a new one.
            self.worker = None;
            let data = RunMonitorData {
                failures: vec![MonitorFailure {
                    monitor: "sampler".into(),
                    t_ns: 0,
                    message: format!("sampler thread panicked: {message}"),
                }],
                sampler_priority: "unknown".into(),
                ..Default::default()
            };
            (data, Vec::new())
        })
    }
}

impl Drop for RunSampler {
    /// Stops the thread when a run is abandoned without `finish` (an error in the engine).
    fn drop(&mut self) {
        if !matches!(self.done, Done::Taken) {
            self.join();
        }
    }
}

struct Series {
    series: MonitorSeries,
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
        for r in readings.drain(..) {
            let i = match self.index.get(&*r.metric) {
                Some(&i) => i,
                None => {
                    let i = self.series.len();
                    self.series.push(Series {
                        series: MonitorSeries {
                            monitor: self.monitor.name().to_string(),
                            metric: r.metric.to_string(),
                            unit: r.unit.to_string(),
                            kind: r.kind,
                            points: Vec::with_capacity(POINTS_CAPACITY),
                        },
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
            s.series.points.push(MonitorPoint {
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

fn sampler_thread(
    monitors: Vec<(Kept, Duration)>,
    child_pid: i32,
    t0: Instant,
    ready: mpsc::SyncSender<()>,
    stop: mpsc::Receiver<()>,
) -> (RunMonitorData, Vec<Kept>) {
    // The thread may have sampled earlier runs (a kept thread): this run's CPU time is what it
    // uses from here on.
    let cpu_before_ns = thread_cpu_ns();
    let sampler_priority = raise_priority();
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
            due: Instant::now(),
            active,
            failed: !active,
            series: Vec::with_capacity(64),
            index: HashMap::with_capacity(64),
        });
    }

    let mut rounds = 0u32;
    let mut sample_round = |slots: &mut [Slot], state: &mut State, all: bool| {
        let now = Instant::now();
        for slot in slots.iter_mut().filter(|s| s.active) {
            if all || slot.due <= now + COALESCE {
                state.sample(slot);
                // The next sample is one interval after this one was due; after a stall,
                // missed samples are skipped rather than taken in a burst.
                slot.due = (slot.due + slot.interval).max(now + slot.interval / 2);
            }
        }
        rounds += 1;
    };

    // Every schedule starts at the start sample, so monitors with equal intervals fall due
    // together and share one wake-up.
    let start = Instant::now();
    for slot in &mut slots {
        slot.due = start;
    }
    sample_round(&mut slots, &mut state, true);
    // The caller may release the child now; nothing to do if it stopped waiting.
    let _ = ready.send(());

    loop {
        let next = slots.iter().filter(|s| s.active).map(|s| s.due).min();
        let timeout = next.map_or(Duration::from_secs(3600), |d| {
            d.saturating_duration_since(Instant::now())
        });
        match stop.recv_timeout(timeout) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => sample_round(&mut slots, &mut state, false),
        }
    }
    sample_round(&mut slots, &mut state, true);

    let sampler_cpu_ns = thread_cpu_ns() - cpu_before_ns;
    let mut series = Vec::new();
    let mut failed = Vec::new();
    let mut kept = Vec::with_capacity(slots.len());
    for (slot, started) in slots.into_iter().zip(kept_starts) {
        let unsupported_here = matches!(started, Some(Started::Unsupported(_)));
        if slot.failed {
            failed.push(slot.monitor.name());
        }
        let changes: Vec<(&str, f64)> = slot
            .series
            .iter()
            .map(|s| {
                let first = s.series.points.first().map_or(0.0, |p| p.value);
                let last = s.series.points.last().map_or(0.0, |p| p.value);
                (s.series.metric.as_str(), last - first)
            })
            .collect();
        let keep = slot.monitor.keep(&changes);
        drop(changes);
        for (s, keep) in slot.series.into_iter().zip(keep) {
            if keep {
                series.push(s.series);
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
    let data = RunMonitorData {
        summary: summarize_series(&series, &failed),
        series,
        unsupported,
        failures: state.failures,
        sampler_priority,
        sampler_cpu_ns,
        rounds,
    };
    (data, kept)
}

/// Raises the calling thread to SCHED_FIFO 1, or nice -5; returns what it got.
fn raise_priority() -> String {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: pthread_self() is the calling thread; `param` is a valid sched_param.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if rc == 0 {
        return "fifo:1".into();
    }
    let fifo = std::io::Error::from_raw_os_error(rc);
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
            let (data, back) = sampler.finish_set();
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
        let (_, none) = RunSampler::start_monitors(Vec::new(), 0)
            .unwrap()
            .finish_set();
        assert!(none.is_none());
    }

    /// Reports the id of the thread that samples it; panics in its sample when asked to.
    struct ThreadId {
        panic: std::sync::Arc<std::sync::atomic::AtomicBool>,
    }

    impl Monitor for ThreadId {
        fn name(&self) -> &'static str {
            "tid"
        }
        fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
            Ok(())
        }
        fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
            assert!(
                !self.panic.load(std::sync::atomic::Ordering::Relaxed),
                "scripted panic"
            );
            // SAFETY: gettid has no preconditions.
            out.push(Reading::gauge(
                "tid",
                "id",
                f64::from(unsafe { libc::gettid() }),
            ));
            Ok(())
        }
        fn reusable(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_set_samples_its_runs_on_one_kept_thread_and_replaces_one_that_panicked() {
        let specs = crate::parse_monitor_list("stat").unwrap();
        let panic = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let with_monitor = || {
            let mut set = MonitorSet::new(&specs, &Roots::real());
            set.kept = vec![Kept {
                monitor: Some(Box::new(ThreadId {
                    panic: std::sync::Arc::clone(&panic),
                })),
                started: Some(Started::Working(Vec::new())),
            }];
            set
        };
        let tid = |data: &RunMonitorData| data.series[0].points[0].value;
        let mut set = with_monitor();
        let mut tids = Vec::new();
        for _ in 0..3 {
            let (data, back) = RunSampler::start_set(set, 0).unwrap().finish_set();
            assert!(data.failures.is_empty(), "{:?}", data.failures);
            // SAFETY: gettid has no preconditions.
            assert_ne!(tid(&data), f64::from(unsafe { libc::gettid() }));
            tids.push(tid(&data));
            set = back.unwrap();
        }
        assert!(tids.iter().all(|&t| t == tids[0]), "{tids:?}");

        // A panic is the run's failure; the next run of the set gets a thread of its own.
        panic.store(true, std::sync::atomic::Ordering::Relaxed);
        let e = RunSampler::start_set(set, 0).err().unwrap();
        assert!(e.to_string().contains("scripted panic"), "{e}");
        panic.store(false, std::sync::atomic::Ordering::Relaxed);
        let (data, _) = RunSampler::start_set(with_monitor(), 0)
            .unwrap()
            .finish_set();
        assert_ne!(tid(&data), tids[0]);
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
