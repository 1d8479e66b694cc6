//! `fork`: process creation throughput. Each worker process repeats fork(2), an immediate
//! _exit(2) in the child and waitpid(2) in the parent until its duration is over, like
//! `stress-ng --fork` (whose bogo-op rate it reproduces: forks per second of each worker's
//! own elapsed time, summed over workers). The cost measured is dominated by copying the
//! worker's page tables and tearing them down again.

use vernier_model::{BenchmarkInfo, MetricInfo, Options};
use vernier_sys::MachineLimits;

use crate::opts::{check_rate_benchmark, duration_spec, run_rate_benchmark, workers_spec};
use crate::workers::{errno, status};
use crate::{BenchError, Benchmark, Measurement, RunContext};

pub struct Fork;

impl Benchmark for Fork {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo {
            name: "fork",
            version: "1",
            description: "fork + exit + wait throughput of N worker processes",
            metric: MetricInfo {
                name: "forks_per_second".into(),
                unit: "forks/s".into(),
                higher_is_better: true,
            },
            options: vec![workers_spec(), duration_spec()],
            hidden: false,
        }
    }

    /// Each worker is a process with at most one child of its own at a time.
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        check_rate_benchmark(&self.info(), options, limits, 2)
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        run_rate_benchmark(&self.info(), options, fork_until)
    }
}

/// Forks, lets the child exit at once and reaps it, until `deadline_ns`. Async-signal-safe.
fn fork_until(deadline_ns: u64) -> Result<u64, i32> {
    let mut count = 0u64;
    loop {
        // SAFETY: the child only calls _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: leaves the child at once, without running any of the parent's code.
            unsafe { libc::_exit(0) };
        }
        if pid < 0 {
            return Err(status::FORK);
        }
        let mut st = 0;
        loop {
            // SAFETY: `st` is a valid out pointer; `pid` is our child.
            let rc = unsafe { libc::waitpid(pid, &mut st, 0) };
            if rc == pid {
                break;
            }
            if rc < 0 && errno() != libc::EINTR {
                return Err(status::FORK);
            }
        }
        count += 1;
        if vernier_sys::clock::monotonic_ns() >= deadline_ns {
            return Ok(count);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;
    use vernier_model::{OptionDefault, OptionKind, OptionValue};

    #[test]
    fn defaults() {
        let info = Fork.info();
        assert_eq!((info.name, info.version), ("fork", "1"));
        assert!(info.metric.higher_is_better);
        assert_eq!(info.metric.unit, "forks/s");
        let workers = info.option("workers").unwrap();
        assert_eq!(workers.default, OptionDefault::OnlineCpus);
        assert_eq!(workers.kind, OptionKind::UInt { min: 1, max: 4096 });
        assert_eq!(
            info.option("duration").unwrap().default,
            OptionDefault::Value(OptionValue::Float(5.0))
        );
    }

    #[test]
    fn short_run_counts_forks() {
        let b = Fork;
        let options =
            resolve_options(&b.info(), &[("workers", "2"), ("duration", "0.05")]).unwrap();
        let m = b.run(&options, &RunContext::default()).unwrap();
        let rate = m.values["forks_per_second"];
        // Every worker forks at least once; nothing forks faster than once per microsecond.
        assert!(rate > 0.0 && rate < 2e6, "{rate}");
    }
}
