//! The PostgreSQL schema's versions. The table `schema_version` (one row) holds the version a
//! database has, as `PRAGMA user_version` does for an SQLite file, and marks the database as
//! vernier's. PostgreSQL support began at schema version 6, created whole by
//! `migrations/postgres/0006_baseline.sql`; each later version has its migration in both
//! engines (docs/schema.md, "Migrations").

use postgres::Client;

use super::sql::error;
use crate::{Access, StoreError, SCHEMA_VERSION};

/// One step of the schema: migration `version` takes it from the version before to `version`.
struct Migration {
    version: i64,
    name: &'static str,
    sql: &'static str,
}

/// The migrations, in order. The first creates a new database whole.
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 6,
        name: "baseline",
        sql: include_str!("../../migrations/postgres/0006_baseline.sql"),
    },
    Migration {
        version: 7,
        name: "session_machine",
        sql: include_str!("../../migrations/postgres/0007_session_machine.sql"),
    },
    Migration {
        version: 8,
        name: "setup_changed",
        sql: include_str!("../../migrations/postgres/0008_setup_changed.sql"),
    },
    Migration {
        version: 9,
        name: "integer_keys",
        sql: include_str!("../../migrations/postgres/0009_integer_keys.sql"),
    },
    Migration {
        version: 10,
        name: "profiles",
        sql: include_str!("../../migrations/postgres/0010_profiles.sql"),
    },
];

/// The key of the advisory lock that migrations hold, so that processes opening a new
/// database at once create its tables once: "vrnr" in ASCII, as SQLite's application_id
/// (https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS).
const MIGRATION_LOCK: i64 = 0x7672_6e72;

/// Checks that the database is vernier's (or, for [`Access::Create`], empty) and brings it to
/// [`SCHEMA_VERSION`] when `access` writes.
pub(super) fn prepare(client: &mut Client, shown: &str, access: Access) -> Result<(), StoreError> {
    let pg = |e| error(shown, e);
    let found = version(client, shown)?;
    match (found, access) {
        (Some(v), _) if v == SCHEMA_VERSION => return Ok(()),
        (Some(v), _) if v > SCHEMA_VERSION => {
            return Err(StoreError::TooNew {
                path: shown.into(),
                found: v,
                known: SCHEMA_VERSION,
            })
        }
        (Some(v), Access::Read) => {
            return Err(StoreError::Schema {
                path: shown.into(),
                detail: format!(
                    "schema version {v} is older than this vernier's ({SCHEMA_VERSION}); a \
                     command that writes (`vernier run`, `vernier tag`) upgrades it"
                ),
            })
        }
        (None, Access::Read | Access::Write) => {
            return Err(StoreError::NotVernier {
                path: shown.into(),
                detail: "it has no vernier tables (no schema_version table); `vernier run` \
                         creates them"
                    .to_string(),
            })
        }
        _ => {}
    }
    let mut tx = client.transaction().map_err(pg)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(pg)?;
    // Another process may have migrated meanwhile: look again under the lock.
    let found = match version(&mut tx, shown)? {
        Some(v) => v,
        None => {
            let tables: i64 = tx
                .query_one(
                    "SELECT count(*) FROM information_schema.tables \
                     WHERE table_schema = current_schema()",
                    &[],
                )
                .map_err(pg)?
                .get(0);
            if tables > 0 {
                return Err(StoreError::NotVernier {
                    path: shown.into(),
                    detail: format!("its schema holds {tables} tables but no schema_version table"),
                });
            }
            tx.batch_execute("CREATE TABLE schema_version (version BIGINT NOT NULL)")
                .map_err(pg)?;
            tx.execute("INSERT INTO schema_version (version) VALUES (0)", &[])
                .map_err(pg)?;
            0
        }
    };
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: shown.into(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    for migration in MIGRATIONS.iter().filter(|m| m.version > found) {
        // A new database takes the first migration (the whole schema); an existing one every
        // later one.
        if found > 0 && migration.version <= MIGRATIONS[0].version {
            continue;
        }
        tx.batch_execute(migration.sql)
            .map_err(|e| StoreError::Schema {
                path: shown.into(),
                detail: format!(
                    "migration {:04} ({}) from schema version {found} failed: {}",
                    migration.version,
                    migration.name,
                    error(shown, e)
                ),
            })?;
    }
    tx.execute("UPDATE schema_version SET version = $1", &[&SCHEMA_VERSION])
        .map_err(pg)?;
    tx.commit().map_err(pg)
}

/// The version in `schema_version`, or `None` when the table does not exist.
fn version(
    client: &mut impl postgres::GenericClient,
    shown: &str,
) -> Result<Option<i64>, StoreError> {
    let pg = |e| error(shown, e);
    // A query of the catalog, not to_regclass: that reads the session's cache of the catalog,
    // which may not yet show the table another process just created and committed.
    let exists: bool = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables \
             WHERE schemaname = current_schema() AND tablename = 'schema_version')",
            &[],
        )
        .map_err(pg)?
        .get(0);
    if !exists {
        return Ok(None);
    }
    let rows = client
        .query("SELECT version FROM schema_version", &[])
        .map_err(pg)?;
    match rows.as_slice() {
        [row] => Ok(Some(row.get(0))),
        _ => Err(StoreError::Schema {
            path: shown.into(),
            detail: format!("schema_version holds {} rows instead of one", rows.len()),
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_migrations_reach_the_sqlite_schema_version() {
        assert_eq!(MIGRATIONS.last().unwrap().version, SCHEMA_VERSION);
        for pair in MIGRATIONS.windows(2) {
            assert_eq!(pair[1].version, pair[0].version + 1);
        }
        // migrations/postgres/NNNN_name.sql holds migration NNNN.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let expected: Vec<String> = MIGRATIONS
            .iter()
            .map(|m| format!("{:04}_{}.sql", m.version, m.name))
            .collect();
        assert_eq!(files, expected);
    }
}
