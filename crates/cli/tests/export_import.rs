//! `vernier export` and `import`: round trips through the documented JSON format, CSV rows,
//! hyperfine files, idempotence and bad files.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use vernier_testkit::{imported_db, ok_json, vernier};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn stdout_json(cmd: &mut Command) -> Value {
    ok_json(cmd.output().unwrap())
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
        .stdout("imported 2 sessions, skipped 0 already present with the same content\n");
    vernier(&b)
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stdout("imported 0 sessions, skipped 2 already present with the same content\n");
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
    let (_dir, db) = imported_db(&fixture("two-kernels.json"));
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
        .stdout(predicate::str::contains("imported 1 session,"));
    vernier(&db)
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("imported 0 sessions, skipped 1"));
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

/// A hyperfine file of more times than one part of an import stores (10,000): read as a
/// stream, stored part by part, imported again as a skip; one bad time anywhere in it stores
/// nothing.
#[test]
fn a_large_hyperfine_file_is_stored_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let times: Vec<f64> = (0..25_001).map(|i| 0.01 + f64::from(i) * 1e-7).collect();
    let doc = serde_json::json!({"results": [
        {"command": "a", "times": times, "exit_codes": vec![0; times.len()]},
        {"command": "b", "times": [0.5, 0.25]},
    ]});
    let file = dir.path().join("large.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    for expected in ["imported 1 session,", "imported 0 sessions, skipped 1"] {
        vernier(&db)
            .arg("import")
            .arg(&file)
            .assert()
            .success()
            .stdout(predicate::str::contains(expected));
    }
    let show = stdout_json(vernier(&db).args(["show", "latest", "--format", "json"]));
    assert_eq!(show[0]["values"], serde_json::json!(times));
    assert_eq!(show[1]["values"], serde_json::json!([0.5, 0.25]));

    let other = dir.path().join("b.db");
    let mut bad = doc.clone();
    bad["results"][0]["times"][24_999] = (-1.0).into();
    let file = dir.path().join("bad.json");
    std::fs::write(&file, bad.to_string()).unwrap();
    vernier(&other)
        .arg("import")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("measured run 24999"))
        .stderr(predicate::str::contains("field 'values.time' is -1"));
    assert!(!other.exists() || session_count(&other) == 0);
}

/// An export of a session of more runs than an import stores at once (10,000) is read and
/// stored part by part: it round trips byte for byte, through a file or a pipe and with its
/// fields in any order, a second import compares it part by part, and a difference or a run
/// repeated in a later part stores nothing.
#[test]
fn a_large_export_is_stored_in_parts_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let db = |name: &str| dir.path().join(format!("{name}.db"));
    let times: Vec<f64> = (0..25_001).map(|i| 0.01 + f64::from(i) * 1e-7).collect();
    let hyperfine = serde_json::json!({"results": [
        {"command": "a", "times": times},
        {"command": "b", "times": [0.5, 0.25]},
    ]});
    let file = dir.path().join("hyperfine.json");
    std::fs::write(&file, hyperfine.to_string()).unwrap();
    vernier(&db("a"))
        .arg("import")
        .arg(&file)
        .assert()
        .success();
    let export = |db: &Path| vernier(db).arg("export").output().unwrap().stdout;
    let text = export(&db("a"));
    let file = dir.path().join("export.json");
    std::fs::write(&file, &text).unwrap();

    vernier(&db("b"))
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stdout("imported 1 session, skipped 0 already present with the same content\n");
    assert_eq!(export(&db("b")), text);
    vernier(&db("b"))
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stdout("imported 0 sessions, skipped 1 already present with the same content\n");
    // Through a pipe.
    vernier(&db("c"))
        .args(["import", "-"])
        .write_stdin(text.clone())
        .assert()
        .success();
    assert_eq!(export(&db("c")), text);
    // serde_json writes a value's fields in alphabetical order: a session's `configurations`
    // before its `id`, a configuration's `runs` before its `stop_reason`.
    let doc: Value = serde_json::from_slice(&text).unwrap();
    let sorted = dir.path().join("sorted.json");
    std::fs::write(&sorted, doc.to_string()).unwrap();
    vernier(&db("d"))
        .arg("import")
        .arg(&sorted)
        .assert()
        .success();
    assert_eq!(export(&db("d")), text);

    // A run of the third part that differs from the stored one.
    let mut changed = doc.clone();
    changed["sessions"][0]["configurations"][0]["runs"][24_000]["values"]["time"] = 1.5.into();
    let changed_file = dir.path().join("changed.json");
    std::fs::write(&changed_file, changed.to_string()).unwrap();
    vernier(&db("b"))
        .arg("import")
        .arg(&changed_file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is already stored with other content",
        ))
        .stderr(predicate::str::contains(
            "configurations[0].runs[24000].values",
        ));
    // The first run again in the third part, in place of another: each part is valid alone,
    // the database's keys refuse the second, and nothing is stored.
    let mut repeated = doc.clone();
    let runs = &mut repeated["sessions"][0]["configurations"][0]["runs"];
    runs[24_000] = runs[0].clone();
    std::fs::write(&changed_file, repeated.to_string()).unwrap();
    let out = vernier(&db("e"))
        .arg("import")
        .arg(&changed_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("stored already"), "{stderr}");
    assert!(!db("e").exists() || session_count(&db("e")) == 0);
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
    let (dir, db) = imported_db(&fixture("two-kernels.json"));
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

/// Runs `vernier import FILE` on a new database and returns its error line; checks that it is
/// one line, exit status 2, and that the database was not even created.
fn refused(dir: &Path, name: &str, text: &str) -> String {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let db = dir.join(format!("{name}.db"));
    let out = vernier(&db).arg("import").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{name}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(!db.exists(), "{name}: the database was created");
    stderr
}

#[test]
fn imports_refuse_what_vernier_could_not_have_written() {
    let dir = tempfile::tempdir().unwrap();
    let good: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("two-kernels.json")).unwrap())
            .unwrap();
    let session = good["sessions"][0]["id"].as_str().unwrap().to_string();
    // Name, change, what the message says.
    type Case = (&'static str, fn(&mut Value), &'static str);
    let cases: Vec<Case> = vec![
        (
            "zero-time",
            |d| d["sessions"][0]["configurations"][0]["runs"][1]["values"]["runtime"] = 0.into(),
            "field 'values.runtime' is 0, expected a positive duration in s",
        ),
        (
            "no-primary",
            |d| {
                let run = &mut d["sessions"][0]["configurations"][0]["runs"][1];
                run["values"] = serde_json::json!({"other": 1.0});
            },
            "field 'values' lacks the primary metric 'runtime'",
        ),
        (
            "empty-values",
            |d| d["sessions"][0]["configurations"][0]["runs"][1]["values"] = serde_json::json!({}),
            "field 'values' is empty",
        ),
        (
            "negative-start",
            |d| d["sessions"][0]["started_at_ns"] = (-1).into(),
            "field 'started_at_ns' is -1",
        ),
        (
            "ends-before-start",
            |d| {
                let run = &mut d["sessions"][0]["configurations"][0]["runs"][1];
                run["ended_at_ns"] = (run["started_at_ns"].as_i64().unwrap() - 1).into();
            },
            "before 'started_at_ns'",
        ),
        (
            "negative-setting",
            |d| d["sessions"][0]["settings"]["min_time_s"] = (-2.0).into(),
            "field 'settings.min_time_s' is -2",
        ),
        (
            "duplicate-session",
            |d| {
                let copy = d["sessions"][0].clone();
                d["sessions"].as_array_mut().unwrap().push(copy);
            },
            "occurs more than once in the file",
        ),
    ];
    for (name, mutate, expected) in cases {
        let mut doc = good.clone();
        mutate(&mut doc);
        let err = refused(dir.path(), name, &doc.to_string());
        assert!(err.contains(expected), "{name}: {err}");
        assert!(err.contains(&format!("session {session}")), "{name}: {err}");
    }
    let err = refused(
        dir.path(),
        "hyperfine-codes",
        r#"{"results": [{"command": "true", "times": [0.1, 0.2], "exit_codes": [0, 0, 0]}]}"#,
    );
    assert!(
        err.contains("results[0] (command 'true'): field 'exit_codes' has 3 entries, 'times' 2"),
        "{err}"
    );
    let err = refused(
        dir.path(),
        "hyperfine-negative",
        r#"{"results": [{"command": "true", "times": [0.1, -0.2], "exit_codes": [0, 0]}]}"#,
    );
    assert!(err.contains("(command:command=true)"), "{err}");
    assert!(err.contains("field 'values.time' is -0.2"), "{err}");
}

#[test]
fn a_stored_session_with_other_content_is_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let text = std::fs::read_to_string(fixture("two-kernels.json")).unwrap();
    vernier(&db)
        .arg("import")
        .arg(fixture("two-kernels.json"))
        .assert()
        .success();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["sessions"][1]["configurations"][0]["runs"][2]["values"]["runtime"] = 99.5.into();
    let file = dir.path().join("changed.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let id = doc["sessions"][1]["id"].as_str().unwrap();
    vernier(&db)
        .arg("import")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "session {id} is already stored with other content (first difference: \
             configurations[0].runs[2].values)"
        )));
    // Still the first version, and the same file again is an idempotent skip.
    vernier(&db)
        .arg("import")
        .arg(fixture("two-kernels.json"))
        .assert()
        .success()
        .stdout("imported 0 sessions, skipped 2 already present with the same content\n");
}

/// The file is read as a stream and stored session by session, in one transaction: a conflict
/// in a later session leaves none of the earlier ones stored.
#[test]
fn a_conflict_late_in_the_file_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let text = std::fs::read_to_string(fixture("two-kernels.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let second = doc["sessions"][1].clone();
    let mut only_second = doc.clone();
    only_second["sessions"] = Value::Array(vec![second]);
    let first_file = dir.path().join("second.json");
    std::fs::write(&first_file, only_second.to_string()).unwrap();
    vernier(&db)
        .arg("import")
        .arg(&first_file)
        .assert()
        .success();
    assert_eq!(session_count(&db), 1);
    // The whole file, whose second session now differs from the stored one: the first
    // session is new and is read and stored before the conflict is found.
    doc["sessions"][1]["configurations"][0]["runs"][2]["values"]["runtime"] = 99.5.into();
    let file = dir.path().join("changed.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    vernier(&db)
        .arg("import")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is already stored with other content",
        ));
    assert_eq!(session_count(&db), 1);
}

#[test]
fn child_values_are_stored_and_exported_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    // 0.9555510602119553 is a double that inexact decimal parsing reads one ulp low.
    let value: f64 = "0.9555510602119553".parse().unwrap();
    vernier(&a)
        .args([
            "run",
            "mock:values=0.9555510602119553",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--quiet",
        ])
        .assert()
        .success();
    let stored = |db: &Path| -> Vec<u64> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut stmt = conn.prepare("SELECT value FROM run_metric_values").unwrap();
        stmt.query_map([], |r| r.get::<_, f64>(0))
            .unwrap()
            .map(|v| v.unwrap().to_bits())
            .collect()
    };
    let bits = stored(&a);
    assert_eq!(bits.len(), 3, "a warmup and two measured runs");
    assert!(bits.iter().all(|b| *b == value.to_bits()), "{bits:x?}");
    let export = vernier(&a).arg("export").output().unwrap();
    assert!(export.status.success());
    let text = String::from_utf8(export.stdout).unwrap();
    assert_eq!(text.matches("\"value\": 0.9555510602119553").count(), 3);
    let csv = vernier(&a)
        .args(["export", "--format", "csv"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(csv.stdout)
            .unwrap()
            .matches(",0.9555510602119553,")
            .count(),
        3
    );
    let file = dir.path().join("a.json");
    std::fs::write(&file, &text).unwrap();
    vernier(&b).arg("import").arg(&file).assert().success();
    assert_eq!(stored(&b), bits);
    let again = vernier(&b).arg("export").output().unwrap();
    assert_eq!(String::from_utf8(again.stdout).unwrap(), text);
}

#[test]
fn kernel_configs_travel_with_the_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("two-kernels.json")).unwrap())
            .unwrap();
    let configs = [
        "CONFIG_HZ_250=y\nCONFIG_HZ=250\n# CONFIG_PREEMPT is not set\n",
        "CONFIG_HZ_1000=y\nCONFIG_HZ=1000\nCONFIG_PREEMPT=y\n",
    ];
    let mut texts = serde_json::Map::new();
    for (i, config) in configs.iter().enumerate() {
        let sha = vernier_sha256(config);
        doc["sessions"][i]["environment"]["kernel_config_sha256"] = sha.clone().into();
        texts.insert(sha, (*config).into());
    }
    doc["kernel_configs"] = Value::Object(texts);
    let file = dir.path().join("with-configs.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    vernier(&a).arg("import").arg(&file).assert().success();
    // Through a second database: exported by the first, imported by the second.
    let export = dir.path().join("export.json");
    vernier(&a)
        .args(["export", "-o"])
        .arg(&export)
        .assert()
        .success();
    vernier(&b).arg("import").arg(&export).assert().success();
    let out = vernier(&b)
        .args([
            "env",
            "diff",
            doc["sessions"][0]["id"].as_str().unwrap(),
            doc["sessions"][1]["id"].as_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("[kernel config]"), "{text}");
    assert!(
        text.contains("- CONFIG_HZ=250\n  + CONFIG_HZ=1000"),
        "{text}"
    );
    assert!(
        text.contains("- # CONFIG_PREEMPT is not set\n  + CONFIG_PREEMPT=y"),
        "{text}"
    );
    assert!(!text.contains("texts are not stored"), "{text}");

    // A text that does not match its hash is refused.
    let mut bad = doc.clone();
    let key = bad["kernel_configs"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    bad["kernel_configs"][&key] = "CONFIG_OTHER=y\n".into();
    let err = refused(dir.path(), "bad-config", &bad.to_string());
    assert!(err.contains(&format!("kernel config {key}")), "{err}");
}

/// SHA-256 in lowercase hex, as vernier keys kernel configuration texts.
fn vernier_sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_fingerprint_is_computed_on_import_never_taken_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    // The fixture's sessions claim the fingerprint f00d for an environment of two CPUs.
    let file = fixture("two-kernels.json");
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("\"fingerprint\": \"f00d\""));
    vernier(&db).arg("import").arg(&file).assert().success();
    let computed = vernier_model::Environment {
        online_cpus: Some(2),
        ..Default::default()
    }
    .fingerprint();
    let export = dir.path().join("export.json");
    vernier(&db)
        .args(["export", "-o"])
        .arg(&export)
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    for s in doc["sessions"].as_array().unwrap() {
        assert_eq!(s["fingerprint"], computed.as_str());
    }
    // What vernier writes round-trips bit for bit: imported into another database and
    // exported again, the same bytes.
    let other = dir.path().join("b.db");
    vernier(&other)
        .arg("import")
        .arg(&export)
        .assert()
        .success();
    let again = vernier(&other).arg("export").output().unwrap().stdout;
    assert_eq!(again, std::fs::read(&export).unwrap());
    // And the file itself is the same content as before: importing it again skips both.
    vernier(&db)
        .arg("import")
        .arg(&file)
        .assert()
        .success()
        .stdout("imported 0 sessions, skipped 2 already present with the same content\n");
}

#[test]
fn imports_refuse_control_characters_in_every_text() {
    let dir = tempfile::tempdir().unwrap();
    let good: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("two-kernels.json")).unwrap())
            .unwrap();
    let session = good["sessions"][0]["id"].as_str().unwrap().to_string();
    // Name, change, the field the message names.
    type Case = (&'static str, fn(&mut Value), &'static str);
    let cases: Vec<Case> = vec![
        (
            "option-value",
            |d| d["sessions"][0]["configurations"][0]["options"]["case"] = "a\u{1b}[2Jb".into(),
            "field 'options[case]' ('a\\u{1b}[2Jb') contains the control character ESC (U+001B)",
        ),
        (
            "option-name",
            |d| d["sessions"][0]["configurations"][0]["options"]["ca\rse"] = "x".into(),
            "a key of field 'options' ('ca\\rse') contains the control character CR (U+000D)",
        ),
        (
            "spec",
            |d| d["sessions"][0]["specs"][0] = "bench\0".into(),
            "field 'specs[0]' ('bench\\0') contains the control character NUL (U+0000)",
        ),
        (
            "sysctl-key",
            |d| d["sessions"][0]["environment"]["sysctls"] = serde_json::json!({"vm.x\u{1b}": "1"}),
            "a key of field 'environment.sysctls' ('vm.x\\u{1b}')",
        ),
        (
            "finding",
            |d| {
                d["sessions"][0]["findings"] = serde_json::json!([{"id": "x", "severity": "info",
                    "title": "t", "detail": "a\r\nb"}]);
            },
            "field 'findings[0].detail' ('a\\r\\nb') contains the control character CR (U+000D)",
        ),
        (
            "setup-step",
            |d| {
                d["sessions"][0]["configurations"][0]["runs"][1]["setup_steps"] = serde_json::json!(
                    [{"plugin": "idle-gate", "waited_ms": 1, "timed_out": false,
                      "detail": "load \u{1b}[31m0.1"}]
                );
            },
            "field 'setup_steps[0].detail'",
        ),
        (
            "error",
            |d| d["sessions"][0]["configurations"][0]["error"] = "disk\u{7f}on fire".into(),
            "field 'error' ('disk\\u{7f}on fire') contains the control character DEL (U+007F)",
        ),
    ];
    for (name, mutate, expected) in cases {
        let mut doc = good.clone();
        mutate(&mut doc);
        let err = refused(dir.path(), name, &doc.to_string());
        assert!(err.contains(expected), "{name}: {err}");
        assert!(err.contains(&format!("session {session}")), "{name}: {err}");
        // The message itself is one line of printable text.
        assert!(
            !err.trim_end().chars().any(char::is_control),
            "{name}: {err:?}"
        );
    }
}

#[test]
fn texts_stored_raw_are_exported_escaped_and_import_again() {
    let (dir, db) = imported_db(&fixture("two-kernels.json"));
    // What a vernier before the rule recorded: a child's standard error with a colour
    // sequence and a carriage return in a configuration's error.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE configurations SET error = ?1 WHERE position = 0",
        ["`x run` failed: \u{1b}[31mred\u{1b}[0m\rCR"],
    )
    .unwrap();
    conn.execute(
        "UPDATE configurations SET options = ?1 WHERE position = 1",
        ["{\"case\":\"ti\\u001bes\"}"],
    )
    .unwrap();
    drop(conn);
    let json = vernier(&db).arg("export").output().unwrap().stdout;
    let text = String::from_utf8(json).unwrap();
    assert!(
        text.contains(r#""error": "`x run` failed: \\u{1b}[31mred\\u{1b}[0m\\rCR""#),
        "{text}"
    );
    let csv = vernier(&db)
        .args(["export", "--format", "csv"])
        .output()
        .unwrap()
        .stdout;
    let csv = String::from_utf8(csv).unwrap();
    assert!(csv.contains(",case=ti\\u{1b}es,"), "{csv}");
    assert!(!csv.chars().any(|c| c.is_control() && c != '\n'), "{csv:?}");
    let file = dir.path().join("export.json");
    std::fs::write(&file, &text).unwrap();
    vernier(&dir.path().join("b.db"))
        .arg("import")
        .arg(&file)
        .assert()
        .success();
}
