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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use uuid::Uuid;
use vernier_model::StoredSession;
use vernier_store::{Access, Load, Location, SqliteStore, Store, SCHEMA_VERSION};
use vernier_testkit::postgres_database;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// What schema version 8 holds of one run, read from its tables.
#[derive(Debug, Default, PartialEq)]
struct RunFacts {
    configuration: String,
    index: i64,
    warmup: bool,
    started_at_ns: i64,
    /// Metric -> the bits of its value.
    values: BTreeMap<String, u64>,
    /// The monitor record's series and summary blobs.
    monitors: Option<(Vec<u8>, Vec<u8>)>,
    /// (quantity, thread) -> count, per histogram.
    histograms: BTreeMap<(String, i64), i64>,
}

/// Every run of a version-8 file, by id, read with version 8's columns.
fn facts_v8(path: &Path) -> BTreeMap<Uuid, RunFacts> {
    // Read-only: a missing fixture is an error, never a new empty file in the source tree.
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 8, "the fixture is a database of schema version 8");
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

/// Every session of `store`, whole.
fn every_session(store: &dyn Store) -> Vec<StoredSession> {
    store
        .sessions()
        .unwrap()
        .iter()
        .map(|s| store.load_session(s.id, Load::ALL).unwrap())
        .collect()
}

/// Checks that the sessions read after the migration hold exactly what version 8 held.
fn check_against(sessions: &[StoredSession], before: &BTreeMap<Uuid, RunFacts>) {
    let mut seen = 0;
    for session in sessions {
        for c in &session.configurations {
            for run in &c.runs {
                let facts = &before[&run.id];
                assert_eq!(facts.configuration, c.record.id.to_string());
                assert_eq!(facts.index, i64::from(run.index));
                assert_eq!(facts.warmup, run.warmup);
                assert_eq!(facts.started_at_ns, run.started_at_ns);
                let bits: BTreeMap<String, u64> = run
                    .values
                    .iter()
                    .map(|(m, v)| (m.to_string(), v.to_bits()))
                    .collect();
                assert_eq!(bits, facts.values, "run {}", run.id);
                assert!(bits.contains_key(&c.record.metric.name));
                assert_eq!(run.monitors.is_some(), facts.monitors.is_some());
                let histograms: BTreeMap<(String, i64), i64> = run
                    .histograms
                    .iter()
                    .map(|h| ((h.quantity.clone(), i64::from(h.thread)), h.count as i64))
                    .collect();
                assert_eq!(histograms, facts.histograms, "run {}", run.id);
                seen += 1;
            }
        }
    }
    assert_eq!(seen, before.len(), "every run of version 8 is read");
}

#[test]
fn the_fixture_holds_what_the_migration_must_carry() {
    // Read in a copy: SQLite makes -wal and -shm files beside a WAL database it opens, even
    // read-only, and the source tree stays as it is.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(fixture("schema-8.db"), &path).unwrap();
    let before = facts_v8(&path);
    assert!(before.len() >= 10, "{} runs", before.len());
    assert!(before.values().any(|r| r.warmup));
    assert!(before.values().any(|r| r.monitors.is_some()));
    assert!(before.values().any(|r| !r.histograms.is_empty()));
    assert!(
        before.values().any(|r| r.values.len() > 1),
        "secondary metrics"
    );
}

#[test]
fn a_version_8_file_is_converted_in_place_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(fixture("schema-8.db"), &path).unwrap();
    let before = facts_v8(&path);

    // Read-only, an older file is migrated in a copy in memory and left as it is.
    let read_only = SqliteStore::open_read_only(&path).unwrap();
    let in_memory = every_session(&read_only);
    drop(read_only);
    assert_eq!(facts_v8(&path), before);

    let store = SqliteStore::open(&path).unwrap();
    let sessions = every_session(&store);
    drop(store);
    check_against(&sessions, &before);
    assert_eq!(sessions, in_memory);

    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
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
    for (id, facts) in &before {
        let stored: Option<(Vec<u8>, Vec<u8>)> = conn
            .query_row(
                "SELECT m.series, m.summary FROM run_monitors m \
                 JOIN runs r ON r.key = m.run_key WHERE r.id = ?1",
                [id.as_bytes().as_slice()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .ok();
        assert_eq!(stored, facts.monitors, "run {id}");
    }
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
    let problems: Vec<String> = conn
        .prepare("PRAGMA foreign_key_check")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    drop(conn);

    // The converted file takes new runs after the old ones, and opens again unchanged.
    let again = SqliteStore::open(&path).unwrap();
    assert_eq!(every_session(&again), sessions);
}

#[test]
fn a_version_8_postgres_database_is_converted_in_place_as_sqlite_is() {
    let Some(db) = postgres_database("a_version_8_postgres_database_is_converted") else {
        return;
    };
    let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres");
    db.execute("CREATE TABLE schema_version (version BIGINT NOT NULL)");
    db.execute("INSERT INTO schema_version (version) VALUES (8)");
    for file in [
        "0006_baseline.sql",
        "0007_session_machine.sql",
        "0008_setup_changed.sql",
    ] {
        db.execute(&std::fs::read_to_string(migrations.join(file)).unwrap());
    }
    db.execute(&std::fs::read_to_string(fixture("schema-8-postgres.sql")).unwrap());
    let runs_v8 = db.count("runs");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(fixture("schema-8.db"), &path).unwrap();
    let before = facts_v8(&path);
    assert_eq!(runs_v8 as usize, before.len());

    let location = Location::parse(db.arg()).unwrap();
    vernier_store::migrate(&location).unwrap();
    let store = vernier_store::open(&location, Access::Write).unwrap();
    let sessions = every_session(store.as_ref());
    check_against(&sessions, &before);
    drop(store);
    assert_eq!(
        db.query_i64("SELECT version FROM schema_version"),
        SCHEMA_VERSION
    );
    let sqlite = SqliteStore::open(&path).unwrap();
    assert_eq!(sessions, every_session(&sqlite));
    // Every run's key is its place (version 14).
    assert_eq!(
        db.query_i64(
            "SELECT count(*) FROM runs WHERE key <> configuration_key * 4294967296 \
             + (CASE WHEN warmup THEN 2147483648 ELSE 0 END) + idx"
        ),
        0
    );
}
