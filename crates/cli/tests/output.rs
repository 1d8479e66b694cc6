//! Where output goes: `export -o` into FIFOs, symbolic links, full devices and standard output,
//! stale temporaries, and every command's standard output closed or full.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::io::Read as _;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use vernier_testkit::{imported_db, temp_db, vernier, vernier_command};

/// A database with two imported sessions (tags kernel=A and kernel=B).
fn database() -> (tempfile::TempDir, PathBuf) {
    imported_db(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/two-kernels.json"))
}

fn is_export(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes)
        .map(|v| v["format"] == "vernier-export")
        .unwrap_or(false)
}

fn one_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes).into_owned();
    assert_eq!(text.lines().count(), 1, "one line expected: {text:?}");
    text
}

#[test]
fn export_writes_through_a_fifo() {
    let (dir, db) = database();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // open(2) of a FIFO for reading blocks until a writer opens it, so the reader is a thread.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            fs::File::open(&fifo)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            bytes
        })
    };
    let out = vernier_command(&db)
        .args(["export", "-o"])
        .arg(&fifo)
        .output()
        .unwrap();
    let still_fifo = fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo();
    if !still_fifo || !out.status.success() {
        // Unblock the reader before failing, whatever is at the path now.
        let _ = fs::OpenOptions::new().write(true).open(&fifo);
    }
    let bytes = reader.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(still_fifo, "the FIFO was replaced");
    assert!(is_export(&bytes), "the reader got the export");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temporary left"
    );
}

#[test]
fn export_writes_through_a_symlink_and_keeps_it() {
    let (dir, db) = database();
    let target = dir.path().join("target.json");
    let link = dir.path().join("link.json");
    fs::write(&target, "old and longer than nothing").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    vernier(&db)
        .args(["export", "-o"])
        .arg(&link)
        .assert()
        .success();
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(fs::read_link(&link).unwrap(), target);
    assert!(is_export(&fs::read(&target).unwrap()));
}

#[test]
fn export_to_a_full_device_is_one_line_and_status_2() {
    // Through a link, so that even if the device were replaced, only the link would be.
    let (dir, db) = database();
    let link = dir.path().join("full");
    std::os::unix::fs::symlink("/dev/full", &link).unwrap();
    let out = vernier(&db)
        .args(["export", "-o"])
        .arg(&link)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = one_line(&out.stderr);
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("full"), "names the path: {err}");
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("/dev/full"));
    assert!(fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn export_to_dash_and_dev_stdout_writes_standard_output() {
    let (_dir, db) = database();
    for target in ["-", "/dev/stdout"] {
        let out = vernier(&db)
            .args(["export", "-o", target])
            .output()
            .unwrap();
        assert!(out.status.success(), "{target}");
        assert!(is_export(&out.stdout), "{target}: export on stdout");
    }
}

#[test]
fn export_replaces_a_regular_file_and_removes_stale_temporaries() {
    let (dir, db) = database();
    let path = dir.path().join("out.json");
    fs::write(&path, "old").unwrap();
    // What a writer killed by SIGKILL leaves: its temporary, named with its (now dead) pid.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = dir
        .path()
        .join(format!(".out.json.vernier-{dead}.Ab12Cd.tmp"));
    fs::write(&stale, "{\"format\": \"vernier-exp").unwrap();
    vernier(&db)
        .args(["export", "-o"])
        .arg(&path)
        .assert()
        .success();
    assert!(is_export(&fs::read(&path).unwrap()));
    assert!(!stale.exists(), "the stale temporary is removed");
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.contains(".vernier-")),
        "no temporary left: {names:?}"
    );
}

/// The read commands, each with output on standard output.
const COMMANDS: &[&[&str]] = &[
    &["list", "-v"],
    &["sessions"],
    &["show"],
    &["show", "--format", "json"],
    &["compare", "kernel=A", "kernel=B"],
    &["env", "show", "latest"],
    &["env", "diff", "latest~1", "latest"],
    &["export"],
    &["export", "--format", "csv"],
];

#[test]
fn closed_standard_output_ends_quietly() {
    let (_dir, db) = database();
    for args in COMMANDS {
        // The reading end is closed before the child starts, so every write fails with EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = vernier_command(&db)
            .args(*args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(141),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{args:?}: quiet");
    }
}

#[test]
fn full_standard_output_is_one_line_and_status_2() {
    let (_dir, db) = database();
    for args in COMMANDS {
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = vernier_command(&db)
            .args(*args)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = one_line(&out.stderr);
        assert_eq!(
            err.trim_end(),
            "error: cannot write to standard output: No space left on device (os error 28)",
            "{args:?}"
        );
    }
}

#[test]
fn a_session_whose_output_reader_left_is_recorded_and_ends_quietly() {
    let (dir, db) = temp_db();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    // Progress lines (stdout is not a terminal) and the summary both meet the closed pipe.
    let out = vernier_command(&db)
        .args([
            "run",
            "mock:values=1/2/3",
            "--min-runs",
            "3",
            "--max-runs",
            "3",
        ])
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CACHE_HOME", dir.path())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(141),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Warnings about the settings may come; no error, no panic.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("error") && !err.contains("panicked"), "{err}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (status, runs): (String, i64) = conn
        .query_row(
            "SELECT status, (SELECT count(*) FROM runs) FROM sessions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(status, "completed");
    assert_eq!(runs, 4, "one warmup and three measured runs");
}

#[test]
fn export_through_dev_stdout_to_a_closed_pipe_ends_quietly() {
    let (_dir, db) = database();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = vernier_command(&db)
        .args(["export", "-o", "/dev/stdout"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(141));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn intervals_are_labelled_with_the_sessions_confidence_level() {
    let (dir, db) = temp_db();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/two-kernels.json");
    let mut export: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(fixture).unwrap()).unwrap();
    export["sessions"][0]["settings"]["confidence_level"] = serde_json::json!(0.9);
    let tag = export["sessions"][0]["tags"]["kernel"]
        .as_str()
        .unwrap()
        .to_string();
    let file = dir.path().join("level.json");
    fs::write(&file, export.to_string()).unwrap();
    vernier(&db).arg("import").arg(&file).assert().success();

    let selector = format!("kernel={tag}");
    let out = vernier(&db).args(["show", &selector]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("median 90% CI"), "{text}");
    assert!(text.contains("mean 90% CI (t)"), "{text}");
    assert!(!text.contains("95%"), "{text}");
    let out = vernier(&db)
        .args(["show", &selector, "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[0]["level"], 0.9);
    assert!(
        json[0]["ci_meaning"].as_str().unwrap().contains("90%"),
        "{json}"
    );
}
