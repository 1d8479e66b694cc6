//! Benchmarks of the user's own: the example of contrib/ installed into a temporary
//! configuration directory (`XDG_CONFIG_HOME`), described, planned, run in children, stored
//! and listed; bad descriptions and failing runs are clear errors.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::Value;
use vernier_testkit::{temp_db, vernier};

// Each test's database is in a temporary directory (`temp_db`), which is also the
// configuration directory.

/// Installs the executable `name` with `script` into the benchmark directory next to `db`.
fn install(db: &Path, name: &str, script: &str) -> PathBuf {
    let dir = db.parent().unwrap().join("vernier/benchmarks");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn example() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/benchmarks/sort-numbers");
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_contrib_example_runs_like_a_builtin() {
    let (_dir, db) = temp_db();
    let path = install(&db, "sort-numbers", &example());
    vernier(&db)
        .args([
            "run",
            "sort-numbers:count=2000:order=random,sorted",
            "--warmup",
            "1",
        ])
        .args([
            "--min-runs",
            "3",
            "--max-runs",
            "3",
            "--monitor",
            "none",
            "--quiet",
        ])
        .assert()
        .success();
    let out = vernier(&db).args(["export", "latest"]).output().unwrap();
    let export: Value = serde_json::from_slice(&out.stdout).unwrap();
    let configurations = export["sessions"][0]["configurations"].as_array().unwrap();
    assert_eq!(configurations.len(), 2);
    for (c, order) in configurations.iter().zip(["random", "sorted"]) {
        assert_eq!(c["benchmark"], "sort-numbers");
        assert_eq!(c["options"]["order"], order);
        assert_eq!(c["options"]["count"], 2000);
        assert_eq!(c["options"]["seed"], 1);
        assert_eq!(c["metric"]["name"], "time");
        assert_eq!(c["secondary_metrics"][0]["name"], "rate");
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 4, "a warmup and three measured runs");
        for run in runs {
            let time = run["values"]["time"].as_f64().unwrap();
            let rate = run["values"]["rate"].as_f64().unwrap();
            assert!(time > 0.0, "{run}");
            // The rate is the count over the time the script measured.
            assert!((rate * time / 2000.0 - 1.0).abs() < 1e-3, "{run}");
        }
    }
    vernier(&db)
        .args(["list", "-v"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "sort-numbers sort -n over COUNT numbers drawn from a seeded generator ({})",
            path.display()
        )))
        .stdout(predicate::str::contains(
            "metric time in s (lower is better)",
        ))
        .stdout(predicate::str::contains("one of random, sorted"));
}

#[test]
fn options_are_checked_when_the_plan_is_made() {
    let (_dir, db) = temp_db();
    install(&db, "sort-numbers", &example());
    let cases = [
        (
            "sort-numbers:count=0",
            "invalid value '0' for option 'count': expected an integer in 1..=100000000",
        ),
        (
            "sort-numbers:order=reverse",
            "expected one of random, sorted",
        ),
        (
            "sort-numbers:size=1",
            "benchmark 'sort-numbers' has no option 'size'; valid options: count, order, seed",
        ),
        ("sort-numberz", "valid benchmarks: hackbench"),
    ];
    for (spec, message) in cases {
        let out = vernier(&db).args(["run", spec]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spec}: {stderr}");
        assert!(stderr.contains(message), "{spec}: {stderr}");
        assert!(!db.exists(), "{spec} created the database");
    }
    let out = vernier(&db).args(["run", "sort-numberz"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("sort-numbers"));
}

#[test]
fn bad_descriptions_and_failing_runs_are_clear_errors() {
    let (_dir, db) = temp_db();
    let broken = install(&db, "broken", "#!/bin/sh\necho 'not json'\n");
    let out = vernier(&db).args(["run", "broken"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "user benchmark broken ({}): `broken describe` did not print a valid description",
            broken.display()
        )),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // A broken benchmark does not stop the others, and list says what is wrong with it.
    vernier(&db)
        .args(["list"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "broken     unusable: user benchmark broken",
        ));

    let failing = example().replace(
        "    input=$(mktemp)",
        "    echo 'disk on fire' >&2; exit 3\n    input=$(mktemp)",
    );
    install(&db, "failing", &failing);
    let stderr = failed_run(&db, "failing");
    assert!(
        stderr.contains("`failing run` failed (exit status: 3): disk on fire"),
        "{stderr}"
    );
    let silent = example().replace(
        "        'BEGIN { s = ns",
        "        'BEGIN { exit } { s = ns",
    );
    install(&db, "silent", &silent);
    let stderr = failed_run(&db, "silent");
    assert!(stderr.contains("`silent run`: printed nothing"), "{stderr}");
}

/// Runs `name` twice without warmup; checks that the session failed and returns stderr.
fn failed_run(db: &Path, name: &str) -> String {
    let out = vernier(db)
        .args([
            "run",
            name,
            "--warmup",
            "0",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
        ])
        .args(["--monitor", "none", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
    stderr
}

#[test]
fn run_and_show_print_a_failing_run_s_standard_error_escaped_alike() {
    let (_dir, db) = temp_db();
    let failing = example().replace(
        "    input=$(mktemp)",
        "    printf 'first\\n\\033[31mred\\033[0m\\rCR\\n' >&2; exit 3\n    input=$(mktemp)",
    );
    install(&db, "colours", &failing);
    let stderr = failed_run(&db, "colours");
    let escaped = "`colours run` failed (exit status: 3): \\u{1b}[31mred\\u{1b}[0m\\rCR";
    assert!(stderr.contains(escaped), "{stderr}");
    assert!(
        !stderr.chars().any(|c| c.is_control() && c != '\n'),
        "{stderr:?}"
    );
    let out = vernier(&db).args(["show", "latest"]).output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains(&format!("error: {escaped}")), "{shown}");
    // Stored as shown, so that the session exports and imports.
    let export = vernier(&db).arg("export").output().unwrap().stdout;
    let other = db.with_file_name("other.db");
    let file = db.with_file_name("export.json");
    std::fs::write(&file, export).unwrap();
    vernier(&other).arg("import").arg(&file).assert().success();
}

/// Three user benchmarks whose `describe` never ends, each recording that it started and the
/// pids it leaves: `hold` leaves a child in a session of its own holding its standard output
/// and exits, `hang` waits for a child in its process group, `sleeper` sleeps itself.
fn install_hanging(db: &Path) -> PathBuf {
    let marks = db.parent().unwrap().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let m = marks.display();
    install(
        db,
        "hold",
        &format!(
            "#!/bin/sh\ntouch {m}/hold\nsetsid sleep 1000 &\necho $! > {m}/hold.pid\nexit 0\n"
        ),
    );
    install(
        db,
        "hang",
        &format!("#!/bin/sh\ntouch {m}/hang\nsleep 1000 &\necho $! > {m}/hang.pid\nwait\n"),
    );
    install(
        db,
        "sleeper",
        &format!("#!/bin/sh\ntouch {m}/sleeper\necho $$ > {m}/sleeper.pid\nexec sleep 1000\n"),
    );
    marks
}

fn started(marks: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(marks)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".pid"))
        .collect();
    names.sort();
    names
}

#[test]
fn benchmarks_of_one_s_own_that_a_spec_does_not_name_are_not_described() {
    if vernier_sys::environment::tools::find_on_path(
        "setsid",
        &std::env::var_os("PATH").unwrap_or_default(),
    )
    .is_none()
    {
        eprintln!("skipped: setsid (util-linux) is not on PATH");
        return;
    }
    let (_dir, db) = temp_db();
    let marks = install_hanging(&db);
    vernier(&db)
        .args([
            "run",
            "yield:duration=0.02",
            "--warmup",
            "0",
            "--min-runs",
            "1",
        ])
        .args(["--max-runs", "1", "--monitor", "none", "--quiet"])
        .timeout(std::time::Duration::from_secs(300))
        .assert()
        .success();
    for spec in ["yield:nosuch=1", "nosuch"] {
        let out = vernier(&db)
            .args(["run", spec])
            .timeout(std::time::Duration::from_secs(300))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spec}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{spec}: {stderr}");
    }
    // The unknown benchmark's message names them all the same.
    let out = vernier(&db).args(["run", "nosuch"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("memlat, hang, hold, sleeper"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(started(&marks), Vec::<String>::new());
}

#[test]
fn named_benchmarks_that_hang_are_described_at_once_and_killed_at_the_limit() {
    if vernier_sys::environment::tools::find_on_path(
        "setsid",
        &std::env::var_os("PATH").unwrap_or_default(),
    )
    .is_none()
    {
        eprintln!("skipped: setsid (util-linux) is not on PATH");
        return;
    }
    let (_dir, db) = temp_db();
    let marks = install_hanging(&db);
    let start = std::time::Instant::now();
    let out = vernier(&db)
        .args(["run", "hold", "hang", "sleeper"])
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // The first that a spec names, with the process that held its output.
    let hold = db.parent().unwrap().join("vernier/benchmarks/hold");
    assert!(
        stderr.starts_with(&format!(
            "error: user benchmark hold ({}): `hold describe` exited, but its output was still \
             open after 10 s; PID ",
            hold.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.trim_end().ends_with(
            " (sleep) that it started in a session of its own held its output and was killed"
        ),
        "{stderr}"
    );
    // All three described at the same time: one limit of 10 s, not three.
    assert_eq!(started(&marks), ["hang", "hold", "sleeper"]);
    assert!(elapsed < std::time::Duration::from_secs(25), "{elapsed:?}");
    // Nothing they started is left running.
    for name in ["hold", "hang", "sleeper"] {
        let pid: u32 = std::fs::read_to_string(marks.join(format!("{name}.pid")))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = (0..600).any(|_| {
            let state = vernier_sys::process::read_pid_stat(pid).map(|s| s.state);
            if state.is_none_or(|s| s == 'Z') {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            false
        });
        assert!(
            gone,
            "{name}'s process {pid} still runs a minute after the limit"
        );
    }
}
