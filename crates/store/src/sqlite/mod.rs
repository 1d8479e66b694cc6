//! The SQLite engine: one file, readable with any SQLite tool, schema in `docs/schema.md`.
//!
//! - [`connection`]: opening a file, pragmas, locking, and the read and write transactions;
//! - [`migrations`]: the schema versions and how a file reaches the current one;
//! - [`sql`]: the shared statements ([`crate::records`]) on an SQLite connection.

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::Connection;

use crate::records::{impl_store, Engine};
use crate::sql::Sql;
use crate::{ChangeToken, Location, StoreError, TokenValue};

mod connection;
mod migrations;
mod sql;

pub use connection::LOCK_WAIT;
pub use migrations::SCHEMA_VERSION;
pub(crate) use sql::SqliteSql;

/// Results in an SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    location: Location,
    lock_wait: Duration,
    /// The page cache size to restore when an import ends (see [`Engine::begin_import`]).
    cache_before_import: Option<i64>,
    /// [`Engine::monitor_names`].
    monitor_names: Option<crate::records::monitors::Names>,
}

/// The most cache an import gives SQLite, KiB: the pages of about 1.5 million runs of one
/// value, which a transaction keeps until its commit.
const IMPORT_CACHE_KIB: i64 = 192 * 1024;

impl Engine for SqliteStore {
    fn monitor_names(&mut self) -> Option<&mut Option<crate::records::monitors::Names>> {
        // Outside autocommit a write joins the enclosing transaction (an import's).
        self.conn.is_autocommit().then_some(&mut self.monitor_names)
    }

    fn write<T>(
        &mut self,
        mut f: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.write_with(|conn| f(&mut SqliteSql(conn)))
    }

    fn read<T>(
        &self,
        mut f: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.read_with(|conn| f(&mut SqliteSql(conn)))
    }

    fn begin_import(&mut self, runs: usize) -> Result<(), StoreError> {
        // The pages one transaction changes stay in memory until the commit; with SQLite's
        // default cache (2 MiB) a large import spills them to the WAL and reads them back for
        // every later insertion into the same B-trees, which made the time grow faster than
        // the file. The cache grows with the import (about 1 KiB per run, the pages of its
        // rows and index entries) and is restored afterwards
        // (https://www.sqlite.org/pragma.html#pragma_cache_size).
        let previous: i64 = self
            .conn
            .pragma_query_value(None, "cache_size", |r| r.get(0))?;
        // Negative: a size in KiB. At most IMPORT_CACHE_KIB: beyond it (imports of some
        // million runs) pages spill, and memory stays bounded.
        let wanted_kib = i64::try_from(runs)
            .unwrap_or(i64::MAX)
            .saturating_add(2048)
            .min(IMPORT_CACHE_KIB);
        self.conn.pragma_update(None, "cache_size", -wanted_kib)?;
        let conn = &self.conn;
        let begun = connection::retry_while_locked(&self.path, self.lock_wait, || {
            Ok(conn.execute_batch("BEGIN IMMEDIATE")?)
        });
        if let Err(e) = begun {
            let _ = self.conn.pragma_update(None, "cache_size", previous);
            return Err(e);
        }
        self.cache_before_import = Some(previous);
        Ok(())
    }

    fn end_import(&mut self, commit: bool) -> Result<(), StoreError> {
        let ended = if commit {
            self.conn.execute_batch("COMMIT").map_err(|e| {
                let _ = self.conn.execute_batch("ROLLBACK");
                StoreError::from(e)
            })
        } else {
            Ok(self.conn.execute_batch("ROLLBACK")?)
        };
        if let Some(previous) = self.cache_before_import.take() {
            let _ = self.conn.pragma_update(None, "cache_size", previous);
        }
        ended
    }

    fn change_token(&self) -> Result<ChangeToken, StoreError> {
        // The files, not the connection: a read-only connection may be `immutable`
        // (`open_read_only`) and never see another process's commits.
        let files = ["", "-wal", "-shm"]
            .iter()
            .map(|suffix| {
                let mut name = self.path.as_os_str().to_owned();
                name.push(suffix);
                let meta = std::fs::metadata(PathBuf::from(name)).ok()?;
                Some((meta.modified().ok()?, meta.len()))
            })
            .collect();
        Ok(ChangeToken(TokenValue::Files(files)))
    }

    fn defer_checkpoint(&mut self) -> Result<(), StoreError> {
        // When the last connection to a WAL database closes, SQLite checkpoints the log into
        // the file and deletes it: with synchronous=NORMAL an fsync of the log, of the file and
        // an unlink; the next writer recreates the log and syncs its header and the directory
        // on its first commit. In a session of one run these four fsyncs were most of the time
        // `vernier run` waited on the disk (2-20 ms on the 2-vCPU guest, more under load). With
        // this the log stays, the next session appends to it without a sync, and SQLite still
        // checkpoints it (with the syncs) when it reaches DEFERRED_CHECKPOINT_PAGES
        // (https://www.sqlite.org/c3ref/c_dbconfig_defensive.html
        // #sqlitedbconfignockptonclose, https://www.sqlite.org/wal.html#ckpt). A commit
        // survives kill -9 as before (the log is in the page cache); what a power loss can
        // cost is in docs/schema.md.
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        self.conn
            .pragma_update(None, "wal_autocheckpoint", DEFERRED_CHECKPOINT_PAGES)?;
        Ok(())
    }
}

/// The WAL length, in pages, at which a connection that defers its checkpoint
/// ([`crate::Store::defer_checkpoint`]) still checkpoints at a commit
/// (https://www.sqlite.org/pragma.html#pragma_wal_autocheckpoint; SQLite's default is 1000).
/// The first connection to open the file after the last one closed rebuilds the WAL's index by
/// reading and checksumming every frame of the log (https://www.sqlite.org/walformat.html,
/// "Recovery"): with a 3.7 MB log, 3.3 ms of CPU time at every `vernier run` and every `show`
/// (perf trace, 2-vCPU guest), about 3.6 us a page. At 256 pages that is at most ~0.9 ms,
/// for a checkpoint (two fsyncs) every ~10 sessions of one `mock` run instead of every ~40.
const DEFERRED_CHECKPOINT_PAGES: i64 = 256;

impl_store!(SqliteStore);
