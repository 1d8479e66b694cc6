//! System setup with guaranteed restore, `system tune` / `system reset`, and the validity check.
//!
//! The flow follows "validate everything before touching the system":
//!
//! 1. [`plan_setup`] parses `--setup NAME[:option=value...],...` and checks every plugin against
//!    this machine (cpufreq present, root, CPUs online, SCHED_FIFO permitted). Nothing changes.
//!    A plugin that cannot work here fails the plan, unless it is marked optional with a
//!    trailing `?` (`governor?`), in which case it is listed in [`SetupPlan::skipped`].
//! 2. [`SetupPlan::apply`] writes a restore record (JSON) *before* changing anything, when
//!    there is anything to restore ([`SetupPlan::sets_host_state`]), applies the
//!    once-per-session plugins and returns a [`SetupGuard`]. The application layer
//!    (`vernier_app::host`) keeps the record where every user finds it (/run/vernier), which
//!    makes it the host's lock.
//! 3. The engine calls [`SetupGuard::before_run`] before every measured run (drop caches,
//!    cooldown, idle gate, per-run swap reset), and [`SetupGuard::changed_settings`] right
//!    before and after it (a value something else changed); each benchmark child applies
//!    [`SetupPlan::child`] (SCHED_FIFO priority and CPU pinning, a `vernier_model::ChildSetup`)
//!    to itself with `vernier_sys::sched::apply_child_setup`.
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
//! Where things are: each plugin is one type in `plugins/<name>.rs` (its description with its
//! typed options, preflight, changes and per-run work) with its line in [`registry`];
//! `guard.rs` orders, records, applies and restores;
//! `record.rs` is the restore record and how each kind of change is undone; `spec.rs` reads
//! `--setup` lists in vernier's one spec grammar (`vernier_model::spec`).
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
pub use plugins::trace::{trace_finding, TRACE_STEP};
pub use plugins::{plan_setup, registry, Entry, PlannedStep, SetupPlan, Skipped, When};
pub use record::{check_absent, restore_from_record, Change, RestoreRecord};
pub use spec::parse_setup_list;
pub use swap::{parse_proc_swaps, SwapArea};
pub use tune::{plan_tune, reset, tune};
