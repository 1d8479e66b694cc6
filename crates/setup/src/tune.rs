//! `system tune` and `system reset`.
//!
//! What tune changes, and why only that:
//! - every CPU's scaling_governor to `performance`, where cpufreq has it: frequency ramps of
//!   the dynamic governors put their reaction time into every short benchmark
//!   (Documentation/admin-guide/pm/cpufreq.rst);
//! - turbo/boost off, where controllable: turbo frequency depends on temperature, power budget
//!   and how many cores are busy, so it drifts within and between runs
//!   (Documentation/admin-guide/pm/intel_pstate.rst, `no_turbo`);
//! - `kernel.timer_migration = 0`: timers stay on the CPU that armed them instead of moving to
//!   a busy CPU, so idle CPUs are not woken for other CPUs' work
//!   (Documentation/admin-guide/sysctl/kernel.rst);
//! - `kernel.numa_balancing = 0`, where enabled: automatic NUMA balancing periodically unmaps
//!   pages to sample accesses, adding page faults and migrations to a run (same document).
//!
//! Deliberately left alone (and reported by [`crate::system_check`] instead):
//! - ASLR (`kernel.randomize_va_space`): switching it off machine-wide weakens every process on
//!   the machine; a benchmark child can opt out on its own with personality(2)
//!   ADDR_NO_RANDOMIZE (`setarch -R`), which is the conservative choice;
//! - transparent huge pages: `always`/`madvise`/`never` changes what memory-heavy benchmarks
//!   measure, not only their noise; it is a configuration to record and compare, not a tuning.
//!
//! Tune changes persist after the process exits, with a restore record; `system reset`
//! replays the record.

use std::path::{Path, PathBuf};

use crate::guard::SetupGuard;
use crate::plugins::turbo::turbo_writes;
use crate::record::{check_absent, read_value, restore_from_record, Change};
use vernier_sys::Roots;

use crate::SetupError;

/// The changes tune would make here, with the current values as `previous`; settings already
/// at the recommended value and interfaces this machine lacks are left out. Changes nothing.
pub fn plan_tune(roots: &Roots) -> Result<Vec<Change>, SetupError> {
    let mut wanted: Vec<(&str, PathBuf, String)> = Vec::new();
    let cpu_dir = roots.sys_root.join("devices/system/cpu");
    if let Ok(online) = vernier_sys::cpulist::read_online_cpus(&roots.sys_root) {
        for cpu in online {
            let dir = cpu_dir.join(format!("cpu{cpu}/cpufreq"));
            let offers_performance =
                vernier_sys::read_file(&dir.join("scaling_available_governors"))
                    .map(|a| a.split_whitespace().any(|g| g == "performance"))
                    .unwrap_or(false);
            if offers_performance {
                wanted.push((
                    "governor",
                    dir.join("scaling_governor"),
                    "performance".into(),
                ));
            }
        }
    }
    for (path, value) in turbo_writes(&roots.sys_root) {
        wanted.push(("turbo", path, value));
    }
    let sysctl = roots.proc_root.join("sys/kernel");
    wanted.push(("sysctl", sysctl.join("timer_migration"), "0".into()));
    wanted.push(("sysctl", sysctl.join("numa_balancing"), "0".into()));

    let mut changes = Vec::new();
    for (plugin, path, value) in wanted {
        let previous = match read_value(&path) {
            Ok(p) => p,
            Err(SetupError::Sys(e)) if e.is_unsupported() => continue,
            Err(e) => return Err(e),
        };
        if previous != value {
            changes.push(Change::WriteFile {
                plugin: plugin.to_string(),
                path,
                previous,
                value,
            });
        }
    }
    Ok(changes)
}

/// Applies [`plan_tune`], writing the restore record to `record_path` first. The changes stay
/// in effect after return; [`reset`] undoes them. If one write fails, the earlier ones are
/// undone and the record removed before the error is returned. Fails with
/// [`SetupError::RecordExists`] when an earlier tune or session was not reset, with
/// [`SetupError::RecordInUse`] while a session holds the system.
pub fn tune(roots: &Roots, record_path: &Path) -> Result<Vec<Change>, SetupError> {
    check_absent(record_path)?;
    let guard = SetupGuard::apply_planned(plan_tune(roots)?, Some(record_path))?;
    Ok(guard.keep())
}

/// `system reset`: undoes what the record at `record_path` lists (from `system tune` or from a
/// session that was killed) and removes it. See [`restore_from_record`].
pub fn reset(record_path: &Path) -> Result<Vec<Change>, SetupError> {
    restore_from_record(record_path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::fixture::{self, read, write};

    #[test]
    fn tune_changes_what_is_supported_and_reset_restores() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = fixture::tree(root);
        write(root, "proc/sys/kernel/numa_balancing", "1\n");
        let planned = plan_tune(&roots).unwrap();
        let paths: Vec<String> = planned
            .iter()
            .map(|c| match c {
                Change::WriteFile { path, .. } => {
                    path.strip_prefix(root).unwrap().display().to_string()
                }
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(
            paths,
            [
                "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
                "sys/devices/system/cpu/cpufreq/boost",
                "proc/sys/kernel/timer_migration",
                "proc/sys/kernel/numa_balancing",
            ]
        );
        // Planning changed nothing.
        assert_eq!(read(root, "proc/sys/kernel/timer_migration"), "1\n");

        let record = root.join("tune.json");
        let applied = tune(&roots, &record).unwrap();
        assert_eq!(applied, planned);
        assert_eq!(read(root, "sys/devices/system/cpu/cpufreq/boost"), "0");
        assert_eq!(read(root, "proc/sys/kernel/numa_balancing"), "0");
        // Still in effect after the call, with the record on disk; a second tune refuses.
        assert!(record.exists());
        assert!(matches!(
            tune(&roots, &record),
            Err(SetupError::RecordExists { .. })
        ));
        // ASLR and THP are left alone on purpose.
        assert_eq!(read(root, "proc/sys/kernel/randomize_va_space"), "2\n");

        let undone = reset(&record).unwrap();
        assert_eq!(undone.len(), 5);
        assert_eq!(read(root, "sys/devices/system/cpu/cpufreq/boost"), "1");
        assert_eq!(read(root, "proc/sys/kernel/timer_migration"), "1");
        assert_eq!(
            read(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"),
            "powersave"
        );
        assert!(!record.exists());
        assert!(reset(&record).unwrap().is_empty());
    }

    #[test]
    fn tune_on_a_machine_without_controls_changes_only_sysctls() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "sys/devices/system/cpu/online", "0\n");
        write(root, "proc/sys/kernel/timer_migration", "0\n");
        let roots = Roots::under(root);
        assert!(plan_tune(&roots).unwrap().is_empty());
        write(root, "proc/sys/kernel/timer_migration", "1\n");
        assert_eq!(plan_tune(&roots).unwrap().len(), 1);
    }
}
