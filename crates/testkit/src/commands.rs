//! What the command tests share: a database of a test's own, the outcome of a `vernier`
//! process (its text or its JSON), a quick session recorded into a database, and the rows of
//! an SQLite file as text.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::{vernier, vernier_command};

/// A new temporary directory and the path of the database `results.db` in it (not created
/// yet: the first `vernier` command creates it). The directory, and with it the database, is
/// removed when the returned `TempDir` is dropped, so a test keeps it as long as it needs the
/// database.
///
/// # Panics
/// When no temporary directory can be created.
pub fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = crate::temp_dir();
    let db = dir.path().join("results.db");
    (dir, db)
}

/// A [`temp_db`] into which `vernier import` has read the document `document` (an export or
/// any file it imports).
///
/// # Panics
/// When the import fails.
pub fn imported_db(document: &Path) -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = temp_db();
    vernier(&db).arg("import").arg(document).assert().success();
    (dir, db)
}

/// The standard output of `vernier ARGS` on the database `db` (with an empty standard input),
/// which must succeed.
///
/// # Panics
/// When it cannot start or fails (with its exit status and both outputs), or its output is
/// not UTF-8.
pub fn vernier_stdout(db: &Path, args: &[&str]) -> String {
    ok(vernier(db)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot start vernier: {e}")))
}

/// The standard output of `vernier ARGS` on the database `db`, which must succeed, read as
/// JSON (a `serde_json::Value` or any type the document deserializes to).
///
/// # Panics
/// As [`vernier_stdout`], and when the output is not a JSON document of that type.
pub fn vernier_json<T: serde::de::DeserializeOwned>(db: &Path, args: &[&str]) -> T {
    ok_json(
        vernier(db)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot start vernier: {e}")),
    )
}

/// The standard output of a process that must have succeeded, read as JSON.
///
/// # Panics
/// As [`ok`], and when the output is not a JSON document of type `T`.
pub fn ok_json<T: serde::de::DeserializeOwned>(out: Output) -> T {
    let stdout = ok(out);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not the JSON expected: {e}\n{stdout}"))
}

/// [`vernier_command`] with nothing on standard input, for a process that must not wait for
/// it (a prompt, a piped file).
pub fn vernier_no_input(db: &Path) -> Command {
    let mut cmd = vernier_command(db);
    cmd.stdin(Stdio::null());
    cmd
}

/// The standard output of a process that must have succeeded.
///
/// # Panics
/// When it failed (with its exit status and both outputs), or its output is not UTF-8.
pub fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("stdout is not UTF-8: {e}"))
}

/// The one line on standard error of a process refused as bad input: exit status 2.
///
/// # Panics
/// With another exit status or more than one line on standard error.
pub fn refused(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

/// Records one session of two runs of the deterministic mock benchmark into `db` (a file or a
/// PostgreSQL URL), tagged `tag` (`KEY=VALUE`).
///
/// # Panics
/// When the run fails.
pub fn record_mock_session(db: &Path, tag: &str) {
    ok(vernier_no_input(db)
        .args(["run", "mock:values=1/2", "--warmup", "0"])
        .args([
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--quiet",
            "--tag",
            tag,
        ])
        .output()
        .unwrap_or_else(|e| panic!("cannot start vernier: {e}")));
}

/// The first column of every row that `sql` returns from the SQLite file `db`, as text
/// (integers in decimal, bytes such as a run's id in lowercase hex, NULL as `NULL`), read-only.
///
/// # Panics
/// When the file cannot be opened or the query fails.
pub fn sqlite_texts(db: &Path, sql: &str) -> Vec<String> {
    use rusqlite::types::Value;
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", db.display()));
    let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let rows = stmt
        .query_map([], |r| r.get::<_, Value>(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.map(|v| match v.unwrap_or_else(|e| panic!("{sql}: {e}")) {
        Value::Text(t) => t,
        Value::Integer(i) => i.to_string(),
        Value::Null => "NULL".to_string(),
        Value::Blob(bytes) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        other => format!("{other:?}"),
    })
    .collect()
}

/// `values` sorted, for comparing sets of rows read in no particular order.
pub fn sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort();
    values
}

/// The number just before `before` in the summary of a `vernier sync` (its last line of
/// `output`): `2` of `copied 2 sessions (4 runs)` with `" session(s)"`, where `(s)` stands for
/// the plural's `s` or for nothing (`copied 1 session`).
///
/// # Panics
/// When no number stands there.
pub fn sync_count(output: &str, before: &str) -> usize {
    let summary = output.lines().last().unwrap_or_default();
    let head = [before.replace("(s)", "s"), before.replace("(s)", "")]
        .iter()
        .filter_map(|b| summary.find(b.as_str()))
        .min()
        .map(|at| &summary[..at]);
    head.and_then(|head| head.rsplit([' ', ',', '(']).find(|w| !w.is_empty()))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count before '{before}' in {summary}"))
}
