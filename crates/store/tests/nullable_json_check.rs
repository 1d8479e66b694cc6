//! Migration 0017 (the CHECK of the nullable `runs.setup_changed_stored` accepts NULL in every
//! SQLite) on a file written by vernier at schema version 16, kept as a fixture
//! (`tests/fixtures/README.md` says how), and the files vernier writes as the system's `sqlite3`
//! shell sees them. Before SQLite 3.45 json_valid(NULL) is 0, not NULL
//! (https://www.sqlite.org/json1.html#jvalid), so the shell of Debian 12 (3.40) reported "CHECK
//! constraint failed in runs" for every run of a version-16 file in `PRAGMA integrity_check`,
//! and could not load a `.dump` of it back.

#![allow(clippy::unwrap_used)]

mod fixture;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rusqlite::types::Value;
use vernier_model::ChangedSetting;
use vernier_store::{SqliteStore, Store, SCHEMA_VERSION};
use vernier_testkit::{has_programs, stored_session, Program};

const SQLITE3: Program = Program {
    name: "sqlite3",
    package: "sqlite3",
};

const UNGUARDED: &str = "CHECK (json_valid(setup_changed_stored))";
const GUARDED: &str = "CHECK (setup_changed_stored IS NULL OR json_valid(setup_changed_stored))";

/// A copy of `tests/fixtures/schema-16.db` in `dir` (SQLite makes -wal and -shm files beside a
/// WAL database it opens, and the source tree stays as it is).
fn schema_16_copy(dir: &Path) -> PathBuf {
    let path = dir.join("results.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-16.db"),
        &path,
    )
    .unwrap();
    path
}

fn query_i64(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn table_sql(conn: &rusqlite::Connection, table: &str) -> String {
    conn.query_row(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
        [table],
        |r| r.get(0),
    )
    .unwrap()
}

/// Every row of every table of the file, as text, table by table in the order of their names.
fn every_row(path: &Path) -> BTreeMap<String, Vec<String>> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    tables
        .into_iter()
        .map(|table| {
            let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
            let columns = stmt.column_count();
            let mut rows: Vec<String> = stmt
                .query_map([], |r| {
                    let row: Vec<Value> =
                        (0..columns).map(|i| r.get(i)).collect::<Result<_, _>>()?;
                    Ok(format!("{row:?}"))
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            rows.sort();
            (table, rows)
        })
        .collect()
}

/// The nullable columns of the file's tables whose CHECK is a bare json_valid, which SQLite
/// before 3.45 fails for NULL.
fn unguarded_json_checks(conn: &rusqlite::Connection) -> Vec<String> {
    let mut found = Vec::new();
    let tables: Vec<(String, String)> = conn
        .prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql IS NOT NULL")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (table, sql) in tables {
        let nullable: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_xinfo(?1) WHERE \"notnull\" = 0")
            .unwrap()
            .query_map([&table], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for column in nullable {
            if sql.contains(&format!("CHECK (json_valid({column}))")) {
                found.push(format!("{table}.{column}"));
            }
        }
    }
    found
}

/// `sqlite3 -bail FILE SQL`, or without `sql` the shell reading `input` as its standard
/// input: its standard output, after checking that it succeeded and said nothing on its
/// standard error.
fn sqlite3(file: &Path, sql: Option<&str>, input: &str) -> String {
    let mut child = Command::new("sqlite3")
        .arg("-bail")
        .arg(file)
        .args(sql)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "sqlite3 {} {sql:?}: {}: {stderr}",
        file.display(),
        out.status
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The system's `sqlite3` finds the file sound and restores its `.dump` into a new file that
/// holds every row of it.
fn check_with_system_sqlite3(path: &Path, dir: &Path) {
    assert_eq!(sqlite3(path, Some("PRAGMA integrity_check"), ""), "ok\n");
    let dump = sqlite3(path, Some(".dump"), "");
    let restored = dir.join("restored.db");
    sqlite3(&restored, None, &dump);
    assert_eq!(
        sqlite3(&restored, Some("PRAGMA integrity_check"), ""),
        "ok\n"
    );
    assert_eq!(every_row(&restored), every_row(path));
}

#[test]
fn a_file_vernier_writes_is_sound_to_the_system_sqlite3_and_restores_from_its_dump() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    // Runs with no changed setting (stored NULL) and one with a changed setting (JSON text).
    let mut session = stored_session(1_000, &[1.0, 2.0, 3.0]);
    session.configurations[0].runs[1].setup_changed = vec![ChangedSetting {
        setting: "/proc/sys/vm/swappiness".into(),
        set: "10".into(),
        found: "60".into(),
    }];
    let mut store = SqliteStore::open(&path).unwrap();
    store.import_sessions(&[session], &BTreeMap::new()).unwrap();
    drop(store);

    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(
        query_i64(
            &conn,
            "SELECT count(*) FROM runs WHERE setup_changed_stored IS NULL"
        ),
        2
    );
    assert_eq!(
        query_i64(
            &conn,
            "SELECT count(*) FROM runs WHERE setup_changed_stored IS NOT NULL"
        ),
        1
    );
    assert!(table_sql(&conn, "runs").contains(GUARDED));
    assert_eq!(unguarded_json_checks(&conn), Vec::<String>::new());
    // A value that is not JSON is still refused.
    let refused = conn.execute("UPDATE runs SET setup_changed_stored = 'not json'", []);
    assert!(refused.is_err(), "{refused:?}");
    drop(conn);

    if !has_programs(
        "a_file_vernier_writes_is_sound_to_the_system_sqlite3_and_restores_from_its_dump",
        &[SQLITE3],
    ) {
        return;
    }
    check_with_system_sqlite3(&path, dir.path());
}

#[test]
fn a_version_16_file_is_migrated_without_touching_a_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = schema_16_copy(dir.path());
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(query_i64(&conn, "PRAGMA user_version"), 16);
    assert!(table_sql(&conn, "runs").contains(UNGUARDED));
    // Every run of the fixture has no changed setting: NULL, what the old CHECK failed.
    assert!(query_i64(&conn, "SELECT count(*) FROM runs") >= 10);
    assert_eq!(
        query_i64(
            &conn,
            "SELECT count(*) FROM runs WHERE setup_changed_stored IS NOT NULL"
        ),
        0
    );
    let schema_version = query_i64(&conn, "PRAGMA schema_version");
    drop(conn);
    let rows = every_row(&path);

    // Read-only, the file is migrated in a copy in memory and left as it is.
    let read_only = SqliteStore::open_read_only(&path).unwrap();
    let in_memory = fixture::every_session(&read_only);
    drop(read_only);
    assert_eq!(every_row(&path), rows);
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(query_i64(&conn, "PRAGMA user_version"), 16);
    drop(conn);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(fixture::every_session(&store), in_memory);
    drop(store);

    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(query_i64(&conn, "PRAGMA user_version"), SCHEMA_VERSION);
    let runs = table_sql(&conn, "runs");
    assert!(runs.contains(GUARDED), "{runs}");
    assert!(!runs.contains(UNGUARDED), "{runs}");
    assert_eq!(unguarded_json_checks(&conn), Vec::<String>::new());
    // The schema's text changed, so its version did, and every connection reads it again.
    assert!(query_i64(&conn, "PRAGMA schema_version") > schema_version);
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    drop(conn);
    // Not one stored value changed.
    assert_eq!(every_row(&path), rows);

    // The migrated file opens again unchanged.
    let again = SqliteStore::open(&path).unwrap();
    assert_eq!(fixture::every_session(&again), in_memory);
    drop(again);
    assert_eq!(every_row(&path), rows);

    if !has_programs(
        "a_version_16_file_is_migrated_without_touching_a_row",
        &[SQLITE3],
    ) {
        return;
    }
    check_with_system_sqlite3(&path, dir.path());
}
