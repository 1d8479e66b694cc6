//! `vernier import` of cyclictest's results end to end: the histogram output of both rt-tests
//! forms and the `--json` output become a `cyclictest` configuration that `show` reports,
//! importing twice changes nothing, and bad files are refused with their line and exit 2.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::Value;
use vernier_testkit::{imported_db, vernier, vernier_json};

/// The fixtures of the parser (crates/formats/tests/fixtures/cyclictest): real cyclictest 2.40
/// outputs, and the newer sparse form.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/fixtures/cyclictest")
        .join(name)
}

fn show_json(db: &Path, selector: &str) -> Value {
    vernier_json(db, &["show", selector, "--format", "json"])
}

/// The session list, its times in UTC.
fn sessions(db: &Path) -> String {
    let out = vernier(db)
        .arg("sessions")
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn json_and_histogram_outputs_import_once_and_show() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    for name in ["2.4-h400.json", "2.4-h400-q.txt", "2.10-sparse-H1000-q.txt"] {
        vernier(&db)
            .arg("import")
            .arg(fixture(name))
            .assert()
            .success()
            .stdout("imported 1 session, skipped 0 already present with the same content\n");
        // Again: the ids follow the content, and a file without times keeps those of its
        // first import.
        vernier(&db)
            .arg("import")
            .arg(fixture(name))
            .assert()
            .success()
            .stdout("imported 0 sessions, skipped 1 already present with the same content\n");
    }
    let listed = sessions(&db);
    assert_eq!(listed.matches("source=cyclictest").count(), 3, "{listed}");
    assert!(
        listed.contains(
            "cyclictest:affinity=all:duration=2:histogram=400:interval=200:mlockall=yes:\
             priority=90:threads=2"
        ),
        "{listed}"
    );
    // The JSON's session started when cyclictest did.
    assert!(listed.contains("2026-11-23 17:36:22"), "{listed}");
    let id = listed
        .lines()
        .find(|l| l.contains("mlockall=yes"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let show = show_json(&db, &id);
    let c = &show[0];
    assert_eq!(c["benchmark"], "cyclictest");
    assert_eq!(c["benchmark_version"], "2.40");
    assert_eq!(c["metric"], "p99");
    assert_eq!(c["unit"], "us");
    assert_eq!(c["higher_is_better"], false);
    assert_eq!(c["n"], 1);
    assert_eq!(c["options"]["histogram"], 400);
    assert_eq!(c["options"]["priority"], 90);
    let p99 = c["values"][0].as_f64().unwrap();
    assert!(p99 > 11.0 && p99 < 400.0, "{p99}");
    // The table names the configuration and its primary metric.
    vernier(&db)
        .args(["show", &id])
        .assert()
        .success()
        .stdout(predicate::str::contains("cyclictest:affinity=all"))
        .stdout(predicate::str::contains("p99 us, lower is better"));
    // cyclictest skips a late period without counting it: missed is unknown (-), not 0.
    let shown = vernier(&db).args(["show", &id]).output().unwrap();
    let text = String::from_utf8(shown.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("CPU") || l.starts_with("thread "))
        .unwrap_or_else(|| panic!("no per-CPU row: {text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[cells.len() - 2], "-", "{text}");
}

#[test]
fn the_histograms_are_stored_per_thread_and_exported() {
    let (_dir, db) = imported_db(&fixture("2.4-h400.json"));
    let out = vernier(&db).args(["export", "latest"]).output().unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &doc["sessions"][0]["configurations"][0]["runs"][0];
    let threads = run["histograms"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    // Thread 1 of the file: 9868 cycles, 9848 in buckets, so 20 overflows; pinned to CPU 1.
    assert_eq!(threads[1]["count"], 9868);
    assert_eq!(threads[1]["overflows"], 20);
    assert_eq!(threads[1]["cpu"], 1);
    assert_eq!(threads[1]["min_ns"], 11_000);
    assert_eq!(threads[1]["max_ns"], 2_980_000);
    assert_eq!(run["values"]["samples"], 9984.0 + 9868.0);
    assert_eq!(run["values"]["max"], 2980.0);
    assert_eq!(
        doc["sessions"][0]["environment"]["kernel_release"],
        "6.18.44-fc-v669"
    );
}

/// Runs `vernier import FILE` on a new database; checks exit status 2, one line naming the
/// file, and that no database was created. Returns the line.
fn refused(dir: &Path, name: &str, text: &str) -> String {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let db = dir.join(format!("{name}.db"));
    let out = vernier(&db).arg("import").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{name}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: cannot import {}: ", file.display())),
        "{stderr}"
    );
    assert!(!db.exists(), "{name}: the database was created");
    stderr
}

#[test]
fn bad_cyclictest_files_are_refused_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(fixture("2.4-h400-q.txt")).unwrap();
    let row = "000010 000001\t000000\n";
    let cases = [
        (
            "truncated-row.txt",
            good.replace(row, "000010 000001\n"),
            "line 13: histogram row 10 has 1 count(s), the rows before it 2",
        ),
        (
            "not-a-number.txt",
            good.replace(row, "000010 0000a1\t000000\n"),
            "line 13: the count of column 1 '0000a1' is not a number",
        ),
        (
            "negative.txt",
            good.replace("# Max Latencies: 02915", "# Max Latencies: -2915"),
            "line 406: '# Max Latencies' value 1 is -2915, a negative number",
        ),
        (
            "columns.txt",
            good.replace(
                "# Histogram Overflows: 00010 00009",
                "# Histogram Overflows: 00010",
            ),
            "line 407: '# Histogram Overflows' has 1 values, but '# Min Latencies:' (line 404) \
             has 2, one per thread: the thread columns disagree",
        ),
        (
            "total.txt",
            good.replace("# Total: 000009869", "# Total: 000009870"),
            "line 403: '# Total:' gives 9870 samples for thread 0, but its rows hold 9869",
        ),
        (
            "truncated.txt",
            good[..good.find("000300 ").unwrap()].to_string(),
            "has no '# Min Latencies:' line: the file is truncated",
        ),
        (
            "json-overflow.json",
            r#"{"cmdline:": "cyclictest -h 10", "rt_test_version:": "2.10", "thread": {"0":
                {"histogram": {"3": 2}, "cycles": 4, "min": 3, "max": 30, "avg": 9, "cpu": 0}}}"#
                .to_string(),
            "the p99 lies among the 2 of 4 samples beyond the histogram's range: run cyclictest \
             with a larger -h than 10 (the largest latency was 30 us)",
        ),
    ];
    for (name, text, expected) in cases {
        let err = refused(dir.path(), name, &text);
        assert!(err.contains(expected), "{name}: {err}");
    }
    // A real file whose p99 lies beyond its -h 30.
    let db = dir.path().join("real.db");
    vernier(&db)
        .arg("import")
        .arg(fixture("2.4-default-system-h30.txt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "run cyclictest with a larger -h than 30",
        ));
    // Output without -h says what it lacks.
    vernier(&db)
        .arg("import")
        .arg(fixture("2.4-no-h.txt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no '# Histogram' line: cyclictest writes its histogram only with -h or -H",
        ));
    vernier(&db)
        .arg("import")
        .arg(fixture("2.4-no-h.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("without -h/--histogram"));
    assert!(!db.exists());
    // Text that is not cyclictest's is named, with what import takes.
    let err = refused(dir.path(), "other.txt", "hello\nworld\n");
    assert!(
        err.contains("the file is text but not cyclictest's output (no line '# Histogram'"),
        "{err}"
    );
    assert!(
        err.contains("import takes a vernier export (JSON)"),
        "{err}"
    );
}

#[test]
fn a_json_whose_times_cannot_be_read_is_dated_at_its_import_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    // cyclictest writes its times with strftime in the user's locale: German day names here.
    let text = std::fs::read_to_string(fixture("2.4-h400.json"))
        .unwrap()
        .replace("Mon, 23 Nov 2026 17:36:22", "Mo, 23 Nov 2026 17:36:22");
    let file = dir.path().join("de.json");
    std::fs::write(&file, text).unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    let out = vernier(&db).arg("import").arg(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "warning: {}: its start_time 'Mo, 23 Nov 2026 17:36:22 +0000' is not a date as \
             cyclictest writes them (RFC 2822, 'Mon, 23 Nov 2026 17:36:22 +0000'); the session \
             is dated at its first import (its note says so)",
            file.display()
        )
    );
    let export: Value =
        serde_json::from_slice(&vernier(&db).arg("export").output().unwrap().stdout).unwrap();
    let session = &export["sessions"][0];
    assert!(
        session["started_at_ns"].as_i64().unwrap() >= before,
        "{session}"
    );
    assert!(
        session["note"]
            .as_str()
            .unwrap()
            .ends_with("; dated at its first import: its start and end times could not be read"),
        "{}",
        session["note"]
    );
}
