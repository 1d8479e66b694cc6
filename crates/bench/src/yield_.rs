//! `yield`: sched_yield(2) throughput. Each worker process calls sched_yield in a loop, like
//! `stress-ng --yield`, reading the clock only every 256 calls so that the clock does not
//! dominate. Reports yields per second of each worker's own elapsed time, summed over workers.
//! With fewer runnable tasks than CPUs a yield returns at once; with more it switches tasks.

use vernier_model::{BenchmarkInfo, MetricInfo, Options};
use vernier_sys::MachineLimits;

use crate::opts::{check_rate_benchmark, duration_spec, run_rate_benchmark, workers_spec};
use crate::{BenchError, Benchmark, Measurement, RunContext};

/// sched_yield calls between two clock reads.
const BATCH: u64 = 256;

pub struct Yield;

impl Benchmark for Yield {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            "yield",
            "1",
            "sched_yield throughput of N worker processes",
            MetricInfo::higher("yields_per_second", "yields/s"),
        )
        .with_options(vec![workers_spec(), duration_spec()])
    }

    /// Each worker is one process.
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        check_rate_benchmark(&self.info(), options, limits, 1)
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        run_rate_benchmark(&self.info(), options, yield_until)
    }
}

/// Yields in batches until `deadline_ns`. Async-signal-safe.
fn yield_until(deadline_ns: u64) -> Result<u64, i32> {
    let mut count = 0u64;
    loop {
        for _ in 0..BATCH {
            // SAFETY: no preconditions; it always succeeds on Linux.
            unsafe { libc::sched_yield() };
        }
        count += BATCH;
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
    use vernier_model::{OptionDefault, OptionValue};

    #[test]
    fn defaults() {
        let info = Yield.info();
        assert_eq!((info.name(), info.version()), ("yield", "1"));
        assert!(info.metric().higher_is_better);
        assert_eq!(info.metric().name, "yields_per_second");
        assert_eq!(info.metric().unit, "yields/s");
        assert_eq!(
            info.option("workers").unwrap().default,
            OptionDefault::OnlineCpus
        );
        assert_eq!(
            info.option("duration").unwrap().default,
            OptionDefault::Value(OptionValue::Float(5.0))
        );
    }

    #[test]
    fn short_run_counts_yields() {
        let b = Yield;
        let options =
            resolve_options(&b.info(), &[("workers", "2"), ("duration", "0.05")]).unwrap();
        let m = b.run(&options, &RunContext::default()).unwrap();
        let rate = m.values["yields_per_second"];
        // Every worker yields at least one batch; nothing yields once per nanosecond.
        assert!(rate > 0.0 && rate < 1e9, "{rate}");
        // As for fork: the yields of all workers are at least the rate times the duration.
        let yields = m.values[vernier_model::values::OPERATIONS];
        assert!(
            yields >= 2.0 * BATCH as f64 && yields.fract() == 0.0,
            "{yields}"
        );
        assert!(
            yields >= rate * 0.05 * (1.0 - 1e-9),
            "{yields} yields, {rate}/s"
        );
    }
}
