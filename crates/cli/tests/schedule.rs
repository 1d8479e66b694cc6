//! `vernier schedule` writes systemd units into a directory of the test's own (never the real
//! systemd), checked with `systemd-analyze verify`; and `run --if-busy`, which the scheduled
//! runs use, skipping a busy machine with a record of why.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use vernier_model::{Recorder, SessionStatus};
use vernier_store::{SqliteStore, Store};
use vernier_testkit::{can_run, missing_programs, ok, refused, temp_db, vernier_no_input, Program};

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
    let (dir, db) = temp_db();
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
    // Persistent=true would start a missed run at once at boot, before the settle time.
    assert!(setting(&timer, "Persistent").is_empty(), "{timer}");
    assert_eq!(setting(&timer, "RandomizedDelaySec"), ["600s"]);
    assert_eq!(setting(&service, "TimeoutStartSec"), ["21600s"]);
    // A file database needs no network for the run; the sync to a file neither, but the
    // unit cannot tell a file from a network share.
    assert_eq!(setting(&service, "After"), ["network-online.target"]);
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
    let (dir, db) = temp_db();
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
    assert_eq!(setting(&service, "LimitRTPRIO"), ["99"]);
    assert_eq!(setting(&service, "LimitMEMLOCK"), ["infinity"]);
    // A file database and no sync: nothing waits for the network.
    assert!(setting(&service, "After").is_empty(), "{service}");
    verify(&[units.join("vernier-latency.service")]);
}

/// `--sync-every`: the latency service syncs while it runs (the monitor's own `--sync-to` and
/// `--sync-every`), and once more when it stops; with a password in the URL the running sync
/// takes it from the environment file, as the final one does.
#[test]
fn the_latency_monitor_syncs_while_it_runs() {
    let (dir, db) = temp_db();
    let units = dir.path().join("units");
    let central = dir.path().join("central.db");
    ok(vernier_no_input(&db)
        .args(["schedule", "install", "latency"])
        .args(["--service", "latency-monitor", "--interval", "5m"])
        .args(["--sync", central.to_str().unwrap(), "--sync-every", "1m"])
        .args(["--unit-dir", units.to_str().unwrap()])
        .output()
        .unwrap());
    let service = std::fs::read_to_string(units.join("vernier-latency.service")).unwrap();
    let exe = env!("CARGO_BIN_EXE_vernier");
    assert_eq!(
        setting(&service, "ExecStart"),
        [format!(
            "{exe} --db {} monitor latency --interval 300s --quiet --sync-to {} \
             --sync-every 60s",
            db.display(),
            central.display()
        )]
    );
    assert_eq!(
        setting(&service, "ExecStopPost"),
        [format!(
            "{exe} --db {} sync --to {}",
            db.display(),
            central.display()
        )]
    );
    verify(&[units.join("vernier-latency.service")]);

    let secret = dir.path().join("secret");
    ok(vernier_no_input(&db)
        .args(["schedule", "install", "latency"])
        .args(["--service", "latency-monitor"])
        .args([
            "--sync",
            "postgres://bench:s3cret@db.lab/farm",
            "--sync-every",
            "2m",
        ])
        .args(["--unit-dir", secret.to_str().unwrap()])
        .output()
        .unwrap());
    let service = std::fs::read_to_string(secret.join("vernier-latency.service")).unwrap();
    assert!(!service.contains("s3cret"), "{service}");
    assert!(
        setting(&service, "ExecStart")[0].ends_with(" --quiet --sync-every 120s"),
        "{service}"
    );
    verify(&[secret.join("vernier-latency.service")]);

    // A suite syncs after every run; --sync-every without --sync has nothing to sync to.
    let refused = vernier_no_input(&db)
        .args(["schedule", "install", "nightly", "--suite", "quick"])
        .args(["--sync", central.to_str().unwrap(), "--sync-every", "1m"])
        .args(["--unit-dir", units.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--sync-every is for --service"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let refused = vernier_no_input(&db)
        .args([
            "schedule",
            "install",
            "latency2",
            "--service",
            "latency-monitor",
        ])
        .args(["--sync-every", "1m", "--unit-dir", units.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(files(&units), ["vernier-latency.service"]);
}

#[test]
fn bad_schedules_are_refused_and_write_nothing() {
    let (dir, db) = temp_db();
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
    let (_dir, db) = temp_db();

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
    let central = "postgres://bench@db.lab:5433/farm?application_name=vernier%20$night";
    let in_unit = "postgres://bench@db.lab:5433/farm?application_name=vernier%%20$$night";

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

/// A password in `--db` or `--sync` is never written into a unit (mode 0644, readable by
/// everyone): it goes into an environment file of mode 0600 that the service reads, vernier
/// takes it from there (VERNIER_DB, VERNIER_SYNC_TO), and install warns where it is.
/// `--load`, `--setup` and `--monitor` reach the command line; every unit kind verifies.
#[test]
fn passwords_stay_out_of_units_and_plugins_reach_them() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let units = dir.path().join("units");
    let unit_dir = units.to_str().unwrap();
    let exe = env!("CARGO_BIN_EXE_vernier");
    let local = "postgres://bench:l0cal@db.lab/farm";
    let central = "postgresql://bench@db.lab/farm?password=c3ntral&sslmode=require";
    let out = vernier_at(local, dir.path())
        .args(["schedule", "install", "loaded", "--suite", "quick"])
        .args(["--on-calendar", "*-*-* 07,19:00:00", "--load", "hackbench"])
        .args([
            "--setup",
            "governor?:policy=performance",
            "--monitor",
            "none",
        ])
        .args(["--randomized-delay", "0", "--time-limit", "2h"])
        .args(["--sync", central, "--unit-dir", unit_dir])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = ok(out);
    assert!(
        stdout.contains("enable --now vernier-loaded.timer"),
        "{stdout}"
    );
    let env = units.join("vernier-loaded.env");
    assert!(
        stderr.starts_with("warning: the database password is in ")
            && stderr.contains(env.to_str().unwrap()),
        "{stderr}"
    );
    assert_eq!(
        files(&units),
        [
            "vernier-loaded.env",
            "vernier-loaded.service",
            "vernier-loaded.timer"
        ]
    );
    let service = std::fs::read_to_string(units.join("vernier-loaded.service")).unwrap();
    let timer = std::fs::read_to_string(units.join("vernier-loaded.timer")).unwrap();
    for text in [&service, &timer, &stdout, &stderr] {
        assert!(
            !text.contains("l0cal") && !text.contains("c3ntral"),
            "{text}"
        );
    }
    let mode = std::fs::metadata(&env).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(
        std::fs::read_to_string(&env)
            .unwrap()
            .lines()
            .skip(1)
            .collect::<Vec<_>>(),
        [
            format!("VERNIER_DB='{local}'"),
            format!("VERNIER_SYNC_TO='{central}'")
        ]
    );
    assert_eq!(
        setting(&service, "EnvironmentFile"),
        [env.to_str().unwrap()]
    );
    assert_eq!(
        setting(&service, "ExecStart"),
        [format!(
            "{exe} run --suite quick --monitor none --setup governor?:policy=performance \
             --load hackbench --quiet --if-busy wait"
        )]
    );
    assert_eq!(setting(&service, "ExecStopPost"), [format!("{exe} sync")]);
    assert_eq!(setting(&service, "Wants"), ["network-online.target"]);
    assert_eq!(setting(&service, "TimeoutStartSec"), ["7200s"]);
    assert!(setting(&timer, "RandomizedDelaySec").is_empty(), "{timer}");
    verify(&[
        units.join("vernier-loaded.service"),
        units.join("vernier-loaded.timer"),
    ]);

    // What the service reads from the file is what vernier is given: `sync` without --to
    // takes VERNIER_SYNC_TO, and a mistyped one is refused as --to would be.
    let err = refused(
        vernier_at("box.db", dir.path())
            .arg("sync")
            .env("VERNIER_SYNC_TO", "postgress://u:p@h/db")
            .output()
            .unwrap(),
    );
    assert!(err.contains("scheme 'postgress:'"), "{err}");

    ok(vernier_at(local, dir.path())
        .args(["schedule", "remove", "loaded", "--unit-dir", unit_dir])
        .output()
        .unwrap());
    assert!(files(&units).is_empty());
}

/// Characters that mean something in a unit file or to systemd's command-line parser (white
/// space, `;`, both quotes, specifiers, variables, C escapes, comments, home directories), in
/// one value.
const AWKWARD: &str = "a b;c\"d'e%f%%g$h$$i\\j\\nk #l ~m ;";

/// A command line of a unit as systemd reads it: the setting (`ExecStart`) and the arguments.
type Commands = Vec<(String, Vec<String>)>;

/// systemd's own reading of a service: its Description and, for each `Exec*=` setting, the
/// arguments it passes, from the unit dump of `systemd --test` (systemd(1)) with `units` on the
/// unit path. `None` (after saying why) where systemd is not installed, outside CI.
#[allow(clippy::print_stderr)] // a skipped check says why, as the tests' own skips do
fn systemd_reading(units: &Path, service: &str) -> Option<(String, Commands)> {
    let Some(systemd) = ["/lib/systemd/systemd", "/usr/lib/systemd/systemd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "systemd is needed in CI to read the units back"
        );
        eprintln!("skipped: reading the units back needs systemd's own binary");
        return None;
    };
    // `systemd --test` refuses to run as root: as root it runs as nobody, who must be able to
    // read the units.
    // SAFETY: geteuid has no preconditions.
    let mut command = if unsafe { libc::geteuid() } == 0 {
        let mut dir = units.to_path_buf();
        while dir.starts_with(std::env::temp_dir()) && dir != std::env::temp_dir() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            dir.pop();
        }
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", systemd]);
        command
    } else {
        Command::new(systemd)
    };
    // The trailing ':' keeps the system's unit path after ours (the default dependencies).
    let output = command
        .args(["--test", "--system", "--no-pager"])
        .arg(format!("--unit={service}"))
        .env("SYSTEMD_UNIT_PATH", format!("{}:", units.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let dump = String::from_utf8(output.stdout).unwrap();
    let section: Vec<&str> = dump
        .lines()
        .skip_while(|l| l.trim() != format!("-> Unit {service}:"))
        .skip(1)
        .take_while(|l| !l.trim().starts_with("-> Unit "))
        .collect();
    let description = section
        .iter()
        .find_map(|l| l.trim().strip_prefix("Description: "))
        .unwrap()
        .to_string();
    let mut commands = Vec::new();
    for pair in section.windows(2) {
        if let (Some(kind), Some(line)) = (
            pair[0]
                .trim()
                .strip_prefix("-> ")
                .and_then(|k| k.strip_suffix(':')),
            pair[1].trim().strip_prefix("Command Line: "),
        ) {
            commands.push((kind.to_string(), dump_words(line)));
        }
    }
    Some((description, commands))
}

/// The words of a command line as systemd's dump prints them (shell_maybe_quote: a word in
/// double quotes with `"`, `\`, `` ` `` and `$` escaped by a backslash when it needs quoting,
/// else as it is), with the variables substituted as systemd does when the command starts: the
/// test's values use none, so only `$$` remains, which is `$` (systemd.service(5)).
fn dump_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c == ' ' {
            chars.next();
            continue;
        }
        let mut word = String::new();
        if c == '"' {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => word.extend(chars.next()),
                    c => word.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ' ' {
                    break;
                }
                word.push(c);
                chars.next();
            }
        }
        assert!(
            !word.replace("$$", "").contains('$'),
            "a variable systemd would substitute: {word}"
        );
        words.push(word.replace("$$", "$"));
    }
    words
}

#[test]
fn the_dump_reader_undoes_shell_quoting() {
    assert_eq!(
        dump_words(r#"/bin/x "a b" 50% "\$\$H" "x\\y" "q\"r" #c ~d """#),
        ["/bin/x", "a b", "50%", "$H", "x\\y", "q\"r", "#c", "~d", ""]
    );
}

/// Every value that reaches a unit (the database, the sync target, the suite's file, tags)
/// holding white space, `;`, quotes, `%`, `$` and backslashes: systemd-analyze has nothing to
/// say, and systemd passes vernier exactly the values given. A control character in any of
/// them (a newline that would start an `ExecStartPre=` of its own) is refused in one line,
/// with status 2, and nothing is written.
#[test]
fn every_value_reaching_a_unit_is_checked_and_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let units = dir.path().join("units");
    let unit_dir = units.to_str().unwrap().to_string();
    let exe = env!("CARGO_BIN_EXE_vernier");
    let db = dir.path().join(format!("results {AWKWARD}.db"));
    let central = dir.path().join(format!("central {AWKWARD}.db"));
    let suite = dir.path().join(format!("suite {AWKWARD}.toml"));
    std::fs::write(&suite, "description = \"awkward\"\nspecs = [\"mock\"]\n").unwrap();
    let tag = format!("k{AWKWARD}=v{AWKWARD}");
    let (db_s, central_s, suite_s) = (
        db.to_str().unwrap(),
        central.to_str().unwrap(),
        suite.to_str().unwrap(),
    );

    // Refused: a newline (or another control character) in every value that reaches a unit.
    let injected = "x\nExecStartPre=/bin/touch /tmp/vernier-injected";
    // As a file's name (no '/').
    let injected_name = "x\nExecStartPre=touch vernier-injected";
    let bad_db = dir.path().join(injected_name);
    let bad_suite = dir.path().join(format!("{injected_name}.toml"));
    std::fs::write(&bad_suite, "description = \"bad\"\nspecs = [\"mock\"]\n").unwrap();
    let cases: Vec<(Vec<String>, Option<&Path>, &str)> = vec![
        (vec!["--sync".into(), injected.into()], None, "--sync"),
        (vec!["--sync".into(), "a\tb".into()], None, "--sync"),
        (vec![], Some(&bad_db), "--db (or VERNIER_DB)"),
        (
            vec!["--suite".into(), bad_suite.to_str().unwrap().into()],
            None,
            "--suite",
        ),
        (
            vec!["--tag".into(), format!("k=v\u{1b}[1m")],
            None,
            "tag value",
        ),
        (
            vec![
                "--on-calendar".into(),
                "daily\nExecStartPre=/bin/true".into(),
            ],
            None,
            "--on-calendar",
        ),
        (
            vec!["--on-calendar".into(), "daily\\".into()],
            None,
            "--on-calendar",
        ),
    ];
    for (args, database, option) in &cases {
        for dry_run in [false, true] {
            let mut command = vernier_no_input(database.unwrap_or(&db));
            command
                .args(["schedule", "install", "nightly"])
                .args(if args.iter().any(|a| a == "--suite") {
                    &[][..]
                } else {
                    &["--suite", "quick"][..]
                })
                .args(args)
                .args(["--unit-dir", &unit_dir]);
            if dry_run {
                command.arg("--dry-run");
            }
            let output = command.output().unwrap();
            assert!(output.stdout.is_empty(), "{args:?}: printed a unit");
            let err = refused(output);
            assert!(err.contains(option), "{args:?}: {err}");
            assert!(!units.exists(), "{args:?}: wrote units");
        }
    }
    // VERNIER_DB reaches the unit as --db does.
    let err = refused(
        Command::new(exe)
            .env("VERNIER_DB", bad_db.to_str().unwrap())
            .env("XDG_CONFIG_HOME", dir.path())
            .env("XDG_CACHE_HOME", dir.path())
            .args([
                "schedule",
                "install",
                "n",
                "--suite",
                "quick",
                "--unit-dir",
                &unit_dir,
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap(),
    );
    assert!(err.contains("VERNIER_DB"), "{err}");
    assert!(!units.exists());
    assert!(!Path::new("/tmp/vernier-injected").exists());

    // Accepted and quoted: systemd reads back exactly what was given.
    ok(vernier_no_input(&db)
        .args(["schedule", "install", "nightly", "--suite", suite_s])
        .args(["--tag", &tag, "--sync", central_s, "--unit-dir", &unit_dir])
        .output()
        .unwrap());
    ok(vernier_no_input(&db)
        .args([
            "schedule",
            "install",
            "latency",
            "--service",
            "latency-monitor",
        ])
        .args(["--tag", &tag, "--sync", central_s, "--unit-dir", &unit_dir])
        .output()
        .unwrap());
    let written = [
        units.join("vernier-nightly.service"),
        units.join("vernier-nightly.timer"),
        units.join("vernier-latency.service"),
    ];
    verify(&written);
    for path in &written {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            text.lines().all(|l| l.is_empty()
                || l.starts_with('#')
                || l.starts_with('[')
                || l.split_once('=')
                    .is_some_and(|(k, _)| k.chars().all(|c| c.is_ascii_alphanumeric()))),
            "{text}"
        );
    }
    let words = |list: &[&str]| -> Vec<String> { list.iter().map(|w| w.to_string()).collect() };
    let sync = words(&[exe, "--db", db_s, "sync", "--to", central_s]);
    let Some((description, commands)) = systemd_reading(&units, "vernier-nightly.service") else {
        return;
    };
    assert_eq!(
        description,
        format!("vernier: the {suite_s} suite (nightly)")
    );
    assert_eq!(
        commands,
        [
            (
                "ExecStart".to_string(),
                words(&[
                    exe,
                    "--db",
                    db_s,
                    "run",
                    "--suite",
                    suite_s,
                    "--tag",
                    &tag,
                    "--quiet",
                    "--if-busy",
                    "wait",
                ])
            ),
            ("ExecStopPost".to_string(), sync.clone()),
        ]
    );
    let (_, commands) = systemd_reading(&units, "vernier-latency.service").unwrap();
    assert_eq!(
        commands,
        [
            (
                "ExecStart".to_string(),
                words(&[
                    exe,
                    "--db",
                    db_s,
                    "monitor",
                    "latency",
                    "--interval",
                    "300s",
                    "--quiet",
                    "--tag",
                    &tag,
                ])
            ),
            ("ExecStopPost".to_string(), sync),
        ]
    );
}

/// `--bisect`: the after-boot unit of a bisection of kernels, a oneshot service running
/// `bisect resume` and a timer that starts it once after every boot; verified by systemd.
#[test]
fn a_bisection_gets_a_verified_unit_that_resumes_after_every_boot() {
    let (dir, db) = temp_db();
    let units = dir.path().join("units");
    let out = ok(vernier_no_input(&db)
        .args(["schedule", "install", "kernel-bisect", "--bisect"])
        .args(["--unit-dir", units.to_str().unwrap()])
        .output()
        .unwrap());
    // Enabled, not started: started now, the timer would run a step at once.
    assert!(
        out.contains("systemctl enable vernier-kernel-bisect.timer") && !out.contains("--now"),
        "{out}"
    );
    assert_eq!(
        files(&units),
        [
            "vernier-kernel-bisect.service",
            "vernier-kernel-bisect.timer"
        ]
    );
    let service = std::fs::read_to_string(units.join("vernier-kernel-bisect.service")).unwrap();
    let timer = std::fs::read_to_string(units.join("vernier-kernel-bisect.timer")).unwrap();
    assert_eq!(
        setting(&service, "ExecStart"),
        [format!(
            "{} --db {} bisect resume",
            env!("CARGO_BIN_EXE_vernier"),
            db.display()
        )]
    );
    assert_eq!(setting(&service, "Type"), ["oneshot"]);
    assert_eq!(setting(&timer, "OnBootSec"), ["5min"]);
    assert!(setting(&timer, "OnCalendar").is_empty(), "{timer}");
    verify(&[
        units.join("vernier-kernel-bisect.service"),
        units.join("vernier-kernel-bisect.timer"),
    ]);
    let listed = ok(vernier_no_input(&db)
        .args(["schedule", "list", "--unit-dir", units.to_str().unwrap()])
        .output()
        .unwrap());
    assert!(
        listed.contains("kernel-bisect\t5min after boot"),
        "{listed}"
    );
    let err = refused(
        vernier_no_input(&db)
            .args(["schedule", "install", "x", "--bisect", "--suite", "quick"])
            .args(["--unit-dir", units.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert!(err.contains("--suite"), "{err}");
}
