//! Opening a database and every connection-level choice: which files are accepted, the
//! pragmas (WAL journal, `synchronous=NORMAL`, foreign keys), the busy timeout with a bounded
//! retry (see [`LOCK_WAIT`]), and the read and `BEGIN IMMEDIATE` write transactions every
//! query and change runs in, so several vernier processes can record into one file at once.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use super::migrations::{check_version, migrate, user_version, SCHEMA_VERSION};
use super::SqliteStore;
use crate::{Location, StoreError};

/// `PRAGMA application_id` of a vernier database: "vrnr" in ASCII. It lets `file(1)` and
/// vernier itself tell a vernier database from any other SQLite file
/// (https://www.sqlite.org/pragma.html#pragma_application_id).
pub(super) const APPLICATION_ID: i64 = 0x7672_6e72;

/// How long one statement waits for another process's lock (SQLite's busy handler). A vernier
/// write is one run (microseconds to milliseconds of work), so this only runs out when
/// something holds the database for long: a large import, a backup, a `sqlite3` shell with an
/// open transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The page cache of a connection that only reads, in KiB as `PRAGMA cache_size` takes it
/// (negative): 8 MiB at most. It needs to hold the pages one query of a part of a session
/// visits again (a thousand runs chosen by id, then their values: some hundred pages), not a
/// session: 64 MiB filled up on any session of half a million runs, whose pages a read walks
/// once each, and held a fifth of `show`'s memory on a session of a million (356 MB, 296 MB
/// with 8 MiB, in as much CPU time).
const READ_CACHE_KIB: i64 = -8_192;

/// How long an operation is retried, in all, while the database stays locked. The busy handler
/// does not cover every case: SQLite returns SQLITE_BUSY at once, without waiting, when a read
/// transaction would have to become a write transaction while another connection writes
/// (that is how it avoids deadlock, https://www.sqlite.org/c3ref/busy_handler.html), and the
/// switch to WAL on opening does exactly that. Such operations are retried after a short
/// pause; so are statements whose busy timeout ran out, until this much time has passed. Then
/// the operation fails with [`StoreError::Locked`], naming the file.
pub const LOCK_WAIT: Duration = Duration::from_secs(120);

impl SqliteStore {
    /// Opens the database at `path`, creating it and its parent directories if needed, and
    /// brings its schema up to [`SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with_lock_wait(path, LOCK_WAIT)
    }

    /// [`SqliteStore::open`] waiting at most `lock_wait` (instead of [`LOCK_WAIT`]) for each
    /// operation that meets another process's lock.
    pub fn open_with_lock_wait(path: &Path, lock_wait: Duration) -> Result<Self, StoreError> {
        check_file(path, Existing::MayBeMissingOrEmpty)?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
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
    /// exists, a writer is at work (or crashed, or was a `vernier run`, which leaves its log:
    /// [`crate::Store::defer_checkpoint`]) and its log must be read, which a read-only
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
        // A read of a part of a session (a sync of it) visits some pages several times (runs
        // chosen by id, then their values): with SQLite's default cache of 2 MiB they could be
        // read from the file again and again. The cache takes memory
        // only for pages read (https://www.sqlite.org/pragma.html#pragma_cache_size).
        conn.pragma_update(None, "cache_size", READ_CACHE_KIB)
            .map_err(open)?;
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
            return Ok(SqliteStore::new(conn, path, LOCK_WAIT));
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
        Ok(SqliteStore::new(memory, path, LOCK_WAIT))
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
        Ok(SqliteStore::new(conn, path, lock_wait))
    }

    fn new(conn: Connection, path: &Path, lock_wait: Duration) -> Self {
        SqliteStore {
            conn,
            path: path.to_path_buf(),
            location: Location::File(path.to_path_buf()),
            lock_wait,
            cache_before_import: None,
            monitor_names: None,
        }
    }

    /// Checks that the file is a vernier database, sets the connection up and migrates.
    fn prepare(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
        let open = |e| open_error(path, e);
        check_application_id(conn, path)?;
        // Before anything is written (the journal mode is stored in the file's header): a
        // database of another program is refused as it was found.
        let found = user_version(conn).map_err(open)?;
        check_version(conn, path, found)?;
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
        // synchronous=NORMAL: in WAL mode a commit is complete once its frames are written to
        // the log, without an fsync, so every committed run survives kill -9 of vernier; the
        // log is synced at each checkpoint (every 1000 pages, and when the last connection
        // closes), the database file after it (https://www.sqlite.org/pragma.html
        // #pragma_synchronous, https://www.sqlite.org/wal.html). A power loss or an OS crash
        // can therefore lose the runs committed since the last checkpoint, each whole (the
        // log's frames carry checksums: recovery stops at the first torn one), never the
        // file's consistency (docs/schema.md). FULL fsynced at every commit: nine fsyncs for
        // a session of one run, and a run's cost several times hyperfine's on a fast command.
        conn.pragma_update(None, "synchronous", "NORMAL")
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
    pub(super) fn write_with<T>(
        &mut self,
        mut f: impl FnMut(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // Inside an enclosing transaction (an import) the write joins it: the
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
    pub(super) fn read_with<T>(
        &self,
        mut f: impl FnMut(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        retry_while_locked(&self.path, self.lock_wait, || {
            let tx = self.conn.unchecked_transaction()?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
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
pub(super) fn retry_while_locked<T>(
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
                        database: Location::File(path.to_path_buf()),
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

pub(super) fn open_error(path: &Path, source: rusqlite::Error) -> StoreError {
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

/// The first 16 bytes of every SQLite database file: "SQLite format 3" and a NUL
/// (https://www.sqlite.org/fileformat.html#the_database_header).
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// A directory or other non-file is never taken for a database; an empty file (which SQLite
/// would make a new database) or a missing one only where `existing` allows it. Any other
/// file must begin with SQLite's header: SQLite itself takes a file shorter than its header
/// for a new database and writes over it (a one-byte text file became a database).
fn check_file(path: &Path, existing: Existing) -> Result<(), StoreError> {
    let not = |what: &str| StoreError::NotDatabase {
        path: path.to_path_buf(),
        what: what.to_string(),
    };
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(not("a directory's name (it ends with '/'), not a file's"));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(not("a directory")),
        Ok(m) if !m.is_file() => Err(not("not a regular file")),
        Ok(m) if m.len() == 0 && existing == Existing::Database => Err(not("an empty file")),
        Ok(m) if m.len() == 0 => Ok(()),
        Ok(_) => match has_sqlite_header(path) {
            Ok(true) => Ok(()),
            Ok(false) => Err(not("not an SQLite database")),
            Err(source) => Err(StoreError::Io {
                path: path.to_path_buf(),
                source,
            }),
        },
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

/// Whether the file at `path` begins with [`SQLITE_HEADER`].
fn has_sqlite_header(path: &Path) -> std::io::Result<bool> {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(SQLITE_HEADER.len());
    std::fs::File::open(path)?
        .take(SQLITE_HEADER.len() as u64)
        .read_to_end(&mut head)?;
    Ok(head == SQLITE_HEADER)
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A file that is not an SQLite database is refused by every opener and left as it was,
    /// whatever its size: SQLite alone takes a file shorter than its header for a new database.
    #[test]
    fn a_file_of_any_size_that_is_not_sqlite_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let short_header = &SQLITE_HEADER[..15];
        let mut contents: Vec<Vec<u8>> = vec![
            b"x".to_vec(),
            b"\n".to_vec(),
            short_header.to_vec(),
            b"SQLite format 4\0".to_vec(),
        ];
        contents.extend([2, 100, 511, 512, 513, 4096].map(|n| vec![b'a'; n]));
        for (i, bytes) in contents.iter().enumerate() {
            let path = dir.path().join(format!("f{i}.txt"));
            std::fs::write(&path, bytes).unwrap();
            let refusals = [
                SqliteStore::open(&path).map(|_| ()),
                SqliteStore::open_existing(&path).map(|_| ()),
                SqliteStore::open_read_only(&path).map(|_| ()),
            ];
            for refusal in refusals {
                let e = refusal.unwrap_err().to_string();
                assert!(
                    e.contains("is not an SQLite database"),
                    "{} bytes: {e}",
                    bytes.len()
                );
            }
            assert_eq!(
                &std::fs::read(&path).unwrap(),
                bytes,
                "{} bytes",
                bytes.len()
            );
        }
        // An empty file is a new database, where one may be made.
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        SqliteStore::open(&empty).unwrap();
        assert!(has_sqlite_header(&empty).unwrap());
    }

    /// Another program's SQLite database is refused by every opener that writes, byte for
    /// byte as it was: not even switched to WAL, which rewrites the header.
    #[test]
    fn another_programs_database_is_refused_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        let refusals = [
            SqliteStore::open(&path).map(|_| ()),
            SqliteStore::open_existing(&path).map(|_| ()),
        ];
        for refusal in refusals {
            let e = refusal.unwrap_err().to_string();
            assert!(e.contains("but not one of vernier"), "{e}");
            assert_eq!(std::fs::read(&path).unwrap(), before);
        }
    }

    /// A commit is complete without an fsync (WAL, synchronous=NORMAL: 1); docs/schema.md says
    /// what a power loss can cost.
    #[test]
    fn a_database_commits_to_its_wal_without_an_fsync() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("a.db")).unwrap();
        let mode: String = store
            .conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        let synchronous: i64 = store
            .conn
            .pragma_query_value(None, "synchronous", |r| r.get(0))
            .unwrap();
        assert_eq!((mode.as_str(), synchronous), ("wal", 1));
    }

    #[test]
    fn a_path_ending_in_a_slash_is_a_directory_never_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["new/", "new/sub/"] {
            let path = dir.path().join(name);
            let e = SqliteStore::open(&path)
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("is a directory's name (it ends with '/')"),
                "{e}"
            );
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "nothing made"
        );
    }
}
