//! Sessions built in memory, for the tests that store, import, copy, compare, analyse and
//! show whole sessions, and configurations with monitor data for the tests that summarize it.

use std::collections::BTreeMap;

use uuid::Uuid;
use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
use vernier_model::{
    ConfigurationRecord, Environment, MetricInfo, Options, RunRecord, Rusage, SessionInfo,
    SessionStatus, Settings, StopReason, StoredConfiguration, StoredSession,
};

/// A completed session under new ids, started at `started_at_ns` and ended 2,000 ns later,
/// with one configuration of the `command` benchmark (metric `time` in s, stopped at its
/// maximum of runs) and one run per value of `values`, run `i` from `started_at_ns + i` to
/// 1,000 ns later (with 7 ns of user CPU time, so that resource usage round-trips a value).
/// It ran on the host `box1` with 2 online CPUs, and has no tags.
pub fn stored_session(started_at_ns: i64, values: &[f64]) -> StoredSession {
    let environment = Environment {
        hostname: Some("box1".into()),
        online_cpus: Some(2),
        ..Default::default()
    };
    let runs = values
        .iter()
        .zip(0u32..)
        .map(|(v, i)| {
            let start = started_at_ns + i64::from(i);
            let mut run = run(i, start, start + 1_000, ("time", *v));
            run.rusage.user_cpu_ns = 7;
            run
        })
        .collect();
    StoredSession {
        info: SessionInfo {
            id: Uuid::new_v4(),
            started_at_ns,
            ended_at_ns: Some(started_at_ns + 2_000),
            status: SessionStatus::Completed,
            suite: None,
            specs: vec!["command".into()],
            tags: BTreeMap::new(),
            note: None,
            settings: Settings::default(),
            vernier_version: "0.1.0".into(),
            fingerprint: environment.fingerprint(),
            environment,
            findings: Vec::new(),
            setup: Vec::new(),
            monitors: Vec::new(),
        },
        configurations: vec![StoredConfiguration {
            runs,
            ..configuration("command", Options::default(), ("time", "s"))
        }],
    }
}

/// A series as [`monitored_configuration`] records it: monitor, metric, kind and the value of
/// the run.
pub type Series<'a> = (&'a str, &'a str, SeriesKind, f64);

/// The configuration of [`stored_session`] with one measured run per entry of `runs`, whose
/// monitors recorded that entry's series in order: each of unit `count`, with points at 0 and
/// 2 ms (a counter rising from 0 to the value, a gauge staying at it), and the value as the
/// run's summary of the key.
pub fn monitored_configuration(runs: &[Vec<Series<'_>>]) -> StoredConfiguration {
    let values = vec![1.0; runs.len()];
    let mut configuration = stored_session(0, &values).configurations.remove(0);
    for (run, series) in configuration.runs.iter_mut().zip(runs) {
        let mut data = RunMonitorData::default();
        for &(monitor, metric, kind, value) in series {
            let start = if kind == SeriesKind::Counter {
                0.0
            } else {
                value
            };
            let s = MonitorSeries {
                monitor: monitor.into(),
                metric: metric.into(),
                unit: "count".into(),
                kind,
                points: vec![
                    MonitorPoint {
                        t_ns: 0,
                        value: start,
                    },
                    MonitorPoint {
                        t_ns: 2_000_000,
                        value,
                    },
                ],
            };
            data.summary.insert(s.key(), value);
            data.series.push(s);
        }
        run.monitors = Some(data);
    }
    configuration
}

/// A configuration of `benchmark` with `options` and the primary metric (name, unit), lower
/// is better, stopped at its maximum of runs, without runs yet.
pub fn configuration(
    benchmark: &str,
    options: Options,
    metric: (&str, &str),
) -> StoredConfiguration {
    StoredConfiguration {
        record: ConfigurationRecord {
            id: Uuid::new_v4(),
            position: 0,
            benchmark: benchmark.into(),
            benchmark_version: "1".into(),
            options,
            metric: MetricInfo {
                name: metric.0.into(),
                unit: metric.1.into(),
                higher_is_better: false,
            },
            secondary_metrics: Vec::new(),
            loads: Vec::new(),
            stop_reason: Some(StopReason::MaxRuns),
            converged: false,
            error: None,
        },
        runs: Vec::new(),
        profiles: Vec::new(),
    }
}

/// A measured run (not a warmup) of number `index` (its count of preceding executions too) from
/// `started_at_ns` to `ended_at_ns`, with one value (metric, value), and nothing else recorded.
pub fn run(index: u32, started_at_ns: i64, ended_at_ns: i64, value: (&str, f64)) -> RunRecord {
    RunRecord {
        id: Uuid::new_v4(),
        index,
        warmup: false,
        round: 0,
        preceding_executions: index,
        started_at_ns,
        ended_at_ns,
        values: BTreeMap::from([(value.0.to_string(), value.1)]),
        rusage: Rusage::default(),
        foreign_cpu_ns: 0,
        controller_cpu_ns: 0,
        load_cpu_ns: None,
        histograms: Vec::new(),
        monitors: None,
        setup_steps: Vec::new(),
        setup_changed: Vec::new(),
    }
}
