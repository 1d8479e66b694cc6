//! Migration 0014 (a run's key is its place: configuration_key * 2^32 + warmup * 2^31 + idx) on
//! databases written by the previous schema version, kept as fixtures made by vernier at
//! schema version 13 (`tests/fixtures/README.md` says how): `schema-13.db`, an SQLite file,
//! and `schema-13-postgres.sql`, the rows of the same sessions copied by that vernier into
//! PostgreSQL, loaded here into version 13's tables (`migrations/postgres/0006..0013`).
//!
//! What version 13 held is read from its tables by hand before the migration (every run's id,
//! values, monitor blobs, histograms and traces), and must be what the store reads after it,
//! bit for bit, under the new keys; the PostgreSQL database must read the same sessions as the
//! SQLite file, and deleting a session must still delete everything below it.

#![allow(clippy::unwrap_used)]

mod fixture;

use fixture::{assert_totals_kept, check_monitor_blobs, every_session, facts_v13, Fixture};
use vernier_store::{SqliteStore, Store};

const SCHEMA_13: Fixture = Fixture {
    name: "schema-13",
    version: 13,
    facts: facts_v13,
};

/// Every run's (key, configuration_key, warmup, idx) as stored.
type Placed = Vec<(i64, i64, i64, i64)>;

fn assert_placed(placed: &Placed) {
    assert!(!placed.is_empty());
    for (key, configuration, warmup, index) in placed {
        assert_eq!(
            *key,
            configuration * (1 << 32) + warmup * (1 << 31) + index,
            "{placed:?}"
        );
    }
}

#[test]
fn the_fixture_holds_what_the_migration_must_carry() {
    SCHEMA_13.check_contents(true);
}

#[test]
fn a_version_13_file_is_converted_in_place_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let (path, before, sessions) = SCHEMA_13.convert_sqlite(dir.path());
    assert_totals_kept(&SqliteStore::open_read_only(&path).unwrap(), &sessions);

    let conn = rusqlite::Connection::open(&path).unwrap();
    let placed: Placed = conn
        .prepare("SELECT key, configuration_key, warmup, idx FROM runs")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_placed(&placed);
    assert_eq!(placed.len(), before.len());
    // The monitor blobs are carried as they were, under the run's new key.
    check_monitor_blobs(&conn, &before);
    // No index of runs besides its key (since version 16 not even one of the ids).
    let indexes: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'runs'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 0);
    drop(conn);

    // Deleting a session deletes its runs and everything below them, as the foreign keys of
    // version 13 did; the other session keeps all of its own.
    let mut store = SqliteStore::open(&path).unwrap();
    let first = &sessions[0];
    store.delete_session(first.info.id).unwrap();
    let kept = every_session(&store);
    assert_eq!(kept, sessions[1..]);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let kept_runs: usize = kept
        .iter()
        .flat_map(|s| &s.configurations)
        .map(|c| c.runs.len())
        .sum();
    assert_eq!(count("SELECT count(*) FROM runs") as usize, kept_runs);
    for table in ["run_values", "run_histograms", "run_traces", "run_monitors"] {
        assert_eq!(
            count(&format!(
                "SELECT count(*) FROM {table} WHERE run_key NOT IN (SELECT key FROM runs)"
            )),
            0,
            "{table}"
        );
    }
}

#[test]
fn a_version_13_postgres_database_is_converted_in_place_as_sqlite_is() {
    let dir = tempfile::tempdir().unwrap();
    let Some((db, path, before)) =
        SCHEMA_13.postgres("a_version_13_postgres_database_is_converted", dir.path())
    else {
        return;
    };
    let (mut store, sessions) = SCHEMA_13.convert_postgres(&db, &path, &before);
    // Every key changed (version 16 dropped the runs' ids besides): only a vernier of version
    // 16 or later reads the database.
    assert_eq!(db.query_i64("SELECT readable_by FROM schema_version"), 16);
    assert_totals_kept(store.as_ref(), &sessions);
    let placed: Placed = db
        .query_texts("SELECT concat_ws(' ', key, configuration_key, warmup::int, idx) FROM runs")
        .iter()
        .map(|row| {
            let n: Vec<i64> = row.split(' ').map(|x| x.parse().unwrap()).collect();
            (n[0], n[1], n[2], n[3])
        })
        .collect();
    assert_placed(&placed);

    store.delete_session(sessions[0].info.id).unwrap();
    assert_eq!(every_session(store.as_ref()), sessions[1..]);
    drop(store);
    for table in ["run_values", "run_histograms", "run_traces", "run_monitors"] {
        assert_eq!(
            db.query_i64(&format!(
                "SELECT count(*) FROM {table} WHERE run_key NOT IN (SELECT key FROM runs)"
            )),
            0,
            "{table}"
        );
    }
}
