//! Storage of sessions, configurations and runs behind the [`Store`] trait, so the CLI never
//! depends on a particular database; the engine sees only the write-only
//! [`vernier_model::Recorder`] that a store implements. Two engines: an SQLite file
//! ([`SqliteStore`], the default) and a PostgreSQL database ([`PgStore`], cargo feature
//! `postgres`), opened alike by [`open`] from a [`Location`]. Their schema is documented in
//! `docs/schema.md`.
//!
//! The queries are written once ([`records`], against [`sql::Sql`]); each engine module only
//! connects, migrates and runs them in its transactions.

mod location;
#[cfg(feature = "postgres")]
mod postgres;
mod records;
mod selector;
mod sql;
mod sqlite;
mod sync;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use uuid::Uuid;
use vernier_model::{
    Calibration, Recorder, RunPlace, SessionInfo, SessionStatus, StopReason, StoredSession,
};

pub use location::{migrate, open, open_with_lock_wait, Access, Location};
#[cfg(feature = "postgres")]
pub use postgres::PgStore;
pub use records::totals::HistogramTotal;
pub use selector::{parse_tag_selector, SessionFilter};
pub use sqlite::{SqliteStore, LOCK_WAIT, SCHEMA_VERSION};
pub use sync::{check_merge, copy_sessions, merge_sessions, SyncReport, SyncStep};

/// Errors of a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// `open_existing` was asked for a file that is not there.
    #[error(
        "database {path} does not exist; `vernier run` creates it, --db or VERNIER_DB name another"
    )]
    Missing { path: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A `--db` location that names no database vernier can open.
    #[error("{0}")]
    Location(String),
    /// The path is not a database at all: a directory, an empty file, a text file.
    #[error(
        "{path} is {what}; expected a vernier database (an SQLite file `vernier run` creates)"
    )]
    NotDatabase { path: PathBuf, what: String },
    /// A vernier database whose schema version or schema cannot be right.
    #[error("database {path} has a damaged schema: {detail}")]
    Schema { path: PathBuf, detail: String },
    /// The file or PostgreSQL database is one of some other program.
    #[error("{path} is a database, but not one of vernier: {detail}")]
    NotVernier { path: PathBuf, detail: String },
    #[error("database error: {0}")]
    Database(#[from] rusqlite::Error),
    /// An error PostgreSQL reported, with the database it came from.
    #[error("database {location}: {message}")]
    Postgres {
        location: String,
        message: String,
        code: Option<String>,
    },
    /// The connection to the PostgreSQL server broke (the server stopped, the network went,
    /// an administrator ended the backend). What was committed before is stored; the
    /// transaction in progress, at most the run being recorded, is not.
    #[error(
        "lost the connection to database {location} ({message}); everything committed before \
         is stored, the change in progress (in a session, the run being recorded) is not"
    )]
    ConnectionLost { location: String, message: String },
    /// Another process held a lock on the database for longer than vernier waits
    /// (`vernier_store::LOCK_WAIT`): SQLite's write lock, or in PostgreSQL a lock on a table
    /// or row that a write needs (`lock_timeout`).
    #[error(
        "database {database} is locked by another process; gave up after waiting {:.1} s",
        waited.as_secs_f64()
    )]
    Locked {
        database: Location,
        waited: Duration,
    },
    #[error("database {path} has schema version {found}, newer than this vernier knows ({known})")]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    /// A selector matched no session; `detail` says why and, for a malformed selector, which
    /// forms are valid.
    #[error("no session matches '{selector}': {detail}")]
    NotFound { selector: String, detail: String },
    #[error("'{selector}' matches {count} sessions; give more of the id")]
    Ambiguous { selector: String, count: usize },
    /// A write referred to a session or configuration that is not stored.
    #[error("unknown {what} {id}")]
    Unknown { what: &'static str, id: Uuid },
    /// A record that cannot be stored faithfully (for example a NaN metric value).
    #[error("invalid record: {0}")]
    Invalid(String),
    #[error("corrupt record: {0}")]
    Corrupt(String),
    /// An import would overwrite or contradict what is stored: a session id stored with other
    /// content, or a configuration or run id that belongs to another session.
    #[error("conflict: {0}")]
    Conflict(String),
}

impl StoreError {
    /// True for an error of a PRIMARY KEY or UNIQUE constraint: an id that is already stored.
    pub fn is_duplicate_key(&self) -> bool {
        match self {
            StoreError::Database(rusqlite::Error::SqliteFailure(f, _)) => {
                f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                    || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            }
            // unique_violation (https://www.postgresql.org/docs/15/errcodes-appendix.html).
            StoreError::Postgres { code, .. } => code.as_deref() == Some("23505"),
            _ => false,
        }
    }

    /// True for a deadlock or a serialization failure that PostgreSQL reported: it rolled the
    /// transaction back, and running it again succeeds
    /// (https://www.postgresql.org/docs/15/mvcc-serialization-failure-handling.html; codes
    /// 40P01 deadlock_detected and 40001 serialization_failure of
    /// https://www.postgresql.org/docs/15/errcodes-appendix.html).
    pub fn is_transaction_conflict(&self) -> bool {
        matches!(self, StoreError::Postgres { code: Some(code), .. }
            if code == "40P01" || code == "40001")
    }
}

/// Where results are kept: the writes of a session (the [`Recorder`] the engine records
/// through, with [`StoreError`]) and the queries, deletions and imports of the read commands.
/// Every method commits before it returns, so a crash loses at most the run in progress.
/// `Send`, so that a server's threads can share one (`vernier serve`).
pub trait Store: Recorder<Error = StoreError> + Send {
    /// The database, as messages name it.
    fn location(&self) -> &Location;
    /// All sessions, oldest first, without their configurations.
    fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError>;
    /// All sessions, oldest first, as lists of sessions show them: without settings,
    /// environment and findings, whose decoding is most of the cost of [`Store::sessions`].
    fn session_headers(&self) -> Result<Vec<SessionHeader>, StoreError>;
    /// Resolves `latest`, `latest~N` or a (prefix of a) session id.
    fn resolve(&self, selector: &str) -> Result<Uuid, StoreError>;
    /// What of session `id` grows while it is recorded: its configurations with how each
    /// stopped, and its runs (empty for a session not stored). Two stores hold the same state
    /// of a session when these, its status and its end time agree.
    fn session_progress(&self, id: Uuid) -> Result<SessionProgress, StoreError>;
    /// How far session `id` has been recorded: per configuration, how it stopped, its runs
    /// and the end of the latest, read from the configurations alone (none for a session not
    /// stored). Two stores whose marks of a session agree hold the same runs of it, as far as
    /// a sync can tell without reading them.
    fn session_mark(&self, id: Uuid) -> Result<SessionMark, StoreError>;
    /// A session with its configurations and runs; `load` says whether with the runs' monitor
    /// data (without it, every run's `monitors` is `None`).
    fn load_session(&self, id: Uuid, load: Load) -> Result<StoredSession, StoreError>;
    /// Session `id` as [`Store::load_session`] reads it, with only those of its runs whose
    /// places are in `runs` (places of other sessions, or of no run, take nothing): a copy of a
    /// session still being recorded reads the few runs the target lacks, not the session's
    /// months of runs it holds already.
    fn load_session_runs(
        &self,
        id: Uuid,
        load: Load,
        runs: &BTreeSet<RunPlace>,
    ) -> Result<StoredSession, StoreError>;
    /// Session `id` as [`Store::load_session`] reads it, with at most `limit` of its runs: the
    /// first ones (`after` `None`), or those after the cursor that the previous page
    /// returned. Returns the page and the cursor of the next (`None` after the last page).
    /// Runs come in the store's own order (that of their storing), each page in execution
    /// order: a copy reads a session so, part by part, in bounded memory. The profiled runs
    /// (`load.profiles`) come with the first page.
    fn load_session_page(
        &self,
        id: Uuid,
        load: Load,
        after: Option<RunCursor>,
        limit: usize,
    ) -> Result<(StoredSession, Option<RunCursor>), StoreError>;
    /// The runs of configuration `configuration` of session `session` with what `load` asks
    /// for (not its profiled runs), in execution order as [`Store::load_session`] gives them,
    /// handed to `each` in pages of at most `limit` runs: an export writes a configuration of a
    /// million runs in bounded memory. The runs are those stored when it begins. Each page is
    /// read in a transaction of its own. A configuration whose measured runs or warmups, in
    /// the order of their indexes, do not start in time order (an import may give any times)
    /// is read whole and handed on in one page.
    fn for_each_run_page(
        &self,
        session: Uuid,
        configuration: Uuid,
        load: Load,
        limit: usize,
        each: &mut dyn FnMut(Vec<vernier_model::RunRecord>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;
    /// [`Store::load_session_page`] with everything stored, as a copy into another store reads
    /// it: the histograms are passed on as stored ([`RunsPage`]), not decoded.
    fn copy_page(
        &self,
        id: Uuid,
        after: Option<RunCursor>,
        limit: usize,
    ) -> Result<(RunsPage, Option<RunCursor>), StoreError>;
    /// [`Store::load_session_runs`] with everything stored, as a copy into another store reads
    /// it ([`RunsPage`]).
    fn copy_runs(&self, id: Uuid, runs: &BTreeSet<RunPlace>) -> Result<RunsPage, StoreError>;
    /// The kept merged histograms of session `id`'s configurations (docs/schema.md,
    /// `histogram_totals`, version 15), by configuration, quantity and thread: what `show` of a
    /// long session reads in place of every run's buckets. Check them against the runs'
    /// histograms ([`Histograms::Headers`]) before using them: a copy in progress, or a
    /// session stored by a vernier before version 15 in a database not migrated since, has
    /// none or some that do not add up.
    fn histogram_totals(&self, id: Uuid) -> Result<Vec<HistogramTotal>, StoreError>;
    /// The sessions that carry every one of `tags` (`key`, `value`), oldest first. With no
    /// tags, every session.
    fn find_sessions_by_tags(&self, tags: &[(String, String)]) -> Result<Vec<Uuid>, StoreError>;
    /// The sessions a selector names, oldest first: terms `KEY=VALUE[,KEY=VALUE...]` (grammar
    /// and escapes in [`parse_tag_selector`]) select every session carrying all of the tags
    /// and run on the `host=NAME` named; any other selector is resolved by [`Store::resolve`]
    /// to one session.
    fn select(&self, selector: &str) -> Result<Vec<Uuid>, StoreError> {
        let Some(filter) = parse_tag_selector(selector)? else {
            return Ok(vec![self.resolve(selector)?]);
        };
        let mut ids = self.find_sessions_by_tags(&filter.tags)?;
        if ids.is_empty() {
            return Err(StoreError::NotFound {
                selector: selector.to_string(),
                detail: "no session carries all of these tags".to_string(),
            });
        }
        if filter.hosts.is_empty() {
            return Ok(ids);
        }
        let headers = self.session_headers()?;
        let on_hosts: std::collections::HashSet<Uuid> = headers
            .iter()
            .filter(|h| filter.hosts.iter().all(|name| h.ran_on(name)))
            .map(|h| h.id)
            .collect();
        ids.retain(|id| on_hosts.contains(id));
        if ids.is_empty() {
            let known: std::collections::BTreeSet<&str> = headers
                .iter()
                .filter_map(|h| h.hostname.as_deref())
                .collect();
            return Err(StoreError::NotFound {
                selector: selector.to_string(),
                detail: format!(
                    "no session {}ran on {} (the hosts stored: {})",
                    if filter.tags.is_empty() {
                        ""
                    } else {
                        "with these tags "
                    },
                    filter.hosts.join(" and "),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.into_iter().collect::<Vec<_>>().join(", ")
                    }
                ),
            });
        }
        Ok(ids)
    }
    /// Removes a session with its configurations, runs and values.
    fn delete_session(&mut self, id: Uuid) -> Result<(), StoreError>;
    /// Deletes the sessions `ids` with their configurations, runs, values, monitor records and
    /// tags, and the kernel configuration texts they referred to that no remaining session
    /// refers to, in one transaction. Texts that no deleted session referred to are left
    /// alone: a `vernier run` stores its text just before it records its session.
    fn delete_sessions(&mut self, ids: &[Uuid]) -> Result<DeleteReport, StoreError>;
    /// Sets the tags `set` (replacing a value under the same key) and removes the keys `remove`
    /// on every session of `ids`, in one transaction. Removing a key a session does not carry
    /// is not an error.
    fn update_tags(
        &mut self,
        ids: &[Uuid],
        set: &[(String, String)],
        remove: &[String],
    ) -> Result<(), StoreError>;
    /// Replaces the note of every session of `ids`; `None` removes it.
    fn set_note(&mut self, ids: &[Uuid], note: Option<&str>) -> Result<(), StoreError>;
    /// Ends a session that this process cannot finish the ordinary way (it is about to exit at
    /// once, on a repeated Ctrl-C): a session still `running` gets `status` and its end time,
    /// and its configurations that have not stopped stop as interrupted. Returns whether the
    /// session was still running.
    fn end_running_session(
        &mut self,
        session: Uuid,
        status: SessionStatus,
        ended_at_ns: i64,
    ) -> Result<bool, StoreError>;
    /// Stores the calibrations of one `vernier calibrate` in one transaction: all or none.
    fn add_calibrations(&mut self, calibrations: &[Calibration]) -> Result<(), StoreError>;
    /// Every calibration of the environments with these fingerprints (compare pools those of
    /// one configuration), ordered by fingerprint, benchmark, options, metric and age.
    fn calibrations(&self, fingerprints: &[String]) -> Result<Vec<Calibration>, StoreError>;
    /// Stores a bisection (`vernier bisect`), replacing the one of the same id.
    fn put_bisection(&mut self, bisection: &vernier_model::Bisection) -> Result<(), StoreError>;
    /// Every stored bisection, oldest first.
    fn bisections(&self) -> Result<Vec<vernier_model::Bisection>, StoreError>;
    /// Removes a bisection's record (its sessions stay); whether it was stored.
    fn delete_bisection(&mut self, id: Uuid) -> Result<bool, StoreError>;
    /// A cheap reading that changes whenever a change is committed to the database, for a
    /// reader that keeps what it loaded (`vernier serve`) and reads again only when it changed.
    /// It may also change when nothing vernier stores did: see [`ChangeToken`].
    fn change_token(&self) -> Result<ChangeToken, StoreError>;
    /// Leaves what is committed in SQLite's write-ahead log when this connection closes,
    /// instead of checkpointing it into the file (`vernier run`: see docs/schema.md,
    /// "Durability and concurrency"); a no-op on PostgreSQL.
    fn defer_checkpoint(&mut self) -> Result<(), StoreError>;
    /// Starts an import of about `runs` runs (0 if unknown) in one transaction. Check the
    /// sessions before ([`vernier_model::validate`]): an invalid file should take no lock.
    fn importer(&mut self, runs: usize) -> Result<Box<dyn Import + '_>, StoreError>;
    /// Keeps a kernel configuration text once per distinct SHA-256 (a no-op if already stored).
    fn put_kernel_config(&mut self, sha256: &str, text: &str) -> Result<(), StoreError>;
    /// The kernel configuration text stored under `sha256`, if any.
    fn kernel_config(&self, sha256: &str) -> Result<Option<String>, StoreError>;
    /// Stores whole sessions (from an export) and the kernel configuration texts they refer
    /// to (SHA-256 -> text) in one transaction: all of them or, on error, none. Every session
    /// is checked first ([`vernier_model::validate::check_sessions`]): an invalid one is
    /// [`StoreError::Invalid`]. A session whose id is already stored with the same content is
    /// skipped, so importing twice stores nothing twice; with other content it is
    /// [`StoreError::Conflict`], naming the first field that differs.
    fn import_sessions(
        &mut self,
        sessions: &[StoredSession],
        kernel_configs: &BTreeMap<String, String>,
    ) -> Result<ImportReport, StoreError> {
        // Checked whole before the transaction starts: an invalid file takes no lock.
        vernier_model::validate::check_sessions(sessions)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        vernier_model::validate::check_kernel_configs(kernel_configs)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        let runs: usize = sessions
            .iter()
            .flat_map(|s| &s.configurations)
            .map(|c| c.runs.len())
            .sum();
        let mut import = self.importer(runs)?;
        for (sha256, text) in kernel_configs {
            import.kernel_config(sha256, text)?;
        }
        for session in sessions {
            import.session(session)?;
        }
        import.commit()
    }
    /// Brings a session that was stored while it was still being recorded up to `session`, a
    /// later state of it, in one transaction ([`Import::extend`]).
    fn extend_session(&mut self, session: &StoredSession) -> Result<Extension, StoreError> {
        vernier_model::validate::check_session(session)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        let runs = session.configurations.iter().map(|c| c.runs.len()).sum();
        let mut import = self.importer(runs)?;
        let extension = import.extend(session)?;
        import.commit()?;
        Ok(extension)
    }
}

/// An import in progress ([`Store::importer`]): one transaction, stored whole by
/// [`Import::commit`] or, when dropped without it, not at all.
pub trait Import {
    /// Keeps a kernel configuration text (a no-op if already stored).
    fn kernel_config(&mut self, sha256: &str, text: &str) -> Result<(), StoreError>;
    /// Stores one session, checked first ([`vernier_model::validate::check_session`]; ids
    /// repeated across sessions are conflicts of the database's keys). A session whose id is
    /// already stored with the same content is skipped; with other content it is
    /// [`StoreError::Conflict`]. Such a session is compared part by part, in bounded memory:
    /// its runs given here and with [`Import::add_runs`], each with the stored run in its
    /// place; that the stored session has no others is checked at the next session or the
    /// commit.
    fn session(&mut self, session: &StoredSession) -> Result<(), StoreError>;
    /// Brings a session stored here while it was still being recorded (`running` or
    /// `abandoned`) up to `session`, a later state of the same session: the configurations
    /// and runs it lacks are stored, a configuration that has stopped since gets how it
    /// stopped, and a session that has ended its status and end time. Runs are known by their
    /// ids: none is stored twice and none stored is changed. A session stored here as ended
    /// (or not at all) is left alone, which [`Extension::extended`] says. In PostgreSQL the
    /// session's row is locked first, so two copies extending it at once take turns.
    fn extend(&mut self, session: &StoredSession) -> Result<Extension, StoreError>;
    /// Stores more runs of a session that this import stored with [`Import::session`] (then
    /// given with only some of its runs, so that a large session is copied part by part in
    /// bounded memory): `part` is that session with, in each configuration, runs not stored
    /// yet. They are checked as [`Import::session`] checks a session's runs. Returns how many
    /// it stored: none of a session that was stored before this import, whose runs are
    /// compared with the stored ones instead.
    fn add_runs(&mut self, part: &StoredSession) -> Result<usize, StoreError>;
    /// [`Import::add_runs`] for runs read from another store ([`Store::copy_page`]), their
    /// histograms stored as that store keeps them.
    fn add_page(&mut self, page: &RunsPage) -> Result<usize, StoreError>;
    /// [`Import::extend`] with runs read from another store ([`Store::copy_runs`]), their
    /// histograms stored as that store keeps them; `held` says whether the runs stored already
    /// are looked up first.
    fn extend_page(&mut self, page: &RunsPage, held: HeldRuns) -> Result<Extension, StoreError>;
    /// Records `owner` as the process that records session `id`, stored here while still
    /// being recorded (a copy of it: [`copy_sessions`]), so that on the session's own machine
    /// the copy reads `running` while that process lives, and `abandoned` once it is gone, as
    /// the original does. A session stored as ended is left alone.
    fn set_owner(
        &mut self,
        id: Uuid,
        owner: &vernier_sys::process::ProcessIdentity,
    ) -> Result<(), StoreError>;
    /// Whether session `id` is stored, before this import or by it.
    fn holds(&mut self, id: Uuid) -> Result<bool, StoreError>;
    /// Stores `totals` as the kept merged histograms of their configurations (of sessions
    /// stored in this import or before), in place of those kept: for a generator of long
    /// sessions that stores copies of runs without decoding them (crates/store/examples/
    /// long_session.rs) and knows their sum.
    fn put_histogram_totals(&mut self, totals: &[HistogramTotal]) -> Result<(), StoreError>;
    /// Marks session `id` as being copied part by part from a database where it holds
    /// `runs` runs ([`SessionHeader::copying`]), or (`None`) as copied as far as it goes.
    fn mark_copying(&mut self, id: Uuid, runs: Option<u64>) -> Result<(), StoreError>;
    /// What the import stored and skipped so far.
    fn report(&self) -> ImportReport;
    /// Commits everything stored since [`Store::importer`].
    fn commit(self: Box<Self>) -> Result<ImportReport, StoreError>;
}

/// What a copy knows of the runs of a page it adds to a session stored already
/// ([`Import::extend_page`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldRuns {
    /// The target may hold some of them: they are looked up by their places first (a query
    /// of 500 keys at a time), and only the others are stored.
    Unknown,
    /// The target held none of them when the copy compared the two stores: all are stored
    /// without a lookup. One stored meanwhile by another copy fails the import on its place
    /// (the key of `runs`), which is unique, and the copy tries again with
    /// [`HeldRuns::Unknown`]. The lookups took
    /// 5.2 s of the server's 7.9 s in a first copy of 100,000 runs into PostgreSQL.
    None,
}

/// A session with some of its runs as a copy reads them from one store to store them in
/// another ([`Store::copy_page`], [`Import::add_page`]): the runs' histograms stay as the
/// source stores them (their buckets in HdrHistogram's V2 + DEFLATE encoding, the same in
/// both engines), so a copy neither decodes nor encodes them; `session`'s runs have none of
/// their own.
#[derive(Debug, Clone)]
pub struct RunsPage {
    pub session: StoredSession,
    histograms: records::histograms::StoredHistograms,
    /// The source's kept merged histograms of the session's configurations, read with the
    /// runs: the target stores them with the runs in place of its own, so that once a copy
    /// is complete both hold the same.
    totals: Vec<records::totals::StoredTotal>,
}

impl RunsPage {
    /// The runs of the page, warmups included.
    pub fn runs(&self) -> usize {
        self.session
            .configurations
            .iter()
            .map(|c| c.runs.len())
            .sum()
    }

    /// Changes every run of the page with `change`, its histograms following it to the id
    /// `change` gives it: how a generator of long sessions makes copies of recorded runs
    /// (crates/store/examples/long_session.rs) without decoding their histograms.
    pub fn change_runs(&mut self, mut change: impl FnMut(&mut vernier_model::RunRecord)) {
        let mut histograms = records::histograms::StoredHistograms::new();
        for configuration in &mut self.session.configurations {
            for run in &mut configuration.runs {
                let id = run.id;
                change(run);
                if let Some(rows) = self.histograms.get(&id) {
                    histograms.insert(run.id, rows.clone());
                }
            }
        }
        self.histograms = histograms;
        // The source's totals are not those of the changed runs.
        self.totals.clear();
    }
}

/// Where [`Store::load_session_page`] goes on: after the run it read last, by its key in the
/// database (keys are the store's own, never shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunCursor(pub(crate) i64);

/// What [`Store::change_token`] read: two equal tokens mean that nothing was committed to the
/// database between the two readings.
///
/// - SQLite: the modification times and sizes of the database file and of its write-ahead log
///   and shared-memory files (in WAL mode a commit appends to the `-wal` file first, and a
///   checkpoint rewrites the main file), so any commit, by any program, changes it;
/// - PostgreSQL: the server's current snapshot (`pg_current_snapshot()`, PostgreSQL 13 and
///   later, https://www.postgresql.org/docs/15/functions-info.html#FUNCTIONS-PG-SNAPSHOT): the
///   transactions it counts as committed. Every commit that writes changes it; so do writes to
///   the server's other databases, which only cost a needless reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeToken(pub(crate) TokenValue);

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenValue {
    /// Per file (the database, `-wal`, `-shm`): its modification time and size, `None` when
    /// it does not exist.
    Files(Vec<Option<(std::time::SystemTime, u64)>>),
    /// `pg_current_snapshot()` as text, `xmin:xmax:xip_list`.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Snapshot(String),
}

/// What [`Store::load_session`] reads of each run besides its measurements (values, times,
/// resource usage, setup steps).
///
/// Monitor data (every run's time series, summaries and failures) is most of a database, and
/// only the commands that show it or export whole runs need it: a table of medians reads the
/// runs without it (docs/schema.md, "Reading").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Load {
    /// The runs of each configuration (without them, the session's information and its
    /// configurations with no runs).
    pub runs: bool,
    /// Each run's [`vernier_model::monitor::RunMonitorData`] (only with `runs`).
    pub monitors: bool,
    /// How much of each run's histograms ([`vernier_model::RunHistogram`], only with `runs`).
    pub histograms: Histograms,
    /// Each configuration's profiled runs ([`vernier_model::ProfileRecord`], with or without
    /// `runs`; in the first of the pages of [`Store::load_session_page`], none in the others).
    pub profiles: bool,
}

impl Load {
    /// The session's information (environment, settings, tags) and its configurations,
    /// without runs: what `env` needs.
    pub const INFO: Load = Load {
        runs: false,
        monitors: false,
        histograms: Histograms::No,
        profiles: false,
    };
    /// The measurements only: what statistics, comparisons and CSV need.
    pub const MEASUREMENTS: Load = Load {
        runs: true,
        monitors: false,
        histograms: Histograms::No,
        profiles: false,
    };
    /// The measurements and the runs' histograms: what shows distributions needs.
    pub const DISTRIBUTIONS: Load = Load {
        runs: true,
        monitors: false,
        histograms: Histograms::Whole,
        profiles: false,
    };
    /// Everything stored: what an export and the monitor views need.
    pub const ALL: Load = Load {
        runs: true,
        monitors: true,
        histograms: Histograms::Whole,
        profiles: true,
    };
}

/// How much of each run's histograms [`Load`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Histograms {
    No,
    /// Each histogram's exact facts (count, extremes, sum, ...) and trace, with its buckets
    /// empty: what `show` of a long session reads of every run, the buckets coming merged from
    /// [`Store::histogram_totals`]. SQLite reads them from an index that holds every column
    /// but the buckets (`run_histogram_headers`, docs/schema.md).
    Headers,
    /// Every histogram whole.
    Whole,
}

/// A session as lists of sessions show it ([`Store::session_headers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHeader {
    pub id: Uuid,
    pub started_at_ns: i64,
    pub ended_at_ns: Option<i64>,
    /// As [`SessionInfo::status`]: a `running` session whose process is gone is `abandoned`.
    pub status: SessionStatus,
    pub suite: Option<String>,
    pub specs: Vec<String>,
    pub tags: BTreeMap<String, String>,
    pub note: Option<String>,
    pub fingerprint: String,
    /// The machine it ran on ([`vernier_model::Environment::hostname`] and
    /// [`vernier_model::Environment::machine_id`]); `None` when unknown.
    pub hostname: Option<String>,
    pub machine_id: Option<String>,
    /// The process that records it, as stored (`None` for a session imported or recorded
    /// before schema version 3): a copy of a session still being recorded carries it, so that
    /// the copy reads `running` on the session's own machine while that process lives.
    pub owner: Option<vernier_sys::process::ProcessIdentity>,
    /// Set while a copy (`vernier sync`) stores the session part by part: it reads `running`
    /// (or `abandoned`) until its last part brings its end, and holds only some of its runs.
    pub copying: Option<CopyProgress>,
}

/// How far a copy of a session has come ([`SessionHeader::copying`], schema version 15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyProgress {
    /// Runs stored so far, warmups included.
    pub runs: u64,
    /// Runs of the session in the database it is copied from, when the copy began.
    pub of: u64,
}

impl SessionHeader {
    /// Whether the session ran on the machine `name`: its hostname, or its whole machine id.
    pub fn ran_on(&self, name: &str) -> bool {
        self.hostname.as_deref() == Some(name)
            || self
                .machine_id
                .as_deref()
                .is_some_and(|id| id.eq_ignore_ascii_case(name))
    }
}

/// What a session holds of what grows while it is recorded ([`Store::session_progress`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionProgress {
    /// Its configurations and how each stopped (`None` while it is repeated).
    pub configurations: BTreeMap<Uuid, Option<StopReason>>,
    /// Its runs, warmups included, by their places (what tells two copies of a run apart,
    /// whatever their ids).
    pub runs: BTreeSet<RunPlace>,
}

impl SessionProgress {
    /// Whether `self` holds nothing that `later` lacks: every configuration and run, and no
    /// configuration stopped that `later` still repeats or stopped otherwise. A later state
    /// of a session covers every earlier one.
    pub fn covers(&self, earlier: &SessionProgress) -> bool {
        earlier.runs.is_subset(&self.runs)
            && earlier.configurations.iter().all(|(id, stopped)| {
                self.configurations
                    .get(id)
                    .is_some_and(|now| stopped.is_none() || now == stopped)
            })
    }
}

/// How far a session has been recorded ([`Store::session_mark`]), by configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionMark {
    pub configurations: BTreeMap<Uuid, ConfigurationMark>,
}

/// How far a configuration has been recorded: kept with every run stored (schema version 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigurationMark {
    /// How it stopped; `None` while it is repeated.
    pub stopped: Option<StopReason>,
    /// Its runs, warmups included.
    pub runs: u64,
    /// The end of its latest run (`None` without runs).
    pub last_run_ended_ns: Option<i64>,
}

/// What [`Import::extend`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extension {
    /// Whether the target held the session as still being recorded; if not, nothing changed.
    pub extended: bool,
    /// Configurations stored.
    pub configurations: usize,
    /// Runs stored, warmups included.
    pub runs: usize,
}

/// What [`Store::delete_sessions`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeleteReport {
    pub sessions: usize,
    pub configurations: usize,
    /// Runs, warmups included.
    pub runs: usize,
    /// Runs' monitor records (time series and summaries).
    pub monitor_records: usize,
    /// Kernel configuration texts that no remaining session refers to.
    pub kernel_configs: usize,
}

/// What [`Store::import_sessions`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Sessions stored.
    pub imported: usize,
    /// Sessions already present with the same content, left untouched.
    pub skipped: usize,
}
