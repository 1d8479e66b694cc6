//! What the monitors recorded during a configuration's measured runs, summarized: per key the
//! median, minimum and maximum of the runs' values ([`monitor_summaries`]), and every key
//! recorded with whether it stayed constant ([`recorded_keys`]). `vernier-report` and the
//! report site present them.

use std::collections::BTreeMap;

use vernier_model::monitor::{MonitorSeries, SeriesKind};
use vernier_model::{RunRecord, StoredConfiguration};
use vernier_stats::{median, quantile};

/// Summary of one monitor key (`monitor.metric`) over the measured runs of a configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MonitorSummary {
    pub key: String,
    /// The series' unit (`ns`, `bytes`, `count`, ...) and kind, as the monitor recorded them.
    pub unit: String,
    pub kind: SeriesKind,
    /// Runs that recorded the key.
    pub runs: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// Per-key summaries over the measured runs, sorted by key.
pub fn monitor_summaries(config: &StoredConfiguration) -> Vec<MonitorSummary> {
    let mut by_key: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut units: BTreeMap<String, (&str, SeriesKind)> = BTreeMap::new();
    for run in config.runs.iter().filter(|r| !r.warmup) {
        if let Some(m) = &run.monitors {
            for (k, v) in &m.summary {
                by_key.entry(k).or_default().push(*v);
            }
            for s in &m.series {
                units.entry(s.key()).or_insert((s.unit.as_str(), s.kind));
            }
        }
    }
    by_key
        .into_iter()
        .filter_map(|(key, values)| {
            let (unit, kind) = units.get(key).copied().unwrap_or(("", SeriesKind::Gauge));
            summary_of(key, unit, kind, &values)
        })
        .collect()
}

/// The summary of one key over the measured runs of `configurations` together (the runs of
/// one configuration in several sessions, pooled as a tag selector pools them); `None` when
/// no run has a summary of it.
pub fn key_summary<'a>(
    configurations: impl IntoIterator<Item = &'a StoredConfiguration>,
    key: &str,
) -> Option<MonitorSummary> {
    let mut values = Vec::new();
    let mut unit_kind = None;
    for run in configurations
        .into_iter()
        .flat_map(|c| &c.runs)
        .filter(|r| !r.warmup)
    {
        let Some(m) = &run.monitors else { continue };
        if let Some(v) = m.summary.get(key) {
            values.push(*v);
        }
        if unit_kind.is_none() {
            unit_kind = m
                .series
                .iter()
                .find(|s| s.key() == key)
                .map(|s| (s.unit.as_str(), s.kind));
        }
    }
    let (unit, kind) = unit_kind.unwrap_or(("", SeriesKind::Gauge));
    summary_of(key, unit, kind, &values)
}

fn summary_of(key: &str, unit: &str, kind: SeriesKind, values: &[f64]) -> Option<MonitorSummary> {
    Some(MonitorSummary {
        key: key.to_string(),
        unit: unit.to_string(),
        kind,
        runs: values.len(),
        median: median(values).ok()?,
        min: quantile(values, 0.0).ok()?,
        max: quantile(values, 1.0).ok()?,
    })
}

/// The measured run of `configurations` whose summary of `key` is the median of theirs (the
/// lower of the two middle ones for an even number; a run without stored summaries by its
/// series' own), with its series of the key: the one run that stands for them all in a figure
/// of many sessions. `None` when no run recorded the key.
pub fn median_run<'a>(
    configurations: impl IntoIterator<Item = &'a StoredConfiguration>,
    key: &str,
) -> Option<(&'a RunRecord, &'a MonitorSeries)> {
    let mut runs: Vec<(f64, &RunRecord, &MonitorSeries)> = configurations
        .into_iter()
        .flat_map(|c| &c.runs)
        .filter(|r| !r.warmup)
        .filter_map(|r| {
            let m = r.monitors.as_ref()?;
            let series = m.series.iter().find(|s| s.key() == key)?;
            // A run whose monitors failed stored no summaries: its series' own.
            let value = m.summary.get(key).copied().or_else(|| series.summary())?;
            Some((value, r, series))
        })
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let middle = runs.len().checked_sub(1)? / 2;
    runs.get(middle).map(|&(_, r, s)| (r, s))
}

/// A monitor key as the measured runs of some configurations recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedKey {
    pub key: String,
    /// The series' unit and kind, as the monitor recorded them.
    pub unit: String,
    pub kind: SeriesKind,
    /// Measured runs that recorded the key.
    pub runs: usize,
    /// The one value of every point of every run, when they all have the same (a counter that
    /// never rose, stored as its increase 0; a gauge that never moved): its figure would be
    /// flat lines that say no more than this number.
    pub constant: Option<f64>,
}

/// Every series key that a measured run of `configurations` recorded, sorted by key.
pub fn recorded_keys<'a>(
    configurations: impl IntoIterator<Item = &'a StoredConfiguration>,
) -> Vec<RecordedKey> {
    // Per key: its record, the first value seen and whether every later point equalled it.
    let mut by_key: BTreeMap<String, (RecordedKey, Option<f64>, bool)> = BTreeMap::new();
    for run in configurations
        .into_iter()
        .flat_map(|c| &c.runs)
        .filter(|r| !r.warmup)
    {
        let Some(m) = &run.monitors else { continue };
        for s in &m.series {
            let (record, first, same) = by_key.entry(s.key()).or_insert_with(|| {
                let record = RecordedKey {
                    key: s.key(),
                    unit: s.unit.clone(),
                    kind: s.kind,
                    runs: 0,
                    constant: None,
                };
                (record, None, true)
            });
            record.runs += 1;
            for p in &s.points {
                match first {
                    None => *first = Some(p.value),
                    Some(v) => *same &= *v == p.value,
                }
            }
        }
    }
    by_key
        .into_values()
        .map(|(mut record, first, same)| {
            record.constant = first.filter(|_| same);
            record
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_testkit::monitored_configuration;
    use SeriesKind::{Counter, Gauge};

    #[test]
    fn summaries_over_runs() {
        let c = monitored_configuration(&[10.0, 30.0, 20.0].map(|ctxt| {
            vec![
                ("stat", "ctxt", Counter, ctxt),
                ("meminfo", "Cached_bytes", Gauge, ctxt * 1e6),
            ]
        }));
        let s = monitor_summaries(&c);
        let got: Vec<(&str, &str, SeriesKind, usize, f64, f64, f64)> = s
            .iter()
            .map(|s| {
                let (key, unit) = (s.key.as_str(), s.unit.as_str());
                (key, unit, s.kind, s.runs, s.median, s.min, s.max)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("meminfo.Cached_bytes", "count", Gauge, 3, 20e6, 10e6, 30e6),
                ("stat.ctxt", "count", Counter, 3, 20.0, 10.0, 30.0),
            ]
        );
    }

    #[test]
    fn a_key_pooled_over_configurations_and_its_median_run() {
        let a = monitored_configuration(
            &[10.0, 30.0].map(|ctxt| vec![("stat", "ctxt", Counter, ctxt)]),
        );
        let b = monitored_configuration(
            &[50.0, 20.0, 40.0].map(|ctxt| vec![("stat", "ctxt", Counter, ctxt)]),
        );
        let s = key_summary([&a, &b], "stat.ctxt").unwrap();
        assert_eq!((s.runs, s.median, s.min, s.max), (5, 30.0, 10.0, 50.0));
        assert_eq!(s.unit, "count");
        assert!(key_summary([&a, &b], "stat.intr").is_none());
        // Of 10, 20, 30, 40, 50 the median run is a's second (30); of four, the lower middle.
        let (run, series) = median_run([&a, &b], "stat.ctxt").unwrap();
        assert_eq!(run.monitors.as_ref().unwrap().summary["stat.ctxt"], 30.0);
        assert_eq!(series.key(), "stat.ctxt");
        let (run, _) = median_run([&b, &a], "stat.ctxt").unwrap();
        assert_eq!(run.monitors.as_ref().unwrap().summary["stat.ctxt"], 30.0);
        let (run, _) = median_run([&b], "stat.ctxt").unwrap();
        assert_eq!(run.monitors.as_ref().unwrap().summary["stat.ctxt"], 40.0);
        let (run, _) = median_run([&a], "stat.ctxt").unwrap();
        assert_eq!(run.monitors.as_ref().unwrap().summary["stat.ctxt"], 10.0);
        assert!(median_run([&a], "stat.intr").is_none());
    }

    #[test]
    fn keys_constant_over_every_run_carry_their_value() {
        let mut c = monitored_configuration(&[
            vec![
                ("vmstat", "pswpin", Counter, 0.0),
                ("meminfo", "MemTotal", Gauge, 5.0),
                ("stat", "procs_running", Gauge, 2.0),
                ("stat", "ctxt", Counter, 1.0),
            ],
            vec![
                ("vmstat", "pswpin", Counter, 0.0),
                ("meminfo", "MemTotal", Gauge, 5.0),
                ("stat", "procs_running", Gauge, 3.0),
                ("stat", "ctxt", Counter, 1.0),
            ],
            vec![("meminfo", "MemTotal", Gauge, 7.0)],
        ]);
        // A warmup run's different value does not count: only measured runs are drawn.
        c.runs[2].warmup = true;
        let keys = recorded_keys([&c]);
        let constant: Vec<(&str, usize, Option<f64>)> = keys
            .iter()
            .map(|k| (k.key.as_str(), k.runs, k.constant))
            .collect();
        assert_eq!(
            constant,
            [
                ("meminfo.MemTotal", 2, Some(5.0)),
                // Rose from 0 to 1 within each run.
                ("stat.ctxt", 2, None),
                // 2 in one run, 3 in the other: each run flat, the runs not alike.
                ("stat.procs_running", 2, None),
                ("vmstat.pswpin", 2, Some(0.0)),
            ]
        );
        // A warmup run alone records nothing that is summarized.
        c.runs.drain(..2);
        assert!(monitor_summaries(&c).is_empty() && recorded_keys([&c]).is_empty());
    }
}
