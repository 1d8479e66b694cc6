//! swap-reset on a real swap file: created, activated with a priority, reset by the plugin,
//! checked, and always removed again (a guard cleans up when an assertion fails).
#![allow(clippy::print_stderr, clippy::expect_used)] // test helpers say what they skip and expect their own set-up
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use vernier_setup::{parse_proc_swaps, plan_setup, restore_from_record, SwapArea};
use vernier_sys::Roots;

/// Switches the swap file off and deletes its directory, whatever happened in the test.
struct SwapFile {
    // Removed after the swap file is switched off (fields drop after `drop`).
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Drop for SwapFile {
    fn drop(&mut self) {
        let _ = Command::new("swapoff").arg(&self.path).status();
        let _ = std::fs::remove_file(&self.path);
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("command runs");
    assert!(out.status.success(), "{cmd:?}: {out:?}");
}

fn make_swap_file(priority: Option<i32>) -> SwapFile {
    // /var/tmp is on the root file system (not tmpfs), where swap files are supported.
    let dir = tempfile::Builder::new()
        .prefix("vernier-swap-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let path = dir.path().join("swapfile");
    let file = SwapFile { _dir: dir, path };
    run(Command::new("dd")
        .arg("if=/dev/zero")
        .arg(format!("of={}", file.path.display()))
        .args(["bs=1M", "count=16", "status=none"]));
    std::fs::set_permissions(
        &file.path,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    run(Command::new("mkswap").arg("-q").arg(&file.path));
    let mut on = Command::new("swapon");
    if let Some(p) = priority {
        on.arg("-p").arg(p.to_string());
    }
    run(on.arg(&file.path));
    file
}

fn active(path: &Path) -> Option<SwapArea> {
    let text = std::fs::read_to_string("/proc/swaps").unwrap();
    parse_proc_swaps(&text)
        .unwrap()
        .into_iter()
        .find(|a| a.path == path)
}

/// A proc root whose `swaps` lists only `path`, so the test resets its own file and no other
/// swap area of the machine.
fn proc_with_only(dir: &Path, path: &Path) -> Roots {
    let text = std::fs::read_to_string("/proc/swaps").unwrap();
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().unwrap());
    for line in lines {
        if line.split_whitespace().next() == Some(path.to_str().unwrap()) {
            out.push_str(line);
            out.push('\n');
        }
    }
    std::fs::create_dir_all(dir.join("proc")).unwrap();
    std::fs::write(dir.join("proc/swaps"), out).unwrap();
    Roots {
        proc_root: dir.join("proc"),
        ..Roots::real()
    }
}

/// Whether this test can switch a swap file on and off: it needs root and the mkswap, swapon
/// and swapoff tools. Says why when it cannot, so a skipped test never passes silently.
fn usable() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: swapon and swapoff need root");
        return false;
    }
    for tool in ["mkswap", "swapon", "swapoff"] {
        if Command::new(tool).arg("--version").output().is_err() {
            eprintln!("skipped: {tool} is not installed (util-linux)");
            return false;
        }
    }
    true
}

#[test]
fn swap_reset_switches_areas_off_and_on_with_their_priority() {
    if !usable() {
        return;
    }
    let swap = make_swap_file(Some(7));
    let before = active(&swap.path).expect("swap file is active");
    assert_eq!(before.priority, 7);
    let work = tempfile::tempdir().unwrap();
    let roots = proc_with_only(work.path(), &swap.path);
    let record = work.path().join("restore.json");

    // Once per session.
    let plan = plan_setup(&["swap-reset"], &roots).unwrap();
    let mut guard = plan.apply(Some(&record)).unwrap();
    let after = active(&swap.path).expect("active again after the reset");
    assert_eq!(after.priority, 7);
    assert!(record.exists());
    guard.restore().unwrap();
    assert!(!record.exists());

    // Before every run.
    let plan = plan_setup(&["swap-reset:when=run"], &roots).unwrap();
    let mut guard = plan.apply(Some(&record)).unwrap();
    for _ in 0..2 {
        let reports = guard.before_run().unwrap();
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].detail, "1 swap areas reset");
        assert_eq!(active(&swap.path).map(|a| a.priority), Some(7));
    }
    // A reset interrupted between swapoff and swapon is repaired by restore...
    run(Command::new("swapoff").arg(&swap.path));
    assert!(active(&swap.path).is_none());
    guard.restore().unwrap();
    assert_eq!(active(&swap.path).map(|a| a.priority), Some(7));

    // ...and, after a kill, by the record.
    let guard = plan.apply(Some(&record)).unwrap();
    std::mem::forget(guard);
    run(Command::new("swapoff").arg(&swap.path));
    let undone = restore_from_record(&record).unwrap();
    assert_eq!(undone.len(), 1);
    assert_eq!(active(&swap.path).map(|a| a.priority), Some(7));
    assert!(!record.exists());
}

#[test]
fn swap_reset_keeps_a_kernel_assigned_priority_negative() {
    if !usable() {
        return;
    }
    let swap = make_swap_file(None);
    assert!(active(&swap.path).unwrap().priority < 0);
    let work = tempfile::tempdir().unwrap();
    let roots = proc_with_only(work.path(), &swap.path);
    let mut guard = plan_setup(&["swap-reset"], &roots)
        .unwrap()
        .apply(None)
        .unwrap();
    assert!(active(&swap.path).expect("active again").priority < 0);
    guard.restore().unwrap();
}
