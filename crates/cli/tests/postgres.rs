//! Every command on a PostgreSQL database (`--db postgres://...` and `VERNIER_DB`), `calibrate`
//! and `monitor` recording into one, eight `vernier run` processes recording into one database
//! at once, eight `vernier sync` copying into it at once, and a connection that breaks in the
//! middle of a session. Each test has a database of its own on the server that
//! `VERNIER_TEST_POSTGRES` names (`scripts/with-postgres.sh`); without one they print
//! `skipped: ...`, except under CI, where they fail.

#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used)]

mod site_fixture;

use std::collections::BTreeSet;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use site_fixture::{get, Server};
use vernier_testkit::{
    ok, postgres_database, record_mock_session, sorted, sqlite_texts, sync_count, vernier_no_input,
    TestDatabase,
};

/// The deterministic mock benchmark: three values in turn, no sleeping.
const QUICK: &str = "mock:values=1/1.1/1.2";

fn vernier(db: &TestDatabase, args: &[&str]) -> Output {
    db.vernier_command().args(args).output().unwrap()
}

#[test]
fn every_command_works_on_postgres() {
    let Some(db) = postgres_database("every_command_works_on_postgres") else {
        return;
    };
    // Reading an empty database is an error that says how it gets its tables.
    let out = vernier(&db, &["sessions"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`vernier run` creates them"), "{err}");

    for tag in ["kernel=A", "kernel=B"] {
        ok(vernier(
            &db,
            &[
                "run",
                QUICK,
                "--min-runs",
                "5",
                "--max-runs",
                "5",
                "--tag",
                tag,
                "--quiet",
            ],
        ));
    }
    assert_eq!(db.count("sessions"), 2);
    let listed = ok(vernier(&db, &["sessions"]));
    assert_eq!(listed.lines().count(), 3, "{listed}");
    let shown = ok(vernier(&db, &["show", "kernel=A"]));
    assert!(shown.contains("median"), "{shown}");
    ok(vernier(&db, &["compare", "kernel=A", "kernel=B"]));
    ok(vernier(&db, &["env", "show", "latest"]));
    ok(vernier(&db, &["tag", "latest", "site=farm1"]));
    ok(vernier(&db, &["note", "latest", "a note"]));
    let tagged = ok(vernier(&db, &["sessions", "site=farm1"]));
    assert!(tagged.contains("kernel=B"), "{tagged}");
    // The machine each session ran on, selected with host=NAME.
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let on_this_host = ok(vernier(
        &db,
        &["sessions", &format!("host={},kernel=A", hostname.trim())],
    ));
    assert!(
        on_this_host.contains("kernel=A") && !on_this_host.contains("kernel=B"),
        "{on_this_host}"
    );

    // Export, delete, import again: the same content, and a second import skips it.
    let file = db.dir().join("export.json");
    ok(vernier(&db, &["export", "-o", file.to_str().unwrap()]));
    let before = ok(vernier(&db, &["show", "latest", "--format", "json"]));
    ok(vernier(&db, &["delete", "kernel=B", "--yes"]));
    assert_eq!(db.count("sessions"), 1);
    let imported = ok(vernier(&db, &["import", file.to_str().unwrap()]));
    assert!(
        imported.contains("imported 1 session, skipped 1"),
        "{imported}"
    );
    assert_eq!(
        ok(vernier(&db, &["show", "latest", "--format", "json"])),
        before
    );

    // VERNIER_DB names the database as --db does.
    let out = Command::new(assert_cmd::cargo::cargo_bin("vernier"))
        .arg("sessions")
        .env("VERNIER_DB", db.arg())
        .env("XDG_CACHE_HOME", db.dir())
        .output()
        .unwrap();
    assert_eq!(ok(out).lines().count(), 3);
}

#[test]
fn eight_processes_record_into_one_database_exactly_once() {
    let Some(db) = postgres_database("eight_processes_record_into_one_database_exactly_once")
    else {
        return;
    };
    const PROCESSES: usize = 8;
    const RUNS: usize = 6;
    const WARMUP: usize = 1;
    // All at once on a new database: they also race to create its tables.
    let children: Vec<_> = (0..PROCESSES)
        .map(|i| {
            db.vernier_command()
                .args(["run", QUICK, "--min-runs", "6", "--max-runs", "6"])
                .args(["--warmup", "1", "--quiet", "--tag"])
                .arg(format!("writer={i}"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        ok(child.wait_with_output().unwrap());
    }
    let pg = db.postgres().unwrap();
    assert_eq!(db.count("sessions"), PROCESSES as i64);
    assert_eq!(db.count("configurations"), PROCESSES as i64);
    assert_eq!(db.count("runs"), (PROCESSES * (RUNS + WARMUP)) as i64);
    // One value per run, every session finished, each writer's tag on exactly one session.
    assert_eq!(db.count("run_metric_values"), db.count("runs"));
    assert_eq!(
        pg.query_i64("SELECT count(*) FROM sessions WHERE status = 'completed'"),
        PROCESSES as i64
    );
    let writers: BTreeSet<String> = pg
        .query_texts("SELECT value FROM session_tags WHERE key = 'writer'")
        .into_iter()
        .collect();
    assert_eq!(writers.len(), PROCESSES);
    // Each session holds its own runs, no more and no fewer.
    let per_session = pg.query_texts(
        "SELECT count(*)::text FROM runs r JOIN configurations c ON c.key = r.configuration_key \
         GROUP BY c.session_id",
    );
    assert_eq!(per_session, vec![(RUNS + WARMUP).to_string(); PROCESSES]);
    // The monitors' names were stored once each, whoever stored them first.
    assert_eq!(
        pg.query_i64("SELECT count(*) - count(DISTINCT name) FROM monitor_names"),
        0
    );
}

/// Waits until `condition` holds, for at most `limit`.
fn wait_for(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < limit, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_dropped_connection_loses_at_most_the_run_in_progress() {
    let Some(db) = postgres_database("a_dropped_connection_loses_at_most_the_run_in_progress")
    else {
        return;
    };
    // Runs of 0.3 s each, far more than will happen: the session is still going when its
    // connection is ended.
    let child = db
        .vernier_command()
        .args([
            "run",
            "mock:sleep=0.3",
            "--min-runs",
            "200",
            "--max-runs",
            "200",
        ])
        .args(["--warmup", "0", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pg = db.postgres().unwrap();
    wait_for(Duration::from_secs(60), "three stored runs", || {
        pg.query_i64("SELECT count(*) FROM pg_tables WHERE tablename = 'runs'") == 1
            && db.count("runs") >= 3
    });
    // End every other connection to this database: vernier's.
    let ended = pg.query_i64(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t",
    );
    assert_eq!(ended, 1);
    let stored_before = db.count("runs");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("lost the connection to database")
            && stderr.contains("everything committed before is stored"),
        "{stderr}"
    );
    // The password-free URL names the database, not a file.
    assert!(
        stderr.contains("postgresql://") || stderr.contains("postgres://"),
        "{stderr}"
    );

    // Every run recorded before the break is stored whole, and nothing after it: at most the
    // run in progress was lost.
    let stored = db.count("runs");
    assert!(stored >= stored_before, "{stored} < {stored_before}");
    assert!(
        stored <= stored_before + 1,
        "{stored} > {stored_before} + 1"
    );
    assert_eq!(db.count("run_metric_values"), stored);
    assert_eq!(db.count("run_monitors"), stored);
    // The session reads back with those runs, abandoned: its process is gone.
    let listed = ok(vernier(&db, &["sessions"]));
    assert!(listed.contains("abandoned"), "{listed}");
    let shown = ok(vernier(&db, &["show", "latest", "--format", "json"]));
    let json: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(json[0]["n"].as_i64(), Some(stored), "{shown}");
    assert_eq!(json[0]["session_status"], "abandoned", "{shown}");
}

/// The fixture of cyclictest's histogram output (crates/formats/tests/fixtures/cyclictest): an
/// imported session with histograms, whose ids follow from the file's content.
fn cyclictest_fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/fixtures/cyclictest/2.4-h400-q.txt")
}

/// Eight machines syncing into one PostgreSQL database at once, each holding two sessions of
/// its own and two that all of them hold (copied to each from one origin: a recorded session
/// with monitor data and an imported one with histograms), so that all eight race to store
/// them: every session, configuration, run, value, histogram and monitor record arrives
/// exactly once, with its id, and the eight summaries together copy each session once.
#[test]
fn eight_syncs_at_once_store_every_session_and_run_exactly_once() {
    const MACHINES: usize = 8;
    let Some(central) =
        postgres_database("eight_syncs_at_once_store_every_session_and_run_exactly_once")
    else {
        return;
    };
    let url = central.arg().to_str().unwrap().to_string();
    let dir = central.dir();
    let origin = dir.join("origin.db");
    record_mock_session(&origin, "shared=yes");
    ok(vernier_no_input(&origin)
        .arg("import")
        .arg(cyclictest_fixture())
        .output()
        .unwrap());
    let machines: Vec<std::path::PathBuf> = (0..MACHINES)
        .map(|i| {
            let db = dir.join(format!("machine{i}.db"));
            ok(vernier_no_input(&origin)
                .args(["sync", "--to", db.to_str().unwrap()])
                .output()
                .unwrap());
            record_mock_session(&db, &format!("machine={i}"));
            record_mock_session(&db, &format!("machine={i}"));
            db
        })
        .collect();

    // Every process is started before any is waited for.
    let children: Vec<_> = machines
        .iter()
        .map(|db| {
            vernier_no_input(db)
                .args(["sync", "--to", &url])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut copied = 0;
    for child in children {
        let out = ok(child.wait_with_output().unwrap());
        let (mine, present) = (
            sync_count(&out, " session(s)"),
            sync_count(&out, " already present"),
        );
        assert!((2..=4).contains(&mine), "{out}");
        assert_eq!(mine + present, 4, "{out}");
        copied += mine;
    }
    assert_eq!(copied, 2 * MACHINES + 2);

    // The rows of the target are exactly the distinct rows of the machines.
    let pg = central.postgres().unwrap();
    // Rows name their run by its place, its configuration's id and the low 32 bits of its key
    // (its kind and index), as text: the keys differ between databases.
    let runs = "runs r JOIN configurations c ON c.key = r.configuration_key";
    let of_run = |table: &str| {
        format!(
            "{table} x JOIN runs r ON r.key = x.run_key \
             JOIN configurations c ON c.key = r.configuration_key"
        )
    };
    for (table, row) in [
        ("sessions".to_string(), "id"),
        ("configurations".to_string(), "id"),
        (runs.to_string(), "{r.id}"),
        (of_run("run_metric_values"), "{r.id} || ':' || x.metric"),
        (
            of_run("run_histograms"),
            "{r.id} || ':' || x.quantity || ':' || x.thread || ':' || x.count",
        ),
        (of_run("run_monitors"), "{r.id} || ':' || length(x.series)"),
    ] {
        let (sqlite_row, pg_row) = (
            row.replace("{r.id}", "(c.id || ':' || (r.key % 4294967296))"),
            row.replace("{r.id}", "(c.id || ':' || (r.key % 4294967296))"),
        );
        let mut expected: Vec<String> = machines
            .iter()
            .flat_map(|db| sqlite_texts(db, &format!("SELECT {sqlite_row} FROM {table}")))
            .collect();
        expected.sort();
        expected.dedup();
        assert!(!expected.is_empty(), "{table}");
        let stored = sorted(pg.query_texts(&format!("SELECT ({pg_row})::text FROM {table}")));
        assert_eq!(stored, expected, "{table}");
    }
    assert_eq!(central.count("sessions"), (2 * MACHINES + 2) as i64);
    // The shared sessions once each, whoever stored them.
    assert_eq!(
        pg.query_i64("SELECT count(*) FROM session_tags WHERE key = 'shared'"),
        1
    );
    assert_eq!(
        pg.query_i64("SELECT count(*) FROM configurations WHERE benchmark = 'cyclictest'"),
        1
    );
}

#[test]
fn calibrate_stores_its_sessions_and_calibration_in_postgres() {
    let Some(db) = postgres_database("calibrate_stores_its_sessions_and_calibration_in_postgres")
    else {
        return;
    };
    // The sessions must see one environment: a test elsewhere that changes a sysctl in
    // between would split them by fingerprint.
    let _turn = vernier_testkit::host_turn();
    let stdout = ok(vernier(
        &db,
        &[
            "calibrate",
            QUICK,
            "--sessions",
            "3",
            "--runs",
            "4",
            "--warmup",
            "0",
            "--max-time",
            "30",
        ],
    ));
    assert!(stdout.contains("stored in"), "{stdout}");
    assert_eq!(db.count("sessions"), 3);
    assert_eq!(db.count("calibrations"), 1);
    let pg = db.postgres().unwrap();
    assert_eq!(
        pg.query_i64("SELECT sessions * 100 + runs FROM calibrations"),
        3 * 100 + 12
    );
    // compare finds it by the sessions' fingerprint.
    let report: serde_json::Value = serde_json::from_str(&ok(vernier(
        &db,
        &["compare", "latest~1", "latest", "--format", "json"],
    )))
    .unwrap();
    assert_eq!(
        report["comparisons"][0]["noise_source"], "calibration",
        "{report}"
    );
}

#[test]
fn monitor_stores_each_interval_in_postgres() {
    let Some(db) = postgres_database("monitor_stores_each_interval_in_postgres") else {
        return;
    };
    ok(vernier(
        &db,
        &[
            "monitor",
            "latency:policy=other:interval=1ms",
            "--interval",
            "1",
            "--for",
            "3s",
            "--monitor",
            "none",
            "-q",
        ],
    ));
    let pg = db.postgres().unwrap();
    assert_eq!(
        pg.query_i64("SELECT count(*) FROM runs WHERE NOT warmup"),
        3
    );
    assert_eq!(pg.query_i64("SELECT count(*) FROM runs WHERE warmup"), 0);
    let threads = pg.query_i64("SELECT count(DISTINCT thread) FROM run_histograms");
    assert!(threads >= 1);
    assert_eq!(db.count("run_histograms"), 3 * threads);
    let shown = ok(vernier(&db, &["show", "latest"]));
    assert!(shown.contains("maximum of 3 interval maxima:"), "{shown}");
    assert!(shown.contains("tags: monitor=latency"), "{shown}");
    let listed = ok(vernier(&db, &["sessions"]));
    assert!(listed.contains("completed"), "{listed}");
}

#[test]
fn serve_shows_a_session_stored_while_it_runs() {
    let Some(db) = postgres_database("serve_shows_a_session_stored_while_it_runs") else {
        return;
    };
    let record = |kernel: &str| {
        ok(vernier(
            &db,
            &[
                "run",
                QUICK,
                "--min-runs",
                "3",
                "--max-runs",
                "3",
                "--tag",
                &format!("kernel={kernel}"),
                "--quiet",
            ],
        ))
    };
    record("A");
    let (_server, url) = Server::start_with(db.vernier_command(), &["--by", "kernel"]);
    let address = url.trim_start_matches("http://").trim_end_matches('/');
    let page = || {
        let (status, body) = get(address, "index.html");
        let body = String::from_utf8(body).unwrap();
        assert_eq!(status, 200, "{body}");
        body
    };
    let first = page();
    assert!(
        first.contains("kernel=A") && !first.contains("kernel=B"),
        "{first}"
    );
    // Unchanged, the same page.
    assert_eq!(page(), first);
    record("B");
    let second = page();
    assert!(second.contains("kernel=B"), "{second}");
    // A tag set afterwards, a change of a stored row, is seen too.
    ok(vernier(&db, &["tag", "kernel=B", "kernel=C"]));
    let third = page();
    assert!(
        third.contains("kernel=C") && !third.contains("kernel=B"),
        "{third}"
    );
}

/// `vernier sync --to postgres://...` from a machine's SQLite file, through the command line:
/// the first sync copies every session, a second copies nothing and says so, and `show` and
/// `export` read the same from the PostgreSQL database as from the file.
#[test]
fn sync_from_a_file_to_postgres_copies_once_and_reads_back_the_same() {
    let Some(central) =
        postgres_database("sync_from_a_file_to_postgres_copies_once_and_reads_back_the_same")
    else {
        return;
    };
    let machine = central.dir().join("machine.db");
    record_mock_session(&machine, "kernel=A");
    record_mock_session(&machine, "kernel=B");
    ok(vernier_no_input(&machine)
        .arg("import")
        .arg(cyclictest_fixture())
        .output()
        .unwrap());
    let sync = || {
        ok(vernier_no_input(&machine)
            .args(["sync", "--to"])
            .arg(central.arg())
            .output()
            .unwrap())
    };
    let runs = sqlite_texts(&machine, "SELECT count(*) FROM runs")[0].clone();
    let first = sync();
    assert!(
        first.contains(&format!(
            "copied 3 sessions ({runs} runs), 0 already present"
        )),
        "{first}"
    );
    // The summary names the target without its password and as a URL.
    assert!(first.contains("-> postgres"), "{first}");
    let again = sync();
    assert!(
        again.contains("copied 0 sessions (0 runs), 3 already present"),
        "{again}"
    );
    assert_eq!(central.count("sessions"), 3);

    let both = |args: &[&str]| {
        (
            ok(vernier(&central, args)),
            ok(vernier_no_input(&machine).args(args).output().unwrap()),
        )
    };
    for selector in ["kernel=A", "kernel=B", "latest"] {
        let (from_postgres, from_file) = both(&["show", selector, "--format", "json"]);
        assert_eq!(from_postgres, from_file, "{selector}");
    }
    let (from_postgres, from_file) = both(&["export"]);
    assert_eq!(from_postgres, from_file);
    let (from_postgres, from_file) = both(&["sessions"]);
    assert_eq!(from_postgres, from_file);
}

#[test]
fn a_failure_quoting_nul_is_stored_in_postgres() {
    let Some(db) = postgres_database("a_failure_quoting_nul_is_stored_in_postgres") else {
        return;
    };
    // The contrib example, made to fail with a NUL on its standard error, which the error
    // stored with its configuration quotes.
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../contrib/benchmarks/sort-numbers"),
    )
    .unwrap();
    let failing = example.replace(
        "    input=$(mktemp)",
        "    printf 'disk\\000on fire\\n' >&2; exit 3\n    input=$(mktemp)",
    );
    assert_ne!(failing, example);
    let benchmarks = db.dir().join("vernier/benchmarks");
    std::fs::create_dir_all(&benchmarks).unwrap();
    let path = benchmarks.join("failing");
    std::fs::write(&path, failing).unwrap();
    std::fs::set_permissions(
        &path,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .unwrap();
    let out = db
        .vernier_command()
        .env("XDG_CONFIG_HOME", db.dir())
        .args(["run", "failing", "--min-runs", "3", "--max-runs", "3"])
        .args(["--monitor", "none", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("invalid byte sequence"), "{stderr}");
    let pg = db.postgres().unwrap();
    assert_eq!(
        pg.query_texts("SELECT status FROM sessions"),
        ["failed"],
        "{stderr}"
    );
    let errors = pg.query_texts("SELECT error FROM configurations");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].ends_with("disk\\0on fire"), "{errors:?}");
}

#[test]
fn a_session_running_on_another_machine_leaves_this_one_idle() {
    let Some(db) = postgres_database("a_session_running_on_another_machine_leaves_this_one_idle")
    else {
        return;
    };
    ok(vernier(
        &db,
        &["run", QUICK, "--min-runs", "3", "--max-runs", "3", "-q"],
    ));
    // A session that another machine of the farm is recording into the central database now.
    let other = "0b5e55a0-0000-4000-8000-000000000001";
    db.execute(&format!(
        "INSERT INTO sessions (id, started_at_ns, status, specs, settings, vernier_version, \
         fingerprint, environment, hostname, machine_id) VALUES ('{other}', 1, 'running', '[]', \
         '{{}}', '0.1.0', 'f', '{{}}', 'box9', 'ffffffffffffffffffffffffffffffff')"
    ));
    let listed = ok(vernier(&db, &["sessions", "host=box9"]));
    assert!(listed.contains("running"), "{listed}");
    let out = ok(vernier(
        &db,
        &[
            "run",
            QUICK,
            "--min-runs",
            "3",
            "--max-runs",
            "3",
            "--if-busy",
            "skip",
        ],
    ));
    assert!(!out.contains("skipped"), "{out}");
    let pg = db.postgres().unwrap();
    assert_eq!(
        pg.query_i64("SELECT count(*) FROM sessions WHERE status = 'completed'"),
        2,
        "{out}"
    );
}

/// A farm's central database is migrated only by `vernier db migrate`: a sync (or run) of a
/// newer vernier into an older schema is refused, naming the command, and changes nothing;
/// `db migrate` then migrates it, and a schema one version ahead whose change was additive is
/// still read (`sessions`) while writing to it is refused.
#[test]
fn only_db_migrate_migrates_a_central_database() {
    let Some(central) = postgres_database("only_db_migrate_migrates_a_central_database") else {
        return;
    };
    let machine = central.dir().join("machine.db");
    record_mock_session(&machine, "kernel=A");
    // As an older vernier left it: the schema of the version before this one's.
    let pg = central.postgres().unwrap();
    let current = vernier_store::SCHEMA_VERSION;
    let migrations =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/migrations/postgres");
    let mut files: Vec<_> = std::fs::read_dir(&migrations)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut client = pg.client();
    for file in files.iter().take((current - 1 - 5) as usize) {
        client
            .batch_execute(&std::fs::read_to_string(file).unwrap())
            .unwrap();
    }
    client
        .batch_execute(&format!(
            "CREATE TABLE schema_version (version BIGINT NOT NULL); \
             INSERT INTO schema_version VALUES ({})",
            current - 1
        ))
        .unwrap();
    let sync = || {
        vernier_no_input(&machine)
            .args(["sync", "--to"])
            .arg(central.arg())
            .output()
            .unwrap()
    };
    let err = vernier_testkit::refused(sync());
    assert!(err.contains("vernier db migrate --db URL"), "{err}");
    let err = vernier_testkit::refused(vernier(&central, &["run", QUICK, "--quiet"]));
    assert!(err.contains("vernier db migrate --db URL"), "{err}");
    assert_eq!(
        pg.query_i64("SELECT version FROM schema_version"),
        current - 1
    );
    assert_eq!(central.count("sessions"), 0);

    let migrated = ok(vernier(&central, &["db", "migrate"]));
    assert!(
        migrated.contains(&format!(
            "migrated from schema version {} to {current}",
            current - 1
        )),
        "{migrated}"
    );
    let copied = ok(sync());
    assert!(copied.contains("copied 1 session ("), "{copied}");

    // One version ahead, additive: read, never written.
    pg.client()
        .batch_execute(&format!(
            "ALTER TABLE sessions ADD COLUMN added_later TEXT; \
             UPDATE schema_version SET version = {}, readable_by = {current}",
            current + 1
        ))
        .unwrap();
    let listed = ok(vernier(&central, &["sessions"]));
    assert_eq!(listed.lines().count(), 2, "{listed}");
    let err = vernier_testkit::refused(vernier(&central, &["tag", "latest", "x=1"]));
    assert!(err.contains("newer than this vernier knows"), "{err}");
}

/// A central database across a lab network is reached over TLS, with libpq's `sslmode`: the
/// test server takes TCP connections only with TLS (`hostssl`), so a run recorded through it
/// was encrypted; `disable` is refused there, and the verifying modes trust the server's
/// certificate only when they are given it.
#[test]
fn a_central_database_is_reached_over_tls_as_sslmode_says() {
    let test = "a_central_database_is_reached_over_tls_as_sslmode_says";
    let Some(db) = postgres_database(test) else {
        return;
    };
    let Some((tls, ca)) = db.postgres().unwrap().tls(test) else {
        return;
    };
    let ca = ca.display().to_string();
    let with = |db: &str, args: &[&str]| {
        vernier_no_input(std::path::Path::new(db))
            .args(args)
            .output()
            .unwrap()
    };
    let run = ["run", QUICK, "--min-runs", "3", "--max-runs", "3", "-q"];
    for query in [
        "sslmode=require".to_string(),
        format!("sslmode=verify-full&sslrootcert={ca}"),
        format!("sslmode=verify-ca&sslrootcert={ca}"),
    ] {
        ok(with(&format!("{tls}?{query}"), &run));
    }
    assert_eq!(db.count("sessions"), 3);
    let listed = ok(with(&format!("{tls}?sslmode=require"), &["sessions"]));
    assert_eq!(listed.lines().count(), 4, "{listed}");

    let refused = |query: &str, expected: &str| {
        let out = with(&format!("{tls}?{query}"), &["sessions"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{query}: {err}");
        assert!(err.contains(expected), "{query}: {err}");
    };
    // Without TLS the server refuses the connection.
    refused("sslmode=disable", "no encryption");
    // A self-signed certificate is not one the system trusts.
    refused("sslmode=verify-full&sslrootcert=system", "certificate");
    refused(
        "sslmode=allow",
        "valid: disable, prefer, require, verify-ca or verify-full",
    );
    assert_eq!(db.count("sessions"), 3);
}
