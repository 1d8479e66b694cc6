//! `vernier tag`, `note`, `delete` and `sessions SELECTOR` end to end, each test with its own
//! database, checked in the SQLite file itself.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::io::Write;
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use vernier_testkit::{temp_db, vernier_command};

/// The binary on `db`, with nothing on standard input (`delete` asks first).
fn vernier(db: &Path) -> std::process::Command {
    let mut cmd = vernier_command(db);
    cmd.stdin(Stdio::null());
    cmd
}

fn ok(cmd: &mut std::process::Command) -> String {
    vernier_testkit::ok(cmd.output().unwrap())
}

/// Exit status 2 with one line on standard error, which is returned.
fn refused(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

/// A database with `n` sessions of two mock runs each, tagged `n=<index>` and `kernel=A`.
fn sessions(n: usize) -> (tempfile::TempDir, PathBuf, Vec<String>) {
    let (dir, db) = temp_db();
    for i in 0..n {
        ok(vernier(&db).args([
            "run",
            "mock:values=1/2",
            "--warmup",
            "1",
            "--min-runs",
            "2",
            "--max-runs",
            "2",
            "--quiet",
            "--tag",
            &format!("n={i}"),
            "--tag",
            "kernel=A",
        ]));
    }
    let ids = query_strings(&db, "SELECT id FROM sessions ORDER BY started_at_ns, rowid");
    assert_eq!(ids.len(), n);
    (dir, db, ids)
}

fn query_strings(db: &Path, sql: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    let rows = stmt
        .query_map([], |r| r.get::<_, Option<String>>(0))
        .unwrap()
        .map(|r| r.unwrap().unwrap_or_else(|| "NULL".into()))
        .collect();
    rows
}

fn count(db: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn tags_of(db: &Path, id: &str) -> Vec<String> {
    query_strings(
        db,
        &format!(
            "SELECT key || '=' || value FROM session_tags WHERE session_id = '{id}' ORDER BY key"
        ),
    )
}

#[test]
fn tag_sets_replaces_and_removes_tags() {
    let (_dir, db, ids) = sessions(2);
    let out = ok(vernier(&db).args(["tag", "latest", "kernel=B", "extra=x y"]));
    assert_eq!(out, format!("session {}: extra=x y kernel=B n=1\n", ids[1]));
    assert_eq!(tags_of(&db, &ids[1]), ["extra=x y", "kernel=B", "n=1"]);
    assert_eq!(tags_of(&db, &ids[0]), ["kernel=A", "n=0"]);

    // A tag selector names every session carrying the tags. A tag to remove that none of
    // them carries is refused, and nothing changes.
    let e = refused(
        vernier(&db)
            .args(["tag", "kernel=A", "--remove", "n", "--remove", "absent"])
            .output()
            .unwrap(),
    );
    assert!(e.contains("no tag 'absent' to remove"), "{e}");
    assert_eq!(tags_of(&db, &ids[0]), ["kernel=A", "n=0"]);
    ok(vernier(&db).args(["tag", "kernel=A", "--remove", "n"]));
    assert_eq!(tags_of(&db, &ids[0]), ["kernel=A"]);
    assert_eq!(tags_of(&db, &ids[1]), ["extra=x y", "kernel=B", "n=1"]);
    ok(vernier(&db).args(["tag", &ids[1][..8], "--remove", "extra"]));
    assert_eq!(tags_of(&db, &ids[1]), ["kernel=B", "n=1"]);

    // Control characters, nothing to do, and a selector matching nothing are refused; nothing
    // changes.
    let e = refused(
        vernier(&db)
            .args(["tag", "latest", "k=a\u{1b}[31mb"])
            .output()
            .unwrap(),
    );
    assert!(
        e.contains("tag value 'a\\u{1b}[31mb' contains the control character"),
        "{e}"
    );
    let e = refused(
        vernier(&db)
            .args(["tag", "latest", "a\nb=1"])
            .output()
            .unwrap(),
    );
    assert!(e.contains("tag key"), "{e}");
    refused(vernier(&db).args(["tag", "latest"]).output().unwrap());
    let e = refused(
        vernier(&db)
            .args(["tag", "kernel=C", "x=1"])
            .output()
            .unwrap(),
    );
    assert!(e.contains("no session matches 'kernel=C'"), "{e}");
    assert_eq!(tags_of(&db, &ids[1]), ["kernel=B", "n=1"]);
}

#[test]
fn sessions_filters_by_selector_and_counts_what_it_hides() {
    let (_dir, db, ids) = sessions(3);
    ok(vernier(&db).args(["tag", &ids[0], "kernel=B"]));
    let all = ok(vernier(&db).arg("sessions"));
    assert_eq!(all.lines().count(), 4, "{all}");
    assert!(!all.contains("not shown"), "{all}");
    let some = ok(vernier(&db).args(["sessions", "kernel=A"]));
    let lines: Vec<&str> = some.lines().collect();
    assert_eq!(lines.len(), 4, "{some}");
    assert!(
        lines[1].starts_with(&ids[1]) && lines[2].starts_with(&ids[2]),
        "{some}"
    );
    assert_eq!(
        lines[3],
        "1 other session not shown (not selected by 'kernel=A')"
    );
    let one = ok(vernier(&db).args(["sessions", "latest"]));
    assert!(one.contains("2 other sessions not shown"), "{one}");
    refused(
        vernier(&db)
            .args(["sessions", "kernel=C"])
            .output()
            .unwrap(),
    );
}

#[test]
fn note_sets_replaces_and_removes_the_note() {
    let (_dir, db, ids) = sessions(1);
    let note = |db: &Path| query_strings(db, "SELECT note FROM sessions");
    let out = ok(vernier(&db).args(["note", "latest", "baseline, quiet machine"]));
    assert_eq!(out, format!("session {}: note set\n", ids[0]));
    assert_eq!(note(&db), ["baseline, quiet machine"]);
    let shown = ok(vernier(&db).args(["show", "latest"]));
    assert!(shown.contains("baseline, quiet machine"), "{shown}");
    let e = refused(
        vernier(&db)
            .args(["note", "latest", "two\nlines"])
            .output()
            .unwrap(),
    );
    assert!(
        e.contains("note 'two\\nlines' contains the control character"),
        "{e}"
    );
    assert_eq!(note(&db), ["baseline, quiet machine"]);
    let out = ok(vernier(&db).args(["note", "latest", ""]));
    assert_eq!(out, format!("session {}: note removed\n", ids[0]));
    assert_eq!(note(&db), ["NULL"]);
}

#[test]
fn delete_refuses_without_yes_when_stdin_is_not_a_terminal() {
    let (_dir, db, _ids) = sessions(1);
    let e = refused(vernier(&db).args(["delete", "latest"]).output().unwrap());
    assert_eq!(
        e,
        "error: not deleting 1 session without confirmation: standard input is not a \
         terminal; give --yes\n"
    );
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 1);
    assert!(count(&db, "SELECT count(*) FROM runs") > 0);
}

/// Opens a pseudo-terminal: (master, slave), for a child whose standard input must be a
/// terminal (pty(7)).
fn pty() -> (std::fs::File, std::fs::File) {
    // SAFETY: plain libc calls on a descriptor this function owns; ptsname_r writes at most
    // `buf.len()` bytes.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0);
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut buf = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, buf.as_mut_ptr(), buf.len()), 0);
        let name = std::ffi::CStr::from_ptr(buf.as_ptr()).to_str().unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name)
            .unwrap();
        (std::fs::File::from_raw_fd(master), slave)
    }
}

#[test]
fn delete_asks_on_a_terminal() {
    let (_dir, db, _ids) = sessions(2);
    for (answer, left) in [("n\n", 2), ("yes\n", 1)] {
        let (mut master, slave) = pty();
        master.write_all(answer.as_bytes()).unwrap();
        let out = vernier(&db)
            .args(["delete", "latest"])
            .stdin(Stdio::from(slave))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains("delete 1 session with its runs and monitor data? [y/N]"),
            "{stderr}"
        );
        assert_eq!(
            count(&db, "SELECT count(*) FROM sessions"),
            left,
            "{stderr}"
        );
    }
}

/// Rows whose parent is gone, in every table that has a parent.
const ORPHANS: &[&str] = &[
    "SELECT count(*) FROM session_tags WHERE session_id NOT IN (SELECT id FROM sessions)",
    "SELECT count(*) FROM configurations WHERE session_id NOT IN (SELECT id FROM sessions)",
    "SELECT count(*) FROM runs WHERE configuration_key NOT IN (SELECT key FROM configurations)",
    "SELECT count(*) FROM run_values WHERE run_key NOT IN (SELECT key FROM runs)",
    "SELECT count(*) FROM run_histograms WHERE run_key NOT IN (SELECT key FROM runs)",
    "SELECT count(*) FROM run_monitors WHERE run_key NOT IN (SELECT key FROM runs)",
];

#[test]
fn delete_removes_everything_under_the_sessions_and_leaves_no_orphans() {
    let (_dir, db, ids) = sessions(3);
    // Sessions 0 and 2 ran on kernel config A, session 1 on B; C is the text of a run that
    // has not recorded its session yet.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        for (id, sha) in [(&ids[0], "A"), (&ids[1], "B"), (&ids[2], "A")] {
            conn.execute(
                "UPDATE sessions SET environment = \
                 json_set(environment, '$.kernel_config_sha256', ?2) WHERE id = ?1",
                [id.as_str(), sha],
            )
            .unwrap();
        }
        // In place of the text of this machine's kernel, if it has one.
        conn.execute("DELETE FROM kernel_configs", []).unwrap();
        for sha in ["A", "B", "C"] {
            conn.execute(
                "INSERT OR REPLACE INTO kernel_configs (sha256, text) VALUES (?1, 'CONFIG_HZ=250')",
                [sha],
            )
            .unwrap();
        }
    }
    let runs_per_session = count(&db, "SELECT count(*) FROM runs") / 3;
    let monitors_per_session = count(&db, "SELECT count(*) FROM run_monitors") / 3;
    assert!(runs_per_session == 3 && monitors_per_session > 0);
    let configs = || query_strings(&db, "SELECT sha256 FROM kernel_configs ORDER BY sha256");

    let out = ok(vernier(&db).args(["delete", &ids[1], "--yes"]));
    assert_eq!(
        out,
        format!(
            "deleted session {}\ndeleted 1 session, 1 configuration, 3 runs, \
             {monitors_per_session} monitor records and 1 kernel configuration\n",
            ids[1]
        )
    );
    assert_eq!(configs(), ["A", "C"]);

    // A tag selector deletes both remaining sessions of kernel=A in one transaction.
    let out = ok(vernier(&db).args(["delete", "kernel=A", "-y"]));
    assert!(
        out.ends_with(&format!(
            "deleted 2 sessions, 2 configurations, 6 runs, {} monitor records and 1 kernel \
             configuration\n",
            2 * monitors_per_session
        )),
        "{out}"
    );
    assert_eq!(configs(), ["C"]);
    for table in [
        "sessions",
        "session_tags",
        "configurations",
        "runs",
        "run_values",
    ] {
        assert_eq!(
            count(&db, &format!("SELECT count(*) FROM {table}")),
            0,
            "{table}"
        );
    }
    for sql in ORPHANS {
        assert_eq!(count(&db, sql), 0, "{sql}");
    }
    assert_eq!(count(&db, "SELECT count(*) FROM run_monitors"), 0);
    refused(
        vernier(&db)
            .args(["delete", "latest", "--yes"])
            .output()
            .unwrap(),
    );
}

#[test]
fn a_running_session_is_deleted_only_with_force() {
    let (_dir, db, ids) = sessions(1);
    // Running, and recorded by a live process (this test's, with no start time to compare).
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|b| b.trim().to_string());
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE sessions SET status = 'running', owner_pid = ?1, owner_boot_id = ?2, \
             owner_start_ticks = NULL",
            rusqlite::params![std::process::id(), boot],
        )
        .unwrap();
    let e = refused(
        vernier(&db)
            .args(["delete", "latest", "--yes"])
            .output()
            .unwrap(),
    );
    assert!(e.contains(&ids[0]) && e.contains("--force"), "{e}");
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 1);
    ok(vernier(&db).args(["delete", "latest", "--yes", "--force"]));
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 0);
}

#[test]
fn an_abandoned_session_is_deleted_without_force() {
    let (_dir, db, _ids) = sessions(1);
    // Left running by a process that is gone (none is recorded): nothing writes it any more.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE sessions SET status = 'running'", [])
        .unwrap();
    ok(vernier(&db).args(["delete", "latest", "--yes"]));
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 0);
}

#[test]
fn managing_a_missing_database_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    for args in [
        &["tag", "latest", "a=1"][..],
        &["note", "latest", "x"],
        &["delete", "latest", "--yes"],
    ] {
        let e = refused(vernier(&db).args(args).output().unwrap());
        assert!(e.contains("does not exist"), "{e}");
        assert!(!db.exists());
    }
}
