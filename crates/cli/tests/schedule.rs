//! `vernier schedule` writes systemd units into a directory of the test's own (never the real
//! systemd), checked with `systemd-analyze verify`; and `run --if-busy`, which the scheduled
//! runs use, skipping a busy machine with a record of why.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use vernier_model::{Recorder, SessionStatus};
use vernier_store::{SqliteStore, Store};
use vernier_testkit::{can_run, missing_programs, ok, refused, vernier_no_input, Program};

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `systemd-analyze verify` of unit files: no complaint at all (it reports some mistakes only
/// as warnings, with exit status 0). Outside CI a machine without systemd-analyze skips.
fn verify(units: &[PathBuf]) {
    let output = match Command::new("systemd-analyze")
        .arg("verify")
        .args(units)
        .output()
    {
        Ok(output) => output,
        Err(e) => {
            can_run(
                "systemd-analyze verify",
                Some(format!("systemd-analyze: {e} (apt-get install systemd)")),
            );
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.trim().is_empty(), "{stderr}");
}

fn setting<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.lines()
        .filter_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .collect()
}

#[test]
fn a_scheduled_suite_is_a_verified_service_and_timer_until_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let units = dir.path().join("units");
    let central = dir.path().join("central db.db");
    let install = |extra: &[&str]| {
        let mut cmd = vernier_no_input(&db);
        cmd.args(["schedule", "install", "nightly", "--suite", "quick"])
            .args(["--on-calendar", "Mon..Fri 02:00", "--tag", "rack=3"])
            .args(["--sync", central.to_str().unwrap(), "--busy-load", "1.5"])
            .args(["--unit-dir", units.to_str().unwrap()])
            .args(extra);
        cmd.output().unwrap()
    };

    // --dry-run prints both units and writes nothing.
    let printed = ok(install(&["--dry-run"]));
    assert!(printed.contains("vernier-nightly.service") && printed.contains("[Timer]"));
    assert!(!units.exists());

    let out = ok(install(&[]));
    assert!(
        out.contains("daemon-reload") && out.contains("enable --now vernier-nightly.timer"),
        "{out}"
    );
    assert_eq!(
        files(&units),
        ["vernier-nightly.service", "vernier-nightly.timer"]
    );
    let service = std::fs::read_to_string(units.join("vernier-nightly.service")).unwrap();
    let timer = std::fs::read_to_string(units.join("vernier-nightly.timer")).unwrap();
    // What --dry-run printed is what was written.
    assert!(
        printed.contains(&service) && printed.contains(&timer),
        "{printed}"
    );

    let exe = env!("CARGO_BIN_EXE_vernier");
    assert_eq!(
        setting(&service, "ExecStart"),
        [format!(
            "{exe} --db {} run --suite quick --tag rack=3 --quiet --if-busy wait --busy-load 1.5",
            db.display()
        )]
    );
    assert_eq!(
        setting(&service, "ExecStopPost"),
        [format!(
            "{exe} --db {} sync --to \"{}\"",
            db.display(),
            central.display()
        )]
    );
    assert_eq!(setting(&service, "Type"), ["oneshot"]);
    assert_eq!(setting(&timer, "OnCalendar"), ["Mon..Fri 02:00"]);
    assert_eq!(setting(&timer, "OnBootSec"), ["5min"]);
    assert_eq!(setting(&timer, "Persistent"), ["true"]);
    verify(&[
        units.join("vernier-nightly.service"),
        units.join("vernier-nightly.timer"),
    ]);

    let listed = ok(vernier_no_input(&db)
        .args(["schedule", "list", "--unit-dir", units.to_str().unwrap()])
        .output()
        .unwrap());
    assert!(
        listed.contains("nightly") && listed.contains("Mon..Fri 02:00, and 5min after boot"),
        "{listed}"
    );

    ok(vernier_no_input(&db)
        .args([
            "schedule",
            "remove",
            "nightly",
            "--unit-dir",
            units.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    assert!(files(&units).is_empty());
    let err = refused(
        vernier_no_input(&db)
            .args([
                "schedule",
                "remove",
                "nightly",
                "--unit-dir",
                units.to_str().unwrap(),
            ])
            .output()
            .unwrap(),
    );
    assert!(err.contains("no scheduled run 'nightly'"), "{err}");
    let listed = ok(vernier_no_input(&db)
        .args(["schedule", "list", "--unit-dir", units.to_str().unwrap()])
        .output()
        .unwrap());
    assert!(listed.starts_with("no scheduled runs"), "{listed}");
}

#[test]
fn the_latency_monitor_is_a_verified_service_restarted_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let units = dir.path().join("units");
    ok(vernier_no_input(&db)
        .args([
            "schedule",
            "install",
            "latency",
            "--service",
            "latency-monitor",
        ])
        .args(["--interval", "1m", "--unit-dir", units.to_str().unwrap()])
        .output()
        .unwrap());
    assert_eq!(files(&units), ["vernier-latency.service"]);
    let service = std::fs::read_to_string(units.join("vernier-latency.service")).unwrap();
    assert_eq!(
        setting(&service, "ExecStart"),
        [format!(
            "{} --db {} monitor latency --interval 60s --quiet",
            env!("CARGO_BIN_EXE_vernier"),
            db.display()
        )]
    );
    assert_eq!(setting(&service, "Restart"), ["on-failure"]);
    assert_eq!(setting(&service, "KillSignal"), ["SIGTERM"]);
    assert_eq!(setting(&service, "KillMode"), ["mixed"]);
    assert_eq!(setting(&service, "WantedBy"), ["multi-user.target"]);
    verify(&[units.join("vernier-latency.service")]);
}

#[test]
fn bad_schedules_are_refused_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let units = dir.path().join("units");
    let unit_dir = units.to_str().unwrap();
    let mut cases: Vec<(&[&str], &str)> = vec![
        (
            &["install", "a/b", "--suite", "quick"],
            "not a schedule name",
        ),
        (&["install", "n", "--suite", "nosuch"], "unknown suite"),
        (
            &["install", "n"],
            "--suite NAME or --service latency-monitor",
        ),
        (
            &[
                "install",
                "n",
                "--service",
                "latency-monitor",
                "--on-calendar",
                "daily",
            ],
            "runs continuously",
        ),
        (&["remove", "n"], "no scheduled run 'n'"),
    ];
    // A calendar expression is checked by systemd's own parser, when it is installed.
    let systemd_analyze = Program {
        name: "systemd-analyze",
        package: "systemd",
    };
    if can_run(
        "bad_schedules_are_refused_and_write_nothing: --on-calendar whenever",
        missing_programs(&[systemd_analyze]),
    ) {
        cases.push((
            &[
                "install",
                "n",
                "--suite",
                "quick",
                "--on-calendar",
                "whenever",
            ],
            "calendar expression",
        ));
    }
    for (args, expected) in cases {
        let err = refused(
            vernier_no_input(&db)
                .arg("schedule")
                .args(args)
                .args(["--unit-dir", unit_dir])
                .output()
                .unwrap(),
        );
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(files(&units).is_empty(), "{args:?}");
    }
    // A unit of the same name that vernier did not write is left alone.
    std::fs::create_dir_all(&units).unwrap();
    std::fs::write(
        units.join("vernier-n.service"),
        "[Service]\nExecStart=/bin/true\n",
    )
    .unwrap();
    for args in [&["install", "n", "--suite", "quick"][..], &["remove", "n"]] {
        let err = refused(
            vernier_no_input(&db)
                .arg("schedule")
                .args(args)
                .args(["--unit-dir", unit_dir])
                .output()
                .unwrap(),
        );
        assert!(err.contains("not written by vernier"), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(units.join("vernier-n.service")).unwrap(),
        "[Service]\nExecStart=/bin/true\n"
    );
    assert!(!db.exists());
}

fn statuses(db: &Path) -> Vec<(SessionStatus, Option<String>, usize)> {
    let store = SqliteStore::open_read_only(db).unwrap();
    store
        .sessions()
        .unwrap()
        .into_iter()
        .map(|s| {
            let configurations = store
                .load_session(s.id, vernier_store::Load::INFO)
                .unwrap()
                .configurations
                .len();
            (s.status, s.note, configurations)
        })
        .collect()
}

fn mock_run(db: &Path, busy: &[&str]) -> Output {
    vernier_no_input(db)
        .args([
            "run",
            "mock:values=1",
            "--warmup",
            "0",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
        ])
        .args(["--quiet", "--note", "nightly"])
        .args(busy)
        .output()
        .unwrap()
}

#[test]
fn a_busy_machine_is_skipped_with_a_session_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");

    // Every load average is at or above 0: busy.
    let out = ok(mock_run(&db, &["--if-busy", "skip", "--busy-load", "0"]));
    assert!(out.contains("skipped: the 1-minute load average"), "{out}");
    let [(status, note, configurations)] = statuses(&db).try_into().unwrap();
    assert_eq!((status, configurations), (SessionStatus::Skipped, 0));
    let note = note.unwrap();
    assert!(
        note.starts_with("nightly (skipped: the 1-minute load average is"),
        "{note}"
    );
    let list = ok(vernier_no_input(&db).arg("sessions").output().unwrap());
    assert!(
        list.contains("skipped") && list.contains("at or above --busy-load 0"),
        "{list}"
    );

    // Another session recording into the database (this test's process records it): a run
    // that waits gives up after --busy-wait and says so.
    let mut store = SqliteStore::open(&db).unwrap();
    let mut other = store.sessions().unwrap().remove(0);
    other.id = uuid::Uuid::new_v4();
    other.status = SessionStatus::Running;
    store.begin_session(&other).unwrap();
    let started = Instant::now();
    let out = ok(mock_run(&db, &["--if-busy", "wait", "--busy-wait", "1"]));
    assert!(started.elapsed().as_secs_f64() >= 1.0);
    assert!(
        out.contains(&format!(
            "another vernier session ({}) is running",
            other.id
        )) && out.contains("still after waiting 1 s"),
        "{out}"
    );
    // Without --if-busy a run runs regardless; once the other session ends, --if-busy skip
    // finds the machine idle and runs too.
    ok(mock_run(&db, &[]));
    store
        .finish_session(other.id, SessionStatus::Completed, other.started_at_ns + 1)
        .unwrap();
    ok(mock_run(&db, &["--if-busy", "skip"]));
    let found: Vec<(SessionStatus, usize)> =
        statuses(&db).into_iter().map(|(s, _, c)| (s, c)).collect();
    assert_eq!(
        found,
        [
            (SessionStatus::Skipped, 0),
            (SessionStatus::Completed, 0),
            (SessionStatus::Skipped, 0),
            (SessionStatus::Completed, 1),
            (SessionStatus::Completed, 1)
        ]
    );
}

/// `vernier` with `--db DATABASE` given as it is (a PostgreSQL URL), run in `cwd`, isolated from
/// the user's environment as [`vernier_command`] isolates it.
fn vernier_at(database: &str, cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vernier"));
    cmd.args(["--db", database])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .env_remove("VERNIER_DB")
        .env("XDG_CACHE_HOME", cwd)
        .env("XDG_CONFIG_HOME", cwd);
    cmd
}

/// A machine recording into PostgreSQL directly, or syncing to it: the units carry each URL
/// as it is, with `%` and `$` doubled as systemd.service(5) reads them (a percent-encoded
/// password and application name), a file named relative to the working directory by its
/// absolute path, and systemd-analyze finds nothing to complain about.
#[test]
fn scheduled_units_carry_postgres_urls_and_absolute_paths() {
    let dir = tempfile::tempdir().unwrap();
    let units = dir.path().join("units");
    let unit_dir = units.to_str().unwrap();
    let exe = env!("CARGO_BIN_EXE_vernier");
    let local = "postgresql:///vernier?host=/run/postgresql&user=bench";
    let central = "postgres://bench:pa%24s@db.lab:5433/farm?application_name=vernier%20$night";
    let in_unit = "postgres://bench:pa%%24s@db.lab:5433/farm?application_name=vernier%%20$$night";

    // Recording into PostgreSQL, syncing to another PostgreSQL database.
    ok(vernier_at(local, dir.path())
        .args(["schedule", "install", "nightly", "--suite", "quick"])
        .args(["--sync", central, "--unit-dir", unit_dir])
        .output()
        .unwrap());
    let service = std::fs::read_to_string(units.join("vernier-nightly.service")).unwrap();
    assert_eq!(
        setting(&service, "ExecStart"),
        [format!(
            "{exe} --db {local} run --suite quick --quiet --if-busy wait"
        )]
    );
    assert_eq!(
        setting(&service, "ExecStopPost"),
        [format!("{exe} --db {local} sync --to {in_unit}")]
    );
    assert_eq!(setting(&service, "Wants"), ["network-online.target"]);
    verify(&[
        units.join("vernier-nightly.service"),
        units.join("vernier-nightly.timer"),
    ]);

    // The latency monitor into a file named relative to the working directory, syncing to
    // a file named so too and to PostgreSQL: both files by their absolute paths.
    let absolute = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    for (name, target, in_unit) in [
        ("latency", "central.db", absolute("central.db")),
        ("latency-pg", central, in_unit.to_string()),
    ] {
        ok(vernier_at("latency.db", dir.path())
            .args(["schedule", "install", name, "--service", "latency-monitor"])
            .args(["--sync", target, "--unit-dir", unit_dir])
            .output()
            .unwrap());
        let monitor =
            std::fs::read_to_string(units.join(format!("vernier-{name}.service"))).unwrap();
        assert_eq!(
            setting(&monitor, "ExecStopPost"),
            [format!(
                "{exe} --db {} sync --to {in_unit}",
                absolute("latency.db")
            )]
        );
    }
    verify(&[
        units.join("vernier-latency.service"),
        units.join("vernier-latency-pg.service"),
    ]);
}
