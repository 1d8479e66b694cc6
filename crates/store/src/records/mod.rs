//! The queries and changes behind [`crate::Store`] and its [`vernier_model::Recorder`], written
//! once for both engines against [`crate::sql::Sql`]:
//!
//! - [`codec`]: model values as column values and back;
//! - [`read`] and [`mod@write`]: sessions, configurations, runs, tags, notes, deletion;
//! - [`monitors`]: the runs' monitor data, in a compact binary encoding;
//! - [`histograms`]: the runs' distributions (latency histograms);
//! - [`profiles`]: the configurations' profiled runs (folded stacks, compressed);
//! - [`calibration`]: the calibrations of `vernier calibrate`;
//! - [`bisections`]: the bisections of `vernier bisect`;
//! - [`import`]: whole sessions from an export, in one transaction;
//! - [`marks`]: how far each configuration has been recorded, for a sync;
//! - [`totals`]: the kept merged histograms of each configuration, for a long session's `show`.
//!
//! An engine ([`Engine`]) only runs them in its transactions.

use crate::sql::Sql;
use crate::StoreError;

pub(crate) mod bisections;
pub(crate) mod calibration;
pub(crate) mod codec;
pub(crate) mod histograms;
pub(crate) mod import;
pub(crate) mod marks;
pub(crate) mod monitors;
pub(crate) mod profiles;
pub(crate) mod read;
pub(crate) mod totals;
pub(crate) mod write;

/// The key of a run (docs/schema.md, `runs.key`, version 14): where it belongs,
/// `configuration_key * 2^32 + warmup * 2^31 + idx`, so that the runs of a configuration are
/// one range of the table's key ([`RUNS_OF_CONFIGURATION`]) and no second index finds them.
pub(crate) fn run_key(configuration_key: i64, warmup: bool, index: u32) -> Result<i64, StoreError> {
    let index = i64::from(index);
    if !(1..=MAX_PLACE).contains(&configuration_key) || index > MAX_PLACE {
        return Err(StoreError::Invalid(format!(
            "run {index} of configuration key {configuration_key}: a run's index and its \
             configuration's key must be below 2^31"
        )));
    }
    Ok(
        configuration_key * RUN_KEYS_PER_CONFIGURATION
            + i64::from(warmup) * (MAX_PLACE + 1)
            + index,
    )
}

/// What a run's key says: its configuration's key, whether it is a warmup, its index
/// ([`run_key`] the other way).
pub(crate) fn key_place(key: i64) -> (i64, bool, u32) {
    let index = key & MAX_PLACE;
    (
        key >> 32,
        key & (MAX_PLACE + 1) != 0,
        // Below 2^31 by the mask.
        u32::try_from(index).unwrap_or(u32::MAX),
    )
}

/// The largest configuration key and run index that [`run_key`] places: 2^31 - 1.
const MAX_PLACE: i64 = (1 << 31) - 1;

/// How many run keys one configuration spans: 2^32 (the `4294967296` of
/// [`RUNS_OF_CONFIGURATION`] and of the migration `0014_run_keys.sql`).
pub(crate) const RUN_KEYS_PER_CONFIGURATION: i64 = 1 << 32;

/// The condition on `runs r` and `configurations c` that joins a configuration to its runs as
/// the range of their keys ([`run_key`]): both engines walk that range of the table's primary
/// key, where `r.configuration_key = c.key` would read every run.
pub(crate) const RUNS_OF_CONFIGURATION: &str =
    "r.key >= c.key * 4294967296 AND r.key < (c.key + 1) * 4294967296";

/// A database engine: how a connection runs a closure of queries in a transaction.
pub(crate) trait Engine {
    /// Runs `f` in one write transaction and commits; inside an import's transaction
    /// ([`Engine::begin_import`]) it joins that one instead. A transaction that meets another
    /// writer's lock or a conflict the engine resolves by retrying is rolled back and `f` runs
    /// again, so `f` must not keep effects outside the database.
    fn write<T>(
        &mut self,
        f: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// Runs `f` in one read transaction, so its queries see one snapshot of the database even
    /// while another process writes.
    fn read<T>(
        &self,
        f: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// Starts the one transaction of an import of about `runs` runs, which every
    /// [`Engine::write`] joins until [`Engine::end_import`].
    fn begin_import(&mut self, runs: usize) -> Result<(), StoreError>;

    /// Commits (`commit`) or rolls back the import's transaction.
    fn end_import(&mut self, commit: bool) -> Result<(), StoreError>;

    /// [`crate::Store::change_token`].
    fn change_token(&self) -> Result<crate::ChangeToken, StoreError>;

    /// [`crate::Store::defer_checkpoint`].
    fn defer_checkpoint(&mut self) -> Result<(), StoreError>;

    /// Where the connection keeps the monitor names of its committed writes
    /// ([`monitors::Names::settle`]) for its next one; `None` inside an import, whose
    /// transaction may still roll back.
    fn monitor_names(&mut self) -> Option<&mut Option<monitors::Names>>;
}

/// Implements [`vernier_model::Recorder`] and [`crate::Store`] for an [`Engine`] with the
/// functions of this module: the two engines differ only in their connections.
macro_rules! impl_store {
    ($engine:ty) => {
        impl vernier_model::Recorder for $engine {
            type Error = $crate::StoreError;

            fn begin_session(
                &mut self,
                session: &vernier_model::SessionInfo,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::write::begin_session(self, session)
            }

            fn add_configuration(
                &mut self,
                session: uuid::Uuid,
                configuration: &vernier_model::ConfigurationRecord,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::write::add_configuration(self, session, configuration)
            }

            fn add_run(
                &mut self,
                configuration: uuid::Uuid,
                run: &vernier_model::RunRecord,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::write::add_run(self, configuration, run)
            }

            fn add_profile(
                &mut self,
                configuration: uuid::Uuid,
                profile: &vernier_model::ProfileRecord,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::profiles::add(self, configuration, profile)
            }

            fn finish_configuration(
                &mut self,
                configuration: uuid::Uuid,
                reason: vernier_model::StopReason,
                converged: bool,
                error: Option<&str>,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::write::finish_configuration(
                    self,
                    configuration,
                    reason,
                    converged,
                    error,
                )
            }

            fn add_finding(
                &mut self,
                session: uuid::Uuid,
                finding: &vernier_model::Finding,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::write::add_finding(self, session, finding)
            }

            fn finish_session(
                &mut self,
                session: uuid::Uuid,
                status: vernier_model::SessionStatus,
                ended_at_ns: i64,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::write::finish_session(self, session, status, ended_at_ns)
            }
        }

        impl $crate::Store for $engine {
            fn location(&self) -> &$crate::Location {
                &self.location
            }

            fn sessions(&self) -> Result<Vec<vernier_model::SessionInfo>, $crate::StoreError> {
                $crate::records::read::sessions(self)
            }

            fn resolve(&self, selector: &str) -> Result<uuid::Uuid, $crate::StoreError> {
                $crate::records::read::resolve(self, selector)
            }

            fn session_headers(&self) -> Result<Vec<$crate::SessionHeader>, $crate::StoreError> {
                $crate::records::read::session_headers(self)
            }

            fn session_progress(
                &self,
                id: uuid::Uuid,
            ) -> Result<$crate::SessionProgress, $crate::StoreError> {
                $crate::records::read::session_progress(self, id)
            }

            fn session_mark(
                &self,
                id: uuid::Uuid,
            ) -> Result<$crate::SessionMark, $crate::StoreError> {
                $crate::records::marks::session_mark(self, id)
            }

            fn load_session(
                &self,
                id: uuid::Uuid,
                load: $crate::Load,
            ) -> Result<vernier_model::StoredSession, $crate::StoreError> {
                $crate::records::read::load_session(self, id, load)
            }

            fn load_session_runs(
                &self,
                id: uuid::Uuid,
                load: $crate::Load,
                runs: &std::collections::BTreeSet<vernier_model::RunPlace>,
            ) -> Result<vernier_model::StoredSession, $crate::StoreError> {
                $crate::records::read::load_session_runs(self, id, load, runs)
            }

            fn load_session_page(
                &self,
                id: uuid::Uuid,
                load: $crate::Load,
                after: Option<$crate::RunCursor>,
                limit: usize,
            ) -> Result<
                (vernier_model::StoredSession, Option<$crate::RunCursor>),
                $crate::StoreError,
            > {
                $crate::records::read::load_session_page(self, id, load, after, limit)
            }

            fn for_each_run_page(
                &self,
                session: uuid::Uuid,
                configuration: uuid::Uuid,
                load: $crate::Load,
                limit: usize,
                each: &mut dyn FnMut(
                    Vec<vernier_model::RunRecord>,
                ) -> Result<(), $crate::StoreError>,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::read::for_each_run_page(
                    self,
                    session,
                    configuration,
                    load,
                    limit,
                    each,
                )
            }

            fn copy_page(
                &self,
                id: uuid::Uuid,
                after: Option<$crate::RunCursor>,
                limit: usize,
            ) -> Result<($crate::RunsPage, Option<$crate::RunCursor>), $crate::StoreError> {
                $crate::records::read::copy_page(self, id, after, limit)
            }

            fn copy_runs(
                &self,
                id: uuid::Uuid,
                runs: &std::collections::BTreeSet<vernier_model::RunPlace>,
            ) -> Result<$crate::RunsPage, $crate::StoreError> {
                $crate::records::read::copy_runs(self, id, runs)
            }

            fn histogram_totals(
                &self,
                id: uuid::Uuid,
            ) -> Result<Vec<$crate::HistogramTotal>, $crate::StoreError> {
                $crate::records::read::histogram_totals(self, id)
            }

            fn find_sessions_by_tags(
                &self,
                tags: &[(String, String)],
            ) -> Result<Vec<uuid::Uuid>, $crate::StoreError> {
                $crate::records::read::find_sessions_by_tags(self, tags)
            }

            fn delete_session(&mut self, id: uuid::Uuid) -> Result<(), $crate::StoreError> {
                $crate::records::write::delete_session(self, id)
            }

            fn delete_sessions(
                &mut self,
                ids: &[uuid::Uuid],
            ) -> Result<$crate::DeleteReport, $crate::StoreError> {
                $crate::records::write::delete_sessions(self, ids)
            }

            fn update_tags(
                &mut self,
                ids: &[uuid::Uuid],
                set: &[(String, String)],
                remove: &[String],
            ) -> Result<(), $crate::StoreError> {
                $crate::records::write::update_tags(self, ids, set, remove)
            }

            fn set_note(
                &mut self,
                ids: &[uuid::Uuid],
                note: Option<&str>,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::write::set_note(self, ids, note)
            }

            fn end_running_session(
                &mut self,
                session: uuid::Uuid,
                status: vernier_model::SessionStatus,
                ended_at_ns: i64,
            ) -> Result<bool, $crate::StoreError> {
                $crate::records::write::end_running_session(self, session, status, ended_at_ns)
            }

            fn put_kernel_config(
                &mut self,
                sha256: &str,
                text: &str,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::write::put_kernel_config(self, sha256, text)
            }

            fn kernel_config(&self, sha256: &str) -> Result<Option<String>, $crate::StoreError> {
                $crate::records::read::kernel_config(self, sha256)
            }

            fn add_calibrations(
                &mut self,
                calibrations: &[vernier_model::Calibration],
            ) -> Result<(), $crate::StoreError> {
                $crate::records::calibration::add_calibrations(self, calibrations)
            }

            fn calibrations(
                &self,
                fingerprints: &[String],
            ) -> Result<Vec<vernier_model::Calibration>, $crate::StoreError> {
                $crate::records::calibration::calibrations(self, fingerprints)
            }

            fn put_bisection(
                &mut self,
                bisection: &vernier_model::Bisection,
            ) -> Result<(), $crate::StoreError> {
                $crate::records::bisections::put_bisection(self, bisection)
            }

            fn bisections(&self) -> Result<Vec<vernier_model::Bisection>, $crate::StoreError> {
                $crate::records::bisections::bisections(self)
            }

            fn delete_bisection(&mut self, id: uuid::Uuid) -> Result<bool, $crate::StoreError> {
                $crate::records::bisections::delete_bisection(self, id)
            }

            fn change_token(&self) -> Result<$crate::ChangeToken, $crate::StoreError> {
                $crate::records::Engine::change_token(self)
            }

            fn defer_checkpoint(&mut self) -> Result<(), $crate::StoreError> {
                $crate::records::Engine::defer_checkpoint(self)
            }

            fn importer(
                &mut self,
                runs: usize,
            ) -> Result<Box<dyn $crate::Import + '_>, $crate::StoreError> {
                Ok(Box::new($crate::records::import::Importer::begin(
                    self, runs,
                )?))
            }
        }
    };
}
pub(crate) use impl_store;
