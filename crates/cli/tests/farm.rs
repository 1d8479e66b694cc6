//! Results of several machines: the machine of each session (`sessions`, `env`, `host=NAME`),
//! `vernier sync` and `vernier merge`, end to end on SQLite files.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use vernier_testkit::vernier_command;

fn vernier(db: &Path) -> std::process::Command {
    let mut cmd = vernier_command(db);
    cmd.stdin(Stdio::null());
    cmd
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Exit status 2 with one line on standard error, which is returned.
fn refused(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

/// Records one session of two mock runs into `db`, tagged `tag`.
fn record(db: &Path, tag: &str) {
    ok(vernier(db)
        .args([
            "run",
            "mock:values=1/2",
            "--warmup",
            "0",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--quiet",
            "--tag",
            tag,
        ])
        .output()
        .unwrap());
}

fn query(db: &Path, sql: &str) -> Vec<String> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    let rows = stmt
        .query_map([], |r| r.get::<_, rusqlite::types::Value>(0))
        .unwrap();
    rows.map(|v| match v.unwrap() {
        rusqlite::types::Value::Text(t) => t,
        rusqlite::types::Value::Integer(i) => i.to_string(),
        rusqlite::types::Value::Null => "NULL".to_string(),
        other => format!("{other:?}"),
    })
    .collect()
}

fn this_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    (dir, db)
}

#[test]
fn each_session_records_and_shows_its_machine() {
    let (_dir, db) = temp_db();
    record(&db, "kernel=A");
    let host = this_hostname();
    assert_eq!(query(&db, "SELECT hostname FROM sessions"), [host.as_str()]);
    let machine_id = ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| t.len() == 32);
    assert_eq!(
        query(&db, "SELECT machine_id FROM sessions"),
        [machine_id.clone().unwrap_or_else(|| "NULL".to_string())]
    );

    let list = ok(vernier(&db).arg("sessions").output().unwrap());
    let header = list.lines().next().unwrap();
    assert!(header.contains("host"), "{list}");
    assert!(list.lines().nth(1).unwrap().contains(&host), "{list}");
    let env = ok(vernier(&db)
        .args(["env", "show", "latest"])
        .output()
        .unwrap());
    assert!(env.contains(&format!("hostname: {host}")), "{env}");
    let id_line = match &machine_id {
        Some(id) => format!("machine_id: {id}"),
        None => "machine_id: unknown".to_string(),
    };
    assert!(env.contains(&id_line), "{env}");

    let selected = ok(vernier(&db)
        .args(["sessions", &format!("host={host},kernel=A")])
        .output()
        .unwrap());
    assert_eq!(selected.lines().count(), 2, "{selected}");
    let err = refused(
        vernier(&db)
            .args(["sessions", "host=no-such-machine"])
            .output()
            .unwrap(),
    );
    assert!(
        err.contains("no-such-machine") && err.contains(&host),
        "{err}"
    );
}
