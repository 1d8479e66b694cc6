//! Sessions built in memory, for the store's tests that import, copy and compare whole
//! sessions, and configurations with monitor data for the tests that summarize and show it.

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
        .map(|(v, i)| RunRecord {
            id: Uuid::new_v4(),
            index: i,
            warmup: false,
            round: 0,
            preceding_executions: i,
            started_at_ns: started_at_ns + i64::from(i),
            ended_at_ns: started_at_ns + 1_000 + i64::from(i),
            values: BTreeMap::from([("time".to_string(), *v)]),
            rusage: Rusage {
                user_cpu_ns: 7,
                ..Default::default()
            },
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            load_cpu_ns: None,
            histograms: Vec::new(),
            monitors: None,
            setup_steps: Vec::new(),
            setup_changed: Vec::new(),
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
            record: ConfigurationRecord {
                id: Uuid::new_v4(),
                position: 0,
                benchmark: "command".into(),
                benchmark_version: "1".into(),
                options: Options::default(),
                metric: MetricInfo {
                    name: "time".into(),
                    unit: "s".into(),
                    higher_is_better: false,
                },
                secondary_metrics: Vec::new(),
                loads: Vec::new(),
                stop_reason: Some(StopReason::MaxRuns),
                converged: false,
                error: None,
            },
            runs,
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
