//! A vernier built without its `postgres` feature (`cargo test -p vernier --no-default-features
//! --test without_postgres`, as CI runs it): a PostgreSQL `--db` is a one-line error that says
//! how to get the support, for reading and recording commands alike, and nothing is written.

#![cfg(not(feature = "postgres"))]
#![allow(clippy::unwrap_used)]

use std::path::Path;

#[test]
fn a_postgres_database_is_refused_saying_how_to_get_the_support() {
    let dir = tempfile::tempdir().unwrap();
    let url = "postgres://bench:s3cret@127.0.0.1:1/vernier";
    for args in [
        vec!["sessions"],
        vec!["run", "mock:values=1/2", "--quiet"],
        vec!["serve", "--port", "0"],
    ] {
        let out = vernier_testkit::vernier_command(Path::new(url))
            .args(&args)
            .env("XDG_CACHE_HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("postgres://bench:***@127.0.0.1:1/vernier is a PostgreSQL database")
                && stderr.contains("built without PostgreSQL support")
                && stderr.contains("cargo feature `postgres`"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("s3cret"), "{stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
