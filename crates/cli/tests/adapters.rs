//! The adapters to established tools end to end: each runs its tool for real (CI installs
//! them, see `.ci/run`) for a few short runs on a temporary database, its metric stored in the
//! tool's unit and the tool's version in the session's environment; a missing tool is refused
//! before anything starts. Only facts are asserted, never timings. Outside CI a test whose
//! tool is not installed says `skipped: ...` (the README's set-up does not install them).
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::path::Path;

use serde_json::Value;
use vernier_sys::{MachineLimits, Roots};
use vernier_testkit::{has_programs, in_ci, vernier, Program};

/// Runs `spec` with 2 measured runs and no warmup, checks it succeeded and returns the
/// summaries of `show latest --format json`.
fn run_and_show(db: &Path, spec: &str) -> Vec<Value> {
    let out = vernier(db)
        .args([
            "run",
            spec,
            "--warmup",
            "0",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
        ])
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{spec}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = vernier(db)
        .args(["show", "latest", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The tool versions of the latest session, as `env show` prints them.
fn env_show(db: &Path) -> String {
    let out = vernier(db)
        .args(["env", "show", "latest"])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn perf_bench_runs_perf() {
    if !has_programs(
        "perf_bench_runs_perf",
        &[Program {
            name: "perf",
            package: "linux-perf",
        }],
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for (spec, metric, unit) in [
        (
            "perf-bench:bench=sched-pipe:loops=10000",
            "time_per_op",
            "us",
        ),
        (
            "perf-bench:bench=sched-messaging:groups=1:loops=10",
            "time",
            "s",
        ),
        (
            "perf-bench:bench=syscall-basic:loops=100000",
            "time_per_op",
            "us",
        ),
        (
            "perf-bench:bench=mem-memcpy:size=16MB:loops=2",
            "bandwidth",
            "GiB/s",
        ),
        (
            "perf-bench:bench=mem-memset:size=16MB:loops=2",
            "bandwidth",
            "GiB/s",
        ),
        (
            "perf-bench:bench=futex-hash:runtime=1:threads=1",
            "ops_per_sec",
            "ops/s",
        ),
    ] {
        let summaries = run_and_show(&db, spec);
        let s = &summaries[0];
        assert_eq!(s["metric"], metric, "{spec}: {s}");
        assert_eq!(s["unit"], unit, "{spec}");
        assert_eq!(s["n"], 2, "{spec}");
        assert!(s["median"].as_f64().unwrap() > 0.0, "{spec}");
    }
    assert!(env_show(&db).contains("perf: perf version"));
}

#[test]
fn stress_ng_runs_a_stressor() {
    if !has_programs(
        "stress_ng_runs_a_stressor",
        &[Program {
            name: "stress-ng",
            package: "stress-ng",
        }],
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let s = &run_and_show(&db, "stress-ng:stressor=switch:timeout=1")[0];
    assert_eq!(s["metric"], "bogo_ops_per_sec");
    assert_eq!(s["unit"], "bogo-ops/s");
    assert!(s["median"].as_f64().unwrap() > 0.0);
    assert!(env_show(&db).contains("stress-ng: stress-ng, version"));
    // An unknown stressor is refused when the plan is made.
    let out = vernier(&db)
        .args(["run", "stress-ng:stressor=nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stress-ng has no stressor 'nope'"));
}

#[test]
fn rt_hackbench_runs_hackbench() {
    if !has_programs(
        "rt_hackbench_runs_hackbench",
        &[Program {
            name: "hackbench",
            package: "rt-tests",
        }],
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let s = &run_and_show(&db, "rt-hackbench:groups=1:fds=5:loops=100")[0];
    assert_eq!(s["metric"], "time");
    assert_eq!(s["unit"], "s");
    assert!(env_show(&db).contains("hackbench: hackbench V"));
}

/// cyclictest's histograms become the run's latency histograms, one per CPU with its CPU, with
/// the values of the `latency` benchmark but `missed`. cyclictest 2.40 needs the privilege of
/// a real-time priority to start, whatever the policy: without it the configuration is refused
/// before anything starts (checked here outside CI; CI runs as root and measures).
#[test]
fn cyclictest_runs_cyclictest_and_stores_its_histograms() {
    if !has_programs(
        "cyclictest_runs_cyclictest_and_stores_its_histograms",
        &[Program {
            name: "cyclictest",
            package: "rt-tests",
        }],
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let limits = MachineLimits::read(&Roots::real());
    // SCHED_FIFO keeps the wake-ups prompt on a busy machine, and a histogram of a second
    // holds any latency it may still see, so that the p99 is always within the buckets.
    let spec = "cyclictest:duration=1:interval=1ms:policy=fifo:priority=50:histogram=1000000";
    if let Err(e) = limits
        .check_rt_priority(50)
        .and_then(|()| limits.check_memlock())
    {
        assert!(!in_ci(), "CI runs as root: {e}");
        eprintln!("skipped: cyclictest needs a real-time priority here: {e}");
        let out = vernier(&db).args(["run", spec]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr)
            .contains("cyclictest needs a real-time priority to start"));
        return;
    }
    let s = &run_and_show(&db, spec)[0];
    assert_eq!(s["metric"], "p99");
    assert_eq!(s["unit"], "us");
    assert_eq!(s["higher_is_better"], false);
    assert!(s["median"].as_f64().unwrap() > 0.0);
    assert!(env_show(&db).contains("cyclictest: cyclictest V 2."));
    let cpus: Vec<i64> = vernier_sys::affinity::current_affinity()
        .unwrap()
        .into_iter()
        .map(|c| c as i64)
        .collect();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut rows = conn
        .prepare(
            "SELECT h.thread, h.cpu, h.count, h.quantity FROM run_histograms h \
             JOIN runs r ON r.key = h.run_key ORDER BY r.started_at_ns, h.thread",
        )
        .unwrap();
    let histograms: Vec<(i64, i64, i64, String)> = rows
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // Two runs, each a histogram per CPU; 1 s of 1 ms periods is at most 1001 wake-ups.
    assert_eq!(histograms.len(), 2 * cpus.len(), "{histograms:?}");
    for (i, (thread, cpu, count, quantity)) in histograms.iter().enumerate() {
        let k = i % cpus.len();
        assert_eq!((*thread, *cpu), (k as i64, cpus[k]), "{histograms:?}");
        assert!(*count > 100 && *count <= 1001, "{count} samples");
        assert_eq!(quantity, "latency");
    }
    // A fraction of a second cannot be given to cyclictest's -D.
    let out = vernier(&db)
        .args(["run", "cyclictest:duration=0.5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-D takes whole seconds"));
}

#[test]
fn sysbench_runs_each_test() {
    if !has_programs(
        "sysbench_runs_each_test",
        &[Program {
            name: "sysbench",
            package: "sysbench",
        }],
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for (spec, metric, unit) in [
        ("sysbench:test=cpu:time=1", "events_per_sec", "events/s"),
        (
            "sysbench:test=memory:time=1:memory_total_size=256M",
            "bandwidth",
            "MiB/s",
        ),
        ("sysbench:test=threads:time=1", "events_per_sec", "events/s"),
        ("sysbench:test=mutex", "total_time", "s"),
    ] {
        let s = &run_and_show(&db, spec)[0];
        assert_eq!(s["metric"], metric, "{spec}");
        assert_eq!(s["unit"], unit, "{spec}");
        assert!(s["median"].as_f64().unwrap() > 0.0, "{spec}");
    }
    assert!(env_show(&db).contains("sysbench: sysbench 1."));
}

#[test]
fn a_missing_tool_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = vernier(&db)
        .args(["run", "perf-bench:loops=1"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        "error: spec 'perf-bench:loops=1': perf-bench runs perf, which is not installed (not \
         on PATH): install the Debian package linux-perf (apt-get install linux-perf)"
    );
    assert!(!db.exists());
}
