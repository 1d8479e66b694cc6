//! Whether the machine is busy when a run starts, and what `--if-busy` does about it: a run
//! measured beside another benchmark, or on a loaded machine, measures the other work too. A
//! scheduled run (docs/farm.md) cannot ask anyone, so it waits or skips, and a skipped run is
//! stored as a session with status `skipped` whose note says why, so `vernier sessions` shows
//! the gap in a machine's history and its reason.

use std::time::{Duration, Instant};

use vernier_model::SessionStatus;
use vernier_store::Store;
use vernier_sys::Roots;

use crate::AppError;

/// What a session does when the machine is busy (`--if-busy`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IfBusy {
    /// Run anyway (a setup that changes the host is still refused while another session
    /// holds it).
    #[default]
    Run,
    /// Wait up to [`BusyPolicy::busy_wait_s`] for an idle machine, then skip.
    Wait,
    /// Skip at once.
    Skip,
}

/// When the machine counts as busy and what to do then.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BusyPolicy {
    pub if_busy: IfBusy,
    /// The 1-minute load average from which the machine is busy; `None`: not checked.
    pub busy_load: Option<f64>,
    /// How long [`IfBusy::Wait`] waits; `None`: [`DEFAULT_WAIT`].
    pub busy_wait_s: Option<f64>,
}

/// How long `--if-busy wait` waits when `--busy-wait` is not given.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// How often a waiting run looks again: the load average is updated every 5 s
/// (kernel/sched/loadavg.c, LOAD_FREQ), so more often would read the same value.
const POLL: Duration = Duration::from_secs(10);

/// Why the run should not start now, or `None` when it may: `None` at once with
/// `--if-busy run`; otherwise after waiting for an idle machine as `--if-busy` says. A wait
/// also ends, with `None`, as soon as `interrupted` says so (the caller then looks at why).
pub(crate) fn skip_reason(
    policy: &BusyPolicy,
    store: &(impl Store + ?Sized),
    roots: &Roots,
    interrupted: &dyn Fn() -> bool,
) -> Result<Option<String>, AppError> {
    if policy.if_busy == IfBusy::Run {
        return Ok(None);
    }
    let wait = match policy.if_busy {
        IfBusy::Wait => policy
            .busy_wait_s
            .map_or(DEFAULT_WAIT, Duration::from_secs_f64),
        _ => Duration::ZERO,
    };
    let deadline = Instant::now() + wait;
    loop {
        let Some(reason) = busy_now(policy, store, roots)? else {
            return Ok(None);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Some(if wait.is_zero() {
                reason
            } else {
                format!("{reason}, still after waiting {} s", wait.as_secs_f64())
            }));
        }
        let next = Instant::now() + left.min(POLL);
        while Instant::now() < next {
            if interrupted() {
                return Ok(None);
            }
            std::thread::sleep(next.saturating_duration_since(Instant::now()).min(SLICE));
        }
    }
}

/// How soon a wait notices an interruption.
const SLICE: Duration = Duration::from_millis(100);

/// What makes the machine busy now: another session holding the host's setup (its restore
/// record, `crate::host`, whatever database it records into), another session being recorded
/// into this database by this machine (its process alive; a farm's central database also holds
/// the running sessions of the other machines, which keep only those busy), or the 1-minute
/// load average at or above `--busy-load`.
fn busy_now(
    policy: &BusyPolicy,
    store: &(impl Store + ?Sized),
    roots: &Roots,
) -> Result<Option<String>, AppError> {
    if let Some(holder) = crate::host::holder()? {
        return Ok(Some(format!(
            "{} holds this machine's setup (restore record {})",
            holder.owner_description(),
            crate::host::session_record().display()
        )));
    }
    if let Some(other) = store.session_headers()?.into_iter().find(|h| {
        h.status == SessionStatus::Running
            && !vernier_sys::environment::is_another_machine(h.machine_id.as_deref())
    }) {
        return Ok(Some(format!(
            "another vernier session ({}) is running on this database",
            other.id
        )));
    }
    if let Some(limit) = policy.busy_load {
        let load = vernier_sys::loadavg::read_loadavg(&roots.proc_root)?.load_1m;
        if load >= limit {
            return Ok(Some(format!(
                "the 1-minute load average is {load:.2}, at or above --busy-load {limit}"
            )));
        }
    }
    Ok(None)
}
