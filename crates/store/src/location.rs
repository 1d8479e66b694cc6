//! Where a database is: an SQLite file or a PostgreSQL URL, and the one opener every command
//! uses, so each works on either engine.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::{SqliteStore, Store, StoreError};

/// The schemes of a PostgreSQL connection URL
/// (https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNSTRING).
const POSTGRES_SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// A database: an SQLite file, or a PostgreSQL database named by a URL
/// `postgres://user[:password]@host[:port]/dbname[?param=value...]` (or `postgresql://`).
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    File(PathBuf),
    Postgres(String),
}

impl Location {
    /// A `--db`, `VERNIER_DB`, `sync --to`, `merge` or `schedule --sync` value: a PostgreSQL
    /// URL by its scheme, anything else a path. A value that looks like a URL (a scheme of
    /// RFC 3986 section 3.1 and a colon before any `/`, as `postgress://h/db` or
    /// `postgresql:/x`) and is not a supported one is refused rather than taken as a
    /// relative path: a mistyped URL would otherwise create an SQLite file of that name and
    /// record there. A file whose name starts so is named `./a:b.db`.
    pub fn parse(value: &Path) -> Result<Location, StoreError> {
        let Some(text) = value.to_str() else {
            return Ok(Location::File(value.to_path_buf()));
        };
        if POSTGRES_SCHEMES.iter().any(|s| text.starts_with(s)) {
            return Ok(Location::Postgres(text.to_string()));
        }
        match url_scheme(text) {
            Some(scheme) => Err(StoreError::Location(format!(
                "'{}' looks like a URL of the scheme '{scheme}:', which vernier does not \
                 support; valid: a URL starting {} or a file's path (./{} for a file whose \
                 name has a colon)",
                without_password(text),
                POSTGRES_SCHEMES.join(" or "),
                without_password(text),
            ))),
            None => Ok(Location::File(value.to_path_buf())),
        }
    }

    /// Whether the location holds a password: a PostgreSQL URL with one in its user
    /// information or its `password` parameter.
    pub fn holds_password(&self) -> bool {
        match self {
            Location::File(_) => false,
            Location::Postgres(url) => {
                without_password(url) != *url
                    || url.split_once('?').is_some_and(|(_, query)| {
                        query.split('&').any(|p| p.starts_with("password="))
                    })
            }
        }
    }

    /// The value to pass on to another vernier process as `--db`.
    pub fn as_arg(&self) -> &std::ffi::OsStr {
        match self {
            Location::File(path) => path.as_os_str(),
            Location::Postgres(url) => std::ffi::OsStr::new(url),
        }
    }
}

/// The database as messages name it: the path, or the URL without its password.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&without_password(url)),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Location({self})")
    }
}

/// The scheme of a value that looks like a URL: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`
/// followed by `:` before any `/` (RFC 3986, section 3.1). A path that starts with `/` or `.`,
/// or has its first colon after a `/` (`results/a:b.db`), has none.
fn url_scheme(text: &str) -> Option<&str> {
    let scheme = &text[..text.find(':')?];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// `url` with the password of its user information replaced by `***`.
fn without_password(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let authority_end = url[start..]
        .find(['/', '?'])
        .map_or(url.len(), |i| start + i);
    let Some(at) = url[start..authority_end].rfind('@').map(|i| start + i) else {
        return url.to_string();
    };
    match url[start..at].find(':').map(|i| start + i) {
        Some(colon) => format!("{}:***{}", &url[..colon], &url[at..]),
        None => url.to_string(),
    }
}

/// What a command does with the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Records (`run`, `import`, `calibrate`): an SQLite file is created if missing, and a
    /// PostgreSQL database without vernier's tables gets them.
    Create,
    /// Changes what is stored (tags, notes, deletion): the database must already be one of
    /// vernier, never a new empty one.
    Write,
    /// Only reads (`show`, `sessions`, `compare`, `env`, `export`, `plot`): nothing is written.
    Read,
}

/// Opens the database at `location` for `access`, bringing its schema up to
/// [`crate::SCHEMA_VERSION`] when writing.
pub fn open(location: &Location, access: Access) -> Result<Box<dyn Store>, StoreError> {
    open_with_lock_wait(location, access, crate::LOCK_WAIT)
}

/// [`open`] waiting at most `lock_wait` for each write that meets another process's lock
/// (SQLite's [`crate::LOCK_WAIT`]; PostgreSQL's `lock_timeout`).
pub fn open_with_lock_wait(
    location: &Location,
    access: Access,
    lock_wait: std::time::Duration,
) -> Result<Box<dyn Store>, StoreError> {
    match location {
        Location::File(path) => Ok(Box::new(match access {
            Access::Create => SqliteStore::open_with_lock_wait(path, lock_wait)?,
            Access::Write => SqliteStore::open_existing(path)?,
            Access::Read => SqliteStore::open_read_only(path)?,
        })),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => Ok(Box::new(crate::PgStore::open_with_lock_wait(
            url, access, lock_wait,
        )?)),
        #[cfg(not(feature = "postgres"))]
        Location::Postgres(_) => {
            let _ = lock_wait;
            Err(StoreError::Location(format!(
                "{location} is a PostgreSQL database, but this vernier was built without \
                 PostgreSQL support; build it with the cargo feature `postgres` (on by default: \
                 `cargo install --path crates/cli` without --no-default-features), or give an \
                 SQLite file"
            )))
        }
    }
}

/// Brings the database at `location` to [`crate::SCHEMA_VERSION`] (`vernier db migrate`).
/// A PostgreSQL database, shared by a farm, is migrated only so; returns the version it had. An
/// SQLite file, which the vernier recording into it owns, is migrated by any command that
/// writes to it as well (`None`: not known here).
pub fn migrate(location: &Location) -> Result<Option<i64>, StoreError> {
    match location {
        Location::File(path) => SqliteStore::open_existing(path).map(|_| None),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => crate::PgStore::migrate(url).map(Some),
        #[cfg(not(feature = "postgres"))]
        Location::Postgres(_) => open(location, Access::Write).map(|_| None),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_postgres_and_everything_else_a_file() {
        for url in [
            "postgres://u@h/db",
            "postgresql://u:p@h:5433/db?sslmode=disable",
        ] {
            assert_eq!(
                Location::parse(Path::new(url)).unwrap(),
                Location::Postgres(url.to_string())
            );
        }
        for path in [
            "results.db",
            "/tmp/postgres/x.db",
            "./postgres://x",
            "./a:b.db",
            "results/a:b.db",
            "/srv/postgres:/x",
            "1a:b.db",
            ":x.db",
        ] {
            assert_eq!(
                Location::parse(Path::new(path)).unwrap(),
                Location::File(PathBuf::from(path))
            );
        }
    }

    #[test]
    fn what_looks_like_an_unsupported_url_is_refused_naming_the_supported_schemes() {
        for (value, scheme) in [
            ("postgress://bench@host/db", "postgress"),
            ("postgresql:/x", "postgresql"),
            ("postgres:/x", "postgres"),
            ("sqlite:///tmp/x.db", "sqlite"),
            ("a:b.db", "a"),
            ("pg+ssl://h/db", "pg+ssl"),
        ] {
            let message = Location::parse(Path::new(value)).unwrap_err().to_string();
            assert!(
                message.contains(&format!("scheme '{scheme}:'"))
                    && message.contains("postgres:// or postgresql://")
                    && message.contains(&format!("./{value}")),
                "{message}"
            );
        }
        let message = Location::parse(Path::new("postgress://u:secret@h/db"))
            .unwrap_err()
            .to_string();
        assert!(!message.contains("secret"), "{message}");
    }

    #[cfg(not(feature = "postgres"))]
    #[test]
    fn a_build_without_postgres_says_how_to_get_it() {
        let url = Location::Postgres("postgres://u:secret@h/db".to_string());
        let message = open(&url, Access::Read)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "postgres://u:***@h/db is a PostgreSQL database, but this vernier was built without \
             PostgreSQL support; build it with the cargo feature `postgres` (on by default: \
             `cargo install --path crates/cli` without --no-default-features), or give an \
             SQLite file"
        );
    }

    #[test]
    fn messages_never_show_the_password() {
        let shown = |url: &str| Location::Postgres(url.to_string()).to_string();
        assert_eq!(shown("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(
            shown("postgresql://u:p%40ss@h:5432/db?x=1"),
            "postgresql://u:***@h:5432/db?x=1"
        );
        assert_eq!(shown("postgres://u@h/db"), "postgres://u@h/db");
        let holds = |url: &str| Location::Postgres(url.to_string()).holds_password();
        assert!(holds("postgres://u:secret@h/db"));
        assert!(holds("postgres://u@h/db?sslmode=require&password=x"));
        assert!(!holds("postgres://u@h/db?application_name=password"));
        assert!(!Location::File(PathBuf::from("u:p@h.db")).holds_password());
        assert_eq!(
            shown("postgres:///db?host=/tmp"),
            "postgres:///db?host=/tmp"
        );
    }
}
