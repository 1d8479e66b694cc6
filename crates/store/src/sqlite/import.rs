//! Importing sessions from an export in one transaction, one session at a time, so a reader can
//! stream a large file into the store without holding it ([`Importer`]).

use std::collections::BTreeMap;

use rusqlite::OptionalExtension;
use vernier_model::validate;
use vernier_model::{Recorder, SessionStatus, StoredSession};

use super::codec::as_stored;
use super::connection::retry_while_locked;
use super::read::load_session_in;
use super::SqliteStore;
use crate::{ImportReport, Load, Store, StoreError};

/// An import in progress: one IMMEDIATE transaction around the ordinary writes (which join it,
/// see [`SqliteStore::write`]), so an import is stored whole or not at all and its rows are
/// exactly those a recording session writes. [`Importer::commit`] ends it; dropping it
/// without a commit rolls everything back.
pub struct Importer<'a> {
    store: &'a mut SqliteStore,
    previous_cache: i64,
    report: ImportReport,
    open: bool,
}

impl SqliteStore {
    /// Starts an import of about `runs` runs (it sizes the page cache; 0 if unknown). Check
    /// the sessions before ([`vernier_model::validate`]): an invalid file should take no lock.
    pub fn importer(&mut self, runs: usize) -> Result<Importer<'_>, StoreError> {
        // The pages one transaction changes stay in memory until the commit; with SQLite's
        // default cache (2 MiB) a large import spills them to the WAL and reads them back for
        // every later insertion into the same B-trees, which made the time grow faster than
        // the file. The cache grows with the import (about 1 KiB per run, the pages of its
        // rows and index entries) and is restored afterwards
        // (https://www.sqlite.org/pragma.html#pragma_cache_size).
        let previous_cache: i64 = self
            .conn
            .pragma_query_value(None, "cache_size", |r| r.get(0))?;
        // Negative: a size in KiB.
        let wanted_kib = i64::try_from(runs).unwrap_or(i64::MAX).saturating_add(2048);
        self.conn.pragma_update(None, "cache_size", -wanted_kib)?;
        let begun = retry_while_locked(&self.path, self.lock_wait, || {
            Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
        });
        if let Err(e) = begun {
            let _ = self.conn.pragma_update(None, "cache_size", previous_cache);
            return Err(e);
        }
        Ok(Importer {
            store: self,
            previous_cache,
            report: ImportReport::default(),
            open: true,
        })
    }
}

impl Importer<'_> {
    /// Keeps a kernel configuration text (a no-op if already stored).
    pub fn kernel_config(&mut self, sha256: &str, text: &str) -> Result<(), StoreError> {
        self.store.put_kernel_config(sha256, text)
    }

    /// Stores one session, checked first ([`validate::check_session`]; ids repeated across
    /// sessions are conflicts of the database's keys). A session whose id is already stored
    /// with the same content is skipped; with other content it is [`StoreError::Conflict`].
    pub fn session(&mut self, session: &StoredSession) -> Result<(), StoreError> {
        validate::check_session(session).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let store = &mut *self.store;
        let id = session.info.id;
        let exists: Option<i64> = store
            .conn
            .query_row(
                "SELECT 1 FROM sessions WHERE id = ?1",
                [id.to_string()],
                |r| r.get(0),
            )
            .optional()?;
        if exists.is_some() {
            // Stored values are what the store keeps of the file's ones (-0.0 as 0.0, see
            // `add_run`), so the file's session is compared as it would be stored.
            let mut stored = load_session_in(&store.conn, id, Load::ALL)?;
            // A session imported as running has no process here and reads as abandoned: that
            // is the same content.
            if stored.info.status == SessionStatus::Abandoned
                && session.info.status == SessionStatus::Running
            {
                stored.info.status = SessionStatus::Running;
            }
            if let Some(field) = validate::difference(&stored, &as_stored(session)) {
                return Err(StoreError::Conflict(format!(
                    "session {id} is already stored with other content (first difference: \
                     {field}); delete it first to replace it"
                )));
            }
            self.report.skipped += 1;
            return Ok(());
        }
        store.insert_session(&session.info, None)?;
        for config in &session.configurations {
            store.add_configuration(id, &config.record).map_err(|e| {
                if is_duplicate_key(&e) {
                    StoreError::Conflict(format!(
                        "configuration {} of session {id} is already stored in another session",
                        config.record.id
                    ))
                } else {
                    e
                }
            })?;
            for run in &config.runs {
                store.add_run(config.record.id, run).map_err(|e| {
                    if is_duplicate_key(&e) {
                        StoreError::Conflict(format!(
                            "run {} of session {id} is already stored in another session",
                            run.id
                        ))
                    } else {
                        e
                    }
                })?;
            }
        }
        self.report.imported += 1;
        Ok(())
    }

    /// What the import stored and skipped so far.
    pub fn report(&self) -> ImportReport {
        self.report
    }

    /// Commits everything stored since [`SqliteStore::importer`].
    pub fn commit(mut self) -> Result<ImportReport, StoreError> {
        self.open = false;
        if let Err(e) = self.store.conn.execute_batch("COMMIT") {
            let _ = self.store.conn.execute_batch("ROLLBACK");
            return Err(e.into());
        }
        Ok(self.report)
    }
}

impl Drop for Importer<'_> {
    fn drop(&mut self) {
        if self.open {
            // The error to report is the one that ended the import; a failing rollback changes
            // nothing (SQLite rolls back an unfinished transaction when the connection closes).
            let _ = self.store.conn.execute_batch("ROLLBACK");
        }
        let _ = self
            .store
            .conn
            .pragma_update(None, "cache_size", self.previous_cache);
    }
}

/// [`Store::import_sessions`]: sessions in memory, checked whole before the transaction starts
/// (an invalid file takes no lock).
pub(super) fn import_sessions(
    store: &mut SqliteStore,
    sessions: &[StoredSession],
    kernel_configs: &BTreeMap<String, String>,
) -> Result<ImportReport, StoreError> {
    validate::check_sessions(sessions).map_err(|e| StoreError::Invalid(e.to_string()))?;
    validate::check_kernel_configs(kernel_configs)
        .map_err(|e| StoreError::Invalid(e.to_string()))?;
    let runs: usize = sessions
        .iter()
        .flat_map(|s| &s.configurations)
        .map(|c| c.runs.len())
        .sum();
    let mut import = store.importer(runs)?;
    for (sha256, text) in kernel_configs {
        import.kernel_config(sha256, text)?;
    }
    for session in sessions {
        import.session(session)?;
    }
    import.commit()
}

/// True for an error of a PRIMARY KEY or UNIQUE constraint: an id that is already stored.
fn is_duplicate_key(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Database(rusqlite::Error::SqliteFailure(f, _))
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
    )
}
