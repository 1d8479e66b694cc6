//! Migration 0009 (integer keys) on databases written by the previous schema version, kept as
//! fixtures made by vernier at schema version 8 (`tests/fixtures/README.md` says how):
//! `schema-8.db`, an SQLite file, and `schema-8-postgres.sql`, the rows of the same sessions
//! copied by that vernier into PostgreSQL (`pg_dump --data-only --column-inserts`), loaded here
//! into version 8's tables (`migrations/postgres/0006..0008`).
//!
//! What version 8 held is read from its tables by hand before the migration (every run's id,
//! values, monitor blobs and histograms), and must be what the store reads after it, bit for
//! bit; the PostgreSQL database must read the same sessions as the SQLite file.

#![allow(clippy::unwrap_used)]

mod fixture;

use std::collections::BTreeMap;

use fixture::{check_monitor_blobs, Fixture, RunFacts};
use uuid::Uuid;

const SCHEMA_8: Fixture = Fixture {
    name: "schema-8",
    version: 8,
    facts: facts_v8,
};

/// Every run of a version-8 file, by id, read with version 8's columns.
fn facts_v8(conn: &rusqlite::Connection) -> BTreeMap<Uuid, RunFacts> {
    let mut runs = BTreeMap::new();
    let mut stmt = conn
        .prepare("SELECT id, configuration_id, idx, warmup, started_at_ns FROM runs")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                RunFacts {
                    configuration: r.get(1)?,
                    index: r.get(2)?,
                    warmup: r.get(3)?,
                    started_at_ns: r.get(4)?,
                    ..RunFacts::default()
                },
            ))
        })
        .unwrap();
    for row in rows {
        let (id, facts) = row.unwrap();
        runs.insert(Uuid::parse_str(&id).unwrap(), facts);
    }
    fn run<'a>(runs: &'a mut BTreeMap<Uuid, RunFacts>, id: &str) -> &'a mut RunFacts {
        runs.get_mut(&Uuid::parse_str(id).unwrap()).unwrap()
    }
    let mut stmt = conn
        .prepare("SELECT run_id, metric, value FROM run_values")
        .unwrap();
    let values: Vec<(String, String, f64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (id, metric, value) in values {
        run(&mut runs, &id).values.insert(metric, value.to_bits());
    }
    let mut stmt = conn
        .prepare("SELECT run_id, series, summary FROM run_monitors")
        .unwrap();
    let monitors: Vec<(String, Vec<u8>, Vec<u8>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (id, series, summary) in monitors {
        run(&mut runs, &id).monitors = Some((series, summary));
    }
    let mut stmt = conn
        .prepare("SELECT run_id, quantity, thread, count FROM run_histograms")
        .unwrap();
    let histograms: Vec<(String, String, i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (id, quantity, thread, count) in histograms {
        run(&mut runs, &id)
            .histograms
            .insert((quantity, thread), count);
    }
    runs
}

#[test]
fn the_fixture_holds_what_the_migration_must_carry() {
    SCHEMA_8.check_contents(false);
}

#[test]
fn a_version_8_file_is_converted_in_place_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let (path, before, _) = SCHEMA_8.convert_sqlite(dir.path());

    let conn = rusqlite::Connection::open(&path).unwrap();
    // Every configuration knows how far it was recorded (version 12): its runs and the end of
    // the latest, as the runs say.
    let marks: Vec<(i64, i64, Option<i64>, Option<i64>)> = conn
        .prepare(
            "SELECT c.run_count, (SELECT count(*) FROM runs r WHERE r.configuration_key = c.key), \
             c.last_run_ended_ns, \
             (SELECT max(ended_at_ns) FROM runs r WHERE r.configuration_key = c.key) \
             FROM configurations c",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(marks.iter().any(|m| m.0 > 0), "{marks:?}");
    for (count, runs, last, ended) in &marks {
        assert_eq!((count, last), (runs, ended));
    }
    // The monitor blobs are carried as they were, under the run's key.
    check_monitor_blobs(&conn, &before);
    // Each primary value is in its run's row, and nowhere else.
    let primary_rows: i64 = conn
        .query_row(
            "SELECT count(*) FROM run_values v JOIN runs r ON r.key = v.run_key \
             JOIN configurations c ON c.key = r.configuration_key WHERE v.metric = c.metric",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(primary_rows, 0);
    let values: i64 = conn
        .query_row("SELECT count(*) FROM run_metric_values", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        values as usize,
        before.values().map(|r| r.values.len()).sum::<usize>()
    );
}

#[test]
fn a_version_8_postgres_database_is_converted_in_place_as_sqlite_is() {
    let dir = tempfile::tempdir().unwrap();
    let Some((db, path, before)) =
        SCHEMA_8.postgres("a_version_8_postgres_database_is_converted", dir.path())
    else {
        return;
    };
    let (store, _) = SCHEMA_8.convert_postgres(&db, &path, &before);
    drop(store);
    // Every run's key is its place (version 14).
    assert_eq!(
        db.query_i64(
            "SELECT count(*) FROM runs WHERE key <> configuration_key * 4294967296 \
             + (CASE WHEN warmup THEN 2147483648 ELSE 0 END) + idx"
        ),
        0
    );
}
