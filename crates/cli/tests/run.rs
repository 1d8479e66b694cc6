//! `vernier run`, `show`, `list` and `sessions` end to end, each test with its own database.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use predicates::prelude::*;
use serde_json::Value;
use vernier_testkit::{temp_db, vernier};

fn show_json(db: &Path, session: &str) -> Vec<Value> {
    let out = vernier(db)
        .args(["show", session, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

#[test]
fn every_benchmark_runs_with_tiny_settings_and_is_stored() {
    let (_dir, db) = temp_db();
    // cross-cpu needs two CPUs to run on; with one, the plan refuses it (tests/plan_limits.rs).
    let two_cpus = vernier_sys::affinity::current_affinity().unwrap().len() >= 2;
    if !two_cpus {
        eprintln!("skipped: pipe:placement=cross-cpu needs two CPUs");
    }
    let placements = if two_cpus {
        "same-cpu,cross-cpu,free"
    } else {
        "same-cpu,free"
    };
    let pipes = 2 * placements.split(',').count() as i64;
    vernier(&db)
        .args([
            "run",
            "hackbench:groups=1:fds=2:loops=10:ipc=socket,pipe:tasks=process,thread",
            &format!("pipe:loops=1000:placement={placements}:tasks=process,thread"),
            "fork:duration=0.05",
            "yield:duration=0.05",
            "command:cmd=true:calibration=2",
            "memory:size=64K:threads=1,2:ntimes=2",
            "memlat:size=16K,1M:duration=0.01",
            "--warmup",
            "1",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--tag",
            "kernel=test",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "hackbench:fds=2:groups=1:loops=10",
        ));
    let configs = show_json(&db, "latest");
    let configurations = 4 + pipes + 1 + 1 + 1 + 2 + 2;
    assert_eq!(configs.len() as i64, configurations);
    for c in &configs {
        assert_eq!(c["n"], 2, "{c}");
        assert_eq!(c["stop_reason"], "max-runs");
        assert_eq!(c["converged"], false);
        assert_eq!(c["values"].as_array().unwrap().len(), 2);
        for v in c["values"].as_array().unwrap() {
            assert!(v.as_f64().unwrap() > 0.0, "{c}");
        }
        for key in [
            "benchmark",
            "options",
            "metric",
            "unit",
            "higher_is_better",
            "median",
            "ci_low",
            "ci_high",
            "mean",
        ] {
            assert!(c.get(key).is_some(), "{key} missing in {c}");
        }
    }
    let by_name = |name: &str| configs.iter().find(|c| c["benchmark"] == name).unwrap();
    assert_eq!(by_name("hackbench")["unit"], "s");
    assert_eq!(by_name("hackbench")["higher_is_better"], false);
    assert_eq!(by_name("fork")["higher_is_better"], true);
    assert_eq!(by_name("yield")["metric"], "yields_per_second");
    assert_eq!(by_name("command")["metric"], "time");
    assert_eq!(by_name("command")["options"]["cmd"], "true");
    assert_eq!(by_name("pipe")["options"]["placement"], "same-cpu");
    assert_eq!(by_name("memory")["metric"], "triad");
    assert_eq!(by_name("memory")["unit"], "MB/s");
    assert_eq!(by_name("memory")["options"]["size"], 65536);
    assert_eq!(by_name("memlat")["metric"], "load_ns");
    assert_eq!(by_name("memlat")["higher_is_better"], false);
    // Every run is in the database with its rusage and contamination signal, readable with SQL.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (runs, warmups, with_cpu): (i64, i64, i64) = conn
        .query_row(
            "SELECT count(*), sum(warmup), sum(user_cpu_ns + system_cpu_ns > 0) FROM runs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(runs, configurations * 3);
    assert_eq!(warmups, configurations);
    assert_eq!(with_cpu, configurations * 3);
    let tag: String = conn
        .query_row(
            "SELECT value FROM session_tags WHERE key = 'kernel'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tag, "test");
}

#[test]
fn stopping_rule_converges_on_scripted_values() {
    let (_dir, db) = temp_db();
    // Runs 1-6 spread 10%; from run 7 the values cluster. The confidence sequence's interval
    // is [x(1), x(n)] = [90, 110] up to n = 11 and [x(2), x(11)] = [99, 101] at n = 12.
    vernier(&db)
        .args([
            "run",
            "mock:values=90/110/100/99/101/100/100/100/100/100/100/100",
            "--quiet",
        ])
        .assert()
        .success();
    let c = &show_json(&db, "latest")[0];
    assert_eq!(c["n"], 12);
    assert_eq!(c["ci_method"], "confidence-sequence");
    assert!(c["ci_meaning"]
        .as_str()
        .unwrap()
        .contains("anytime-valid 95% confidence sequence"));
    assert_eq!(c["stop_reason"], "converged");
    assert_eq!(c["converged"], true);
    assert_eq!(c["median"], 100.0);
    assert_eq!(
        (c["ci_low"].as_f64(), c["ci_high"].as_f64()),
        (Some(99.0), Some(101.0))
    );
    assert_eq!(c["warmup_runs"], 1);
    vernier(&db)
        .args(["show"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "anytime-valid 95% confidence sequence",
        ));

    // The old rule, kept selectable: the fixed-n interval [x(2), x(8)] = [99, 101] stops it at
    // n = 9, and show says what that interval is.
    vernier(&db)
        .args([
            "run",
            "mock:values=90/110/100/99/101/100/100/100/100/100",
            "--stopping-rule",
            "fixed-n",
            "--quiet",
        ])
        .assert()
        .success();
    let c = &show_json(&db, "latest")[0];
    assert_eq!(c["n"], 9);
    assert_eq!(c["ci_method"], "fixed-n");
    assert_eq!(
        (c["ci_low"].as_f64(), c["ci_high"].as_f64()),
        (Some(99.0), Some(101.0))
    );
}

#[test]
fn conflicting_bounds_are_warned_before_running() {
    let (_dir, db) = temp_db();
    vernier(&db)
        .args(["run", "mock:values=1", "--max-runs", "6", "--quiet"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: --max-runs 6 is below the 8 runs that the interval of the median needs",
        ));
}

#[test]
fn noisy_scripted_values_stop_at_max_runs_with_a_warning() {
    let (_dir, db) = temp_db();
    vernier(&db)
        .args([
            "run",
            "mock:values=80/120",
            "--max-runs",
            "10",
            "--warmup",
            "0",
            "--quiet",
        ])
        .assert()
        .success();
    vernier(&db)
        .args(["show"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "not converged (stopped: max-runs)",
        ))
        .stdout(predicate::str::contains("median 95% CI"));
    let c = &show_json(&db, "latest")[0];
    assert_eq!(c["n"], 10);
    assert_eq!(c["warmup_runs"], 0);
}

#[test]
fn sweeps_interleave_and_are_listed_in_sessions() {
    let (_dir, db) = temp_db();
    vernier(&db)
        .args([
            "run",
            "mock:values=1,2,3",
            "--interleave",
            "--seed",
            "42",
            "--min-runs",
            "6",
            "--tag",
            "kernel=A",
            "--note",
            "first try",
            "--quiet",
        ])
        .assert()
        .success();
    let configs = show_json(&db, "latest");
    let values: Vec<&str> = configs
        .iter()
        .map(|c| c["options"]["values"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["1", "2", "3"]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let rounds: i64 = conn
        .query_row("SELECT max(round) FROM runs", [], |r| r.get(0))
        .unwrap();
    // No convergence before the multimodality check can judge (10 runs), so the constant
    // values stop after 10 rounds.
    assert_eq!(rounds, 9, "ten rounds of one measured run each");
    vernier(&db)
        .arg("sessions")
        .assert()
        .success()
        .stdout(predicate::str::contains("kernel=A"))
        .stdout(predicate::str::contains("completed"));
    vernier(&db)
        .args(["show", "latest", "--histogram"])
        .assert()
        .success()
        .stdout(predicate::str::contains("note: first try"))
        .stdout(predicate::str::contains("▒"));
}

#[test]
fn a_failing_benchmark_exits_2_and_keeps_its_runs() {
    let (_dir, db) = temp_db();
    vernier(&db)
        .args(["run", "mock:values=5:fail_at=3", "--warmup", "0", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("mock"));
    let c = &show_json(&db, "latest")[0];
    assert_eq!(c["n"], 2);
    assert_eq!(c["stop_reason"], "failed");
    assert!(c["error"].as_str().unwrap().contains("fail"));
}

#[test]
fn a_run_beyond_the_run_timeout_is_killed_and_fails_with_the_reason() {
    let (_dir, db) = temp_db();
    vernier(&db)
        .args([
            "run",
            "mock:sleep=600",
            "--warmup",
            "0",
            "--run-timeout",
            "0.3",
        ])
        .args(["--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("time limit of 0.3 s"));
    let c = &show_json(&db, "latest")[0];
    assert_eq!(c["n"], 0);
    assert_eq!(c["stop_reason"], "failed");
    let error = c["error"].as_str().unwrap();
    assert!(error.contains("process group was killed"), "{error}");
}

#[test]
fn a_child_writing_more_than_a_pipe_buffer_to_stderr_completes() {
    let (_dir, db) = temp_db();
    // The run timeout makes a deadlock fail the test instead of hanging it.
    vernier(&db)
        .args([
            "run",
            "mock:stderr=200000",
            "--warmup",
            "1",
            "--run-timeout",
            "120",
        ])
        .args(["--min-runs", "2", "--max-runs", "2", "--quiet"])
        .assert()
        .success();
    let c = &show_json(&db, "latest")[0];
    assert_eq!(
        (c["n"].as_u64(), c["stop_reason"].as_str()),
        (Some(2), Some("max-runs"))
    );
}

#[test]
fn the_system_check_is_cached_in_the_user_cache_dir() {
    if !Path::new("/proc/sys/kernel/random/boot_id").exists() {
        eprintln!("skipped: no /proc/sys/kernel/random/boot_id to key the cache by");
        return;
    }
    let (dir, db) = temp_db();
    let cache = dir.path().join("vernier/system-check.json");
    for _ in 0..2 {
        vernier(&db)
            .args(["run", "mock", "--warmup", "0", "--max-runs", "6", "--quiet"])
            .assert()
            .success();
        let file: Value = serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
        assert_eq!(file["key"]["boot_id"], boot.trim());
        assert_eq!(file["key"]["window_ms"], 200);
    }
}

#[test]
fn list_shows_benchmarks_suites_and_options() {
    let (_dir, db) = temp_db();
    vernier(&db)
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("hackbench"))
        .stdout(predicate::str::contains("quick"))
        .stdout(predicate::str::contains("mock").not());
    vernier(&db)
        .args(["list", "-v"])
        .assert()
        .success()
        .stdout(predicate::str::contains("groups"))
        .stdout(predicate::str::contains("default 10"))
        .stdout(predicate::str::contains("forks/s"))
        .stdout(predicate::str::contains("version 1"));
    assert!(!db.exists(), "list does not create a database");
}

/// Durations are plain seconds or humantime's form, and the session stores them in seconds.
#[test]
fn durations_take_units() {
    let (_dir, db) = temp_db();
    vernier(&db)
        .args(["run", "mock:values=1/2", "--quiet", "--min-runs", "2"])
        .args(["--max-runs", "2", "--warmup", "0"])
        .args([
            "--min-time",
            "0s",
            "--max-time",
            "1m30s",
            "--run-timeout",
            "10m",
        ])
        .assert()
        .success();
    let out = vernier(&db).arg("export").output().unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let settings = &doc["sessions"][0]["settings"];
    assert_eq!(settings["max_time_s"], 90.0, "{settings}");
    assert_eq!(settings["min_time_s"], 0.0, "{settings}");
}

/// Bad input: one line naming what is wrong and what is valid, exit 2, no database written.
#[test]
fn bad_input_is_rejected_before_anything_runs() {
    let (_dir, db) = temp_db();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "hackbnch"],
            "valid benchmarks: hackbench, pipe, fork, yield",
        ),
        (
            &["run", "hackbench:grups=4"],
            "valid options: groups, fds, loops, datasize, ipc, tasks",
        ),
        (&["run", "hackbench:groups=four"], "expected an integer"),
        (&["run", "hackbench:groups=0"], "expected an integer in 1"),
        (&["run", "hackbench:ipc=tcp"], "one of socket, pipe"),
        (
            &["run", "hackbench:groups="],
            "empty value or an empty list element",
        ),
        (&["run", "hackbench:groups=4,,8"], "empty list element"),
        (&["run", "hackbench:groups"], "is not OPTION=VALUE"),
        (&["run", "fork:duration=-1"], "expected a number in"),
        (&["run", "--suite", "nope"], "valid suites: quick"),
        (
            &["run", "pipe", "--min-runs", "10", "--max-runs", "5"],
            "--max-runs",
        ),
        (&["run", "pipe", "--target", "0"], "outside (0, 1)"),
        (&["run", "pipe", "--tag", "novalue"], "is not KEY=VALUE"),
        (
            &["run", "pipe", "--tag", "a=1", "--tag", "a=2"],
            "tag 'a' is given twice",
        ),
        (&["run", "pipe", "pipe"], "is given twice"),
        (&["run", "pipe", "--run-timeout", "0"], "greater than 0"),
        (
            &["run", "pipe", "--max-time", "1m30x"],
            "'1m30x' is not a duration: a number of seconds greater than 0",
        ),
        (
            &["run", "pipe", "--min-time", "-1s"],
            "a number of seconds of 0 or more (such as 30 or 0.5), or with units",
        ),
    ];
    for (args, message) in cases {
        let out = vernier(&db).args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
        assert!(!db.exists(), "{args:?} created the database");
    }
}

#[test]
fn unusable_databases_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    // A directory is not a database.
    vernier(dir.path())
        .args(["run", "mock", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is a directory; expected a vernier database",
        ));
    // A file that is not SQLite.
    let junk = dir.path().join("junk.db");
    std::fs::write(
        &junk,
        "this is not a database, just text that is long enough to matter",
    )
    .unwrap();
    vernier(&junk)
        .args(["run", "mock", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is not an SQLite database; expected a vernier database",
        ));
    // Reading a database that does not exist does not create it.
    let missing = dir.path().join("missing.db");
    vernier(&missing).arg("show").assert().code(2);
    vernier(&missing).arg("sessions").assert().code(2);
    assert!(!missing.exists());
    // A session that does not exist.
    let (_d, db) = temp_db();
    vernier(&db)
        .args(["run", "mock", "--quiet"])
        .assert()
        .success();
    vernier(&db)
        .args(["show", "ffffffff"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ffffffff"));
}

#[test]
fn two_processes_write_one_database_at_once() {
    let (_dir, db) = temp_db();
    let bin = assert_cmd::cargo::cargo_bin("vernier");
    let spawn = || {
        std::process::Command::new(&bin)
            .arg("--db")
            .arg(&db)
            .env("XDG_CACHE_HOME", db.parent().unwrap())
            .args([
                "run",
                "mock:values=1/2/3/4",
                "--min-runs",
                "40",
                "--max-runs",
                "40",
                "--quiet",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (sessions, runs): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM sessions WHERE status = 'completed'), \
                    (SELECT count(*) FROM runs WHERE warmup = 0)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((sessions, runs), (2, 80));
}

/// Ctrl-C (SIGINT to the controller) marks the session interrupted, keeps the completed runs
/// and exits with 130; the run in progress and its workers are ended.
#[test]
fn interrupt_keeps_completed_runs() {
    let (_dir, db) = temp_db();
    let bin = assert_cmd::cargo::cargo_bin("vernier");
    let mut child = std::process::Command::new(&bin)
        .arg("--db")
        .arg(&db)
        .env("XDG_CACHE_HOME", db.parent().unwrap())
        .args([
            "run",
            "yield:duration=0.2:workers=1",
            "--warmup",
            "0",
            "--min-runs",
            "100",
            "--max-runs",
            "100",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    // Plain progress lines (stdout is not a terminal): wait for the second measured run.
    for line in lines.by_ref() {
        if line.unwrap().contains("run 2:") {
            break;
        }
    }
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(
        rest.iter().any(|l| l.contains("session interrupted")),
        "{rest:?}"
    );
    let c = &show_json(&db, "latest")[0];
    let n = c["n"].as_u64().unwrap();
    assert!((2..100).contains(&n), "n = {n}");
    assert_eq!(c["stop_reason"], "interrupted");
    vernier(&db)
        .arg("sessions")
        .assert()
        .success()
        .stdout(predicate::str::contains("interrupted"));
}

#[test]
fn a_bimodal_result_is_flagged_and_its_interval_not_trusted() {
    let (_dir, db) = temp_db();
    // Half the runs around 1.0, half around 1.1: the median lies between the modes, the target
    // is out of reach, and show says why the interval is not to be trusted.
    vernier(&db)
        .args([
            "run",
            "mock:dist=bimodal:sigma=0.01:share=0.5:seed=1",
            "--quiet",
        ])
        .assert()
        .success();
    let c = &show_json(&db, "latest")[0];
    assert_eq!(c["stop_reason"], "unreachable");
    assert_eq!(c["converged"], false);
    assert_eq!(c["options"]["seed"], 1);
    let warnings: Vec<&str> = c["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("possibly multimodal") && w.contains("not to be trusted")),
        "{warnings:?}"
    );
    vernier(&db)
        .args(["show"])
        .assert()
        .success()
        .stdout(predicate::str::contains("not to be trusted"));
}

/// A session still running at its `--time-limit` is stopped as an interrupt stops it: the run
/// in progress is killed, the completed runs are kept, and the session carries a `time-limit`
/// finding; the command says so and exits with status 2.
#[test]
fn a_session_past_its_time_limit_is_stopped_with_a_finding() {
    let (_dir, db) = temp_db();
    let out = vernier(&db)
        .args([
            "run",
            "mock:sleep=0.3",
            "--warmup",
            "0",
            "--min-runs",
            "500",
            "--max-runs",
            "500",
            "--max-time",
            "1h",
            "--time-limit",
            "2s",
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ran past its time limit of 2 s (--time-limit)"),
        "{stderr}"
    );
    let c = &show_json(&db, "latest")[0];
    assert_eq!(c["stop_reason"], "interrupted");
    assert!(c["n"].as_u64().unwrap() < 500);
    let findings: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT findings FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert!(findings.contains("\"time-limit\""), "{findings}");

    // A limit that is not a duration is refused, naming what is valid.
    vernier(&db)
        .args(["run", "mock", "--time-limit", "soon"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "'soon' is not a time limit: a duration greater than 0",
        ))
        .stderr(predicate::str::contains("budget or off"));

    // `budget`: a quick session ends long before twice its budget.
    vernier(&db)
        .args(["run", "mock", "--time-limit", "budget", "--quiet"])
        .assert()
        .success();
}
