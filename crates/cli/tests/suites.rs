//! Suites in files: found in the user's configuration directory or by path, layered under the
//! command line's flags, listed, and refused with the file and line when malformed.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::Value;
use vernier_testkit::{temp_db, vernier, vernier_json};

// Each test's database is in a temporary directory (`temp_db`), which is also the
// configuration directory (`XDG_CONFIG_HOME`) the binary reads suites from.

/// Writes the user suite `name` into the configuration directory next to `db`.
fn write_suite(db: &Path, name: &str, text: &str) -> PathBuf {
    let dir = db.parent().unwrap().join("vernier/suites");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The one session of the export of `latest`.
fn latest_session(db: &Path) -> Value {
    let export: Value = vernier_json(db, &["export", "latest"]);
    export["sessions"][0].clone()
}

const MOCKS: &str = r#"
description = "two scripted configurations"
specs = ["mock:values=1/2/3", "mock:values=5/6/7"]
monitors = ["none"]

[settings]
warmup = 0
min-runs = 3
max-runs = 3

[tags]
purpose = "suite test"
kernel = "from-suite"
"#;

#[test]
fn a_user_suite_runs_with_its_settings_under_the_flags_given() {
    let (_dir, db) = temp_db();
    write_suite(&db, "mocks", MOCKS);
    vernier(&db)
        .args(["run", "--suite", "mocks", "--quiet", "--tag", "kernel=A"])
        .assert()
        .success();
    let session = latest_session(&db);
    assert_eq!(session["suite"], "mocks");
    assert_eq!(session["settings"]["warmup"], 0);
    assert_eq!(session["settings"]["max_runs"], 3);
    assert_eq!(session["monitors"], serde_json::json!([]));
    // The suite's tags, with the flag's value for the key both give.
    assert_eq!(session["tags"]["purpose"], "suite test");
    assert_eq!(session["tags"]["kernel"], "A");
    let runs = session["configurations"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);

    // A flag wins over the suite's setting.
    vernier(&db)
        .args([
            "run",
            "--suite",
            "mocks",
            "--quiet",
            "--max-runs",
            "4",
            "--min-runs",
            "4",
        ])
        .assert()
        .success();
    let session = latest_session(&db);
    assert_eq!(session["settings"]["max_runs"], 4);
    assert_eq!(
        session["configurations"][0]["runs"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    assert_eq!(session["tags"]["kernel"], "from-suite");
}

#[test]
fn the_flags_turn_a_suites_interleaving_off_and_on_and_seed_it() {
    let (_dir, db) = temp_db();
    let interleaved = MOCKS.replace("[settings]\n", "[settings]\ninterleave = true\n");
    write_suite(&db, "mocks", &interleaved);
    let settings_of = |flags: &[&str]| {
        vernier(&db)
            .args(["run", "--suite", "mocks", "--quiet"])
            .args(flags)
            .assert()
            .success();
        latest_session(&db)["settings"].clone()
    };
    // The suite interleaves, so --seed needs no --interleave.
    let s = settings_of(&["--seed", "7"]);
    assert_eq!(
        (s["interleave"].clone(), s["seed"].clone()),
        (true.into(), 7.into())
    );
    let s = settings_of(&["--no-interleave"]);
    assert_eq!(s["interleave"], false);
    // The last of the two flags wins.
    let s = settings_of(&["--no-interleave", "--interleave", "--seed", "9"]);
    assert_eq!(
        (s["interleave"].clone(), s["seed"].clone()),
        (true.into(), 9.into())
    );
    let s = settings_of(&["--interleave", "--no-interleave"]);
    assert_eq!(s["interleave"], false);

    let sessions = |db: &Path| {
        let out = vernier(db).arg("sessions").output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let before = sessions(&db);
    assert_eq!(before.matches("mocks").count(), 4, "{before}");
    vernier(&db)
        .args([
            "run",
            "--suite",
            "mocks",
            "--quiet",
            "--no-interleave",
            "--seed",
            "7",
        ])
        .assert()
        .code(2)
        .stderr(
            "error: --seed sets the order of interleaved rounds, but this session does not \
             interleave: give --interleave too, or a suite with interleave = true\n",
        );
    assert_eq!(sessions(&db), before, "nothing stored");
}

#[test]
fn a_suite_is_found_by_path_and_listed() {
    let (dir, db) = temp_db();
    let elsewhere = dir.path().join("elsewhere.toml");
    std::fs::write(&elsewhere, MOCKS).unwrap();
    vernier(&db)
        .args(["run", "--suite", elsewhere.to_str().unwrap(), "--quiet"])
        .assert()
        .success();
    assert_eq!(latest_session(&db)["suite"], "elsewhere");

    let path = write_suite(&db, "mocks", MOCKS);
    write_suite(&db, "broken", "description = 1\n");
    vernier(&db)
        .args(["list", "-v"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "mocks      two scripted configurations ({})",
            path.display()
        )))
        .stdout(predicate::str::contains("             mock:values=5/6/7"))
        .stdout(predicate::str::contains(
            "(--warmup 0 --min-runs 3 --max-runs 3 --monitor none --tag kernel=from-suite --tag purpose=suite test unless given)",
        ))
        .stdout(predicate::str::contains("broken     unusable: suite "))
        .stdout(predicate::str::contains("quick      the four scheduler benchmarks"));
}

#[test]
fn malformed_suites_are_one_line_errors_naming_file_and_line() {
    let (_dir, db) = temp_db();
    let typo = write_suite(
        &db,
        "typo",
        "description = \"d\"\nspecs = [\"mock\"]\n\n[settings]\nmax-run = 3\n",
    );
    let unknown = write_suite(&db, "unknown", "description = \"d\"\nspecs = [\"mokc\"]\n");
    let cases = [
        (
            "typo",
            format!(
                "suite {}:5: unknown field `max-run`, expected one of",
                typo.display()
            ),
        ),
        (
            "unknown",
            format!(
                "suite {}: unknown benchmark 'mokc'; valid benchmarks:",
                unknown.display()
            ),
        ),
        (
            "nope",
            "unknown suite 'nope'; valid suites: quick, scheduler, typo, unknown".to_string(),
        ),
    ];
    for (name, message) in cases {
        let out = vernier(&db)
            .args(["run", "--suite", name])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(&message), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(!db.exists(), "{name} created the database");
    }
}
