//! Latency distributions of a configuration: per measurement thread (and its CPU), the
//! histograms of all measured runs merged, with the figures real-time engineers quote
//! (RESEARCH.md 1.7: the worst case first, high percentiles only where the sample count
//! supports them, overflows, missed periods), and the series of per-run maxima, whose maximum
//! is the headline of continuous monitoring (OSADL: "the maximum of consecutive 5-min maxima").

use std::collections::BTreeMap;

use serde::Serialize;
use vernier_model::histogram::supports_quantile;
use vernier_model::{RunHistogram, StoredConfiguration};

/// A percentile of a distribution, or why it has none.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "status", content = "us")]
pub enum Percentile {
    /// The value, microseconds.
    Value(f64),
    /// Fewer than 10 / (1 - q) samples: the quantile would be one of the few largest.
    TooFewSamples,
    /// The rank falls among the samples beyond the histogram's range.
    BeyondRange,
}

impl Percentile {
    fn of(h: &RunHistogram, q: f64) -> Self {
        if !supports_quantile(h.count, q) {
            return Percentile::TooFewSamples;
        }
        match h.quantile_ns(q) {
            Some(ns) => Percentile::Value(us(ns)),
            None => Percentile::BeyondRange,
        }
    }

    pub fn value(self) -> Option<f64> {
        match self {
            Percentile::Value(v) => Some(v),
            _ => None,
        }
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

/// One measurement thread over all measured runs of a configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadLatency {
    pub thread: u32,
    /// The CPU the thread was pinned to (the same in every run, or the first run's).
    pub cpu: Option<u32>,
    pub samples: u64,
    pub min_us: f64,
    pub mean_us: Option<f64>,
    pub p50: Percentile,
    pub p99: Percentile,
    pub p99_9: Percentile,
    pub p99_99: Percentile,
    pub max_us: f64,
    /// The measured run (index among measured runs) and the sample within it of the maximum.
    pub max_run: usize,
    pub max_index: Option<u64>,
    /// Periods that passed without a sample; `None` when the source does not count them
    /// (cyclictest skips a late period silently: its runs store no `missed` value).
    pub missed: Option<u64>,
    pub overflows: u64,
    /// The merged distribution, for plots (not in JSON: `vernier export` has the histograms).
    #[serde(skip)]
    pub histogram: RunHistogram,
}

impl ThreadLatency {
    /// `CPU n`, or `thread n` for a thread that was not pinned.
    pub fn label(&self) -> String {
        match self.cpu {
            Some(c) => format!("CPU{c}"),
            None => format!("thread {}", self.thread),
        }
    }
}

/// The maximum of one measured run (an interval of a monitoring session).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IntervalMax {
    pub started_at_ns: i64,
    pub ended_at_ns: i64,
    pub max_us: f64,
    pub cpu: Option<u32>,
}

/// The latency distributions of a configuration's measured runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Measured runs with histograms.
    pub runs: usize,
    pub threads: Vec<ThreadLatency>,
    /// Each measured run's maximum over its threads, in run order.
    pub interval_maxima: Vec<IntervalMax>,
    /// The maximum of them: the worst case of the configuration.
    pub max_of_maxima_us: Option<f64>,
    /// Where the worst case happened and what its CPU did then.
    pub worst: Option<WorstCase>,
    /// The traced samples (`latency:trace=US`): each measured run's first sample above the
    /// threshold, explained from the kernel's events, in run order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<TracedLatency>,
}

/// One traced sample of a measured run and what the kernel's events say about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TracedLatency {
    /// The measured run (index among measured runs, from 0).
    pub run: usize,
    pub thread: u32,
    pub cpu: Option<u32>,
    pub analysis: crate::trace::TraceAnalysis,
}

impl LatencySummary {
    /// The traced sample with the largest latency.
    pub fn worst_trace(&self) -> Option<&TracedLatency> {
        self.traces
            .iter()
            .max_by_key(|t| (t.analysis.latency_ns, std::cmp::Reverse(t.run)))
    }
}

/// What the CPU of the worst case did during the run that had it, next to the other runs: the
/// per-CPU monitor summaries (interrupts, softirqs by kind, idle-state entries and residency:
/// keys with a `cpuN.` part) of that run and their median over the configuration's other
/// measured runs, so that a spike can be read against what was usual.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorstCase {
    pub max_us: f64,
    pub cpu: Option<u32>,
    /// The measured run (index among measured runs, from 0).
    pub run: usize,
    /// The index of the maximum's sample in its run.
    pub max_index: Option<u64>,
    /// When in the run the maximum was taken at the earliest: its sample index times the
    /// period, seconds (periods skipped before it put it later).
    pub offset_s: Option<f64>,
    /// `monitor.metric` (with the CPU part) -> (that run's value, the other runs' median).
    pub activity: Vec<(String, f64, Option<f64>)>,
}

/// The worst case of `summary` (from [`latency_summary`] of `config`) and what its CPU did,
/// from the runs' monitor data (empty `activity` when it was not loaded or not recorded).
/// `period_us` is the measurement's period, for the time within the run.
pub fn worst_case(
    config: &StoredConfiguration,
    summary: &LatencySummary,
    period_us: Option<f64>,
) -> Option<WorstCase> {
    let worst = summary
        .threads
        .iter()
        .filter(|t| t.samples > 0)
        .max_by(|a, b| a.max_us.total_cmp(&b.max_us))?;
    let part = worst.cpu.map(|c| format!(".cpu{c}."));
    // The monitor data of the other measured runs: of a long session only the runs around the
    // worst one carry it (`MONITORED_RUNS` of vernier-app's `load_for_show`).
    let mut data = None;
    let mut others_data = Vec::new();
    for (i, run) in config.runs.iter().filter(|r| !r.warmup).enumerate() {
        match (i == worst.max_run, run.monitors.as_deref()) {
            (true, monitors) => data = monitors,
            (false, Some(monitors)) => others_data.push(monitors),
            (false, None) => {}
        }
    }
    let mut activity = Vec::new();
    if let (Some(part), Some(data)) = (&part, data) {
        for (key, &value) in data
            .summary
            .iter()
            .filter(|(k, _)| k.contains(part.as_str()))
        {
            let others: Vec<f64> = others_data
                .iter()
                .filter_map(|d| d.summary.get(key).copied())
                .collect();
            let median = vernier_stats::median(&others).ok();
            // What stayed at zero in that run and the others explains nothing.
            if value != 0.0 || median.is_some_and(|m| m != 0.0) {
                activity.push((key.clone(), value, median));
            }
        }
    }
    Some(WorstCase {
        max_us: worst.max_us,
        cpu: worst.cpu,
        run: worst.max_run,
        max_index: worst.max_index,
        offset_s: worst
            .max_index
            .zip(period_us)
            .map(|(i, p)| i as f64 * p / 1e6),
        activity,
    })
}

/// The latency summary of `config`, from its measured runs' histograms of `quantity`; `None`
/// when no measured run has one (the histograms were not loaded, or the benchmark takes no
/// distributions).
pub fn latency_summary(config: &StoredConfiguration, quantity: &str) -> Option<LatencySummary> {
    let mut merged: BTreeMap<u32, (RunHistogram, usize)> = BTreeMap::new();
    let mut interval_maxima = Vec::new();
    let mut traces = Vec::new();
    let measured = config.runs.iter().filter(|r| !r.warmup);
    for (run_index, run) in measured.enumerate() {
        let mut worst: Option<(u64, Option<u32>)> = None;
        for h in run.histograms.iter().filter(|h| h.quantity == quantity) {
            if let Some(trace) = &h.trace {
                traces.push(TracedLatency {
                    run: run_index,
                    thread: h.thread,
                    cpu: h.cpu,
                    analysis: crate::trace::analyze_trace(trace),
                });
            }
            if h.count > 0 && worst.is_none_or(|(max, _)| h.max_ns > max) {
                worst = Some((h.max_ns, h.cpu));
            }
            match merged.get_mut(&h.thread) {
                None => {
                    merged.insert(h.thread, (h.clone(), run_index));
                }
                Some((all, max_run)) => {
                    if h.count > 0 && (all.count == 0 || h.max_ns > all.max_ns) {
                        *max_run = run_index;
                    }
                    all.merge(h);
                }
            }
        }
        if let Some((max_ns, cpu)) = worst {
            interval_maxima.push(IntervalMax {
                started_at_ns: run.started_at_ns,
                ended_at_ns: run.ended_at_ns,
                max_us: us(max_ns),
                cpu,
            });
        }
    }
    if merged.is_empty() {
        return None;
    }
    let counts_missed = config
        .runs
        .iter()
        .filter(|r| !r.warmup)
        .any(|r| r.values.contains_key("missed"));
    let threads = merged
        .into_values()
        .map(|(h, max_run)| ThreadLatency {
            thread: h.thread,
            cpu: h.cpu,
            samples: h.count,
            min_us: us(h.min_ns),
            mean_us: h.mean_ns().map(|m| m / 1_000.0),
            p50: Percentile::of(&h, 0.5),
            p99: Percentile::of(&h, 0.99),
            p99_9: Percentile::of(&h, 0.999),
            p99_99: Percentile::of(&h, 0.9999),
            max_us: us(h.max_ns),
            max_run,
            max_index: h.max_index,
            missed: counts_missed.then_some(h.missed),
            overflows: h.overflows,
            histogram: h,
        })
        .collect();
    let max_of_maxima_us = interval_maxima
        .iter()
        .map(|m| m.max_us)
        .fold(None, |acc: Option<f64>, m| {
            Some(acc.map_or(m, |a| a.max(m)))
        });
    let mut summary = LatencySummary {
        runs: interval_maxima.len(),
        threads,
        interval_maxima,
        max_of_maxima_us,
        worst: None,
        traces,
    };
    // The period: the `interval` option in microseconds (latency, imported cyclictest).
    let period_us = match config.record.options.0.get("interval") {
        Some(vernier_model::OptionValue::UInt(us)) => Some(*us as f64),
        Some(vernier_model::OptionValue::Float(us)) => Some(*us),
        _ => None,
    };
    summary.worst = worst_case(config, &summary, period_us);
    Some(summary)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use uuid::Uuid;
    use vernier_model::histogram::LATENCY;
    use vernier_model::{RunRecord, Rusage};
    use vernier_testkit::{latency_configuration, latency_histogram_of};

    fn thread(thread: u32, base_ns: u64, n: u64, spike_ns: u64) -> RunHistogram {
        let samples = (0..n).map(|i| base_ns + i % 500);
        latency_histogram_of(thread, samples.chain([spike_ns]), 1)
    }

    fn run(index: u32, warmup: bool, histograms: Vec<RunHistogram>) -> RunRecord {
        RunRecord {
            id: Uuid::new_v4(),
            index,
            warmup,
            round: 0,
            preceding_executions: index,
            started_at_ns: i64::from(index) * 300_000_000_000,
            ended_at_ns: i64::from(index + 1) * 300_000_000_000,
            // As the latency benchmark stores them: the run's missed periods among its values.
            values: BTreeMap::from([(
                "missed".to_string(),
                histograms.iter().map(|h| h.missed as f64).sum(),
            )])
            .into(),
            histograms,
            rusage: Rusage::default(),
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            load_cpu_ns: None,
            monitors: None,
            setup_steps: Vec::new(),
            setup_changed: Vec::new(),
        }
    }

    #[test]
    fn threads_merge_over_measured_runs_and_the_worst_interval_is_the_headline() {
        let config = StoredConfiguration {
            record: latency_configuration(),
            runs: vec![
                // A warmup's spike is not part of the result.
                run(0, true, vec![thread(0, 3_000, 1_000, 900_000)]),
                run(
                    0,
                    false,
                    vec![
                        thread(0, 3_000, 1_000, 40_000),
                        thread(1, 4_000, 1_000, 20_000),
                    ],
                ),
                run(
                    1,
                    false,
                    vec![
                        thread(0, 3_000, 1_000, 10_000),
                        thread(1, 4_000, 1_000, 70_000),
                    ],
                ),
            ],
            profiles: Vec::new(),
        };
        let s = latency_summary(&config, LATENCY).unwrap();
        assert_eq!(s.runs, 2);
        assert_eq!(s.threads.len(), 2);
        let cpu1 = &s.threads[1];
        assert_eq!(
            (cpu1.label(), cpu1.samples, cpu1.missed),
            ("CPU1".to_string(), 2_002, Some(2))
        );
        // Runs of a source that does not count missed periods (cyclictest) store no `missed`:
        // unknown, not 0.
        let mut uncounted = config.clone();
        for r in &mut uncounted.runs {
            r.values.remove("missed");
        }
        let s2 = latency_summary(&uncounted, LATENCY).unwrap();
        assert!(s2.threads.iter().all(|t| t.missed.is_none()));
        assert_eq!(
            (cpu1.max_us, cpu1.max_run, cpu1.max_index),
            (70.0, 1, Some(1_000))
        );
        assert_eq!(cpu1.min_us, 4.0);
        assert_eq!(cpu1.p50, Percentile::Value(4.25));
        assert_eq!(cpu1.p99, Percentile::Value(4.495));
        assert_eq!(cpu1.p99_9, Percentile::TooFewSamples);
        let maxima: Vec<(f64, Option<u32>)> = s
            .interval_maxima
            .iter()
            .map(|m| (m.max_us, m.cpu))
            .collect();
        assert_eq!(maxima, [(40.0, Some(0)), (70.0, Some(1))]);
        assert_eq!(s.max_of_maxima_us, Some(70.0));
        assert!(latency_summary(&config, "other").is_none());
    }

    #[test]
    fn the_worst_case_comes_with_what_its_cpu_did_against_the_other_runs() {
        let monitors = |timer: f64| {
            Some(vernier_model::monitor::RunMonitorData {
                summary: BTreeMap::from([
                    ("softirqs.cpu1.TIMER".to_string(), timer),
                    ("softirqs.cpu0.TIMER".to_string(), 1.0),
                    ("stat.ctxt".to_string(), 5.0),
                ]),
                ..Default::default()
            })
        };
        let mut runs = vec![
            run(
                0,
                false,
                vec![
                    thread(0, 3_000, 1_000, 9_000),
                    thread(1, 3_000, 1_000, 9_000),
                ],
            ),
            run(
                1,
                false,
                vec![
                    thread(0, 3_000, 1_000, 9_000),
                    thread(1, 3_000, 1_000, 80_000),
                ],
            ),
            run(
                2,
                false,
                vec![
                    thread(0, 3_000, 1_000, 9_000),
                    thread(1, 3_000, 1_000, 9_000),
                ],
            ),
        ];
        for (r, timer) in runs.iter_mut().zip([100.0, 900.0, 120.0]) {
            r.monitors = monitors(timer).map(Box::new);
        }
        let config = StoredConfiguration {
            record: latency_configuration(),
            runs,
            profiles: Vec::new(),
        };
        let summary = latency_summary(&config, LATENCY).unwrap();
        assert_eq!(
            summary.worst.as_ref().unwrap().offset_s,
            None,
            "no interval option"
        );
        let worst = worst_case(&config, &summary, Some(200.0)).unwrap();
        assert_eq!((worst.max_us, worst.cpu, worst.run), (80.0, Some(1), 1));
        // The spike is the 1,001st sample: 1,000 periods of 200 us in.
        assert_eq!(worst.offset_s, Some(0.2));
        assert_eq!(
            worst.activity,
            [("softirqs.cpu1.TIMER".to_string(), 900.0, Some(110.0))]
        );
    }
}
