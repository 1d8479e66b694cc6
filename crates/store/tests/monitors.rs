//! Monitor data in the store: read only when asked and stored once in the compact encoding of
//! schema version 5, on both engines (`vernier_testkit::databases`); converted from the JSON of
//! older SQLite databases (PostgreSQL databases began at version 6).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use uuid::Uuid;
use vernier_model::monitor::{
    MonitorFailure, MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind,
};
use vernier_model::{ConfigurationRecord, Options, RunRecord, Rusage, SessionInfo};
use vernier_store::{Access, Load, Location, SqliteStore, Store, SCHEMA_VERSION};
use vernier_testkit::{begun_configuration, databases, session_info, tags, temp_db, TestDatabase};

/// The store of a new database of `db`'s engine.
fn open(db: &TestDatabase) -> Box<dyn Store> {
    vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create)
        .unwrap_or_else(|e| panic!("{}: {e}", db.engine()))
}

fn session() -> SessionInfo {
    SessionInfo {
        tags: tags(&[("k", "v")]),
        note: Some("n".into()),
        monitors: vec!["stat".into()],
        ..session_info()
    }
}

fn configuration() -> ConfigurationRecord {
    begun_configuration("mock", Options::default(), ("time", "s"))
}

/// Monitor data with what the encoding must keep: integral and fractional values, -0.0, times
/// that go backwards, names with dots, an empty series, failures and unsupported monitors.
fn monitor_data(seed: f64) -> RunMonitorData {
    let series = vec![
        MonitorSeries {
            monitor: "stat".into(),
            metric: "ctxt".into(),
            unit: "count".into(),
            kind: SeriesKind::Counter,
            points: vec![
                MonitorPoint {
                    t_ns: 575_515,
                    value: 0.0,
                },
                MonitorPoint {
                    t_ns: 16_750_840,
                    value: 1234.0 + seed,
                },
            ],
        },
        MonitorSeries {
            monitor: "interrupts".into(),
            metric: "irq.LOC".into(),
            unit: "count".into(),
            kind: SeriesKind::Counter,
            points: Vec::new(),
        },
        MonitorSeries {
            monitor: "pressure".into(),
            metric: "cpu.some_avg10".into(),
            unit: "pct".into(),
            kind: SeriesKind::Gauge,
            points: vec![
                MonitorPoint {
                    t_ns: 10,
                    value: 0.375 * seed,
                },
                MonitorPoint {
                    t_ns: 5,
                    value: -0.0,
                },
            ],
        },
    ];
    RunMonitorData {
        summary: BTreeMap::from([
            ("stat.ctxt".into(), 1234.0 + seed),
            ("pressure.cpu.some_avg10".into(), 0.125 / seed),
        ]),
        series,
        unsupported: BTreeMap::from([("schedstat".into(), "no /proc/schedstat".into())]),
        failures: vec![MonitorFailure {
            monitor: "meminfo".into(),
            t_ns: 7,
            message: "read failed".into(),
        }],
        sampler_priority: "fifo:1".into(),
        sampler_cpu_ns: 31_337,
        rounds: 2,
    }
}

fn run(index: u32, monitors: Option<RunMonitorData>) -> RunRecord {
    RunRecord {
        id: Uuid::new_v4(),
        index,
        warmup: monitors.is_none(),
        round: 0,
        preceding_executions: index,
        started_at_ns: 10 + i64::from(index),
        ended_at_ns: 20 + i64::from(index),
        values: BTreeMap::from([("time".into(), 0.5 + f64::from(index))]).into(),
        rusage: Rusage {
            user_cpu_ns: 1,
            system_cpu_ns: 2,
            voluntary_cs: 3,
            involuntary_cs: 4,
            max_rss_bytes: 5,
        },
        foreign_cpu_ns: 6,
        controller_cpu_ns: 7,
        load_cpu_ns: None,
        histograms: Vec::new(),
        monitors: monitors.map(Box::new),
        setup_steps: Vec::new(),
        setup_changed: Vec::new(),
    }
}

fn count(path: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn monitor_data_round_trips_and_is_read_only_when_asked() {
    for db in databases("monitor_data_round_trips_and_is_read_only_when_asked") {
        let mut store = open(&db);
        let info = session();
        let config = configuration();
        store.begin_session(&info).unwrap();
        store.add_configuration(info.id, &config).unwrap();
        let runs = vec![
            run(0, None),
            run(1, Some(monitor_data(1.0))),
            run(2, Some(monitor_data(3.0))),
        ];
        for r in &runs {
            store.add_run(config.id, r).unwrap();
        }

        let all = store.load_session(info.id, Load::ALL).unwrap();
        assert_eq!(all.configurations[0].runs, runs, "{}", db.engine());
        // Bit for bit, -0.0 included.
        let point = &all.configurations[0].runs[1]
            .monitors
            .as_ref()
            .unwrap()
            .series[2]
            .points[1];
        assert_eq!(point.value.to_bits(), (-0.0f64).to_bits());

        let measured = store.load_session(info.id, Load::MEASUREMENTS).unwrap();
        let mut expected = all.clone();
        for r in &mut expected.configurations[0].runs {
            r.monitors = None;
        }
        assert_eq!(measured, expected);

        // The information and the configurations alone: everything but the runs.
        let info_only = store.load_session(info.id, Load::INFO).unwrap();
        for c in &mut expected.configurations {
            c.runs.clear();
        }
        assert_eq!(info_only, expected);

        // Each name once, whatever the number of runs.
        assert_eq!(db.count("run_monitors"), 2);
        assert_eq!(
            db.query_i64("SELECT count(DISTINCT name) FROM monitor_names"),
            db.count("monitor_names")
        );
        assert_eq!(db.count("monitor_names"), 10);
    }
}

/// Each store keeps the names of its committed writes for its next one; names another writer
/// stored meanwhile are found, not stored twice, and every run reads back as written.
#[test]
fn two_writers_share_the_names_each_keeps() {
    let renamed = |seed: f64, prefix: &str| {
        let mut data = monitor_data(seed);
        for s in &mut data.series {
            s.metric = format!("{prefix}{}", s.metric);
        }
        data.summary = std::mem::take(&mut data.summary)
            .into_iter()
            .map(|(key, value)| (format!("{prefix}{key}"), value))
            .collect();
        data
    };
    for db in databases("two_writers_share_the_names_each_keeps") {
        let mut a = open(&db);
        let info = session();
        let config = configuration();
        a.begin_session(&info).unwrap();
        a.add_configuration(info.id, &config).unwrap();
        let mut b = vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Write)
            .unwrap_or_else(|e| panic!("{}: {e}", db.engine()));
        let runs = vec![
            run(0, Some(monitor_data(1.0))),
            run(1, Some(renamed(2.0, "b."))),
            run(2, Some(renamed(3.0, "b."))),
            run(3, Some(renamed(4.0, "c."))),
            run(4, Some(monitor_data(5.0))),
        ];
        a.add_run(config.id, &runs[0]).unwrap();
        b.add_run(config.id, &runs[1]).unwrap();
        // Names that b stored, which a has not seen.
        a.add_run(config.id, &runs[2]).unwrap();
        a.add_run(config.id, &runs[3]).unwrap();
        b.add_run(config.id, &runs[4]).unwrap();
        drop((a, b));
        let all = open(&db).load_session(info.id, Load::ALL).unwrap();
        assert_eq!(all.configurations[0].runs, runs, "{}", db.engine());
        assert_eq!(
            db.query_i64("SELECT count(DISTINCT name) FROM monitor_names"),
            db.count("monitor_names")
        );
    }
}

#[test]
fn session_headers_are_the_sessions_without_their_heavy_fields() {
    for db in databases("session_headers_are_the_sessions_without_their_heavy_fields") {
        let mut store = open(&db);
        let a = session();
        let mut b = session();
        b.started_at_ns = 0;
        b.tags.clear();
        b.suite = Some("quick".into());
        store.begin_session(&a).unwrap();
        store.begin_session(&b).unwrap();
        let full = store.sessions().unwrap();
        let headers = store.session_headers().unwrap();
        assert_eq!(headers.len(), 2);
        for (info, header) in full.iter().zip(&headers) {
            assert_eq!(header.id, info.id);
            assert_eq!(header.started_at_ns, info.started_at_ns);
            assert_eq!(header.ended_at_ns, info.ended_at_ns);
            assert_eq!(header.status, info.status);
            assert_eq!(header.suite, info.suite);
            assert_eq!(header.specs, info.specs);
            assert_eq!(header.tags, info.tags);
            assert_eq!(header.note, info.note);
            assert_eq!(header.fingerprint, info.fingerprint);
        }
        assert_eq!(headers[0].id, b.id, "oldest first");
    }
}

/// A database of schema version 4 with one session whose measured run has monitor data, as
/// vernier wrote it then (JSON in run_monitors, the summary again in run_monitor_summary).
fn version_4_database(path: &Path, data: &RunMonitorData) -> (Uuid, RunRecord) {
    let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
    let conn = rusqlite::Connection::open(path).unwrap();
    for file in [
        "0001_initial.sql",
        "0002_monitors_setup_findings.sql",
        "0003_session_owner.sql",
        "0004_calibrations.sql",
    ] {
        conn.execute_batch(&std::fs::read_to_string(migrations.join(file)).unwrap())
            .unwrap();
    }
    conn.pragma_update(None, "user_version", 4).unwrap();
    conn.pragma_update(None, "application_id", 0x7672_6e72)
        .unwrap();
    let session = Uuid::new_v4();
    let config = Uuid::new_v4();
    let run = run(0, Some(data.clone()));
    conn.execute_batch(&format!(
        "INSERT INTO sessions (id, started_at_ns, status, specs, settings, vernier_version, \
         fingerprint, environment) VALUES ('{session}', 1, 'completed', '[]', '{{}}', '0.1.0', \
         'f', '{{}}');
         INSERT INTO configurations (id, session_id, position, benchmark, benchmark_version, \
         options, metric, unit, higher_is_better) VALUES ('{config}', '{session}', 0, 'mock', \
         '1', '{{}}', 'time', 's', 0);
         INSERT INTO runs (id, configuration_id, idx, warmup, round, preceding_executions, \
         started_at_ns, ended_at_ns, user_cpu_ns, system_cpu_ns, voluntary_cs, involuntary_cs, \
         max_rss_bytes, foreign_cpu_ns, controller_cpu_ns) VALUES ('{}', '{config}', 0, 0, 0, \
         0, 10, 20, 1, 2, 3, 4, 5, 6, 7);
         INSERT INTO run_values (run_id, metric, value) VALUES ('{}', 'time', 0.5);",
        run.id, run.id
    ))
    .unwrap();
    conn.execute(
        "INSERT INTO run_monitors (run_id, data) VALUES (?1, ?2)",
        [run.id.to_string(), serde_json::to_string(data).unwrap()],
    )
    .unwrap();
    for (key, value) in &data.summary {
        conn.execute(
            "INSERT INTO run_monitor_summary (run_id, key, value) VALUES (?1, ?2, ?3)",
            rusqlite::params![run.id.to_string(), key, value],
        )
        .unwrap();
    }
    (session, run)
}

fn tables(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .unwrap();
    let names = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    names
}

#[test]
fn a_version_4_database_is_read_in_memory_and_converted_on_writing() {
    let (_dir, path) = temp_db();
    // JSON cannot carry -0.0 faithfully everywhere; keep to what version 4 stored.
    let mut data = monitor_data(2.0);
    data.series[2].points[1].value = 0.0;
    let (session, run) = version_4_database(&path, &data);
    let before = std::fs::read(&path).unwrap();

    let reader = SqliteStore::open_read_only(&path).unwrap();
    let loaded = reader.load_session(session, Load::ALL).unwrap();
    assert_eq!(loaded.configurations[0].runs, vec![run.clone()]);
    drop(reader);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "reading changes nothing"
    );
    assert!(tables(&path).contains(&"run_monitor_summary".to_string()));

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        store
            .load_session(session, Load::ALL)
            .unwrap()
            .configurations[0]
            .runs,
        vec![run]
    );
    drop(store);
    let tables = tables(&path);
    assert!(
        !tables.contains(&"run_monitor_summary".to_string()),
        "{tables:?}"
    );
    assert!(
        !tables.contains(&"run_monitors_v5".to_string()),
        "{tables:?}"
    );
    assert_eq!(count(&path, "SELECT count(*) FROM run_monitors"), 1);
    assert_eq!(count(&path, "PRAGMA user_version"), SCHEMA_VERSION);
    // Deleting the run deletes its monitor data (the foreign key survived the rename).
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "foreign_keys", true).unwrap();
    conn.execute("DELETE FROM sessions", []).unwrap();
    assert_eq!(count(&path, "SELECT count(*) FROM run_monitors"), 0);
}

#[test]
fn unreadable_monitor_json_fails_the_migration_naming_the_run() {
    let (_dir, path) = temp_db();
    let (_, run) = version_4_database(&path, &monitor_data(1.0));
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE run_monitors SET data = '{\"series\": 5}'", [])
        .unwrap();
    drop(conn);
    let error = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(error.contains("migration 0005"), "{error}");
    assert!(error.contains(&run.id.to_string()), "{error}");
    assert!(!error.contains('\n'), "{error}");
    assert_eq!(count(&path, "PRAGMA user_version"), 4, "nothing changed");
}
