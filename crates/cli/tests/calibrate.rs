//! `vernier calibrate` with the deterministic `mock` benchmark: it stores the session-to-session
//! noise with the environment fingerprint, `compare` uses it, and without it `compare` says so.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use serde_json::Value;
use vernier_store::{SqliteStore, Store};
use vernier_testkit::{ok, vernier};

const SPEC: &str = "mock:values=1/1.1/1.2";

fn calibrate(db: &Path) -> String {
    ok(vernier(db)
        .args(["calibrate", SPEC, "--sessions", "3", "--runs", "4"])
        .args(["--warmup", "0", "--max-time", "30"])
        .output()
        .unwrap())
}

#[test]
fn calibrate_stores_the_noise_and_compare_uses_it() {
    // The sessions must see one environment: a test elsewhere that changes a sysctl in
    // between would split them by fingerprint.
    let _turn = vernier_testkit::host_turn();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    let stdout = calibrate(&db);
    let row = stdout.lines().nth(1).unwrap_or_default();
    assert!(
        row.starts_with("mock:") && row.contains("values=1/1.1/1.2"),
        "{stdout}"
    );
    assert!(stdout.contains("stored in"), "{stdout}");
    assert!(
        stdout.contains("note: the sessions ran back to back"),
        "{stdout}"
    );

    let store = SqliteStore::open_existing(&db).unwrap();
    let sessions = store.sessions().unwrap();
    assert_eq!(sessions.len(), 3);
    let fingerprint = sessions[0].fingerprint.clone();
    let calibrations = store
        .calibrations(std::slice::from_ref(&fingerprint))
        .unwrap();
    assert_eq!(calibrations.len(), 1, "{calibrations:?}");
    let c = &calibrations[0];
    assert_eq!((c.benchmark.as_str(), c.metric.as_str()), ("mock", "value"));
    assert_eq!((c.sessions, c.runs, c.df), (3, 12, 2.0));
    let mut ids: Vec<_> = sessions.iter().map(|s| s.id).collect();
    ids.sort();
    let mut stored = c.session_ids.clone();
    stored.sort();
    assert_eq!(stored, ids);
    // Every session reports 1, 1.1, 1.2, 1: identical medians, no noise between sessions.
    assert_eq!((c.session_sd, c.between_sd), (0.0, 0.0));
    // Maritz-Jarrett of ln(1, 1.1, 1.2, 1), computed with scipy.
    let want = 0.053_811_193_488_605_23;
    assert!((c.within_sd - want).abs() < 1e-9, "{}", c.within_sd);
    for s in &sessions {
        assert_eq!(s.tags.get("calibration"), Some(&c_id_tag(&stdout)));
    }

    let out = vernier(&db)
        .args(["compare", "latest~1", "latest", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cmp = &report["comparisons"][0];
    assert_eq!(cmp["noise_source"], "calibration");
    assert_eq!(cmp["session_noise"], 0.0);
    assert!(cmp["mdc"].as_f64().unwrap() > 0.02);
    let notes = report["summary"]["warnings"].as_array().unwrap();
    assert!(
        !notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("no calibration")),
        "{notes:?}"
    );
    let table = vernier(&db)
        .args(["compare", "latest~1", "latest"])
        .output()
        .unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.contains("MDC"), "{table}");
    assert!(!table.contains("no calibration"), "{table}");
}

#[test]
fn spread_sessions_start_that_far_apart() {
    // As above: both sessions must see one environment.
    let _turn = vernier_testkit::host_turn();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    let began = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    vernier(&db)
        .args([
            "calibrate",
            SPEC,
            "--sessions",
            "2",
            "--runs",
            "2",
            "--warmup",
            "0",
        ])
        .args(["--spread", "4"])
        .assert()
        .success();
    let store = SqliteStore::open_existing(&db).unwrap();
    let mut starts: Vec<i64> = store
        .sessions()
        .unwrap()
        .iter()
        .map(|s| s.started_at_ns)
        .collect();
    starts.sort_unstable();
    assert_eq!(starts.len(), 2);
    // The second session starts 4 s after the calibration began, never sooner; the first at
    // once, before the spread has passed (4 s leaves room for a slow start on a busy machine).
    assert!(starts[1] - began >= 4_000_000_000, "{began} {starts:?}");
    assert!(starts[0] - began < 4_000_000_000, "{began} {starts:?}");
}

/// The calibration id from the last line of calibrate's output.
fn c_id_tag(stdout: &str) -> String {
    let line = stdout.lines().last().unwrap();
    line.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn compare_without_calibration_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    for _ in 0..2 {
        vernier(&db)
            .args(["run", SPEC, "--min-runs", "4", "--max-runs", "4", "--quiet"])
            .assert()
            .success();
    }
    let out = vernier(&db)
        .args(["compare", "latest~1", "latest"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    assert_eq!(table.matches("no calibration").count(), 1, "{table}");
    let line = table
        .lines()
        .find(|l| l.contains("no calibration"))
        .unwrap();
    assert!(line.starts_with("note: "), "{line}");
    assert!(line.contains("vernier calibrate"), "{line}");
}

#[test]
fn bad_calibrate_arguments_exit_2_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    for (args, expect) in [
        (vec!["--sessions", "1"], "--sessions 1"),
        (vec!["--runs", "1"], "--runs 1"),
        (vec!["nosuch"], "unknown benchmark 'nosuch'"),
        (vec!["--suite", "nosuch"], "unknown suite 'nosuch'"),
        (vec!["--spread", "0"], "'0' is not a duration"),
    ] {
        let out = vernier(&db).arg("calibrate").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expect), "{stderr}");
        assert!(!db.exists(), "{args:?} created the database");
    }
}

/// A running calibration with its stderr read line by line.
struct Calibrating {
    child: std::process::Child,
    stderr: std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
    seen: Vec<String>,
}

impl Calibrating {
    fn start(db: &Path, args: &[&str]) -> Calibrating {
        let mut child = vernier_testkit::vernier_command(db)
            .arg("calibrate")
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
        Calibrating {
            child,
            stderr,
            seen: Vec::new(),
        }
    }

    /// Reads stderr up to a line that contains `text`.
    fn wait_for(&mut self, text: &str) {
        for line in self.stderr.by_ref() {
            let line = line.unwrap();
            let found = line.contains(text);
            self.seen.push(line);
            if found {
                return;
            }
        }
        panic!("stderr ended before '{text}': {:?}", self.seen);
    }

    fn signal(&self, signal: i32) {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// The exit status and all of stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        for line in self.stderr.by_ref() {
            self.seen.push(line.unwrap());
        }
        (self.child.wait().unwrap().code(), self.seen.join("\n"))
    }
}

impl Drop for Calibrating {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Rows of `table`, 0 while the database does not exist yet.
fn count(db: &Path, table: &str) -> i64 {
    if !db.exists() {
        return 0;
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap_or(0)
}

/// Ctrl-C during a session of the calibration ends that session as it ends any session (its
/// completed runs stored, marked interrupted) and the calibration with it: nothing is
/// estimated or stored, the exit status is 130.
#[test]
fn a_signal_during_a_session_ends_the_calibration_and_stores_none() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    let mut calibrating = Calibrating::start(
        &db,
        &[
            "yield:duration=0.1:workers=1",
            "--sessions",
            "2",
            "--runs",
            "200",
        ],
    );
    calibrating.wait_for("calibrate: session 1 of 2");
    // The session records its runs as they end; one is enough to be inside it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while count(&db, "runs") == 0 {
        assert!(std::time::Instant::now() < deadline, "no run was recorded");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    calibrating.signal(libc::SIGINT);
    let (status, stderr) = calibrating.finish();
    assert_eq!(status, Some(130), "{stderr}");
    assert!(
        stderr.contains("stopping after ending the run in progress"),
        "{stderr}"
    );
    assert!(
        stderr.contains("interrupted: the completed runs are stored"),
        "{stderr}"
    );
    assert!(!stderr.contains("session 2 of 2"), "{stderr}");
    assert_ended_without_calibration(&db, &stderr, "interrupted");
}

/// SIGTERM while the calibration waits for its next session's start: no further session
/// starts, the finished one is kept, nothing is estimated or stored, the exit status is 143.
#[test]
fn a_signal_between_sessions_starts_no_further_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    let mut calibrating = Calibrating::start(
        &db,
        &[
            SPEC,
            "--sessions=2",
            "--runs=2",
            "--warmup=0",
            "--spread=600",
        ],
    );
    calibrating.wait_for("calibrate: session 2 of 2 starts in");
    calibrating.signal(libc::SIGTERM);
    let (status, stderr) = calibrating.finish();
    assert_eq!(status, Some(143), "{stderr}");
    assert!(!stderr.contains("completed runs"), "{stderr}");
    assert!(!stderr.contains("stopping after"), "{stderr}");
    assert_ended_without_calibration(&db, &stderr, "completed");
}

/// After a calibration that a signal ended: it says that none is stored, and none is; its one
/// session is stored with `status`.
fn assert_ended_without_calibration(db: &Path, stderr: &str, status: &str) {
    assert!(
        stderr.contains(
            "interrupted: no calibration stored (the finished sessions are kept, tag calibration="
        ),
        "{stderr}"
    );
    let store = SqliteStore::open_existing(db).unwrap();
    let sessions = store.sessions().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].status.to_string(), status);
    assert_eq!(count(db, "calibrations"), 0);
}
