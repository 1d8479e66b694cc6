//! A session whose results cannot be recorded to the end (the database stayed locked past the
//! wait) ends with the store's error and is marked failed, not left running. The engine with
//! the real SQLite store: the binary's crate is the one that sees both.

use std::collections::BTreeMap;
use std::time::Duration;

use uuid::Uuid;
use vernier_engine::child::ChildRequest;
use vernier_engine::executor::ExecError;
use vernier_engine::{build_plan, run_session, EngineError, Executor, Interrupt, RunOutcome};
use vernier_engine::{NoHooks, SessionOptions};
use vernier_model::{
    BenchmarkInfo, ConfigurationRecord, MetricInfo, Recorder, RunRecord, Rusage, SessionInfo,
    SessionStatus, Settings, StopReason,
};
use vernier_store::{Load, SqliteStore, Store, StoreError};

/// A real store whose `fail_at`-th run write fails the way a lock held past the wait does.
struct LockedAt {
    inner: SqliteStore,
    fail_at: usize,
    runs: usize,
}

impl Recorder for LockedAt {
    type Error = StoreError;

    fn begin_session(&mut self, session: &SessionInfo) -> Result<(), StoreError> {
        self.inner.begin_session(session)
    }
    fn add_configuration(&mut self, s: Uuid, c: &ConfigurationRecord) -> Result<(), StoreError> {
        self.inner.add_configuration(s, c)
    }
    fn add_run(&mut self, configuration: Uuid, run: &RunRecord) -> Result<(), StoreError> {
        self.runs += 1;
        if self.runs == self.fail_at {
            return Err(StoreError::Locked {
                database: self.inner.location().clone(),
                waited: Duration::from_secs(120),
            });
        }
        self.inner.add_run(configuration, run)
    }
    fn add_profile(
        &mut self,
        c: Uuid,
        profile: &vernier_model::ProfileRecord,
    ) -> Result<(), StoreError> {
        self.inner.add_profile(c, profile)
    }
    fn finish_configuration(
        &mut self,
        c: Uuid,
        reason: StopReason,
        converged: bool,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        self.inner.finish_configuration(c, reason, converged, error)
    }
    fn add_finding(&mut self, s: Uuid, f: &vernier_model::Finding) -> Result<(), StoreError> {
        self.inner.add_finding(s, f)
    }
    fn finish_session(&mut self, s: Uuid, st: SessionStatus, end: i64) -> Result<(), StoreError> {
        self.inner.finish_session(s, st, end)
    }
}

/// Every run measures 1 s.
struct Constant;

impl Executor for Constant {
    fn execute(&mut self, _: &ChildRequest, _: &Interrupt) -> Result<RunOutcome, ExecError> {
        Ok(RunOutcome {
            started_at_ns: 0,
            ended_at_ns: 1_000,
            values: BTreeMap::from([("value".to_string(), 1.0)]),
            histograms: Vec::new(),
            rusage: Rusage::default(),
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            monitors: None,
        })
    }
}

#[test]
fn a_session_that_cannot_be_recorded_is_marked_failed() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("results.db");
    let mut store = LockedAt {
        inner: SqliteStore::open(&path).expect("database"),
        fail_at: 3,
        runs: 0,
    };
    let benchmarks =
        [BenchmarkInfo::new("constant", "1", "", MetricInfo::lower("value", "s")).hidden()];
    let settings = Settings {
        warmup: 0,
        min_runs: 10,
        max_runs: 10,
        ..Settings::default()
    };
    let plan = build_plan(&["constant".to_string()], settings, &benchmarks, 2).expect("plan");
    let id = Uuid::new_v4();
    let result = run_session(
        &plan,
        SessionOptions {
            id: Some(id),
            ..SessionOptions::default()
        },
        &mut Constant,
        &mut NoHooks,
        &mut store,
        &Interrupt::new(),
        &mut |_| {},
    );
    let error = match result {
        Err(e @ EngineError::Record(_)) => e,
        other => panic!("expected the store's error, got {other:?}"),
    };
    let EngineError::Record(source) = &error;
    assert!(
        matches!(
            source.downcast_ref::<StoreError>(),
            Some(StoreError::Locked { .. })
        ),
        "{error}"
    );
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    let stored = store
        .inner
        .load_session(id, Load::ALL)
        .expect("the session is stored");
    assert_eq!(stored.info.status, SessionStatus::Failed);
    assert!(stored.info.ended_at_ns.is_some());
    assert_eq!(stored.configurations[0].runs.len(), 2);
}
