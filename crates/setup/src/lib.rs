//! System setup with guaranteed restore, `system tune` / `system reset`, and the validity check.
//!
//! The flow follows "validate everything before touching the system":
//!
//! 1. [`plan_setup`] parses `--setup NAME[:option=value...],...` and checks every plugin against
//!    this machine (cpufreq present, root, CPUs online, SCHED_FIFO permitted). Nothing changes.
//!    A plugin that cannot work here fails the plan, unless it is marked optional with a
//!    trailing `?` (`governor?`), in which case it is listed in [`SetupPlan::skipped`].
//! 2. [`SetupPlan::apply`] writes a restore record (JSON) *before* changing anything, applies
//!    the once-per-session plugins and returns a [`SetupGuard`].
//! 3. The engine calls [`SetupGuard::before_run`] before every measured run (drop caches,
//!    cooldown, idle gate, per-run swap reset) and [`apply_in_child`] inside each benchmark child
//!    (SCHED_FIFO priority and CPU pinning from [`ChildSetup`]).
//! 4. [`SetupGuard::restore`] undoes the changes in reverse order and removes the record. It is
//!    idempotent and also runs from `Drop`, so an error return or a panic restores too.
//!
//! Ctrl-C, SIGTERM, SIGHUP: the signal handler only sets a flag (nothing else is
//! async-signal-safe); the main path sees the flag between runs, returns, and the guard
//! restores on the way out (explicitly with `restore()` to report errors, or by `Drop`). After
//! `kill -9` or a crash nothing in the process can run, so the record stays behind and
//! `vernier system reset` ([`reset`] / [`restore_from_record`]) puts the previous values back
//! from it. The record names its process and session: while that process runs, no other
//! session may apply a setup over it and no reset may undo it ([`SetupError::RecordInUse`]).
//!
//! [`system_check`] lists what threatens the validity of measurements on this machine;
//! [`tune`] applies the recommended settings this machine supports, persistently, leaving a
//! record for [`reset`].
//!
//! This crate changes the system but never prints; results and waits are returned as values.

mod check;
mod error;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod fixture;
mod guard;
mod plugins;
mod record;
mod spec;
mod swap;
mod tune;

pub use check::{
    measure_ping_pong, system_check, system_check_cached, system_check_with, CheckOptions,
    PingPong, SAMPLED_MAX_AGE,
};
pub use error::SetupError;
pub use guard::{RunStepReport, SetupGuard};
pub use plugins::{
    apply_in_child, plan_setup, ChildSetup, PlannedStep, PluginHelp, SetupPlan, Skipped, Step,
    When, PLUGIN_HELP, PLUGIN_NAMES,
};
pub use record::{restore_from_record, Change, RestoreRecord};
pub use spec::{parse_setup_list, SetupSpec};
pub use swap::{parse_proc_swaps, SwapArea};
pub use tune::{plan_tune, reset, tune};

use std::path::PathBuf;

/// Where the kernel's interfaces live. The real machine uses [`Roots::real`]; tests point the
/// roots at fixture trees. These are the [`vernier_sys::Roots`] plus `dev_root` for
/// /dev/cpu_dma_latency; convert with `Roots::from(sys_roots)` and [`Roots::sys`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    pub proc_root: PathBuf,
    pub sys_root: PathBuf,
    pub etc_root: PathBuf,
    pub boot_root: PathBuf,
    pub dev_root: PathBuf,
}

impl Roots {
    /// The live system: /proc, /sys, /etc, /boot and /dev.
    pub fn real() -> Self {
        Roots {
            proc_root: PathBuf::from("/proc"),
            sys_root: PathBuf::from("/sys"),
            etc_root: PathBuf::from("/etc"),
            boot_root: PathBuf::from("/boot"),
            dev_root: PathBuf::from("/dev"),
        }
    }

    /// A fixture tree: `<dir>/proc`, `<dir>/sys`, `<dir>/etc`, `<dir>/boot` and `<dir>/dev`.
    pub fn under(dir: &std::path::Path) -> Self {
        Roots {
            proc_root: dir.join("proc"),
            sys_root: dir.join("sys"),
            etc_root: dir.join("etc"),
            boot_root: dir.join("boot"),
            dev_root: dir.join("dev"),
        }
    }
}

impl Roots {
    /// The vernier-sys roots (without `dev_root`), for its readers.
    pub fn sys(&self) -> vernier_sys::Roots {
        vernier_sys::Roots {
            proc_root: self.proc_root.clone(),
            sys_root: self.sys_root.clone(),
            etc_root: self.etc_root.clone(),
            boot_root: self.boot_root.clone(),
        }
    }
}

/// `dev_root` is /dev for the running machine and `<dir>/dev` for a tree made by
/// `vernier_sys::Roots::under(dir)` (the parent of its proc root).
impl From<vernier_sys::Roots> for Roots {
    fn from(r: vernier_sys::Roots) -> Self {
        let dev_root = match r.proc_root.parent() {
            Some(dir) if r.proc_root != std::path::Path::new("/proc") => dir.join("dev"),
            _ => PathBuf::from("/dev"),
        };
        Roots {
            proc_root: r.proc_root,
            sys_root: r.sys_root,
            etc_root: r.etc_root,
            boot_root: r.boot_root,
            dev_root,
        }
    }
}

impl Default for Roots {
    fn default() -> Self {
        Roots::real()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn converts_from_and_to_the_sys_roots() {
        assert_eq!(Roots::from(vernier_sys::Roots::real()), Roots::real());
        let tree = Roots::from(vernier_sys::Roots::under("/tmp/fixture"));
        assert_eq!(tree, Roots::under(Path::new("/tmp/fixture")));
        assert_eq!(tree.sys(), vernier_sys::Roots::under("/tmp/fixture"));
    }
}
