//! `vernier monitor latency`: consecutive intervals as runs of one session, a fixed number with
//! `--for`, or until SIGTERM, which ends it cleanly; and its bad input. Real latency runs with
//! `policy=other`, which needs no privileges.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;
use vernier_testkit::{temp_db, vernier, vernier_command};

fn count(db: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn bad_monitor_input_is_refused_before_anything_starts() {
    let (_dir, db) = temp_db();
    for (args, message) in [
        (
            vec!["hackbench"],
            "'hackbench' cannot be monitored; valid: latency",
        ),
        (
            vec!["latency", "--interval", "5x"],
            "'5x' is not a duration: a number of seconds greater than 0",
        ),
        (
            vec!["latency", "--interval", "5m", "--for", "1m"],
            "--for 60 s is shorter than one --interval of 300 s",
        ),
        (
            vec!["latency:duration=3"],
            "the interval sets the duration of each run: give --interval instead",
        ),
    ] {
        let out = vernier(&db).arg("monitor").args(&args).assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    assert!(!db.exists(), "nothing is written on bad input");
}

#[test]
fn monitoring_for_a_time_stores_each_interval_with_its_histograms() {
    let (_dir, db) = temp_db();
    vernier(&db)
        .args([
            "monitor",
            "latency:policy=other:interval=1ms",
            "--interval",
            "1",
            "--for",
            "3s",
            "--monitor",
            "none",
            "-q",
        ])
        .assert()
        .success()
        // Three intervals are below the runs an interval of the median needs, but the count
        // is monitor's own, not a --max-runs the user gave: no warning about it.
        .stderr(predicate::str::contains("--max-runs").not());
    assert_eq!(count(&db, "SELECT count(*) FROM runs WHERE warmup = 0"), 3);
    assert_eq!(count(&db, "SELECT count(*) FROM runs WHERE warmup = 1"), 0);
    let cpus = count(&db, "SELECT count(DISTINCT thread) FROM run_histograms");
    assert!(cpus >= 1);
    assert_eq!(count(&db, "SELECT count(*) FROM run_histograms"), 3 * cpus);
    let out = vernier(&db).args(["show", "latest"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("maximum of 3 interval maxima:"), "{text}");
    assert!(text.contains("tags: monitor=latency"), "{text}");
}

/// systemd stops a service with SIGTERM: the interval in progress is dropped, every stored one
/// is complete, the session is no longer running, and the exit status is 0.
#[test]
fn sigterm_ends_monitoring_cleanly() {
    let (_dir, db) = temp_db();
    let mut child = vernier_command(&db)
        .args([
            "monitor",
            "latency:policy=other:interval=1ms",
            "--interval",
            "1",
            "--monitor",
            "none",
            "-q",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait, bounded, until two intervals are stored.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if db.exists()
            && rusqlite::Connection::open(&db)
                .and_then(|c| c.query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0)))
                .is_ok_and(|n| n >= 2)
        {
            break;
        }
        assert!(Instant::now() < deadline, "no two intervals within 120 s");
        assert!(child.try_wait().unwrap().is_none(), "monitor ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("ended: the completed intervals are stored"),
        "{stderr}"
    );
    // Monitoring until stopped is what was asked: no warning that the runs do not fit.
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM sessions WHERE status = 'running'"
        ),
        0
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM configurations WHERE stop_reason IS NULL"
        ),
        0
    );
    let runs = count(&db, "SELECT count(*) FROM runs");
    assert!(runs >= 2);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs r WHERE NOT EXISTS \
             (SELECT 1 FROM run_histograms h WHERE h.run_key = r.key)"
        ),
        0,
        "every stored interval has its histograms"
    );
}
