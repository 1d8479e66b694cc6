//! The store against real databases: round trips, selectors, tags and deletion on both engines
//! (SQLite and, with a server, PostgreSQL: `vernier_testkit::databases`); migrations, files,
//! concurrent writers (threads and processes) and durability of each recorded run on SQLite.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Barrier};

use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, Environment, MetricInfo, OptionValue, Options, Recorder, RunRecord,
    Rusage, SessionInfo, SessionStatus, Settings, StopReason,
};
use vernier_store::{Access, Load, Location, SqliteStore, Store, StoreError, SCHEMA_VERSION};
use vernier_testkit::{databases, temp_db, TestDatabase};

/// The store of `db` opened for `access`.
fn open(db: &TestDatabase, access: Access) -> Box<dyn Store> {
    vernier_store::open(&Location::parse(db.arg()).unwrap(), access)
        .unwrap_or_else(|e| panic!("{}: {e}", db.engine()))
}

#[test]
fn kernel_configs_are_kept_once_per_hash() {
    for db in databases("kernel_configs_are_kept_once_per_hash") {
        let mut store = open(&db, Access::Create);
        assert_eq!(store.kernel_config("abc").unwrap(), None);
        store.put_kernel_config("abc", "CONFIG_HZ=250\n").unwrap();
        store.put_kernel_config("abc", "CONFIG_HZ=250\n").unwrap();
        assert_eq!(
            store.kernel_config("abc").unwrap().as_deref(),
            Some("CONFIG_HZ=250\n")
        );
    }
}

fn session(id: Uuid, started_at_ns: i64, tags: &[(&str, &str)]) -> SessionInfo {
    let environment = Environment {
        kernel_release: Some("6.18.0-test".into()),
        online_cpus: Some(2),
        memory_bytes: Some(24 << 30),
        unsupported: BTreeMap::from([("governor".into(), "no cpufreq driver".into())]),
        ..Default::default()
    };
    SessionInfo {
        id,
        started_at_ns,
        ended_at_ns: None,
        status: SessionStatus::Running,
        suite: Some("sched".into()),
        specs: vec!["hackbench:groups=4".into(), "pipe".into()],
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        note: Some("baseline".into()),
        settings: Settings {
            warmup: 2,
            seed: 42,
            ..Default::default()
        },
        vernier_version: "0.1.0".into(),
        fingerprint: environment.fingerprint(),
        environment,
        findings: vec![vernier_model::Finding {
            id: "virtual-machine".into(),
            severity: vernier_model::Severity::Warning,
            title: "virtual machine".into(),
            detail: "kvm".into(),
            fix: None,
        }],
        setup: vec!["drop-caches".into()],
        monitors: vec!["stat".into(), "perf".into()],
    }
}

fn configuration(position: u32, benchmark: &str) -> ConfigurationRecord {
    ConfigurationRecord {
        id: Uuid::new_v4(),
        position,
        benchmark: benchmark.into(),
        benchmark_version: "1".into(),
        options: Options(BTreeMap::from([
            ("ipc".into(), OptionValue::Text("socket".into())),
            ("groups".into(), OptionValue::UInt(4)),
            ("datasize".into(), OptionValue::Float(1.5)),
        ])),
        metric: MetricInfo {
            name: "runtime".into(),
            unit: "s".into(),
            higher_is_better: false,
        },
        secondary_metrics: Vec::new(),
        loads: Vec::new(),
        stop_reason: None,
        converged: false,
        error: None,
    }
}

fn run(index: u32, warmup: bool, started_at_ns: i64, value: f64) -> RunRecord {
    RunRecord {
        id: Uuid::new_v4(),
        index,
        warmup,
        round: index,
        preceding_executions: index + u32::from(!warmup),
        started_at_ns,
        ended_at_ns: started_at_ns + 1_000_000,
        values: BTreeMap::from([("runtime".into(), value), ("messages".into(), 4000.0)]).into(),
        rusage: Rusage {
            user_cpu_ns: 300_000,
            system_cpu_ns: 500_000,
            voluntary_cs: 12,
            involuntary_cs: 3,
            max_rss_bytes: 4 << 20,
        },
        foreign_cpu_ns: -4_000_000,
        controller_cpu_ns: 20_000,
        load_cpu_ns: None,
        histograms: Vec::new(),
        monitors: (!warmup).then(|| {
            let mut data = vernier_model::monitor::RunMonitorData {
                series: vec![vernier_model::monitor::MonitorSeries {
                    monitor: "stat".into(),
                    metric: "ctxt".into(),
                    unit: "count".into(),
                    kind: vernier_model::monitor::SeriesKind::Counter,
                    points: vec![
                        vernier_model::monitor::MonitorPoint {
                            t_ns: 0,
                            value: 0.0,
                        },
                        vernier_model::monitor::MonitorPoint {
                            t_ns: 1_000_000,
                            value: 42.0,
                        },
                    ],
                }],
                sampler_priority: "fifo:1".into(),
                ..Default::default()
            };
            data.summary.insert("stat.ctxt".into(), 42.0);
            Box::new(data)
        }),
        setup_steps: vec![vernier_model::SetupStep {
            plugin: "idle-gate".into(),
            waited_ms: 12,
            timed_out: false,
            detail: "busy 1.0% < 5%".into(),
        }],
        setup_changed: vec![vernier_model::ChangedSetting {
            setting: "/proc/sys/vm/swappiness".into(),
            set: "10".into(),
            found: "60".into(),
        }],
    }
}

fn count(path: &Path, table: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_full_session_round_trips() {
    for db in databases("a_full_session_round_trips") {
        let mut store = open(&db, Access::Create);
        let info = session(
            Uuid::new_v4(),
            1_000,
            &[("kernel", "6.18"), ("host", "kvm")],
        );
        store.begin_session(&info).unwrap();

        // Given in plan order 1 then 0, to show loading orders by position.
        let pipe = configuration(1, "pipe");
        let hackbench = configuration(0, "hackbench");
        store.add_configuration(info.id, &pipe).unwrap();
        store.add_configuration(info.id, &hackbench).unwrap();

        // Stored out of execution order; loading orders by start time.
        let hb_runs = vec![
            run(0, true, 10_000, 0.9),
            run(1, true, 20_000, 0.8),
            run(0, false, 30_000, 0.5),
            run(1, false, 40_000, 0.25),
        ];
        for r in hb_runs.iter().rev() {
            store.add_run(hackbench.id, r).unwrap();
        }
        let pipe_runs = vec![run(0, false, 50_000, 2e-6)];
        store.add_run(pipe.id, &pipe_runs[0]).unwrap();

        store
            .finish_configuration(hackbench.id, StopReason::Converged, true, None)
            .unwrap();
        store
            .finish_configuration(
                pipe.id,
                StopReason::Failed,
                false,
                Some("child exited with 1"),
            )
            .unwrap();
        store
            .finish_session(info.id, SessionStatus::Completed, 99_000)
            .unwrap();
        drop(store);

        let store = open(&db, Access::Write);
        let loaded = store.load_session(info.id, Load::ALL).unwrap();
        let mut expected_info = info.clone();
        expected_info.status = SessionStatus::Completed;
        expected_info.ended_at_ns = Some(99_000);
        assert_eq!(loaded.info, expected_info);

        assert_eq!(loaded.configurations.len(), 2);
        let first = &loaded.configurations[0];
        let mut expected = hackbench.clone();
        expected.stop_reason = Some(StopReason::Converged);
        expected.converged = true;
        assert_eq!(first.record, expected);
        assert_eq!(first.runs, hb_runs);
        assert_eq!(first.values(), vec![0.5, 0.25]);

        let second = &loaded.configurations[1];
        assert_eq!(second.record.benchmark, "pipe");
        assert_eq!(second.record.stop_reason, Some(StopReason::Failed));
        assert_eq!(second.record.error.as_deref(), Some("child exited with 1"));
        assert!(!second.record.converged);
        assert_eq!(second.runs, pipe_runs);

        assert_eq!(store.sessions().unwrap(), vec![expected_info]);
    }
}

#[test]
fn options_are_stored_as_canonical_json() {
    for db in databases("options_are_stored_as_canonical_json") {
        let mut store = open(&db, Access::Create);
        let info = session(Uuid::new_v4(), 1, &[]);
        store.begin_session(&info).unwrap();
        store
            .add_configuration(info.id, &configuration(0, "hackbench"))
            .unwrap();
        assert_eq!(
            db.query_texts("SELECT options FROM configurations"),
            [r#"{"datasize":1.5,"groups":4,"ipc":"socket"}"#],
            "{}",
            db.engine()
        );
    }
}

#[test]
fn runs_that_start_together_keep_warmups_first() {
    for db in databases("runs_that_start_together_keep_warmups_first") {
        let mut store = open(&db, Access::Create);
        let info = session(Uuid::new_v4(), 1, &[]);
        store.begin_session(&info).unwrap();
        let c = configuration(0, "fork");
        store.add_configuration(info.id, &c).unwrap();
        for r in [
            run(1, false, 5, 1.0),
            run(0, false, 5, 1.0),
            run(0, true, 5, 1.0),
        ] {
            store.add_run(c.id, &r).unwrap();
        }
        let loaded = store.load_session(info.id, Load::ALL).unwrap();
        let order: Vec<(bool, u32)> = loaded.configurations[0]
            .runs
            .iter()
            .map(|r| (r.warmup, r.index))
            .collect();
        assert_eq!(order, [(true, 0), (false, 0), (false, 1)]);
    }
}

fn fixed(text: &str) -> Uuid {
    Uuid::parse_str(text).unwrap()
}

#[test]
fn selectors_resolve() {
    for db in databases("selectors_resolve") {
        let mut store = open(&db, Access::Create);
        let oldest = fixed("abcd0000-0000-4000-8000-000000000001");
        let middle = fixed("abcd1111-0000-4000-8000-000000000002");
        let newest = fixed("ef012222-0000-4000-8000-000000000003");
        // Inserted out of time order: `latest` follows started_at_ns, not insertion.
        store.begin_session(&session(newest, 300, &[])).unwrap();
        store.begin_session(&session(oldest, 100, &[])).unwrap();
        store.begin_session(&session(middle, 200, &[])).unwrap();

        assert_eq!(store.resolve("latest").unwrap(), newest);
        assert_eq!(store.resolve("latest~0").unwrap(), newest);
        assert_eq!(store.resolve("latest~1").unwrap(), middle);
        assert_eq!(store.resolve("latest~2").unwrap(), oldest);
        match store.resolve("latest~3") {
            Err(StoreError::NotFound { detail, .. }) => assert!(detail.contains('3'), "{detail}"),
            other => panic!("{other:?}"),
        }

        assert_eq!(store.resolve("ef01").unwrap(), newest);
        assert_eq!(store.resolve("ABCD1").unwrap(), middle);
        assert_eq!(store.resolve("abcd0000-00").unwrap(), oldest);
        assert_eq!(store.resolve("abcd00000000").unwrap(), oldest);
        assert_eq!(store.resolve(&oldest.to_string()).unwrap(), oldest);
        assert_eq!(store.resolve(&oldest.simple().to_string()).unwrap(), oldest);

        match store.resolve("abcd") {
            Err(StoreError::Ambiguous { selector, count }) => {
                assert_eq!(selector, "abcd");
                assert_eq!(count, 2);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            store.resolve("0000"),
            Err(StoreError::NotFound { .. })
        ));
        assert!(matches!(
            store.resolve("ef012222-0000-4000-8000-000000000009"),
            Err(StoreError::NotFound { .. })
        ));
        // Too short, or not an id at all: the message lists the valid forms.
        for bad in ["ef0", "yesterday", "latest~two"] {
            match store.resolve(bad) {
                Err(StoreError::NotFound { detail, .. }) => {
                    assert!(detail.contains("latest~N"), "{detail}")
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}

#[test]
fn latest_of_an_empty_store_is_not_found() {
    for db in databases("latest_of_an_empty_store_is_not_found") {
        let store = open(&db, Access::Create);
        let err = store.resolve("latest").unwrap_err();
        assert!(matches!(err, StoreError::NotFound { .. }));
        assert!(err.to_string().contains("0 session"), "{err}");
    }
}

#[test]
fn sessions_are_found_by_all_their_tags() {
    for db in databases("sessions_are_found_by_all_their_tags") {
        let mut store = open(&db, Access::Create);
        let a = Uuid::new_v4();
        let b = Uuid::new_v4();
        let c = Uuid::new_v4();
        store
            .begin_session(&session(b, 20, &[("kernel", "6.18"), ("tuned", "yes")]))
            .unwrap();
        store
            .begin_session(&session(a, 10, &[("kernel", "6.18"), ("tuned", "no")]))
            .unwrap();
        store
            .begin_session(&session(c, 30, &[("kernel", "6.19"), ("tuned", "yes")]))
            .unwrap();
        let tag = |k: &str, v: &str| (k.to_string(), v.to_string());

        assert_eq!(
            store
                .find_sessions_by_tags(&[tag("kernel", "6.18")])
                .unwrap(),
            [a, b]
        );
        assert_eq!(
            store
                .find_sessions_by_tags(&[tag("kernel", "6.18"), tag("tuned", "yes")])
                .unwrap(),
            [b]
        );
        assert_eq!(
            store
                .find_sessions_by_tags(&[tag("tuned", "yes"), tag("tuned", "yes")])
                .unwrap(),
            [b, c]
        );
        // One key cannot hold two values.
        assert!(store
            .find_sessions_by_tags(&[tag("kernel", "6.18"), tag("kernel", "6.19")])
            .unwrap()
            .is_empty());
        assert!(store
            .find_sessions_by_tags(&[tag("kernel", "6.1")])
            .unwrap()
            .is_empty());
        assert_eq!(store.find_sessions_by_tags(&[]).unwrap(), [a, b, c]);
    }
}

#[test]
fn deleting_a_session_removes_everything_under_it() {
    for db in databases("deleting_a_session_removes_everything_under_it") {
        let mut store = open(&db, Access::Create);
        let keep = session(Uuid::new_v4(), 1, &[("k", "v")]);
        let gone = session(Uuid::new_v4(), 2, &[("k", "v")]);
        for s in [&keep, &gone] {
            store.begin_session(s).unwrap();
            let c = configuration(0, "yield");
            store.add_configuration(s.id, &c).unwrap();
            store.add_run(c.id, &run(0, false, 5, 1.0)).unwrap();
        }
        store.delete_session(gone.id).unwrap();
        assert_eq!(db.count("sessions"), 1);
        assert_eq!(db.count("session_tags"), 1);
        assert_eq!(db.count("configurations"), 1);
        assert_eq!(db.count("runs"), 1);
        // The primary value is a column of the run; the other metric a row of run_values.
        assert_eq!(db.count("run_values"), 1);
        assert!(store.load_session(keep.id, Load::ALL).is_ok());
        assert!(matches!(
            store.delete_session(gone.id),
            Err(StoreError::Unknown {
                what: "session",
                ..
            })
        ));
    }
}

#[test]
fn writes_to_unknown_parents_and_nan_values_are_refused() {
    for db in databases("writes_to_unknown_parents_and_nan_values_are_refused") {
        let mut store = open(&db, Access::Create);
        let nobody = Uuid::new_v4();
        assert!(matches!(
            store.add_configuration(nobody, &configuration(0, "fork")),
            Err(StoreError::Unknown { what: "session", id }) if id == nobody
        ));
        assert!(matches!(
            store.add_run(nobody, &run(0, false, 1, 1.0)),
            Err(StoreError::Unknown {
                what: "configuration",
                ..
            })
        ));
        assert!(matches!(
            store.finish_configuration(nobody, StopReason::MaxRuns, false, None),
            Err(StoreError::Unknown { .. })
        ));
        assert!(matches!(
            store.finish_session(nobody, SessionStatus::Failed, 1),
            Err(StoreError::Unknown { .. })
        ));
        assert!(matches!(
            store.load_session(nobody, Load::ALL),
            Err(StoreError::Unknown { .. })
        ));

        let info = session(Uuid::new_v4(), 1, &[]);
        store.begin_session(&info).unwrap();
        let c = configuration(0, "fork");
        store.add_configuration(info.id, &c).unwrap();
        let err = store
            .add_run(c.id, &run(0, false, 1, f64::NAN))
            .unwrap_err();
        assert!(matches!(err, StoreError::Invalid(_)), "{err}");
        // Nothing of the refused run was written.
        assert_eq!(db.count("runs"), 0);
        assert_eq!(db.count("run_values"), 0);
        // A duplicate id is a database error, and the first record stays intact.
        let duplicate = store.begin_session(&info).unwrap_err();
        assert!(duplicate.is_duplicate_key(), "{}: {duplicate}", db.engine());
        assert_eq!(store.load_session(info.id, Load::ALL).unwrap().info, info);
    }
}

#[test]
fn a_new_file_is_migrated_and_reopening_changes_nothing() {
    let (dir, _) = temp_db();
    // Parent directories are created.
    let path = dir.path().join("a/b/results.db");

    let mut store = SqliteStore::open(&path).unwrap();
    let info = session(Uuid::new_v4(), 7, &[]);
    store.begin_session(&info).unwrap();
    drop(store);

    for _ in 0..2 {
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(store.sessions().unwrap(), vec![info.clone()]);
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn parent_directories_are_created() {
    let (dir, _) = temp_db();
    let path = dir.path().join("x/y/z/results.db");
    SqliteStore::open(&path).unwrap();
    assert!(path.is_file());
}

#[test]
fn open_existing_refuses_a_missing_file_without_creating_it() {
    let (_dir, path) = temp_db();
    match SqliteStore::open_existing(&path) {
        Err(StoreError::Missing { path: p }) => assert_eq!(p, path),
        other => panic!("{other:?}"),
    }
    assert!(!path.exists());
}

#[test]
fn a_newer_schema_is_refused() {
    let (_dir, path) = temp_db();
    SqliteStore::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(conn);
    for result in [
        SqliteStore::open(&path),
        SqliteStore::open_existing(&path),
        SqliteStore::open_read_only(&path),
    ] {
        match result {
            Err(StoreError::TooNew { found, known, .. }) => {
                assert_eq!(found, SCHEMA_VERSION + 1);
                assert_eq!(known, SCHEMA_VERSION);
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn foreign_files_are_refused() {
    let (dir, path) = temp_db();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE sessions (x)").unwrap();
    drop(conn);
    assert!(matches!(
        SqliteStore::open(&path),
        Err(StoreError::NotVernier { .. })
    ));

    let other = dir.path().join("other.db");
    let conn = rusqlite::Connection::open(&other).unwrap();
    conn.pragma_update(None, "application_id", 1234).unwrap();
    drop(conn);
    assert!(matches!(
        SqliteStore::open(&other),
        Err(StoreError::NotVernier { .. })
    ));

    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "this is not a database, it is a rather long text file\n".repeat(20),
    )
    .unwrap();
    for result in [
        SqliteStore::open(&text),
        SqliteStore::open_existing(&text),
        SqliteStore::open_read_only(&text),
    ] {
        assert!(
            matches!(result, Err(StoreError::NotDatabase { .. })),
            "{result:?}"
        );
    }
}

#[test]
fn environments_from_older_and_newer_versions_load() {
    for db in databases("environments_from_older_and_newer_versions_load") {
        let mut store = open(&db, Access::Create);
        let info = session(Uuid::new_v4(), 1, &[]);
        store.begin_session(&info).unwrap();
        // A field this version does not know and fields it does missing, as another vernier
        // version might have written.
        db.execute(
            r#"UPDATE sessions SET environment = '{"kernel_release":"6.1.0","future_field":[1,2]}',
               settings = '{"warmup":5}'"#,
        );
        let loaded = store.load_session(info.id, Load::ALL).unwrap().info;
        assert_eq!(loaded.environment.kernel_release.as_deref(), Some("6.1.0"));
        assert_eq!(loaded.environment.online_cpus, None);
        assert_eq!(loaded.settings.warmup, 5);
        assert_eq!(loaded.settings.max_runs, Settings::default().max_runs);

        db.execute("UPDATE sessions SET status = 'paused'");
        assert!(
            matches!(
                store.load_session(info.id, Load::ALL),
                Err(StoreError::Corrupt(_))
            ),
            "{}",
            db.engine()
        );
    }
}

#[test]
fn a_recorded_run_is_visible_to_another_connection_at_once() {
    for db in databases("a_recorded_run_is_visible_to_another_connection_at_once") {
        let mut writer = open(&db, Access::Create);
        // Opened before anything is written, and kept open: no reopening is needed to see runs.
        let reader = open(&db, Access::Write);
        let info = session(Uuid::new_v4(), 1, &[]);
        writer.begin_session(&info).unwrap();
        let c = configuration(0, "fork");
        writer.add_configuration(info.id, &c).unwrap();
        for i in 0..3 {
            let r = run(i, false, 10 + i64::from(i), f64::from(i));
            writer.add_run(c.id, &r).unwrap();
            let seen = reader.load_session(info.id, Load::ALL).unwrap();
            assert_eq!(seen.configurations[0].runs.len(), i as usize + 1);
            assert_eq!(seen.configurations[0].runs.last(), Some(&r));
        }
        assert_eq!(reader.resolve("latest").unwrap(), info.id);
    }
}

#[test]
fn every_commit_changes_the_change_token() {
    for db in databases("every_commit_changes_the_change_token") {
        let mut writer = open(&db, Access::Create);
        let reader = open(&db, Access::Read);
        let mut seen = vec![reader.change_token().unwrap()];
        // Nothing committed, the same token. (PostgreSQL's snapshot is the whole server's,
        // which the other tests' databases change at any time.)
        if db.postgres().is_none() {
            assert_eq!(reader.change_token().unwrap(), seen[0]);
        }
        let info = session(Uuid::new_v4(), 1, &[("kernel", "A")]);
        let changed = |what: &str, seen: &mut Vec<_>| {
            let now = reader.change_token().unwrap();
            assert!(!seen.contains(&now), "{}: {what}: {now:?}", db.engine());
            seen.push(now);
        };
        writer.begin_session(&info).unwrap();
        changed("a new session", &mut seen);
        writer
            .update_tags(&[info.id], &[("kernel".into(), "B".into())], &[])
            .unwrap();
        changed("a tag replaced", &mut seen);
        writer.set_note(&[info.id], Some("new")).unwrap();
        changed("a note", &mut seen);
        writer.delete_sessions(&[info.id]).unwrap();
        changed("a deletion", &mut seen);
    }
}

/// Writes `sessions` sessions of two configurations with `runs` runs each.
fn write_sessions(path: &Path, sessions: usize, runs: u32, start: Option<&Barrier>) -> Vec<Uuid> {
    if let Some(barrier) = start {
        barrier.wait();
    }
    let mut store = SqliteStore::open(path).unwrap();
    let mut ids = Vec::new();
    for s in 0..sessions {
        let info = session(Uuid::new_v4(), s as i64, &[("writer", "any")]);
        store.begin_session(&info).unwrap();
        let configurations = [configuration(0, "pipe"), configuration(1, "fork")];
        for c in &configurations {
            store.add_configuration(info.id, c).unwrap();
        }
        // Interleaved, as the engine does it: each run its own transaction.
        for i in 0..runs {
            for c in &configurations {
                store
                    .add_run(c.id, &run(i, false, i64::from(i), 1.0))
                    .unwrap();
            }
        }
        for c in &configurations {
            store
                .finish_configuration(c.id, StopReason::MaxRuns, false, None)
                .unwrap();
        }
        store
            .finish_session(info.id, SessionStatus::Completed, 1)
            .unwrap();
        ids.push(info.id);
    }
    ids
}

#[test]
fn two_threads_write_one_new_file_at_once() {
    let (_dir, path) = temp_db();
    let barrier = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let path = path.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || write_sessions(&path, 3, 10, Some(&barrier)))
        })
        .collect();
    let ids: Vec<Uuid> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();

    assert_eq!(count(&path, "sessions"), 6);
    assert_eq!(count(&path, "configurations"), 12);
    assert_eq!(count(&path, "runs"), 120);
    // Each run's primary value is in its row, its second metric in run_values.
    assert_eq!(count(&path, "run_values"), 120);
    let store = SqliteStore::open_existing(&path).unwrap();
    for id in ids {
        let s = store.load_session(id, Load::ALL).unwrap();
        assert_eq!(s.info.status, SessionStatus::Completed);
        assert!(s.configurations.iter().all(|c| c.runs.len() == 10));
    }
}

const CHILD_DB: &str = "VERNIER_STORE_TEST_CHILD_DB";
/// Exit code of a child that got through all its writes.
const CHILD_EXIT: i32 = 42;

/// Not a test of its own: the body of the child processes of
/// [`two_processes_write_at_once_and_a_crash_keeps_recorded_runs`]. It records a session and
/// then dies without finishing it, as a controller killed mid-session would.
#[test]
#[ignore = "started as a subprocess by two_processes_write_at_once_and_a_crash_keeps_recorded_runs"]
fn child_writer() {
    let Ok(path) = std::env::var(CHILD_DB) else {
        return;
    };
    let path = Path::new(&path);
    write_sessions(path, 2, 15, None);
    let mut store = SqliteStore::open(path).unwrap();
    let info = session(Uuid::new_v4(), 1_000, &[("crashed", "yes")]);
    store.begin_session(&info).unwrap();
    let c = configuration(0, "hackbench");
    store.add_configuration(info.id, &c).unwrap();
    store.add_run(c.id, &run(0, false, 1, 0.5)).unwrap();
    // No destructor, no close of the database: the process just ends, as a killed controller
    // would. (exit rather than abort, so no core file is left behind.)
    std::process::exit(CHILD_EXIT);
}

#[test]
fn two_processes_write_at_once_and_a_crash_keeps_recorded_runs() {
    let (_dir, path) = temp_db();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(&exe)
                .args(["--exact", "child_writer", "--ignored", "--test-threads=1"])
                .env(CHILD_DB, &path)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        let status = child.wait().unwrap();
        // A failed assertion in the child would exit with 101.
        assert_eq!(status.code(), Some(CHILD_EXIT), "child failed: {status:?}");
    }

    assert_eq!(count(&path, "sessions"), 2 * 2 + 2);
    assert_eq!(count(&path, "runs"), 2 * 2 * 2 * 15 + 2);
    let store = SqliteStore::open_existing(&path).unwrap();
    let tag = [("crashed".to_string(), "yes".to_string())];
    let crashed = store.find_sessions_by_tags(&tag).unwrap();
    assert_eq!(crashed.len(), 2);
    for id in crashed {
        let s = store.load_session(id, Load::ALL).unwrap();
        // Stored as running; its process is gone, so it reads as abandoned.
        assert_eq!(s.info.status, SessionStatus::Abandoned);
        assert_eq!(s.configurations[0].values(), vec![0.5]);
    }
}

#[test]
fn a_writer_waits_for_another_writer_and_readers_do_not_wait() {
    for db in databases("a_writer_waits_for_another_writer_and_readers_do_not_wait") {
        let mut store = open(&db, Access::Create);
        let info = session(Uuid::new_v4(), 1, &[]);
        store.begin_session(&info).unwrap();

        // Another process's write transaction that changed the session's row: it holds
        // SQLite's write lock, or PostgreSQL's lock on that row.
        let update = "UPDATE sessions SET note = 'uncommitted'";
        let commit: Box<dyn FnOnce() + Send> = match db.postgres() {
            None => {
                let conn = rusqlite::Connection::open(db.arg()).unwrap();
                conn.execute_batch(&format!("BEGIN IMMEDIATE; {update}"))
                    .unwrap();
                Box::new(move || conn.execute_batch("COMMIT").unwrap())
            }
            Some(pg) => {
                let mut client = pg.client();
                client.batch_execute(&format!("BEGIN; {update}")).unwrap();
                Box::new(move || client.batch_execute("COMMIT").unwrap())
            }
        };

        // A reader neither waits nor sees the uncommitted change (SQLite's WAL, PostgreSQL's
        // snapshots).
        let seen = store.load_session(info.id, Load::ALL).unwrap();
        assert_eq!(seen.info.note.as_deref(), Some("baseline"));

        // A writer of the same row waits for the lock instead of failing. The sleep only
        // gives the writer time to start waiting; the outcome does not depend on it.
        let committer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            commit();
        });
        store
            .finish_session(info.id, SessionStatus::Completed, 7)
            .unwrap();
        committer.join().unwrap();
        let seen = store.load_session(info.id, Load::ALL).unwrap();
        assert_eq!(
            seen.info.note.as_deref(),
            Some("uncommitted"),
            "{}",
            db.engine()
        );
        assert_eq!(seen.info.status, SessionStatus::Completed);
    }
}

/// The names and bytes of every file in `dir`.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = if e.file_type().unwrap().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// `vernier run`'s store leaves its log when it closes (no checkpoint, no fsync): what it
/// committed is read from the log by every later connection, read-only ones included, and the
/// next writer that closes without deferring folds it into the file and removes it.
#[test]
fn a_deferred_checkpoint_leaves_the_log_and_loses_nothing() {
    let (dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    store.defer_checkpoint().unwrap();
    let first = session(Uuid::new_v4(), 7, &[("kernel", "A")]);
    store.begin_session(&first).unwrap();
    drop(store);
    let files: Vec<String> = snapshot(dir.path()).into_keys().collect();
    assert_eq!(files.len(), 3, "the database, its -wal and -shm: {files:?}");
    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(reader.sessions().unwrap(), vec![first.clone()]);
    drop(reader);

    let mut store = SqliteStore::open(&path).unwrap();
    let second = session(Uuid::new_v4(), 8, &[("kernel", "B")]);
    store.begin_session(&second).unwrap();
    drop(store);
    assert_eq!(snapshot(dir.path()).len(), 1, "checkpointed into one file");
    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(reader.sessions().unwrap(), vec![first, second]);
}

/// A store that defers its checkpoint still checkpoints once the log is long (256 pages, 1 MB,
/// where SQLite's default is 1000 pages, 4 MB): the next connection to open the file reads
/// the whole log to rebuild its index. The log's file is reused from its start after a
/// checkpoint, so its length is the longest it has been.
#[test]
fn a_deferred_checkpoint_keeps_the_log_short() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    store.defer_checkpoint().unwrap();
    for i in 0..1500 {
        store
            .begin_session(&session(Uuid::new_v4(), i, &[("kernel", "A")]))
            .unwrap();
    }
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal_bytes = std::fs::metadata(std::path::PathBuf::from(wal))
        .unwrap()
        .len();
    // 24 bytes of frame header per 4 KiB page.
    let pages = wal_bytes / (4096 + 24);
    assert!(pages < 400, "{pages} pages in the log");
    drop(store);
    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(reader.sessions().unwrap().len(), 1500);
}

#[test]
fn a_read_only_open_writes_nothing() {
    let (dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    let info = session(Uuid::new_v4(), 7, &[("kernel", "A")]);
    store.begin_session(&info).unwrap();
    drop(store);
    let before = snapshot(dir.path());
    assert_eq!(
        before.len(),
        1,
        "a closed WAL database is one file: {before:?}"
    );
    for _ in 0..2 {
        let store = SqliteStore::open_read_only(&path).unwrap();
        assert_eq!(store.sessions().unwrap(), vec![info.clone()]);
        assert_eq!(store.resolve("latest").unwrap(), info.id);
        assert_eq!(store.load_session(info.id, Load::ALL).unwrap().info, info);
        assert_eq!(snapshot(dir.path()), before, "no -wal or -shm while open");
    }
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_read_only_open_sees_what_a_live_writer_committed() {
    let (_dir, path) = temp_db();
    let mut writer = SqliteStore::open(&path).unwrap();
    let first = session(Uuid::new_v4(), 7, &[]);
    writer.begin_session(&first).unwrap();
    // The writer's connection is open, so its log holds the commit.
    let reader = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(reader.sessions().unwrap(), vec![first.clone()]);
    let second = session(Uuid::new_v4(), 8, &[]);
    writer.begin_session(&second).unwrap();
    assert_eq!(reader.sessions().unwrap(), vec![first, second]);
}

#[test]
fn a_read_only_open_of_an_older_schema_migrates_a_copy_in_memory() {
    let (dir, path) = temp_db();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let first = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite/0001_initial.sql"),
    )
    .unwrap();
    conn.execute_batch(&first).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    drop(conn);
    let before = snapshot(dir.path());
    let store = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(store.sessions().unwrap(), vec![]);
    drop(store);
    assert_eq!(
        snapshot(dir.path()),
        before,
        "the file keeps schema version 1"
    );
}

#[test]
fn what_is_not_a_database_is_refused_and_left_alone() {
    let (dir, path) = temp_db();
    let not_database = |result: Result<SqliteStore, StoreError>, what: &str| match result {
        Err(StoreError::NotDatabase { what: w, .. }) => assert_eq!(w, what),
        other => panic!("{what}: {other:?}"),
    };
    std::fs::write(&path, b"").unwrap();
    not_database(SqliteStore::open_read_only(&path), "an empty file");
    assert_eq!(std::fs::read(&path).unwrap(), b"");
    not_database(SqliteStore::open(dir.path()), "a directory");
    not_database(SqliteStore::open_read_only(dir.path()), "a directory");
    let missing = dir.path().join("missing.db");
    assert!(matches!(
        SqliteStore::open_read_only(&missing),
        Err(StoreError::Missing { .. })
    ));
    assert!(!missing.exists());
    // An SQLite file of someone else, without tables.
    let foreign = dir.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("PRAGMA page_size = 4096; VACUUM;")
        .unwrap();
    let before = snapshot(dir.path());
    assert!(matches!(
        SqliteStore::open_read_only(&foreign),
        Err(StoreError::NotVernier { .. } | StoreError::NotDatabase { .. })
    ));
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_damaged_schema_version_is_one_line_without_sql() {
    let (_dir, path) = temp_db();
    SqliteStore::open(&path).unwrap();
    for version in [-5, 1] {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", version).unwrap();
        drop(conn);
        for result in [SqliteStore::open(&path), SqliteStore::open_read_only(&path)] {
            match result {
                Err(e @ StoreError::Schema { .. }) => {
                    let text = e.to_string();
                    assert_eq!(text.lines().count(), 1, "{text}");
                    assert!(!text.contains("CREATE"), "{text}");
                }
                other => panic!("{version}: {other:?}"),
            }
        }
    }
}

/// A latency-like histogram of one thread: `n` samples of a few microseconds and one spike.
fn latency_histogram(thread: u32, n: u64) -> vernier_model::RunHistogram {
    let mut r = vernier_model::Recording::new();
    for i in 0..n {
        r.record(3_000 + (i * 7919) % 5_000);
    }
    r.record(250_000);
    r.miss(3);
    r.finish("latency", thread, Some(thread))
}

#[test]
fn histograms_secondary_metrics_and_loads_round_trip_and_load_only_when_asked() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    let info = session(Uuid::new_v4(), 1_000, &[]);
    store.begin_session(&info).unwrap();
    let mut latency = configuration(0, "latency");
    latency.secondary_metrics = vec![vernier_model::MetricInfo {
        name: "max".into(),
        unit: "us".into(),
        higher_is_better: false,
    }];
    latency.loads = vec!["cpu:duty=50".into(), "io".into()];
    store.add_configuration(info.id, &latency).unwrap();
    let mut measured = run(0, false, 10_000, 0.5);
    measured.histograms = vec![latency_histogram(0, 50_000), latency_histogram(1, 40_000)];
    measured.load_cpu_ns = Some(123_456_789);
    store.add_run(latency.id, &measured).unwrap();

    let loaded = store.load_session(info.id, Load::DISTRIBUTIONS).unwrap();
    let c = &loaded.configurations[0];
    assert_eq!(c.record.secondary_metrics, latency.secondary_metrics);
    assert_eq!(c.record.loads, latency.loads);
    assert_eq!(c.runs[0].load_cpu_ns, Some(123_456_789));
    assert_eq!(c.runs[0].histograms, measured.histograms);
    assert_eq!(c.runs[0].histograms[0].max_index, Some(50_000));
    assert_eq!(c.runs[0].histograms[1].missed, 3);

    let without = store.load_session(info.id, Load::MEASUREMENTS).unwrap();
    assert!(without.configurations[0].runs[0].histograms.is_empty());
    assert_eq!(count(&path, "run_histograms"), 2);
    store.delete_session(info.id).unwrap();
    assert_eq!(count(&path, "run_histograms"), 0);
}

#[test]
fn a_histogram_whose_facts_contradict_its_buckets_is_refused() {
    let (_dir, path) = temp_db();
    let mut store = SqliteStore::open(&path).unwrap();
    let info = session(Uuid::new_v4(), 1_000, &[]);
    store.begin_session(&info).unwrap();
    let c = configuration(0, "latency");
    store.add_configuration(info.id, &c).unwrap();
    let mut bad = run(0, false, 10_000, 0.5);
    let mut h = latency_histogram(0, 100);
    h.count += 1;
    bad.histograms = vec![h];
    let e = store.add_run(c.id, &bad).unwrap_err().to_string();
    assert!(
        e.contains("count 102 is not the 101 samples in buckets"),
        "{e}"
    );
    assert_eq!(count(&path, "runs"), 0);
}
