//! Sessions built in memory, for the tests that store, import, copy, compare, analyse and
//! show whole sessions, and configurations with monitor data for the tests that summarize it.

use std::collections::BTreeMap;

use uuid::Uuid;
use vernier_model::histogram::{latency_metrics, LATENCY};
use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
use vernier_model::{
    ConfigurationRecord, Environment, MetricInfo, Options, Recording, RunHistogram, RunRecord,
    Rusage, SessionInfo, SessionStatus, Settings, StopReason, StoredConfiguration, StoredSession,
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

/// `session` as it reads while it is still recording: its info running and not ended, its
/// first configuration's record without a stop reason.
pub fn still_running(session: &StoredSession) -> (SessionInfo, ConfigurationRecord) {
    let mut info = session.info.clone();
    info.status = SessionStatus::Running;
    info.ended_at_ns = None;
    let mut record = session.configurations[0].record.clone();
    record.stop_reason = None;
    (info, record)
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
        run.monitors = Some(Box::new(data));
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
        values: [(value.0, value.1)].into(),
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

/// A session's record without its configurations: a new id, completed, from 1 to 2 ns, spec
/// `mock`, vernier `0.1.0`, a default (empty) environment with the fingerprint
/// `0000000000000000`, default settings, and no suite, tags, note, findings, setup or monitors.
/// A test changes what it is about with struct update syntax:
/// `SessionInfo { status: SessionStatus::Running, ..session_info() }`.
pub fn session_info() -> SessionInfo {
    SessionInfo {
        id: Uuid::new_v4(),
        started_at_ns: 1,
        ended_at_ns: Some(2),
        status: SessionStatus::Completed,
        suite: None,
        specs: vec!["mock".into()],
        tags: BTreeMap::new(),
        note: None,
        settings: Settings::default(),
        vernier_version: "0.1.0".into(),
        environment: Environment::default(),
        fingerprint: "0000000000000000".into(),
        findings: Vec::new(),
        setup: Vec::new(),
        monitors: Vec::new(),
    }
}

/// A session of simulated values, as the analysis tests and examples compare them (see
/// [`synthetic_session`]).
pub struct SyntheticSession<'a> {
    values: &'a [f64],
    benchmark: &'a str,
    started_at_ns: Option<i64>,
    hostname: Option<&'a str>,
}

/// A completed session of one converged configuration of the benchmark `synthetic` (version
/// `1`, no options, metric `time` in s, lower is better) with one measured run per value of
/// `values`. By default the session runs from 0 to 1 ns and every run from 0 to 1 ms
/// ([`SyntheticSession::started_at`] spreads them in time); it has no specs, no tags, the
/// vernier version `0`, a default environment (no host name unless
/// [`SyntheticSession::hostname`]) and the fingerprint `f`, which a synthetic calibration
/// names to apply to it.
pub fn synthetic_session(values: &[f64]) -> SyntheticSession<'_> {
    SyntheticSession {
        values,
        benchmark: "synthetic",
        started_at_ns: None,
        hostname: None,
    }
}

impl<'a> SyntheticSession<'a> {
    /// The benchmark's name instead of `synthetic`.
    pub fn benchmark(mut self, name: &'a str) -> Self {
        self.benchmark = name;
        self
    }

    /// The session starts at `started_at_ns` and ends 2,000 ns later; run `i` runs from
    /// `started_at_ns + i` to 1,000 ns later.
    pub fn started_at(mut self, started_at_ns: i64) -> Self {
        self.started_at_ns = Some(started_at_ns);
        self
    }

    /// The environment's host name.
    pub fn hostname(mut self, name: &'a str) -> Self {
        self.hostname = Some(name);
        self
    }

    /// The session, its ids drawn from `ids` in this order: the runs', the session's, the
    /// configuration's (`Uuid::nil` for all of them, `Uuid::new_v4` for new ones).
    pub fn build(self, mut ids: impl FnMut() -> Uuid) -> StoredSession {
        let runs = self
            .values
            .iter()
            .zip(0u32..)
            .map(|(&v, i)| {
                let (start, end) = match self.started_at_ns {
                    None => (0, 1_000_000),
                    Some(at) => (at + i64::from(i), at + 1_000 + i64::from(i)),
                };
                RunRecord {
                    id: ids(),
                    ..run(i, start, end, ("time", v))
                }
            })
            .collect();
        let (started_at_ns, ended_at_ns) = match self.started_at_ns {
            None => (0, 1),
            Some(at) => (at, at + 2_000),
        };
        let info = SessionInfo {
            id: ids(),
            started_at_ns,
            ended_at_ns: Some(ended_at_ns),
            specs: Vec::new(),
            vernier_version: "0".into(),
            environment: Environment {
                hostname: self.hostname.map(Into::into),
                ..Environment::default()
            },
            fingerprint: "f".into(),
            ..session_info()
        };
        let mut configuration = configuration(self.benchmark, Options::default(), ("time", "s"));
        configuration.record.id = ids();
        configuration.record.stop_reason = Some(StopReason::Converged);
        configuration.record.converged = true;
        configuration.runs = runs;
        StoredSession {
            info,
            configurations: vec![configuration],
        }
    }
}

/// The record of a configuration as it begins: that of [`configuration`] (a new id, position
/// 0, version `1`) with no stop reason yet, which the store adds when it finishes.
pub fn begun_configuration(
    benchmark: &str,
    options: Options,
    metric: (&str, &str),
) -> ConfigurationRecord {
    ConfigurationRecord {
        stop_reason: None,
        ..configuration(benchmark, options, metric).record
    }
}

/// Tags (or any map of names to values) from `pairs`: `tags(&[("kernel", "6.18")])`.
pub fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A session that has just begun (running, no end yet) at 1,000 ns, of the spec `spec`,
/// tagged `kernel=<kernel>`, with the vernier version `test` and the fingerprint `f`;
/// otherwise as [`session_info`]. The command tests write these straight into a database.
pub fn begun_session(spec: &str, kernel: &str) -> SessionInfo {
    SessionInfo {
        started_at_ns: 1_000,
        ended_at_ns: None,
        status: SessionStatus::Running,
        specs: vec![spec.into()],
        tags: tags(&[("kernel", kernel)]),
        vernier_version: "test".into(),
        fingerprint: "f".into(),
        ..session_info()
    }
}

/// The latency histogram (metric `latency`) of one measuring thread on the CPU of the same
/// number, as the latency benchmark records it: the samples `samples_ns` in ns, then `missed`
/// missed periods.
pub fn latency_histogram_of(
    cpu: u32,
    samples_ns: impl IntoIterator<Item = u64>,
    missed: u64,
) -> RunHistogram {
    let mut r = Recording::new();
    for ns in samples_ns {
        r.record(ns);
    }
    r.miss(missed);
    r.finish(LATENCY, cpu, Some(cpu))
}

/// The record of a configuration of the latency benchmark as it begins: metric and secondary
/// metrics as the benchmark declares them, otherwise as [`begun_configuration`].
pub fn latency_configuration() -> ConfigurationRecord {
    let (metric, secondary_metrics) = latency_metrics();
    ConfigurationRecord {
        metric,
        secondary_metrics,
        ..begun_configuration("latency", Options::default(), ("latency", "ns"))
    }
}
