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
    /// Whether it only adds (tables, columns with defaults, indexes) so that a vernier of the
    /// version before reads the database as before: the schema stays readable by it.
    additive: bool,
}

/// The migrations, in order. The first creates a new database whole.
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 6,
        name: "baseline",
        sql: include_str!("../../migrations/postgres/0006_baseline.sql"),
        additive: false,
    },
    Migration {
        version: 7,
        name: "session_machine",
        sql: include_str!("../../migrations/postgres/0007_session_machine.sql"),
        additive: false,
    },
    Migration {
        version: 8,
        name: "setup_changed",
        sql: include_str!("../../migrations/postgres/0008_setup_changed.sql"),
        additive: false,
    },
    Migration {
        version: 9,
        name: "integer_keys",
        sql: include_str!("../../migrations/postgres/0009_integer_keys.sql"),
        additive: false,
    },
    Migration {
        version: 10,
        name: "profiles",
        sql: include_str!("../../migrations/postgres/0010_profiles.sql"),
        // A table of its own: a vernier of version 9 reads every session as before, without
        // their profiled runs.
        additive: true,
    },
    Migration {
        version: 11,
        name: "bisections",
        sql: include_str!("../../migrations/postgres/0011_bisections.sql"),
        // A table of its own, read only by `vernier bisect`.
        additive: true,
    },
    Migration {
        version: 12,
        name: "run_counts",
        sql: include_str!("../../migrations/postgres/0012_run_counts.sql"),
        // Columns with defaults, which a vernier of version 11 never names; it only reads.
        additive: true,
    },
    Migration {
        version: 13,
        name: "run_traces",
        sql: include_str!("../../migrations/postgres/0013_run_traces.sql"),
        // A table of its own: a vernier of version 12 reads every run as before, without
        // its traced latency.
        additive: true,
    },
    Migration {
        version: 14,
        name: "run_keys",
        sql: include_str!("../../migrations/postgres/0014_run_keys.sql"),
        // Every run's key changes: a vernier of version 13 would store new runs under keys
        // of its own, which are not where this version finds them.
        additive: false,
    },
    Migration {
        version: 15,
        name: "histogram_totals",
        sql: include_str!("../../migrations/postgres/0015_histogram_totals.sql"),
        // A table of its own: a vernier of version 14 reads the database as before.
        additive: true,
    },
    Migration {
        version: 16,
        name: "run_places",
        sql: include_str!("../../migrations/postgres/0016_run_places.sql"),
        // `runs.id` goes and the runs' ids are derived from their places: a vernier of version
        // 15 would find no ids to read and write runs this version cannot store.
        additive: false,
    },
    Migration {
        version: 17,
        name: "nullable_json_check",
        sql: include_str!("../../migrations/postgres/0017_nullable_json_check.sql"),
        // No change here (SQLite's CHECK of `runs.setup_changed_stored`): a vernier of version
        // 16 reads the database as before.
        additive: true,
    },
    Migration {
        version: 18,
        name: "run_ids_and_histograms",
        sql: include_str!("../../migrations/postgres/0018_run_ids_and_histograms.sql"),
        // Here the same rows and a run's ids still going with it (SQLite rebuilds a table):
        // a vernier of version 17 (or 16) reads the database as before.
        additive: true,
    },
];

/// The oldest schema version whose vernier reads a database of [`SCHEMA_VERSION`]: the
/// version before the newest migrations that are all additive. It is stored beside the version
/// (`schema_version.readable_by`), so that an older vernier reads a newer database it can.
pub(super) fn readable_by() -> i64 {
    readable_by_of(MIGRATIONS)
}

fn readable_by_of(migrations: &[Migration]) -> i64 {
    let newest = migrations.last().map_or(0, |m| m.version);
    let additive = migrations.iter().rev().take_while(|m| m.additive).count();
    newest - additive as i64
}

/// The key of the advisory lock that migrations hold, so that processes opening a new
/// database at once create its tables once: "vrnr" in ASCII, as SQLite's application_id
/// (https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS).
const MIGRATION_LOCK: i64 = 0x7672_6e72;

/// Checks that the database is vernier's (or, for [`Access::Create`], empty, and then creates
/// vernier's tables). A database shared by a farm is never migrated as a side effect: an older
/// schema is refused until `vernier db migrate` ([`migrate`]), and a newer one is read when it
/// is `readable_by` this version, never written.
pub(super) fn prepare(client: &mut Client, shown: &str, access: Access) -> Result<(), StoreError> {
    let found = version(client, shown)?;
    match (found, access) {
        (Some(v), _) if v == SCHEMA_VERSION => Ok(()),
        (Some(v), _) if v > SCHEMA_VERSION => {
            let readable = stored_readable_by(client, shown)?.unwrap_or(v);
            if access == Access::Read && readable <= SCHEMA_VERSION {
                return Ok(());
            }
            Err(StoreError::TooNew {
                path: shown.into(),
                found: v,
                known: SCHEMA_VERSION,
            })
        }
        (Some(v), _) => Err(StoreError::Schema {
            path: shown.into(),
            detail: format!(
                "schema version {v} is older than this vernier's ({SCHEMA_VERSION}); migrate it \
                 with `vernier db migrate --db URL` once every machine that writes to it runs \
                 this vernier (docs/farm.md, \"Upgrading a farm\")"
            ),
        }),
        (None, Access::Read | Access::Write) => Err(StoreError::NotVernier {
            path: shown.into(),
            detail: "it has no vernier tables (no schema_version table); `vernier run` \
                     creates them"
                .to_string(),
        }),
        (None, Access::Create) => migrate(client, shown).map(|_| ()),
    }
}

/// `schema_version.readable_by`, or `None` in a database written before it was kept.
fn stored_readable_by(client: &mut Client, shown: &str) -> Result<Option<i64>, StoreError> {
    let has_column: bool = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = 'schema_version' \
             AND column_name = 'readable_by')",
            &[],
        )
        .map_err(|e| error(shown, e))?
        .get(0);
    if !has_column {
        return Ok(None);
    }
    client
        .query_one("SELECT readable_by FROM schema_version", &[])
        .map(|row| row.get(0))
        .map_err(|e| error(shown, e))
}

/// Brings the database to [`SCHEMA_VERSION`], creating vernier's tables in an empty one, in one
/// transaction; returns the version it had (0: none). `vernier db migrate`, and the first
/// `vernier run` into a new database.
pub(super) fn migrate(client: &mut Client, shown: &str) -> Result<i64, StoreError> {
    let pg = |e| error(shown, e);
    match version(client, shown)? {
        Some(v) if v > SCHEMA_VERSION => {
            return Err(StoreError::TooNew {
                path: shown.into(),
                found: v,
                known: SCHEMA_VERSION,
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
    tx.batch_execute("ALTER TABLE schema_version ADD COLUMN IF NOT EXISTS readable_by BIGINT")
        .map_err(pg)?;
    tx.execute(
        "UPDATE schema_version SET version = $1, readable_by = $2",
        &[&SCHEMA_VERSION, &readable_by()],
    )
    .map_err(pg)?;
    tx.commit().map_err(pg)?;
    Ok(found)
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
    fn a_schema_is_readable_by_the_version_before_its_newest_additive_migrations() {
        let step = |version, additive| Migration {
            version,
            name: "",
            sql: "",
            additive,
        };
        assert_eq!(readable_by_of(&[step(6, false), step(7, false)]), 7);
        assert_eq!(readable_by_of(&[step(6, false), step(7, true)]), 6);
        assert_eq!(
            readable_by_of(&[step(6, false), step(7, false), step(8, true), step(9, true)]),
            7
        );
        // Migration 0016 (runs stored by their place, their ids derived from it) drops
        // `runs.id`: only a vernier of version 16 reads version 16; migration 0017 changes
        // nothing in PostgreSQL and 0018 only how a run's ids are deleted with it, so a vernier
        // of version 16 reads versions 17 and 18 too.
        assert_eq!(readable_by(), 16);
    }

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
