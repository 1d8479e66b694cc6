//! `latency`: timer wake-up latency with cyclictest's semantics (rt-tests
//! src/cyclictest/cyclictest.c, `timerthread()`; RESEARCH.md 1.1), so that its numbers mean
//! what the real-time field's numbers mean.
//!
//! One measurement thread per selected CPU, pinned to it, at SCHED_FIFO priority 99 by default
//! (`policy`, `priority`), with the process's memory locked (mlockall MCL_CURRENT|MCL_FUTURE,
//! cyclictest `-m`) after every recording is allocated, and a PM QoS request of 0 us held on
//! /dev/cpu_dma_latency during the run where the file exists (cyclictest's default
//! `--latency=0`). Each thread reads CLOCK_MONOTONIC, sets `next = now + interval`, and then
//! loops: sleep with `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next)`, read the clock,
//! record `now - next` (the time from the programmed expiry to the thread running in user
//! space again: timer interrupt, wake-up and scheduling latency, and the return from the
//! sleep), advance `next` by one interval and past every period already gone
//! ([`advance`]), until `duration` has passed. cyclictest records whole microseconds,
//! truncated, and drops the skipped periods silently; vernier records nanoseconds and counts
//! the skipped periods (`missed`). Like cyclictest with `-h`, every thread has the same interval
//! (no `--distance`) and starts its first period on its own after a common start line (no
//! `-A` alignment). With `policy=other` the kernel's timer slack (50 us by default for normal
//! tasks, prctl(2) PR_SET_TIMERSLACK) delays the wake-ups, as it does for cyclictest.
//!
//! The loop records into preallocated memory only ([`vernier_model::Recording`]): no
//! allocation, lock, log or system call other than the sleep and the clock (a vDSO call).
//!
//! Without the privileges of a real-time policy or of locking memory, the machine check
//! refuses the configuration before anything starts and names `policy=other`; with
//! `policy=other` a failed mlockall or PM QoS request is tolerated, and each run records its
//! conditions among its values: `memory_locked` and `dma_latency_held`, 1 or 0.

use vernier_model::histogram::{
    latency_metrics, latency_values, DMA_LATENCY_HELD, LATENCY, MEMORY_LOCKED,
};
use vernier_model::options::ALL_CPUS;
use vernier_model::{
    BenchmarkInfo, OptionDefault, OptionKind, OptionSpec, OptionValue, Options, Recording,
};
use vernier_sys::affinity::CpuSet;
use vernier_sys::clock::monotonic_ns;
use vernier_sys::sched::{set_thread_policy, Policy};
use vernier_sys::MachineLimits;

use crate::opts::{choice, choice_spec, float, uint, uint_spec};
use crate::workers::{start_threads, Gate, WorkerThread};
use crate::{BenchError, Benchmark, Measurement, RunContext};

pub(crate) const POLICIES: &[&str] = &["fifo", "rr", "other"];
const ON_OFF: &[&str] = &["on", "off"];

/// Stack of a measurement thread: the loop needs little, and with MCL_FUTURE every byte of
/// it is faulted in and locked when the thread starts.
const STACK_BYTES: usize = 256 * 1024;

const NS_PER_S: u64 = 1_000_000_000;

/// The longest warmup run: a warmup pages in and locks the memory, starts the threads under
/// their policy and wakes the CPUs from deep idle; what it measures is discarded. A run of
/// `duration=60` as its own warmup doubled the session's time for nothing; the default
/// duration (5 s) is the bound, so a default run's warmup is unchanged.
pub const WARMUP_MAX_NS: u64 = 5 * NS_PER_S;

/// The settings a run measures with: a warmup's duration bounded by [`WARMUP_MAX_NS`].
fn for_run(mut settings: Settings, ctx: &RunContext) -> Settings {
    if ctx.warmup {
        settings.duration_ns = settings.duration_ns.min(WARMUP_MAX_NS);
    }
    settings
}

pub struct Latency;

impl Benchmark for Latency {
    fn info(&self) -> BenchmarkInfo {
        let (metric, secondary_metrics) = latency_metrics();
        BenchmarkInfo::new(
            "latency",
            "1",
            "timer wake-up latency per CPU with cyclictest's semantics \
                          (clock_nanosleep to an absolute time, SCHED_FIFO, mlockall)",
            metric,
        )
        .with_secondary_metrics(secondary_metrics)
        .with_options(options().into_iter().chain([trace_option()]).collect())
    }

    /// A thread per CPU besides the run's process, a recording per thread, CPUs the run may
    /// use, and for `fifo` and `rr` the privileges of a real-time priority and of mlockall.
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let info = self.info();
        let settings = Settings::read(&info, options)?;
        let threads = settings.threads_on(limits)?;
        limits.check_tasks(threads + 1)?;
        limits.check_memory(threads.saturating_mul(Recording::new().memory_bytes()))?;
        if settings.policy.is_real_time() {
            let name = POLICIES[choice(&info, options, "policy")?];
            limits
                .check_rt_priority(settings.priority as u64)
                .and_then(|()| limits.check_memlock())
                .map_err(|e| {
                    BenchError::NotPermitted(format!(
                        "policy={name}: {e}; policy=other measures without these privileges \
                         and records that"
                    ))
                })?;
        }
        Ok(())
    }

    /// What the CPU was doing explains a spike: its softirqs by kind and its idle states
    /// (entries and residency; a deep state's exit latency adds to the wake-up).
    fn explaining_monitors(&self) -> &'static [&'static str] {
        &["softirqs", "cpuidle"]
    }

    fn run(&self, options: &Options, ctx: &RunContext) -> Result<Measurement, BenchError> {
        let settings = for_run(Settings::read(&self.info(), options)?, ctx);
        let cpus = settings.run_cpus()?;
        // Everything the loops write is allocated before the memory is locked, so that locking
        // faults it in and no sample waits for a page fault.
        let mut recordings: Vec<Recording> = cpus.iter().map(|_| Recording::new()).collect();
        let locked = match vernier_sys::memlock::lock_all() {
            Ok(()) => true,
            Err(e) if settings.policy.is_real_time() => return Err(e.into()),
            Err(_) => false,
        };
        let held = settings
            .dma_latency
            .then(|| {
                vernier_sys::pmqos::hold_cpu_latency(
                    std::path::Path::new(vernier_sys::pmqos::CPU_DMA_LATENCY),
                    0,
                )
                .ok()
            })
            .flatten();
        // Armed last, so that the buffer holds the run's events, not its preparation's.
        let trace = match (settings.trace_ns, &ctx.trace_instance) {
            (Some(_), _) if ctx.warmup => None,
            (Some(threshold_ns), Some(dir)) => Some(ArmedTrace::arm(dir, threshold_ns)?),
            (Some(_), None) => {
                return Err(BenchError::NotPermitted(
                    "trace=: the run has no ftrace instance (the session sets one up when \
                     tracefs is there and vernier runs as root)"
                        .into(),
                ))
            }
            (None, _) => None,
        };
        let outcome = measure_on(&cpus, &mut recordings, &settings, trace.as_ref());
        if let Some(t) = &trace {
            t.stop();
        }
        let dma_latency_held = held.is_some();
        drop(held);
        if locked {
            vernier_sys::memlock::unlock_all();
        }
        outcome?;
        let mut histograms: Vec<_> = recordings
            .iter()
            .zip(&cpus)
            .enumerate()
            .map(|(thread, (r, &cpu))| r.finish(LATENCY, thread as u32, Some(cpu as u32)))
            .collect();
        if let Some((thread, traced)) = trace.and_then(|t| t.collect(&cpus)) {
            histograms[thread].trace = Some(Box::new(traced));
        }
        let mut values = latency_values(&histograms).map_err(BenchError::Worker)?;
        values.insert(MEMORY_LOCKED.into(), f64::from(u8::from(locked)));
        values.insert(
            DMA_LATENCY_HELD.into(),
            f64::from(u8::from(dma_latency_held)),
        );
        Ok(Measurement { values, histograms })
    }
}

/// The options of a timer latency measurement, which the `cyclictest` benchmark shares.
pub(crate) fn options() -> Vec<OptionSpec> {
    vec![
        OptionSpec::new(
            "interval",
            OptionKind::Micros {
                min: 1,
                max: 1_000_000,
            },
            OptionDefault::Value(OptionValue::UInt(200)),
        )
        .unit("us")
        .help(
            "period of every measurement thread (cyclictest -i; 200 us as \
                   the OSADL QA Farm)",
        ),
        OptionSpec::new(
            "duration",
            OptionKind::Float {
                min: 0.01,
                max: 86_400.0,
            },
            OptionDefault::Value(OptionValue::Float(5.0)),
        )
        .unit("s")
        .help("how long each run measures (cyclictest -D)"),
        OptionSpec::new(
            "cpus",
            OptionKind::CpuList,
            OptionDefault::Value(OptionValue::Text(ALL_CPUS.into())),
        )
        .help(
            "one measurement thread pinned to each of these CPUs; all: every CPU \
                   the run may use (cyclictest -a -t)",
        ),
        uint_spec(
            "priority",
            99,
            1,
            99,
            "",
            "real-time priority of the threads with policy fifo or rr (cyclictest -p)",
        ),
        choice_spec(
            "policy",
            POLICIES,
            "scheduling policy of the threads: SCHED_FIFO, SCHED_RR, or SCHED_OTHER \
             (needs no privilege)",
        ),
        choice_spec(
            "dma_latency",
            ON_OFF,
            "hold /dev/cpu_dma_latency at 0 us during the run, where it exists",
        ),
    ]
}

/// `trace=US`: trace the kernel's events on the measured CPUs and keep them for the first
/// sample above US of every run (cyclictest's `-b US --tracemark`, without ending the
/// measurement). Only `latency` has it: cyclictest's `-b` stops its measurement at the first
/// such sample and writes to the top-level trace, not to the session's instance.
fn trace_option() -> OptionSpec {
    OptionSpec::new(
        "trace",
        OptionKind::Micros {
            min: 1,
            max: 1_000_000,
        },
        OptionDefault::Unset("off".into()),
    )
    .unit("us")
    .help(
        "trace the measured CPUs (ftrace: sched, irq, softirq, timer events) and keep the \
         milliseconds before the first sample above this of every run (root; docs/why.md)",
    )
}

/// The CPUs a configuration traces (`trace=US` set): those of `cpus`, `None` for every CPU
/// the run may use; the outer `None` when it does not trace.
pub fn traced_cpus(options: &Options) -> Option<Option<Vec<usize>>> {
    options.get("trace")?;
    Some(match options.text("cpus") {
        ALL_CPUS => None,
        text => vernier_sys::cpulist::parse_cpu_list(text).ok(),
    })
}

/// A run's options, read and checked.
pub(crate) struct Settings {
    pub(crate) interval_ns: u64,
    pub(crate) duration_ns: u64,
    /// `None` for every CPU the run may use.
    pub(crate) cpus: Option<Vec<usize>>,
    pub(crate) priority: i32,
    pub(crate) policy: Policy,
    pub(crate) dma_latency: bool,
    /// `trace=US` in nanoseconds (latency only).
    pub(crate) trace_ns: Option<u64>,
}

impl Settings {
    /// The measurement threads on the machine of `limits`, one per CPU, after checking that
    /// the run may use every CPU asked for.
    pub(crate) fn threads_on(&self, limits: &MachineLimits) -> Result<u64, BenchError> {
        match &self.cpus {
            None => Ok(limits.cpus.len().max(1) as u64),
            Some(cpus) => {
                if let Some(cpu) = cpus
                    .iter()
                    .find(|c| !limits.cpus.is_empty() && !limits.cpus.contains(c))
                {
                    return Err(BenchError::NotPermitted(format!(
                        "cpus={}: CPU {cpu} is not one this process may run on ({}; see \
                         taskset, cpusets and --setup pin)",
                        vernier_sys::cpulist::format_cpu_list(cpus),
                        vernier_sys::cpulist::format_cpu_list(&limits.cpus)
                    )));
                }
                Ok(cpus.len() as u64)
            }
        }
    }

    /// The CPUs of a run: those asked for, each one the run may use, or all it may use.
    pub(crate) fn run_cpus(&self) -> Result<Vec<usize>, BenchError> {
        let allowed = vernier_sys::affinity::current_affinity()?;
        match &self.cpus {
            None => Ok(allowed),
            Some(cpus) => {
                if let Some(cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
                    return Err(BenchError::NotPermitted(format!(
                        "CPU {cpu} is not one this process may run on ({})",
                        vernier_sys::cpulist::format_cpu_list(&allowed)
                    )));
                }
                Ok(cpus.clone())
            }
        }
    }

    pub(crate) fn read(info: &BenchmarkInfo, options: &Options) -> Result<Self, BenchError> {
        let interval_us = match options.get("interval") {
            Some(OptionValue::UInt(us)) if (1..=1_000_000).contains(us) => *us,
            other => {
                return Err(BenchError::Options(format!(
                    "option 'interval' must be 1..=1000000 microseconds, got {other:?}"
                )))
            }
        };
        let cpus = match options.text("cpus") {
            ALL_CPUS => None,
            text => Some(
                vernier_sys::cpulist::parse_cpu_list(text)
                    .ok()
                    .filter(|c| !c.is_empty())
                    .ok_or_else(|| {
                        BenchError::Options(format!("option 'cpus' = '{text}' is not a CPU list"))
                    })?,
            ),
        };
        Ok(Settings {
            interval_ns: interval_us * 1_000,
            duration_ns: (float(info, options, "duration")? * 1e9) as u64,
            cpus,
            priority: uint(info, options, "priority")? as i32,
            policy: [Policy::Fifo, Policy::Rr, Policy::Other][choice(info, options, "policy")?],
            dma_latency: choice(info, options, "dma_latency")? == 0,
            trace_ns: match options.get("trace") {
                Some(OptionValue::UInt(us)) => Some(us * 1_000),
                _ => None,
            },
        })
    }
}

/// Runs one measurement thread per CPU, each into its own recording, all released together
/// from a start line once every one is pinned and at its policy; returns the first error.
fn measure_on(
    cpus: &[usize],
    recordings: &mut [Recording],
    settings: &Settings,
    trace: Option<&ArmedTrace>,
) -> Result<(), BenchError> {
    let threads = cpus
        .iter()
        .zip(recordings.iter_mut())
        .enumerate()
        .map(|(index, (&cpu, recording))| {
            let thread = MeasurementThread {
                index: index as u32,
                trace,
                cpu: CpuSet::new(&[cpu]),
                policy: settings.policy,
                priority: settings.priority,
                interval_ns: settings.interval_ns,
                duration_ns: settings.duration_ns,
            };
            WorkerThread {
                name: format!("latency/{cpu}"),
                stack_bytes: Some(STACK_BYTES),
                body: move |gate: Gate| thread.run(recording, gate),
            }
        })
        .collect();
    start_threads("measurement", threads, || Ok(()))
}

/// One measurement thread: its CPU, its policy, the loop's timing and the start line.
struct MeasurementThread<'t> {
    /// Its index among the run's threads.
    index: u32,
    trace: Option<&'t ArmedTrace>,
    cpu: CpuSet,
    policy: Policy,
    priority: i32,
    interval_ns: u64,
    duration_ns: u64,
}

impl MeasurementThread<'_> {
    /// Pins the thread and sets its policy (each thread sets its own, as cyclictest's do),
    /// waits at the start line, measures, and goes back to SCHED_OTHER (as cyclictest's
    /// threads do at their end).
    fn run(self, recording: &mut Recording, gate: Gate) -> Result<(), BenchError> {
        self.cpu.pin_current_thread()?;
        set_thread_policy(self.policy, self.priority)?;
        if !gate.ready_and_wait() {
            return Ok(());
        }
        let traced = self.trace.map(|t| (t, self.index));
        let measured = measure(recording, self.interval_ns, self.duration_ns, traced);
        // The thread ends right after; a failure to switch back changes nothing.
        let _ = set_thread_policy(Policy::Other, 0);
        measured.map_err(|errno| BenchError::Syscall {
            call: "clock_nanosleep",
            source: std::io::Error::from_raw_os_error(errno),
        })
    }
}

/// cyclictest's loop in MODE_CLOCK_NANOSLEEP with TIMER_ABSTIME on CLOCK_MONOTONIC, for
/// `duration_ns` (it stops after the first wake-up at or past the end, as cyclictest's `-D`).
/// Only records into `recording`, and with `trace` (the armed instance and this thread's index)
/// marks and stops the trace at the first sample above its threshold; the error is the errno
/// of a failed sleep.
fn measure(
    recording: &mut Recording,
    interval_ns: u64,
    duration_ns: u64,
    trace: Option<(&ArmedTrace, u32)>,
) -> Result<(), i32> {
    let mut now = monotonic_ns();
    let stop = now.saturating_add(duration_ns);
    let mut next = now + interval_ns;
    loop {
        sleep_until(next)?;
        now = monotonic_ns();
        let latency = now.saturating_sub(next);
        recording.record(latency);
        if let Some((trace, thread)) = trace {
            trace.sample(thread, latency, next, now);
        }
        let (following, skipped) = advance(next, now, interval_ns);
        next = following;
        if skipped > 0 {
            recording.miss(skipped);
        }
        if now >= stop {
            return Ok(());
        }
    }
}

/// The session's ftrace instance as a run uses it (cyclictest's `-b US --tracemark`,
/// src/cyclictest/cyclictest.c `tracemark()`): cleared and switched on before the run; at the
/// first sample above the threshold, in any thread, a marker line naming the sample and
/// `tracing_on` 0, so that the buffer ends with what led to it; the measurement goes on.
struct ArmedTrace {
    dir: std::path::PathBuf,
    marker: std::fs::File,
    on: std::fs::File,
    threshold_ns: u64,
    tripped: std::sync::atomic::AtomicBool,
}

impl ArmedTrace {
    /// Clears the instance at `dir` (opening its `trace` for writing with truncation empties
    /// the buffer) and starts it.
    fn arm(dir: &std::path::Path, threshold_ns: u64) -> Result<Self, BenchError> {
        let open = |name: &str, truncate: bool| {
            let path = dir.join(name);
            std::fs::OpenOptions::new()
                .write(true)
                .truncate(truncate)
                .open(&path)
                .map_err(|e| BenchError::Trace(format!("{}: {e}", path.display())))
        };
        drop(open("trace", true)?);
        let trace = ArmedTrace {
            dir: dir.to_path_buf(),
            marker: open("trace_marker", false)?,
            on: open("tracing_on", false)?,
            threshold_ns,
            tripped: std::sync::atomic::AtomicBool::new(false),
        };
        trace.switch(true)?;
        Ok(trace)
    }

    fn switch(&self, on: bool) -> Result<(), BenchError> {
        use std::os::unix::fs::FileExt;
        self.on
            .write_at(if on { b"1" } else { b"0" }, 0)
            .map(|_| ())
            .map_err(|e| BenchError::Trace(format!("{}/tracing_on: {e}", self.dir.display())))
    }

    /// After each sample: the first above the threshold is marked and stops the trace. No
    /// allocation: the marker is formatted on the stack.
    #[inline]
    fn sample(&self, thread: u32, latency_ns: u64, expiry_ns: u64, wake_ns: u64) {
        use std::sync::atomic::Ordering;
        if latency_ns <= self.threshold_ns || self.tripped.swap(true, Ordering::Relaxed) {
            return;
        }
        let marker = vernier_formats::ftrace::Marker {
            thread,
            latency_ns,
            expiry_ns,
            wake_ns,
        };
        let mut buf = [0u8; 128];
        if let Some(n) = vernier_formats::ftrace::format_marker(&marker, &mut buf) {
            use std::io::Write;
            // A lost marker leaves the run without a trace, which `collect` says by finding
            // none; the measurement goes on either way.
            let _ = (&self.marker).write(&buf[..n]);
        }
        let _ = self.switch(false);
    }

    /// Stops the trace at the run's end (no sample crossed the threshold) or again.
    fn stop(&self) {
        let _ = self.switch(false);
    }

    /// The traced sample, if one crossed the threshold: the thread's index and the events of
    /// its CPU before it, read from the CPU's own buffer (`per_cpu/cpuN/trace`).
    fn collect(&self, cpus: &[usize]) -> Option<(usize, vernier_model::ThreadTrace)> {
        if !self.tripped.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let absent =
            vernier_sys::tracefs::absent_events(&self.dir, vernier_model::trace::TRACE_EVENTS);
        cpus.iter().enumerate().find_map(|(thread, &cpu)| {
            let path = self.dir.join(format!("per_cpu/cpu{cpu}/trace"));
            let text = std::fs::read_to_string(path).ok()?;
            let events = vernier_formats::ftrace::parse_events(&text);
            vernier_formats::ftrace::keep_window(
                events,
                cpu as u32,
                thread as u32,
                self.threshold_ns,
                absent.clone(),
            )
            .map(|t| (thread, t))
        })
    }
}

/// The next wake-up after the one programmed for `next` that woke up at `now`: one interval
/// later, and past every period that `now` has already passed, with the count of those skipped
/// periods. cyclictest: `next += interval; while (now > next) next += interval;`, which skips
/// them silently; vernier counts them as missed.
pub fn advance(next: u64, now: u64, interval_ns: u64) -> (u64, u64) {
    let following = next.saturating_add(interval_ns);
    if now <= following || interval_ns == 0 {
        return (following, 0);
    }
    // The smallest k with following + k * interval >= now: the loop's count, without looping.
    let skipped = (now - following).div_ceil(interval_ns);
    (following.saturating_add(skipped * interval_ns), skipped)
}

/// Sleeps until `deadline_ns` of CLOCK_MONOTONIC. A signal's EINTR sleeps again to the same
/// absolute deadline: cyclictest leaves its loop on any error, since a signal there means the
/// end of the program, but a run here ends by its duration alone (the controller stops a run
/// by killing its process), and leaving early would shorten the run without saying so. With
/// an absolute deadline the retry keeps the period exact. Other errors are returned.
fn sleep_until(deadline_ns: u64) -> Result<(), i32> {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / NS_PER_S) as libc::time_t,
        tv_nsec: (deadline_ns % NS_PER_S) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be null with
        // TIMER_ABSTIME (clock_nanosleep(2)).
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        match rc {
            0 => return Ok(()),
            libc::EINTR => continue,
            errno => return Err(errno),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;

    #[test]
    fn advance_moves_one_period_or_skips_and_counts_the_missed_ones() {
        // On time, or late within the period: the next period.
        assert_eq!(advance(1_000, 1_000, 200), (1_200, 0));
        assert_eq!(advance(1_000, 1_150, 200), (1_200, 0));
        // Exactly at the next expiry: cyclictest's `now > next` is false, nothing skipped.
        assert_eq!(advance(1_000, 1_200, 200), (1_200, 0));
        // One nanosecond past it: that period is gone.
        assert_eq!(advance(1_000, 1_201, 200), (1_400, 1));
        // Woke up 1 ms late with a 200 ns period: periods at 1200..=2000 passed.
        assert_eq!(advance(1_000, 2_000, 200), (2_000, 4));
        assert_eq!(advance(1_000, 2_001, 200), (2_200, 5));
        // The same as cyclictest's loop, for a spread of cases.
        for (next, now, interval) in [(0, 0, 1), (5, 1_000, 3), (100, 99, 7), (10, 1_000_003, 10)] {
            let (mut n, mut skipped) = (next + interval, 0);
            while now > n {
                n += interval;
                skipped += 1;
            }
            assert_eq!(
                advance(next, now, interval),
                (n, skipped),
                "{next} {now} {interval}"
            );
        }
    }

    #[test]
    fn a_warmup_runs_at_most_the_default_duration() {
        let info = Latency.info();
        let options = resolve_options(&info, &[("duration", "60")]).unwrap();
        let read = || Settings::read(&info, &options).unwrap();
        let warmup = RunContext {
            warmup: true,
            ..RunContext::default()
        };
        assert_eq!(for_run(read(), &warmup).duration_ns, 5 * NS_PER_S);
        assert_eq!(
            for_run(read(), &RunContext::default()).duration_ns,
            60 * NS_PER_S
        );
        let short = resolve_options(&info, &[("duration", "1")]).unwrap();
        let s = Settings::read(&info, &short).unwrap();
        assert_eq!(for_run(s, &warmup).duration_ns, NS_PER_S);
    }

    #[test]
    fn options_and_their_defaults() {
        let info = Latency.info();
        assert_eq!((info.name(), info.version()), ("latency", "1"));
        assert_eq!(
            (info.metric().name.as_str(), info.metric().unit.as_str()),
            ("p99", "us")
        );
        assert!(!info.metric().higher_is_better);
        let options = resolve_options(&info, &[]).unwrap();
        let s = Settings::read(&info, &options).unwrap();
        assert_eq!(s.interval_ns, 200_000);
        assert_eq!(s.duration_ns, 5 * NS_PER_S);
        assert_eq!((s.cpus, s.priority, s.policy), (None, 99, Policy::Fifo));
        assert!(s.dma_latency);
        let options = resolve_options(
            &info,
            &[
                ("interval", "1ms"),
                ("cpus", "1,0"),
                ("policy", "rr"),
                ("dma_latency", "off"),
            ],
        )
        .unwrap();
        assert_eq!(options.text("cpus"), "0-1");
        let s = Settings::read(&info, &options).unwrap();
        assert_eq!(
            (s.interval_ns, s.cpus, s.policy),
            (1_000_000, Some(vec![0, 1]), Policy::Rr)
        );
        assert!(!s.dma_latency);
        for (name, bad) in [
            ("interval", "0"),
            ("priority", "0"),
            ("priority", "100"),
            ("cpus", "x"),
        ] {
            assert!(
                resolve_options(&info, &[(name, bad)]).is_err(),
                "{name}={bad}"
            );
        }
    }

    fn check(spec: &[(&str, &str)], limits: &MachineLimits) -> Result<(), String> {
        let options = resolve_options(&Latency.info(), spec).unwrap();
        Latency
            .check_machine(&options, limits)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn machine_check_names_the_missing_privilege_and_the_way_out() {
        let unprivileged = MachineLimits {
            cpus: vec![0, 1],
            rtprio: Some(0),
            memlock_bytes: Some(8 << 20),
            ..MachineLimits::default()
        };
        let e = check(&[], &unprivileged).unwrap_err();
        assert!(
            e.starts_with("policy=fifo: real-time priority 99 is not permitted here")
                && e.ends_with("policy=other measures without these privileges and records that"),
            "{e}"
        );
        let e = check(
            &[("policy", "rr"), ("priority", "1")],
            &MachineLimits {
                rtprio: Some(1),
                ..unprivileged.clone()
            },
        )
        .unwrap_err();
        assert!(
            e.starts_with("policy=rr: locking the memory (mlockall) is not permitted"),
            "{e}"
        );
        assert!(check(&[("policy", "other")], &unprivileged).is_ok());
        let privileged = MachineLimits {
            rtprio: None,
            memlock_bytes: None,
            ..unprivileged.clone()
        };
        assert!(check(&[], &privileged).is_ok());
        let e = check(&[("cpus", "1-2")], &privileged).unwrap_err();
        assert_eq!(
            e,
            "cpus=1-2: CPU 2 is not one this process may run on (0-1; see \
             taskset, cpusets and --setup pin)"
        );
        // A recording per thread: two CPUs need about 7.6 MB.
        let small = MachineLimits {
            mem_available_bytes: Some(4 << 20),
            ..privileged
        };
        assert!(check(&[("cpus", "0")], &small).is_ok());
        assert!(check(&[], &small).unwrap_err().contains("bytes of memory"));
    }
}
