//! PostgreSQL for tests: each test gets a database of its own on the server that
//! `VERNIER_TEST_POSTGRES` names (`scripts/with-postgres.sh` starts a throwaway one and sets
//! it), created with a unique name and dropped when the test ends, so tests run in parallel.
//!
//! Without the variable a test that needs PostgreSQL prints `skipped: ...` and passes, except
//! under CI (`CI=true`), where it fails: CI always runs them.

use std::sync::atomic::{AtomicU32, Ordering};

use postgres::{Client, NoTls};

/// The variable that holds the URL of a PostgreSQL server's maintenance database (one whose
/// user may create databases), for example `postgresql:///postgres?host=/tmp/dir&user=me`.
pub const SERVER_VARIABLE: &str = "VERNIER_TEST_POSTGRES";

/// The variable that holds the same server's URL over TCP, where it takes only TLS
/// connections, without `sslmode` (`scripts/with-postgres.sh` sets it when `openssl` is there).
pub const TLS_SERVER_VARIABLE: &str = "VERNIER_TEST_POSTGRES_TLS";

/// The variable that names the certificate (PEM) that the TLS server's is verified with.
pub const TLS_CA_VARIABLE: &str = "VERNIER_TEST_POSTGRES_CA";

/// A database created for one test, dropped (with its connections) when this is dropped.
pub struct PgDatabase {
    server: String,
    name: String,
    url: String,
}

impl PgDatabase {
    /// A new empty database, or `None` (after printing `skipped: ...`) when no server is
    /// configured outside CI.
    ///
    /// # Panics
    /// Under CI without a server, or when the server refuses the database.
    pub fn create(test: &str) -> Option<PgDatabase> {
        let server = server(test)?;
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        // Unique across processes (the pid) and within one (the counter); lower case, as
        // PostgreSQL folds unquoted names.
        let name = format!(
            "vernier_test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = connect(&server);
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create database {name}: {e}"));
        let url = with_database(&server, &name);
        Some(PgDatabase { server, name, url })
    }

    /// The URL of this database, as `--db` takes it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// This database over the server's TLS-only TCP port, without `sslmode`, and the
    /// certificate to verify the server with; `None` (after printing `skipped: ...`) when the
    /// server has no such port, outside CI.
    ///
    /// # Panics
    /// Under CI without the port: CI always tests TLS.
    pub fn tls(&self, test: &str) -> Option<(String, std::path::PathBuf)> {
        let tls = std::env::var(TLS_SERVER_VARIABLE)
            .ok()
            .filter(|u| !u.is_empty());
        let ca = std::env::var_os(TLS_CA_VARIABLE);
        match (tls, ca) {
            (Some(url), Some(ca)) => Some((with_database(&url, &self.name), ca.into())),
            _ if crate::in_ci() => panic!(
                "{test}: {TLS_SERVER_VARIABLE} or {TLS_CA_VARIABLE} is not set, and CI must test \
                 TLS (scripts/with-postgres.sh sets them when openssl is installed)"
            ),
            _ => {
                #[allow(clippy::print_stderr)]
                {
                    eprintln!(
                        "skipped: {test}: {TLS_SERVER_VARIABLE} is not set (install openssl and \
                         run the tests under scripts/with-postgres.sh)"
                    );
                }
                None
            }
        }
    }

    /// A client connected to this database, to look at what a test stored.
    pub fn client(&self) -> Client {
        connect(&self.url)
    }

    /// The number of rows of `table`.
    pub fn count(&self, table: &str) -> i64 {
        self.query_i64(&format!("SELECT count(*) FROM {table}"))
    }

    /// The one integer (`bigint`) that `sql` returns.
    ///
    /// # Panics
    /// When the query fails or returns no such value.
    pub fn query_i64(&self, sql: &str) -> i64 {
        self.client()
            .query_one(sql, &[])
            .and_then(|r| r.try_get(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The first column (`text`) of every row that `sql` returns, in order.
    ///
    /// # Panics
    /// When the query fails or its first column is not text.
    pub fn query_texts(&self, sql: &str) -> Vec<String> {
        self.client()
            .query(sql, &[])
            .and_then(|rows| rows.iter().map(|r| r.try_get(0)).collect())
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        // WITH (FORCE) ends the connections a test left open (PostgreSQL 13 and later).
        if let Ok(mut admin) = Client::connect(&self.server, NoTls) {
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// The server's URL, or `None` (after printing why) when a test may skip.
fn server(test: &str) -> Option<String> {
    match std::env::var(SERVER_VARIABLE) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if crate::in_ci() => panic!(
            "{test}: {SERVER_VARIABLE} is not set, and CI must run the PostgreSQL tests \
             (.ci/run starts a server with scripts/with-postgres.sh)"
        ),
        _ => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!(
                    "skipped: {test} on PostgreSQL: {SERVER_VARIABLE} is not set (run the tests \
                     under scripts/with-postgres.sh)"
                );
            }
            None
        }
    }
}

fn connect(url: &str) -> Client {
    Client::connect(url, NoTls).unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"))
}

/// `url` naming the database `name` instead of its own: the path of a
/// `postgres://[user@]host[:port]/dbname[?params]` URL.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{name}", &base[..path_start]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_replaces_the_path() {
        assert_eq!(
            with_database("postgresql:///postgres?host=/tmp/x&user=me", "t1"),
            "postgresql:///t1?host=/tmp/x&user=me"
        );
        assert_eq!(
            with_database("postgres://me:pw@db.example:5433/postgres", "t2"),
            "postgres://me:pw@db.example:5433/t2"
        );
        assert_eq!(
            with_database("postgres://me@host", "t3"),
            "postgres://me@host/t3"
        );
    }
}
