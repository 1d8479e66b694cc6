//! What only the PostgreSQL engine has: its schema versions (a database of version 6 migrated to
//! the current one, a newer one refused, someone else's tables refused), read-only connections,
//! and errors that name the database without its password. Each test has a database of its own
//! (`vernier_testkit::postgres_database`; `skipped: ...` without a server, except under CI).

#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used)]

use std::path::Path;

use uuid::Uuid;
use vernier_store::{Access, Location, Store, StoreError, SCHEMA_VERSION};
use vernier_testkit::{postgres_database, TestDatabase};

fn open(db: &TestDatabase, access: Access) -> Result<Box<dyn Store>, StoreError> {
    vernier_store::open(&Location::parse(db.arg()).unwrap(), access)
}

#[test]
fn a_version_6_database_is_migrated_to_the_current_version() {
    let Some(db) = postgres_database("a_version_6_database_is_migrated_to_the_current_version")
    else {
        return;
    };
    let pg = db.postgres().unwrap();
    let baseline = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres/0006_baseline.sql"),
    )
    .unwrap();
    let mut client = pg.client();
    client.batch_execute(&baseline).unwrap();
    client
        .batch_execute(
            "CREATE TABLE schema_version (version BIGINT NOT NULL); \
             INSERT INTO schema_version VALUES (6)",
        )
        .unwrap();
    let (old, anonymous) = (Uuid::new_v4(), Uuid::new_v4());
    for (id, environment) in [(old, r#"{"hostname": "box1"}"#), (anonymous, "{}")] {
        client
            .execute(
                "INSERT INTO sessions (id, started_at_ns, status, specs, settings, \
                 vernier_version, fingerprint, environment) \
                 VALUES ($1, 1, 'completed', '[]', '{}', '0.1.0', 'f', $2)",
                &[&id.to_string(), &environment],
            )
            .unwrap();
    }
    // No command migrates it as a side effect, not even one that records: each says which
    // command does.
    for access in [Access::Read, Access::Write, Access::Create] {
        match open(&db, access) {
            Err(StoreError::Schema { detail, .. }) => {
                assert!(detail.contains("`vernier db migrate --db URL`"), "{detail}")
            }
            other => panic!("{access:?}: {:?}", other.map(|_| ())),
        }
    }
    assert_eq!(pg.query_i64("SELECT version FROM schema_version"), 6);

    let location = Location::parse(db.arg()).unwrap();
    assert_eq!(vernier_store::migrate(&location).unwrap(), Some(6));
    assert_eq!(
        pg.query_i64("SELECT version FROM schema_version"),
        SCHEMA_VERSION
    );
    // Migration 0016 (runs stored by their place, `runs.id` gone) is not additive: only a
    // vernier of its version or later reads the database.
    assert_eq!(pg.query_i64("SELECT readable_by FROM schema_version"), 16);
    assert_eq!(
        vernier_store::migrate(&location).unwrap(),
        Some(SCHEMA_VERSION)
    );
    let store = open(&db, Access::Write).unwrap();
    assert_eq!(store.select("host=box1").unwrap(), [old]);
    let hosts: Vec<Option<String>> = store
        .session_headers()
        .unwrap()
        .into_iter()
        .map(|h| h.hostname)
        .collect();
    assert_eq!(hosts.len(), 2);
    assert!(hosts.contains(&Some("box1".to_string())) && hosts.contains(&None));
}

#[test]
fn foreign_newer_and_empty_databases_are_refused() {
    let Some(db) = postgres_database("foreign_newer_and_empty_databases_are_refused") else {
        return;
    };
    let pg = db.postgres().unwrap();
    // Empty: only a recording command creates the tables.
    for access in [Access::Read, Access::Write] {
        match open(&db, access) {
            Err(StoreError::NotVernier { detail, .. }) => {
                assert!(detail.contains("`vernier run` creates them"), "{detail}")
            }
            other => panic!("{access:?}: {:?}", other.map(|_| ())),
        }
    }
    assert_eq!(
        pg.query_i64("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"),
        0
    );
    // Someone else's tables: never mixed with vernier's.
    pg.client()
        .batch_execute("CREATE TABLE orders (id INT)")
        .unwrap();
    match open(&db, Access::Create) {
        Err(e @ StoreError::NotVernier { .. }) => {
            assert!(e.to_string().contains("1 tables"), "{e}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    // A newer vernier's database.
    pg.client()
        .batch_execute(
            "DROP TABLE orders; CREATE TABLE schema_version (version BIGINT NOT NULL); \
             INSERT INTO schema_version VALUES (999)",
        )
        .unwrap();
    for access in [Access::Create, Access::Write, Access::Read] {
        match open(&db, access) {
            Err(StoreError::TooNew { found: 999, .. }) => {}
            other => panic!("{access:?}: {:?}", other.map(|_| ())),
        }
    }
}

/// A database one version ahead of this vernier, written by a newer one whose migration only
/// added (a column here): this vernier reads it, and refuses to write to it or migrate it.
/// Unless its `readable_by` says this version cannot read it.
#[test]
fn a_newer_additive_schema_is_read_and_never_written() {
    let Some(db) = postgres_database("a_newer_additive_schema_is_read_and_never_written") else {
        return;
    };
    let pg = db.postgres().unwrap();
    let mut store = open(&db, Access::Create).unwrap();
    let session = vernier_testkit::session_info();
    store.begin_session(&session).unwrap();
    let id = session.id;
    drop(store);
    let ahead = SCHEMA_VERSION + 1;
    pg.client()
        .batch_execute(&format!(
            "ALTER TABLE sessions ADD COLUMN added_later TEXT NOT NULL DEFAULT ''; \
             UPDATE schema_version SET version = {ahead}, readable_by = {SCHEMA_VERSION}"
        ))
        .unwrap();
    let reader = open(&db, Access::Read).unwrap();
    assert_eq!(reader.select("latest").unwrap(), [id]);
    assert_eq!(reader.session_headers().unwrap().len(), 1);
    drop(reader);
    for access in [Access::Create, Access::Write] {
        match open(&db, access) {
            Err(StoreError::TooNew { found, .. }) if found == ahead => {}
            other => panic!("{access:?}: {:?}", other.map(|_| ())),
        }
    }
    match vernier_store::migrate(&Location::parse(db.arg()).unwrap()) {
        Err(StoreError::TooNew { found, .. }) if found == ahead => {}
        other => panic!("{other:?}"),
    }
    pg.client()
        .batch_execute(&format!("UPDATE schema_version SET readable_by = {ahead}"))
        .unwrap();
    match open(&db, Access::Read) {
        Err(StoreError::TooNew { found, .. }) if found == ahead => {}
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert_eq!(pg.query_i64("SELECT version FROM schema_version"), ahead);
}

#[test]
fn a_reading_connection_writes_nothing() {
    let Some(db) = postgres_database("a_reading_connection_writes_nothing") else {
        return;
    };
    drop(open(&db, Access::Create).unwrap());
    let mut reader = open(&db, Access::Read).unwrap();
    let err = reader
        .put_kernel_config("abc", "CONFIG_HZ=250\n")
        .unwrap_err();
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(db.count("kernel_configs"), 0);
}

#[test]
fn errors_name_the_database_without_its_password() {
    // No server needed: nothing listens on port 1.
    let url = "postgres://bench:s3cret@127.0.0.1:1/vernier";
    let err = vernier_store::open(&Location::Postgres(url.to_string()), Access::Read)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot connect to database postgres://bench:***@127.0.0.1:1/vernier: "),
        "{err}"
    );
    assert!(!err.contains("s3cret"), "{err}");
}
