//! Load profiles (`vernier_load`) with their supervisor, this build's `vernier __load`: every
//! load starts and stops with nothing left behind, its CPU time is counted, a `command` is
//! restarted, a load that cannot start is an error, and `run --load` checks its options and records the loads.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::path::PathBuf;
use std::time::{Duration, Instant};

use vernier_load::{LoadPlan, LoadSet, RunningLoads};
use vernier_sys::process::{process_group_members, process_tree, ProcessIdentity};
use vernier_testkit::{temp_db, vernier};

fn plan(values: &[&str]) -> LoadPlan {
    let values: Vec<String> = values.iter().map(|s| s.to_string()).collect();
    LoadSet::parse(&values).unwrap().with_launcher(
        PathBuf::from(env!("CARGO_BIN_EXE_vernier")),
        vec!["__load".to_string()],
    )
}

/// Waits until `condition` holds, for at most `limit`.
fn wait_for(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    condition()
}

/// The live (not zombie) members of a process group.
fn live_members(group: u32) -> Vec<u32> {
    process_group_members(group)
        .into_iter()
        .filter(|(_, s)| !matches!(s.state, 'Z' | 'X'))
        .map(|(pid, _)| pid)
        .collect()
}

/// CPU time of a running load (its supervisor and the processes under it) so far, in clock
/// ticks.
fn load_ticks(supervisor: u32) -> u64 {
    process_tree(supervisor)
        .iter()
        .map(|(_, s)| s.utime + s.stime + s.cutime + s.cstime)
        .sum()
}

fn assert_gone(groups: &[u32], dirs: &[PathBuf]) {
    for &group in groups {
        // Orphans killed last are reaped by init, which may take a moment.
        assert!(
            wait_for(Duration::from_secs(5), || process_group_members(group)
                .is_empty()),
            "process group {group} left: {:?}",
            process_group_members(group)
        );
    }
    for dir in dirs {
        assert!(!dir.exists(), "{} left", dir.display());
    }
}

fn start(values: &[&str]) -> (RunningLoads, Vec<u32>, Vec<PathBuf>) {
    let running = plan(values).start().unwrap();
    let groups = running.process_groups();
    let dirs = running.dirs().to_vec();
    for &group in &groups {
        assert!(
            !live_members(group).is_empty(),
            "group {group} is not running"
        );
    }
    (running, groups, dirs)
}

#[test]
fn every_load_starts_and_stops_leaving_nothing_behind() {
    for spec in [
        "cpu:duty=20",
        "hackbench:groups=1:loops=2000:datasize=100",
        "memory:mb=1:rate=20",
        "io:mb_per_s=1",
        "net:mbit=1",
        "osadl",
        "command:cmd=sleep 30 & sleep 30",
    ] {
        let (running, groups, dirs) = start(&[spec]);
        if spec.starts_with("io") || spec == "osadl" {
            assert_eq!(dirs.len(), 1, "{spec}");
            // The load writes its file in the directory.
            assert!(
                wait_for(Duration::from_secs(5), || std::fs::read_dir(&dirs[0])
                    .unwrap()
                    .next()
                    .is_some()),
                "{spec} wrote nothing in {}",
                dirs[0].display()
            );
        }
        // Every process of the load, also those in process groups of their own (hackbench's
        // workers).
        let tree: Vec<ProcessIdentity> = process_tree(groups[0])
            .iter()
            .filter_map(|(pid, _)| ProcessIdentity::of(*pid))
            .collect();
        let usage = running.stop();
        assert!(usage.problems.is_empty(), "{spec}: {:?}", usage.problems);
        assert!(usage.cpu_ns >= 0);
        assert_gone(&groups, &dirs);
        for process in &tree {
            assert!(
                wait_for(Duration::from_secs(5), || !process.is_alive()),
                "{spec}: process {} left",
                process.pid
            );
        }
    }
}

#[test]
fn combined_loads_run_side_by_side_and_stop_together() {
    let (running, groups, dirs) = start(&["cpu:cpus=0:duty=10,net:mbit=1", "io:mb_per_s=1"]);
    assert_eq!(groups.len(), 3);
    assert_eq!(dirs.len(), 1);
    let usage = running.stop();
    assert!(usage.problems.is_empty(), "{:?}", usage.problems);
    assert_gone(&groups, &dirs);
}

#[test]
fn the_cpu_time_of_a_load_and_of_what_its_command_forks_is_counted() {
    // The command's busy loop is a grandchild of the supervisor (sh forks it), killed with the
    // group at the end: its time still counts, because the supervisor reaps it as a subreaper.
    for spec in [
        "cpu:cpus=0:duty=100",
        "command:cmd=sh -c 'while true; do true; done' & wait",
    ] {
        let (running, groups, dirs) = start(&[spec]);
        let hz = vernier_sys::clock::clock_ticks_per_second();
        let before = load_ticks(groups[0]);
        // At least 0.2 s of CPU more than when it was reported ready.
        assert!(
            wait_for(Duration::from_secs(20), || load_ticks(groups[0])
                >= before + hz / 5),
            "{spec} used no CPU"
        );
        let usage = running.stop();
        assert!(usage.problems.is_empty(), "{spec}: {:?}", usage.problems);
        assert!(
            usage.cpu_ns >= 150_000_000,
            "{spec}: {} ns counted",
            usage.cpu_ns
        );
        assert_gone(&groups, &dirs);
    }
}

#[test]
fn a_command_is_restarted_when_it_exits() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("starts");
    let cmd = format!("command:cmd=echo start >> {}", file.display());
    let (running, groups, dirs) = start(&[&cmd]);
    let starts = || {
        std::fs::read_to_string(&file)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    assert!(
        wait_for(Duration::from_secs(10), || starts() >= 3),
        "started {} times",
        starts()
    );
    let usage = running.stop();
    assert!(usage.problems.is_empty(), "{:?}", usage.problems);
    assert_gone(&groups, &dirs);
}

#[test]
fn a_load_that_cannot_start_is_an_error_and_leaves_nothing() {
    for (spec, expected) in [
        ("command:cmd=vernier-no-such-program", "status 127"),
        ("command:cmd=exit 3", "exited with status 3 within 1000 ms"),
    ] {
        // A second to fail, as `run` gives before the session: a busy machine may not run a
        // failing program to its end within the default 100 ms.
        let error = plan(&["cpu:cpus=0:duty=10", spec])
            .with_start_check(Duration::from_secs(1))
            .start()
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with(&format!("load '{spec}' did not start: "))
                && error.contains(expected),
            "{error}"
        );
        assert!(!error.contains('\n'), "{error}");
    }
    let error = plan(&["cpu"])
        .with_launcher(PathBuf::from("/nonexistent/vernier"), Vec::new())
        .start()
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("cannot run /nonexistent/vernier"), "{error}");
}

#[test]
fn dropping_running_loads_stops_them() {
    let (running, groups, dirs) = start(&["cpu:cpus=0:duty=10", "io:mb_per_s=1"]);
    drop(running);
    assert_gone(&groups, &dirs);
}

#[test]
fn a_load_that_dies_during_the_run_is_reported_at_stop() {
    let (running, groups, dirs) = start(&["net:mbit=1"]);
    // SAFETY: kill(2) of the load's supervisor, our child, not reaped yet.
    unsafe { libc::kill(groups[0] as i32, libc::SIGKILL) };
    let usage = running.stop();
    assert_eq!(usage.problems.len(), 1, "{:?}", usage.problems);
    assert!(
        usage.problems[0].starts_with("load 'net:mbit=1' failed while it ran:"),
        "{:?}",
        usage.problems
    );
    assert_gone(&groups, &dirs);
}
#[test]
fn bad_loads_are_one_line_and_status_2_before_anything_runs() {
    let (_dir, db) = temp_db();
    for (value, message) in [
        (
            "cpu:duty=0",
            "load 'cpu': invalid value '0' for option 'duty': expected an integer in 1..=100",
        ),
        ("fire", "unknown load 'fire'; valid loads: cpu, hackbench"),
        (
            "net:speed=1",
            "load 'net' has no option 'speed'; valid options: mbit",
        ),
    ] {
        let out = vernier(&db)
            .args(["run", "pipe:loops=100", "--load", value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(message), "{value}: {stderr}");
    }
    assert!(!db.exists(), "the database was created for a bad --load");
}

/// A word that only this test's processes carry (from its temporary directory's name), so
/// that tests of other checkouts running at the same time are not mistaken for its own.
fn unique(dir: &tempfile::TempDir) -> String {
    dir.path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

/// Processes whose command line is `vernier __load SPEC ...`.
fn supervisors_of(spec: &str) -> Vec<u32> {
    let needle = format!("__load\0{spec}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&needle))
        })
        .collect()
}

#[test]
fn run_with_a_load_records_it_and_its_cpu_time_per_run() {
    let (dir, db) = temp_db();
    let cpu = "cpu:cpus=0:duty=50";
    // A command only this test runs, to find its processes afterwards.
    let command = format!("command:cmd=sleep 600 #{}", unique(&dir));
    let loads = format!("{cpu},{command}");
    let label = format!("[load {cpu} + {command}]");
    vernier(&db)
        .args([
            "run",
            "pipe:loops=200",
            "--load",
            &loads,
            "--warmup",
            "1",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--monitor",
            "none",
            "-q",
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains(label.as_str()));
    assert!(
        wait_for(Duration::from_secs(5), || supervisors_of(&command)
            .is_empty()),
        "loads left: {:?}",
        supervisors_of(&command)
    );
    vernier(&db)
        .arg("show")
        .assert()
        .success()
        .stdout(predicates::str::contains(label.as_str()))
        .stdout(predicates::str::contains("load CPU per run"));
    let out = vernier(&db)
        .args(["show", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[0]["loads"], serde_json::json!([cpu, command]));
    assert_eq!(json[0]["load_cpu_ns"].as_array().map(Vec::len), Some(2));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let runs: Vec<(bool, Option<i64>)> = conn
        .prepare("SELECT warmup, load_cpu_ns FROM runs ORDER BY started_at_ns")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(runs.len(), 3, "{runs:?}");
    // Warmups run without the loads; every measured run under them, with their CPU time.
    assert_eq!(runs[0], (true, None));
    for (_, cpu) in &runs[1..] {
        assert!(cpu.is_some_and(|ns| ns >= 0), "{runs:?}");
    }
}

#[test]
fn run_with_a_load_that_cannot_start_fails_before_measuring() {
    let (_dir, db) = temp_db();
    let out = vernier(&db)
        .args([
            "run",
            "pipe:loops=100",
            "--load",
            "command:cmd=vernier-no-such-program",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("load 'command:cmd=vernier-no-such-program' did not start:")
            && stderr.contains("not found"),
        "{stderr}"
    );
    assert!(
        !db.exists(),
        "the database was created for a load that cannot start"
    );
}

#[test]
fn loads_die_with_a_killed_vernier_and_remove_their_directory() {
    let (dir, db) = temp_db();
    // Loads only this test runs, to find their supervisors.
    let specs = [
        format!("command:cmd=sleep 600 #{}", unique(&dir)),
        format!("io:mb_per_s=0.25:dir={}", dir.path().display()),
    ];
    let mut run = vernier_testkit::vernier_command(&db)
        .args([
            "run",
            "yield:duration=30",
            "--warmup",
            "0",
            "--monitor",
            "none",
            "-q",
            "--load",
        ])
        .arg(specs.join(","))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The loads of the first measured run (the check before the session starts them once and
    // stops them, so wait for both to run at the same time).
    // The io load's directory, from its supervisor's command line (`--dir DIR`).
    let io_dir = || {
        supervisors_of(&specs[1])
            .first()
            .and_then(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok())
            .and_then(|c| {
                let args: Vec<String> = c
                    .split(|&b| b == 0)
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                let i = args.iter().position(|a| a == "--dir")?;
                args.get(i + 1).map(PathBuf::from)
            })
    };
    // Both loads run (those of the check before the session or of the first run: either
    // must die with vernier).
    let mut dir_of_io = None;
    let started = wait_for(Duration::from_secs(30), || {
        dir_of_io = io_dir();
        dir_of_io.is_some() && !supervisors_of(&specs[0]).is_empty()
    });
    run.kill().unwrap();
    run.wait().unwrap();
    assert!(started, "the loads did not start");
    for spec in &specs {
        assert!(
            wait_for(Duration::from_secs(10), || supervisors_of(spec).is_empty()),
            "{spec} outlived vernier: {:?}",
            supervisors_of(spec)
        );
    }
    let io_dir = dir_of_io.expect("the io load's directory");
    assert!(
        wait_for(Duration::from_secs(5), || !io_dir.exists()),
        "{} left",
        io_dir.display()
    );
}
