//! The database that the site's tests show: two sessions whose texts (in one of them) would be
//! markup if they reached a page unescaped, with a sweep, monitor series and latency
//! histograms, so that every kind of page and figure is made. Also reading a site back: its
//! files, and its start tags as a browser's tokenizer sees them.

#![allow(clippy::unwrap_used, dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use html5gum::{Token, Tokenizer};
use uuid::Uuid;
use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
use vernier_model::{
    ConfigurationRecord, Environment, MetricInfo, OptionValue, Options, Recorder, RunRecord,
    Rusage, SessionInfo, SessionStatus, Settings, StopReason,
};
use vernier_store::SqliteStore;

/// Text that would be markup if it reached a page unescaped.
pub const SCRIPT: &str = "<script>alert('tag')</script>";
pub const IMG: &str = "\"><img src=x onerror=alert('note')>";
pub const SVG_END: &str = "</svg><script>alert('cmd')</script>";
/// The stored error of the hostile session's last `command` configuration.
pub const ERROR: &str = "the command wrote </td><script>alert('error')</script>";

/// A latency histogram of one CPU: `n` samples of 4-6 us and one of `max_us`.
pub fn thread(cpu: u32, n: u64, max_us: u64) -> vernier_model::RunHistogram {
    let mut r = vernier_model::Recording::new();
    for i in 0..n {
        r.record(4_000 + (i * 37) % 2_000);
    }
    r.record(max_us * 1_000);
    r.finish(vernier_model::histogram::LATENCY, cpu, Some(cpu))
}

/// Writes a session into the database at `path`: a `command` sweep over `level` 1, 2, 4
/// whose command, tag, note, kernel and monitor key carry `hostile` text, each run with a
/// monitor series (and its summary, `stat.ctxt` increasing by 1900 times the run's number, unless
/// `hostile`), and a `latency` configuration with histograms of two CPUs.
pub fn record(path: &Path, kernel: &str, scale: f64, started_at_ns: i64, hostile: bool) -> Uuid {
    let mut store = SqliteStore::open(path).unwrap();
    let id = Uuid::new_v4();
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
    store
        .begin_session(&SessionInfo {
            id,
            started_at_ns,
            ended_at_ns: None,
            status: SessionStatus::Running,
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
        })
        .unwrap();
    let monitor = if hostile { "stat</svg>" } else { "stat" };
    let metric_name = if hostile { IMG } else { "ctxt" };
    let mut position = 0;
    for level in [1u64, 2, 4] {
        let record = ConfigurationRecord {
            id: Uuid::new_v4(),
            position,
            benchmark: "command".into(),
            benchmark_version: "1".into(),
            options: Options(BTreeMap::from([
                ("cmd".to_string(), OptionValue::Text(cmd.to_string())),
                ("level".to_string(), OptionValue::UInt(level)),
            ])),
            metric: MetricInfo {
                name: "time".into(),
                unit: "ms".into(),
                higher_is_better: false,
            },
            secondary_metrics: Vec::new(),
            loads: Vec::new(),
            stop_reason: None,
            converged: false,
            error: None,
        };
        position += 1;
        store.add_configuration(id, &record).unwrap();
        for i in 0..8u32 {
            let start = started_at_ns + i64::from(i) * 1_000_000_000;
            let points = (0..20)
                .map(|p| MonitorPoint {
                    t_ns: p * 10_000_000,
                    value: (p * 100 * i64::from(i + 1)) as f64,
                })
                .collect();
            let run = RunRecord {
                id: Uuid::new_v4(),
                index: i,
                warmup: false,
                round: 0,
                preceding_executions: i,
                started_at_ns: start,
                ended_at_ns: start + 500_000_000,
                values: BTreeMap::from([(
                    "time".to_string(),
                    scale * level as f64 + f64::from(i) * 0.01,
                )]),
                histograms: Vec::new(),
                rusage: Rusage::default(),
                foreign_cpu_ns: 0,
                controller_cpu_ns: 0,
                load_cpu_ns: None,
                monitors: Some({
                    // Context switches that rise, memory that never changes and swap-ins
                    // that never happen: the last two constant over every run.
                    let flat =
                        |monitor: &str, metric: &str, unit: &str, kind, value| MonitorSeries {
                            monitor: monitor.into(),
                            metric: metric.into(),
                            unit: unit.into(),
                            kind,
                            points: (0..20)
                                .map(|p| MonitorPoint {
                                    t_ns: p * 10_000_000,
                                    value,
                                })
                                .collect(),
                        };
                    let series = vec![
                        MonitorSeries {
                            monitor: monitor.into(),
                            metric: metric_name.into(),
                            unit: "count".into(),
                            kind: SeriesKind::Counter,
                            points,
                        },
                        flat(
                            "meminfo",
                            if hostile { SCRIPT } else { "MemTotal_bytes" },
                            "bytes",
                            SeriesKind::Gauge,
                            8.0 * 1_073_741_824.0,
                        ),
                        flat("vmstat", "pswpin", "count", SeriesKind::Counter, 0.0),
                    ];
                    // The run's summaries, as the sampler stores them; the hostile session
                    // has none, as when its monitor failed during every run.
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
                }),
                setup_steps: Vec::new(),
                setup_changed: Vec::new(),
            };
            store.add_run(record.id, &run).unwrap();
        }
        let error = (hostile && level == 4).then_some(ERROR);
        store
            .finish_configuration(record.id, StopReason::MaxRuns, false, error)
            .unwrap();
    }
    let record = ConfigurationRecord {
        id: Uuid::new_v4(),
        position,
        benchmark: "latency".into(),
        benchmark_version: "1".into(),
        options: Options(BTreeMap::new()),
        metric: MetricInfo {
            name: "p99".into(),
            unit: "us".into(),
            higher_is_better: false,
        },
        secondary_metrics: Vec::new(),
        loads: Vec::new(),
        stop_reason: None,
        converged: false,
        error: None,
    };
    store.add_configuration(id, &record).unwrap();
    for i in 0..3u32 {
        let start = started_at_ns + i64::from(i) * 60_000_000_000;
        let run = RunRecord {
            id: Uuid::new_v4(),
            index: i,
            warmup: false,
            round: 0,
            preceding_executions: i,
            started_at_ns: start,
            ended_at_ns: start + 50_000_000_000,
            values: BTreeMap::from([("p99".to_string(), 6.0)]),
            histograms: vec![thread(0, 2_000, 40 + u64::from(i)), thread(1, 2_000, 90)],
            rusage: Rusage::default(),
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            load_cpu_ns: None,
            monitors: None,
            setup_steps: Vec::new(),
            setup_changed: Vec::new(),
        };
        store.add_run(record.id, &run).unwrap();
    }
    store
        .finish_configuration(record.id, StopReason::MaxRuns, false, None)
        .unwrap();
    store
        .finish_session(id, SessionStatus::Completed, started_at_ns + 1_000)
        .unwrap();
    id
}

/// A database of two sessions, kernel A (its texts hostile) and kernel B.
pub fn database(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    record(&db, "A", 1.0, 1_700_000_000_000_000_000, true);
    record(&db, "B", 1.5, 1_700_000_100_000_000_000, false);
    db
}

/// Every file of the directory `root`, by its path relative to it.
pub fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// The start tags of a document as a browser's tokenizer sees them: name and attributes.
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

/// A `vernier serve` on a free port of 127.0.0.1, killed when dropped (also when a test fails).
pub struct Server(Child);

impl Server {
    /// Starts `vernier serve --port 0 ARGS` on `db`; returns it with its URL
    /// (`http://127.0.0.1:PORT/`), read from its first line.
    pub fn start(db: &Path, args: &[&str]) -> (Server, String) {
        Server::start_with(vernier_testkit::vernier_command(db), args)
    }

    /// [`Server::start`] from `vernier`, the binary on its database.
    pub fn start_with(mut vernier: Command, args: &[&str]) -> (Server, String) {
        let mut child = vernier
            .args(["serve", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let server = Server(child);
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        (server, url)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// GET `path` from `address`: the status and the body.
pub fn get(address: &str, path: &str) -> (u16, Vec<u8>) {
    request(
        address,
        &format!("GET /{path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"),
    )
}

/// Sends the request `head` to `address`: the status and the body of the answer.
pub fn request(address: &str, head: &str) -> (u16, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    // Long enough for a site read from a large database; a server that never answers fails.
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, response[split + 4..].to_vec())
}
