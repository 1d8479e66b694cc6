//! The distribution of per-call times of a configuration (the `syscall` benchmark): the
//! histograms of all its measured runs merged, with the figures the kbench write-up prints
//! (min, max, count, 50th, 90th, 95th percentile, MAD; the seed's "Meaningful statistics") and
//! the rows of its distribution graph: equal-width rows from the fastest call up to the 99th
//! percentile, and one row for the slower calls beyond it, whose few preempted outliers would
//! otherwise stretch the rows until the body of the distribution is one row.

use serde::Serialize;
use vernier_model::histogram::supports_quantile;
use vernier_model::{RunHistogram, StoredConfiguration};

/// One row of the distribution: the calls that took `from_ns` up to `from_ns + step - 1` ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CallRow {
    pub from_ns: u64,
    pub count: u64,
    /// Calls in this row and every faster one: the CDF times the count.
    pub cumulative: u64,
}

/// The per-call times of a configuration's measured runs, nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallDistribution {
    /// Measured runs with a histogram of calls.
    pub runs: usize,
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// A percentile where the count supports it ([`supports_quantile`]; the median always).
    pub p50_ns: Option<u64>,
    pub p90_ns: Option<u64>,
    pub p95_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    /// The tail a latency is judged by (10,000 calls or more, [`supports_quantile`]).
    pub p99_9_ns: Option<u64>,
    pub mad_ns: Option<u64>,
    /// Width of each row, ns.
    pub step_ns: u64,
    pub rows: Vec<CallRow>,
    /// Calls slower than the last row (the slowest 1%, and those beyond the histogram's
    /// range): the last row of the graph, where the CDF reaches the count.
    pub beyond: u64,
}

/// The distribution of the calls of `config`'s measured runs in about `rows` rows; `None`
/// when no measured run has a histogram of calls (another benchmark, or the histograms were
/// not loaded).
pub fn call_distribution(config: &StoredConfiguration, rows: usize) -> Option<CallDistribution> {
    let mut all: Option<RunHistogram> = None;
    let mut runs = 0;
    for run in config.runs.iter().filter(|r| !r.warmup) {
        let mut any = false;
        for h in run
            .histograms
            .iter()
            .filter(|h| h.quantity == vernier_model::histogram::CALL)
        {
            any = true;
            match &mut all {
                None => all = Some(h.clone()),
                Some(all) => all.merge(h),
            }
        }
        runs += usize::from(any);
    }
    let all = all.filter(|h| h.count > 0)?;
    Some(distribution_of(&all, runs, rows.max(1)))
}

/// [`call_distribution`] of the merged histogram `all`.
fn distribution_of(all: &RunHistogram, runs: usize, rows: usize) -> CallDistribution {
    let quantile = |q: f64| {
        (q == 0.5 || supports_quantile(all.count, q))
            .then(|| all.quantile_ns(q))
            .flatten()
    };
    let p99 = quantile(0.99);
    let low = all.min_ns;
    // The rows reach the p99 where there is one, the slowest call otherwise.
    let high = p99.unwrap_or(all.max_ns).max(low);
    // A row is never narrower than the clock's step (the smallest gap between two recorded
    // times: 10 ns for a clock of that resolution), or every other row would be empty.
    let resolution = all
        .buckets
        .windows(2)
        .map(|w| w[1].0 - w[0].0)
        .min()
        .unwrap_or(1);
    let step = (high - low + 1)
        .div_ceil(rows as u64)
        .max(resolution)
        .max(1);
    let n_rows = (high - low) / step + 1;
    let mut counts = vec![0u64; n_rows as usize];
    let mut beyond = all.overflows;
    for &(value, n) in &all.buckets {
        // A bucket stands at its highest value (as the quantiles take it), never above the
        // exact maximum.
        let row = (value.min(all.max_ns).saturating_sub(low)) / step;
        match counts.get_mut(row as usize) {
            Some(count) => *count += n,
            None => beyond += n,
        }
    }
    let mut cumulative = 0;
    let rows = counts
        .iter()
        .enumerate()
        .map(|(i, &count)| {
            cumulative += count;
            CallRow {
                from_ns: low + i as u64 * step,
                count,
                cumulative,
            }
        })
        .collect();
    CallDistribution {
        runs,
        count: all.count,
        min_ns: all.min_ns,
        max_ns: all.max_ns,
        p50_ns: quantile(0.5),
        p90_ns: quantile(0.9),
        p95_ns: quantile(0.95),
        p99_ns: p99,
        p99_9_ns: quantile(0.999),
        mad_ns: all.mad_ns(),
        step_ns: step,
        rows,
        beyond,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use vernier_model::histogram::{Recording, CALL};

    fn histogram(values: &[(u64, u64)]) -> RunHistogram {
        let mut r = Recording::new();
        for &(v, n) in values {
            r.record_n(v, n);
        }
        r.finish(CALL, 0, Some(0))
    }

    #[test]
    fn rows_run_from_the_fastest_call_to_the_p99_and_the_rest_is_beyond() {
        // 1000 calls: 450 of 100 ns, 350 of 110, 190 of 120, 10 slow ones of 5000 ns.
        let h = histogram(&[(100, 450), (110, 350), (120, 190), (5000, 10)]);
        let d = distribution_of(&h, 1, 5);
        assert_eq!((d.count, d.min_ns, d.max_ns), (1000, 100, 5000));
        assert_eq!(d.p50_ns, Some(110));
        assert_eq!(d.p90_ns, Some(120));
        assert_eq!(d.p99_ns, Some(120));
        // 1,000 calls are too few for a p99.9 (10,000).
        assert_eq!(d.p99_9_ns, None);
        assert_eq!(d.mad_ns, Some(10));
        // 100..=120 in 5 rows would be 5 ns each, but the times lie 10 ns apart.
        assert_eq!(d.step_ns, 10);
        let counts: Vec<(u64, u64, u64)> = d
            .rows
            .iter()
            .map(|r| (r.from_ns, r.count, r.cumulative))
            .collect();
        assert_eq!(counts, [(100, 450, 450), (110, 350, 800), (120, 190, 990)]);
        assert_eq!(d.beyond, 10);
    }

    #[test]
    fn few_calls_draw_up_to_the_slowest_and_one_value_is_one_row() {
        // Too few calls for a p99: the rows reach the maximum.
        let h = histogram(&[(50, 3), (80, 1)]);
        let d = distribution_of(&h, 1, 4);
        // Two times 30 ns apart: two rows.
        assert_eq!((d.step_ns, d.rows.len()), (30, 2));
        assert_eq!(d.p99_ns, None);
        assert_eq!(d.p90_ns, None);
        assert_eq!(d.rows.last().unwrap().cumulative, 4);
        assert_eq!(d.beyond, 0);
        let d = distribution_of(&histogram(&[(70, 20)]), 1, 10);
        assert_eq!(d.rows.len(), 1);
        assert_eq!(d.rows[0].count, 20);
    }

    #[test]
    fn enough_calls_have_a_p99_9() {
        // 20,000 calls: 19,970 of 100 ns, 20 of 300 ns, 10 of 9,000 ns: the p99.9 is 300.
        let h = histogram(&[(100, 19_970), (300, 20), (9_000, 10)]);
        let d = distribution_of(&h, 1, 10);
        assert_eq!(d.p99_ns, Some(100));
        assert_eq!(d.p99_9_ns, Some(300));
    }
}
