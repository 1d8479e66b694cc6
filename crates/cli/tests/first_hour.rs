//! What a new user meets in the first hour: tables that fit the terminal (also one whose size
//! is unknown), help that explains the columns, the man page's sections, `export` of several
//! selectors.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use vernier_testkit::vernier;

/// A database with two imported sessions (tags kernel=A and kernel=B).
fn database() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/two-kernels.json");
    vernier(&db).arg("import").arg(fixture).assert().success();
    (dir, db)
}

/// `show`'s table under `script`, whose terminal reports a size of 0x0 (as a serial console
/// does): columns as wide as their text, not one character.
#[test]
fn a_terminal_of_size_zero_gets_whole_columns() {
    if Command::new("script").arg("--version").output().is_err() {
        println!("skipped: script(1) (util-linux) is not installed");
        return;
    }
    let (dir, db) = database();
    let binary = assert_cmd::cargo::cargo_bin("vernier");
    let command = format!(
        "{} --db {} show kernel=A",
        binary.display(),
        db.display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("VERNIER_DB")
        .env_remove("COLUMNS")
        .env("XDG_CACHE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .env("VERNIER_RUN_DIR", dir.path().join("run"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("│ median "), "one-character columns: {text}");
}
