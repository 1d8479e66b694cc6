//! Scheduling policy of the calling thread (sched(7), sched_setscheduler(2) with pid 0), and
//! what a benchmark child applies to itself before it measures.

use vernier_model::ChildSetup;

use crate::affinity::pin_current_thread;
use crate::SysError;

/// Switches the calling thread to SCHED_FIFO at `priority` (1-99). Needs root, CAP_SYS_NICE
/// or an RLIMIT_RTPRIO of at least `priority` (sched(7)).
pub fn set_fifo(priority: i32) -> Result<(), SysError> {
    set_policy(libc::SCHED_FIFO, priority)
}

/// A scheduling policy of sched(7) that a measurement thread may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_FIFO at a priority of 1-99.
    Fifo,
    /// SCHED_RR at a priority of 1-99.
    Rr,
    /// SCHED_OTHER (priority 0): the normal time-sharing policy.
    Other,
}

impl Policy {
    fn raw(self) -> libc::c_int {
        match self {
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
            Policy::Other => libc::SCHED_OTHER,
        }
    }

    /// Whether the policy is a real-time one, with a priority.
    pub fn is_real_time(self) -> bool {
        self != Policy::Other
    }
}

/// Switches the calling thread to `policy` at `priority` (0 for [`Policy::Other`]) as
/// cyclictest's `setscheduler()` does (rt-tests src/cyclictest/cyclictest.c): when the kernel
/// refuses with EPERM, the soft RLIMIT_RTPRIO is raised to the hard one and the switch tried
/// once more. Only the calling thread changes (sched_setscheduler(2) with pid 0).
pub fn set_thread_policy(policy: Policy, priority: i32) -> Result<(), SysError> {
    let priority = if policy.is_real_time() { priority } else { 0 };
    match set_policy(policy.raw(), priority) {
        Err(e) if e.os_error() == Some(libc::EPERM) && raise_soft_rtprio() => {
            set_policy(policy.raw(), priority)
        }
        other => other,
    }
}

/// Raises the soft RLIMIT_RTPRIO to the hard one; true when it was below and was raised.
fn raise_soft_rtprio() -> bool {
    use crate::limits::{raise_soft_limit, Resource};
    raise_soft_limit(Resource::RealtimePriority, u64::MAX).is_some_and(|(before, now)| now > before)
}

/// The scheduling policy and priority of the calling thread, as sched_getscheduler(2) and
/// sched_getparam(2) report them (`None` for a policy other than FIFO, RR and OTHER).
pub fn current_policy() -> (Option<Policy>, i32) {
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is valid for the call.
    let policy = unsafe { libc::sched_getscheduler(0) };
    // SAFETY: as above.
    unsafe { libc::sched_getparam(0, &mut param) };
    let policy = [Policy::Fifo, Policy::Rr, Policy::Other]
        .into_iter()
        .find(|p| p.raw() == policy);
    (policy, param.sched_priority)
}

fn set_policy(policy: libc::c_int, priority: i32) -> Result<(), SysError> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pid 0 is the calling thread; `param` is valid for the call.
    if unsafe { libc::sched_setscheduler(0, policy, &param) } != 0 {
        return Err(SysError::last_os("sched_setscheduler"));
    }
    Ok(())
}

/// Checks that SCHED_FIFO at `priority` is permitted by switching a short-lived thread of this
/// process to it and back; the calling thread is not changed.
pub fn probe_fifo(priority: i32) -> Result<(), SysError> {
    std::thread::spawn(move || {
        set_fifo(priority)?;
        // The thread ends right after, so a failure to switch back changes nothing.
        let _ = set_policy(libc::SCHED_OTHER, 0);
        Ok(())
    })
    .join()
    .unwrap_or_else(|_| {
        Err(SysError::Unsupported {
            what: "the SCHED_FIFO probe thread panicked".into(),
        })
    })
}

/// Applies `child` to the calling thread; the engine calls it in the benchmark child before the
/// benchmark starts. Pinning comes first so a FIFO task never runs, even briefly, on a CPU it
/// is about to leave. SCHED_RESET_ON_FORK is not set: processes and threads the benchmark
/// starts inherit the policy and the affinity, as with `chrt -f` and `taskset`.
pub fn apply_child_setup(child: &ChildSetup) -> Result<(), SysError> {
    if let Some(cpus) = &child.cpus {
        pin_current_thread(cpus)?;
    }
    if let Some(priority) = child.rt_priority {
        set_fifo(priority)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn child_setup_applies_in_a_thread() {
        if probe_fifo(10).is_err() {
            eprintln!("skipped: SCHED_FIFO needs root, CAP_SYS_NICE or RLIMIT_RTPRIO");
            return;
        }
        let online = crate::cpulist::online_cpus();
        let child = ChildSetup {
            rt_priority: Some(10),
            cpus: Some(vec![online[0]]),
            ..ChildSetup::default()
        };
        let (policy, prio, cpus) = std::thread::spawn(move || {
            apply_child_setup(&child).unwrap();
            let mut param = libc::sched_param { sched_priority: 0 };
            // SAFETY: pid 0 is this thread; `param` is valid.
            let policy = unsafe { libc::sched_getscheduler(0) };
            // SAFETY: as above.
            unsafe { libc::sched_getparam(0, &mut param) };
            let cpus = crate::affinity::current_affinity().unwrap();
            (policy, param.sched_priority, cpus)
        })
        .join()
        .unwrap();
        assert_eq!(policy, libc::SCHED_FIFO);
        assert_eq!(prio, 10);
        assert_eq!(cpus, vec![online[0]]);
        apply_child_setup(&ChildSetup::default()).unwrap();
    }

    #[test]
    fn thread_policy_switches_only_the_calling_thread() {
        let before = current_policy();
        let rr = std::thread::spawn(|| {
            let rr = set_thread_policy(Policy::Rr, 5).map(|()| current_policy());
            // A priority given with SCHED_OTHER is ignored (it takes none).
            set_thread_policy(Policy::Other, 50).unwrap();
            assert_eq!(current_policy(), (Some(Policy::Other), 0));
            rr
        })
        .join()
        .unwrap();
        match rr {
            Ok(rr) => assert_eq!(rr, (Some(Policy::Rr), 5)),
            Err(e) => {
                eprintln!("SCHED_RR skipped ({e}): needs root, CAP_SYS_NICE or RLIMIT_RTPRIO")
            }
        }
        assert_eq!(current_policy(), before);
        assert!(set_thread_policy(Policy::Fifo, 0).is_err());
    }

    #[test]
    fn fifo_priority_out_of_range_is_refused() {
        // sched(7): SCHED_FIFO priorities are 1-99 whoever asks.
        assert!(probe_fifo(0).is_err());
        assert!(probe_fifo(100).is_err());
    }
}
