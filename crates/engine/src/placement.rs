//! Where a served run process spawns the command: on its own CPU, where a short command's time
//! matches hyperfine's, with every CPU the command may use given back once it has exec'd.
//!
//! The kernel may move a process at its exec to the CPU it judges idlest (`sched_exec`, the
//! exec balancing of `select_task_rq_fair`, kernel/sched/fair.c). A short command pays for
//! that move: its caches, and its waiting parent's wake-up across CPUs when it exits. Left to
//! the kernel, a run process's spawns were moved far more often than hyperfine's, since the
//! controller's work between runs runs on the CPU the run process spawns from (each wakes the
//! other through a pipe): on a 2-vCPU KVM guest (kernel 6.18), 4 of 51 spawns of `true` ran
//! where they were spawned, and `true` took 1.06-1.12x hyperfine's median time.
//!
//! So the run process of a configuration that is not pinned (`--setup pin`) stays on the CPU
//! it started on; what it spawns inherits that one CPU, which leaves the exec nothing to
//! balance; and as soon as the exec has replaced the spawned process (`posix_spawn` returns
//! then) the run process gives it every CPU the run process was allowed, so that the command,
//! its threads and its children run wherever the kernel places them, as any other process's
//! do. On an idle CPU that is before the new program's first instruction; where the command
//! ran first (a busy machine) and started threads or processes, which inherited the one CPU,
//! they are given every CPU too once it has run a millisecond (`vernier_bench`'s releaser,
//! `crates/bench/src/release.rs`). On that guest all 51 spawns then ran where spawned and
//! `true` took 1.01-1.05x hyperfine's median time (docs/benchmarks.md).

use vernier_sys::affinity::{children_listed, current_affinity, current_cpu, CpuSet};

/// The CPU a served run process stays on and the CPUs the processes it spawns get back.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    home: usize,
    allowed: Vec<usize>,
}

impl Placement {
    /// The calling thread's placement: the CPU it runs on, among the CPUs it may use; `None`
    /// when it may use only one (nothing to place), its CPU is unknown, or the kernel does not
    /// list a task's children (`release_tree` could not find what a command started).
    pub fn of_this_thread() -> Option<Self> {
        if !children_listed() {
            return None;
        }
        let allowed = current_affinity().ok()?;
        let home = usize::try_from(current_cpu()).ok()?;
        (allowed.len() > 1 && allowed.contains(&home)).then_some(Placement { home, allowed })
    }

    /// Confines the calling thread to its CPU. Best effort: where it cannot (a cpuset changed
    /// since), it and what it spawns keep every CPU, as without a placement.
    pub fn stay_home(&self) -> bool {
        CpuSet::new(&[self.home]).pin_current_thread().is_ok()
    }

    /// The CPUs a spawned process gets once it has exec'd: all the run process was allowed.
    pub fn allowed(&self) -> &[usize] {
        &self.allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_stays_on_its_cpu_and_what_it_spawns_gets_every_cpu_back() {
        let allowed = current_affinity().unwrap();
        if allowed.len() < 2 {
            eprintln!("skipped: needs two CPUs to place anything (has {allowed:?})");
            return;
        }
        let (placement, confined) = std::thread::spawn(|| {
            let placement = Placement::of_this_thread().unwrap();
            assert!(placement.stay_home());
            (placement, current_affinity().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(confined, vec![placement.home]);
        assert_eq!(placement.allowed(), allowed);
        // Confined to one CPU, a thread has nothing to place.
        let one = std::thread::spawn(move || {
            CpuSet::new(&[allowed[0]]).pin_current_thread().unwrap();
            Placement::of_this_thread()
        })
        .join()
        .unwrap();
        assert_eq!(one, None);
    }
}
