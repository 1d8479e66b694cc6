//! `copy_sessions`: every finished session the target lacks, once, one transaction per session,
//! so that a copy stopped by an error resumes where it stopped.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, Environment, MetricInfo, Options, Recorder, RunRecord, Rusage,
    SessionInfo, SessionStatus, Settings, StopReason, StoredConfiguration, StoredSession,
};
use vernier_store::{copy_sessions, Load, SqliteStore, Store, SyncReport, SyncStep};

fn stored(started_at_ns: i64, values: &[f64]) -> StoredSession {
    let environment = Environment {
        hostname: Some("box1".into()),
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
            started_at_ns: started_at_ns + i as i64,
            ended_at_ns: started_at_ns + 1 + i as i64,
            values: BTreeMap::from([("time".to_string(), *v)]),
            rusage: Rusage::default(),
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            load_cpu_ns: None,
            histograms: Vec::new(),
            monitors: None,
            setup_steps: Vec::new(),
        })
        .collect();
    StoredSession {
        info: SessionInfo {
            id: Uuid::new_v4(),
            started_at_ns,
            ended_at_ns: Some(started_at_ns + 100),
            status: SessionStatus::Completed,
            suite: None,
            specs: vec!["mock".into()],
            tags: BTreeMap::new(),
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
                benchmark: "mock".into(),
                benchmark_version: "1".into(),
                options: Options::default(),
                metric: MetricInfo {
                    name: "time".into(),
                    unit: "s".into(),
                    higher_is_better: false,
                },
                secondary_metrics: Vec::new(),
                loads: Vec::new(),
                stop_reason: Some(StopReason::MaxRuns),
                converged: false,
                error: None,
            },
            runs,
        }],
    }
}

fn open(dir: &tempfile::TempDir, name: &str) -> SqliteStore {
    SqliteStore::open(&dir.path().join(name)).unwrap()
}

fn ids(store: &SqliteStore) -> Vec<Uuid> {
    store
        .session_headers()
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn steps(from: &SqliteStore, to: &mut SqliteStore) -> (SyncReport, Vec<SyncStep>) {
    let mut steps = Vec::new();
    let report = copy_sessions(from, to, |s| steps.push(s)).unwrap();
    (report, steps)
}

#[test]
fn a_copy_stores_each_missing_session_once_with_its_ids() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = open(&dir, "machine.db");
    let (a, b) = (stored(1_000, &[1.0, 2.0]), stored(2_000, &[3.0]));
    source
        .import_sessions(&[a.clone(), b.clone()], &BTreeMap::new())
        .unwrap();
    let mut target = open(&dir, "central.db");

    let (report, first) = steps(&source, &mut target);
    assert_eq!(
        first,
        [
            SyncStep::Copied {
                id: a.info.id,
                runs: 2
            },
            SyncStep::Copied {
                id: b.info.id,
                runs: 1
            }
        ]
    );
    assert_eq!((report.copied, report.runs, report.present), (2, 3, 0));
    assert_eq!(target.load_session(a.info.id, Load::ALL).unwrap(), a);
    assert_eq!(target.load_session(b.info.id, Load::ALL).unwrap(), b);

    // Again: nothing to copy.
    let (report, _) = steps(&source, &mut target);
    assert_eq!((report.copied, report.present), (0, 2));

    // A new session, and a tag changed on the machine after the copy: only the new one is
    // copied, the changed one is reported and left alone.
    let c = stored(3_000, &[4.0]);
    source
        .import_sessions(std::slice::from_ref(&c), &BTreeMap::new())
        .unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("machine.db")).unwrap();
    conn.execute(
        "INSERT INTO session_tags (session_id, key, value) VALUES (?1, 'kernel', 'A')",
        [a.info.id.to_string()],
    )
    .unwrap();
    let (report, third) = steps(&source, &mut target);
    assert_eq!(
        third,
        [
            SyncStep::Differs { id: a.info.id },
            SyncStep::Present { id: b.info.id },
            SyncStep::Copied {
                id: c.info.id,
                runs: 1
            }
        ]
    );
    assert_eq!((report.copied, report.differs), (1, 1));
    assert_eq!(ids(&target), [a.info.id, b.info.id, c.info.id]);
    assert!(target
        .load_session(a.info.id, Load::ALL)
        .unwrap()
        .info
        .tags
        .is_empty());
}

#[test]
fn a_copy_stopped_by_an_error_keeps_what_it_copied_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = open(&dir, "machine.db");
    let sessions = [
        stored(1_000, &[1.0]),
        stored(2_000, &[2.0]),
        stored(3_000, &[3.0]),
    ];
    source.import_sessions(&sessions, &BTreeMap::new()).unwrap();

    // The target holds another session whose run has the id of a run of the second session:
    // storing the second fails, the copy stops there.
    let mut target = open(&dir, "central.db");
    let mut squatter = stored(500, &[9.0]);
    squatter.configurations[0].runs[0].id = sessions[1].configurations[0].runs[0].id;
    target
        .import_sessions(&[squatter.clone()], &BTreeMap::new())
        .unwrap();
    let mut seen = Vec::new();
    let error = copy_sessions(&source, &mut target, |s| seen.push(s)).unwrap_err();
    assert!(error.to_string().contains("already stored"), "{error}");
    assert_eq!(
        seen,
        [SyncStep::Copied {
            id: sessions[0].info.id,
            runs: 1
        }]
    );
    assert_eq!(ids(&target), [squatter.info.id, sessions[0].info.id]);
    // Nothing of the second session was stored: no configuration, no run.
    assert!(target
        .load_session(sessions[1].info.id, Load::INFO)
        .is_err());

    // With the obstacle gone, the next copy starts with the first session still missing.
    target.delete_session(squatter.info.id).unwrap();
    let (report, steps) = steps(&source, &mut target);
    assert_eq!(
        steps,
        [
            SyncStep::Present {
                id: sessions[0].info.id
            },
            SyncStep::Copied {
                id: sessions[1].info.id,
                runs: 1
            },
            SyncStep::Copied {
                id: sessions[2].info.id,
                runs: 1
            }
        ]
    );
    assert_eq!(report.copied, 2);
    for s in &sessions {
        assert_eq!(&target.load_session(s.info.id, Load::ALL).unwrap(), s);
    }
}

#[test]
fn a_session_still_running_is_copied_once_it_has_finished() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = open(&dir, "machine.db");
    let session = stored(1_000, &[1.0]);
    let mut info = session.info.clone();
    info.status = SessionStatus::Running;
    info.ended_at_ns = None;
    // Recorded by this process, which lives: running.
    source.begin_session(&info).unwrap();
    let mut target = open(&dir, "central.db");
    let (report, steps_running) = steps(&source, &mut target);
    assert_eq!(steps_running, [SyncStep::Running { id: info.id }]);
    assert_eq!((report.copied, report.running), (0, 1));
    assert!(ids(&target).is_empty());

    source
        .finish_session(info.id, SessionStatus::Completed, 1_100)
        .unwrap();
    let (report, _) = steps(&source, &mut target);
    assert_eq!(report.copied, 1);
    assert_eq!(
        target.load_session(info.id, Load::ALL).unwrap().info.status,
        SessionStatus::Completed
    );
}
