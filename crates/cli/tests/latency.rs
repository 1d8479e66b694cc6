//! The `latency` benchmark end to end: bad options and missing privileges are refused in one
//! line before anything starts, and short real runs store one histogram per CPU with its
//! summaries among the run's values.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::os::unix::process::CommandExt;
use std::path::Path;

use vernier_sys::{MachineLimits, Roots};
use vernier_testkit::temp_db;
use vernier_testkit::vernier_command as vernier;

fn refused(cmd: &mut std::process::Command, db: &Path) -> String {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(out.stdout.is_empty(), "{stderr}");
    assert!(!db.exists(), "a database was created: {stderr}");
    stderr
}

#[test]
fn bad_options_are_refused_in_one_line() {
    let (_dir, db) = temp_db();
    for (spec, message) in [
        (
            "latency:interval=0",
            "expected a whole number of microseconds in 1..=1000000",
        ),
        (
            "latency:interval=2s",
            "expected a whole number of microseconds",
        ),
        (
            "latency:interval=0.5us",
            "expected a whole number of microseconds",
        ),
        (
            "latency:interval=fast",
            "expected a whole number of microseconds",
        ),
        ("latency:priority=0", "expected an integer in 1..=99"),
        ("latency:priority=100", "expected an integer in 1..=99"),
        ("latency:policy=deadline", "expected one of fifo, rr, other"),
        ("latency:dma_latency=maybe", "expected one of on, off"),
        ("latency:duration=0", "expected a number in 0.01..=86400"),
        ("latency:cpus=x", "expected all or a CPU list such as 0-1,3"),
        (
            "latency:cpus=3-1",
            "expected all or a CPU list such as 0-1,3",
        ),
        (
            "latency:loops=10",
            "valid options: interval, duration, cpus, priority, policy",
        ),
    ] {
        let stderr = refused(vernier(&db).args(["run", spec]), &db);
        assert!(stderr.contains(message), "{spec}: {stderr}");
    }
    // A CPU the run may not use is the machine's refusal.
    let stderr = refused(
        vernier(&db).args(["run", "latency:cpus=8191:policy=other"]),
        &db,
    );
    assert!(
        stderr.contains(
            "cannot run on this machine: cpus=8191: CPU 8191 is not one this process may run on"
        ),
        "{stderr}"
    );
}

/// Drops what makes SCHED_FIFO and mlockall permitted, in the child before it executes
/// vernier: the real-time priority and locked-memory limits, and for root CAP_SYS_NICE and
/// CAP_IPC_LOCK from the bounding set (which execve(2) would otherwise give back to uid 0).
/// False when that cannot be done here.
fn without_real_time_privileges(cmd: &mut std::process::Command) -> bool {
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    // SAFETY: setrlimit and prctl are async-signal-safe and change only the child.
    unsafe {
        cmd.pre_exec(move || {
            let zero = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            let small = libc::rlimit {
                rlim_cur: 64 * 1024,
                rlim_max: 64 * 1024,
            };
            if libc::setrlimit(libc::RLIMIT_RTPRIO, &zero) != 0
                || libc::setrlimit(libc::RLIMIT_MEMLOCK, &small) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if root {
                // CAP_IPC_LOCK (14) and CAP_SYS_NICE (23).
                for cap in [14, 23] {
                    if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
            }
            Ok(())
        });
    }
    // Whether the drop works here: try it on a harmless command.
    let mut probe = std::process::Command::new("true");
    // SAFETY: as above.
    unsafe {
        probe.pre_exec(move || {
            if root && libc::prctl(libc::PR_CAPBSET_DROP, 23, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    probe.status().is_ok_and(|s| s.success())
}

#[test]
fn a_real_time_policy_without_its_privileges_is_refused_before_anything_starts() {
    let (_dir, db) = temp_db();
    for (spec, policy) in [("latency", "fifo"), ("latency:policy=rr:priority=1", "rr")] {
        let mut cmd = vernier(&db);
        cmd.args(["run", spec]);
        if !without_real_time_privileges(&mut cmd) {
            eprintln!("skipped: the capabilities of this root process cannot be dropped here");
            return;
        }
        let stderr = refused(&mut cmd, &db);
        assert!(
            stderr.contains(&format!("cannot run on this machine: policy={policy}: ")),
            "{stderr}"
        );
        assert!(
            stderr
                .trim_end()
                .ends_with("policy=other measures without these privileges and records that"),
            "{stderr}"
        );
    }
}

/// What one stored run of a latency configuration holds.
struct StoredRun {
    values: std::collections::BTreeMap<String, f64>,
    /// (thread, CPU, samples, missed) of each histogram.
    histograms: Vec<(i64, Option<i64>, i64, i64)>,
}

fn stored_runs(db: &Path, policy: &str) -> Vec<StoredRun> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut runs = conn
        .prepare(
            "SELECT r.key FROM runs r JOIN configurations c ON r.configuration_key = c.key \
             WHERE c.benchmark = 'latency' AND json_extract(c.options, '$.policy') = ?1 \
             AND r.warmup = 0",
        )
        .unwrap();
    let keys: Vec<i64> = runs
        .query_map([policy], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    keys.iter()
        .map(|key| {
            let mut values = conn
                .prepare("SELECT metric, value FROM run_metric_values WHERE run_key = ?1")
                .unwrap();
            let values = values
                .query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let mut histograms = conn
                .prepare(
                    "SELECT thread, cpu, count, missed FROM run_histograms WHERE run_key = ?1 \
                     ORDER BY thread",
                )
                .unwrap();
            let histograms = histograms
                .query_map([key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            StoredRun { values, histograms }
        })
        .collect()
}

/// The environment variable that marks the processes this test starts (inherited by the run's
/// child), so that latency runs of other programs on the machine are not counted.
const MARK: &str = "VERNIER_LATENCY_TEST_MARK";

/// Threads of this test's processes named as the benchmark names its measurement threads.
fn measurement_threads(mark: &str) -> usize {
    let needle = format!("{MARK}={mark}");
    let mut n = 0;
    for process in std::fs::read_dir("/proc").unwrap().flatten() {
        let environ = std::fs::read(process.path().join("environ")).unwrap_or_default();
        if !environ
            .split(|&b| b == 0)
            .any(|entry| entry == needle.as_bytes())
        {
            continue;
        }
        let Ok(tasks) = std::fs::read_dir(process.path().join("task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            n += usize::from(comm.starts_with("latency/"));
        }
    }
    n
}

#[test]
fn short_real_runs_store_a_histogram_per_cpu() {
    let (_dir, db) = temp_db();
    let limits = MachineLimits::read(&Roots::real());
    let real_time = limits
        .check_rt_priority(99)
        .and_then(|()| limits.check_memlock());
    let mut policies = vec!["other"];
    match &real_time {
        Ok(()) => policies.push("fifo"),
        Err(e) => eprintln!("policy=fifo skipped: {e}"),
    }
    let cpus: Vec<i64> = vernier_sys::affinity::current_affinity()
        .unwrap()
        .into_iter()
        .map(|c| c as i64)
        .collect();
    let mark = format!("{}", std::process::id());
    for policy in &policies {
        let out = vernier(&db)
            .env(MARK, &mark)
            .args([
                "run",
                &format!("latency:duration=1:policy={policy}"),
                "--warmup",
                "0",
                "--min-runs",
                "1",
                "--max-runs",
                "1",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{policy}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let runs = stored_runs(&db, policy);
        assert_eq!(runs.len(), 1, "{policy}");
        let run = &runs[0];
        // 1 s of 200 us periods is 5000 wake-ups per CPU; a loaded machine may miss some.
        let threads: Vec<(i64, Option<i64>)> = run.histograms.iter().map(|h| (h.0, h.1)).collect();
        let expected: Vec<(i64, Option<i64>)> = cpus
            .iter()
            .enumerate()
            .map(|(i, &c)| (i as i64, Some(c)))
            .collect();
        assert_eq!(
            threads, expected,
            "{policy}: one histogram per CPU, with its CPU"
        );
        // Every period of the second is sampled or counted as missed, however busy the
        // machine: after the last sample the loop skips past the end, so at least 4,999 of
        // the 5,000 are accounted for; and no more than those of the second and those the
        // last wake-up, late by at most the maximum, passed beyond it.
        let periods = 5_001 + (run.values["max"] / 200.0).ceil() as i64;
        for &(_, _, samples, missed) in &run.histograms {
            assert!((1..=5001).contains(&samples), "{policy}: {samples} samples");
            assert!(
                (4_999..=periods).contains(&(samples + missed)),
                "{policy}: {samples} + {missed} missed"
            );
        }
        let total: i64 = run.histograms.iter().map(|h| h.2).sum();
        assert_eq!(run.values["samples"], total as f64, "{policy}");
        for metric in ["p99", "p50", "min", "max", "mean", "missed"] {
            assert!(run.values.contains_key(metric), "{policy}: no {metric}");
        }
        assert!(run.values["p99"] > 0.0 && run.values["p99"] <= run.values["max"]);
        assert!(run.values["min"] <= run.values["p50"]);
        for condition in ["memory_locked", "dma_latency_held"] {
            assert!(
                [0.0, 1.0].contains(&run.values[condition]),
                "{policy}: {condition}"
            );
        }
        if *policy == "fifo" {
            assert_eq!(run.values["memory_locked"], 1.0);
        }
    }
    assert_eq!(
        measurement_threads(&mark),
        0,
        "a measurement thread was left"
    );
}
