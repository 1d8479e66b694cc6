//! Monitor data of a configuration: the per-run summaries across its measured runs, and one
//! series of every run.

use std::collections::BTreeMap;

use vernier_model::StoredConfiguration;
use vernier_stats::{median, quantile};

use crate::format::sig;
use crate::table::columns;

/// Summary of one monitor key (`monitor.metric`) over the measured runs of a configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MonitorSummary {
    pub key: String,
    /// Runs that recorded the key.
    pub runs: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// Per-key summaries over the measured runs, sorted by key.
pub fn monitor_summaries(config: &StoredConfiguration) -> Vec<MonitorSummary> {
    let mut by_key: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for run in config.runs.iter().filter(|r| !r.warmup) {
        if let Some(m) = &run.monitors {
            for (k, v) in &m.summary {
                by_key.entry(k).or_default().push(*v);
            }
        }
    }
    by_key
        .into_iter()
        .filter_map(|(key, values)| {
            Some(MonitorSummary {
                key: key.to_string(),
                runs: values.len(),
                median: median(&values).ok()?,
                min: quantile(&values, 0.0).ok()?,
                max: quantile(&values, 1.0).ok()?,
            })
        })
        .collect()
}

/// What the monitors could not record (monitor or counter -> reason) and how they failed.
pub fn monitor_notes(config: &StoredConfiguration) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for run in config.runs.iter().filter(|r| !r.warmup) {
        if let Some(m) = &run.monitors {
            for (what, why) in &m.unsupported {
                let note = format!("unsupported: {what}: {why}");
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
            for f in &m.failures {
                notes.push(format!(
                    "run {}: monitor {} failed at {} ms: {}",
                    run.index + 1,
                    f.monitor,
                    f.t_ns / 1_000_000,
                    f.message
                ));
            }
        }
    }
    notes
}

/// The table of [`monitor_summaries`] as text.
pub fn monitor_text(config: &StoredConfiguration) -> String {
    let summaries = monitor_summaries(config);
    if summaries.is_empty() {
        return "  no monitor data\n".to_string();
    }
    let rows: Vec<[String; 4]> = summaries
        .iter()
        .map(|s| {
            [
                s.key.clone(),
                sig(s.median, 4),
                sig(s.min, 4),
                sig(s.max, 4),
            ]
        })
        .collect();
    let table = columns(&["monitor.metric", "median", "min", "max"], &rows, &[0]);
    let mut out = String::new();
    for (i, line) in table.lines().enumerate() {
        out.push_str("  ");
        out.push_str(line);
        if i == 0 {
            out.push_str("  (per run: counter deltas, gauge means)");
        }
        out.push('\n');
    }
    for note in monitor_notes(config) {
        out.push_str(&format!("  {note}\n"));
    }
    out
}

/// One series (`monitor.metric`) of every measured run: `run t_ms value` lines.
/// Returns `None` when no run recorded it.
pub fn series_text(config: &StoredConfiguration, key: &str) -> Option<String> {
    let mut out = String::new();
    for run in config.runs.iter().filter(|r| !r.warmup) {
        let Some(series) = run
            .monitors
            .as_ref()
            .and_then(|m| m.series.iter().find(|s| s.key() == key))
        else {
            continue;
        };
        for p in &series.points {
            out.push_str(&format!(
                "  {:>4}  {:>10.1}  {}\n",
                run.index + 1,
                p.t_ns as f64 / 1e6,
                sig(p.value, 6)
            ));
        }
    }
    (!out.is_empty()).then(|| format!("   run        t_ms  value\n{out}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use uuid::Uuid;
    use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
    use vernier_model::{ConfigurationRecord, MetricInfo, Options, RunRecord, Rusage};

    fn run(index: u32, ctxt: f64) -> RunRecord {
        let mut data = RunMonitorData {
            series: vec![MonitorSeries {
                monitor: "stat".into(),
                metric: "ctxt".into(),
                unit: "count".into(),
                kind: SeriesKind::Counter,
                points: vec![
                    MonitorPoint {
                        t_ns: 0,
                        value: 0.0,
                    },
                    MonitorPoint {
                        t_ns: 2_000_000,
                        value: ctxt,
                    },
                ],
            }],
            ..Default::default()
        };
        data.summary.insert("stat.ctxt".into(), ctxt);
        data.unsupported
            .insert("schedstat".into(), "/proc/schedstat is absent".into());
        RunRecord {
            id: Uuid::nil(),
            index,
            warmup: false,
            round: 0,
            preceding_executions: index,
            started_at_ns: 0,
            ended_at_ns: 1,
            values: BTreeMap::new(),
            rusage: Rusage::default(),
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            load_cpu_ns: None,
            histograms: Vec::new(),
            monitors: Some(data),
            setup_steps: vec![],
        }
    }

    fn config() -> StoredConfiguration {
        StoredConfiguration {
            record: ConfigurationRecord {
                id: Uuid::nil(),
                position: 0,
                benchmark: "pipe".into(),
                benchmark_version: "1".into(),
                options: Options::default(),
                metric: MetricInfo {
                    name: "round_trip".into(),
                    unit: "us".into(),
                    higher_is_better: false,
                },
                secondary_metrics: Vec::new(),
                loads: Vec::new(),
                stop_reason: None,
                converged: false,
                error: None,
            },
            runs: vec![run(0, 10.0), run(1, 30.0), run(2, 20.0)],
        }
    }

    #[test]
    fn summaries_over_runs() {
        let s = monitor_summaries(&config());
        assert_eq!(s.len(), 1);
        assert_eq!(
            (s[0].runs, s[0].median, s[0].min, s[0].max),
            (3, 20.0, 10.0, 30.0)
        );
        let text = monitor_text(&config());
        assert!(text.contains("stat.ctxt"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("  monitor.metric  median"), "{text}");
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["stat.ctxt", "20.00", "10.00", "30.00"],
            "{text}"
        );
        assert_eq!(text.matches("unsupported: schedstat").count(), 1, "{text}");
    }

    #[test]
    fn one_series_of_every_run() {
        let text = series_text(&config(), "stat.ctxt").unwrap();
        assert_eq!(text.lines().count(), 1 + 6);
        assert!(text.contains("2.0"), "{text}");
        assert!(series_text(&config(), "stat.nope").is_none());
    }
}
