//! Distribution-valued results: the histogram of every sample one measurement thread took in one
//! run, for benchmarks that take millions of samples per run (timer wake-up latency, the cost of
//! single kernel functions).
//!
//! The counts are an HdrHistogram (Gil Tene's High Dynamic Range histogram, the `hdrhistogram`
//! crate) of nanosecond values with 4 significant digits: exact to the nanosecond up to 32 us,
//! a bucket of at most 512 ns up to 16.7 ms, and 0.01% relative precision beyond, up to
//! [`RANGE_NS`] (an hour). That keeps the 1 us resolution that OSADL's latency plots use up to
//! 10 ms. The recording side allocates the whole range once, before the first sample, so that
//! recording never allocates; it is stored with HdrHistogram's V2 + DEFLATE encoding, which
//! keeps only the non-empty buckets.
//!
//! Next to the counts, the exact facts that the buckets blur are kept: the count, the exact
//! minimum, maximum and sum, the index of the sample that was the maximum, the samples beyond
//! the range (`overflows`: imported cyclictest histograms have a fixed range of whole
//! microseconds) and, for periodic measurements, the periods that were skipped.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Cursor;

use crate::benchmark::MetricInfo;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{
    Deserialize, Deserializer as SerdeDeserializer, Serialize, Serializer as SerdeSerializer,
};

/// The largest value the counts hold, in nanoseconds: one hour. A larger sample is an overflow.
pub const RANGE_NS: u64 = 3_600_000_000_000;

/// Significant decimal digits of the counts' buckets (see the module documentation).
pub const SIGNIFICANT_DIGITS: u8 = 4;

/// The distribution of the samples of one measurement thread in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunHistogram {
    /// What was sampled, for example `latency`.
    pub quantity: String,
    /// The measurement thread, from 0.
    pub thread: u32,
    /// The CPU the thread was pinned to, if it was.
    pub cpu: Option<u32>,
    /// Samples taken, overflows included.
    pub count: u64,
    /// Exact smallest and largest sample, nanoseconds (0 when there is none).
    pub min_ns: u64,
    pub max_ns: u64,
    /// Index (from 0) of the first sample that was the maximum, when known.
    pub max_index: Option<u64>,
    /// Exact sum of the samples, nanoseconds, for the mean (584 years before it saturates).
    pub sum_ns: u64,
    /// Samples beyond the range of the buckets: counted, but in no bucket.
    pub overflows: u64,
    /// Periods of a periodic measurement that passed without a sample because the thread woke
    /// up too late for them (cyclictest skips them silently).
    pub missed: u64,
    /// The non-empty buckets in ascending order: (the highest value of the bucket in ns,
    /// samples). In memory a sparse list, since a full set of counts is megabytes; stored and
    /// exported in HdrHistogram's V2 + DEFLATE encoding.
    #[serde(serialize_with = "encode_buckets", deserialize_with = "decode_buckets")]
    pub buckets: Vec<(u64, u64)>,
    /// The kernel's events before the thread's first sample above `latency:trace=US`, when
    /// the run was traced and a sample went above it ([`crate::trace`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Box<crate::trace::ThreadTrace>>,
}

/// Why histogram counts could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HistogramError(String);

/// Empty counts covering [`RANGE_NS`] at [`SIGNIFICANT_DIGITS`], allocated in full so that
/// recording any value in range never allocates.
fn empty_counts() -> Histogram<u64> {
    // 1..=RANGE_NS at 4 digits is a valid bound set; the constructor fails only for invalid ones.
    match Histogram::new_with_bounds(1, RANGE_NS, SIGNIFICANT_DIGITS) {
        Ok(h) => h,
        Err(e) => unreachable!("histogram bounds are constants: {e:?}"),
    }
}

/// Records the samples of one measurement thread: the HdrHistogram counts and the exact facts.
/// Everything is allocated by [`Recording::new`]; [`Recording::record`] never allocates, locks
/// or calls the kernel, so a measuring loop may call it between two clock readings.
#[derive(Debug, Clone)]
pub struct Recording {
    counts: Histogram<u64>,
    count: u64,
    min_ns: u64,
    max_ns: u64,
    max_index: Option<u64>,
    sum_ns: u64,
    overflows: u64,
    missed: u64,
}

impl Default for Recording {
    fn default() -> Self {
        Self::new()
    }
}

impl Recording {
    pub fn new() -> Self {
        Recording {
            counts: empty_counts(),
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            max_index: None,
            sum_ns: 0,
            overflows: 0,
            missed: 0,
        }
    }

    /// Adds one sample, the next in order.
    #[inline]
    pub fn record(&mut self, value_ns: u64) {
        self.record_n(value_ns, 1);
    }

    /// Adds `n` equal samples, the next in order (the maximum's index is that of the first).
    #[inline]
    pub fn record_n(&mut self, value_ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        if value_ns < self.min_ns {
            self.min_ns = value_ns;
        }
        if self.max_index.is_none() || value_ns > self.max_ns {
            self.max_ns = value_ns;
            self.max_index = Some(self.count);
        }
        self.count += n;
        self.sum_ns = self.sum_ns.saturating_add(value_ns.saturating_mul(n));
        if value_ns > RANGE_NS || self.counts.record_n(value_ns, n).is_err() {
            self.overflows += n;
        }
    }

    /// Adds `n` samples known only to lie beyond a fixed range (cyclictest's overflows): they
    /// count, but have no value.
    pub fn record_overflows(&mut self, n: u64) {
        self.count += n;
        self.overflows += n;
    }

    /// Counts `n` periods that passed without a sample.
    #[inline]
    pub fn miss(&mut self, n: u64) {
        self.missed += n;
    }

    /// Samples recorded so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Bytes of memory a recording holds: its counts over the whole range (about 3.8 MB),
    /// allocated at once by [`Recording::new`].
    pub fn memory_bytes(&self) -> u64 {
        (self.counts.distinct_values() * std::mem::size_of::<u64>()) as u64
    }

    /// The histogram of `quantity` of a thread (pinned to `cpu`, if it was).
    pub fn finish(&self, quantity: &str, thread: u32, cpu: Option<u32>) -> RunHistogram {
        RunHistogram {
            quantity: quantity.to_string(),
            thread,
            cpu,
            count: self.count,
            min_ns: if self.min_ns == u64::MAX {
                0
            } else {
                self.min_ns
            },
            max_ns: self.max_ns,
            max_index: self.max_index,
            sum_ns: self.sum_ns,
            overflows: self.overflows,
            missed: self.missed,
            buckets: buckets_of(&self.counts),
            trace: None,
        }
    }
}

/// The non-empty buckets of `counts`, as [`RunHistogram::buckets`] holds them.
fn buckets_of(counts: &Histogram<u64>) -> Vec<(u64, u64)> {
    counts
        .iter_recorded()
        .map(|v| {
            (
                counts.highest_equivalent(v.value_iterated_to()),
                v.count_at_value(),
            )
        })
        .collect()
}

impl RunHistogram {
    /// Samples in buckets (the count without the overflows).
    pub fn in_buckets(&self) -> u64 {
        self.buckets.iter().map(|&(_, n)| n).sum()
    }

    /// The mean of the samples, nanoseconds, from the exact sum.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64)
    }

    /// The nearest-rank `q`-quantile (0 < q <= 1) in nanoseconds: the smallest bucket with at
    /// least `ceil(q * count)` samples at or below it, reported as the highest value of the
    /// bucket but never above the exact maximum. `None` when there are no samples, or when the
    /// rank falls among the overflows (the value lies somewhere beyond the range).
    pub fn quantile_ns(&self, q: f64) -> Option<u64> {
        if self.count == 0 || !(q > 0.0 && q <= 1.0) {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for &(value, n) in &self.buckets {
            seen += n;
            if seen >= rank {
                return Some(value.min(self.max_ns));
            }
        }
        None
    }

    /// Merges another thread's or run's histogram into this one: the distribution of all
    /// their samples together. The max index is kept from the histogram with the larger
    /// maximum; the thread and CPU stay this one's.
    pub fn merge(&mut self, other: &RunHistogram) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 || other.min_ns < self.min_ns {
            self.min_ns = other.min_ns;
        }
        if self.count == 0 || other.max_ns > self.max_ns {
            self.max_ns = other.max_ns;
            self.max_index = other.max_index;
        }
        self.count += other.count;
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
        self.overflows += other.overflows;
        self.missed += other.missed;
        // Merging many histograms into one (a long session's runs) copies the merged buckets
        // at each step; one side without buckets (its samples all overflows, or a run read
        // without them whose buckets come merged: vernier_app::database) leaves the other's.
        if other.buckets.is_empty() {
            return;
        }
        if self.buckets.is_empty() {
            self.buckets = other.buckets.clone();
            return;
        }
        let (a, b) = (&self.buckets, &other.buckets);
        let mut merged = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            if j == b.len() || (i < a.len() && a[i].0 < b[j].0) {
                merged.push(a[i]);
                i += 1;
            } else if i == a.len() || b[j].0 < a[i].0 {
                merged.push(b[j]);
                j += 1;
            } else {
                merged.push((a[i].0, a[i].1 + b[j].1));
                i += 1;
                j += 1;
            }
        }
        self.buckets = merged;
    }

    /// Checks the facts against the buckets: what an import must hold before it is stored.
    pub fn check(&self) -> Result<(), String> {
        let in_buckets = self.in_buckets();
        if in_buckets + self.overflows != self.count {
            return Err(format!(
                "count {} is not the {in_buckets} samples in buckets plus {} overflows",
                self.count, self.overflows
            ));
        }
        if self.buckets.windows(2).any(|w| w[0].0 >= w[1].0)
            || self.buckets.iter().any(|b| b.1 == 0)
        {
            return Err("buckets are not ascending and non-empty".into());
        }
        if in_buckets > 0 && self.min_ns > self.max_ns {
            return Err(format!(
                "min {} ns above max {} ns",
                self.min_ns, self.max_ns
            ));
        }
        let counts = empty_counts();
        if let (Some(first), Some(last)) = (self.buckets.first(), self.buckets.last()) {
            if counts.lowest_equivalent(self.min_ns) > first.0
                || counts.highest_equivalent(self.max_ns) < counts.lowest_equivalent(last.0)
            {
                return Err(format!(
                    "buckets from {} to {} ns lie outside min {} and max {} ns",
                    first.0, last.0, self.min_ns, self.max_ns
                ));
            }
        }
        Ok(())
    }
}

/// The smallest sample count for which the `q`-quantile says something of its own: at least 10
/// samples beyond it, n >= 10 / (1 - q) (RESEARCH 1.7). Below it the quantile is one of the
/// few largest samples, and reported as "n too small".
pub fn supports_quantile(count: u64, q: f64) -> bool {
    q < 1.0 && count as f64 * (1.0 - q) >= 10.0 - 1e-9
}

/// The highest quantile that `count` samples support by [`supports_quantile`]'s rule: the one
/// with 10 samples beyond it, `1 - 10 / count` (not positive for 10 samples or fewer).
pub fn highest_supported_quantile(count: u64) -> f64 {
    if count == 0 {
        return 0.0;
    }
    1.0 - 10.0 / count as f64
}

/// The quantity of timer wake-up latency histograms (the `latency` benchmark, cyclictest).
pub const LATENCY: &str = "latency";

/// The quantity of per-call time histograms (the `syscall` benchmark, the kbench write-up).
pub const CALL: &str = "call";

/// A condition under which a latency run measures the machine's best case, stored among the
/// run's values as 1 (met) or 0 (not met). A run without it measured something weaker, which
/// `show` and `compare` say (RESEARCH 1.1: cyclictest's `-m` and its PM QoS request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunCondition {
    /// The name of the run's value.
    pub value: &'static str,
    /// The option and value that turn the condition off on purpose: runs that asked for it
    /// are not warned about.
    pub off_by: Option<(&'static str, &'static str)>,
    /// What a run without it lacked and what that does to the latencies.
    pub missing: &'static str,
}

/// The process's memory was locked (mlockall) during the run.
pub const MEMORY_LOCKED: &str = "memory_locked";
/// `/dev/cpu_dma_latency` was held at 0 during the run.
pub const DMA_LATENCY_HELD: &str = "dma_latency_held";

/// The conditions a latency run records.
pub const RUN_CONDITIONS: [RunCondition; 2] = [
    RunCondition {
        value: MEMORY_LOCKED,
        off_by: None,
        missing: "locked memory (mlockall failed): page faults can add to the latencies",
    },
    RunCondition {
        value: DMA_LATENCY_HELD,
        off_by: Some(("dma_latency", "off")),
        missing: "/dev/cpu_dma_latency held at 0 (absent or not permitted): the exit latency \
                  of deep idle states can add to the latencies",
    },
];

/// The high quantiles reported of a latency distribution, with their metric names.
const LATENCY_QUANTILES: [(&str, f64); 4] = [
    ("p50", 0.5),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

/// The metrics of a latency run: the primary one, p99 in microseconds (lower is better), and
/// the secondary ones. All come from the merged histogram of the run's threads
/// ([`latency_values`]); per-thread figures are in the histograms themselves.
pub fn latency_metrics() -> (MetricInfo, Vec<MetricInfo>) {
    let us = |name: &str| MetricInfo {
        name: name.to_string(),
        unit: "us".to_string(),
        higher_is_better: false,
    };
    let secondary = vec![
        us("max"),
        us("p99.99"),
        us("p99.9"),
        us("p50"),
        us("min"),
        us("mean"),
        MetricInfo {
            name: "samples".to_string(),
            unit: "count".to_string(),
            higher_is_better: true,
        },
        MetricInfo {
            name: "missed".to_string(),
            unit: "count".to_string(),
            higher_is_better: false,
        },
    ];
    (us("p99"), secondary)
}

/// The metric values of a latency run from its threads' histograms, in microseconds: p99 (the
/// primary metric), max, min, mean, p50, p99.9 and p99.99 where the sample count supports them
/// ([`supports_quantile`]), samples and missed periods. An error when there are no samples or
/// when the p99 lies among the overflows (beyond a fixed histogram range), since the run then
/// has no primary value.
pub fn latency_values(histograms: &[RunHistogram]) -> Result<BTreeMap<String, f64>, String> {
    let Some((first, rest)) = histograms.split_first() else {
        return Err("no latency histogram".into());
    };
    let mut all = first.clone();
    for h in rest {
        all.merge(h);
    }
    if all.count == 0 {
        return Err("no latency sample was taken".into());
    }
    let us = |ns: u64| ns as f64 / 1_000.0;
    let mut values = BTreeMap::new();
    for (name, q) in LATENCY_QUANTILES {
        if q != 0.99 && !supports_quantile(all.count, q) {
            continue;
        }
        match all.quantile_ns(q) {
            Some(ns) => {
                values.insert(name.to_string(), us(ns));
            }
            None if q == 0.99 => {
                return Err(format!(
                    "the p99 lies among the {} of {} samples beyond the histogram's range",
                    all.overflows, all.count
                ))
            }
            None => {}
        }
    }
    values.insert("max".into(), us(all.max_ns));
    if all.overflows < all.count {
        values.insert("min".into(), us(all.min_ns));
    }
    if let Some(mean) = all.mean_ns() {
        values.insert("mean".into(), mean / 1_000.0);
    }
    values.insert("samples".into(), all.count as f64);
    values.insert("missed".into(), all.missed as f64);
    Ok(values)
}

/// The quantiles reported of the per-call times of a kernel-function microbenchmark, with
/// their metric names: those the kbench write-up prints (50th, 90th, 95th) and the p99.
const CALL_QUANTILES: [(&str, f64); 4] = [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)];

impl RunHistogram {
    /// The median absolute deviation from the median, nanoseconds: the nearest-rank median of
    /// `|v - p50|` over every bucketed sample, each bucket taken at its highest value as
    /// [`RunHistogram::quantile_ns`] takes it. Overflows deviate beyond every bucket. `None`
    /// without samples or when the rank falls among the overflows.
    pub fn mad_ns(&self) -> Option<u64> {
        let median = self.quantile_ns(0.5)?;
        let mut deviations: Vec<(u64, u64)> = self
            .buckets
            .iter()
            .map(|&(v, n)| (v.min(self.max_ns).abs_diff(median), n))
            .collect();
        deviations.sort_unstable();
        let rank = self.count.div_ceil(2).max(1);
        let mut seen = 0u64;
        deviations.into_iter().find_map(|(d, n)| {
            seen += n;
            (seen >= rank).then_some(d)
        })
    }
}

/// The metric values of a run of per-call times (the `syscall` benchmark) from its threads'
/// histograms, in nanoseconds, as the kbench write-up prints them: min, max, count, p50, p90,
/// p95, p99 (each where the sample count supports it, [`supports_quantile`]; the p50 always)
/// and the MAD ([`RunHistogram::mad_ns`]). An error when there are no samples or when the
/// median lies among the overflows.
pub fn call_values(histograms: &[RunHistogram]) -> Result<BTreeMap<String, f64>, String> {
    let Some((first, rest)) = histograms.split_first() else {
        return Err("no histogram of calls".into());
    };
    let mut all = first.clone();
    for h in rest {
        all.merge(h);
    }
    if all.count == 0 {
        return Err("no call was timed".into());
    }
    let mut values = BTreeMap::new();
    for (name, q) in CALL_QUANTILES {
        if q != 0.5 && !supports_quantile(all.count, q) {
            continue;
        }
        match all.quantile_ns(q) {
            Some(ns) => {
                values.insert(name.to_string(), ns as f64);
            }
            None if q == 0.5 => {
                return Err(format!(
                    "the median lies among the {} of {} calls beyond the histogram's range",
                    all.overflows, all.count
                ))
            }
            None => {}
        }
    }
    if let Some(mad) = all.mad_ns() {
        values.insert("mad".into(), mad as f64);
    }
    values.insert("min".into(), all.min_ns as f64);
    values.insert("max".into(), all.max_ns as f64);
    values.insert("count".into(), all.count as f64);
    Ok(values)
}

/// Buckets in HdrHistogram's V2 + DEFLATE encoding.
pub fn encode(buckets: &[(u64, u64)]) -> Result<Vec<u8>, HistogramError> {
    let mut counts = empty_counts();
    for &(value, n) in buckets {
        counts
            .record_n(value, n)
            .map_err(|e| HistogramError(format!("bucket {value} ns beyond the range: {e:?}")))?;
    }
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&counts, &mut bytes)
        .map_err(|e| HistogramError(format!("cannot encode a histogram: {e}")))?;
    Ok(bytes)
}

/// Buckets from [`encode`]'s bytes. Counts encoded elsewhere, by another HdrHistogram
/// implementation at another precision, are re-bucketed at vernier's.
pub fn decode(bytes: &[u8]) -> Result<Vec<(u64, u64)>, HistogramError> {
    let decoded: Histogram<u64> = Deserializer::new()
        .deserialize(&mut Cursor::new(bytes))
        .map_err(|e| HistogramError(format!("not an HdrHistogram V2 encoding: {e:?}")))?;
    if decoded.sigfig() == SIGNIFICANT_DIGITS && decoded.low() == 1 {
        return Ok(buckets_of(&decoded));
    }
    let mut counts = empty_counts();
    counts
        .add(&decoded)
        .map_err(|e| HistogramError(format!("histogram beyond vernier's range: {e:?}")))?;
    Ok(buckets_of(&counts))
}

fn encode_buckets<S: SerdeSerializer>(buckets: &[(u64, u64)], s: S) -> Result<S::Ok, S::Error> {
    use base64::Engine as _;
    let bytes = encode(buckets).map_err(serde::ser::Error::custom)?;
    s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn decode_buckets<'de, D: SerdeDeserializer<'de>>(d: D) -> Result<Vec<(u64, u64)>, D::Error> {
    use base64::Engine as _;
    let text = String::deserialize(d)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|e| serde::de::Error::custom(format!("histogram counts are not base64: {e}")))?;
    decode(&bytes).map_err(serde::de::Error::custom)
}

impl fmt::Display for RunHistogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} thread {}{}: {} samples, min {} ns, max {} ns",
            self.quantity,
            self.thread,
            self.cpu.map(|c| format!(" (CPU {c})")).unwrap_or_default(),
            self.count,
            self.min_ns,
            self.max_ns
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A deterministic spread of latency-like values: mostly a few microseconds, a tail to
    /// milliseconds (a linear congruential sequence; no randomness in tests).
    fn samples(n: usize) -> Vec<u64> {
        let mut x: u64 = 12345;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let base = 2_000 + (x >> 33) % 8_000;
                match i % 1000 {
                    0 => base * 300,
                    1..=9 => base * 20,
                    _ => base,
                }
            })
            .collect()
    }

    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    fn histogram_of(values: &[u64]) -> RunHistogram {
        let mut r = Recording::new();
        for &v in values {
            r.record(v);
        }
        r.finish("latency", 0, Some(1))
    }

    #[test]
    fn quantiles_match_exact_ones_within_the_stated_precision() {
        let values = samples(200_000);
        let h = histogram_of(&values);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        for q in [0.01, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            let exact = exact_quantile(&sorted, q);
            let got = h.quantile_ns(q).unwrap();
            // At or above the exact value (the bucket's highest), by at most 1 us up to 10 ms
            // and by 0.01% beyond.
            let tolerance = if exact <= 10_000_000 {
                1_000
            } else {
                exact / 10_000
            };
            assert!(
                got >= exact && got - exact <= tolerance,
                "q={q}: histogram {got} vs exact {exact}"
            );
        }
        assert_eq!(h.quantile_ns(1.0), Some(*sorted.last().unwrap()));
        assert_eq!(h.min_ns, sorted[0]);
        assert_eq!(h.max_ns, *sorted.last().unwrap());
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64;
        assert!((h.mean_ns().unwrap() - mean).abs() < 1e-6 * mean);
        h.check().unwrap();
    }

    #[test]
    fn values_up_to_32_us_are_exact_and_1_us_holds_to_10_ms() {
        let h = empty_counts();
        assert_eq!(buckets_of(&h), vec![]);
        assert_eq!(h.highest_equivalent(32_767), 32_767);
        assert!(h.highest_equivalent(10_000_000) - h.lowest_equivalent(10_000_000) < 1_000);
        assert!(h.highest_equivalent(RANGE_NS) - h.lowest_equivalent(RANGE_NS) < RANGE_NS / 10_000);
    }

    #[test]
    fn overflows_count_but_hold_no_bucket_and_hide_the_quantiles_they_hold() {
        let mut r = Recording::new();
        r.record_n(5_000, 98);
        r.record_n(RANGE_NS + 1, 1);
        r.record_overflows(1);
        let h = r.finish("latency", 0, None);
        assert_eq!((h.count, h.overflows, h.max_index), (100, 2, Some(98)));
        assert_eq!(h.quantile_ns(0.98), Some(5_000));
        assert_eq!(h.quantile_ns(0.99), None);
        assert_eq!(h.max_ns, RANGE_NS + 1);
        h.check().unwrap();
    }

    #[test]
    fn encoding_round_trips_and_is_compact() {
        let h = histogram_of(&samples(100_000));
        let json = serde_json::to_string(&h).unwrap();
        let back: RunHistogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.in_buckets(), 100_000);
        let bytes = encode(&h.buckets).unwrap();
        assert!(bytes.len() < 64 * 1024, "{} bytes", bytes.len());
        assert!(decode(b"not a histogram").is_err());
    }

    #[test]
    fn counts_encoded_at_another_precision_are_widened() {
        let mut narrow: Histogram<u64> = Histogram::new_with_bounds(1, 1_000_000, 2).unwrap();
        narrow.record_n(40_000, 3).unwrap();
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&narrow, &mut bytes)
            .unwrap();
        let buckets = decode(&bytes).unwrap();
        assert_eq!(buckets.len(), 1);
        assert_eq!(buckets[0].1, 3);
        assert!(buckets[0].0.abs_diff(40_000) < 400, "{buckets:?}");
    }

    #[test]
    fn merge_adds_counts_and_keeps_the_larger_maximum_and_its_index() {
        let mut a = histogram_of(&[3_000, 4_000]);
        a.max_index = Some(1);
        let mut b = histogram_of(&[2_000, 9_000, 5_000]);
        b.max_index = Some(1);
        b.thread = 1;
        b.missed = 2;
        a.merge(&b);
        assert_eq!(
            (a.count, a.min_ns, a.max_ns, a.missed),
            (5, 2_000, 9_000, 2)
        );
        assert_eq!(a.sum_ns, 23_000);
        assert_eq!(a.quantile_ns(0.5), Some(4_000));
        a.check().unwrap();
    }

    #[test]
    fn check_finds_facts_that_contradict_the_counts() {
        let mut h = histogram_of(&[3_000, 4_000]);
        h.count = 3;
        assert!(h.check().unwrap_err().contains("count 3"));
        let mut h = histogram_of(&[3_000, 4_000]);
        h.max_ns = 3_500;
        assert!(h.check().unwrap_err().contains("outside"));
    }

    #[test]
    fn high_quantiles_need_ten_samples_beyond_them() {
        assert!(supports_quantile(1_000, 0.99));
        assert!(!supports_quantile(999, 0.99));
        assert!(supports_quantile(100_000, 0.9999));
        assert!(!supports_quantile(99_999, 0.9999));
        assert!(!supports_quantile(u64::MAX, 1.0));
    }

    #[test]
    fn latency_values_merge_the_threads_and_omit_unsupported_quantiles() {
        let a = histogram_of(&vec![4_000; 1_500]);
        let mut b = histogram_of(&[9_000, 2_500]);
        b.missed = 4;
        let values = latency_values(&[a, b]).unwrap();
        assert_eq!(values["p99"], 4.0);
        assert_eq!(values["p50"], 4.0);
        assert_eq!(values["max"], 9.0);
        assert_eq!(values["min"], 2.5);
        assert_eq!(values["samples"], 1_502.0);
        assert_eq!(values["missed"], 4.0);
        assert!((values["mean"] - (4.0 * 1_500.0 + 11.5) / 1_502.0).abs() < 1e-12);
        assert!(!values.contains_key("p99.9") && !values.contains_key("p99.99"));
        let (primary, secondary) = latency_metrics();
        assert_eq!(primary.name, "p99");
        for name in values.keys() {
            assert!(
                *name == primary.name || secondary.iter().any(|m| &m.name == name),
                "{name}"
            );
        }
    }

    #[test]
    fn a_p99_among_the_overflows_is_an_error() {
        let mut r = Recording::new();
        r.record_n(5_000, 90);
        r.record_overflows(10);
        let e = latency_values(&[r.finish(LATENCY, 0, None)]).unwrap_err();
        assert_eq!(
            e,
            "the p99 lies among the 10 of 100 samples beyond the histogram's range"
        );
        assert!(latency_values(&[]).is_err());
    }

    #[test]
    fn call_values_are_the_kbench_figures_and_the_mad_comes_from_the_buckets() {
        // 100 calls: 60 at 100 ns, 30 at 110, 9 at 200, 1 at 5000.
        let mut r = Recording::new();
        r.record_n(100, 60);
        r.record_n(110, 30);
        r.record_n(200, 9);
        r.record(5_000);
        let h = r.finish("call", 0, Some(0));
        let values = call_values(std::slice::from_ref(&h)).unwrap();
        assert_eq!(values["p50"], 100.0);
        assert_eq!(values["min"], 100.0);
        assert_eq!(values["max"], 5_000.0);
        assert_eq!(values["count"], 100.0);
        // Deviations: 60 x 0, 30 x 10, ...: the 50th is 0.
        assert_eq!(values["mad"], 0.0);
        assert_eq!(values["p90"], 110.0);
        assert!(!values.contains_key("p95"), "10 calls beyond it are needed");
        // Exact against a sorted list for a wider spread.
        let spread: Vec<u64> = (0..2_000u64).map(|i| 50 + (i * 7919) % 300).collect();
        let h = histogram_of(&spread);
        let mut sorted = spread.clone();
        sorted.sort_unstable();
        let median = exact_quantile(&sorted, 0.5);
        let mut dev: Vec<u64> = sorted.iter().map(|v| v.abs_diff(median)).collect();
        dev.sort_unstable();
        assert_eq!(h.mad_ns(), Some(exact_quantile(&dev, 0.5)));
        let values = call_values(&[h]).unwrap();
        assert_eq!(values["p90"], exact_quantile(&sorted, 0.9) as f64);
        assert_eq!(values["p99"], exact_quantile(&sorted, 0.99) as f64);
        assert!(call_values(&[]).is_err());
    }
}
