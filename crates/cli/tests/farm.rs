//! Results of several machines: the machine of each session (`sessions`, `env`, `host=NAME`),
//! `vernier sync` and `vernier merge`, end to end on SQLite files, and a running latency
//! monitor followed by sync into a database of each engine.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::path::{Path, PathBuf};
use std::process::Stdio;

use vernier_testkit::{
    ok, record_mock_session, refused, sorted, sqlite_texts, sync_count, temp_db, vernier_no_input,
};

/// Every run of a database by its place, as text: its configuration's id, then the low 32 bits
/// of its key (kind and index), the same in every database that holds it, whatever its key
/// there (docs/schema.md, `runs.key`), and in both engines.
const RUN_PLACES: &str = "SELECT c.id || ':' || (r.key % 4294967296) FROM runs r \
     JOIN configurations c ON c.key = r.configuration_key";

fn this_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn each_session_records_and_shows_its_machine() {
    let (_dir, db) = temp_db();
    record_mock_session(&db, "kernel=A");
    let host = this_hostname();
    assert_eq!(
        sqlite_texts(&db, "SELECT hostname FROM sessions"),
        [host.as_str()]
    );
    let machine_id = ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| t.len() == 32);
    assert_eq!(
        sqlite_texts(&db, "SELECT machine_id FROM sessions"),
        [machine_id.clone().unwrap_or_else(|| "NULL".to_string())]
    );

    let list = ok(vernier_no_input(&db).arg("sessions").output().unwrap());
    let header = list.lines().next().unwrap();
    assert!(header.contains("host"), "{list}");
    assert!(list.lines().nth(1).unwrap().contains(&host), "{list}");
    let env = ok(vernier_no_input(&db)
        .args(["env", "show", "latest"])
        .output()
        .unwrap());
    assert!(env.contains(&format!("hostname: {host}")), "{env}");
    let id_line = match &machine_id {
        Some(id) => format!("machine_id: {id}"),
        None => "machine_id: unknown".to_string(),
    };
    assert!(env.contains(&id_line), "{env}");

    let selected = ok(vernier_no_input(&db)
        .args(["sessions", &format!("host={host},kernel=A")])
        .output()
        .unwrap());
    assert_eq!(selected.lines().count(), 2, "{selected}");
    let err = refused(
        vernier_no_input(&db)
            .args(["sessions", "host=no-such-machine"])
            .output()
            .unwrap(),
    );
    assert!(
        err.contains("no-such-machine") && err.contains(&host),
        "{err}"
    );
}

fn count(db: &Path, table: &str) -> usize {
    sqlite_texts(db, &format!("SELECT count(*) FROM {table}"))[0]
        .parse()
        .unwrap()
}

#[test]
fn sync_copies_what_the_target_lacks_and_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (machine, central) = (dir.path().join("machine.db"), dir.path().join("central.db"));
    record_mock_session(&machine, "n=1");
    record_mock_session(&machine, "n=2");
    let sync = |db: &Path| {
        ok(vernier_no_input(db)
            .args(["sync", "--to", central.to_str().unwrap()])
            .output()
            .unwrap())
    };
    let first = sync(&machine);
    assert!(
        first.contains("copied 2 sessions (4 runs), 0 already present"),
        "{first}"
    );
    let again = sync(&machine);
    assert!(
        again.contains("copied 0 sessions (0 runs), 2 already present"),
        "{again}"
    );
    record_mock_session(&machine, "n=3");
    let third = sync(&machine);
    assert!(
        third.contains("copied 1 session (2 runs), 2 already present"),
        "{third}"
    );
    for table in ["sessions", "configurations", "runs", "run_metric_values"] {
        assert_eq!(count(&central, table), count(&machine, table), "{table}");
    }
    assert_eq!(
        sorted(sqlite_texts(&central, RUN_PLACES)),
        sorted(sqlite_texts(&machine, RUN_PLACES))
    );

    // --from names the source; the same file on both sides is refused.
    let back = dir.path().join("back.db");
    let out = ok(vernier_no_input(&machine)
        .args([
            "sync",
            "--from",
            central.to_str().unwrap(),
            "--to",
            back.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    assert!(out.contains("copied 3 sessions"), "{out}");
    let err = refused(
        vernier_no_input(&machine)
            .args(["sync", "--to", machine.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert!(err.contains("the database synced from"), "{err}");
    // A missing source creates nothing.
    let nowhere = dir.path().join("nowhere.db");
    let fresh = dir.path().join("fresh.db");
    let err = refused(
        vernier_no_input(&nowhere)
            .args(["sync", "--to", fresh.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert!(err.contains("does not exist"), "{err}");
    assert!(!fresh.exists() && !nowhere.exists());
}

/// Two machines' databases: `a` with two sessions, `b` with one of its own and a copy of a's
/// first (synced there earlier).
fn two_machines(dir: &Path) -> (PathBuf, PathBuf) {
    let (a, b) = (dir.join("a.db"), dir.join("b.db"));
    record_mock_session(&a, "machine=a");
    ok(vernier_no_input(&a)
        .args(["sync", "--to", b.to_str().unwrap()])
        .output()
        .unwrap());
    record_mock_session(&a, "machine=a");
    record_mock_session(&b, "machine=b");
    (a, b)
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("merging"))
        .collect()
}

#[test]
fn merge_stores_every_session_once_and_keeps_every_id() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_machines(dir.path());
    let c = dir.path().join("c.db");
    let out = ok(vernier_no_input(&a)
        .args([
            "merge",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            c.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    assert!(
        out.contains("a.db: 2 sessions merged, 0 already present"),
        "{out}"
    );
    assert!(
        out.contains("b.db: 1 session merged, 1 already present"),
        "{out}"
    );
    // No row twice (cbenchsuite's db_merge duplicated rows) and no id renumbered (it lost
    // them): the merged ids and runs' places are exactly the distinct ones of the inputs.
    let place = "c.id || ':' || (r.key % 4294967296)";
    let runs = "runs r JOIN configurations c ON c.key = r.configuration_key";
    let values = "run_metric_values v JOIN runs r ON r.key = v.run_key \
         JOIN configurations c ON c.key = r.configuration_key";
    for (table, column) in [
        ("sessions", "id"),
        ("configurations", "id"),
        (runs, place),
        (values, &format!("{place} || v.metric")),
    ] {
        let mut inputs: Vec<String> = sqlite_texts(&a, &format!("SELECT {column} FROM {table}"));
        inputs.extend(sqlite_texts(&b, &format!("SELECT {column} FROM {table}")));
        inputs.sort();
        inputs.dedup();
        let merged = sorted(sqlite_texts(&c, &format!("SELECT {column} FROM {table}")));
        assert_eq!(merged, inputs, "{table}");
    }
    assert_eq!(count(&c, "sessions"), 3);
    assert!(leftovers(dir.path()).is_empty());

    // Merging the same inputs into the result again adds nothing.
    let before = count(&c, "runs");
    let out = ok(vernier_no_input(&a)
        .args([
            "merge",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--into",
            c.to_str().unwrap(),
        ])
        .output()
        .unwrap());
    assert!(out.contains("0 sessions added"), "{out}");
    assert_eq!(count(&c, "runs"), before);
}

#[test]
fn merge_refuses_conflicts_and_existing_files_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_machines(dir.path());
    let c = dir.path().join("c.db");
    let path = |p: &Path| p.to_str().unwrap().to_string();

    // The shared session noted differently on one machine: one id, two contents.
    let conn = rusqlite::Connection::open(&b).unwrap();
    conn.execute("UPDATE sessions SET note = 'changed' WHERE note IS NULL AND id IN (SELECT session_id FROM session_tags WHERE value = 'a')", [])
        .unwrap();
    drop(conn);
    let err = refused(
        vernier_no_input(&a)
            .args(["merge", &path(&a), &path(&b), "-o", &path(&c)])
            .output()
            .unwrap(),
    );
    assert!(err.contains("conflict") && err.contains("note"), "{err}");
    assert!(!c.exists());
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );

    // --into keeps the existing database as it was.
    let existing = dir.path().join("existing.db");
    record_mock_session(&existing, "machine=c");
    let runs = count(&existing, "runs");
    refused(
        vernier_no_input(&a)
            .args(["merge", &path(&a), &path(&b), "--into", &path(&existing)])
            .output()
            .unwrap(),
    );
    assert_eq!(
        (count(&existing, "sessions"), count(&existing, "runs")),
        (1, runs)
    );

    // -o never overwrites; an input cannot be the output; inputs must be databases.
    let err = refused(
        vernier_no_input(&a)
            .args(["merge", &path(&a), "-o", &path(&existing)])
            .output()
            .unwrap(),
    );
    assert!(err.contains("--into"), "{err}");
    assert_eq!(count(&existing, "sessions"), 1);
    let err = refused(
        vernier_no_input(&a)
            .args(["merge", &path(&a), "--into", &path(&a)])
            .output()
            .unwrap(),
    );
    assert!(err.contains("both an input and the output"), "{err}");
    let missing = dir.path().join("missing.db");
    let err = refused(
        vernier_no_input(&a)
            .args(["merge", &path(&missing), "-o", &path(&c)])
            .output()
            .unwrap(),
    );
    assert!(err.contains("missing.db"), "{err}");
    let err = refused(
        vernier_no_input(&a)
            .args(["merge", &path(&a)])
            .output()
            .unwrap(),
    );
    assert!(err.contains("-o") && err.contains("--into"), "{err}");
    assert!(!c.exists() && !missing.exists());
    assert!(leftovers(dir.path()).is_empty());
}

/// A merge into a new file stopped midway leaves the sessions it stored in `.NAME.merging`
/// (here a trigger refuses every run past those of the first input, as a full disk or a
/// Ctrl-C would stop it), says so, and creates no NAME; the same merge run again resumes it
/// and publishes what a merge never stopped publishes.
#[test]
fn merge_stopped_midway_keeps_its_sessions_and_the_same_merge_resumes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_machines(dir.path());
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let (c, whole) = (dir.path().join("c.db"), dir.path().join("whole.db"));
    let merge = |to: &Path| {
        vernier_no_input(&a)
            .args(["merge", &path(&a), &path(&b), "-o", &path(to)])
            .output()
            .unwrap()
    };
    ok(merge(&whole));
    let partial = dir.path().join(".c.db.merging");
    ok(vernier_no_input(&a)
        .args(["sync", "--to", &path(&partial)])
        .output()
        .unwrap());
    let runs = count(&partial, "runs");
    rusqlite::Connection::open(&partial)
        .unwrap()
        .execute_batch(&format!(
            "CREATE TRIGGER stop_merge BEFORE INSERT ON runs WHEN (SELECT count(*) FROM runs) \
             >= {runs} BEGIN SELECT RAISE(ABORT, 'the merge is stopped here'); END"
        ))
        .unwrap();
    let err = refused(merge(&c));
    assert!(
        err.contains("stopped here") && err.contains(".c.db.merging") && err.contains("again"),
        "{err}"
    );
    assert!(!c.exists());
    assert_eq!(count(&partial, "runs"), runs);
    rusqlite::Connection::open(&partial)
        .unwrap()
        .execute_batch("DROP TRIGGER stop_merge")
        .unwrap();
    let out = ok(merge(&c));
    assert!(
        out.contains("b.db: 1 session merged, 1 already present"),
        "{out}"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
    for query in [
        "SELECT id || status || coalesce(ended_at_ns, '') FROM sessions",
        "SELECT id FROM configurations",
        RUN_PLACES,
    ] {
        assert_eq!(
            sorted(sqlite_texts(&c, query)),
            sorted(sqlite_texts(&whole, query)),
            "{query}"
        );
    }
}

/// Waits, bounded, until the SQLite file `db` holds at least `runs` runs, while `child` runs.
fn wait_for_runs(db: &Path, runs: usize, child: &mut std::process::Child) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !(db.exists()
        && rusqlite::Connection::open(db)
            .and_then(|c| c.query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0)))
            .is_ok_and(|n| n >= runs as i64))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no {runs} intervals within 120 s"
        );
        assert!(child.try_wait().unwrap().is_none(), "monitor ended early");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A latency monitor (`vernier monitor latency`, real intervals of 1 s) synced while it runs,
/// into a database of each engine: the first sync copies the intervals recorded so far, the
/// next ones those recorded since, the one after SIGTERM ended it its status and end, and the
/// target then holds exactly the machine's session; one more sync copies nothing.
#[test]
fn a_running_monitor_reaches_the_target_interval_by_interval() {
    for central in
        vernier_testkit::databases("a_running_monitor_reaches_the_target_interval_by_interval")
    {
        let engine = central.engine();
        let machine = central.dir().join("machine.db");
        let mut monitor = vernier_no_input(&machine)
            .args([
                "monitor",
                "latency:policy=other:interval=1ms",
                "--interval",
                "1",
            ])
            .args(["--monitor", "none", "-q"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let sync = || {
            ok(vernier_no_input(&machine)
                .args(["sync", "-v", "--to"])
                .arg(central.arg())
                .output()
                .unwrap())
        };
        let runs_of = |db: &Path| sorted(sqlite_texts(db, RUN_PLACES));

        wait_for_runs(&machine, 2, &mut monitor);
        let first = sync();
        assert_eq!(sync_count(&first, " session(s) ("), 1, "{engine}: {first}");
        assert!(
            first.contains("still running, later runs"),
            "{engine}: {first}"
        );
        assert_eq!(sync_count(&first, " still running"), 1, "{engine}: {first}");
        let run_ids = RUN_PLACES;
        let copied = sorted(central.texts(run_ids));
        assert!(copied.len() >= 2, "{engine}: {first}");
        assert_eq!(
            sync_count(&first, " run(s))"),
            copied.len(),
            "{engine}: {first}"
        );

        wait_for_runs(&machine, copied.len() + 1, &mut monitor);
        let second = sync();
        let added = sync_count(&second, " run(s) added");
        assert!(added >= 1, "{engine}: {second}");
        assert!(
            second.contains(&format!(
                "added {} to ",
                vernier_model::text::plural(added, "run")
            )),
            "{engine}: {second}"
        );
        assert_eq!(
            sync_count(&second, " session(s) ("),
            0,
            "{engine}: {second}"
        );
        let now = sorted(central.texts(run_ids));
        assert_eq!(now.len(), copied.len() + added, "{engine}: {second}");
        assert!(copied.iter().all(|id| now.contains(id)), "{engine}");
        assert!(
            now.iter().all(|id| runs_of(&machine).contains(id)),
            "{engine}"
        );

        // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
        unsafe { libc::kill(monitor.id() as i32, libc::SIGTERM) };
        let out = monitor.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let last = sync();
        assert!(last.contains("(ended, copied whole)"), "{engine}: {last}");
        assert_eq!(sync_count(&last, " still running"), 0, "{engine}: {last}");
        assert_eq!(sorted(central.texts(run_ids)), runs_of(&machine));
        let end = "SELECT status || ' ' || ended_at_ns FROM sessions";
        assert_eq!(central.texts(end), sqlite_texts(&machine, end), "{engine}");
        let histograms = "SELECT c.id || ':' || (r.key % 4294967296) || ':' || quantity || ':' \
             || count FROM run_histograms h JOIN runs r ON r.key = h.run_key \
             JOIN configurations c ON c.key = r.configuration_key";
        assert_eq!(
            sorted(central.texts(histograms)),
            sorted(sqlite_texts(&machine, histograms)),
            "{engine}"
        );

        let again = sync();
        assert!(
            again.contains("copied 0 sessions (0 runs), 1 already present, 0 runs added"),
            "{engine}: {again}"
        );
    }
}

/// `monitor latency --sync-to --sync-every` (what `schedule --sync-every` writes): the running
/// monitor copies its intervals to the target by itself, and on this machine the target's copy
/// reads `running` while the monitor lives, as the machine's own session does.
#[test]
fn a_monitor_syncing_periodically_reaches_the_target_while_it_runs() {
    for central in vernier_testkit::databases(
        "a_monitor_syncing_periodically_reaches_the_target_while_it_runs",
    ) {
        let engine = central.engine();
        let machine = central.dir().join("machine.db");
        let mut monitor = vernier_no_input(&machine)
            .args([
                "monitor",
                "latency:policy=other:interval=1ms",
                "--interval",
                "1",
            ])
            .args(["--monitor", "none", "-q", "--sync-every", "1s", "--sync-to"])
            .arg(central.arg())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let run_ids = RUN_PLACES;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        // The target's tables exist once the first sync has created them (committed whole).
        let has_runs = || match engine {
            "sqlite" => {
                central.arg().exists()
                    && !sqlite_texts(
                        central.arg(),
                        "SELECT name FROM sqlite_master WHERE name = 'runs'",
                    )
                    .is_empty()
            }
            _ => !central
                .texts("SELECT tablename::text FROM pg_tables WHERE tablename = 'runs'")
                .is_empty(),
        };
        // Bounded: the target gets two intervals while the monitor still runs.
        while !(has_runs() && central.texts(run_ids).len() >= 2) {
            assert!(
                std::time::Instant::now() < deadline,
                "{engine}: no two intervals synced within 120 s"
            );
            assert!(
                monitor.try_wait().unwrap().is_none(),
                "{engine}: monitor ended early"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let listed = ok(vernier_no_input(central.arg())
            .arg("sessions")
            .output()
            .unwrap());
        assert!(listed.contains("running"), "{engine}: {listed}");
        // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
        unsafe { libc::kill(monitor.id() as i32, libc::SIGTERM) };
        let out = monitor.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{engine}: {stderr}");
        assert!(!stderr.contains("warning"), "{engine}: {stderr}");
        let synced = sorted(central.texts(run_ids));
        assert!(
            synced
                .iter()
                .all(|place| sorted(sqlite_texts(&machine, RUN_PLACES)).contains(place)),
            "{engine}"
        );
    }
}

/// Files of `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    sorted(
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
    )
}

#[test]
fn a_mistyped_url_is_refused_everywhere_and_a_file_with_a_colon_is_named_dot_slash() {
    let (dir, db) = temp_db();
    record_mock_session(&db, "kernel=A");
    let before = names_in(dir.path());
    let in_dir = |args: &[&str]| {
        let mut cmd = vernier_no_input(&db);
        cmd.current_dir(dir.path()).args(args);
        cmd
    };
    let bare = |database: &str, args: &[&str]| {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("vernier"));
        cmd.current_dir(dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .env("XDG_CACHE_HOME", dir.path())
            .env("VERNIER_RUN_DIR", dir.path().join("run"))
            .stdin(Stdio::null())
            .args(["--db", database])
            .args(args);
        cmd
    };
    let units = dir.path().join("units");
    let units = units.to_str().unwrap();
    for (what, mut cmd, scheme) in [
        (
            "--db",
            bare("postgress://bench@host/db", &["sessions"]),
            "postgress",
        ),
        (
            "--db of run",
            bare("postgresql:/x", &["run", "mock:values=1/2", "--quiet"]),
            "postgresql",
        ),
        (
            "sync --to",
            in_dir(&["sync", "--to", "postgress://bench@host/db"]),
            "postgress",
        ),
        (
            "sync --to",
            in_dir(&["sync", "--to", "postgresql:/x"]),
            "postgresql",
        ),
        (
            "merge -o",
            in_dir(&["merge", "results.db", "-o", "sqlite:merged.db"]),
            "sqlite",
        ),
        (
            "merge input",
            in_dir(&["merge", "postgres:/x", "-o", "merged.db"]),
            "postgres",
        ),
        (
            "schedule --sync",
            in_dir(&[
                "schedule",
                "install",
                "n",
                "--suite",
                "quick",
                "--unit-dir",
                units,
                "--sync",
                "postgress://u:secret@h/db",
            ]),
            "postgress",
        ),
        (
            "schedule --db",
            bare(
                "postgres:/x",
                &[
                    "schedule",
                    "install",
                    "n",
                    "--suite",
                    "quick",
                    "--unit-dir",
                    units,
                ],
            ),
            "postgres",
        ),
    ] {
        let err = refused(cmd.output().unwrap());
        assert!(
            err.contains(&format!("scheme '{scheme}:'"))
                && err.contains("postgres:// or postgresql://"),
            "{what}: {err}"
        );
        assert!(!err.contains("secret"), "{err}");
        assert_eq!(names_in(dir.path()), before, "{what} wrote something");
    }
    let mut from_env = std::process::Command::new(assert_cmd::cargo::cargo_bin("vernier"));
    from_env
        .current_dir(dir.path())
        .env("VERNIER_DB", "postgress://bench@host/db")
        .stdin(Stdio::null())
        .arg("sessions");
    let err = refused(from_env.output().unwrap());
    assert!(err.contains("scheme 'postgress:'"), "{err}");

    // A file whose name has a colon is named as a path.
    let copied = ok(in_dir(&["sync", "--to", "./a:b.db"]).output().unwrap());
    assert!(copied.contains("copied 1 session"), "{copied}");
    assert!(dir.path().join("a:b.db").is_file());
    let listed = ok(bare("./a:b.db", &["sessions"]).output().unwrap());
    assert_eq!(listed.lines().count(), 2, "{listed}");
}

/// A session that a sync stores part by part reads as running until its last part: `sessions`
/// and `show` say instead that it is being copied, with the runs stored so far.
#[test]
fn a_session_copied_in_parts_says_so_until_its_last_part() {
    let (_dir, db) = temp_db();
    record_mock_session(&db, "kind=copy");
    let conn = rusqlite::Connection::open(&db).unwrap();
    // As the first part of a copy leaves it: still being recorded, 1,000 of 1,500 runs in
    // the source (the mock session holds fewer; what counts is that the line says both).
    conn.execute(
        "UPDATE sessions SET status = 'running', ended_at_ns = NULL, copying_runs = 1500",
        [],
    )
    .unwrap();
    let runs: i64 = conn
        .query_row("SELECT sum(run_count) FROM configurations", [], |r| {
            r.get(0)
        })
        .unwrap();
    drop(conn);
    let listed = ok(vernier_no_input(&db).args(["sessions"]).output().unwrap());
    assert!(listed.contains("copying"), "{listed}");
    assert!(
        listed.contains(&format!("being copied: {runs} of 1500 runs so far")),
        "{listed}"
    );
    let shown = ok(vernier_no_input(&db)
        .args(["show", "latest"])
        .output()
        .unwrap());
    assert!(
        shown.lines().next().unwrap().contains("  copying  "),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("{runs} of its 1500 runs so far")),
        "{shown}"
    );
    assert!(!shown.contains("abandoned"), "{shown}");
}
