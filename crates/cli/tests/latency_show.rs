//! `show` and `compare` of latency results: per-CPU figures, the terminal histogram, the
//! maximum of interval maxima, and the secondary metrics, on sessions written straight into a
//! database (the benchmark and the importers have tests of their own).

#![allow(clippy::unwrap_used)]

use std::path::Path;

use uuid::Uuid;
use vernier_model::histogram::{latency_values, DMA_LATENCY_HELD, MEMORY_LOCKED};
use vernier_model::{Recorder, RunRecord, Rusage, SessionInfo, SessionStatus, StopReason};
use vernier_store::SqliteStore;
use vernier_testkit::{
    begun_session, latency_configuration, latency_histogram_of, temp_db, vernier,
};

/// A thread's histogram: `n` samples from `base_ns` up in 1 ns steps over 2 us, and one spike.
fn thread(cpu: u32, base_ns: u64, n: u64, spike_ns: u64) -> vernier_model::RunHistogram {
    let samples = (0..n).map(|i| base_ns + (i * 37) % 2_000);
    latency_histogram_of(cpu, samples.chain([spike_ns]), 0)
}

/// A latency session of `runs` runs on two CPUs, the spikes of run `i` at `spike_us[i]`, and
/// every sample scaled by `scale`. Every run locked its memory; the second one could not hold
/// /dev/cpu_dma_latency.
fn record(path: &Path, tag: &str, spikes_us: &[u64], scale: f64) -> Uuid {
    let mut store = SqliteStore::open(path).unwrap();
    let id = Uuid::new_v4();
    store
        .begin_session(&SessionInfo {
            id,
            ..begun_session("latency", tag)
        })
        .unwrap();
    let config = latency_configuration();
    store.add_configuration(id, &config).unwrap();
    for (i, &spike) in spikes_us.iter().enumerate() {
        let base = (4_000.0 * scale) as u64;
        let histograms = vec![
            thread(0, base, 20_000, spike * 1_000),
            thread(1, base + 1_000, 20_000, 30_000),
        ];
        let start = 1_000 + i as i64 * 300_000_000_000;
        store
            .add_run(
                config.id,
                &RunRecord {
                    id: Uuid::new_v4(),
                    index: i as u32,
                    warmup: false,
                    round: 0,
                    preceding_executions: i as u32,
                    started_at_ns: start,
                    ended_at_ns: start + 300_000_000_000,
                    values: {
                        let mut values = latency_values(&histograms).unwrap();
                        values.insert(MEMORY_LOCKED.into(), 1.0);
                        values.insert(DMA_LATENCY_HELD.into(), if i == 1 { 0.0 } else { 1.0 });
                        values.into()
                    },
                    histograms,
                    rusage: Rusage::default(),
                    foreign_cpu_ns: 0,
                    controller_cpu_ns: 0,
                    load_cpu_ns: None,
                    monitors: None,
                    setup_steps: Vec::new(),
                    setup_changed: Vec::new(),
                },
            )
            .unwrap();
    }
    store
        .finish_configuration(config.id, StopReason::MaxRuns, false, None)
        .unwrap();
    store
        .finish_session(id, SessionStatus::Completed, 2_000)
        .unwrap();
    id
}

#[test]
fn show_prints_latency_per_cpu_with_its_histogram_and_the_maximum_of_interval_maxima() {
    let (_dir, db) = temp_db();
    record(&db, "a", &[40, 95, 60], 1.0);
    let out = vernier(&db).args(["show", "latest"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("latency: latency per CPU"), "{text}");
    let cpu0 = text.lines().find(|l| l.starts_with("CPU0 ")).unwrap();
    let cells: Vec<&str> = cpu0.split_whitespace().collect();
    // samples, min, mean, p50, p99, p99.9, p99.99, max, missed, overflows
    assert_eq!(cells[1], "60003");
    assert_eq!(cells[2], "4.0");
    assert_eq!(cells[cells.len() - 3..], ["95.0", "0", "0"]);
    // 60,003 samples support p99.9 (10,000), not p99.99 (100,000).
    assert_eq!(cells[7..10], ["n", "too", "small"]);
    assert!(
        text.contains("maximum of 3 interval maxima: 95.0 us"),
        "{text}"
    );
    assert!(
        text.contains("interval maxima (us, in order): 40.0 95.0 60.0"),
        "{text}"
    );
    assert!(
        text.contains("log10 count bars (CPU0 max 95.0 us, CPU1 max 30.0 us)"),
        "{text}"
    );
    assert!(text.contains("    4 us │"), "{text}");
    // The secondary metrics are in their own table.
    assert!(text.contains("other metric"), "{text}");
    assert!(
        text.contains("1 of 3 runs measured without /dev/cpu_dma_latency held at 0"),
        "{text}"
    );
    assert!(text.contains("p99.9"), "{text}");

    let out = vernier(&db)
        .args(["show", "latest", "--format", "json"])
        .assert()
        .success();
    let json: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let latency = &json[0]["latency"];
    assert_eq!(latency["max_of_maxima_us"], 95.0);
    assert_eq!(latency["threads"][1]["cpu"], 1);
    assert_eq!(latency["threads"][0]["p99_99"]["status"], "too-few-samples");
    assert_eq!(json[0]["metric"], "p99");
    assert!(
        json[0]["warning_codes"]
            .as_array()
            .unwrap()
            .contains(&"condition-not-met".into()),
        "{}",
        json[0]["warning_codes"]
    );
    let names: Vec<&str> = json[0]["secondary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["metric"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"max") && names.contains(&"p99.9"),
        "{names:?}"
    );
}

#[test]
fn compare_reports_every_latency_metric() {
    let (_dir, db) = temp_db();
    let spikes: Vec<u64> = (0..12).map(|i| 50 + i).collect();
    let slow: Vec<u64> = spikes.iter().map(|s| s * 3).collect();
    record(&db, "a", &spikes, 1.0);
    record(&db, "b", &slow, 1.0);
    let out = vernier(&db)
        .args(["compare", "kernel=a", "kernel=b"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("other metrics of these configurations"),
        "{text}"
    );
    let max = text
        .lines()
        .find(|l| l.starts_with("latency max "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(max.ends_with("slower"), "{max}");
    assert!(
        text.contains("latency missed (base): values of 0 or less: no ratio"),
        "{text}"
    );
}

/// A monitor's session of `runs` intervals on two CPUs, stored at once (as an import stores
/// it), each interval with per-CPU monitor data; interval 7 has the worst spike, with more
/// interrupts on its CPU. Samples vary by run so that the merged buckets are not one run's.
fn record_monitor(path: &Path, runs: u32) -> Uuid {
    use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
    use vernier_model::{StoredConfiguration, StoredSession};
    let id = Uuid::new_v4();
    let mut record = latency_configuration();
    record.stop_reason = Some(StopReason::Interrupted);
    let runs = (0..runs)
        .map(|i| {
            let spike = if i == 7 {
                250_000
            } else {
                20_000 + u64::from(i % 13) * 1_000
            };
            let histograms = vec![
                thread(0, 3_000 + u64::from(i % 5) * 100, 500, spike),
                thread(1, 4_000, 500 + u64::from(i % 3), 30_000),
            ];
            let mut data = RunMonitorData::default();
            for (metric, value) in [
                (
                    "cpu0.LOC",
                    if i == 7 {
                        900.0
                    } else {
                        100.0 + f64::from(i % 7)
                    },
                ),
                ("cpu1.LOC", 50.0 + f64::from(i % 4)),
                ("ctxt", 1_000.0 + f64::from(i % 11)),
            ] {
                let s = MonitorSeries {
                    monitor: "irq".into(),
                    metric: metric.into(),
                    unit: "count".into(),
                    kind: SeriesKind::Counter,
                    points: vec![
                        MonitorPoint {
                            t_ns: 0,
                            value: 0.0,
                        },
                        MonitorPoint {
                            t_ns: 1_000_000,
                            value,
                        },
                    ],
                };
                data.summary.insert(s.key(), value);
                data.series.push(s);
            }
            let start = 1_000 + i64::from(i) * 300_000_000_000;
            RunRecord {
                id: Uuid::new_v4(),
                index: i,
                warmup: false,
                round: 0,
                preceding_executions: i,
                started_at_ns: start,
                ended_at_ns: start + 300_000_000_000,
                values: latency_values(&histograms).unwrap().into(),
                histograms,
                rusage: Rusage::default(),
                foreign_cpu_ns: 0,
                controller_cpu_ns: 0,
                load_cpu_ns: None,
                monitors: Some(Box::new(data)),
                setup_steps: Vec::new(),
                setup_changed: Vec::new(),
            }
        })
        .collect();
    let session = StoredSession {
        info: SessionInfo {
            id,
            status: SessionStatus::Interrupted,
            ended_at_ns: Some(2_000),
            ..begun_session("latency", "kept")
        },
        configurations: vec![StoredConfiguration {
            record,
            runs,
            profiles: Vec::new(),
        }],
    };
    let mut store = SqliteStore::open(path).unwrap();
    vernier_store::Store::import_sessions(&mut store, &[session], &Default::default()).unwrap();
    id
}

/// What `show` prints of the latest session, as text and as JSON.
fn shown(db: &Path) -> (String, String) {
    let out = |args: &[&str]| {
        let out = vernier(db).args(args).assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    (
        out(&["show", "latest"]),
        out(&["show", "latest", "--format", "json"]),
    )
}

#[test]
fn show_reads_the_kept_totals_and_prints_what_every_runs_histograms_give() {
    let (dir, db) = temp_db();
    record_monitor(&db, 300);
    // The same session in a second file, without its kept totals: `show` merges every run's
    // buckets there, as it did before they were kept.
    let every_run = dir.path().join("every-run.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("VACUUM INTO ?1", [every_run.to_str().unwrap()])
        .unwrap();
    let kept: i64 = conn
        .query_row("SELECT count(*) FROM histogram_totals", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, 2, "one total per thread");
    // Here the runs' buckets are unreadable: only the kept totals can give the distribution.
    conn.execute("UPDATE run_histograms SET buckets = x'00'", [])
        .unwrap();
    drop(conn);
    let other = rusqlite::Connection::open(&every_run).unwrap();
    other.execute("DELETE FROM histogram_totals", []).unwrap();
    drop(other);

    let (text, json) = shown(&db);
    let (every_text, every_json) = shown(&every_run);
    assert_eq!(text, every_text);
    assert_eq!(json, every_json);
    assert!(
        text.contains("maximum of 300 interval maxima: 250.0 us"),
        "{text}"
    );
    assert!(
        text.contains("worst case 250.0 us on CPU0 in measured run 8 of 300"),
        "{text}"
    );
    // The worst run's interrupts against the median of the 299 others.
    assert!(text.contains("irq.cpu0.LOC"), "{text}");
    let document: serde_json::Value = serde_json::from_str(&json).unwrap();
    let threads = document[0]["latency"]["threads"].as_array().unwrap();
    assert_eq!(threads[0]["samples"], 300 * 501);
    assert!(threads[0]["p99"]["us"].as_f64().is_some(), "{json}");
}
