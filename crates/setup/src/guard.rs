//! Applying a [`SetupPlan`] and undoing it: the [`SetupGuard`]. This is the machinery around
//! the plugins ([`crate::plugins`]): the order of the changes, the restore record written
//! before the first one, the per-run steps, and restoring in reverse order on every way out
//! (explicitly, on an error return, on a panic through `Drop`; signals end the session through
//! those). What each plugin changes and does is the plugin's.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use vernier_model::{ChangedSetting, ChildSetup};

use crate::plugins::{PlannedStep, SetupPlan, Waiter, When};
use crate::record::{read_value, remove_record, write_changes, Change, RestoreRecord};
use crate::SetupError;

/// What a per-run step did, for the run record (a cooldown that timed out is worth knowing
/// when a run looks odd).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStepReport {
    pub plugin: String,
    /// Time spent in the step.
    pub waited_ms: u64,
    /// The wait ended by its timeout, not by its condition; the run goes on anyway.
    pub timed_out: bool,
    /// The condition observed last, e.g. `busy 3.1% < 5%` or `load 0.42`.
    pub detail: String,
}

struct Applied {
    change: Change,
    /// Held open for the session (/dev/cpu_dma_latency); closing it is the restore.
    held: Option<File>,
    /// A file's value as read back right after it was written (the kernel may write it back
    /// otherwise than given: `010` reads `10`), which must hold for the whole session
    /// ([`SetupGuard::changed_settings`]); `None` for other changes.
    set: Option<String>,
}

/// The changes a session made, undone in reverse order by [`SetupGuard::restore`] or when the
/// guard is dropped (error returns and panics included). Restoring is idempotent.
pub struct SetupGuard {
    applied: Vec<Applied>,
    record_path: Option<PathBuf>,
    run_steps: Vec<PlannedStep>,
    child: ChildSetup,
    cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for SetupGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetupGuard")
            .field("changes", &self.changes())
            .field("record_path", &self.record_path)
            .field("child", &self.child)
            .finish()
    }
}

impl SetupPlan {
    /// Applies the session steps and returns the guard that undoes them. When `record_path` is
    /// given, the restore record is written there before anything changes (and it must not
    /// exist yet: see [`SetupError::RecordExists`] and [`SetupError::RecordInUse`]). If a step
    /// fails, what was already applied is restored before the error is returned.
    pub fn apply(&self, record_path: Option<&Path>) -> Result<SetupGuard, SetupError> {
        self.apply_as(record_path, None)
    }

    /// [`SetupPlan::apply`] for the session with id `session`, which the restore record names
    /// (so that another session or `system reset` can say whose setup is in effect).
    pub fn apply_for_session(
        &self,
        record_path: &Path,
        session: &str,
    ) -> Result<SetupGuard, SetupError> {
        self.apply_as(Some(record_path), Some(session))
    }

    fn apply_as(
        &self,
        record_path: Option<&Path>,
        session: Option<&str>,
    ) -> Result<SetupGuard, SetupError> {
        // Read every previous value first: a failure here changes nothing. The changes of
        // per-run steps (a swap reset before every run) are only registered: nothing changes
        // now, but a reset interrupted between swapoff and swapon is repaired on restore.
        let mut planned: Vec<(Change, bool)> = Vec::new();
        for s in &self.steps {
            let now = s.when == When::Session;
            for change in s.action.changes(&s.plugin)? {
                planned.push((change, now));
            }
        }
        let mut guard = SetupGuard::begin(
            planned.iter().map(|(c, _)| c.clone()).collect(),
            record_path,
            session,
        )?;
        guard.run_steps = self.run_steps().cloned().collect();
        guard.child = self.child.clone();
        for (change, now) in planned {
            if now {
                guard.apply_change(change)?;
            } else {
                guard.applied.push(Applied {
                    change,
                    held: None,
                    set: None,
                });
            }
        }
        Ok(guard)
    }
}

impl SetupGuard {
    /// Writes `writes` (path, value) with restore, outside any plan: the basis of `system tune`
    /// and of `sysctl`-like changes. The previous values are read and the record written
    /// before the first write; a failed write restores the earlier ones.
    pub fn apply_writes(
        plugin: &str,
        writes: &[(PathBuf, String)],
        record_path: Option<&Path>,
    ) -> Result<SetupGuard, SetupError> {
        let changes = write_changes(plugin, writes)?;
        SetupGuard::apply_planned(changes, record_path)
    }

    /// Records and applies changes whose previous values were just read.
    pub(crate) fn apply_planned(
        changes: Vec<Change>,
        record_path: Option<&Path>,
    ) -> Result<SetupGuard, SetupError> {
        let mut guard = SetupGuard::begin(changes.clone(), record_path, None)?;
        for change in changes {
            guard.apply_change(change)?;
        }
        Ok(guard)
    }

    /// Writes the restore record of `changes` to `record_path`, if given and if there is
    /// anything to restore: a setup that changes nothing on the host (waits, what only the
    /// benchmark child gets) has no record and holds no lock.
    fn begin(
        changes: Vec<Change>,
        record_path: Option<&Path>,
        session: Option<&str>,
    ) -> Result<SetupGuard, SetupError> {
        let record_path = record_path.filter(|_| !changes.is_empty());
        if let Some(path) = record_path {
            let mut record = RestoreRecord::new(changes);
            record.session = session.map(str::to_string);
            record.create(path)?;
        }
        Ok(SetupGuard {
            applied: Vec::new(),
            record_path: record_path.map(Path::to_path_buf),
            run_steps: Vec::new(),
            child: ChildSetup::default(),
            cancel: None,
        })
    }

    fn apply_change(&mut self, change: Change) -> Result<(), SetupError> {
        if change.registered_first() {
            // Registered first: if it fails half-way, restore tries again.
            self.applied.push(Applied {
                change: change.clone(),
                held: None,
                set: None,
            });
            change.apply()?;
        } else {
            let held = change.apply()?;
            let set = match &change {
                Change::WriteFile { path, .. } => read_value(path).ok(),
                _ => None,
            };
            self.applied.push(Applied { change, held, set });
        }
        Ok(())
    }

    /// The files this guard wrote that no longer hold the value set, each with what they hold
    /// now (or why they cannot be read): something else changed them during the session (an
    /// administrator, a tuning daemon, another program). Reads each file once; changes nothing.
    pub fn changed_settings(&self) -> Vec<ChangedSetting> {
        self.applied
            .iter()
            .filter_map(|a| match (&a.change, &a.set) {
                (Change::WriteFile { path, .. }, Some(set)) => {
                    let found = match read_value(path) {
                        Ok(now) if now == *set => return None,
                        Ok(now) => now,
                        Err(e) => format!("unreadable ({e})"),
                    };
                    Some(ChangedSetting {
                        setting: path.display().to_string(),
                        set: set.clone(),
                        found,
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// Lets the waits of [`SetupGuard::before_run`] end early with [`SetupError::Cancelled`]
    /// when `flag` becomes true (the CLI's Ctrl-C flag).
    pub fn with_cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// The changes in effect, in the order applied.
    pub fn changes(&self) -> Vec<Change> {
        self.applied.iter().map(|a| a.change.clone()).collect()
    }

    /// What the engine applies in each benchmark child.
    pub fn child(&self) -> &ChildSetup {
        &self.child
    }

    /// Runs the per-run steps; call before every measured run.
    pub fn before_run(&mut self) -> Result<Vec<RunStepReport>, SetupError> {
        let waiter = Waiter {
            cancel: self.cancel.as_deref(),
        };
        let mut reports = Vec::with_capacity(self.run_steps.len());
        for s in &self.run_steps {
            let start = Instant::now();
            let (timed_out, detail) = s.action.before_run(&waiter)?;
            reports.push(RunStepReport {
                plugin: s.plugin.clone(),
                waited_ms: start.elapsed().as_millis() as u64,
                timed_out,
                detail,
            });
        }
        Ok(reports)
    }

    /// Undoes every change in reverse order, then removes the restore record. Calling it again
    /// does nothing. A change that cannot be undone is kept (a later call retries it), the
    /// others are still undone, the record stays for `system reset`, and all failures are
    /// returned together.
    pub fn restore(&mut self) -> Result<(), SetupError> {
        let mut failures = Vec::new();
        let mut failed = Vec::new();
        while let Some(mut a) = self.applied.pop() {
            // Closing a held file is its restore; do it in order with the others.
            drop(a.held.take());
            if let Err(e) = a.change.restore() {
                failures.push(format!("{}: {e}", a.change.describe()));
                failed.push(a);
            }
        }
        if !failures.is_empty() {
            failed.reverse();
            self.applied = failed;
            return Err(SetupError::Restore { failures });
        }
        if let Some(path) = self.record_path.take() {
            remove_record(&path)?;
        }
        Ok(())
    }

    /// Leaves the changes in place and the record on disk (for `system tune`); returns them.
    pub(crate) fn keep(mut self) -> Vec<Change> {
        let changes = self.changes();
        self.applied.clear();
        self.record_path = None;
        changes
    }
}

impl Drop for SetupGuard {
    fn drop(&mut self) {
        // A library must not print; a failure leaves the record behind for `system reset`.
        let _ = self.restore();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::fixture::{self, read, write};
    use crate::plan_setup;

    const GOV0: &str = "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
    const GOV1: &str = "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor";
    const BOOST: &str = "sys/devices/system/cpu/cpufreq/boost";
    const TM: &str = "proc/sys/kernel/timer_migration";

    #[test]
    fn session_applies_runs_and_restores_on_a_fixture_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        let plan = plan_setup(
            &[
                "governor,turbo,dma-latency:us=7,sysctl:kernel.timer_migration=0,drop-caches,\
               cooldown:seconds=0.01:load=5,idle-gate:window=10:timeout=1,swap-reset",
            ],
            &roots,
        )
        .unwrap();
        let record = root.join("state/restore.json");
        let mut guard = plan.apply(Some(&record)).unwrap();

        assert_eq!(read(root, GOV0), "performance");
        assert_eq!(read(root, GOV1), "performance");
        assert_eq!(read(root, BOOST), "0");
        assert_eq!(read(root, TM), "0");
        let dma = std::fs::read(root.join("dev/cpu_dma_latency")).unwrap();
        assert_eq!(dma, 7i32.to_ne_bytes());
        // The record lists every change with the value to put back.
        let saved = RestoreRecord::load(&record).unwrap().unwrap();
        assert_eq!(saved.changes, guard.changes());
        assert_eq!(saved.changes.len(), 5);
        assert!(saved.changes.contains(&Change::WriteFile {
            plugin: "governor".into(),
            path: root.join(GOV1),
            previous: "powersave".into(),
            value: "performance".into(),
        }));

        let reports = guard.before_run().unwrap();
        assert_eq!(read(root, "proc/sys/vm/drop_caches"), "3");
        let names: Vec<&str> = reports.iter().map(|r| r.plugin.as_str()).collect();
        assert_eq!(
            names,
            [
                "drop-caches",
                "cooldown:seconds=0.01:load=5",
                "idle-gate:window=10:timeout=1"
            ]
        );
        assert!(reports.iter().all(|r| !r.timed_out));
        assert!(
            reports[1].detail.contains("load 0.1 < 5"),
            "{:?}",
            reports[1]
        );
        // The fixture's /proc/stat never changes: 0% busy.
        assert!(
            reports[2].detail.starts_with("busy 0.0%"),
            "{:?}",
            reports[2]
        );

        guard.restore().unwrap();
        assert_eq!(read(root, GOV0), "powersave");
        assert_eq!(read(root, GOV1), "powersave");
        assert_eq!(read(root, BOOST), "1");
        assert_eq!(read(root, TM), "1");
        assert!(!record.exists());
        assert!(guard.changes().is_empty());
        // Idempotent: a second restore (and the one in Drop) does nothing.
        write(root, TM, "0");
        guard.restore().unwrap();
        drop(guard);
        assert_eq!(read(root, TM), "0");
    }

    #[test]
    fn a_failing_step_restores_what_was_applied() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        // Readable and, by its mode, writable for its owner (root or not), but a write of
        // "0" always fails: the identity map of the initial user namespace is already set,
        // and a map is written only once (user_namespaces(7)).
        std::fs::remove_file(root.join(TM)).unwrap();
        std::os::unix::fs::symlink("/proc/self/uid_map", root.join(TM)).unwrap();
        let plan = plan_setup(&["governor,sysctl:kernel.timer_migration=0"], &roots).unwrap();
        let record = root.join("r.json");
        let e = plan.apply(Some(&record)).unwrap_err();
        assert!(matches!(e, SetupError::Apply { .. }), "{e}");
        assert_eq!(read(root, GOV0), "powersave");
        assert_eq!(read(root, GOV1), "powersave");
        assert!(!record.exists());
    }

    #[test]
    fn an_existing_record_stops_before_any_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        let record = root.join("r.json");
        std::fs::write(&record, "{}").unwrap();
        let plan = plan_setup(&["governor"], &roots).unwrap();
        assert!(matches!(
            plan.apply(Some(&record)),
            Err(SetupError::Record { .. })
        ));
        assert_eq!(read(root, GOV0), "powersave\n");
        assert_eq!(std::fs::read_to_string(&record).unwrap(), "{}");
    }

    #[test]
    fn drop_restores_after_an_error_and_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        let plan = plan_setup(&["turbo"], &roots).unwrap();
        let record = root.join("r.json");

        let session = || -> Result<(), SetupError> {
            let _guard = plan.apply(Some(&record))?;
            assert_eq!(read(root, BOOST), "0");
            Err(SetupError::Cancelled)
        };
        assert!(session().is_err());
        assert_eq!(read(root, BOOST), "1");
        assert!(!record.exists());

        let guard = plan.apply(Some(&record)).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _guard = guard;
            panic!("benchmark blew up");
        }));
        assert!(caught.is_err());
        assert_eq!(read(root, BOOST), "1");
        assert!(!record.exists());
    }

    #[test]
    fn a_kept_record_is_replayed_by_reset() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        let record = root.join("r.json");
        let plan = plan_setup(&["governor"], &roots).unwrap();
        let guard = plan.apply(Some(&record)).unwrap();
        // As if the process was killed: nothing restores, the record stays.
        std::mem::forget(guard);
        assert_eq!(read(root, GOV0), "performance");
        let undone = crate::reset(&record).unwrap();
        assert_eq!(undone.len(), 2);
        assert_eq!(read(root, GOV0), "powersave");
        assert!(!record.exists());
    }

    /// A live process that is not this one: a child that waits until it is killed.
    struct OtherProcess(std::process::Child);

    impl OtherProcess {
        fn start() -> Self {
            OtherProcess(
                std::process::Command::new("sleep")
                    .arg("600")
                    .spawn()
                    .unwrap(),
            )
        }

        fn end(mut self) {
            self.0.kill().unwrap();
            self.0.wait().unwrap();
        }
    }

    impl Drop for OtherProcess {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// Makes the record at `path` look written by `other`, as if another session made it.
    fn hand_over(path: &Path, other: &OtherProcess) {
        let owner = vernier_sys::process::ProcessIdentity::of(other.0.id()).unwrap();
        let mut record = RestoreRecord::load(path).unwrap().unwrap();
        record.pid = owner.pid;
        record.start_ticks = owner.start_ticks;
        record.save(path).unwrap();
    }

    #[test]
    fn a_live_sessions_setup_is_neither_replaced_nor_reset() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        let record = root.join("r.json");
        let plan = plan_setup(&["turbo"], &roots).unwrap();
        let first = plan.apply_for_session(&record, "first-session-id").unwrap();
        std::mem::forget(first);
        assert_eq!(read(root, BOOST), "0");
        let other = OtherProcess::start();
        hand_over(&record, &other);

        // A second session is refused, naming the first; nothing changes.
        let second = plan_setup(&["sysctl:kernel.timer_migration=0"], &roots).unwrap();
        let e = second
            .apply_for_session(&record, "second-session-id")
            .unwrap_err();
        assert!(matches!(e, SetupError::RecordInUse { .. }), "{e:?}");
        let message = e.to_string();
        assert!(message.contains("first-session-id"), "{message}");
        assert!(
            message.contains(&format!("pid {}", other.0.id())),
            "{message}"
        );
        assert!(!message.contains("system reset"), "{message}");
        assert_eq!(read(root, TM), "1\n");
        // Neither does a reset undo it.
        assert!(matches!(
            crate::reset(&record),
            Err(SetupError::RecordInUse { .. })
        ));
        assert_eq!(read(root, BOOST), "0");
        assert!(record.exists());

        // Once that process is gone, the record is a leftover: reset restores from it.
        other.end();
        let e = second
            .apply_for_session(&record, "second-session-id")
            .unwrap_err();
        assert!(matches!(e, SetupError::RecordExists { .. }), "{e:?}");
        assert!(e.to_string().contains("system reset"), "{e}");
        assert_eq!(crate::reset(&record).unwrap().len(), 1);
        assert_eq!(read(root, BOOST), "1");
        assert!(!record.exists());
    }

    #[test]
    fn a_record_of_an_earlier_boot_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        let record = root.join("r.json");
        let mut old = RestoreRecord::new(vec![]);
        old.boot_id = Some("an-earlier-boot".into());
        old.save(&record).unwrap();
        if vernier_sys::process::boot_id().is_none() {
            eprintln!("skipped: no boot id on this kernel");
            return;
        }
        let plan = plan_setup(&["turbo"], &roots).unwrap();
        let mut guard = plan.apply_for_session(&record, "s").unwrap();
        let now = RestoreRecord::load(&record).unwrap().unwrap();
        assert_eq!(now.session.as_deref(), Some("s"));
        assert_eq!(now.pid, std::process::id());
        guard.restore().unwrap();
        assert!(!record.exists());
    }

    #[test]
    fn a_value_changed_by_something_else_is_found_until_it_is_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        let plan = plan_setup(&["governor,sysctl:kernel.timer_migration=0"], &roots).unwrap();
        let mut guard = plan.apply(None).unwrap();
        assert!(guard.changed_settings().is_empty());
        write(root, TM, "1\n");
        write(root, GOV1, "schedutil");
        let changed = guard.changed_settings();
        let found: Vec<(String, &str, &str)> = changed
            .iter()
            .map(|c| {
                let rel = Path::new(&c.setting).strip_prefix(root).unwrap();
                (rel.display().to_string(), c.set.as_str(), c.found.as_str())
            })
            .collect();
        assert_eq!(
            found,
            [
                (GOV1.to_string(), "performance", "schedutil"),
                (TM.to_string(), "0", "1"),
            ]
        );
        // Back at the value set (a trailing newline is no difference), and a file that went
        // away says so.
        write(root, TM, "0\n");
        std::fs::remove_file(root.join(GOV1)).unwrap();
        let changed = guard.changed_settings();
        assert_eq!(changed.len(), 1);
        assert!(changed[0].found.starts_with("unreadable"), "{changed:?}");
        write(root, GOV1, "performance");
        assert!(guard.changed_settings().is_empty());
        guard.restore().unwrap();
        assert_eq!(read(root, TM), "1");
    }

    #[test]
    fn only_a_setup_that_sets_host_state_keeps_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        let record = root.join("r.json");
        for (spec, host) in [
            (
                "cooldown:seconds=0,idle-gate:timeout=0,drop-caches,pin:cpus=0",
                false,
            ),
            ("sysctl:kernel.timer_migration=1", true),
            ("turbo", true),
            ("swap-reset:when=run", true),
        ] {
            let plan = plan_setup(&[spec], &roots).unwrap();
            assert_eq!(plan.sets_host_state(), host, "{spec}");
            let mut guard = plan.apply_for_session(&record, "s").unwrap();
            // The fixture has no swap areas: swap-reset has nothing to restore, so no record.
            let recorded = host && !spec.starts_with("swap-reset");
            assert_eq!(record.exists(), recorded, "{spec}");
            guard.restore().unwrap();
            assert!(!record.exists());
        }
    }

    #[test]
    fn cancel_flag_ends_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let roots = fixture::tree(dir.path());
        // The fixture load (0.1) never falls below 0.01, so only the flag can end this wait.
        let plan = plan_setup(&["cooldown:load=0.01:timeout=3600"], &roots).unwrap();
        let flag = Arc::new(AtomicBool::new(true));
        let mut guard = plan.apply(None).unwrap().with_cancel_flag(flag);
        assert!(matches!(guard.before_run(), Err(SetupError::Cancelled)));
    }

    #[test]
    fn cooldown_and_idle_gate_time_out_and_report_it() {
        let dir = tempfile::tempdir().unwrap();
        let roots = fixture::tree(dir.path());
        let plan = plan_setup(
            &["cooldown:load=0.01:timeout=0,idle-gate:threshold=0:window=10:timeout=0"],
            &roots,
        )
        .unwrap();
        let mut guard = plan.apply(None).unwrap();
        let reports = guard.before_run().unwrap();
        assert_eq!(reports.len(), 2);
        assert!(reports.iter().all(|r| r.timed_out), "{reports:?}");
        assert!(reports[0].detail.contains("still >= 0.01"));
    }
}
