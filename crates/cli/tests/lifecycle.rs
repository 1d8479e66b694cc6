//! How a session ends: SIGTERM and SIGHUP like Ctrl-C, a repeated signal, kill -9. Real
//! signals to a real `vernier run`; as root with a real sysctl change (vm.stat_interval: how
//! often the kernel folds per-CPU VM statistics, harmless to change briefly, and put back by
//! every test even when it fails) and its restore record in a directory of the test's own
//! (`VERNIER_RUN_DIR`), otherwise with a setup that changes nothing on the host and so keeps
//! no record (a cooldown).
#![allow(clippy::unwrap_used)] // test helpers panic on unexpected failures by design
#![allow(clippy::print_stderr, clippy::expect_used)] // test helpers say what they skip and expect their own set-up

use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Stdio};
use std::sync::Mutex;

use assert_cmd::Command;
use vernier_testkit::host_turn;

const SYSCTL: &str = "/proc/sys/vm/stat_interval";

/// The tests that change the sysctl take turns.
static SYSCTL_TURN: Mutex<()> = Mutex::new(());

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn read_sysctl() -> String {
    std::fs::read_to_string(SYSCTL).unwrap().trim().to_string()
}

/// The sysctl to change and its original value, put back on drop whatever happens.
struct Sysctl {
    before: String,
    changed: String,
    /// Held until the value is put back (fields drop after `drop`).
    _turn: std::fs::File,
}

impl Sysctl {
    fn new() -> Option<Sysctl> {
        if !is_root() || !Path::new(SYSCTL).exists() {
            return None;
        }
        let turn = host_turn();
        let before = read_sysctl();
        let changed = if before == "3" { "4" } else { "3" }.to_string();
        Some(Sysctl {
            before,
            changed,
            _turn: turn,
        })
    }
}

impl Drop for Sysctl {
    fn drop(&mut self) {
        let _ = std::fs::write(SYSCTL, &self.before);
    }
}

struct Env {
    _dir: tempfile::TempDir,
    db: PathBuf,
    state: PathBuf,
    /// The host's records (`VERNIER_RUN_DIR`).
    run: PathBuf,
    sysctl: Option<Sysctl>,
}

impl Env {
    fn new(test: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let sysctl = Sysctl::new();
        if sysctl.is_none() {
            eprintln!("skipped: {test} with a real sysctl change (needs root and {SYSCTL})");
        }
        Env {
            db: dir.path().join("results.db"),
            state: dir.path().join("state"),
            run: dir.path().join("run"),
            _dir: dir,
            sysctl,
        }
    }

    fn record(&self) -> PathBuf {
        self.run.join("setup.json")
    }

    fn vernier(&self) -> Command {
        let mut cmd = Command::cargo_bin("vernier").unwrap();
        cmd.arg("--db")
            .arg(&self.db)
            .env_remove("VERNIER_DB")
            .env("XDG_STATE_HOME", &self.state)
            .env("VERNIER_RUN_DIR", &self.run);
        cmd
    }

    /// The --setup of a session: the sysctl change as root, else a setup that changes nothing.
    fn setup(&self) -> String {
        match &self.sysctl {
            // cooldown stands for the per-run steps: drop-caches would leave the host's
            // caches empty.
            Some(s) => format!("sysctl:vm.stat_interval={},cooldown:seconds=0", s.changed),
            None => "cooldown:seconds=0.01".to_string(),
        }
    }

    /// Starts a long session with the setup, and waits until it has recorded two runs.
    fn start_session(&self) -> Session {
        let bin = assert_cmd::cargo::cargo_bin("vernier");
        let mut child = std::process::Command::new(bin)
            .arg("--db")
            .arg(&self.db)
            .env_remove("VERNIER_DB")
            .env("XDG_STATE_HOME", &self.state)
            .env("VERNIER_RUN_DIR", &self.run)
            .args([
                "run",
                "yield:duration=0.1:workers=1",
                "--setup",
                &self.setup(),
                "--warmup",
                "0",
                "--min-runs",
                "200",
                "--max-runs",
                "200",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        wait_for(&mut stdout, "run 2:");
        Session {
            child,
            stdout,
            stderr,
        }
    }

    /// While a session holds its setup: changed, with a record (a cooldown changes nothing
    /// on the host and keeps none).
    fn assert_held(&self) {
        if let Some(s) = &self.sysctl {
            assert_eq!(read_sysctl(), s.changed);
        }
        assert_eq!(self.record().exists(), self.sysctl.is_some());
    }

    /// After the session: as before, without a record.
    fn assert_restored(&self) {
        if let Some(s) = &self.sysctl {
            assert_eq!(read_sysctl(), s.before, "the sysctl is restored");
        }
        assert!(!self.record().exists(), "the record is removed");
    }

    /// Status of the only session and the stop reasons of its configurations, as stored.
    fn stored(&self) -> (String, Vec<Option<String>>) {
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        let status = conn
            .query_row("SELECT status FROM sessions", [], |r| r.get(0))
            .unwrap();
        let reasons = conn
            .prepare("SELECT stop_reason FROM configurations")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        (status, reasons)
    }

    fn session_id(&self) -> String {
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        conn.query_row("SELECT id FROM sessions", [], |r| r.get(0))
            .unwrap()
    }
}

struct Session {
    child: Child,
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: Lines<BufReader<ChildStderr>>,
}

impl Session {
    fn signal(&self, signal: i32) {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// Reads the rest of the output and waits for the exit.
    fn finish(mut self) -> (std::process::ExitStatus, String) {
        let _rest: Vec<String> = self.stdout.by_ref().map(|l| l.unwrap()).collect();
        let stderr: Vec<String> = self.stderr.by_ref().map(|l| l.unwrap()).collect();
        (self.child.wait().unwrap(), stderr.join("\n"))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for<R: BufRead>(lines: &mut Lines<R>, text: &str) {
    for line in lines.by_ref() {
        if line.unwrap().contains(text) {
            return;
        }
    }
    panic!("the output ended before '{text}'");
}

/// Runs `vernier system reset` when dropped, so that nothing a test made vernier change stays.
struct Reset<'a>(&'a Env);

impl Drop for Reset<'_> {
    fn drop(&mut self) {
        let _ = self.0.vernier().args(["system", "reset"]).output();
    }
}

/// What systemd, `timeout` and a closed terminal send end a session as Ctrl-C does: the
/// system restored, the record removed, the session interrupted, exit 128 + the signal.
#[test]
fn sigterm_and_sighup_end_a_session_like_ctrl_c() {
    let _turn = SYSCTL_TURN.lock().unwrap_or_else(|e| e.into_inner());
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let e = Env::new("sigterm_and_sighup_end_a_session_like_ctrl_c");
        let session = e.start_session();
        e.assert_held();
        session.signal(signal);
        let (status, stderr) = session.finish();
        assert_eq!(
            status.code(),
            Some(128 + signal),
            "signal {signal}: {stderr}"
        );
        e.assert_restored();
        let (status, reasons) = e.stored();
        assert_eq!(status, "interrupted", "signal {signal}");
        assert_eq!(reasons, [Some("interrupted".to_string())]);
    }
}

/// A closed terminal: vernier leads a session whose controlling terminal is a pseudo-terminal,
/// and the terminal's master side is closed, as when a terminal window or an SSH connection
/// goes away. The kernel hangs the terminal up (SIGHUP; writing to it then fails with EIO) and
/// the session still ends in order.
#[test]
fn a_closed_terminal_ends_the_session_in_order() {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;

    let _turn = SYSCTL_TURN.lock().unwrap_or_else(|e| e.into_inner());
    let e = Env::new("a_closed_terminal_ends_the_session_in_order");
    // SAFETY: posix_openpt(3), grantpt(3), unlockpt(3) and ptsname_r(3) on a descriptor this
    // test owns, with a buffer of the given length.
    let (master, slave_name) = unsafe {
        // Close-on-exec: vernier must not hold the master open itself, or closing it here
        // would not hang the terminal up.
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(master >= 0, "{}", std::io::Error::last_os_error());
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let name = std::ffi::CStr::from_ptr(name.as_ptr());
        (
            std::fs::File::from_raw_fd(master),
            PathBuf::from(name.to_str().unwrap()),
        )
    };
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave_name)
        .unwrap();
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("vernier"));
    command
        .arg("--db")
        .arg(&e.db)
        .env_remove("VERNIER_DB")
        .env("XDG_STATE_HOME", &e.state)
        .env("VERNIER_RUN_DIR", &e.run)
        // A terminal has a type: without TERM the progress display stays off and "run 2" never
        // shows (the test's environment need not have one).
        .env("TERM", "xterm")
        .args([
            "run",
            "yield:duration=0.1:workers=1",
            "--setup",
            &e.setup(),
            "--warmup",
            "0",
            "--min-runs",
            "200",
            "--max-runs",
            "200",
        ])
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    // SAFETY: setsid(2) and ioctl(2) TIOCSCTTY are async-signal-safe; they make the child the
    // leader of a new session with the terminal on its standard input as controlling terminal.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    drop(command);
    let mut master = master;
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("run 2") {
        match master.read(&mut buffer) {
            Ok(n) if n > 0 => seen.extend_from_slice(&buffer[..n]),
            other => panic!(
                "the terminal ended before run 2 ({other:?}): {}",
                String::from_utf8_lossy(&seen)
            ),
        }
    }
    e.assert_held();
    drop(master);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGHUP));
    e.assert_restored();
    let (status, reasons) = e.stored();
    assert_eq!(status, "interrupted");
    assert_eq!(reasons, [Some("interrupted".to_string())]);
}

/// A second signal while the session cannot end in order (here: its database is locked by
/// another process) leaves at once, yet restores the system and marks the session interrupted.
#[test]
fn a_repeated_signal_leaves_at_once_restored_and_interrupted() {
    let _turn = SYSCTL_TURN.lock().unwrap_or_else(|e| e.into_inner());
    let e = Env::new("a_repeated_signal_leaves_at_once_restored_and_interrupted");
    let mut session = e.start_session();
    e.assert_held();
    // Another process's write transaction: the session's next write waits for it.
    let mut other = rusqlite::Connection::open(&e.db).unwrap();
    let lock = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    session.signal(libc::SIGINT);
    wait_for(
        &mut session.stderr,
        "stopping after ending the run in progress",
    );
    session.signal(libc::SIGINT);
    wait_for(&mut session.stderr, "leaving at once");
    // Released as soon as vernier leaves; it waits a few seconds for the lock to record the
    // end of the session.
    lock.rollback().unwrap();
    let (status, stderr) = session.finish();
    assert_eq!(status.code(), Some(130), "{stderr}");
    e.assert_restored();
    let (status, reasons) = e.stored();
    assert_eq!(status, "interrupted");
    assert_eq!(reasons, [Some("interrupted".to_string())]);
}

/// While a session runs with its setup, neither `system reset` nor a second session with a
/// setup may touch the system; both name the session and its pid. Killed with SIGKILL, the
/// session shows as abandoned everywhere, and `system reset` restores what it changed.
#[test]
fn a_live_setup_is_kept_and_a_killed_session_is_abandoned() {
    let _turn = SYSCTL_TURN.lock().unwrap_or_else(|e| e.into_inner());
    let e = Env::new("a_live_setup_is_kept_and_a_killed_session_is_abandoned");
    if e.sysctl.is_none() {
        // Without root no setup sets host state: there is nothing to keep or reset.
        return;
    }
    // Dropped after the session, also when an assertion fails.
    let _reset = Reset(&e);
    let session = e.start_session();
    let id = e.session_id();
    let pid = session.child.id().to_string();

    let out = e.vernier().args(["system", "reset"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&id) && stderr.contains(&pid), "{stderr}");
    e.assert_held();

    let out = e
        .vernier()
        .args(["run", "mock", "--quiet", "--setup", &e.setup()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&id) && stderr.contains(&pid), "{stderr}");
    assert!(!stderr.contains("system reset"), "{stderr}");
    e.assert_held();
    // Nor may `system tune` change the system under it (should it, the guard puts the machine
    // back once the session is gone).
    let out = e.vernier().args(["system", "tune"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&id) && stderr.contains(&pid), "{stderr}");
    assert!(!e.run.join("tune.json").exists());
    let listed = e.vernier().arg("sessions").output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("running"));

    session.signal(libc::SIGKILL);
    let (status, _) = session.finish();
    assert_eq!(status.code(), None);
    e.assert_held();

    let listed = e.vernier().arg("sessions").output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("abandoned"), "{listed}");
    let shown = e.vernier().arg("show").output().unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("abandoned"));
    let exported = e.vernier().args(["export", "latest"]).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(json["sessions"][0]["status"], "abandoned");
    let shown = e
        .vernier()
        .args(["show", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(json[0]["session_status"], "abandoned");

    // Now the record is a leftover: a new session is told to reset, and reset restores.
    let out = e
        .vernier()
        .args(["run", "mock", "--quiet", "--setup", &e.setup()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("system reset"));
    e.vernier().args(["system", "reset"]).assert().success();
    e.assert_restored();
}
