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
//! The round trips are [`vernier_sys::pingpong`]'s: its loop in both task kinds, and its
//! threads for `tasks=thread`, with which the system check measures the cost of a cross-CPU
//! wake-up, so that its figure is the one `pipe:tasks=thread` reports.

use std::os::fd::AsRawFd;

use vernier_model::{BenchmarkInfo, MetricInfo, Options};
use vernier_sys::affinity::CpuSet;
use vernier_sys::pingpong::Side;
use vernier_sys::MachineLimits;

use crate::opts::{choice, choice_spec, uint, uint_spec};
use crate::workers::{current_cpu, pipe, status, Gate, ProcessWorkers, SharedSlots, StartLine};
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
            run_threads(loops, cpus, &slots)?;
        } else {
            run_processes(loops, cpus, &slots)?;
        }
        let elapsed_ns = slots.get(0, ELAPSED);
        let mut m = Measurement::single("round_trip", elapsed_ns as f64 / 1e3 / loops as f64);
        m.values.insert("cpu_a".into(), slots.get(0, CPU) as f64);
        m.values.insert("cpu_b".into(), slots.get(1, CPU) as f64);
        m.values
            .insert(vernier_model::values::OPERATIONS.into(), loops as f64);
        Ok(m)
    }
}

/// One task of the ping-pong in a forked process; task A times the `loops` round trips.
/// Async-signal-safe.
struct Task<'a> {
    gate: Gate,
    cpu: Option<CpuSet>,
    side: Side,
    loops: u64,
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
        let Some(elapsed_ns) = self.side.run(0, self.loops) else {
            return status::IO;
        };
        if self.side.is_first() {
            self.slots.set(self.slot, ELAPSED, elapsed_ns);
        }
        self.slots.set(self.slot, CPU, current_cpu());
        status::OK
    }
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
    let sides = Side::pair(
        (ab_r.as_raw_fd(), ab_w.as_raw_fd()),
        (ba_r.as_raw_fd(), ba_w.as_raw_fd()),
    );
    let [a, b] = [0, 1].map(|i| Task {
        gate: line.gate(),
        cpu: cpus.map(|c| CpuSet::new(&c[i..=i])),
        side: sides[i],
        loops,
        slots,
        slot: i,
    });
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

/// Both tasks as threads of this process ([`vernier_sys::pingpong::threads`]).
fn run_threads(
    loops: u64,
    cpus: Option<[usize; 2]>,
    slots: &SharedSlots,
) -> Result<(), BenchError> {
    let measured = vernier_sys::pingpong::threads(cpus, 0, loops)?;
    slots.set(0, ELAPSED, measured.elapsed_ns);
    for (slot, cpu) in measured.cpus.into_iter().enumerate() {
        slots.set(slot, CPU, cpu);
    }
    Ok(())
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
                assert_eq!(m.values[vernier_model::values::OPERATIONS], 1000.0);
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
