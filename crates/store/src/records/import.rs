//! Importing sessions from an export in one transaction, one session at a time, so a reader can
//! stream a large file into the store without holding it ([`Importer`]).

use std::collections::{BTreeSet, HashMap};

use uuid::Uuid;
use vernier_model::validate;
use vernier_model::{RunPlace, RunRecord, SessionStatus, StoredConfiguration, StoredSession};

use super::codec::{as_stored, stored_value, to_json};
use super::histograms::StoredHistograms;
use super::read::{load_session_in, load_session_runs_in, session_progress_in};
use super::totals::{self, StoredTotal};
use super::{profiles, write, Engine, RUNS_OF_CONFIGURATION};
use crate::sql::{args, Columns};
use crate::{Extension, HeldRuns, Import, ImportReport, Load, RunsPage, StoreError};

/// An import in progress: one transaction around the ordinary writes (which join it, see
/// [`Engine::write`]), so an import is stored whole or not at all and its rows are exactly
/// those a recording session writes. [`Import::commit`] ends it; dropping it without a commit
/// rolls everything back.
pub(crate) struct Importer<'a, E: Engine> {
    store: &'a mut E,
    report: ImportReport,
    open: bool,
    /// The session last given that was stored already, being compared with what is stored.
    comparing: Option<Comparing>,
}

/// A session of the import that is stored already: the file's runs of it are compared with
/// the stored ones part by part as they come ([`Import::session`], then [`Import::add_runs`]),
/// so that neither copy is held whole (a session of 1,000,000 runs took 554 MB to compare
/// whole), and once it has all been given, that the stored one has no other runs.
struct Comparing {
    id: Uuid,
    /// Each configuration's position in the session, by its id.
    positions: HashMap<Uuid, usize>,
    /// The runs given so far of each configuration, by its id.
    given: HashMap<Uuid, usize>,
}

/// How many of the runs given of a session stored already are compared with the stored ones
/// at once: memory holds twice as many runs (the file's and the stored ones).
const COMPARED_RUNS_PER_PART: usize = 10_000;

impl<'a, E: Engine> Importer<'a, E> {
    /// Starts an import of about `runs` runs (0 if unknown). Check the sessions before
    /// ([`vernier_model::validate`]): an invalid file should take no lock.
    pub(crate) fn begin(store: &'a mut E, runs: usize) -> Result<Self, StoreError> {
        store.begin_import(runs)?;
        Ok(Importer {
            store,
            report: ImportReport::default(),
            open: true,
            comparing: None,
        })
    }

    /// Compares session `session`, which the store holds, with the stored one: its
    /// information and configurations, then the runs it holds ([`Importer::compare_runs`]);
    /// the runs given later of it are compared as they come.
    fn compare(&mut self, session: &StoredSession) -> Result<(), StoreError> {
        let id = session.info.id;
        let mut stored = self.store.write(|tx| {
            load_session_in(
                tx,
                id,
                Load {
                    runs: false,
                    profiles: true,
                    ..Load::INFO
                },
            )
        })?;
        // A session imported as running has no process here and reads as abandoned: that is
        // the same content.
        if stored.info.status == SessionStatus::Abandoned
            && session.info.status == SessionStatus::Running
        {
            stored.info.status = SessionStatus::Running;
        }
        let header = StoredSession {
            info: session.info.clone(),
            configurations: session
                .configurations
                .iter()
                .map(|c| StoredConfiguration {
                    record: c.record.clone(),
                    runs: Vec::new(),
                    profiles: c.profiles.clone(),
                })
                .collect(),
        };
        if let Some(field) = validate::difference(&stored, &header) {
            return Err(conflict(id, &field));
        }
        self.comparing = Some(Comparing {
            id,
            positions: (session.configurations.iter().enumerate())
                .map(|(at, c)| (c.record.id, at))
                .collect(),
            given: HashMap::new(),
        });
        self.compare_runs(session)
    }

    /// Compares the runs of `part`, of the session being compared, with the stored runs in
    /// their places, [`COMPARED_RUNS_PER_PART`] at a time. Stored values are what the store
    /// keeps of the file's ones (-0.0 as 0.0, see `add_run`), so the file's runs are compared
    /// as they would be stored.
    fn compare_runs(&mut self, part: &StoredSession) -> Result<(), StoreError> {
        let Some(comparing) = self.comparing.as_mut() else {
            return Ok(());
        };
        let id = comparing.id;
        for config in &part.configurations {
            let configuration = config.record.id;
            let position = comparing
                .positions
                .get(&configuration)
                .copied()
                .ok_or_else(|| {
                    conflict(
                        id,
                        &format!("configurations (the file's {configuration} is not stored)"),
                    )
                })?;
            for chunk in config.runs.chunks(COMPARED_RUNS_PER_PART) {
                let places: BTreeSet<RunPlace> =
                    chunk.iter().map(|r| r.place(configuration)).collect();
                // Everything of the runs but the configurations' profiled runs, which the
                // session's comparison took.
                let load = Load {
                    profiles: false,
                    ..Load::ALL
                };
                let stored = self
                    .store
                    .write(|tx| load_session_runs_in(tx, id, load, Some(&places)))?;
                let stored_runs = stored
                    .configurations
                    .iter()
                    .find(|c| c.record.id == configuration)
                    .map_or(&[][..], |c| &c.runs[..]);
                let mut given: Vec<RunRecord> = chunk.to_vec();
                for v in given.iter_mut().flat_map(|r| r.values.values_mut()) {
                    *v = stored_value(*v);
                }
                let first = comparing.given.entry(configuration).or_default();
                if let Some(path) = validate::runs_difference(stored_runs, &given, *first) {
                    return Err(conflict(id, &format!("configurations[{position}].{path}")));
                }
                *first += chunk.len();
            }
        }
        Ok(())
    }

    /// Ends the comparison of the session being compared, if any: the stored one must have as
    /// many runs of each configuration as the import gave (each of which was found stored).
    fn finish_comparing(&mut self) -> Result<(), StoreError> {
        let Some(comparing) = self.comparing.take() else {
            return Ok(());
        };
        let id = comparing.id;
        let mut stored = HashMap::new();
        self.store.write(|tx| {
            tx.query_each(
                &format!(
                    "SELECT c.id, (SELECT count(*) FROM runs r WHERE {RUNS_OF_CONFIGURATION}) \
                     FROM configurations c WHERE c.session_id = $1"
                ),
                args![&id.to_string()],
                &mut |row| {
                    stored.insert(row.text(0)?.to_string(), row.get::<i64>(1)?);
                    Ok(())
                },
            )
        })?;
        let mut positions: Vec<(usize, Uuid)> = comparing
            .positions
            .iter()
            .map(|(&c, &at)| (at, c))
            .collect();
        positions.sort_unstable();
        for (position, configuration) in positions {
            let given = comparing.given.get(&configuration).copied().unwrap_or(0);
            let held = stored.get(&configuration.to_string()).copied().unwrap_or(0);
            if usize::try_from(held).ok() != Some(given) {
                return Err(conflict(
                    id,
                    &format!(
                        "configurations[{position}].runs (the stored session has {held}, \
                         the file {given})"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// [`Import::extend`], the histograms of runs without their own in `histograms`.
    fn extend_with(
        &mut self,
        session: &StoredSession,
        histograms: &StoredHistograms,
        kept: &[StoredTotal],
        held: HeldRuns,
    ) -> Result<Extension, StoreError> {
        validate::check_session(session).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let session = as_stored(session);
        let store = &mut *self.store;
        let id = session.info.id;
        let key = id.to_string();
        let ended = session.info.ended_at_ns.is_some();
        // A running session adds findings as it goes (a value its setup set that something
        // else changed): the source's are the later ones.
        let findings = to_json!("findings", &session.info.findings)?;
        // First the session's row, which PostgreSQL locks until the commit: a second copy
        // extending the same session waits here and then reads the runs this one stored.
        let unfinished = store.write(|tx| {
            if ended {
                tx.execute(
                    "UPDATE sessions SET status = $2, ended_at_ns = $3, findings = $4 \
                     WHERE id = $1 AND status IN ('running', 'abandoned')",
                    args![
                        &key,
                        session.info.status.as_str(),
                        session.info.ended_at_ns,
                        &findings
                    ],
                )
            } else {
                tx.execute(
                    "UPDATE sessions SET findings = $2 \
                     WHERE id = $1 AND status IN ('running', 'abandoned')",
                    args![&key, &findings],
                )
            }
        })?;
        if unfinished == 0 {
            return Ok(Extension::default());
        }
        // Which of the runs given are stored already (another copy may have stored them since
        // `session` was read): only those are looked up, not every run the session holds.
        let places: Vec<RunPlace> = session
            .configurations
            .iter()
            .flat_map(|c| c.runs.iter().map(|r| r.place(c.record.id)))
            .collect();
        let stored = match held {
            HeldRuns::Unknown => store.write(|tx| session_progress_in(tx, id, Some(&places)))?,
            // The configurations only (a few rows): none of the runs is stored.
            HeldRuns::None => store.write(|tx| session_progress_in(tx, id, Some(&[])))?,
        };
        let mut extension = Extension {
            extended: true,
            ..Extension::default()
        };
        for config in &session.configurations {
            let record = &config.record;
            match stored.configurations.get(&record.id) {
                None => {
                    write::add_configuration(store, id, record).map_err(stored_elsewhere(
                        "configuration",
                        record.id,
                        id,
                    ))?;
                    extension.configurations += 1;
                }
                Some(None) => {
                    if let Some(reason) = record.stop_reason {
                        write::finish_configuration(
                            store,
                            record.id,
                            reason,
                            record.converged,
                            record.error.as_deref(),
                        )?;
                    }
                }
                Some(Some(_)) => {}
            }
            let lacking: Vec<RunRecord> = config
                .runs
                .iter()
                .filter(|r| !stored.runs.contains(&r.place(record.id)))
                .cloned()
                .collect();
            write::add_runs(store, record.id, &lacking, histograms)
                .map_err(run_stored_elsewhere(record.id, id))?;
            extension.runs += lacking.len();
            // Profiled runs come after a configuration's timed runs: those recorded since.
            profiles::add_lacking(store, record.id, &config.profiles)?;
        }
        store.write(|tx| totals::replace(tx, kept))?;
        Ok(extension)
    }

    /// [`Import::add_runs`], the histograms of runs without their own in `histograms`.
    fn add_runs_with(
        &mut self,
        part: &StoredSession,
        histograms: &StoredHistograms,
        kept: &[StoredTotal],
    ) -> Result<usize, StoreError> {
        validate::check_session(part).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let part = as_stored(part);
        let mut stored = 0;
        for config in part.configurations.iter().filter(|c| !c.runs.is_empty()) {
            write::add_runs(self.store, config.record.id, &config.runs, histograms)
                .map_err(run_stored_elsewhere(config.record.id, part.info.id))?;
            stored += config.runs.len();
        }
        self.store.write(|tx| totals::replace(tx, kept))?;
        Ok(stored)
    }
}

impl<E: Engine> Import for Importer<'_, E> {
    fn kernel_config(&mut self, sha256: &str, text: &str) -> Result<(), StoreError> {
        write::put_kernel_config(self.store, sha256, text)
    }

    fn session(&mut self, session: &StoredSession) -> Result<(), StoreError> {
        validate::check_session(session).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.finish_comparing()?;
        let id = session.info.id;
        if self.holds(id)? {
            self.compare(session)?;
            self.report.skipped += 1;
            return Ok(());
        }
        let store = &mut *self.store;
        write::insert_session(store, &session.info, None)?;
        for config in &session.configurations {
            write::add_configuration(store, id, &config.record).map_err(stored_elsewhere(
                "configuration",
                config.record.id,
                id,
            ))?;
            write::add_runs(
                store,
                config.record.id,
                &config.runs,
                &StoredHistograms::new(),
            )
            .map_err(run_stored_elsewhere(config.record.id, id))?;
            profiles::add_all(store, config.record.id, &config.profiles)
                .map_err(stored_elsewhere("profiled run", config.record.id, id))?;
        }
        self.report.imported += 1;
        Ok(())
    }

    fn extend(&mut self, session: &StoredSession) -> Result<Extension, StoreError> {
        self.extend_with(session, &StoredHistograms::new(), &[], HeldRuns::Unknown)
    }

    fn extend_page(&mut self, page: &RunsPage, held: HeldRuns) -> Result<Extension, StoreError> {
        self.extend_with(&page.session, &page.histograms, &page.totals, held)
    }

    fn add_runs(&mut self, part: &StoredSession) -> Result<usize, StoreError> {
        if self
            .comparing
            .as_ref()
            .is_some_and(|c| c.id == part.info.id)
        {
            validate::check_session(part).map_err(|e| StoreError::Invalid(e.to_string()))?;
            self.compare_runs(part)?;
            return Ok(0);
        }
        self.add_runs_with(part, &StoredHistograms::new(), &[])
    }

    fn add_page(&mut self, page: &RunsPage) -> Result<usize, StoreError> {
        self.add_runs_with(&page.session, &page.histograms, &page.totals)
    }
    fn set_owner(
        &mut self,
        id: Uuid,
        owner: &vernier_sys::process::ProcessIdentity,
    ) -> Result<(), StoreError> {
        write::set_owner(self.store, id, owner)
    }

    fn holds(&mut self, id: Uuid) -> Result<bool, StoreError> {
        self.store.write(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT 1 FROM sessions WHERE id = $1",
                    args![&id.to_string()],
                )?
                .is_some())
        })
    }

    fn mark_copying(&mut self, id: Uuid, runs: Option<u64>) -> Result<(), StoreError> {
        let runs = runs.map(|r| i64::try_from(r).unwrap_or(i64::MAX));
        self.store.write(|tx| {
            tx.execute(
                "UPDATE sessions SET copying_runs = $2 WHERE id = $1",
                args![&id.to_string(), runs],
            )
            .map(|_| ())
        })
    }

    fn put_histogram_totals(&mut self, kept: &[crate::HistogramTotal]) -> Result<(), StoreError> {
        let stored = kept
            .iter()
            .map(StoredTotal::encode)
            .collect::<Result<Vec<_>, StoreError>>()?;
        self.store.write(|tx| totals::replace(tx, &stored))
    }

    fn report(&self) -> ImportReport {
        self.report
    }

    fn commit(mut self: Box<Self>) -> Result<ImportReport, StoreError> {
        self.finish_comparing()?;
        self.open = false;
        self.store.end_import(true)?;
        Ok(self.report)
    }
}

/// The error of importing session `id`, stored already, with content that differs from the
/// stored one at `field`.
fn conflict(id: Uuid, field: &str) -> StoreError {
    StoreError::Conflict(format!(
        "session {id} is already stored with other content (first difference: {field}); \
         delete it first to replace it"
    ))
}

/// The error of storing the configuration or run `record` of `session`: a duplicate key means
/// that the id is already stored in another session, which is a conflict.
fn stored_elsewhere(
    what: &'static str,
    record: Uuid,
    session: Uuid,
) -> impl FnOnce(StoreError) -> StoreError {
    move |e| {
        if e.is_duplicate_key() {
            StoreError::Conflict(format!(
                "{what} {record} of session {session} is already stored in another session"
            ))
        } else {
            e
        }
    }
}

/// [`stored_elsewhere`] for the runs of `configuration`, stored many to a statement: a
/// duplicate key is the id of one of them stored in another session.
fn run_stored_elsewhere(
    configuration: Uuid,
    session: Uuid,
) -> impl FnOnce(StoreError) -> StoreError {
    move |e| {
        if e.is_duplicate_key() {
            StoreError::Conflict(format!(
                "a run of configuration {configuration} of session {session} has its id \
                 already stored in another session, or its place stored already (by a run \
                 before it in the same file, or before)"
            ))
        } else {
            e
        }
    }
}

impl<E: Engine> Drop for Importer<'_, E> {
    fn drop(&mut self) {
        if self.open {
            // The error to report is the one that ended the import; a failing rollback changes
            // nothing (both engines roll back an unfinished transaction when the connection
            // closes).
            let _ = self.store.end_import(false);
        }
    }
}
