//! The sessions that the report site's tests show (the site crate's own tests of `Site`, and the
//! binary's of `vernier report`, `serve` and the browser, which store them first), and a page
//! read back as a browser's tokenizer reads it.
//!
//! Two kernels, A and B, each a `command` sweep over `level` 1, 2 and 4 with monitor series in
//! every run and a `latency` configuration with histograms of two CPUs. Kernel A's texts would
//! be markup if they reached a page or figure unescaped: its tag, note, command, kernel release,
//! host name, monitor keys and one configuration's stored error. Every text is one the store
//! accepts, so the binary's tests store these sessions as they are.

use std::collections::BTreeMap;

use html5gum::{Token, Tokenizer};
use uuid::Uuid;
use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
use vernier_model::{
    Environment, OptionValue, Options, RunHistogram, SessionInfo, SessionStatus, Settings,
    StoredConfiguration, StoredSession,
};

use crate::sessions::{configuration, latency_histogram_of, run};

/// Kernel A's tag value after `A`: an element that would run.
pub const SCRIPT: &str = "<script>alert('tag&amp;')</script>";
/// Kernel A's note and the host name of both kernels: an attribute that would close, and an
/// element with an event handler.
pub const IMG: &str = "\"><img src=x onerror=alert('note')>";
/// Kernel A's command and kernel release: the end of an SVG figure, then a script.
pub const SVG_END: &str = "</svg><script>alert('cmd')</script>";
/// The stored error of kernel A's last `command` configuration (level 4).
pub const ERROR: &str = "the command wrote </td><script>alert('error')</script>";

/// The start time of kernel A's session; B's is 100 s later.
pub const STARTED_AT_NS: i64 = 1_700_000_000_000_000_000;

/// Kernel A (hostile texts, times about 1, 2 and 4 ms) and kernel B (times about 1.5, 3 and
/// 6 ms), oldest first.
pub fn site_sessions() -> Vec<StoredSession> {
    vec![
        site_session("A", 1.0, STARTED_AT_NS, true),
        site_session("B", 1.5, STARTED_AT_NS + 100_000_000_000, false),
    ]
}

/// A completed session tagged `kernel=KERNEL`, started at `started_at_ns` and ended 1,000 ns
/// later: a `command` sweep over `level` 1, 2, 4 (8 measured runs each, run `i`'s time
/// `scale * level + 0.01 * i` ms, stopped at its maximum of runs), each run with a monitor
/// series that rises (`stat.ctxt`, by 1900 times the run's number) and two that never change
/// (`meminfo.MemTotal_bytes` at 8 GiB, `vmstat.pswpin` at 0) with their summaries; and a
/// `latency` configuration of 3 runs with histograms of CPUs 0 and 1. When `hostile`, the tag,
/// note, command, kernel release and monitor keys carry the texts of this module (the tag is
/// `A<script>...`), the runs store no monitor summaries (as when the monitor failed in every
/// run) and the configuration of level 4 stopped with the error [`ERROR`].
pub fn site_session(kernel: &str, scale: f64, started_at_ns: i64, hostile: bool) -> StoredSession {
    let (tag, note, cmd) = if hostile {
        (format!("{kernel}{SCRIPT}"), Some(IMG.to_string()), SVG_END)
    } else {
        (kernel.to_string(), None, "true")
    };
    let environment = Environment {
        kernel_release: Some(if hostile {
            format!("{kernel}{SVG_END}")
        } else {
            kernel.to_string()
        }),
        hostname: Some(IMG.to_string()),
        ..Environment::default()
    };
    let mut configurations: Vec<StoredConfiguration> = [1u64, 2, 4]
        .iter()
        .map(|&level| {
            let mut config = configuration(
                "command",
                Options(BTreeMap::from([
                    ("cmd".to_string(), OptionValue::Text(cmd.to_string())),
                    ("level".to_string(), OptionValue::UInt(level)),
                ])),
                ("time", "ms"),
            );
            config.runs = (0..8u32)
                .map(|i| {
                    let start = started_at_ns + i64::from(i) * 1_000_000_000;
                    let time = scale * level as f64 + f64::from(i) * 0.01;
                    let mut run = run(i, start, start + 500_000_000, ("time", time));
                    run.monitors = Some(Box::new(monitors(i, hostile)));
                    run
                })
                .collect();
            config.record.error = (hostile && level == 4).then(|| ERROR.to_string());
            config
        })
        .collect();
    let mut latency = configuration("latency", Options::default(), ("p99", "us"));
    latency.runs = (0..3u32)
        .map(|i| {
            let start = started_at_ns + i64::from(i) * 60_000_000_000;
            let mut run = run(i, start, start + 50_000_000_000, ("p99", 6.0));
            run.histograms = vec![
                latency_histogram(0, 2_000, 40 + u64::from(i)),
                latency_histogram(1, 2_000, 90),
            ];
            run
        })
        .collect();
    configurations.push(latency);
    for (position, c) in configurations.iter_mut().enumerate() {
        c.record.position = position as u32;
    }
    StoredSession {
        info: SessionInfo {
            id: Uuid::new_v4(),
            started_at_ns,
            ended_at_ns: Some(started_at_ns + 1_000),
            status: SessionStatus::Completed,
            suite: None,
            specs: vec![format!("command:cmd={cmd}")],
            tags: BTreeMap::from([("kernel".to_string(), tag)]),
            note,
            settings: Settings::default(),
            vernier_version: "test".into(),
            fingerprint: environment.fingerprint(),
            environment,
            findings: Vec::new(),
            setup: Vec::new(),
            monitors: Vec::new(),
        },
        configurations,
    }
}

/// The monitor data of run `i` of a `command` configuration: context switches that rise,
/// memory that never changes and swap-ins that never happen, 20 points 10 ms apart.
fn monitors(i: u32, hostile: bool) -> RunMonitorData {
    let series =
        |monitor: &str, metric: &str, unit: &str, kind, value: &dyn Fn(i64) -> f64| MonitorSeries {
            monitor: monitor.into(),
            metric: metric.into(),
            unit: unit.into(),
            kind,
            points: (0..20)
                .map(|p| MonitorPoint {
                    t_ns: p * 10_000_000,
                    value: value(p),
                })
                .collect(),
        };
    let series = vec![
        series(
            if hostile { "stat</svg>" } else { "stat" },
            if hostile { IMG } else { "ctxt" },
            "count",
            SeriesKind::Counter,
            &|p| (p * 100 * i64::from(i + 1)) as f64,
        ),
        series(
            "meminfo",
            if hostile { SCRIPT } else { "MemTotal_bytes" },
            "bytes",
            SeriesKind::Gauge,
            &|_| 8.0 * 1_073_741_824.0,
        ),
        series("vmstat", "pswpin", "count", SeriesKind::Counter, &|_| 0.0),
    ];
    // The run's summaries, as the sampler stores them.
    let summary = series
        .iter()
        .filter(|_| !hostile)
        .filter_map(|s| Some((s.key(), s.summary()?)))
        .collect();
    RunMonitorData {
        series,
        summary,
        ..Default::default()
    }
}

/// A latency histogram of one CPU: `n` samples of 4 to 6 us and one of `max_us`.
pub fn latency_histogram(cpu: u32, n: u64, max_us: u64) -> RunHistogram {
    let samples = (0..n).map(|i| 4_000 + (i * 37) % 2_000);
    latency_histogram_of(cpu, samples.chain([max_us * 1_000]), 0)
}

/// The start tags of an HTML or SVG document as a browser's tokenizer (html5gum, WHATWG) sees
/// them: each element's name and attributes.
pub fn start_tags(text: &str) -> Vec<(String, BTreeMap<String, String>)> {
    Tokenizer::new(text)
        .flatten()
        .filter_map(|t| match t {
            Token::StartTag(tag) => Some((
                String::from_utf8_lossy(&tag.name).into_owned(),
                tag.attributes
                    .iter()
                    .map(|(k, v)| {
                        (
                            String::from_utf8_lossy(k).into_owned(),
                            String::from_utf8_lossy(v).into_owned(),
                        )
                    })
                    .collect(),
            )),
            _ => None,
        })
        .collect()
}

/// A frame name of kernel A's profiles: the end of a flame graph's text, then a script.
pub const FRAME: &str = "</text><script>alert('frame')</script>";

/// `session` with three profiled runs of its `command` configurations of level 1 and 2, each
/// run's samples `share`% in `kmem_cache_alloc_[k]` (called from `sender`) and the rest in
/// `receiver` and a frame named [`FRAME`] (a third of the rest each), under `command`; the
/// runs take 10% longer than the timed ones, sampled by `cpu-clock` at 999 Hz.
pub fn with_profiles(mut session: StoredSession, share: u64) -> StoredSession {
    for config in session.configurations.iter_mut().filter(|c| {
        c.record.benchmark == "command"
            && matches!(
                c.record.options.0.get("level"),
                Some(OptionValue::UInt(1 | 2))
            )
    }) {
        let start = config.runs.last().map_or(0, |r| r.ended_at_ns);
        let duration = config
            .runs
            .first()
            .map_or(1_000, |r| r.ended_at_ns - r.started_at_ns);
        config.profiles = (0..3u32)
            .map(|index| {
                // A little variation between the runs, as sampling gives.
                let planted = share * 100 + u64::from(index) * 7;
                let rest = 10_000 - planted;
                let folded = format!(
                    "command;sender;kmem_cache_alloc_[k] {planted}\ncommand;receiver {}\n\
                     command;{FRAME} {}\n",
                    rest - rest / 3,
                    rest / 3
                );
                let started_at_ns = start + i64::from(index) * 2 * duration;
                vernier_model::ProfileRecord {
                    id: Uuid::new_v4(),
                    index,
                    event: "cpu-clock".into(),
                    frequency_hz: 999,
                    scope: vernier_model::ProfileScope::Process,
                    started_at_ns,
                    ended_at_ns: started_at_ns + duration * 11 / 10,
                    value: None,
                    stacks: vernier_model::FoldedStacks::from_folded(&folded).unwrap_or_default(),
                }
            })
            .collect();
    }
    session
}
