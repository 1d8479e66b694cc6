//! Migration 0018 on databases written by the previous schema version, kept as fixtures made
//! by vernier at schema version 17 (`tests/fixtures/README.md` says how): `schema-17.db`, an
//! SQLite file whose session `fixture=c` keeps the ids of its runs in `run_ids`, and
//! `schema-17-postgres.sql`, the rows of the same sessions copied by that vernier into
//! PostgreSQL, loaded here into version 17's tables (`migrations/postgres/0006..0017`).
//!
//! In SQLite `run_histograms` becomes a table with rowids and gets the index of its headers
//! `run_histogram_headers`; in PostgreSQL `run_ids.run_key` is no longer a foreign key and a
//! statement trigger deletes the ids of deleted runs. The migration changes no row in either
//! engine; the sessions read after it are those read before, bit for bit; a run's kept id still
//! goes with its run, and a run imported with an id of its own is still stored with it.

#![allow(clippy::unwrap_used)]

mod fixture;

use std::collections::BTreeMap;

use fixture::{every_session, facts_v16, Fixture};
use vernier_model::StoredSession;
use vernier_store::{Load, SqliteStore, Store};

const SCHEMA_17: Fixture = Fixture {
    name: "schema-17",
    version: 17,
    facts: facts_v16,
};

/// The tables that hold a session's rows, each read whole by the tests.
const TABLES: [&str; 9] = [
    "sessions",
    "session_tags",
    "configurations",
    "runs",
    "run_ids",
    "run_values",
    "run_histograms",
    "run_traces",
    "run_monitors",
];

/// The id of the session tagged `fixture=TAG`.
fn tagged(sessions: &[StoredSession], tag: &str) -> uuid::Uuid {
    let found: Vec<_> = sessions
        .iter()
        .filter(|s| s.info.tags.get("fixture").map(String::as_str) == Some(tag))
        .collect();
    assert_eq!(found.len(), 1, "fixture={tag}");
    found[0].info.id
}

/// The runs of `session`.
fn runs_of(sessions: &[StoredSession], session: uuid::Uuid) -> usize {
    sessions
        .iter()
        .filter(|s| s.info.id == session)
        .flat_map(|s| &s.configurations)
        .map(|c| c.runs.len())
        .sum()
}

#[test]
fn the_fixture_holds_runs_with_kept_ids_and_runs_with_derived_ones() {
    SCHEMA_17.check_contents(true);
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(SCHEMA_17.copy_into(dir.path())).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let kept = count("SELECT count(*) FROM run_ids");
    assert!(
        kept > 0 && kept < count("SELECT count(*) FROM runs"),
        "{kept}"
    );
}

#[test]
fn a_version_17_file_keeps_every_row_with_histograms_in_a_rowid_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = SCHEMA_17.copy_into(dir.path());
    let rows = |path: &std::path::Path| -> Vec<Vec<String>> {
        let conn = rusqlite::Connection::open(path).unwrap();
        TABLES
            .iter()
            .map(|table| {
                let mut stmt = conn.prepare(&format!("SELECT * FROM {table}")).unwrap();
                let columns = stmt.column_count();
                let mut rows: Vec<String> = stmt
                    .query_map([], |r| {
                        let row: Vec<rusqlite::types::Value> =
                            (0..columns).map(|i| r.get(i)).collect::<Result<_, _>>()?;
                        Ok(format!("{row:?}"))
                    })
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                rows.sort();
                rows
            })
            .collect()
    };
    let before = rows(&path);
    let (path, _, sessions) = SCHEMA_17.convert_sqlite(dir.path());
    assert_eq!(rows(&path), before);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (table, on_delete): (String, String) = conn
        .query_row(
            "SELECT \"table\", on_delete FROM pragma_foreign_key_list('run_ids')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((table.as_str(), on_delete.as_str()), ("runs", "CASCADE"));
    // The histograms' table has rowids, its key is unique, and its headers are read from
    // their index without the rows' buckets.
    let definition: String = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 'run_histograms'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!definition.contains("WITHOUT ROWID"), "{definition}");
    assert!(conn
        .execute(
            "INSERT INTO run_histograms SELECT * FROM run_histograms LIMIT 1",
            []
        )
        .is_err());
    let plan: Vec<String> = conn
        .prepare(
            "EXPLAIN QUERY PLAN SELECT run_key, quantity, thread, cpu, count, min_ns, max_ns, \
             max_index, sum_ns, overflows, missed FROM run_histograms \
             WHERE run_key >= 1 * 4294967296 AND run_key < 2 * 4294967296 \
             ORDER BY run_key, quantity, thread",
        )
        .unwrap()
        .query_map([], |r| r.get(3))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        plan.iter()
            .any(|step| step.contains("COVERING INDEX run_histogram_headers")),
        "{plan:?}"
    );
    drop(conn);

    // Deleting the session whose runs keep their ids deletes those ids.
    let mut store = SqliteStore::open(&path).unwrap();
    let kept = tagged(&sessions, "c");
    store.delete_session(kept).unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let ids: i64 = conn
        .query_row("SELECT count(*) FROM run_ids", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ids, 0);
}

#[test]
fn a_version_17_postgres_database_loses_the_foreign_key_and_deletes_ids_by_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let Some((db, path, before)) =
        SCHEMA_17.postgres("a_version_17_postgres_database_loses_the_key", dir.path())
    else {
        return;
    };
    let rows = || -> Vec<Vec<String>> {
        TABLES
            .iter()
            .map(|table| db.query_texts(&format!("SELECT t::text FROM {table} t ORDER BY 1")))
            .collect()
    };
    let rows_before = rows();
    let foreign_keys = || {
        db.query_i64(
            "SELECT count(*) FROM pg_constraint \
             WHERE conrelid = 'run_ids'::regclass AND contype = 'f'",
        )
    };
    assert_eq!(foreign_keys(), 1);
    let (mut store, sessions) = SCHEMA_17.convert_postgres(&db, &path, &before);
    assert_eq!(rows(), rows_before);
    assert_eq!(foreign_keys(), 0);
    // Versions 17 and 18 are additive: a vernier of version 16 reads the database.
    assert_eq!(db.query_i64("SELECT readable_by FROM schema_version"), 16);

    // A run imported with an id its place does not give keeps it without the key.
    let session = vernier_testkit::stored_session(7_000, &[1.0, 2.0]);
    store
        .import_sessions(std::slice::from_ref(&session), &BTreeMap::new())
        .unwrap();
    let kept_before = db.count("run_ids");
    assert_eq!(
        kept_before as usize,
        before.len()
            - runs_of(&sessions, tagged(&sessions, "a"))
            - runs_of(&sessions, tagged(&sessions, "b"))
            + 2
    );
    assert_eq!(
        store.load_session(session.info.id, Load::ALL).unwrap(),
        session
    );

    // Deleting a session deletes its runs' kept ids, by the trigger, and no other.
    let kept = tagged(&sessions, "c");
    store.delete_session(kept).unwrap();
    assert_eq!(db.count("run_ids"), 2);
    store.delete_session(session.info.id).unwrap();
    assert_eq!(db.count("run_ids"), 0);
    assert_eq!(
        db.count("runs") as usize,
        runs_of(&sessions, tagged(&sessions, "a")) + runs_of(&sessions, tagged(&sessions, "b"))
    );
    // The sessions left read as before.
    let left: Vec<StoredSession> = sessions.into_iter().filter(|s| s.info.id != kept).collect();
    assert_eq!(every_session(store.as_ref()), left);
}
