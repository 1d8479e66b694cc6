//! The `command` benchmark end to end: its options checked when the plan is made, a failing
//! command as a failed run, the per-run timeout, prepare and cleanup, parameters and the shell
//! start-up it subtracts. Only facts are asserted, never timings.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::path::Path;

use serde_json::Value;
use vernier_testkit::{temp_db, vernier, vernier_json};

/// Runs `specs` with `runs` measured runs and `warmup` warmups; returns the exit code and
/// stderr.
fn run(db: &Path, specs: &[&str], warmup: u32, runs: u32) -> (Option<i32>, String) {
    let out = vernier(db)
        .arg("run")
        .args(specs)
        .args(["--warmup", &warmup.to_string()])
        .args([
            "--min-runs",
            &runs.to_string(),
            "--max-runs",
            &runs.to_string(),
        ])
        .arg("--quiet")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn show_json(db: &Path) -> Vec<Value> {
    vernier_json(db, &["show", "latest", "--format", "json"])
}

/// The values of `metric` of every measured run in the database.
fn run_values(db: &Path, metric: &str) -> Vec<f64> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT v.value FROM run_metric_values v JOIN runs r ON r.key = v.run_key \
             WHERE v.metric = ?1 AND r.warmup = 0",
        )
        .unwrap();
    stmt.query_map([metric], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn bad_options_exit_2_before_anything_runs() {
    let (_dir, db) = temp_db();
    let cases: &[(&str, &str)] = &[
        ("command", "option 'cmd' is required"),
        (
            "command:cmd=sleep 1:timout=5",
            "parameter 'timout' fills nothing: there is no {timout} in cmd, prepare, cleanup or \
             output; the options of command are cmd, shell,",
        ),
        (
            "command:cmd=true:output=inherit",
            "output=inherit is not possible",
        ),
        (
            "command:cmd=true:shell=no-such-shell-here",
            "program 'no-such-shell-here' is not found in PATH",
        ),
        (
            "command:cmd=no-such-program-here 1:shell=none",
            "program 'no-such-program-here' is not found in PATH",
        ),
        ("command:cmd=echo 'a:shell=none", "a quote is not closed"),
        (
            "command:cmd=true:timeout=-1",
            "expected a number in 0..=86400",
        ),
        ("command:cmd=true:ignore_failure=yes", "one of false, true"),
        (
            "command:cmd=true:9lives=1",
            "benchmark 'command' has no option '9lives'",
        ),
    ];
    for (spec, message) in cases {
        let (code, stderr) = run(&db, &[spec], 0, 1);
        assert_eq!(code, Some(2), "{spec}: {stderr}");
        assert!(stderr.contains(message), "{spec}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{spec}: {stderr}");
        assert!(!db.exists(), "{spec} created the database");
    }
}

#[test]
fn a_failing_command_fails_its_configuration_unless_failures_are_ignored() {
    let (_dir, db) = temp_db();
    let (code, stderr) = run(&db, &["command:cmd=exit 3:calibration=2"], 0, 2);
    assert_eq!(code, Some(2), "{stderr}");
    let c = &show_json(&db)[0];
    assert_eq!(c["stop_reason"], "failed");
    assert_eq!(c["n"], 0);
    let error = c["error"].as_str().unwrap();
    assert!(
        error.contains("the command exited with status 3 (ignore_failure=true accepts that)"),
        "{error}"
    );

    let (code, stderr) = run(
        &db,
        &["command:cmd=exit 3:calibration=2:ignore_failure=true"],
        0,
        2,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let c = &show_json(&db)[0];
    assert_eq!(c["n"], 2);
    assert_eq!(c["stop_reason"], "max-runs");
}

/// The processes whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_name().to_str()?.parse::<u32>().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            text.contains(needle).then_some(text)
        })
        .collect()
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let (_dir, db) = temp_db();
    // Two sleeps of a length no other test uses: one in the background, one in the
    // foreground of the shell, both in the command's process group.
    let needle = format!("{}.25", 3000 + std::process::id() % 1000);
    let spec =
        format!("command:cmd=sleep {needle} & sleep {needle}; true:timeout=0.5:calibration=1");
    let (code, stderr) = run(&db, &[&spec], 0, 1);
    assert_eq!(code, Some(2), "{stderr}");
    let c = &show_json(&db)[0];
    assert_eq!(c["stop_reason"], "failed");
    let error = c["error"].as_str().unwrap();
    assert!(
        error.contains(
            "the command did not finish within timeout=0.5 s; its process group was killed"
        ),
        "{error}"
    );
    let left = processes_with(&format!("sleep {needle}"));
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn vernier_s_own_run_timeout_ends_the_command_with_its_run() {
    let (_dir, db) = temp_db();
    // The command runs in the run's process group, which the controller kills.
    let needle = format!("{}.5", 4000 + std::process::id() % 1000);
    let spec = format!("command:cmd=sleep {needle} & sleep {needle}; true:calibration=1");
    let out = vernier(&db)
        .args([
            "run",
            &spec,
            "--warmup",
            "0",
            "--run-timeout",
            "0.5",
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("time limit of 0.5 s"), "{stderr}");
    // Killed processes are reaped by init, which may take a moment.
    let mut left = processes_with(&format!("sleep {needle}"));
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        left = processes_with(&format!("sleep {needle}"));
    }
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn prepare_and_cleanup_run_around_every_run_and_parameters_sweep() {
    let (dir, db) = temp_db();
    let log = dir.path().join("log");
    let log = log.display();
    let spec = format!(
        "command:prepare=echo prepare {{word}} >> {log}:cmd=echo command {{word}} >> {log}\
         :cleanup=echo cleanup {{word}} >> {log}:word=alpha,beta:calibration=1"
    );
    let (code, stderr) = run(&db, &[&spec], 1, 2);
    assert_eq!(code, Some(0), "{stderr}");
    let configs = show_json(&db);
    let words: Vec<&str> = configs
        .iter()
        .map(|c| c["options"]["word"].as_str().unwrap())
        .collect();
    assert_eq!(words, ["alpha", "beta"]);
    for c in &configs {
        assert_eq!(c["n"], 2, "{c}");
        assert_eq!(c["metric"], "time");
        assert_eq!(c["unit"], "s");
    }
    // Each of the three runs (one warmup, two measured) of each configuration ran its
    // prepare, command and cleanup in that order, with the parameter filled in.
    let text = std::fs::read_to_string(dir.path().join("log")).unwrap();
    for word in ["alpha", "beta"] {
        let lines: Vec<&str> = text.lines().filter(|l| l.ends_with(word)).collect();
        let one = format!("prepare {word}\ncommand {word}\ncleanup {word}\n");
        assert_eq!(lines.join("\n") + "\n", one.repeat(3), "{text}");
    }
}

#[test]
fn the_shell_start_up_is_measured_and_recorded_with_the_usage() {
    let (_dir, db) = temp_db();
    let (code, stderr) = run(&db, &["command:cmd=true:calibration=5"], 0, 3);
    assert_eq!(code, Some(0), "{stderr}");
    // The subtracted start-up is recorded and positive; what is left stays positive.
    for metric in ["shell_time", "time", "max_rss_bytes"] {
        let values = run_values(&db, metric);
        assert_eq!(values.len(), 3, "{metric}");
        assert!(values.iter().all(|v| *v > 0.0), "{metric}: {values:?}");
    }
    for metric in ["user_time", "system_time"] {
        let values = run_values(&db, metric);
        assert_eq!(values.len(), 3, "{metric}");
        assert!(values.iter().all(|v| *v >= 0.0), "{metric}: {values:?}");
    }
    // Without a shell there is nothing to subtract.
    let (code, stderr) = run(&db, &["command:cmd=true:shell=none"], 0, 2);
    assert_eq!(code, Some(0), "{stderr}");
    let values = run_values(&db, "shell_time");
    assert_eq!(
        values.iter().filter(|v| **v == 0.0).count(),
        2,
        "{values:?}"
    );
}

#[test]
fn one_warm_process_spawns_a_fresh_command_in_every_run_of_a_configuration() {
    // Each execution of the command appends its parent's pid (the process that spawned it)
    // and its own: the spawner stays for all of a configuration's runs, warmup included,
    // while the measured command is a new process every time; another configuration has a
    // spawner of its own.
    let (dir, db) = temp_db();
    let log = dir.path().join("pids");
    let cmd = |tag: &str| {
        format!(
            "command:cmd=sh -c 'echo {tag} $PPID $$ >> {}':shell=none",
            log.display()
        )
    };
    let (code, stderr) = run(&db, &[&cmd("a"), &cmd("b")], 1, 4);
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 10, "{text}");
    let spawners = |tag: &str| -> std::collections::BTreeSet<&str> {
        lines.iter().filter(|l| l[0] == tag).map(|l| l[1]).collect()
    };
    assert_eq!(spawners("a").len(), 1, "{text}");
    assert_eq!(spawners("b").len(), 1, "{text}");
    assert_ne!(spawners("a"), spawners("b"), "{text}");
    let commands: std::collections::BTreeSet<&str> = lines.iter().map(|l| l[2]).collect();
    assert_eq!(commands.len(), 10, "a command process ran twice: {text}");
    // The runs are stored as ever: four measured runs of each, with their resource usage.
    assert_eq!(run_values(&db, "time").len(), 8);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let cpu: i64 = conn
        .query_row(
            "SELECT MIN(user_cpu_ns + system_cpu_ns) FROM runs WHERE warmup = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(cpu > 0, "a run without CPU time");
}

/// The `Cpus_allowed_list` of every process the log's lines name, in order: each line is
/// `grep`'s `/proc/PID/status:Cpus_allowed_list:\tLIST`.
fn allowed_lists(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| l.rsplit('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn the_command_starts_on_its_spawner_s_cpu_and_may_use_every_cpu() {
    let cpus = vernier_sys::affinity::current_affinity().unwrap();
    let own = vernier_model::cpulist::format_cpu_list(&cpus);
    if cpus.len() < 2 {
        eprintln!("skipped: needs two CPUs to tell a spawner's CPU from all (has {own})");
        return;
    }
    // Each execution logs where its spawner may run, then where it may itself: after a
    // while, since on a busy machine the command may run before its spawner lets it use every
    // CPU, and is let at the latest after a millisecond.
    let (dir, db) = temp_db();
    let log = dir.path().join("cpus");
    let spec = format!(
        "command:cmd=sh -c 'sleep 0.05; grep Cpus_allowed_list /proc/$PPID/status \
         /proc/$$/status >> {}':shell=none",
        log.display()
    );
    let (code, stderr) = run(&db, &[&spec], 1, 3);
    assert_eq!(code, Some(0), "{stderr}");
    let lists = allowed_lists(&log);
    assert_eq!(lists.len(), 8, "{lists:?}");
    for pair in lists.chunks(2) {
        let spawner = vernier_model::cpulist::parse_cpu_list(&pair[0]).unwrap();
        assert_eq!(spawner.len(), 1, "the spawner stays on one CPU: {lists:?}");
        assert!(cpus.contains(&spawner[0]), "{lists:?}");
        assert_eq!(pair[1], own, "the command may use every CPU: {lists:?}");
    }
    // Pinned, both are where the pin says.
    std::fs::remove_file(&log).unwrap();
    let pin = format!("pin:cpus={}", cpus[1]);
    let (code, stderr) = run(&db, &[&spec, "--setup", &pin], 0, 2);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(allowed_lists(&log), vec![cpus[1].to_string(); 4]);
}
