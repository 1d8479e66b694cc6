//! The SQLite backend: one file, readable with any SQLite tool, schema in `docs/schema.md`.
//!
//! Durability and concurrency choices, each explained where it is made in [`SqliteStore::open`]:
//! WAL journal, `synchronous=FULL`, foreign keys on, a busy timeout with a bounded retry (see
//! [`LOCK_WAIT`]) and `BEGIN IMMEDIATE` for every write, so several vernier processes can record
//! into one file at once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{params, params_from_iter, Connection, ErrorCode, OpenFlags, OptionalExtension};
use rusqlite::{Row, TransactionBehavior};
use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, MetricInfo, RunRecord, Rusage, SessionInfo, SessionStatus, Settings,
    StopReason, StoredConfiguration, StoredSession,
};
use vernier_sys::process::ProcessIdentity;

use vernier_model::validate;

use crate::{DeleteReport, ImportReport, Store, StoreError};

/// The migrations, in order: migration `n` (from 1) takes the schema from version `n - 1` to
/// `n`. Never edit a released migration; add a new one (see docs/schema.md).
const MIGRATIONS: &[(&str, &str)] = &[
    ("initial", include_str!("../migrations/0001_initial.sql")),
    (
        "monitors_setup_findings",
        include_str!("../migrations/0002_monitors_setup_findings.sql"),
    ),
    (
        "session_owner",
        include_str!("../migrations/0003_session_owner.sql"),
    ),
    (
        "calibrations",
        include_str!("../migrations/0004_calibrations.sql"),
    ),
];

/// The schema version this build writes and understands (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// `PRAGMA application_id` of a vernier database: "vrnr" in ASCII. It lets `file(1)` and
/// vernier itself tell a vernier database from any other SQLite file
/// (https://www.sqlite.org/pragma.html#pragma_application_id).
const APPLICATION_ID: i64 = 0x7672_6e72;

/// How long one statement waits for another process's lock (SQLite's busy handler). A vernier
/// write is one run (microseconds to milliseconds of work), so this only runs out when
/// something holds the database for long: a large import, a backup, a `sqlite3` shell with an
/// open transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long an operation is retried, in all, while the database stays locked. The busy handler
/// does not cover every case: SQLite returns SQLITE_BUSY at once, without waiting, when a read
/// transaction would have to become a write transaction while another connection writes
/// (that is how it avoids deadlock, https://www.sqlite.org/c3ref/busy_handler.html), and the
/// switch to WAL on opening does exactly that. Such operations are retried after a short
/// pause; so are statements whose busy timeout ran out, until this much time has passed. Then
/// the operation fails with [`StoreError::Locked`], naming the file.
pub const LOCK_WAIT: Duration = Duration::from_secs(120);

/// Shortest id prefix a selector may give: shorter prefixes collide too soon to be useful.
const MIN_PREFIX_HEX_DIGITS: usize = 4;

const SELECTOR_FORMS: &str = "expected 'latest', 'latest~N', at least 4 hex digits of a \
     session id, or tags KEY=VALUE[,KEY=VALUE...]";

const SESSION_COLUMNS: &str = "id, started_at_ns, ended_at_ns, status, suite, specs, note, \
     settings, vernier_version, fingerprint, environment, findings, setup, monitors, owner_pid, \
     owner_boot_id, owner_start_ticks";

/// Results in an SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    lock_wait: Duration,
}

impl SqliteStore {
    /// Opens the database at `path`, creating it and its parent directories if needed, and
    /// brings its schema up to [`SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with_lock_wait(path, LOCK_WAIT)
    }

    /// [`SqliteStore::open`] waiting at most `lock_wait` (instead of [`LOCK_WAIT`]) for each
    /// operation that meets another process's lock.
    pub fn open_with_lock_wait(path: &Path, lock_wait: Duration) -> Result<Self, StoreError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        check_file(path, Existing::MayBeMissingOrEmpty)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
        Self::init(conn, path, lock_wait)
    }

    /// Opens an existing database for writing: a missing file is [`StoreError::Missing`]
    /// instead of a new empty database.
    pub fn open_existing(path: &Path) -> Result<Self, StoreError> {
        check_file(path, Existing::MayBeEmpty)?;
        // Without SQLITE_OPEN_CREATE, so a file removed in the meantime is still an error.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
        Self::init(conn, path, LOCK_WAIT)
    }

    /// Opens an existing database for commands that only read, without writing anything: not
    /// the file, not its directory, not even the `-wal` and `-shm` files of WAL mode. It works
    /// on a read-only file, directory or mount.
    ///
    /// A read-only connection to a WAL database still creates `-wal` and `-shm` files and
    /// leaves them behind (https://www.sqlite.org/wal.html#readonly). So: when a `-wal` file
    /// exists, a writer is at work (or crashed) and its log must be read, which a read-only
    /// connection does through the existing files with the usual locks. When none exists, every
    /// committed transaction is in the main file, and it is opened `immutable=1`
    /// (https://www.sqlite.org/uri.html#uriimmutable), which takes no locks and creates no file.
    /// A writer that starts meanwhile only appends to its own new log; the main file changes
    /// at a checkpoint, which SQLite runs after 1000 pages of log or when the writer closes.
    ///
    /// A database of an older schema version is copied into memory and migrated there, so
    /// reading it never upgrades the file.
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        check_file(path, Existing::Database)?;
        let mut wal = path.as_os_str().to_os_string();
        wal.push("-wal");
        let conn = if Path::new(&wal).exists() {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            Connection::open_with_flags(path, flags)
        } else {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            Connection::open_with_flags(immutable_uri(path), flags)
        }
        .map_err(|e| open_error(path, e))?;
        let open = |e| open_error(path, e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open)?;
        check_application_id(&conn, path)?;
        let found = user_version(&conn).map_err(open)?;
        check_version(&conn, path, found)?;
        if found == 0 {
            // A new database becomes one of vernier by its first write; to read, it is not one.
            return Err(StoreError::NotVernier {
                path: path.to_path_buf(),
                detail: "it has no vernier schema (schema version 0)".to_string(),
            });
        }
        if found == SCHEMA_VERSION {
            return Ok(SqliteStore {
                conn,
                path: path.to_path_buf(),
                lock_wait: LOCK_WAIT,
            });
        }
        // Older: migrate a copy in memory (https://www.sqlite.org/backup.html).
        let mut memory = Connection::open_in_memory().map_err(open)?;
        {
            let backup = rusqlite::backup::Backup::new(&conn, &mut memory).map_err(open)?;
            backup
                .run_to_completion(1024, Duration::ZERO, None)
                .map_err(open)?;
        }
        migrate(&mut memory, path)?;
        Ok(SqliteStore {
            conn: memory,
            path: path.to_path_buf(),
            lock_wait: LOCK_WAIT,
        })
    }

    /// The file this store writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn init(mut conn: Connection, path: &Path, lock_wait: Duration) -> Result<Self, StoreError> {
        // Set first: every later statement, including the journal-mode switch and the
        // migration, may meet another process's lock.
        conn.busy_timeout(BUSY_TIMEOUT.min(lock_wait))
            .map_err(|e| open_error(path, e))?;
        // Every step is idempotent, so all of them are retried together.
        retry_while_locked(path, lock_wait, || Self::prepare(&mut conn, path))?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
            lock_wait,
        })
    }

    /// Checks that the file is a vernier database, sets the connection up and migrates.
    fn prepare(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
        let open = |e| open_error(path, e);
        check_application_id(conn, path)?;
        // WAL: readers (`show`, `report`) never block the writer of a running session, and a
        // commit appends to the log instead of rewriting pages
        // (https://www.sqlite.org/wal.html). The mode is persistent in the file. Where WAL is
        // impossible (a file system without shared memory) SQLite keeps the rollback journal,
        // which is slower under concurrency but equally correct, so the answer is not checked.
        // On a new file the switch meets the other openers' switch and migration, and fails at
        // once with SQLITE_BUSY instead of waiting: the caller retries (see [`LOCK_WAIT`]).
        let _mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(open)?;
        // synchronous=FULL: in WAL mode NORMAL survives an application crash but may lose the
        // last commits on power loss or an OS crash (https://www.sqlite.org/pragma.html
        // #pragma_synchronous). vernier's users benchmark experimental kernels, and a kernel
        // panic is exactly that case; FULL fsyncs the WAL at each commit so a run, once
        // recorded, survives it. The cost is one fsync per run, between runs, never inside one.
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open)?;
        // Off by default in SQLite, per connection (https://www.sqlite.org/foreignkeys.html).
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open)?;
        migrate(conn, path)
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction and commits. IMMEDIATE takes the write
    /// lock at the start, waiting through the busy timeout; a deferred transaction that upgrades
    /// from read to write would instead fail at once with SQLITE_BUSY when another connection
    /// wrote in between (https://www.sqlite.org/lang_transaction.html).
    ///
    /// A transaction that meets a lock past the busy timeout is rolled back and retried whole
    /// (see [`LOCK_WAIT`]).
    fn write<T>(
        &mut self,
        f: impl Fn(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // Inside an enclosing transaction ([`Store::import_sessions`]) the write joins it: the
        // enclosing one commits or rolls back everything at once.
        if !self.conn.is_autocommit() {
            return f(&self.conn);
        }
        let conn = &mut self.conn;
        retry_while_locked(&self.path, self.lock_wait, || {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        })
    }

    /// Runs `f` in one read transaction, so its queries see one snapshot of the database even
    /// while another process writes.
    fn read<T>(&self, f: impl Fn(&Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
        retry_while_locked(&self.path, self.lock_wait, || {
            let tx = self.conn.unchecked_transaction()?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        })
    }

    /// Ends a session that this process cannot finish the ordinary way (it is about to exit at
    /// once, on a repeated Ctrl-C): a session still `running` gets `status` and its end time,
    /// and its configurations that have not stopped stop as interrupted. Returns whether the
    /// session was still running.
    pub fn end_running_session(
        &mut self,
        session: Uuid,
        status: SessionStatus,
        ended_at_ns: i64,
    ) -> Result<bool, StoreError> {
        let id = session.to_string();
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE sessions SET status = ?2, ended_at_ns = ?3 \
                 WHERE id = ?1 AND status = 'running'",
                params![id, status.as_str(), ended_at_ns],
            )?;
            if changed > 0 {
                tx.execute(
                    "UPDATE configurations SET stop_reason = ?2 \
                     WHERE session_id = ?1 AND stop_reason IS NULL",
                    params![id, StopReason::Interrupted.as_str()],
                )?;
            }
            Ok(changed > 0)
        })
    }
}

/// Whether `e` is SQLITE_BUSY: another connection holds a lock this operation needs.
fn is_busy(e: &StoreError) -> bool {
    let source = match e {
        StoreError::Database(source) | StoreError::Open { source, .. } => source,
        _ => return false,
    };
    source.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
}

/// Runs `op` until it does not fail with SQLITE_BUSY, for at most `wait` in all, pausing
/// between attempts (1 ms, doubling up to 100 ms). Then fails with [`StoreError::Locked`].
fn retry_while_locked<T>(
    path: &Path,
    wait: Duration,
    mut op: impl FnMut() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match op() {
            Err(e) if is_busy(&e) => {
                let waited = start.elapsed();
                if waited >= wait {
                    return Err(StoreError::Locked {
                        path: path.to_path_buf(),
                        waited,
                    });
                }
                std::thread::sleep(pause.min(wait - waited));
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

fn open_error(path: &Path, source: rusqlite::Error) -> StoreError {
    if source.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) {
        return StoreError::NotDatabase {
            path: path.to_path_buf(),
            what: "not an SQLite database".to_string(),
        };
    }
    StoreError::Open {
        path: path.to_path_buf(),
        source,
    }
}

/// What a path must be before SQLite opens it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Existing {
    /// A database to read: missing or empty is an error.
    Database,
    /// A database to write to: an empty file is a new database. Another vernier process that
    /// creates the file holds it empty until its first commit, so an empty file is accepted.
    MayBeEmpty,
    /// Where a database may be created.
    MayBeMissingOrEmpty,
}

/// A directory or other non-file is never taken for a database; an empty file (which SQLite
/// would make a new database) or a missing one only where `existing` allows it.
fn check_file(path: &Path, existing: Existing) -> Result<(), StoreError> {
    let not = |what: &str| StoreError::NotDatabase {
        path: path.to_path_buf(),
        what: what.to_string(),
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(not("a directory")),
        Ok(m) if !m.is_file() => Err(not("not a regular file")),
        Ok(m) if m.len() == 0 && existing == Existing::Database => Err(not("an empty file")),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if existing == Existing::MayBeMissingOrEmpty {
                Ok(())
            } else {
                Err(StoreError::Missing {
                    path: path.to_path_buf(),
                })
            }
        }
        Err(source) => Err(StoreError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// `file:PATH?immutable=1`, with the characters that have a meaning in an SQLite URI
/// (`%`, `?`, `#`) percent-encoded (https://www.sqlite.org/uri.html).
fn immutable_uri(path: &Path) -> PathBuf {
    use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
    let mut uri = b"file:".to_vec();
    // An absolute path keeps a leading `//` from reading as an authority.
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    for &b in absolute.as_os_str().as_bytes() {
        match b {
            b'%' | b'?' | b'#' => uri.extend(format!("%{b:02X}").bytes()),
            _ => uri.push(b),
        }
    }
    uri.extend(b"?immutable=1");
    PathBuf::from(std::ffi::OsString::from_vec(uri))
}

/// The first read of the header: a file that is not SQLite fails here.
fn check_application_id(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let app_id: i64 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(|e| open_error(path, e))?;
    if app_id != 0 && app_id != APPLICATION_ID {
        return Err(StoreError::NotVernier {
            path: path.to_path_buf(),
            detail: format!("application_id is {app_id:#x}"),
        });
    }
    Ok(())
}

/// Refuses a schema version this build cannot read: newer, negative, or 0 with tables.
fn check_version(conn: &Connection, path: &Path, found: i64) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    if found < 0 {
        return Err(StoreError::Schema {
            path: path.to_path_buf(),
            detail: format!(
                "schema version {found} is not one vernier writes (1 to {SCHEMA_VERSION})"
            ),
        });
    }
    if found == 0 {
        // Version 0 is a new file, unless someone else's tables are in it.
        let objects: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| open_error(path, e))?;
        if objects > 0 {
            return Err(StoreError::NotVernier {
                path: path.to_path_buf(),
                detail: format!("it holds {objects} schema objects but no schema version"),
            });
        }
    }
    Ok(())
}

/// The one-line message of an SQLite error, without the SQL text that rusqlite appends to a
/// syntax or schema error (a whole migration script).
fn sqlite_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        other => other
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
    }
}

fn user_version(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

/// Applies the missing migrations in one IMMEDIATE transaction: either the schema reaches
/// [`SCHEMA_VERSION`] or nothing changes. Two processes opening a new file at once serialize on
/// the write lock, and the second finds the work done.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let found = user_version(conn).map_err(|e| open_error(path, e))?;
    check_version(conn, path, found)?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have migrated or written meanwhile: check again under the lock.
    let found = user_version(&tx)?;
    check_version(&tx, path, found)?;
    for (index, (name, sql)) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if version <= found {
            continue;
        }
        tx.execute_batch(sql).map_err(|e| StoreError::Schema {
            path: path.to_path_buf(),
            detail: format!(
                "migration {version:04} ({name}) from schema version {} failed: {}",
                version - 1,
                sqlite_message(&e)
            ),
        })?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.commit()?;
    Ok(())
}

/// What a session selector names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selector {
    /// `latest` (0) or `latest~N` (N).
    Latest(usize),
    Id(Uuid),
    /// Lowercase hex digits that start a session id (hyphens removed).
    Prefix(String),
}

fn parse_selector(selector: &str) -> Result<Selector, StoreError> {
    let invalid = || StoreError::NotFound {
        selector: selector.to_string(),
        detail: SELECTOR_FORMS.to_string(),
    };
    let text = selector.trim();
    if text == "latest" {
        return Ok(Selector::Latest(0));
    }
    if let Some(n) = text.strip_prefix("latest~") {
        return n.parse().map(Selector::Latest).map_err(|_| invalid());
    }
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(Selector::Id(id));
    }
    // Hyphens are ignored so a prefix copied from either UUID form matches.
    let digits: String = text
        .chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if digits.len() >= MIN_PREFIX_HEX_DIGITS && digits.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(Selector::Prefix(digits))
    } else {
        Err(invalid())
    }
}

/// The tags of a tag selector, or `None` for a selector of one session (`latest`, an id).
///
/// Grammar: a selector with an `=` outside an escape is a list of `KEY=VALUE` terms separated
/// by commas; a session carries all of them to be selected. Keys end at the first `=`; values
/// may hold further `=`. In keys and values, `\,` stands for a comma, `\=` for an equals sign
/// and `\\` for a backslash, so a tag `kernel=6.18,rc1` is selected by `kernel=6.18\,rc1`.
/// A backslash before any other character stands for itself. Spaces around keys and values
/// are dropped, as `--tag` drops them.
pub fn parse_tag_selector(selector: &str) -> Result<Option<Vec<(String, String)>>, StoreError> {
    let invalid = |detail: String| StoreError::NotFound {
        selector: selector.to_string(),
        detail,
    };
    // Split into terms at unescaped commas, and each term at its first unescaped `=`.
    let mut terms: Vec<(String, Option<String>)> = vec![(String::new(), None)];
    let mut any_equals = false;
    let mut chars = selector.chars();
    while let Some(c) = chars.next() {
        let Some((key, value)) = terms.last_mut() else {
            break;
        };
        let in_key = value.is_none();
        let current = value.as_mut().unwrap_or(key);
        match c {
            '\\' => match chars.next() {
                Some(e @ (',' | '=' | '\\')) => current.push(e),
                Some(other) => {
                    current.push('\\');
                    current.push(other);
                }
                None => current.push('\\'),
            },
            ',' => terms.push((String::new(), None)),
            '=' if in_key => {
                any_equals = true;
                *value = Some(String::new());
            }
            other => current.push(other),
        }
    }
    if !any_equals {
        return Ok(None);
    }
    let mut tags = Vec::with_capacity(terms.len());
    for (key, value) in terms {
        match value {
            Some(value) if !key.trim().is_empty() => {
                tags.push((key.trim().to_string(), value.trim().to_string()));
            }
            _ => {
                return Err(invalid(format!(
                    "'{key}' is not KEY=VALUE (a comma inside a key or value is written \\,)"
                )))
            }
        }
    }
    Ok(Some(tags))
}

fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

fn parse_uuid(text: &str) -> Result<Uuid, StoreError> {
    Uuid::parse_str(text).map_err(|e| corrupt(format!("id '{text}': {e}")))
}

/// Encodes a value as JSON text. A macro rather than a generic function, so this crate needs
/// no direct dependency on serde.
macro_rules! to_json {
    ($what:expr, $value:expr) => {
        serde_json::to_string($value).map_err(|e| StoreError::Invalid(format!("{}: {e}", $what)))
    };
}

macro_rules! from_json {
    ($what:expr, $text:expr) => {
        serde_json::from_str($text).map_err(|e| corrupt(format!("{}: {e}", $what)))
    };
}

/// Settings as stored, completed with today's defaults for fields added after the session was
/// recorded (the environment does the same through `#[serde(default)]`).
fn decode_settings(text: &str) -> Result<Settings, StoreError> {
    let stored: serde_json::Value = from_json!("settings", text)?;
    let mut merged = serde_json::to_value(Settings::default()).map_err(corrupt)?;
    match (&mut merged, stored) {
        (serde_json::Value::Object(merged), serde_json::Value::Object(stored)) => {
            // An old session's interval is the fixed-n one, not today's default: serde's
            // field default says so when the field is absent.
            merged.remove("stopping_rule");
            merged.extend(stored);
        }
        _ => return Err(corrupt("settings: not a JSON object")),
    }
    serde_json::from_value(merged).map_err(|e| corrupt(format!("settings: {e}")))
}

fn parse_text<T: std::str::FromStr<Err = String>>(what: &str, text: &str) -> Result<T, StoreError> {
    text.parse().map_err(|e| corrupt(format!("{what}: {e}")))
}

/// A session row, before its text is decoded.
struct SessionRow {
    id: String,
    started_at_ns: i64,
    ended_at_ns: Option<i64>,
    status: String,
    suite: Option<String>,
    specs: String,
    note: Option<String>,
    settings: String,
    vernier_version: String,
    fingerprint: String,
    environment: String,
    findings: String,
    setup: String,
    monitors: String,
    owner: Option<ProcessIdentity>,
}

impl SessionRow {
    /// Reads the columns of [`SESSION_COLUMNS`].
    fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(SessionRow {
            id: row.get(0)?,
            started_at_ns: row.get(1)?,
            ended_at_ns: row.get(2)?,
            status: row.get(3)?,
            suite: row.get(4)?,
            specs: row.get(5)?,
            note: row.get(6)?,
            settings: row.get(7)?,
            vernier_version: row.get(8)?,
            fingerprint: row.get(9)?,
            environment: row.get(10)?,
            findings: row.get(11)?,
            setup: row.get(12)?,
            monitors: row.get(13)?,
            owner: row.get::<_, Option<i64>>(14)?.map(|pid| ProcessIdentity {
                // The column's CHECK keeps it positive; a pid is at most 2^22 (proc(5)).
                pid: u32::try_from(pid).unwrap_or(u32::MAX),
                boot_id: row.get(15).ok().flatten(),
                start_ticks: row
                    .get::<_, Option<i64>>(16)
                    .ok()
                    .flatten()
                    .and_then(|t| u64::try_from(t).ok()),
            }),
        })
    }

    /// The status as stored, except that a `running` session whose recording process is gone
    /// (or unknown: recorded before schema version 3, or imported) is `abandoned`.
    fn status(&self) -> Result<SessionStatus, StoreError> {
        let stored = parse_text("session status", &self.status)?;
        let alive = || self.owner.as_ref().is_some_and(ProcessIdentity::is_alive);
        Ok(match stored {
            SessionStatus::Running if !alive() => SessionStatus::Abandoned,
            other => other,
        })
    }

    fn decode(self, tags: BTreeMap<String, String>) -> Result<SessionInfo, StoreError> {
        Ok(SessionInfo {
            status: self.status()?,
            id: parse_uuid(&self.id)?,
            started_at_ns: self.started_at_ns,
            ended_at_ns: self.ended_at_ns,
            suite: self.suite,
            specs: from_json!("specs", &self.specs)?,
            tags,
            note: self.note,
            settings: decode_settings(&self.settings)?,
            vernier_version: self.vernier_version,
            environment: from_json!("environment", &self.environment)?,
            fingerprint: self.fingerprint,
            findings: from_json!("findings", &self.findings)?,
            setup: from_json!("setup", &self.setup)?,
            monitors: from_json!("monitors", &self.monitors)?,
        })
    }
}

/// A configuration row, before its text is decoded.
struct ConfigurationRow {
    id: String,
    position: u32,
    benchmark: String,
    benchmark_version: String,
    options: String,
    metric: String,
    unit: String,
    higher_is_better: bool,
    stop_reason: Option<String>,
    converged: bool,
    error: Option<String>,
}

impl ConfigurationRow {
    fn decode(self) -> Result<(String, ConfigurationRecord), StoreError> {
        let record = ConfigurationRecord {
            id: parse_uuid(&self.id)?,
            position: self.position,
            benchmark: self.benchmark,
            benchmark_version: self.benchmark_version,
            options: from_json!("options", &self.options)?,
            metric: MetricInfo {
                name: self.metric,
                unit: self.unit,
                higher_is_better: self.higher_is_better,
            },
            stop_reason: self
                .stop_reason
                .map(|s| parse_text::<StopReason>("stop reason", &s))
                .transpose()?,
            converged: self.converged,
            error: self.error,
        };
        Ok((self.id, record))
    }
}

fn session_tags(
    conn: &Connection,
    session: Option<&str>,
) -> Result<HashMap<String, BTreeMap<String, String>>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT session_id, key, value FROM session_tags WHERE ?1 IS NULL OR session_id = ?1",
    )?;
    let rows = stmt.query_map([session], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    let mut tags: HashMap<String, BTreeMap<String, String>> = HashMap::new();
    for row in rows {
        let (session, key, value) = row?;
        tags.entry(session).or_default().insert(key, value);
    }
    Ok(tags)
}

fn ensure_exists(
    conn: &Connection,
    table: &'static str,
    what: &'static str,
    id: Uuid,
) -> Result<(), StoreError> {
    // `table` is one of our own names, never input.
    let sql = format!("SELECT 1 FROM {table} WHERE id = ?1");
    let found: Option<i64> = conn
        .prepare_cached(&sql)?
        .query_row([id.to_string()], |r| r.get(0))
        .optional()?;
    match found {
        Some(_) => Ok(()),
        None => Err(StoreError::Unknown { what, id }),
    }
}

/// A whole session, read with `tx` (a read transaction, or the import's write transaction).
fn load_session_in(tx: &Connection, id: Uuid) -> Result<StoredSession, StoreError> {
    let key = id.to_string();
    let row = tx
        .query_row(
            &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"),
            [&key],
            SessionRow::from_row,
        )
        .optional()?
        .ok_or(StoreError::Unknown {
            what: "session",
            id,
        })?;
    let tags = session_tags(tx, Some(&key))?
        .remove(&key)
        .unwrap_or_default();
    let info = row.decode(tags)?;

    let mut stmt = tx.prepare(
        "SELECT id, position, benchmark, benchmark_version, options, metric, unit, \
                 higher_is_better, stop_reason, converged, error \
                 FROM configurations WHERE session_id = ?1 ORDER BY position",
    )?;
    let rows = stmt.query_map([&key], |r| {
        Ok(ConfigurationRow {
            id: r.get(0)?,
            position: r.get(1)?,
            benchmark: r.get(2)?,
            benchmark_version: r.get(3)?,
            options: r.get(4)?,
            metric: r.get(5)?,
            unit: r.get(6)?,
            higher_is_better: r.get(7)?,
            stop_reason: r.get(8)?,
            converged: r.get(9)?,
            error: r.get(10)?,
        })
    })?;
    let mut configurations = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for row in rows {
        let (row_id, record) = row?.decode()?;
        by_id.insert(row_id, configurations.len());
        configurations.push(StoredConfiguration {
            record,
            runs: Vec::new(),
        });
    }

    let mut values: HashMap<String, BTreeMap<String, f64>> = HashMap::new();
    let mut stmt = tx.prepare(
        "SELECT v.run_id, v.metric, v.value FROM run_values v \
                 JOIN runs r ON r.id = v.run_id \
                 JOIN configurations c ON c.id = r.configuration_id \
                 WHERE c.session_id = ?1",
    )?;
    let rows = stmt.query_map([&key], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, f64>(2)?,
        ))
    })?;
    for row in rows {
        let (run, metric, value) = row?;
        values.entry(run).or_default().insert(metric, value);
    }

    // Execution order: by start time; a warmup and a measured run that started in the
    // same nanosecond (a coarse clock) keep warmup first, then index order.
    let mut stmt = tx.prepare(
        "SELECT r.id, r.configuration_id, r.idx, r.warmup, r.round, \
                 r.preceding_executions, r.started_at_ns, r.ended_at_ns, r.user_cpu_ns, \
                 r.system_cpu_ns, r.voluntary_cs, r.involuntary_cs, r.max_rss_bytes, \
                 r.foreign_cpu_ns, r.controller_cpu_ns, r.setup_steps, m.data \
                 FROM runs r JOIN configurations c ON c.id = r.configuration_id \
                 LEFT JOIN run_monitors m ON m.run_id = r.id \
                 WHERE c.session_id = ?1 \
                 ORDER BY r.started_at_ns, r.warmup DESC, r.idx, r.rowid",
    )?;
    let rows = stmt.query_map([&key], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(15)?,
            r.get::<_, Option<String>>(16)?,
            RunRecord {
                id: Uuid::nil(),
                index: r.get(2)?,
                warmup: r.get(3)?,
                round: r.get(4)?,
                preceding_executions: r.get(5)?,
                started_at_ns: r.get(6)?,
                ended_at_ns: r.get(7)?,
                values: BTreeMap::new(),
                rusage: Rusage {
                    user_cpu_ns: r.get(8)?,
                    system_cpu_ns: r.get(9)?,
                    voluntary_cs: r.get(10)?,
                    involuntary_cs: r.get(11)?,
                    max_rss_bytes: r.get(12)?,
                },
                foreign_cpu_ns: r.get(13)?,
                controller_cpu_ns: r.get(14)?,
                monitors: None,
                setup_steps: Vec::new(),
            },
        ))
    })?;
    for row in rows {
        let (run_id, configuration_id, setup_steps, monitors, mut run) = row?;
        run.id = parse_uuid(&run_id)?;
        run.setup_steps = from_json!("setup steps", &setup_steps)?;
        run.monitors = match monitors {
            Some(text) => Some(from_json!("monitors", &text)?),
            None => None,
        };
        run.values = values.remove(&run_id).unwrap_or_default();
        let slot = by_id
            .get(&configuration_id)
            .copied()
            .ok_or_else(|| corrupt(format!("run {run_id} of unknown configuration")))?;
        configurations[slot].runs.push(run);
    }
    Ok(StoredSession {
        info,
        configurations,
    })
}

impl SqliteStore {
    /// Inserts a session row with its tags; `owner` is the process recording it (none for an
    /// import: no process here records it).
    fn insert_session(
        &mut self,
        session: &SessionInfo,
        owner: Option<&ProcessIdentity>,
    ) -> Result<(), StoreError> {
        let specs = to_json!("specs", &session.specs)?;
        let settings = to_json!("settings", &session.settings)?;
        let environment = to_json!("environment", &session.environment)?;
        let findings = to_json!("findings", &session.findings)?;
        let setup = to_json!("setup", &session.setup)?;
        let monitors = to_json!("monitors", &session.monitors)?;
        let id = session.id.to_string();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO sessions (id, started_at_ns, ended_at_ns, status, suite, specs, \
                 note, settings, vernier_version, fingerprint, environment, findings, setup, \
                 monitors, owner_pid, owner_boot_id, owner_start_ticks) VALUES (?1, ?2, ?3, \
                 ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                params![
                    id,
                    session.started_at_ns,
                    session.ended_at_ns,
                    session.status.as_str(),
                    session.suite,
                    specs,
                    session.note,
                    settings,
                    session.vernier_version,
                    session.fingerprint,
                    environment,
                    findings,
                    setup,
                    monitors,
                    owner.map(|o| o.pid),
                    owner.and_then(|o| o.boot_id.as_deref()),
                    owner
                        .and_then(|o| o.start_ticks)
                        .and_then(|t| i64::try_from(t).ok()),
                ],
            )?;
            let mut stmt = tx
                .prepare("INSERT INTO session_tags (session_id, key, value) VALUES (?1, ?2, ?3)")?;
            for (key, value) in &session.tags {
                stmt.execute(params![id, key, value])?;
            }
            Ok(())
        })
    }
}

impl Store for SqliteStore {
    fn begin_session(&mut self, session: &SessionInfo) -> Result<(), StoreError> {
        // This process records the session: while it lives, the session is `running`.
        let owner = ProcessIdentity::current();
        self.insert_session(session, Some(&owner))
    }

    fn add_configuration(
        &mut self,
        session: Uuid,
        configuration: &ConfigurationRecord,
    ) -> Result<(), StoreError> {
        // A BTreeMap serializes with its keys sorted, so equal options give equal text.
        let options = to_json!("options", &configuration.options)?;
        self.write(|tx| {
            ensure_exists(tx, "sessions", "session", session)?;
            tx.execute(
                "INSERT INTO configurations (id, session_id, position, benchmark, \
                 benchmark_version, options, metric, unit, higher_is_better, stop_reason, \
                 converged, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    configuration.id.to_string(),
                    session.to_string(),
                    configuration.position,
                    configuration.benchmark,
                    configuration.benchmark_version,
                    options,
                    configuration.metric.name,
                    configuration.metric.unit,
                    configuration.metric.higher_is_better,
                    configuration.stop_reason.map(StopReason::as_str),
                    configuration.converged,
                    configuration.error,
                ],
            )?;
            Ok(())
        })
    }

    fn add_run(&mut self, configuration: Uuid, run: &RunRecord) -> Result<(), StoreError> {
        // SQLite stores a NaN as NULL (https://www.sqlite.org/floatingpoint.html), which would
        // silently turn a broken measurement into a missing one.
        if let Some((metric, _)) = run.values.iter().find(|(_, v)| v.is_nan()) {
            return Err(StoreError::Invalid(format!(
                "run {}: metric '{metric}' is NaN",
                run.id
            )));
        }
        let id = run.id.to_string();
        let setup_steps = to_json!("setup steps", &run.setup_steps)?;
        let monitors = match &run.monitors {
            Some(m) => Some(to_json!("monitors", m)?),
            None => None,
        };
        self.write(|tx| {
            ensure_exists(tx, "configurations", "configuration", configuration)?;
            // Cached statements: an import adds a million runs in one go.
            tx.prepare_cached(
                "INSERT INTO runs (id, configuration_id, idx, warmup, round, \
                 preceding_executions, started_at_ns, ended_at_ns, user_cpu_ns, system_cpu_ns, \
                 voluntary_cs, involuntary_cs, max_rss_bytes, foreign_cpu_ns, controller_cpu_ns, \
                 setup_steps) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            )?
            .execute(params![
                id,
                configuration.to_string(),
                run.index,
                run.warmup,
                run.round,
                run.preceding_executions,
                run.started_at_ns,
                run.ended_at_ns,
                run.rusage.user_cpu_ns,
                run.rusage.system_cpu_ns,
                run.rusage.voluntary_cs,
                run.rusage.involuntary_cs,
                run.rusage.max_rss_bytes,
                run.foreign_cpu_ns,
                run.controller_cpu_ns,
                setup_steps,
            ])?;
            if let (Some(data), Some(m)) = (&monitors, &run.monitors) {
                tx.execute(
                    "INSERT INTO run_monitors (run_id, data) VALUES (?1, ?2)",
                    params![id, data],
                )?;
                let mut stmt = tx.prepare(
                    "INSERT INTO run_monitor_summary (run_id, key, value) VALUES (?1, ?2, ?3)",
                )?;
                for (key, value) in m.summary.iter().filter(|(_, v)| v.is_finite()) {
                    stmt.execute(params![id, key, value])?;
                }
            }
            let mut stmt = tx.prepare_cached(
                "INSERT INTO run_values (run_id, metric, value) VALUES (?1, ?2, ?3)",
            )?;
            for (metric, value) in &run.values {
                stmt.execute(params![id, metric, stored_value(*value)])?;
            }
            Ok(())
        })
    }

    fn finish_configuration(
        &mut self,
        configuration: Uuid,
        reason: StopReason,
        converged: bool,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE configurations SET stop_reason = ?2, converged = ?3, error = ?4 \
                 WHERE id = ?1",
                params![configuration.to_string(), reason.as_str(), converged, error],
            )?;
            if changed == 0 {
                return Err(StoreError::Unknown {
                    what: "configuration",
                    id: configuration,
                });
            }
            Ok(())
        })
    }

    fn finish_session(
        &mut self,
        session: Uuid,
        status: SessionStatus,
        ended_at_ns: i64,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE sessions SET status = ?2, ended_at_ns = ?3 WHERE id = ?1",
                params![session.to_string(), status.as_str(), ended_at_ns],
            )?;
            if changed == 0 {
                return Err(StoreError::Unknown {
                    what: "session",
                    id: session,
                });
            }
            Ok(())
        })
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        self.read(|tx| {
            let mut tags = session_tags(tx, None)?;
            let mut stmt = tx.prepare(&format!(
                "SELECT {SESSION_COLUMNS} FROM sessions ORDER BY started_at_ns, rowid"
            ))?;
            let rows = stmt.query_map([], SessionRow::from_row)?;
            let mut sessions = Vec::new();
            for row in rows {
                let row = row?;
                let tags = tags.remove(&row.id).unwrap_or_default();
                sessions.push(row.decode(tags)?);
            }
            Ok(sessions)
        })
    }

    fn resolve(&self, selector: &str) -> Result<Uuid, StoreError> {
        let parsed = parse_selector(selector)?;
        let not_found = |detail: String| StoreError::NotFound {
            selector: selector.to_string(),
            detail,
        };
        self.read(|tx| match parsed.clone() {
            Selector::Latest(back) => {
                // Ties in start time (coarse clocks, imports) fall back to insertion order.
                let id: Option<String> = tx
                    .query_row(
                        "SELECT id FROM sessions ORDER BY started_at_ns DESC, rowid DESC \
                         LIMIT 1 OFFSET ?1",
                        [back as i64],
                        |r| r.get(0),
                    )
                    .optional()?;
                match id {
                    Some(id) => parse_uuid(&id),
                    None => {
                        let count: i64 =
                            tx.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))?;
                        Err(not_found(format!("the database holds {count} session(s)")))
                    }
                }
            }
            Selector::Id(id) => {
                ensure_exists(tx, "sessions", "session", id)
                    .map_err(|_| not_found("no session has this id".to_string()))?;
                Ok(id)
            }
            Selector::Prefix(digits) => {
                // The prefix holds only hex digits, so it has no GLOB metacharacters.
                let mut stmt =
                    tx.prepare("SELECT id FROM sessions WHERE replace(id, '-', '') GLOB ?1")?;
                let ids = stmt
                    .query_map([format!("{digits}*")], |r| r.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()?;
                match ids.as_slice() {
                    [id] => parse_uuid(id),
                    [] => Err(not_found(format!("no session id starts with {digits}"))),
                    _ => Err(StoreError::Ambiguous {
                        selector: selector.to_string(),
                        count: ids.len(),
                    }),
                }
            }
        })
    }

    fn load_session(&self, id: Uuid) -> Result<StoredSession, StoreError> {
        self.read(|tx| load_session_in(tx, id))
    }

    fn put_kernel_config(&mut self, sha256: &str, text: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "INSERT OR IGNORE INTO kernel_configs (sha256, text) VALUES (?1, ?2)",
                params![sha256, text],
            )?;
            Ok(())
        })
    }

    fn kernel_config(&self, sha256: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT text FROM kernel_configs WHERE sha256 = ?1",
                [sha256],
                |r| r.get(0),
            )
            .optional()?)
    }

    fn find_sessions_by_tags(&self, tags: &[(String, String)]) -> Result<Vec<Uuid>, StoreError> {
        // Duplicates would break nothing in the query, but the set keeps it short.
        let wanted: BTreeSet<&(String, String)> = tags.iter().collect();
        let mut sql = String::from("SELECT id FROM sessions");
        let mut bound: Vec<&str> = Vec::new();
        for (i, (key, value)) in wanted.iter().enumerate() {
            sql.push_str(if i == 0 { " WHERE " } else { " AND " });
            // Each term is an index lookup on session_tags (key, value, session_id).
            sql.push_str(&format!(
                "id IN (SELECT session_id FROM session_tags WHERE key = ?{} AND value = ?{})",
                2 * i + 1,
                2 * i + 2
            ));
            bound.push(key);
            bound.push(value);
        }
        sql.push_str(" ORDER BY started_at_ns, rowid");
        self.read(|tx| {
            let mut stmt = tx.prepare(&sql)?;
            let ids = stmt
                .query_map(params_from_iter(bound.iter()), |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            ids.iter().map(|id| parse_uuid(id)).collect()
        })
    }

    fn delete_session(&mut self, id: Uuid) -> Result<(), StoreError> {
        self.write(|tx| {
            // Configurations, runs, values and tags go by ON DELETE CASCADE.
            let changed = tx.execute("DELETE FROM sessions WHERE id = ?1", [id.to_string()])?;
            if changed == 0 {
                return Err(StoreError::Unknown {
                    what: "session",
                    id,
                });
            }
            Ok(())
        })
    }

    fn import_sessions(
        &mut self,
        sessions: &[StoredSession],
        kernel_configs: &BTreeMap<String, String>,
    ) -> Result<ImportReport, StoreError> {
        // Checked before the transaction starts: an invalid file takes no lock.
        validate::check_sessions(sessions).map_err(|e| StoreError::Invalid(e.to_string()))?;
        validate::check_kernel_configs(kernel_configs)
            .map_err(|e| StoreError::Invalid(e.to_string()))?;
        // The pages one transaction changes stay in memory until the commit; with SQLite's
        // default cache (2 MiB) a large import spills them to the WAL and reads them back for
        // every later insertion into the same B-trees, which made the time grow faster than
        // the file. The cache grows with the import (about 1 KiB per run, the pages of its
        // rows and index entries) and is restored afterwards
        // (https://www.sqlite.org/pragma.html#pragma_cache_size).
        let runs: usize = sessions
            .iter()
            .flat_map(|s| &s.configurations)
            .map(|c| c.runs.len())
            .sum();
        let previous_cache: i64 = self
            .conn
            .pragma_query_value(None, "cache_size", |r| r.get(0))?;
        // Negative: a size in KiB.
        let wanted_kib = i64::try_from(runs).unwrap_or(i64::MAX).saturating_add(2048);
        self.conn.pragma_update(None, "cache_size", -wanted_kib)?;
        let result = self.import_whole(sessions, kernel_configs);
        self.conn
            .pragma_update(None, "cache_size", previous_cache)?;
        result
    }
}

impl SqliteStore {
    /// [`Store::import_sessions`] after the checks: one transaction.
    fn import_whole(
        &mut self,
        sessions: &[StoredSession],
        kernel_configs: &BTreeMap<String, String>,
    ) -> Result<ImportReport, StoreError> {
        // One IMMEDIATE transaction around the ordinary writes (which join it, see `write`):
        // an import is stored whole or not at all, and the rows are exactly those a recording
        // session writes.
        retry_while_locked(&self.path, self.lock_wait, || {
            Ok(self.conn.execute_batch("BEGIN IMMEDIATE")?)
        })?;
        match self.import_in_transaction(sessions, kernel_configs) {
            Ok(report) => {
                if let Err(e) = self.conn.execute_batch("COMMIT") {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    return Err(e.into());
                }
                Ok(report)
            }
            Err(e) => {
                // The error to report is the first one; a failing rollback changes nothing
                // (SQLite rolls back an unfinished transaction when the connection closes).
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }
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

impl SqliteStore {
    fn import_in_transaction(
        &mut self,
        sessions: &[StoredSession],
        kernel_configs: &BTreeMap<String, String>,
    ) -> Result<ImportReport, StoreError> {
        let mut report = ImportReport::default();
        for (sha256, text) in kernel_configs {
            self.put_kernel_config(sha256, text)?;
        }
        for session in sessions {
            let id = session.info.id;
            let exists: Option<i64> = self
                .conn
                .query_row(
                    "SELECT 1 FROM sessions WHERE id = ?1",
                    [id.to_string()],
                    |r| r.get(0),
                )
                .optional()?;
            if exists.is_some() {
                // Stored values are what the store keeps of the file's ones (-0.0 as 0.0,
                // see `add_run`), so the file's session is compared as it would be stored.
                let mut stored = load_session_in(&self.conn, id)?;
                // A session imported as running has no process here and reads as abandoned:
                // that is the same content.
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
                report.skipped += 1;
                continue;
            }
            self.insert_session(&session.info, None)?;
            for config in &session.configurations {
                self.add_configuration(id, &config.record).map_err(|e| {
                    if is_duplicate_key(&e) {
                        StoreError::Conflict(format!(
                            "configuration {} of session {id} is already stored in another \
                             session",
                            config.record.id
                        ))
                    } else {
                        e
                    }
                })?;
                for run in &config.runs {
                    self.add_run(config.record.id, run).map_err(|e| {
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
            report.imported += 1;
        }
        Ok(report)
    }
}

/// Managing stored sessions: tags, notes and deletion. Each call is one transaction, so a
/// selector that names several sessions changes all of them or none.
impl SqliteStore {
    /// Sets the tags `set` (replacing a value under the same key) and removes the keys `remove`
    /// on every session of `ids`. Removing a key a session does not carry is not an error.
    pub fn update_tags(
        &mut self,
        ids: &[Uuid],
        set: &[(String, String)],
        remove: &[String],
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            for id in ids {
                ensure_exists(tx, "sessions", "session", *id)?;
                let id = id.to_string();
                for key in remove {
                    tx.execute(
                        "DELETE FROM session_tags WHERE session_id = ?1 AND key = ?2",
                        params![id, key],
                    )?;
                }
                for (key, value) in set {
                    tx.execute(
                        "INSERT INTO session_tags (session_id, key, value) VALUES (?1, ?2, ?3) \
                         ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                        params![id, key, value],
                    )?;
                }
            }
            Ok(())
        })
    }

    /// Replaces the note of every session of `ids`; `None` removes it.
    pub fn set_note(&mut self, ids: &[Uuid], note: Option<&str>) -> Result<(), StoreError> {
        self.write(|tx| {
            for id in ids {
                let changed = tx.execute(
                    "UPDATE sessions SET note = ?2 WHERE id = ?1",
                    params![id.to_string(), note],
                )?;
                if changed == 0 {
                    return Err(StoreError::Unknown {
                        what: "session",
                        id: *id,
                    });
                }
            }
            Ok(())
        })
    }

    /// Deletes the sessions `ids` with their configurations, runs, values, monitor records and
    /// tags (by ON DELETE CASCADE), and the kernel configuration texts they referred to that no
    /// remaining session refers to, in one transaction. Texts that no deleted session referred
    /// to are left alone: a `vernier run` stores its text just before it records its session.
    pub fn delete_sessions(&mut self, ids: &[Uuid]) -> Result<DeleteReport, StoreError> {
        self.write(|tx| {
            let mut report = DeleteReport::default();
            let mut shas = BTreeSet::new();
            let count = |sql: &str, id: &str| -> Result<usize, StoreError> {
                let n: i64 = tx.query_row(sql, [id], |r| r.get(0))?;
                Ok(usize::try_from(n).unwrap_or(0))
            };
            for id in ids {
                ensure_exists(tx, "sessions", "session", *id)?;
                let id = id.to_string();
                report.configurations += count(
                    "SELECT count(*) FROM configurations WHERE session_id = ?1",
                    &id,
                )?;
                report.runs += count(
                    "SELECT count(*) FROM runs JOIN configurations c ON c.id = configuration_id \
                     WHERE c.session_id = ?1",
                    &id,
                )?;
                report.monitor_records += count(
                    "SELECT count(*) FROM run_monitors m JOIN runs r ON r.id = m.run_id \
                     JOIN configurations c ON c.id = r.configuration_id WHERE c.session_id = ?1",
                    &id,
                )?;
                let sha: Option<String> = tx.query_row(
                    "SELECT json_extract(environment, '$.kernel_config_sha256') FROM sessions \
                     WHERE id = ?1",
                    [&id],
                    |r| r.get(0),
                )?;
                shas.extend(sha);
                report.sessions += tx.execute("DELETE FROM sessions WHERE id = ?1", [&id])?;
            }
            for sha in &shas {
                report.kernel_configs += tx.execute(
                    "DELETE FROM kernel_configs WHERE sha256 = ?1 AND NOT EXISTS (SELECT 1 \
                     FROM sessions WHERE json_extract(environment, '$.kernel_config_sha256') = ?1)",
                    [sha],
                )?;
            }
            Ok(report)
        })
    }
}

/// `session` as the store keeps it: run values of -0.0 become 0.0 (see [`stored_value`]).
fn as_stored(session: &StoredSession) -> std::borrow::Cow<'_, StoredSession> {
    let negative_zero = |v: &f64| v.to_bits() == (-0.0f64).to_bits();
    let has = session
        .configurations
        .iter()
        .flat_map(|c| &c.runs)
        .any(|r| r.values.values().any(negative_zero));
    if !has {
        return std::borrow::Cow::Borrowed(session);
    }
    let mut copy = session.clone();
    for run in copy.configurations.iter_mut().flat_map(|c| &mut c.runs) {
        for v in run.values.values_mut() {
            *v = stored_value(*v);
        }
    }
    std::borrow::Cow::Owned(copy)
}

/// The value a REAL column gives back for `v`: the same double, except that SQLite keeps -0.0
/// as 0.0 (a REAL with an integral value is stored as an integer,
/// https://www.sqlite.org/datatype3.html#storage_classes_and_datatypes). Every other finite
/// double round-trips bit for bit through sqlite3_bind_double and sqlite3_column_double.
pub(crate) fn stored_value(v: f64) -> f64 {
    if v == 0.0 {
        0.0
    } else {
        v
    }
}

// After the JSON macros above, which it uses.
mod calibration;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse() {
        assert_eq!(parse_selector("latest").ok(), Some(Selector::Latest(0)));
        assert_eq!(parse_selector(" latest~3 ").ok(), Some(Selector::Latest(3)));
        let id = Uuid::parse_str("0123abcd-0000-4000-8000-000000000001").unwrap();
        assert_eq!(
            parse_selector("0123ABCD-0000-4000-8000-000000000001").ok(),
            Some(Selector::Id(id))
        );
        assert_eq!(
            parse_selector("0123abcd000040008000000000000001").ok(),
            Some(Selector::Id(id))
        );
        assert_eq!(
            parse_selector("0123AB").ok(),
            Some(Selector::Prefix("0123ab".into()))
        );
        assert_eq!(
            parse_selector("0123abcd-00").ok(),
            Some(Selector::Prefix("0123abcd00".into()))
        );
    }

    #[test]
    fn tag_selectors_split_at_unescaped_commas_and_equals_signs() {
        let tags = |s: &str| parse_tag_selector(s).unwrap();
        let pairs = |p: &[(&str, &str)]| {
            Some(
                p.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(tags("latest"), None);
        assert_eq!(tags("0123abcd"), None);
        assert_eq!(tags("a\\=b"), None, "an escaped = makes no tag selector");
        assert_eq!(tags("kernel=A"), pairs(&[("kernel", "A")]));
        assert_eq!(
            tags(" kernel = A , host=b "),
            pairs(&[("kernel", "A"), ("host", "b")])
        );
        assert_eq!(tags("k=6.18\\,rc1"), pairs(&[("k", "6.18,rc1")]));
        assert_eq!(tags("k=a=b"), pairs(&[("k", "a=b")]));
        assert_eq!(tags("k\\=x=v"), pairs(&[("k=x", "v")]));
        assert_eq!(
            tags("k=back\\\\,j=2"),
            pairs(&[("k", "back\\"), ("j", "2")])
        );
        assert_eq!(tags("k=c:\\path"), pairs(&[("k", "c:\\path")]));
        assert_eq!(tags("k="), pairs(&[("k", "")]));
        for bad in ["k=a,b", "=a", "k=a,,j=b", "k=a,"] {
            assert!(
                matches!(parse_tag_selector(bad), Err(StoreError::NotFound { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn bad_selectors_list_the_valid_forms() {
        for bad in [
            "",
            "lat",
            "abc",
            "latest~",
            "latest~-1",
            "latest~x",
            "xyz12345",
            "newest",
        ] {
            match parse_selector(bad) {
                Err(StoreError::NotFound { selector, detail }) => {
                    assert_eq!(selector, bad);
                    assert!(detail.contains("latest~N"), "{detail}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn migrations_match_their_files() {
        assert_eq!(SCHEMA_VERSION, MIGRATIONS.len() as i64);
        // migrations/NNNN_name.sql holds migration NNNN, so the list and the directory agree.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files.len(), MIGRATIONS.len());
        for (i, ((name, sql), file)) in MIGRATIONS.iter().zip(&files).enumerate() {
            assert_eq!(file, &format!("{:04}_{name}.sql", i + 1));
            assert_eq!(std::fs::read_to_string(dir.join(file)).unwrap(), *sql);
        }
    }

    #[test]
    fn settings_gain_defaults_for_missing_fields() {
        let settings = decode_settings(r#"{"warmup": 3, "target": 0.05}"#).unwrap();
        assert_eq!(settings.warmup, 3);
        assert_eq!(settings.target, 0.05);
        assert_eq!(settings.max_runs, Settings::default().max_runs);
        assert_eq!(settings.stopping_rule, vernier_model::StoppingRule::FixedN);
        assert!(matches!(
            decode_settings("[1]"),
            Err(StoreError::Corrupt(_))
        ));
        assert!(matches!(
            decode_settings(r#"{"warmup": "many"}"#),
            Err(StoreError::Corrupt(_))
        ));
    }

    #[test]
    fn in_memory_schema_applies() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, Path::new(":memory:")).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            tables,
            [
                "calibrations",
                "configurations",
                "kernel_configs",
                "run_monitor_summary",
                "run_monitors",
                "run_values",
                "runs",
                "session_tags",
                "sessions"
            ]
        );
    }
}
