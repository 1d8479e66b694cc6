//! Support shared by vernier's test suites (a dev-dependency only, never of a library).
//!
//! Tests that change the machine (sysctls, swap) run in several test binaries, and a developer
//! may run several `cargo test` at once: [`host_turn`] makes them take turns. The binary's
//! tests start `vernier` on a database of their own with [`vernier`] (or [`vernier_command`]).
//! [`databases`] gives a test one new database of each engine, the PostgreSQL one from
//! [`PgDatabase`]. The command tests share [`ok`], [`refused`], [`record_mock_session`] and
//! [`sqlite_texts`]; tests build whole sessions with [`stored_session`], configurations with
//! [`configuration`] (with monitor data, [`monitored_configuration`]) and runs with [`run`]
//! (sessions of simulated values with [`synthetic_session`], records with [`session_info`],
//! [`begun_session`] and [`begun_configuration`]), and the report site's tests show the
//! sessions of [`site`]. A command test takes a database of its own from [`temp_db`] and the
//! output of `vernier` from [`vernier_stdout`] or [`vernier_json`]; the runs of an export
//! document written by hand come from [`export_runs`]. A test
//! that needs a tool the README's set-up does not install asks [`can_run`] (or
//! [`has_programs`]), which skips it outside CI and fails it in CI.

mod commands;
mod documents;
mod needs;
mod postgres;
mod sessions;
pub mod site;

pub use commands::{
    imported_db, ok, ok_json, record_mock_session, refused, sorted, sqlite_texts, sync_count,
    temp_db, vernier_json, vernier_no_input, vernier_stdout,
};
pub use documents::export_runs;
pub use needs::{can_run, has_programs, in_ci, missing_programs, Program};
pub use postgres::{PgDatabase, SERVER_VARIABLE};
pub use sessions::{
    begun_configuration, begun_session, configuration, latency_configuration, latency_histogram_of,
    monitored_configuration, run, session_info, still_running, stored_session, synthetic_session,
    tags, Series, SyntheticSession,
};

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;

/// Takes this host's turn for a test that changes the machine, or that must see it unchanged
/// for a while (two environments captured in a row), waiting for any other test that holds it:
/// in this binary, in other test binaries and in concurrent `cargo test` runs. A test reads the
/// value it must put back only while no other test holds a change, or it would "restore" the
/// other's value and leave the machine changed. An exclusive flock(2) on a file in the
/// temporary directory, released when the returned file is dropped (also when the test
/// panics).
///
/// # Panics
/// When the lock file can be neither created nor opened, or flock fails: the test cannot run
/// safely then.
pub fn host_turn() -> File {
    let path = std::env::temp_dir().join("vernier-tests-host.lock");
    // Created writable for everyone (less the umask); another user's file is opened to read,
    // which is enough for flock.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o666)
        .open(&path)
        .or_else(|_| File::open(&path))
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    // SAFETY: flock on a descriptor owned by `file`, which outlives the call.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(locked, 0, "flock: {}", io::Error::last_os_error());
    file
}

/// The `vernier` binary of this build on the database `db`, isolated from the user's
/// environment: `VERNIER_DB` is removed, and the system check's cache, the configuration
/// directory (suites, benchmarks of the user's own) and the host's setup records
/// (`VERNIER_RUN_DIR`, `run` there) are next to the database instead of the user's and the
/// host's, so that a test never meets a real session.
///
/// # Panics
/// When the binary cannot be found (the test does not belong to the `vernier` package).
pub fn vernier_command(db: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("vernier"));
    let dir = db.parent().unwrap_or(db);
    cmd.arg("--db")
        .arg(db)
        .env_remove("VERNIER_DB")
        .env("XDG_CACHE_HOME", dir)
        .env("XDG_CONFIG_HOME", dir)
        .env("VERNIER_RUN_DIR", dir.join("run"));
    cmd
}

/// [`vernier_command`] as an `assert_cmd` command, for `.assert()`.
pub fn vernier(db: &Path) -> assert_cmd::Command {
    assert_cmd::Command::from_std(vernier_command(db))
}

/// A new empty database of one engine, for a test that runs on each ([`databases`]), with a
/// temporary directory of its own for the test's other files.
pub struct TestDatabase {
    dir: tempfile::TempDir,
    engine: Engine,
}

enum Engine {
    /// An SQLite file (not yet created) in the directory.
    Sqlite(std::path::PathBuf),
    Postgres(PgDatabase),
}

impl TestDatabase {
    /// The database as `--db` takes it: the file's path or the PostgreSQL URL.
    pub fn arg(&self) -> &Path {
        match &self.engine {
            Engine::Sqlite(path) => path,
            Engine::Postgres(db) => Path::new(db.url()),
        }
    }

    /// `sqlite` or `postgres`, for assertion messages.
    pub fn engine(&self) -> &'static str {
        match self.engine {
            Engine::Sqlite(_) => "sqlite",
            Engine::Postgres(_) => "postgres",
        }
    }

    /// The test's directory, removed with this.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The PostgreSQL database, if this is one.
    pub fn postgres(&self) -> Option<&PgDatabase> {
        match &self.engine {
            Engine::Sqlite(_) => None,
            Engine::Postgres(db) => Some(db),
        }
    }

    /// The number of rows of `table`.
    ///
    /// # Panics
    /// When the database cannot be read.
    pub fn count(&self, table: &str) -> i64 {
        self.query_i64(&format!("SELECT count(*) FROM {table}"))
    }

    /// Runs `sql` (statements without parameters, separated by `;`) on a connection of its
    /// own, as another program changing the database would: SQL both engines understand.
    ///
    /// # Panics
    /// When a statement fails.
    pub fn execute(&self, sql: &str) {
        match &self.engine {
            Engine::Sqlite(path) => rusqlite::Connection::open(path)
                .and_then(|c| c.execute_batch(sql))
                .unwrap_or_else(|e| panic!("{sql}: {e}")),
            Engine::Postgres(db) => db
                .client()
                .batch_execute(sql)
                .unwrap_or_else(|e| panic!("{sql}: {e}")),
        }
    }

    /// The one integer that `sql` returns.
    ///
    /// # Panics
    /// When the query fails or returns no integer.
    pub fn query_i64(&self, sql: &str) -> i64 {
        match &self.engine {
            Engine::Sqlite(path) => rusqlite::Connection::open(path)
                .and_then(|c| c.query_row(sql, [], |r| r.get(0)))
                .unwrap_or_else(|e| panic!("{sql}: {e}")),
            Engine::Postgres(db) => db.query_i64(sql),
        }
    }

    /// The first column (text) of every row that `sql` returns, in order.
    ///
    /// # Panics
    /// When the query fails or its first column is not text.
    pub fn query_texts(&self, sql: &str) -> Vec<String> {
        match &self.engine {
            Engine::Sqlite(path) => rusqlite::Connection::open(path)
                .and_then(|c| {
                    let mut statement = c.prepare(sql)?;
                    let texts = statement
                        .query_map([], |r| r.get(0))?
                        .collect::<Result<Vec<String>, _>>();
                    texts
                })
                .unwrap_or_else(|e| panic!("{sql}: {e}")),
            Engine::Postgres(db) => db.query_texts(sql),
        }
    }

    /// The first column of every row that `sql` returns, as text (see [`sqlite_texts`]; in
    /// PostgreSQL the column must be text).
    ///
    /// # Panics
    /// When the database cannot be read.
    pub fn texts(&self, sql: &str) -> Vec<String> {
        match &self.engine {
            Engine::Sqlite(path) => sqlite_texts(path, sql),
            Engine::Postgres(db) => db.query_texts(sql),
        }
    }

    /// The SQL expression of the bytes `column` (a run's id) as lowercase hex text, as
    /// [`sqlite_texts`] shows them: `lower(hex(x))` in SQLite, `encode(x, 'hex')` in
    /// PostgreSQL.
    pub fn hex(&self, column: &str) -> String {
        match &self.engine {
            Engine::Sqlite(_) => format!("lower(hex({column}))"),
            Engine::Postgres(_) => format!("encode({column}, 'hex')"),
        }
    }

    /// The `vernier` binary of this build on this database, isolated as [`vernier_command`]
    /// isolates it, with its caches in the test's directory.
    pub fn vernier_command(&self) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("vernier"));
        cmd.arg("--db")
            .arg(self.arg())
            .env_remove("VERNIER_DB")
            .env("XDG_CACHE_HOME", self.dir())
            .env("VERNIER_RUN_DIR", self.dir().join("run"));
        cmd
    }
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("cannot create a directory: {e}"))
}

/// A new SQLite database and, when a PostgreSQL server is configured ([`PgDatabase::create`]:
/// always under CI), a new PostgreSQL one: a store test runs on each in turn.
///
/// # Panics
/// As [`PgDatabase::create`].
pub fn databases(test: &str) -> Vec<TestDatabase> {
    let dir = temp_dir();
    let path = dir.path().join("results.db");
    let mut all = vec![TestDatabase {
        dir,
        engine: Engine::Sqlite(path),
    }];
    all.extend(postgres_database(test));
    all
}

/// A new PostgreSQL database for a test that needs one (concurrency, a dropped connection), or
/// `None` as [`PgDatabase::create`] says.
///
/// # Panics
/// As [`PgDatabase::create`].
pub fn postgres_database(test: &str) -> Option<TestDatabase> {
    PgDatabase::create(test).map(|db| TestDatabase {
        dir: temp_dir(),
        engine: Engine::Postgres(db),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_is_exclusive_until_dropped() {
        let turn = host_turn();
        let path = std::env::temp_dir().join("vernier-tests-host.lock");
        let other = File::open(&path).unwrap();
        // SAFETY: flock on a descriptor owned by `other`.
        let busy = unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(busy, -1);
        drop(turn);
        // SAFETY: as above.
        let free = unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        assert_eq!(free, 0);
    }
}
