//! `vernier calibrate` with the deterministic `mock` benchmark: it stores the session-to-session
//! noise with the environment fingerprint, `compare` uses it, and without it `compare` says so.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use serde_json::Value;
use vernier_store::{SqliteStore, Store};
use vernier_testkit::vernier;

const SPEC: &str = "mock:values=1/1.1/1.2";

fn calibrate(db: &Path) -> String {
    let out = vernier(db)
        .args(["calibrate", SPEC, "--sessions", "3", "--runs", "4"])
        .args(["--warmup", "0", "--max-time", "30"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
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
