//! The SQLite backend: one file, readable with any SQLite tool, schema in `docs/schema.md`.
//!
//! - [`connection`]: opening a file, pragmas, locking, and the read and write transactions;
//! - [`migrations`]: the schema versions and how a file reaches the current one;
//! - [`codec`]: model values as column values and back;
//! - [`read`] and [`mod@write`]: the queries and changes behind [`Store`] and its [`Recorder`];
//! - [`monitors`]: the runs' monitor data, in a compact binary encoding;
//! - [`histograms`]: the runs' distributions (latency histograms);
//! - [`calibration`]: the calibrations of `vernier calibrate`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use rusqlite::Connection;
use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, Recorder, RunRecord, SessionInfo, SessionStatus, StopReason, StoredSession,
};

use crate::{ImportReport, Load, SessionHeader, Store, StoreError};

mod calibration;
mod codec;
mod connection;
mod histograms;
mod import;
mod migrations;
mod monitors;
mod read;
mod write;

pub use connection::LOCK_WAIT;
pub use import::Importer;
pub use migrations::SCHEMA_VERSION;

/// Results in an SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    lock_wait: Duration,
}

impl Recorder for SqliteStore {
    type Error = StoreError;

    fn begin_session(&mut self, session: &SessionInfo) -> Result<(), StoreError> {
        write::begin_session(self, session)
    }

    fn add_configuration(
        &mut self,
        session: Uuid,
        configuration: &ConfigurationRecord,
    ) -> Result<(), StoreError> {
        write::add_configuration(self, session, configuration)
    }

    fn add_run(&mut self, configuration: Uuid, run: &RunRecord) -> Result<(), StoreError> {
        write::add_run(self, configuration, run)
    }

    fn finish_configuration(
        &mut self,
        configuration: Uuid,
        reason: StopReason,
        converged: bool,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        write::finish_configuration(self, configuration, reason, converged, error)
    }

    fn finish_session(
        &mut self,
        session: Uuid,
        status: SessionStatus,
        ended_at_ns: i64,
    ) -> Result<(), StoreError> {
        write::finish_session(self, session, status, ended_at_ns)
    }
}

impl Store for SqliteStore {
    fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        read::sessions(self)
    }

    fn resolve(&self, selector: &str) -> Result<Uuid, StoreError> {
        read::resolve(self, selector)
    }

    fn session_headers(&self) -> Result<Vec<SessionHeader>, StoreError> {
        read::session_headers(self)
    }

    fn load_session(&self, id: Uuid, load: Load) -> Result<StoredSession, StoreError> {
        read::load_session(self, id, load)
    }

    fn find_sessions_by_tags(&self, tags: &[(String, String)]) -> Result<Vec<Uuid>, StoreError> {
        read::find_sessions_by_tags(self, tags)
    }

    fn delete_session(&mut self, id: Uuid) -> Result<(), StoreError> {
        write::delete_session(self, id)
    }

    fn put_kernel_config(&mut self, sha256: &str, text: &str) -> Result<(), StoreError> {
        write::put_kernel_config(self, sha256, text)
    }

    fn kernel_config(&self, sha256: &str) -> Result<Option<String>, StoreError> {
        read::kernel_config(self, sha256)
    }

    fn import_sessions(
        &mut self,
        sessions: &[StoredSession],
        kernel_configs: &BTreeMap<String, String>,
    ) -> Result<ImportReport, StoreError> {
        import::import_sessions(self, sessions, kernel_configs)
    }
}
