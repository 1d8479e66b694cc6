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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use uuid::Uuid;
use vernier_model::StoredSession;
use vernier_store::{Access, Load, Location, SqliteStore, Store, SCHEMA_VERSION};
use vernier_testkit::postgres_database;

/// Migration 0015 kept the merged histograms of every session stored before it: for each
/// configuration, quantity and thread, those of its measured runs.
fn assert_totals_kept(store: &dyn Store, sessions: &[StoredSession]) {
    type Merged = BTreeMap<(Uuid, String, u32), (u64, u64, BTreeMap<u64, u64>)>;
    let mut threads = 0;
    for session in sessions {
        let mut expected = Merged::new();
        for c in &session.configurations {
            for h in c
                .runs
                .iter()
                .filter(|r| !r.warmup)
                .flat_map(|r| &r.histograms)
            {
                let total = expected
                    .entry((c.record.id, h.quantity.clone(), h.thread))
                    .or_default();
                total.0 += 1;
                total.1 += h.count;
                for &(value, n) in &h.buckets {
                    *total.2.entry(value).or_default() += n;
                }
            }
        }
        let kept: Merged = store
            .histogram_totals(session.info.id)
            .unwrap()
            .into_iter()
            .map(|t| {
                let buckets = t.buckets.into_iter().collect();
                (
                    (t.configuration, t.quantity, t.thread),
                    (t.runs, t.count, buckets),
                )
            })
            .collect();
        threads += kept.len();
        assert_eq!(kept, expected, "session {}", session.info.id);
    }
    assert!(threads > 0, "no histograms kept");
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// What schema version 13 holds of one run, read from its tables.
#[derive(Clone, Debug, Default, PartialEq)]
struct RunFacts {
    configuration: String,
    index: i64,
    warmup: bool,
    started_at_ns: i64,
    /// Metric -> the bits of its value, the primary one included.
    values: BTreeMap<String, u64>,
    /// The monitor record's series and summary blobs.
    monitors: Option<(Vec<u8>, Vec<u8>)>,
    /// (quantity, thread) -> count, per histogram.
    histograms: BTreeMap<(String, i64), i64>,
    /// (quantity, thread) -> the traced latency, per trace.
    traces: BTreeMap<(String, i64), i64>,
}

/// Every run of a version-13 file, by id, read with version 13's tables.
fn facts_v13(path: &Path) -> BTreeMap<Uuid, RunFacts> {
    // Read-only: a missing fixture is an error, never a new empty file in the source tree.
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        version, 13,
        "the fixture is a database of schema version 13"
    );
    let rows = |sql: &str| -> Vec<(Vec<u8>, String, rusqlite::types::Value, i64)> {
        conn.prepare(sql)
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let id = |bytes: &[u8]| Uuid::from_slice(bytes).unwrap();
    let mut runs: BTreeMap<Uuid, RunFacts> = BTreeMap::new();
    let mut stmt = conn
        .prepare(
            "SELECT r.id, c.id, r.idx, r.warmup, r.started_at_ns, c.metric, r.value \
             FROM runs r JOIN configurations c ON c.key = r.configuration_key",
        )
        .unwrap();
    let all = stmt
        .query_map([], |r| {
            let value: Option<f64> = r.get(6)?;
            let mut facts = RunFacts {
                configuration: r.get(1)?,
                index: r.get(2)?,
                warmup: r.get(3)?,
                started_at_ns: r.get(4)?,
                ..RunFacts::default()
            };
            if let Some(value) = value {
                facts.values.insert(r.get(5)?, value.to_bits());
            }
            Ok((r.get::<_, Vec<u8>>(0)?, facts))
        })
        .unwrap()
        .map(Result::unwrap);
    for (bytes, facts) in all {
        runs.insert(id(&bytes), facts);
    }
    for (run, metric, value, _) in
        rows("SELECT r.id, v.metric, v.value, 0 FROM run_values v JOIN runs r ON r.key = v.run_key")
    {
        let rusqlite::types::Value::Real(value) = value else {
            panic!("{value:?}")
        };
        runs.get_mut(&id(&run))
            .unwrap()
            .values
            .insert(metric, value.to_bits());
    }
    for (run, quantity, count, thread) in rows(
        "SELECT r.id, h.quantity, h.count, h.thread FROM run_histograms h \
         JOIN runs r ON r.key = h.run_key",
    ) {
        let rusqlite::types::Value::Integer(count) = count else {
            panic!("{count:?}")
        };
        runs.get_mut(&id(&run))
            .unwrap()
            .histograms
            .insert((quantity, thread), count);
    }
    for (run, quantity, latency, thread) in rows(
        "SELECT r.id, t.quantity, t.latency_ns, t.thread FROM run_traces t \
         JOIN runs r ON r.key = t.run_key",
    ) {
        let rusqlite::types::Value::Integer(latency) = latency else {
            panic!("{latency:?}")
        };
        runs.get_mut(&id(&run))
            .unwrap()
            .traces
            .insert((quantity, thread), latency);
    }
    let mut stmt = conn
        .prepare(
            "SELECT r.id, m.series, m.summary FROM run_monitors m \
             JOIN runs r ON r.key = m.run_key",
        )
        .unwrap();
    let monitors: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (run, series, summary) in monitors {
        runs.get_mut(&id(&run)).unwrap().monitors = Some((series, summary));
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

/// Checks that the sessions read after the migration hold exactly what version 13 held.
fn check_against(sessions: &[StoredSession], before: &BTreeMap<Uuid, RunFacts>) {
    let mut seen = 0;
    for session in sessions {
        for c in &session.configurations {
            for run in &c.runs {
                let facts = &before[&run.id];
                let bits: BTreeMap<String, u64> = run
                    .values
                    .iter()
                    .map(|(m, v)| (m.to_string(), v.to_bits()))
                    .collect();
                let histograms: BTreeMap<(String, i64), i64> = run
                    .histograms
                    .iter()
                    .map(|h| ((h.quantity.clone(), i64::from(h.thread)), h.count as i64))
                    .collect();
                let traces: BTreeMap<(String, i64), i64> = run
                    .histograms
                    .iter()
                    .filter_map(|h| {
                        let trace = h.trace.as_ref()?;
                        Some((
                            (h.quantity.clone(), i64::from(h.thread)),
                            i64::try_from(trace.latency_ns).unwrap(),
                        ))
                    })
                    .collect();
                let monitors = run.monitors.as_ref().map(|_| ());
                let read = RunFacts {
                    configuration: c.record.id.to_string(),
                    index: i64::from(run.index),
                    warmup: run.warmup,
                    started_at_ns: run.started_at_ns,
                    values: bits,
                    monitors: None,
                    histograms,
                    traces,
                };
                let expected = RunFacts {
                    monitors: None,
                    ..facts.clone()
                };
                assert_eq!(read, expected, "run {}", run.id);
                assert_eq!(
                    monitors.is_some(),
                    facts.monitors.is_some(),
                    "run {}",
                    run.id
                );
                seen += 1;
            }
        }
    }
    assert_eq!(seen, before.len(), "every run of version 13 is read");
}

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
    // Read in a copy: SQLite makes -wal and -shm files beside a WAL database it opens, even
    // read-only, and the source tree stays as it is.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(fixture("schema-13.db"), &path).unwrap();
    let before = facts_v13(&path);
    assert!(before.len() >= 10, "{} runs", before.len());
    assert!(before.values().any(|r| r.warmup));
    assert!(before.values().any(|r| r.monitors.is_some()));
    assert!(before.values().any(|r| !r.histograms.is_empty()));
    assert!(before.values().any(|r| !r.traces.is_empty()));
    assert!(
        before.values().any(|r| r.values.len() > 1),
        "secondary metrics"
    );
}

#[test]
fn a_version_13_file_is_converted_in_place_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(fixture("schema-13.db"), &path).unwrap();
    let before = facts_v13(&path);

    // Read-only, an older file is migrated in a copy in memory and left as it is.
    let read_only = SqliteStore::open_read_only(&path).unwrap();
    let in_memory = every_session(&read_only);
    drop(read_only);
    assert_eq!(facts_v13(&path), before);

    let store = SqliteStore::open(&path).unwrap();
    let sessions = every_session(&store);
    drop(store);
    check_against(&sessions, &before);
    assert_eq!(sessions, in_memory);
    assert_totals_kept(&SqliteStore::open_read_only(&path).unwrap(), &sessions);

    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
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
    // The only index of runs besides its key is that of the ids.
    let indexes: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'runs'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 1);
    let problems: i64 = conn
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(problems, 0);
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
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
    let Some(db) = postgres_database("a_version_13_postgres_database_is_converted") else {
        return;
    };
    let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres");
    db.execute("CREATE TABLE schema_version (version BIGINT NOT NULL)");
    db.execute("INSERT INTO schema_version (version) VALUES (13)");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&migrations)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.get(..4).is_some_and(|n| n <= "0013")
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 8, "{files:?}");
    for file in files {
        db.execute(&std::fs::read_to_string(file).unwrap());
    }
    db.execute(&std::fs::read_to_string(fixture("schema-13-postgres.sql")).unwrap());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(fixture("schema-13.db"), &path).unwrap();
    let before = facts_v13(&path);
    assert_eq!(db.count("runs") as usize, before.len());

    let location = Location::parse(db.arg()).unwrap();
    vernier_store::migrate(&location).unwrap();
    assert_eq!(
        db.query_i64("SELECT version FROM schema_version"),
        SCHEMA_VERSION
    );
    // Every key changed: a vernier of version 13 cannot read the database (version 15 only
    // added a table, which version 14 reads without).
    assert_eq!(db.query_i64("SELECT readable_by FROM schema_version"), 14);
    let placed: Placed = db
        .query_texts("SELECT concat_ws(' ', key, configuration_key, warmup::int, idx) FROM runs")
        .iter()
        .map(|row| {
            let n: Vec<i64> = row.split(' ').map(|x| x.parse().unwrap()).collect();
            (n[0], n[1], n[2], n[3])
        })
        .collect();
    assert_placed(&placed);

    let mut store = vernier_store::open(&location, Access::Write).unwrap();
    let sessions = every_session(store.as_ref());
    check_against(&sessions, &before);
    let sqlite = SqliteStore::open(&path).unwrap();
    assert_eq!(sessions, every_session(&sqlite));
    assert_totals_kept(store.as_ref(), &sessions);

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
