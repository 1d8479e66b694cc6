//! The PostgreSQL engine: one database shared by many machines and processes, with the tables
//! of the SQLite engine in PostgreSQL's types (docs/schema.md, "PostgreSQL").
//!
//! - [`sql`]: the shared statements ([`crate::records`]) on a PostgreSQL connection;
//! - [`migrations`]: the schema versions and how a database reaches the current one.
//!
//! - [`tls`]: the connection, encrypted and verified as the URL's `sslmode` says.
//!
//! The connection is synchronous (the `postgres` crate, a blocking wrapper over
//! tokio-postgres).

use std::cell::RefCell;
use std::collections::HashMap;

use postgres::error::SqlState;
use postgres::{Client, Statement};

use crate::records::{impl_store, Engine};
use crate::sql::Sql;
use crate::{Access, ChangeToken, Location, StoreError, TokenValue};

mod migrations;
mod sql;
mod tls;

use sql::{error, PgSql};

/// How often a transaction that lost a deadlock or a serialization conflict to another writer
/// is run again before the error is reported. Each retry follows the other writer's commit,
/// so a few are plenty.
const CONFLICT_RETRIES: u32 = 10;

/// Results in a PostgreSQL database.
pub struct PgStore {
    /// One connection; `RefCell` because reading ([`crate::Store`]'s `&self` methods) sends
    /// queries on it too.
    connection: RefCell<Connection>,
    location: Location,
    /// The location as messages name it (without the password).
    shown: String,
    /// Inside an import's transaction, which every write joins.
    importing: bool,
    /// How long a statement waits for another transaction's lock (`lock_timeout`).
    lock_wait: std::time::Duration,
    /// [`Engine::monitor_names`].
    monitor_names: Option<crate::records::monitors::Names>,
}

struct Connection {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgStore({})", self.shown)
    }
}

impl PgStore {
    /// Connects to the database of `url`; for [`Access::Create`] an empty database gets
    /// vernier's tables. An existing database must have this vernier's schema version (only
    /// [`PgStore::migrate`] changes it), or, for [`Access::Read`], a newer one this version
    /// can read; for [`Access::Read`] the connection is read-only, so nothing is ever written.
    pub fn open(url: &str, access: Access) -> Result<Self, StoreError> {
        Self::open_with_lock_wait(url, access, crate::LOCK_WAIT)
    }

    /// Brings the database of `url` to [`crate::SCHEMA_VERSION`] (`vernier db migrate`):
    /// the one way an existing PostgreSQL database is migrated. Returns the version it had.
    pub fn migrate(url: &str) -> Result<i64, StoreError> {
        let shown = Location::Postgres(url.to_string()).to_string();
        let mut client = tls::connect(url, &shown)?;
        let found = migrations::migrate(&mut client, &shown)?;
        if (1..15).contains(&found) {
            // The kept merged histograms of the sessions stored before version 15, computed
            // from their runs' histograms in a transaction of its own: an interrupted
            // computation leaves sessions whose `show` reads every run's histograms.
            let mut store = Self::open(url, Access::Write)?;
            store.write(crate::records::totals::rebuild)?;
        }
        Ok(found)
    }

    /// [`PgStore::open`] with statements waiting at most `lock_wait` for a lock another
    /// transaction holds (`lock_timeout`,
    /// https://www.postgresql.org/docs/15/runtime-config-client.html).
    pub fn open_with_lock_wait(
        url: &str,
        access: Access,
        lock_wait: std::time::Duration,
    ) -> Result<Self, StoreError> {
        let location = Location::Postgres(url.to_string());
        let shown = location.to_string();
        let mut client = tls::connect(url, &shown)?;
        client
            .batch_execute(&format!(
                "SET lock_timeout = {}",
                lock_wait.as_millis().max(1)
            ))
            .map_err(|e| error(&shown, e))?;
        if access == Access::Read {
            // https://www.postgresql.org/docs/15/runtime-config-client.html
            client
                .batch_execute("SET default_transaction_read_only = on")
                .map_err(|e| error(&shown, e))?;
        }
        migrations::prepare(&mut client, &shown, access)
            .map_err(|e| locked(e, &location, lock_wait))?;
        Ok(PgStore {
            connection: RefCell::new(Connection {
                client,
                statements: HashMap::new(),
            }),
            location,
            shown,
            importing: false,
            lock_wait,
            monitor_names: None,
        })
    }

    /// Runs `f` in a transaction begun with `begin`, retried while it loses a conflict to
    /// another writer.
    fn transaction<T>(
        connection: &mut Connection,
        shown: &str,
        begin: &str,
        mut f: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            connection
                .client
                .batch_execute(begin)
                .map_err(|e| error(shown, e))?;
            let mut tx = PgSql {
                client: &mut connection.client,
                statements: &mut connection.statements,
                location: shown,
            };
            let result = f(&mut tx);
            let result = match result {
                Ok(value) => connection
                    .client
                    .batch_execute("COMMIT")
                    .map(|()| value)
                    .map_err(|e| error(shown, e)),
                Err(e) => {
                    // Nothing to report from the rollback: the error is the one of `f`, and
                    // a connection that broke has rolled back already.
                    let _ = connection.client.batch_execute("ROLLBACK");
                    Err(e)
                }
            };
            match result {
                Err(e) if e.is_transaction_conflict() && attempt < CONFLICT_RETRIES => continue,
                other => return other,
            }
        }
    }
}

/// `e`, or [`StoreError::Locked`] when it is a statement that waited `lock_wait` for a lock
/// (lock_not_available, https://www.postgresql.org/docs/15/errcodes-appendix.html).
fn locked(e: StoreError, location: &Location, lock_wait: std::time::Duration) -> StoreError {
    match e {
        StoreError::Postgres {
            code: Some(code), ..
        } if code == SqlState::LOCK_NOT_AVAILABLE.code() => StoreError::Locked {
            database: location.clone(),
            waited: lock_wait,
        },
        other => other,
    }
}

fn message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    }
}

/// The error of a failed connection: the server's message, or why the URL is not one.
fn connect_error(shown: &str, e: &postgres::Error) -> StoreError {
    let mut detail = message(e);
    if let Some(source) = std::error::Error::source(e) {
        if !detail.contains(&source.to_string()) {
            detail = format!("{detail}: {source}");
        }
    }
    StoreError::Location(format!("cannot connect to database {shown}: {detail}"))
}

impl Engine for PgStore {
    fn monitor_names(&mut self) -> Option<&mut Option<crate::records::monitors::Names>> {
        (!self.importing).then_some(&mut self.monitor_names)
    }

    fn write<T>(
        &mut self,
        mut f: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let connection = self.connection.get_mut();
        let written = if self.importing {
            f(&mut PgSql {
                client: &mut connection.client,
                statements: &mut connection.statements,
                location: &self.shown,
            })
        } else {
            // READ COMMITTED: each writer inserts rows of its own (UUID keys); the one shared
            // table, monitor_names, takes a new name with ON CONFLICT DO NOTHING, which waits
            // for a concurrent insertion of the same name and then sees it.
            Self::transaction(connection, &self.shown, "BEGIN", f)
        };
        written.map_err(|e| locked(e, &self.location, self.lock_wait))
    }

    fn read<T>(
        &self,
        f: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut connection = self.connection.borrow_mut();
        // One snapshot for every query of `f`.
        Self::transaction(
            &mut connection,
            &self.shown,
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            f,
        )
        .map_err(|e| locked(e, &self.location, self.lock_wait))
    }

    fn begin_import(&mut self, _runs: usize) -> Result<(), StoreError> {
        let connection = self.connection.get_mut();
        connection
            .client
            .batch_execute("BEGIN")
            .map_err(|e| error(&self.shown, e))?;
        self.importing = true;
        Ok(())
    }

    fn end_import(&mut self, commit: bool) -> Result<(), StoreError> {
        self.importing = false;
        let connection = self.connection.get_mut();
        let ended = connection
            .client
            .batch_execute(if commit { "COMMIT" } else { "ROLLBACK" })
            .map_err(|e| error(&self.shown, e));
        if ended.is_err() && commit {
            let _ = connection.client.batch_execute("ROLLBACK");
        }
        ended
    }

    fn change_token(&self) -> Result<ChangeToken, StoreError> {
        // Outside a transaction: one of its own, whose snapshot is the server's now.
        let snapshot = self.read(|tx| {
            tx.query_one("SELECT pg_current_snapshot()::text", &[])?
                .get(0)
        })?;
        Ok(ChangeToken(TokenValue::Snapshot(snapshot)))
    }

    fn defer_checkpoint(&mut self) -> Result<(), StoreError> {
        // The server decides when its log is written out.
        Ok(())
    }
}

impl_store!(PgStore);
