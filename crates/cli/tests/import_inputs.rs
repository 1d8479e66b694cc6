//! `vernier import` reads its input once, so that every kind of input works for every format:
//! a file, standard input (`-` and `/dev/stdin`), a pipe of the shell's process substitution
//! (`<(cat FILE)`) and a FIFO. A byte order mark is skipped; files of other kinds are named.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;
use vernier_testkit::{refused, vernier_command};

/// A test that hangs is a failure: a FIFO nobody opens again, a pipe read twice.
const LIMIT: Duration = Duration::from_secs(120);

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// An export larger than the bytes that tell a format (64 KiB), so that reading it once
/// matters: eight copies of the sessions of `two-kernels.json`, with ids of their own.
fn large_export(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("tests/fixtures/two-kernels.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut sessions = Vec::new();
    let mut next = 0u64;
    let mut id = || {
        next += 1;
        Value::String(format!("00000000-0000-4000-b000-{next:012x}"))
    };
    for _ in 0..8 {
        for session in doc["sessions"].as_array().unwrap() {
            let mut s = session.clone();
            s["id"] = id();
            for c in s["configurations"].as_array_mut().unwrap() {
                c["id"] = id();
                for r in c["runs"].as_array_mut().unwrap() {
                    r["id"] = id();
                }
            }
            sessions.push(s);
        }
    }
    let mut large = doc.clone();
    large["sessions"] = Value::Array(sessions);
    let path = dir.join("large.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&large).unwrap()).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 128 * 1024);
    path
}

/// One way of giving a file to `import`, on the database it is given.
type Importer<'a> = dyn Fn(&Path) -> Output + 'a;

/// Every format import takes, with the sessions it holds.
fn formats(dir: &Path) -> Vec<(&'static str, PathBuf, usize)> {
    vec![
        ("export", fixture("tests/fixtures/two-kernels.json"), 2),
        ("large export", large_export(dir), 16),
        (
            "hyperfine",
            fixture("tests/fixtures/hyperfine-sleep.json"),
            1,
        ),
        (
            "cyclictest histogram",
            fixture("../formats/tests/fixtures/cyclictest/2.4-h1000.txt"),
            1,
        ),
        (
            "cyclictest json",
            fixture("../formats/tests/fixtures/cyclictest/2.4-h400.json"),
            1,
        ),
    ]
}

/// Runs `command`, writing `input` to its standard input, and waits for it.
fn with_stdin(mut command: Command, input: &[u8]) -> Output {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // The reader may refuse and leave before it has read everything: a broken pipe is fine.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = wait(child);
    writer.join().unwrap();
    out
}

/// Waits for `child` at most [`LIMIT`], killing it after.
fn wait(mut child: std::process::Child) -> Output {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > LIMIT {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "did not finish within {LIMIT:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The line `import` prints on success: imported and skipped sessions.
fn imported(out: &Output) -> (usize, usize) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let words: Vec<&str> = stdout.split_whitespace().collect();
    assert_eq!(words[0], "imported", "{stdout}");
    (words[1].parse().unwrap(), words[4].parse().unwrap())
}

fn import_file(db: &Path, file: &Path) -> Output {
    let mut command = vernier_command(db);
    command.arg("import").arg(file).stdin(Stdio::null());
    wait(
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

#[test]
fn every_format_imports_from_standard_input_a_pipe_and_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    for (name, file, sessions) in formats(dir.path()) {
        let bytes = std::fs::read(&file).unwrap();
        let ways: [(&str, &Importer); 5] = [
            ("-", &|db| {
                let mut c = vernier_command(db);
                c.args(["import", "-"]);
                with_stdin(c, &bytes)
            }),
            ("/dev/stdin", &|db| {
                let mut c = vernier_command(db);
                c.args(["import", "/dev/stdin"]);
                with_stdin(c, &bytes)
            }),
            ("- < FILE", &|db| {
                let mut c = vernier_command(db);
                c.args(["import", "-"])
                    .stdin(std::fs::File::open(&file).unwrap());
                wait(
                    c.stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap(),
                )
            }),
            ("<(cat FILE)", &|db| {
                // bash's process substitution: a path /dev/fd/N of a pipe.
                let mut c = Command::new("bash");
                c.arg("-c")
                    .arg(r#""$@" import <(cat "$FILE")"#)
                    .arg("bash")
                    .arg(vernier_command(db).get_program())
                    .args(vernier_command(db).get_args())
                    .env("FILE", &file)
                    .env_remove("VERNIER_DB")
                    .stdin(Stdio::null());
                wait(
                    c.stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap(),
                )
            }),
            ("a FIFO", &|db| {
                let fifo = db.with_extension("fifo");
                let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
                // SAFETY: `path` is a NUL-terminated path.
                assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
                let mut c = vernier_command(db);
                c.arg("import").arg(&fifo).stdin(Stdio::null());
                let child = c
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                // Opening a FIFO for writing waits for its reader.
                let bytes = bytes.clone();
                let writer = std::thread::spawn(move || {
                    let _ = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&fifo)
                        .and_then(|mut f| f.write_all(&bytes));
                });
                let out = wait(child);
                writer.join().unwrap();
                out
            }),
        ];
        for (way, import) in ways {
            let db = dir
                .path()
                .join(format!("{}-{}.db", name.replace(' ', "-"), way.len()));
            let out = import(&db);
            assert_eq!(imported(&out), (sessions, 0), "{name} through {way}");
            // The same sessions as the file gives: imported again from it, all are present.
            assert_eq!(
                imported(&import_file(&db, &file)),
                (0, sessions),
                "{name} through {way}"
            );
        }
    }
}

#[test]
fn a_truncated_or_refused_input_on_a_pipe_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let large = std::fs::read(large_export(dir.path())).unwrap();
    let db = dir.path().join("a.db");
    // Cut in the middle: the first sessions are valid, the document is not.
    let mut c = vernier_command(&db);
    c.args(["import", "-"]);
    let stderr = refused(with_stdin(c, &large[..large.len() / 2]));
    assert!(
        stderr.starts_with(
            "error: cannot import standard input: not a valid vernier export: EOF while parsing"
        ),
        "{stderr}"
    );
    assert!(!db.exists());
    // A session that vernier could not have written, late in the stream.
    let text = String::from_utf8(large).unwrap();
    let at = text.rfind("\"index\": 1,").unwrap();
    let bad = format!("{}\"index\": -1,{}", &text[..at], &text[at + 11..]);
    let mut c = vernier_command(&db);
    c.args(["import", "-"]);
    let stderr = refused(with_stdin(c, bad.as_bytes()));
    assert!(stderr.contains("invalid value: integer `-1`"), "{stderr}");
    assert!(!db.exists());
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    for (name, file, sessions) in formats(dir.path()) {
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend(std::fs::read(&file).unwrap());
        let with_bom = dir.path().join("bom");
        std::fs::write(&with_bom, &bytes).unwrap();
        let db = dir.path().join(format!("{}.db", name.replace(' ', "-")));
        assert_eq!(
            imported(&import_file(&db, &with_bom)),
            (sessions, 0),
            "{name}"
        );
        // The same sessions as without the mark.
        assert_eq!(imported(&import_file(&db, &file)), (0, sessions), "{name}");
        let mut c = vernier_command(&db);
        c.args(["import", "-"]);
        assert_eq!(imported(&with_stdin(c, &bytes)), (0, sessions), "{name}");
    }
}

#[test]
fn files_of_other_kinds_are_named_with_what_import_takes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let cases: [(&str, &[u8], &str); 5] = [
        (
            "a.csv",
            b"a,b\n1,2\n",
            "the file is CSV (comma-separated values)",
        ),
        (
            "runs.csv",
            b"session_id,session_started_at_ns,tags,fingerprint\n",
            "the file is vernier's CSV export",
        ),
        (
            "other.db",
            b"SQLite format 3\0\x10\0\x01\x01",
            "the file is an SQLite database",
        ),
        (
            "x.json.gz",
            b"\x1f\x8b\x08\0\0\0\0\0",
            "the file is gzip-compressed",
        ),
        ("empty.json", b"", "the file is empty"),
    ];
    for (name, bytes, what) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, bytes).unwrap();
        let stderr = refused(import_file(&db, &file));
        assert!(
            stderr.starts_with(&format!("error: cannot import {}: {what}", file.display())),
            "{stderr}"
        );
        assert!(
            stderr.contains(
                "import takes a vernier export (JSON), hyperfine --export-json output or \
                 cyclictest's output"
            ),
            "{stderr}"
        );
        assert!(!db.exists(), "{name}");
    }
}
