//! `pipe`: ping-pong over two pipes, like `perf bench sched pipe`
//! (tools/perf/bench/sched-pipe.c): task A writes an int and reads the reply, task B reads and
//! writes it back, `loops` round trips. Reports microseconds per round trip.
//!
//! The result depends almost entirely on where the two tasks run (about 2 us on one CPU and
//! tens of microseconds across CPUs on a KVM guest, and anything in between unpinned), so the
//! placement is an explicit option: `same-cpu` pins both tasks to the first CPU the run may use
//! (all online CPUs unless `--setup pin`, taskset or a cpuset restrict them), `cross-cpu` pins
//! them to the first two, `free` leaves them to the scheduler.
//! The CPUs the tasks ended on are reported as `cpu_a` and `cpu_b`.
//!
//! The system check measures the cost of a cross-CPU wake-up with the same code
//! ([`thread_round_trip_ns`]), so its figure is the one `pipe:tasks=thread` reports.

use std::os::fd::RawFd;

use vernier_model::{BenchmarkInfo, MetricInfo, Options};
use vernier_sys::affinity::CpuSet;
use vernier_sys::clock::monotonic_ns;
use vernier_sys::MachineLimits;

use crate::opts::{choice, choice_spec, uint, uint_spec};
use crate::workers::{
    current_cpu, pipe, read_exact, status, write_all, Gate, ProcessWorkers, SharedSlots, StartLine,
};
use crate::{BenchError, Benchmark, Measurement, RunContext};

const TASKS: &[&str] = &["process", "thread"];
const PLACEMENT: &[&str] = &["same-cpu", "cross-cpu", "free"];

/// Slot layout: [elapsed_ns (task A only), cpu at the end].
const ELAPSED: usize = 0;
const CPU: usize = 1;

pub struct Pipe;

impl Benchmark for Pipe {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            "pipe",
            "1",
            "ping-pong round trips between two tasks over two pipes \
                          (perf bench sched pipe) with explicit CPU placement",
            MetricInfo::lower("round_trip", "us"),
        )
        .with_options(vec![
            uint_spec("loops", 100_000, 1, u64::MAX, "", "round trips"),
            choice_spec("tasks", TASKS, "the two tasks are processes or threads"),
            choice_spec(
                "placement",
                PLACEMENT,
                "same-cpu: both on the first CPU the run may use; cross-cpu: on the first \
                     two; free: not pinned",
            ),
        ])
    }

    /// Two tasks besides the run's process; `cross-cpu` needs two CPUs to run on.
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let info = self.info();
        limits.check_tasks(3)?;
        if choice(&info, options, "placement")? == 1 {
            limits.check_cpus(2)?;
        }
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let info = self.info();
        let loops = uint(&info, options, "loops")?;
        let threads = choice(&info, options, "tasks")? == 1;
        // The CPUs this process may run on (sched_getaffinity(2) reports them within the
        // active CPUs), so a `--setup pin` or a cpuset restricts the placement too.
        let allowed = vernier_sys::affinity::current_affinity()
            .ok()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(vernier_sys::cpulist::online_cpus);
        let first = allowed.first().copied().unwrap_or(0);
        let cpus: Option<[usize; 2]> = match choice(&info, options, "placement")? {
            0 => Some([first, first]),
            1 => match allowed.as_slice() {
                [a, b, ..] => Some([*a, *b]),
                _ => {
                    return Err(BenchError::Options(format!(
                        "placement=cross-cpu needs two CPUs; this process may run on {}",
                        allowed.len()
                    )))
                }
            },
            _ => None,
        };
        let slots = SharedSlots::new(2, 2)?;
        if threads {
            run_threads(0, loops, cpus, &slots)?;
        } else {
            run_processes(loops, cpus, &slots)?;
        }
        let elapsed_ns = slots.get(0, ELAPSED);
        let mut m = Measurement::single("round_trip", elapsed_ns as f64 / 1e3 / loops as f64);
        m.values.insert("cpu_a".into(), slots.get(0, CPU) as f64);
        m.values.insert("cpu_b".into(), slots.get(1, CPU) as f64);
        Ok(m)
    }
}

/// Nanoseconds per round trip between two threads, the first on `cpus[0]`, the second on
/// `cpus[1]`, after `warmup` round trips that are not timed: what `pipe:tasks=thread` measures
/// with that placement. The system check measures the cost of a cross-CPU wake-up with it.
pub fn thread_round_trip_ns(cpus: [usize; 2], warmup: u64, loops: u64) -> Result<f64, BenchError> {
    if loops == 0 {
        return Err(BenchError::Options("at least one timed round trip".into()));
    }
    let slots = SharedSlots::new(2, 2)?;
    run_threads(warmup, loops, Some(cpus), &slots)?;
    Ok(slots.get(0, ELAPSED) as f64 / loops as f64)
}

/// One task of the ping-pong; `first` is task A, which starts each round trip and times the
/// `loops` after the `warmup` ones. Async-signal-safe.
struct Task<'a> {
    gate: Gate,
    cpu: Option<CpuSet>,
    read_fd: RawFd,
    write_fd: RawFd,
    warmup: u64,
    loops: u64,
    first: bool,
    slots: &'a SharedSlots,
    slot: usize,
}

impl Task<'_> {
    fn run(self) -> i32 {
        if let Some(set) = &self.cpu {
            if set.pin_current_thread().is_err() {
                return status::AFFINITY;
            }
        }
        if !self.gate.ready_and_wait() {
            return status::CALLED_OFF;
        }
        let mut m = [0u8; 4];
        for _ in 0..self.warmup {
            if !self.round_trip(&mut m) {
                return status::IO;
            }
        }
        let start = monotonic_ns();
        for _ in 0..self.loops {
            if !self.round_trip(&mut m) {
                return status::IO;
            }
        }
        let stop = monotonic_ns();
        if self.first {
            self.slots
                .set(self.slot, ELAPSED, stop.saturating_sub(start));
        }
        self.slots.set(self.slot, CPU, current_cpu());
        status::OK
    }

    /// A: write, then read the reply. B: read, then write it back. False on an error or end of
    /// file (the other task is gone).
    fn round_trip(&self, m: &mut [u8; 4]) -> bool {
        if self.first {
            if !write_all(self.write_fd, m) {
                return false;
            }
            read_exact(self.read_fd, m)
        } else {
            if !read_exact(self.read_fd, m) {
                return false;
            }
            write_all(self.write_fd, m)
        }
    }
}

/// The two tasks: A reads `b_to_a` and writes `a_to_b`, B the other way round.
fn tasks<'a>(
    gate: Gate,
    warmup: u64,
    loops: u64,
    cpus: Option<[usize; 2]>,
    slots: &'a SharedSlots,
    a_to_b: (RawFd, RawFd),
    b_to_a: (RawFd, RawFd),
) -> [Task<'a>; 2] {
    let set = |i: usize| cpus.map(|c| CpuSet::new(&c[i..=i]));
    [
        Task {
            gate,
            cpu: set(0),
            read_fd: b_to_a.0,
            write_fd: a_to_b.1,
            warmup,
            loops,
            first: true,
            slots,
            slot: 0,
        },
        Task {
            gate,
            cpu: set(1),
            read_fd: a_to_b.0,
            write_fd: b_to_a.1,
            warmup,
            loops,
            first: false,
            slots,
            slot: 1,
        },
    ]
}

fn run_processes(
    loops: u64,
    cpus: Option<[usize; 2]>,
    slots: &SharedSlots,
) -> Result<(), BenchError> {
    let line = StartLine::new()?;
    let (ab_r, ab_w) = pipe()?;
    let (ba_r, ba_w) = pipe()?;
    let mut workers = ProcessWorkers::new();
    let [a, b] = tasks(
        line.gate(),
        0,
        loops,
        cpus,
        slots,
        (ab_r.raw(), ab_w.raw()),
        (ba_r.raw(), ba_w.raw()),
    );
    // SAFETY: the tasks make only system calls and atomic stores on memory prepared before
    // the fork.
    unsafe {
        workers.spawn(move || a.run())?;
        workers.spawn(move || b.run())?;
    }
    line.wait_ready(2, || workers.check_alive())?;
    line.go()?;
    workers.reap_all()
}

fn run_threads(
    warmup: u64,
    loops: u64,
    cpus: Option<[usize; 2]>,
    slots: &SharedSlots,
) -> Result<(), BenchError> {
    let mut line = StartLine::new()?;
    let (ab_r, ab_w) = pipe()?;
    let (ba_r, ba_w) = pipe()?;
    let [a, b] = tasks(
        line.gate(),
        warmup,
        loops,
        cpus,
        slots,
        (ab_r.raw(), ab_w.raw()),
        (ba_r.raw(), ba_w.raw()),
    );
    std::thread::scope(|scope| {
        let ha = std::thread::Builder::new()
            .spawn_scoped(scope, move || a.run())
            .map_err(|e| BenchError::Syscall {
                call: "pthread_create",
                source: e,
            });
        let hb = match &ha {
            Ok(_) => std::thread::Builder::new()
                .spawn_scoped(scope, move || b.run())
                .map_err(|e| BenchError::Syscall {
                    call: "pthread_create",
                    source: e,
                }),
            Err(_) => Err(BenchError::Worker("first task not started".into())),
        };
        let (ha, hb) = match (ha, hb) {
            (Ok(ha), Ok(hb)) => (ha, hb),
            (Err(e), _) | (_, Err(e)) => {
                line.call_off();
                return Err(e);
            }
        };
        // A thread that fails to pin itself exits without reporting ready; count the
        // finished ones so the wait cannot hang.
        let ready = line.wait_ready(2, || {
            if ha.is_finished() || hb.is_finished() {
                Err(BenchError::Worker("a task ended before the start".into()))
            } else {
                Ok(())
            }
        });
        let started = ready.and_then(|()| line.go());
        if started.is_err() {
            line.call_off();
        }
        let codes = [
            ha.join().unwrap_or(status::PANIC),
            hb.join().unwrap_or(status::PANIC),
        ];
        started?;
        match codes.iter().find(|c| **c != status::OK) {
            Some(code) => Err(BenchError::Worker(format!(
                "a task failed: {}",
                status::explain(*code)
            ))),
            None => Ok(()),
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;
    use vernier_model::{OptionDefault, OptionValue};

    fn run_with(overrides: &[(&str, &str)]) -> Result<Measurement, BenchError> {
        let b = Pipe;
        let options = resolve_options(&b.info(), overrides).unwrap();
        b.run(&options, &RunContext::default())
    }

    #[test]
    fn defaults() {
        let info = Pipe.info();
        assert_eq!((info.name(), info.version()), ("pipe", "1"));
        assert_eq!(info.metric().unit, "us");
        assert!(!info.metric().higher_is_better);
        let default = |n: &str| info.option(n).unwrap().default.clone();
        assert_eq!(
            default("loops"),
            OptionDefault::Value(OptionValue::UInt(100_000))
        );
        assert_eq!(
            default("tasks"),
            OptionDefault::Value(OptionValue::Text("process".into()))
        );
        assert_eq!(
            default("placement"),
            OptionDefault::Value(OptionValue::Text("same-cpu".into()))
        );
    }

    #[test]
    fn thread_round_trips_with_a_warmup() {
        let allowed = vernier_sys::affinity::current_affinity().unwrap();
        let cpus = [allowed[0], *allowed.last().unwrap()];
        let ns = thread_round_trip_ns(cpus, 20, 200).unwrap();
        assert!(ns > 0.0 && ns < 1e9, "{ns}");
        assert!(matches!(
            thread_round_trip_ns(cpus, 0, 0),
            Err(BenchError::Options(_))
        ));
    }

    #[test]
    fn every_placement_the_machine_allows() {
        let online = vernier_sys::affinity::current_affinity().unwrap();
        if online.len() < 2 {
            eprintln!("skipped: cross-cpu placement needs two CPUs; checking that it is refused");
        }
        for tasks in TASKS {
            for placement in PLACEMENT {
                let result = run_with(&[
                    ("loops", "1000"),
                    ("tasks", tasks),
                    ("placement", placement),
                ]);
                if *placement == "cross-cpu" && online.len() < 2 {
                    let err = result.unwrap_err();
                    assert!(matches!(err, BenchError::Options(_)), "{err}");
                    continue;
                }
                let m = result.unwrap();
                let rt = m.values["round_trip"];
                assert!(rt > 0.0 && rt < 1e6, "{tasks}/{placement}: {rt}");
                let (a, b) = (m.values["cpu_a"], m.values["cpu_b"]);
                match *placement {
                    "same-cpu" => {
                        assert_eq!(a, online[0] as f64);
                        assert_eq!(b, online[0] as f64);
                    }
                    "cross-cpu" => {
                        assert_eq!(a, online[0] as f64);
                        assert_eq!(b, online[1] as f64);
                    }
                    _ => assert!(online.contains(&(a as usize)) && online.contains(&(b as usize))),
                }
            }
        }
    }
}
