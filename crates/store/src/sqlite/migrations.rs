//! The SQLite schema's migrations: migration `n` (from 1) in `migrations/sqlite/000n_name.sql`
//! takes the schema from version `n - 1` to `n`, and `PRAGMA user_version` holds the version a
//! file has.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use vernier_model::monitor::RunMonitorData;

use super::connection::{open_error, APPLICATION_ID};
use super::SqliteSql;
use crate::records::codec::from_json;
use crate::records::monitors;
use crate::StoreError;

/// A conversion that SQL cannot express, run inside the migration's transaction.
type Convert = fn(&Connection) -> Result<(), StoreError>;

/// One step of the schema: SQL, and for a change that SQL cannot make alone, a conversion run
/// after it in the same transaction.
struct Migration {
    name: &'static str,
    sql: &'static str,
    convert: Option<Convert>,
}

/// The migrations, in order: migration `n` (from 1) takes the schema from version `n - 1` to
/// `n`. Never edit a released migration; add a new one (see docs/schema.md).
const MIGRATIONS: &[Migration] = &[
    Migration {
        name: "initial",
        sql: include_str!("../../migrations/sqlite/0001_initial.sql"),
        convert: None,
    },
    Migration {
        name: "monitors_setup_findings",
        sql: include_str!("../../migrations/sqlite/0002_monitors_setup_findings.sql"),
        convert: None,
    },
    Migration {
        name: "session_owner",
        sql: include_str!("../../migrations/sqlite/0003_session_owner.sql"),
        convert: None,
    },
    Migration {
        name: "calibrations",
        sql: include_str!("../../migrations/sqlite/0004_calibrations.sql"),
        convert: None,
    },
    Migration {
        name: "compact_monitors",
        sql: include_str!("../../migrations/sqlite/0005_compact_monitors.sql"),
        convert: Some(compact_monitors),
    },
    Migration {
        name: "distributions_loads",
        sql: include_str!("../../migrations/sqlite/0006_distributions_loads.sql"),
        convert: None,
    },
    Migration {
        name: "session_machine",
        sql: include_str!("../../migrations/sqlite/0007_session_machine.sql"),
        convert: None,
    },
    Migration {
        name: "setup_changed",
        sql: include_str!("../../migrations/sqlite/0008_setup_changed.sql"),
        convert: None,
    },
    Migration {
        name: "integer_keys",
        sql: include_str!("../../migrations/sqlite/0009_integer_keys.sql"),
        convert: None,
    },
    Migration {
        name: "profiles",
        sql: include_str!("../../migrations/sqlite/0010_profiles.sql"),
        convert: None,
    },
    Migration {
        name: "bisections",
        sql: include_str!("../../migrations/sqlite/0011_bisections.sql"),
        convert: None,
    },
    Migration {
        name: "run_counts",
        sql: include_str!("../../migrations/sqlite/0012_run_counts.sql"),
        convert: None,
    },
    Migration {
        name: "run_traces",
        sql: include_str!("../../migrations/sqlite/0013_run_traces.sql"),
        convert: None,
    },
    Migration {
        name: "run_keys",
        sql: include_str!("../../migrations/sqlite/0014_run_keys.sql"),
        convert: None,
    },
    Migration {
        name: "histogram_totals",
        sql: include_str!("../../migrations/sqlite/0015_histogram_totals.sql"),
        convert: Some(histogram_totals),
    },
    Migration {
        name: "run_places",
        sql: include_str!("../../migrations/sqlite/0016_run_places.sql"),
        convert: None,
    },
    Migration {
        name: "nullable_json_check",
        sql: include_str!("../../migrations/sqlite/0017_nullable_json_check.sql"),
        convert: Some(nullable_json_check),
    },
    Migration {
        name: "run_ids_and_histograms",
        sql: include_str!("../../migrations/sqlite/0018_run_ids_and_histograms.sql"),
        convert: None,
    },
];

/// Migration 0017 after its SQL (which is only its reasons): the CHECK of
/// `runs.setup_changed_stored` guarded against NULL, by SQLite's procedure for a schema change
/// that touches no stored content (https://www.sqlite.org/lang_altertable.html#otheralter):
/// the table's text in `sqlite_schema` changed with `writable_schema` on, and the schema
/// version (`PRAGMA schema_version`, not vernier's `user_version`) incremented so that every
/// connection to the file reads the table's definition again. SQLite refuses the UPDATE on a
/// connection with `SQLITE_DBCONFIG_DEFENSIVE` on; vernier's leave it off, SQLite's default.
fn nullable_json_check(conn: &Connection) -> Result<(), StoreError> {
    const UNGUARDED: &str = "CHECK (json_valid(setup_changed_stored))";
    const GUARDED: &str =
        "CHECK (setup_changed_stored IS NULL OR json_valid(setup_changed_stored))";
    let schema_version: i64 = conn.pragma_query_value(None, "schema_version", |r| r.get(0))?;
    conn.pragma_update(None, "writable_schema", true)?;
    let changed = conn.execute(
        "UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) \
         WHERE type = 'table' AND name = 'runs' AND instr(sql, ?1) > 0",
        [UNGUARDED, GUARDED],
    );
    if matches!(changed, Ok(1)) {
        conn.pragma_update(None, "schema_version", schema_version + 1)?;
    }
    conn.pragma_update(None, "writable_schema", false)?;
    match changed? {
        1 => Ok(()),
        _ => Err(StoreError::Corrupt(format!(
            "the table runs has no `{UNGUARDED}`, which schema version 16 gives it"
        ))),
    }
}

/// Migration 0015 after its SQL: the kept merged histograms of every configuration stored
/// before it, from its measured runs' histograms (`records::totals`).
fn histogram_totals(conn: &Connection) -> Result<(), StoreError> {
    crate::records::totals::rebuild(&mut SqliteSql(conn))
}

/// Migration 0005 after its SQL: every run's monitor record, JSON text in the `run_monitors` of
/// version 2, is written again in the binary encoding of [`monitors`] into `run_monitors_v5`,
/// which then replaces `run_monitors`; `run_monitor_summary` held a copy of the summaries and
/// goes. Rows are converted one at a time, so memory does not grow with the database.
fn compact_monitors(conn: &Connection) -> Result<(), StoreError> {
    let mut names = monitors::Names::read(&mut SqliteSql(conn))?;
    let mut stmt = conn.prepare("SELECT run_id, data FROM run_monitors")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let run_id: String = row.get(0)?;
        let text = row.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
        let data: RunMonitorData = from_json!(format!("monitor data of run {run_id}"), text)?;
        monitors::insert_into(
            &mut SqliteSql(conn),
            "run_monitors_v5",
            "run_id",
            &mut names,
            crate::sql::Param::Text(&run_id),
            &data,
        )?;
    }
    drop(rows);
    drop(stmt);
    conn.execute_batch(
        "DROP TABLE run_monitor_summary; DROP TABLE run_monitors; \
         ALTER TABLE run_monitors_v5 RENAME TO run_monitors;",
    )?;
    Ok(())
}

/// The schema version this build writes and understands (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Refuses a schema version this build cannot read: newer, negative, or 0 with tables.
pub(super) fn check_version(conn: &Connection, path: &Path, found: i64) -> Result<(), StoreError> {
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

pub(super) fn user_version(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

/// Applies the missing migrations in one IMMEDIATE transaction: either the schema reaches
/// [`SCHEMA_VERSION`] or nothing changes. Two processes opening a new file at once serialize on
/// the write lock, and the second finds the work done.
pub(super) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let found = user_version(conn).map_err(|e| open_error(path, e))?;
    check_version(conn, path, found)?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    // A migration that builds a table anew drops the old one, which with foreign keys on would
    // delete the rows that refer to it (ON DELETE CASCADE): they are off while the migrations
    // run, as SQLite's procedure for such changes has it
    // (https://www.sqlite.org/lang_altertable.html#otheralter; the setting cannot change inside
    // a transaction), checked before the commit, and on again whatever happens.
    let enforced: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
    conn.pragma_update(None, "foreign_keys", false)?;
    let migrated = migrate_unchecked(conn, path);
    conn.pragma_update(None, "foreign_keys", enforced)?;
    migrated
}

/// [`migrate`], foreign keys off.
fn migrate_unchecked(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have migrated or written meanwhile: check again under the lock.
    let found = user_version(&tx)?;
    check_version(&tx, path, found)?;
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if version <= found {
            continue;
        }
        let failed = |detail: String| StoreError::Schema {
            path: path.to_path_buf(),
            detail: format!(
                "migration {version:04} ({}) from schema version {} failed: {detail}",
                migration.name,
                version - 1,
            ),
        };
        tx.execute_batch(migration.sql)
            .map_err(|e| failed(sqlite_message(&e)))?;
        if let Some(convert) = migration.convert {
            convert(&tx).map_err(|e| match e {
                StoreError::Database(e) => failed(sqlite_message(&e)),
                other => failed(other.to_string()),
            })?;
        }
    }
    let dangling: i64 = tx.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
        r.get(0)
    })?;
    if dangling > 0 {
        return Err(StoreError::Schema {
            path: path.to_path_buf(),
            detail: format!(
                "migrating to schema version {SCHEMA_VERSION} left {dangling} rows that refer \
                 to none"
            ),
        });
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn migrations_match_their_files() {
        assert_eq!(SCHEMA_VERSION, MIGRATIONS.len() as i64);
        // migrations/NNNN_name.sql holds migration NNNN, so the list and the directory agree.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files.len(), MIGRATIONS.len());
        for (i, (migration, file)) in MIGRATIONS.iter().zip(&files).enumerate() {
            assert_eq!(file, &format!("{:04}_{}.sql", i + 1, migration.name));
            assert_eq!(
                std::fs::read_to_string(dir.join(file)).unwrap(),
                migration.sql
            );
        }
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
                "bisections",
                "calibrations",
                "configurations",
                "histogram_totals",
                "kernel_configs",
                "monitor_names",
                "profiles",
                "run_histograms",
                "run_ids",
                "run_monitors",
                "run_traces",
                "run_values",
                "runs",
                "session_tags",
                "sessions"
            ]
        );
    }
}
