//! Migration 0016 (a run stored by its place: its id only when it is not the one its place
//! gives, in `run_ids`; the columns its key or other columns give generated) on databases
//! written by the previous schema version, kept as fixtures made by vernier at schema version
//! 15 (`tests/fixtures/README.md` says how): `schema-15.db`, an SQLite file, and
//! `schema-15-postgres.sql`, the rows of the same sessions copied by that vernier into
//! PostgreSQL, loaded here into version 15's tables (`migrations/postgres/0006..0015`).
//!
//! What version 15 held is read from its tables by hand before the migration (every run's id,
//! values, monitor blobs, histograms and traces), and must be what the store reads after it,
//! bit for bit; every column of `runs` that docs/schema.md documents reads as it did, in both
//! engines, and the PostgreSQL database reads the same sessions as the SQLite file.

#![allow(clippy::unwrap_used)]

mod fixture;

use std::collections::BTreeMap;

use fixture::{assert_totals_kept, check_monitor_blobs, every_session, facts_v13, Fixture};
use rusqlite::types::Value;
use vernier_model::{RunPlace, StoredSession};
use vernier_store::{Load, SqliteStore, Store};

const SCHEMA_15: Fixture = Fixture {
    name: "schema-15",
    version: 15,
    facts: facts_v13,
};

/// The columns of `runs` that queries read in version 15, each of them still one in version 16.
const DOCUMENTED: &str = "key, configuration_key, idx, warmup, round, preceding_executions, \
     started_at_ns, ended_at_ns, value, user_cpu_ns, system_cpu_ns, voluntary_cs, \
     involuntary_cs, max_rss_bytes, foreign_cpu_ns, controller_cpu_ns, load_cpu_ns, \
     setup_steps, setup_changed";

/// Every run's documented columns, in the order of the keys.
fn documented_rows(conn: &rusqlite::Connection) -> Vec<Vec<Value>> {
    let mut stmt = conn
        .prepare(&format!("SELECT {DOCUMENTED} FROM runs ORDER BY key"))
        .unwrap();
    let columns = stmt.column_count();
    stmt.query_map([], |r| (0..columns).map(|i| r.get::<_, Value>(i)).collect())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The same columns as PostgreSQL's text, one row a line.
fn documented_texts(db: &vernier_testkit::TestDatabase) -> Vec<String> {
    let columns: Vec<String> = DOCUMENTED
        .split(", ")
        .map(|c| format!("coalesce({c}::text, 'null')"))
        .collect();
    db.query_texts(&format!(
        "SELECT concat_ws('|', {}) FROM runs ORDER BY key",
        columns.join(", ")
    ))
}

/// Every run of `sessions` as read, by id, and the ids sorted as hex.
fn runs_by_id(sessions: &[StoredSession]) -> BTreeMap<uuid::Uuid, vernier_model::RunRecord> {
    sessions
        .iter()
        .flat_map(|s| &s.configurations)
        .flat_map(|c| &c.runs)
        .map(|r| (r.id, r.clone()))
        .collect()
}

#[test]
fn the_fixture_holds_what_the_migration_must_carry() {
    SCHEMA_15.check_contents(true);
    // A measured run after a warmup has executions before it that its index does not count, so
    // the migration keeps a preceding_executions of its own.
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(SCHEMA_15.copy_into(dir.path())).unwrap();
    let differing: i64 = conn
        .query_row(
            "SELECT count(*) FROM runs WHERE preceding_executions <> idx",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(differing > 0);
}

#[test]
fn a_version_15_file_is_converted_in_place_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let before_rows = {
        let conn = rusqlite::Connection::open(SCHEMA_15.copy_into(dir.path())).unwrap();
        documented_rows(&conn)
    };
    let (path, before, sessions) = SCHEMA_15.convert_sqlite(dir.path());
    assert_totals_kept(&SqliteStore::open_read_only(&path).unwrap(), &sessions);

    let conn = rusqlite::Connection::open(&path).unwrap();
    // Every documented column reads as it did, the generated ones included.
    assert_eq!(documented_rows(&conn), before_rows);
    // The ids of the runs stored before are kept, each once; `runs` has no id any more.
    let mut kept: Vec<uuid::Uuid> = conn
        .prepare("SELECT id FROM run_ids")
        .unwrap()
        .query_map([], |r| {
            Ok(uuid::Uuid::from_slice(&r.get::<_, Vec<u8>>(0)?).unwrap())
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    kept.sort();
    assert_eq!(kept, before.keys().copied().collect::<Vec<_>>());
    let id_column: i64 = conn
        .query_row(
            "SELECT count(*) FROM pragma_table_xinfo('runs') WHERE name = 'id'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(id_column, 0);
    check_monitor_blobs(&conn, &before);
    drop(conn);

    // A run recorded now with the id its place gives stores none; one with another id keeps it.
    let mut store = SqliteStore::open(&path).unwrap();
    let mut session = vernier_testkit::stored_session(7_000, &[1.0, 2.0]);
    let configuration = session.configurations[0].record.id;
    let derived = session.configurations[0].runs[0]
        .place(configuration)
        .derived_id();
    session.configurations[0].runs[0].id = derived;
    let other = session.configurations[0].runs[1].id;
    store
        .import_sessions(std::slice::from_ref(&session), &BTreeMap::new())
        .unwrap();
    assert_eq!(
        store.load_session(session.info.id, Load::ALL).unwrap(),
        session
    );
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        count("SELECT count(*) FROM run_ids") as usize,
        before.len() + 1
    );
    let stored: Vec<u8> = conn
        .query_row(
            "SELECT id FROM run_ids ORDER BY run_key DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let stored = uuid::Uuid::from_slice(&stored).unwrap();
    assert_eq!(stored, other);
    drop(conn);

    // Deleting a session deletes its runs' kept ids with them.
    let mut store = SqliteStore::open(&path).unwrap();
    store.delete_session(sessions[0].info.id).unwrap();
    let left = runs_by_id(&every_session(&store));
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT count(*) FROM runs") as usize, left.len());
    assert_eq!(
        count("SELECT count(*) FROM run_ids WHERE run_key NOT IN (SELECT key FROM runs)"),
        0
    );
}

#[test]
fn a_version_15_postgres_database_is_converted_in_place_as_sqlite_is() {
    let dir = tempfile::tempdir().unwrap();
    let Some((db, path, before)) =
        SCHEMA_15.postgres("a_version_15_postgres_database_is_converted", dir.path())
    else {
        return;
    };
    let before_rows = documented_texts(&db);
    let (store, sessions) = SCHEMA_15.convert_postgres(&db, &path, &before);
    // `runs.id` went: only a vernier of version 16 or later reads the database.
    assert_eq!(db.query_i64("SELECT readable_by FROM schema_version"), 16);
    assert_totals_kept(store.as_ref(), &sessions);
    assert_eq!(documented_texts(&db), before_rows);
    let mut kept = db.query_texts("SELECT encode(id, 'hex') FROM run_ids");
    kept.sort();
    let expected: Vec<String> = before.keys().map(|id| id.simple().to_string()).collect();
    assert_eq!(kept, expected);
    // Runs compare by place in both engines: the places the store reports are the runs read.
    for session in &sessions {
        let progress = store.session_progress(session.info.id).unwrap();
        let places: std::collections::BTreeSet<RunPlace> = session
            .configurations
            .iter()
            .flat_map(|c| c.runs.iter().map(|r| r.place(c.record.id)))
            .collect();
        assert_eq!(progress.runs, places);
    }
}
