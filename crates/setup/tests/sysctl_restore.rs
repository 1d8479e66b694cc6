//! Real sysctl changes through the tune path, undone after a clean reset, an error, a panic
//! and a kill -9. kernel.timer_migration is used: flipping it briefly is harmless, and every
//! test puts the original value back (the tests share it, so they take turns, see
//! [`host_turn`]).
#![allow(clippy::print_stderr, clippy::expect_used)] // test helpers say what they skip and expect their own set-up
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use vernier_setup::{reset, tune, Change, SetupError, SetupGuard};
use vernier_sys::Roots;
use vernier_testkit::host_turn;

const TIMER_MIGRATION: &str = "/proc/sys/kernel/timer_migration";
const SWAPPINESS: &str = "/proc/sys/vm/swappiness";
const CHILD_ENV: &str = "VERNIER_SETUP_TEST_KILLED_CHILD_RECORD";

fn value(path: &str) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

/// Whether this test can change a real sysctl: it needs root and kernel.timer_migration
/// (CONFIG_SMP). Says why when it cannot, so a skipped test never passes silently.
fn usable() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() == 0 };
    if !root {
        eprintln!("skipped: changing {TIMER_MIGRATION} needs root");
        return false;
    }
    if !Path::new(TIMER_MIGRATION).exists() {
        eprintln!("skipped: {TIMER_MIGRATION} is absent (kernel without CONFIG_SMP)");
        return false;
    }
    true
}

fn flipped(v: &str) -> String {
    if v == "0" { "1" } else { "0" }.to_string()
}

/// Puts the original value back even if an assertion fails first.
struct Original(String);

impl Drop for Original {
    fn drop(&mut self) {
        let _ = std::fs::write(TIMER_MIGRATION, &self.0);
    }
}

#[test]
fn tune_and_reset_on_the_real_machine() {
    if !usable() {
        return;
    }
    let _turn = host_turn();
    let original = Original(value(TIMER_MIGRATION));
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("tune.json");
    let changes = tune(&Roots::real(), &record).unwrap();
    let touches_tm = changes
        .iter()
        .any(|c| matches!(c, Change::WriteFile { path, .. } if path == Path::new(TIMER_MIGRATION)));
    assert_eq!(touches_tm, original.0 != "0");
    assert_eq!(value(TIMER_MIGRATION), "0");
    assert!(record.exists());
    let undone = reset(&record).unwrap();
    assert_eq!(undone, changes);
    assert_eq!(value(TIMER_MIGRATION), original.0);
    assert!(!record.exists());
}

#[test]
fn a_failed_write_restores_the_earlier_ones() {
    if !usable() {
        return;
    }
    let _turn = host_turn();
    let original = Original(value(TIMER_MIGRATION));
    let swappiness = value(SWAPPINESS);
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("r.json");
    // The kernel rejects a non-number with EINVAL: a real error after a real change.
    let writes = vec![
        (PathBuf::from(TIMER_MIGRATION), flipped(&original.0)),
        (PathBuf::from(SWAPPINESS), "banana".to_string()),
    ];
    let e = SetupGuard::apply_writes("test", &writes, Some(&record)).unwrap_err();
    assert!(matches!(e, SetupError::Apply { .. }), "{e}");
    assert_eq!(value(TIMER_MIGRATION), original.0);
    assert_eq!(value(SWAPPINESS), swappiness);
    assert!(!record.exists());
}

#[test]
fn a_panic_restores() {
    if !usable() {
        return;
    }
    let _turn = host_turn();
    let original = Original(value(TIMER_MIGRATION));
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("r.json");
    let other = flipped(&original.0);
    let writes = vec![(PathBuf::from(TIMER_MIGRATION), other.clone())];
    let guard = SetupGuard::apply_writes("test", &writes, Some(&record)).unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _guard = guard;
        assert_eq!(value(TIMER_MIGRATION), other);
        panic!("a benchmark failed");
    }));
    assert!(caught.is_err());
    assert_eq!(value(TIMER_MIGRATION), original.0);
    assert!(!record.exists());
}

/// Runs only as the child of `a_killed_process_is_undone_by_reset`: applies a change and dies
/// by SIGKILL, so no destructor runs.
#[test]
#[ignore = "started as a subprocess by a_killed_process_is_undone_by_reset"]
fn killed_child() {
    let Some(record) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let v = value(TIMER_MIGRATION);
    let writes = vec![(PathBuf::from(TIMER_MIGRATION), flipped(&v))];
    let guard = SetupGuard::apply_writes("test", &writes, Some(Path::new(&record))).unwrap();
    // SAFETY: raising a signal has no memory-safety preconditions.
    unsafe { libc::raise(libc::SIGKILL) };
    drop(guard);
}

#[test]
fn a_killed_process_is_undone_by_reset() {
    if !usable() {
        return;
    }
    let _turn = host_turn();
    let original = Original(value(TIMER_MIGRATION));
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("r.json");
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "killed_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &record)
        .status()
        .unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    assert_eq!(value(TIMER_MIGRATION), flipped(&original.0));
    assert!(record.exists());
    let undone = reset(&record).unwrap();
    assert_eq!(undone.len(), 1);
    assert_eq!(value(TIMER_MIGRATION), original.0);
    assert!(!record.exists());
}
