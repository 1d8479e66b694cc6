//! Storage of sessions, configurations and runs behind the [`Store`] trait, so the engine and
//! the CLI never depend on a particular database. SQLite is the default backend.

use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, RunRecord, SessionInfo, SessionStatus, StopReason, StoredSession,
};

/// Errors of a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open database {path}: {source}")]
    Open {
        path: String,
        source: rusqlite::Error,
    },
    #[error("database error: {0}")]
    Database(#[from] rusqlite::Error),
    #[error("database {path} has schema version {found}, newer than this vernier knows ({known})")]
    TooNew {
        path: String,
        found: i64,
        known: i64,
    },
    #[error("no session matches '{selector}'")]
    NotFound { selector: String },
    #[error("'{selector}' matches {count} sessions; give more of the id")]
    Ambiguous { selector: String, count: usize },
    #[error("corrupt record: {0}")]
    Corrupt(String),
}

/// Where results are kept. Every method commits before it returns, so a crash loses at most
/// the run in progress.
pub trait Store {
    /// Records a new session (status `running`).
    fn begin_session(&mut self, session: &SessionInfo) -> Result<(), StoreError>;
    /// Records a configuration of a session before its first run.
    fn add_configuration(
        &mut self,
        session: Uuid,
        configuration: &ConfigurationRecord,
    ) -> Result<(), StoreError>;
    /// Records one finished run (warmup or measured).
    fn add_run(&mut self, configuration: Uuid, run: &RunRecord) -> Result<(), StoreError>;
    /// Records why a configuration stopped.
    fn finish_configuration(
        &mut self,
        configuration: Uuid,
        reason: StopReason,
        converged: bool,
        error: Option<&str>,
    ) -> Result<(), StoreError>;
    /// Records the end of a session.
    fn finish_session(
        &mut self,
        session: Uuid,
        status: SessionStatus,
        ended_at_ns: i64,
    ) -> Result<(), StoreError>;
    /// All sessions, oldest first, without their configurations.
    fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError>;
    /// Resolves `latest`, `latest~N` or a (prefix of a) session id.
    fn resolve(&self, selector: &str) -> Result<Uuid, StoreError>;
    /// A whole session with its configurations and runs.
    fn load_session(&self, id: Uuid) -> Result<StoredSession, StoreError>;
}
