//! `Store::import_sessions`: whole sessions in one transaction, idempotent, all or nothing.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, Environment, MetricInfo, Options, RunRecord, Rusage, SessionInfo,
    SessionStatus, Settings, StopReason, StoredConfiguration, StoredSession,
};
use vernier_store::{ImportReport, SqliteStore, Store, StoreError};

fn stored(values: &[f64]) -> StoredSession {
    let environment = Environment {
        online_cpus: Some(2),
        ..Default::default()
    };
    let runs = values
        .iter()
        .enumerate()
        .map(|(i, v)| RunRecord {
            id: Uuid::new_v4(),
            index: i as u32,
            warmup: false,
            round: 0,
            preceding_executions: i as u32,
            started_at_ns: 1_000 + i as i64,
            ended_at_ns: 2_000 + i as i64,
            values: BTreeMap::from([("time".to_string(), *v)]),
            rusage: Rusage {
                user_cpu_ns: 7,
                ..Default::default()
            },
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            monitors: None,
            setup_steps: Vec::new(),
        })
        .collect();
    StoredSession {
        info: SessionInfo {
            id: Uuid::new_v4(),
            started_at_ns: 1_000,
            ended_at_ns: Some(3_000),
            status: SessionStatus::Completed,
            suite: None,
            specs: vec!["command".into()],
            tags: BTreeMap::from([("kernel".to_string(), "A".to_string())]),
            note: None,
            settings: Settings::default(),
            vernier_version: "0.1.0".into(),
            fingerprint: environment.fingerprint(),
            environment,
            findings: Vec::new(),
            setup: Vec::new(),
            monitors: Vec::new(),
        },
        configurations: vec![StoredConfiguration {
            record: ConfigurationRecord {
                id: Uuid::new_v4(),
                position: 0,
                benchmark: "command".into(),
                benchmark_version: "1".into(),
                options: Options::default(),
                metric: MetricInfo {
                    name: "time".into(),
                    unit: "s".into(),
                    higher_is_better: false,
                },
                stop_reason: Some(StopReason::MaxRuns),
                converged: false,
                error: None,
            },
            runs,
        }],
    }
}

#[test]
fn import_round_trips_and_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("a.db")).unwrap();
    let a = stored(&[1.0, 2.0, 3.0]);
    let b = stored(&[4.0]);
    let report = store.import_sessions(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(
        report,
        ImportReport {
            imported: 2,
            skipped: 0
        }
    );
    assert_eq!(store.load_session(a.info.id).unwrap(), a);
    assert_eq!(store.load_session(b.info.id).unwrap(), b);
    // Twice: nothing new; a duplicate inside one batch is skipped too.
    let report = store.import_sessions(&[a.clone(), b.clone(), b]).unwrap();
    assert_eq!(
        report,
        ImportReport {
            imported: 0,
            skipped: 3
        }
    );
    assert_eq!(store.sessions().unwrap().len(), 2);
    // Ordinary writes work again after an import (no transaction left open).
    let c = stored(&[5.0]);
    store.begin_session(&c.info).unwrap();
    assert_eq!(store.sessions().unwrap().len(), 3);
}

#[test]
fn a_failing_import_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("a.db")).unwrap();
    let good = stored(&[1.0, 2.0]);
    let bad = stored(&[1.0, f64::NAN]);
    let err = store.import_sessions(&[good.clone(), bad]).unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");
    assert!(store.sessions().unwrap().is_empty());
    // The store is usable afterwards and the good session imports alone.
    let report = store.import_sessions(&[good]).unwrap();
    assert_eq!(report.imported, 1);
}
