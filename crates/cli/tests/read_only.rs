//! Read commands never write: they work on a read-only database and directory and leave every
//! byte and name as it was; what is not a vernier database is refused, never made one.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use vernier_testkit::vernier;

/// The names and bytes of every file in `dir`.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = if e.file_type().unwrap().is_file() {
                fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

const READ_COMMANDS: &[&[&str]] = &[
    &["show"],
    &["show", "--format", "json"],
    &["sessions"],
    &["compare", "kernel=A", "kernel=B"],
    &["env", "show", "latest"],
    &["env", "diff", "latest~1", "latest"],
    &["export"],
    &["export", "kernel=A", "--format", "csv"],
];

/// A directory holding only a database with two imported sessions (kernel=A, kernel=B).
fn database() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    fs::create_dir(&data).unwrap();
    let db = data.join("results.db");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/two-kernels.json");
    vernier(&db).arg("import").arg(fixture).assert().success();
    (dir, db)
}

#[test]
fn read_commands_work_on_a_read_only_database_and_write_nothing() {
    let (_dir, db) = database();
    let data = db.parent().unwrap();
    // Root ignores these modes, so the proof is that nothing changed, not that writes failed.
    fs::set_permissions(&db, fs::Permissions::from_mode(0o444)).unwrap();
    fs::set_permissions(data, fs::Permissions::from_mode(0o555)).unwrap();
    let before = snapshot(data);
    assert_eq!(before.len(), 1, "{:?}", before.keys());
    let mut failures = Vec::new();
    for args in READ_COMMANDS {
        let out = vernier(&db).args(*args).output().unwrap();
        if !out.status.success() {
            failures.push(format!(
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let after = snapshot(data);
        if after != before {
            failures.push(format!(
                "{args:?} changed the directory: {:?}",
                after.keys()
            ));
        }
    }
    fs::set_permissions(data, fs::Permissions::from_mode(0o755)).unwrap();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn what_is_not_a_database_is_an_error_naming_it_and_stays_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.db");
    fs::write(&empty, "").unwrap();
    let text = dir.path().join("notes.txt");
    fs::write(&text, "results of last week\n".repeat(50)).unwrap();
    let subdir = dir.path().join("results");
    fs::create_dir(&subdir).unwrap();
    let missing = dir.path().join("missing.db");
    let cases: [(&Path, &str); 4] = [
        (&empty, "is an empty file; expected a vernier database"),
        (
            &text,
            "is not an SQLite database; expected a vernier database",
        ),
        (&subdir, "is a directory; expected a vernier database"),
        (&missing, "does not exist"),
    ];
    let before = snapshot(dir.path());
    for (path, message) in cases {
        for args in READ_COMMANDS {
            let out = vernier(path).args(*args).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{path:?} {args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains(message), "{path:?} {args:?}: {err}");
            assert_eq!(snapshot(dir.path()), before, "{path:?} {args:?}");
        }
    }
    // A write command refuses a directory and a text file too.
    for path in [&text, &subdir] {
        let out = vernier(path)
            .args(["run", "mock:values=1", "--min-runs", "1", "--max-runs", "1"])
            .arg("--quiet")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{path:?}");
        assert_eq!(snapshot(dir.path()), before, "{path:?}");
    }
}

/// Clears the immutable attribute again, also when the test fails.
struct Immutable(Vec<PathBuf>);

impl Immutable {
    /// `chattr +i` on each path, or None (with the reason) where that is not possible: not
    /// root (CAP_LINUX_IMMUTABLE), no chattr, or a file system without the attribute.
    fn set(paths: &[&Path]) -> Result<Immutable, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("setting the immutable attribute needs root".into());
        }
        let mut guard = Immutable(Vec::new());
        for p in paths {
            let status = std::process::Command::new("chattr")
                .arg("+i")
                .arg(p)
                .stderr(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("chattr: {e}"))?;
            if !status.success() {
                return Err(format!("chattr +i {} failed", p.display()));
            }
            guard.0.push(p.to_path_buf());
        }
        Ok(guard)
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(p)
                .status();
        }
    }
}

#[test]
fn read_commands_work_on_an_immutable_database_and_directory() {
    let (_dir, db) = database();
    let data = db.parent().unwrap().to_path_buf();
    let before = snapshot(&data);
    // Not even root can write an immutable file or create a file in an immutable directory
    // (chattr(1)), so here a write would fail, not just show up in the snapshot.
    let guard = match Immutable::set(&[&db, &data]) {
        Ok(g) => g,
        Err(reason) => {
            eprintln!("skipped: {reason}");
            return;
        }
    };
    let mut failures = Vec::new();
    for args in READ_COMMANDS {
        let out = vernier(&db).args(*args).output().unwrap();
        if !out.status.success() {
            failures.push(format!(
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    drop(guard);
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(snapshot(&data), before);
}
