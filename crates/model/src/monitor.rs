//! Monitor data recorded during runs: time series and per-run summaries.
//!
//! A monitor (for example `stat`, reading /proc/stat) is sampled by the controller while a run's
//! child process works. Every sample is kept as a point of a [`MonitorSeries`]; the summary of a
//! run is a pure function of those points ([`summarize_series`]), stored alongside so that
//! reports need not recompute it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How the points of a series are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SeriesKind {
    /// A monotonic counter (context switches, page faults, CPU time). Its points are the
    /// increase since the series' first sample, so the first point is 0 and the last is the
    /// change over the run.
    Counter,
    /// An instantaneous level (free memory, runnable tasks, PSI avg10).
    Gauge,
}

/// One sample of a series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MonitorPoint {
    /// Time of the sample, nanoseconds after the start of the run (CLOCK_MONOTONIC).
    pub t_ns: i64,
    pub value: f64,
}

/// The samples of one metric of one monitor during one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorSeries {
    /// The monitor, for example `stat`.
    pub monitor: String,
    /// The metric, for example `ctxt` or `irq.LOC`.
    pub metric: String,
    /// Unit of the values: `ns`, `us`, `bytes`, `pct`, `kHz`, `count`, ...
    pub unit: String,
    pub kind: SeriesKind,
    /// Points in time order.
    pub points: Vec<MonitorPoint>,
}

impl MonitorSeries {
    /// The key of this series in [`RunMonitorData::summary`]: `monitor.metric`.
    pub fn key(&self) -> String {
        format!("{}.{}", self.monitor, self.metric)
    }

    /// The summary value: the change over the run for a counter, the time-weighted mean for a
    /// gauge (each point holds until the next one, so an irregular sampling instant does not
    /// bias the mean). `None` without points.
    pub fn summary(&self) -> Option<f64> {
        let first = self.points.first()?;
        let last = self.points.last()?;
        match self.kind {
            SeriesKind::Counter => Some(last.value - first.value),
            SeriesKind::Gauge => {
                let span = last.t_ns - first.t_ns;
                if span <= 0 {
                    let n = self.points.len() as f64;
                    return Some(self.points.iter().map(|p| p.value).sum::<f64>() / n);
                }
                let weighted: f64 = self
                    .points
                    .windows(2)
                    .map(|w| w[0].value * (w[1].t_ns - w[0].t_ns) as f64)
                    .sum();
                Some(weighted / span as f64)
            }
        }
    }
}

/// A monitor that failed while the run was being sampled; the others went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonitorFailure {
    pub monitor: String,
    /// When it failed, nanoseconds after the start of the run.
    pub t_ns: i64,
    pub message: String,
}

/// Everything the monitors recorded during one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMonitorData {
    pub series: Vec<MonitorSeries>,
    /// `monitor.metric` -> change over the run (counters) or time-weighted mean (gauges).
    /// Monitors that failed during the run have no summary: their series stop early.
    pub summary: BTreeMap<String, f64>,
    /// Monitor (`schedstat`) or counter (`perf.cycles`) -> why it could not be recorded.
    pub unsupported: BTreeMap<String, String>,
    pub failures: Vec<MonitorFailure>,
    /// The scheduling the thread of the interval samples ran with: `fifo:1`, `nice:-5` or
    /// `default (...)`.
    pub sampler_priority: String,
    /// CPU time of the run's sampling, in the controller's thread and the interval thread
    /// (CLOCK_THREAD_CPUTIME_ID): the controller's cost.
    pub sampler_cpu_ns: i64,
    /// Number of sampling rounds (each samples the monitors that are due).
    pub rounds: u32,
}

impl RunMonitorData {
    /// The series of `monitor` and `metric`, if recorded.
    pub fn find(&self, monitor: &str, metric: &str) -> Option<&MonitorSeries> {
        self.series
            .iter()
            .find(|s| s.monitor == monitor && s.metric == metric)
    }
}

/// The summary of every series, keyed by `monitor.metric`, skipping the monitors in `failed`.
pub fn summarize_series<'a>(
    series: impl IntoIterator<Item = &'a MonitorSeries>,
    failed: &[&str],
) -> BTreeMap<String, f64> {
    series
        .into_iter()
        .filter(|s| !failed.contains(&s.monitor.as_str()))
        .filter_map(|s| Some((s.key(), s.summary()?)))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn series(kind: SeriesKind, points: &[(i64, f64)]) -> MonitorSeries {
        MonitorSeries {
            monitor: "m".into(),
            metric: "x".into(),
            unit: "count".into(),
            kind,
            points: points
                .iter()
                .map(|&(t_ns, value)| MonitorPoint { t_ns, value })
                .collect(),
        }
    }

    #[test]
    fn counter_summary_is_change_over_run() {
        let s = series(SeriesKind::Counter, &[(0, 0.0), (10, 4.0), (30, 9.0)]);
        assert_eq!(s.summary(), Some(9.0));
        assert_eq!(s.key(), "m.x");
        assert_eq!(series(SeriesKind::Counter, &[]).summary(), None);
    }

    #[test]
    fn gauge_summary_is_time_weighted() {
        // 2.0 holds for 10 ns, 4.0 for 30 ns: (20 + 120) / 40.
        let s = series(SeriesKind::Gauge, &[(0, 2.0), (10, 4.0), (40, 100.0)]);
        assert_eq!(s.summary(), Some(3.5));
        let same_instant = series(SeriesKind::Gauge, &[(5, 2.0), (5, 4.0)]);
        assert_eq!(same_instant.summary(), Some(3.0));
    }

    #[test]
    fn summarize_skips_failed_monitors_and_round_trips() {
        let mut a = series(SeriesKind::Counter, &[(0, 0.0), (1, 5.0)]);
        a.monitor = "ok".into();
        let mut b = a.clone();
        b.monitor = "bad".into();
        let summary = summarize_series([&a, &b], &["bad"]);
        assert_eq!(summary.len(), 1);
        assert_eq!(summary["ok.x"], 5.0);

        let data = RunMonitorData {
            series: vec![a],
            summary,
            sampler_priority: "fifo:1".into(),
            ..Default::default()
        };
        let json = serde_json::to_string(&data).unwrap();
        assert!(json.contains("\"kind\":\"counter\""));
        let back: RunMonitorData = serde_json::from_str(&json).unwrap();
        assert_eq!(back, data);
        assert!(back.find("ok", "x").is_some());
        assert!(back.find("ok", "y").is_none());
    }
}
