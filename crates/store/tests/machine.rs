//! The machine each session ran on: stored with the session (schema version 7, also filled in
//! for sessions stored before it), shown in the session list and selected by `host=NAME`, on
//! both engines (`vernier_testkit::databases`; PostgreSQL's version 6 in postgres.rs).

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use uuid::Uuid;
use vernier_model::{Environment, SessionInfo};
use vernier_store::{Access, Location, SqliteStore, Store, StoreError};
use vernier_testkit::{databases, session_info};

fn session(hostname: Option<&str>, machine_id: Option<&str>, tags: &[(&str, &str)]) -> SessionInfo {
    SessionInfo {
        tags: vernier_testkit::tags(tags),
        environment: Environment {
            hostname: hostname.map(Into::into),
            machine_id: machine_id.map(Into::into),
            ..Environment::default()
        },
        ..session_info()
    }
}

const ID_A: &str = "0123456789abcdef0123456789abcdef";

#[test]
fn host_selects_by_hostname_or_machine_id_and_combines_with_tags() {
    for db in databases("host_selects_by_hostname_or_machine_id_and_combines_with_tags") {
        let mut store = vernier_store::open(&Location::parse(db.arg()).unwrap(), Access::Create)
            .unwrap_or_else(|e| panic!("{}: {e}", db.engine()));
        let a1 = session(Some("box1"), Some(ID_A), &[("kernel", "A")]);
        let a2 = session(
            Some("box1"),
            Some(ID_A),
            &[("kernel", "B"), ("host", "box2")],
        );
        let b = session(Some("box2"), None, &[("kernel", "A")]);
        let unknown = session(None, None, &[("kernel", "A")]);
        for s in [&a1, &a2, &b, &unknown] {
            store.begin_session(s).unwrap();
        }

        assert_eq!(store.select("host=box1").unwrap(), [a1.id, a2.id]);
        assert_eq!(
            store.select(&format!("host={ID_A}")).unwrap(),
            [a1.id, a2.id]
        );
        assert_eq!(
            store
                .select(&format!("host={}", ID_A.to_uppercase()))
                .unwrap(),
            [a1.id, a2.id]
        );
        assert_eq!(store.select("host=box1,kernel=A").unwrap(), [a1.id]);
        assert_eq!(store.select("kernel=A,host=box2").unwrap(), [b.id]);
        // A tag called host stays selectable.
        assert_eq!(store.select("tag:host=box2").unwrap(), [a2.id]);

        match store.select("host=box3") {
            Err(StoreError::NotFound { detail, .. }) => {
                assert!(
                    detail.contains("box3") && detail.contains("box1, box2"),
                    "{detail}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            store.select("host=box2,kernel=B"),
            Err(StoreError::NotFound { .. })
        ));

        let headers = store.session_headers().unwrap();
        let hosts: Vec<(Option<&str>, Option<&str>)> = headers
            .iter()
            .map(|h| (h.hostname.as_deref(), h.machine_id.as_deref()))
            .collect();
        assert_eq!(
            hosts,
            [
                (Some("box1"), Some(ID_A)),
                (Some("box1"), Some(ID_A)),
                (Some("box2"), None),
                (None, None)
            ]
        );
    }
}

#[test]
fn a_version_6_database_gains_the_machine_of_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    for file in [
        "0001_initial.sql",
        "0002_monitors_setup_findings.sql",
        "0003_session_owner.sql",
        "0004_calibrations.sql",
        "0005_compact_monitors.sql",
        "0006_distributions_loads.sql",
    ] {
        conn.execute_batch(&std::fs::read_to_string(migrations.join(file)).unwrap())
            .unwrap();
        if file.starts_with("0005") {
            // What migration 0005 does in Rust after its SQL, for a database without runs.
            conn.execute_batch(
                "DROP TABLE run_monitor_summary; DROP TABLE run_monitors; \
                 ALTER TABLE run_monitors_v5 RENAME TO run_monitors;",
            )
            .unwrap();
        }
    }
    conn.pragma_update(None, "user_version", 6).unwrap();
    conn.pragma_update(None, "application_id", 0x7672_6e72)
        .unwrap();
    let (old, anonymous) = (Uuid::new_v4(), Uuid::new_v4());
    for (id, environment) in [(old, r#"{"hostname": "box1"}"#), (anonymous, "{}")] {
        conn.execute(
            "INSERT INTO sessions (id, started_at_ns, status, specs, settings, vernier_version, \
             fingerprint, environment) VALUES (?1, 1, 'completed', '[]', '{}', '0.1.0', 'f', ?2)",
            [id.to_string(), environment.to_string()],
        )
        .unwrap();
    }
    drop(conn);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.select("host=box1").unwrap(), [old]);
    let headers: BTreeMap<Uuid, Option<String>> = store
        .session_headers()
        .unwrap()
        .into_iter()
        .map(|h| (h.id, h.hostname))
        .collect();
    assert_eq!(headers[&old].as_deref(), Some("box1"));
    assert_eq!(headers[&anonymous], None);
}
