//! Plans are checked against what the machine allows before anything starts: nothing is run,
//! no database is created and the system is not touched.
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design

use std::os::unix::process::CommandExt;
use std::path::Path;

use vernier_testkit::temp_db;
use vernier_testkit::vernier_command as vernier;

fn refused(cmd: &mut std::process::Command, db: &Path) -> String {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(!db.exists(), "a database was created: {stderr}");
    stderr
}

#[test]
fn more_tasks_than_the_pid_space_holds_are_refused() {
    let (_dir, db) = temp_db();
    // 2 * 10000 * 1000 workers: more than any pid_max (at most 2^22 on 64-bit Linux).
    let stderr = refused(
        vernier(&db).args(["run", "hackbench:groups=10000:fds=1000"]),
        &db,
    );
    assert!(
        stderr.starts_with("error: hackbench:fds=1000:groups=10000 cannot run")
            && stderr.contains("cannot run on this machine: needs 20000001 tasks; only"),
        "{stderr}"
    );
}

#[test]
fn more_files_than_rlimit_nofile_are_refused() {
    let (_dir, db) = temp_db();
    let mut cmd = vernier(&db);
    cmd.args(["run", "hackbench:groups=2:fds=20:tasks=thread:loops=1"]);
    // SAFETY: setrlimit is async-signal-safe; the limit applies to the vernier process only.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 64,
                rlim_max: 64,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let stderr = refused(&mut cmd, &db);
    // 2 * 2 * 20 socket ends in one process, plus the descriptors every run holds.
    assert!(
        stderr.contains("needs 112 open files in one process; RLIMIT_NOFILE (ulimit -n) is 64"),
        "{stderr}"
    );
}
