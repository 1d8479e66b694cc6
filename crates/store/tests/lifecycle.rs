//! Who records a session, what happens when that process is gone, and locked databases: the
//! `abandoned` status and the bounded wait for another process's lock on both engines
//! (`vernier_testkit::databases`), schema version 3 and opening a new file on SQLite.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, Options, SessionInfo, SessionStatus, StopReason, StoredSession,
};
use vernier_store::{Access, Load, Location, SqliteStore, Store, StoreError, SCHEMA_VERSION};
use vernier_testkit::{begun_configuration, databases, session_info, temp_db, TestDatabase};

/// The store of `db` waiting at most `lock_wait` for another process's lock.
fn open(db: &TestDatabase, lock_wait: Duration) -> Box<dyn Store> {
    vernier_store::open_with_lock_wait(
        &Location::parse(db.arg()).unwrap(),
        Access::Create,
        lock_wait,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", db.engine()))
}

/// A session that has begun and not ended.
fn session() -> SessionInfo {
    SessionInfo {
        ended_at_ns: None,
        status: SessionStatus::Running,
        ..session_info()
    }
}

fn configuration(position: u32) -> ConfigurationRecord {
    ConfigurationRecord {
        position,
        ..begun_configuration("mock", Options::default(), ("time", "s"))
    }
}

/// The status of session `id` as a new connection reads it.
fn status(db: &TestDatabase, id: Uuid) -> SessionStatus {
    open(db, vernier_store::LOCK_WAIT)
        .load_session(id, Load::ALL)
        .unwrap()
        .info
        .status
}

/// A farm's central database holds sessions that other machines are still recording (copied
/// by `vernier sync`): their processes are not this machine's, so they read as running, while
/// the same session recorded on this machine reads as abandoned once its process is gone.
#[test]
fn a_running_session_of_another_machine_stays_running() {
    let Some(here) = vernier_sys::environment::this_machine_id() else {
        eprintln!("skipped: this machine has no machine id (/etc/machine-id)");
        return;
    };
    let other = if here.starts_with('f') {
        "0".repeat(32)
    } else {
        "f".repeat(32)
    };
    for db in databases("a_running_session_of_another_machine_stays_running") {
        let mut store = open(&db, vernier_store::LOCK_WAIT);
        let mut info = session();
        info.environment.machine_id = Some(other.clone());
        store.begin_session(&info).unwrap();
        let id = info.id;
        // Its owner: a process of that machine's boot, as every process of another machine is.
        db.execute(&format!(
            "UPDATE sessions SET owner_boot_id = 'another-machines-boot' WHERE id = '{id}'"
        ));
        assert_eq!(status(&db, id), SessionStatus::Running, "{}", db.engine());
        let headers = open(&db, vernier_store::LOCK_WAIT)
            .session_headers()
            .unwrap();
        assert_eq!(headers[0].status, SessionStatus::Running);

        // The same session as this machine's: its owner's boot is gone, so it is abandoned.
        if vernier_sys::process::boot_id().is_some() {
            db.execute(&format!(
                "UPDATE sessions SET machine_id = '{here}' WHERE id = '{id}'"
            ));
            assert_eq!(status(&db, id), SessionStatus::Abandoned, "{}", db.engine());
        }
    }
}

#[test]
fn a_running_session_is_abandoned_once_its_process_is_gone() {
    for db in databases("a_running_session_is_abandoned_once_its_process_is_gone") {
        let mut store = open(&db, vernier_store::LOCK_WAIT);
        let info = session();
        store.begin_session(&info).unwrap();
        // Recorded by this process, which lives: running, in every reading.
        assert_eq!(
            status(&db, info.id),
            SessionStatus::Running,
            "{}",
            db.engine()
        );
        let id = info.id;
        assert_eq!(
            db.query_i64(&format!("SELECT owner_pid FROM sessions WHERE id = '{id}'")),
            i64::from(std::process::id())
        );
        assert_eq!(
            db.query_texts(&format!(
                "SELECT coalesce(owner_boot_id, '') FROM sessions WHERE id = '{id}'"
            )),
            [vernier_sys::process::boot_id().unwrap_or_default()]
        );

        // The owner of another boot: every pid of that boot is gone.
        db.execute(&format!(
            "UPDATE sessions SET owner_boot_id = 'an-earlier-boot' WHERE id = '{id}'"
        ));
        if vernier_sys::process::boot_id().is_some() {
            assert_eq!(status(&db, id), SessionStatus::Abandoned, "{}", db.engine());
        }
        // A process of this boot that has ended (a reaped child).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        db.execute(&format!(
            "UPDATE sessions SET owner_boot_id = NULL, owner_start_ticks = NULL, \
             owner_pid = {dead} WHERE id = '{id}'"
        ));
        assert_eq!(status(&db, id), SessionStatus::Abandoned, "{}", db.engine());
        let listed = open(&db, vernier_store::LOCK_WAIT).sessions().unwrap();
        assert_eq!(listed[0].status, SessionStatus::Abandoned);
        let headers = open(&db, vernier_store::LOCK_WAIT)
            .session_headers()
            .unwrap();
        assert_eq!(headers[0].status, SessionStatus::Abandoned);

        // Finished sessions keep their status whatever became of their process.
        store
            .finish_session(id, SessionStatus::Completed, 5)
            .unwrap();
        assert_eq!(status(&db, id), SessionStatus::Completed);
    }
}

#[test]
fn imported_running_sessions_are_abandoned_and_abandoned_ones_round_trip() {
    for db in databases("imported_running_sessions_are_abandoned_and_abandoned_ones_round_trip") {
        let mut store = open(&db, vernier_store::LOCK_WAIT);
        let running = StoredSession {
            info: session(),
            configurations: Vec::new(),
        };
        let mut abandoned = StoredSession {
            info: session(),
            configurations: Vec::new(),
        };
        abandoned.info.status = SessionStatus::Abandoned;
        store
            .import_sessions(&[running.clone(), abandoned.clone()], &BTreeMap::new())
            .unwrap();
        // No process here records an imported session.
        assert_eq!(status(&db, running.info.id), SessionStatus::Abandoned);
        assert_eq!(status(&db, abandoned.info.id), SessionStatus::Abandoned);
        // Importing the same file again finds the same content.
        let again = store
            .import_sessions(&[running, abandoned], &BTreeMap::new())
            .unwrap();
        assert_eq!((again.imported, again.skipped), (0, 2), "{}", db.engine());
    }
}

#[test]
fn a_version_2_database_gains_the_owner_columns() {
    let (_dir, path) = temp_db();
    let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    for file in ["0001_initial.sql", "0002_monitors_setup_findings.sql"] {
        conn.execute_batch(&std::fs::read_to_string(migrations.join(file)).unwrap())
            .unwrap();
    }
    conn.pragma_update(None, "user_version", 2).unwrap();
    conn.pragma_update(None, "application_id", 0x7672_6e72)
        .unwrap();
    let id = Uuid::new_v4();
    conn.execute(
        "INSERT INTO sessions (id, started_at_ns, status, specs, settings, vernier_version, \
         fingerprint, environment) VALUES (?1, 1, 'running', '[]', '{}', '0.1.0', 'f', '{}')",
        [id.to_string()],
    )
    .unwrap();
    drop(conn);

    let store = SqliteStore::open(&path).unwrap();
    // Left running by a vernier of schema version 2: nothing records it any more.
    assert_eq!(
        store.load_session(id, Load::ALL).unwrap().info.status,
        SessionStatus::Abandoned
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let owner: Option<i64> = conn
        .query_row("SELECT owner_pid FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(owner, None);
}

#[test]
fn a_session_ended_at_once_is_interrupted_with_its_open_configurations() {
    for db in databases("a_session_ended_at_once_is_interrupted_with_its_open_configurations") {
        let mut store = open(&db, vernier_store::LOCK_WAIT);
        let info = session();
        store.begin_session(&info).unwrap();
        let (done, open_one) = (configuration(0), configuration(1));
        store.add_configuration(info.id, &done).unwrap();
        store.add_configuration(info.id, &open_one).unwrap();
        store
            .finish_configuration(done.id, StopReason::MaxRuns, false, None)
            .unwrap();

        let mut other = open(&db, vernier_store::LOCK_WAIT);
        assert!(other
            .end_running_session(info.id, SessionStatus::Interrupted, 9)
            .unwrap());
        let loaded = store.load_session(info.id, Load::ALL).unwrap();
        assert_eq!(loaded.info.status, SessionStatus::Interrupted);
        assert_eq!(loaded.info.ended_at_ns, Some(9));
        let reasons: Vec<_> = loaded
            .configurations
            .iter()
            .map(|c| c.record.stop_reason)
            .collect();
        assert_eq!(
            reasons,
            [Some(StopReason::MaxRuns), Some(StopReason::Interrupted)],
            "{}",
            db.engine()
        );
        // Only a running session is ended: a second call, or the engine's own ending, is no
        // change.
        assert!(!other
            .end_running_session(info.id, SessionStatus::Interrupted, 10)
            .unwrap());
        assert_eq!(
            store
                .load_session(info.id, Load::ALL)
                .unwrap()
                .info
                .ended_at_ns,
            Some(9)
        );
    }
}

/// Another connection's open write transaction, holding what a write of the store needs:
/// SQLite's write lock (the whole file), or in PostgreSQL a lock on the `configurations` table
/// that lets readers through (EXCLUSIVE mode,
/// https://www.postgresql.org/docs/15/explicit-locking.html).
enum Holder {
    Sqlite(rusqlite::Connection),
    Postgres(Box<dyn FnOnce()>),
}

fn hold_lock(db: &TestDatabase) -> Holder {
    match db.postgres() {
        None => {
            let conn = rusqlite::Connection::open(db.arg()).unwrap();
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            Holder::Sqlite(conn)
        }
        Some(pg) => {
            let mut client = pg.client();
            client
                .batch_execute("BEGIN; LOCK TABLE configurations IN EXCLUSIVE MODE")
                .unwrap();
            Holder::Postgres(Box::new(move || client.batch_execute("ROLLBACK").unwrap()))
        }
    }
}

fn release(holder: Holder) {
    match holder {
        Holder::Sqlite(conn) => conn.execute_batch("ROLLBACK").unwrap(),
        Holder::Postgres(rollback) => rollback(),
    }
}

/// Another process holds the write lock past the wait: the write fails naming the database,
/// reads go on, and once the lock is released the same store writes again.
#[test]
fn a_lock_held_past_the_wait_fails_the_write_naming_the_database() {
    for db in databases("a_lock_held_past_the_wait_fails_the_write_naming_the_database") {
        let mut store = open(&db, Duration::from_millis(100));
        let info = session();
        store.begin_session(&info).unwrap();

        let holder = hold_lock(&db);
        let c = configuration(0);
        let e = store.add_configuration(info.id, &c).unwrap_err();
        match &e {
            StoreError::Locked { waited, .. } => {
                assert!(*waited >= Duration::from_millis(100), "{e}")
            }
            other => panic!("{}: {other:?}", db.engine()),
        }
        let message = e.to_string();
        assert!(message.contains(&store.location().to_string()), "{message}");
        assert!(message.contains("locked by another process"), "{message}");
        // A reader does not wait for a writer (SQLite's WAL, PostgreSQL's snapshots).
        assert_eq!(store.sessions().unwrap().len(), 1);
        assert!(store
            .load_session(info.id, Load::ALL)
            .unwrap()
            .configurations
            .is_empty());

        release(holder);
        store.add_configuration(info.id, &c).unwrap();
        assert_eq!(
            store
                .load_session(info.id, Load::ALL)
                .unwrap()
                .configurations
                .len(),
            1,
            "{}",
            db.engine()
        );
    }
}

/// Opening a new file switches it to WAL, and SQLite fails that switch at once, without
/// waiting, while another connection holds the write lock (it would have to turn its read
/// transaction into a write transaction, which SQLite never waits for). Two vernier processes
/// opening a new database at once met this. The opener must wait for the lock instead.
#[test]
fn opening_waits_for_a_lock_held_on_a_new_file() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, b"").unwrap();
    let mut other = rusqlite::Connection::open(&path).unwrap();
    let tx = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let opener = {
        let path = path.clone();
        std::thread::spawn(move || SqliteStore::open(&path).map(|_| ()))
    };
    // Gives the opener time to meet the lock; it must succeed however long the lock is held
    // (within the wait), so the outcome does not depend on this pause.
    std::thread::sleep(Duration::from_millis(300));
    tx.rollback().unwrap();
    if let Err(e) = opener.join().unwrap() {
        panic!("{e}");
    }
    let store = SqliteStore::open_existing(&path).unwrap();
    assert!(store.sessions().unwrap().is_empty());
}
