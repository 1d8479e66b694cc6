//! `vernier monitor latency`: consecutive intervals as runs of one session, a fixed number with
//! `--for`, or until SIGTERM, which ends it cleanly; and its bad input. Real latency runs with
//! `policy=other`, which needs no privileges.
#![allow(clippy::unwrap_used)]

use vernier_testkit::vernier;

#[test]
fn bad_monitor_input_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
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
