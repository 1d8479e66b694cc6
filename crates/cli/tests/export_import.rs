//! `vernier export` and `import`: round trips through the documented JSON format, CSV rows,
//! hyperfine files, idempotence and bad files.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn vernier(db: &Path) -> Command {
    let mut cmd = Command::cargo_bin("vernier").unwrap();
    cmd.arg("--db").arg(db).env_remove("VERNIER_DB");
    cmd
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn stdout_json(cmd: &mut Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn session_count(db: &Path) -> usize {
    let conn = rusqlite::Connection::open(db).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    n as usize
}

#[test]
fn recorded_sessions_round_trip_through_export_and_import() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    for kernel in ["A", "B"] {
        vernier(&a)
            .args([
                "run",
                "mock:values=1/2/3",
                "--min-runs",
                "3",
                "--max-runs",
                "3",
                "--quiet",
            ])
            .args(["--tag", &format!("kernel={kernel}")])
            .assert()
            .success();
    }
    let file = dir.path().join("out.json");
    vernier(&a)
        .args(["export", "-o"])
        .arg(&file)
        .assert()
        .success()
        .stdout("");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["format"], "vernier-export");
    assert_eq!(doc["version"], 1);
    let sessions = doc["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    let runs = sessions[0]["configurations"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "one warmup and three measured runs");
    assert!(runs[1]["rusage"]["user_cpu_ns"].is_i64());
    assert!(runs[1]["started_at_ns"].is_i64());

    vernier(&b)
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stdout("imported 2 session(s), skipped 0 already present\n");
    vernier(&b)
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stdout("imported 0 session(s), skipped 2 already present\n");
    assert_eq!(session_count(&b), 2);
    // What the second database exports is what the first one did.
    let again = stdout_json(vernier(&b).arg("export"));
    assert_eq!(again, doc);
    // And show reads it.
    let show = stdout_json(vernier(&b).args(["show", "latest", "--format", "json"]));
    assert_eq!(show[0]["values"], serde_json::json!([1.0, 2.0, 3.0]));

    // A selector exports a subset.
    let one = stdout_json(vernier(&a).args(["export", "kernel=B"]));
    assert_eq!(one["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(one["sessions"][0]["tags"]["kernel"], "B");
}

#[test]
fn csv_has_one_row_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    vernier(&db)
        .arg("import")
        .arg(fixture("two-kernels.json"))
        .assert()
        .success();
    let out = vernier(&db)
        .args(["export", "--format", "csv", "kernel=A"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // kernel=A: 8 + 6 + 6 runs.
    assert_eq!(lines.len(), 1 + 20);
    let header: Vec<&str> = lines[0].split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let first: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(first.len(), header.len());
    assert_eq!(first[col("benchmark")], "bench");
    assert_eq!(first[col("options")], "case=doubled");
    assert_eq!(first[col("value")], "13");
    assert_eq!(first[col("tags")], "host=x;kernel=A");
    assert_eq!(first[col("warmup")], "false");
}

#[test]
fn hyperfine_files_import_once_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let file = fixture("hyperfine-sleep.json");
    vernier(&db)
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("imported 1 session(s)"));
    vernier(&db)
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("imported 0 session(s), skipped 1"));
    let show = stdout_json(vernier(&db).args(["show", "latest", "--format", "json"]));
    let hf: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let configs = show.as_array().unwrap();
    assert_eq!(configs.len(), 2);
    for (c, result) in configs.iter().zip(hf["results"].as_array().unwrap()) {
        assert_eq!(c["benchmark"], "command");
        assert_eq!(c["options"]["command"], result["command"]);
        assert_eq!(c["metric"], "time");
        assert_eq!(c["unit"], "s");
        assert_eq!(c["higher_is_better"], false);
        assert_eq!(c["values"], result["times"]);
    }
    // The two commands of one file compare against the same session as an A/A pair.
    let r = stdout_json(vernier(&db).args([
        "compare",
        "source=hyperfine",
        "latest",
        "--format",
        "json",
    ]));
    assert_eq!(r["comparisons"].as_array().unwrap().len(), 2);
    assert_eq!(r["comparisons"][0]["ratio"], 1.0);
    assert_eq!(r["comparisons"][0]["base_n"], 5);
}

#[test]
fn bad_files_are_refused_with_their_place_and_import_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    vernier(&db)
        .arg("import")
        .arg(fixture("truncated.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("truncated.json"))
        .stderr(predicate::str::is_match("line [0-9]+ column [0-9]+").unwrap());
    vernier(&db)
        .arg("import")
        .arg(fixture("future-version.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("version 99 is not supported"));
    // Valid JSON of the right shape but a wrong type deep inside: serde names line and column.
    let text = std::fs::read_to_string(fixture("two-kernels.json")).unwrap();
    let bad = dir.path().join("bad-type.json");
    std::fs::write(
        &bad,
        text.replacen("\"index\": 3,", "\"index\": \"three\",", 1),
    )
    .unwrap();
    vernier(&db)
        .arg("import")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid type: string \"three\""))
        .stderr(predicate::str::is_match("line [0-9]+ column [0-9]+").unwrap());
    let missing = dir.path().join("missing.json");
    vernier(&db)
        .arg("import")
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"));
    // Nothing was imported: the files are checked before the database is even opened.
    assert!(!db.exists());
    // A good file after the bad ones imports normally.
    vernier(&db)
        .arg("import")
        .arg(fixture("two-kernels.json"))
        .assert()
        .success();
    assert_eq!(session_count(&db), 2);
}

#[test]
fn export_to_an_unwritable_place_fails_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    vernier(&db)
        .arg("import")
        .arg(fixture("two-kernels.json"))
        .assert()
        .success();
    let target = dir.path().join("no-such-dir").join("out.json");
    vernier(&db)
        .args(["export", "-o"])
        .arg(&target)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot write"));
    assert!(!target.parent().unwrap().exists());
    vernier(&db)
        .args(["export", "kernel=Z"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no session matches"));
}
