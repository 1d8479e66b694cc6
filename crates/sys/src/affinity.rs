//! CPU affinity of the calling thread (sched_setaffinity(2) and sched_getaffinity(2) with
//! pid 0): the one place vernier builds and applies a CPU set.

use crate::SysError;

/// A set of CPUs for sched_setaffinity(2), built ahead of time so that applying it allocates
/// nothing: a forked child, where only async-signal-safe calls are allowed (signal-safety(7)),
/// may apply it. CPUs beyond `CPU_SETSIZE` are left out.
#[derive(Clone, Copy)]
pub struct CpuSet(libc::cpu_set_t);

impl CpuSet {
    pub fn new(cpus: &[usize]) -> Self {
        // SAFETY: an all-zero cpu_set_t is a valid empty set; CPU_SET only writes inside it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in cpus {
                if cpu < libc::CPU_SETSIZE as usize {
                    libc::CPU_SET(cpu, &mut set);
                }
            }
            CpuSet(set)
        }
    }

    /// Restricts the calling thread to this set. Async-signal-safe: one system call, and a
    /// failure is an OS error code, which allocates nothing.
    pub fn pin_current_thread(&self) -> Result<(), SysError> {
        self.apply_to(0)
    }

    /// The set of thread `tid` (0: the calling thread).
    fn of(tid: u32) -> Result<Self, SysError> {
        let tid = pid_t(tid, "sched_getaffinity")?;
        // SAFETY: an all-zero cpu_set_t is valid; sched_getaffinity only writes inside it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Err(SysError::last_os("sched_getaffinity"));
            }
            Ok(CpuSet(set))
        }
    }

    /// The CPUs of the set, ascending.
    fn cpus(&self) -> Vec<usize> {
        // SAFETY: CPU_ISSET only reads inside the set, for CPUs below CPU_SETSIZE.
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &self.0) })
            .collect()
    }

    /// Gives thread `tid` this set unless it has it already; whether it was given it now.
    fn give(&self, tid: u32) -> bool {
        // SAFETY: CPU_EQUAL only reads the two sets.
        let has =
            CpuSet::of(tid).is_ok_and(|current| unsafe { libc::CPU_EQUAL(&current.0, &self.0) });
        !has && self.apply_to(tid).is_ok()
    }

    /// Gives the thread `tid` (a process's main thread: its pid; 0: the calling thread) this
    /// set.
    pub fn apply_to(&self, tid: u32) -> Result<(), SysError> {
        let tid = pid_t(tid, "sched_setaffinity")?;
        // SAFETY: `self.0` is a valid cpu_set_t of the size passed.
        let r = unsafe {
            libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &self.0)
        };
        if r != 0 {
            return Err(SysError::last_os("sched_setaffinity"));
        }
        Ok(())
    }
}

/// `tid` as the kernel takes it; one beyond its range names no thread (ESRCH).
fn pid_t(tid: u32, call: &'static str) -> Result<libc::pid_t, SysError> {
    libc::pid_t::try_from(tid).map_err(|_| SysError::Syscall {
        call,
        source: std::io::Error::from_raw_os_error(libc::ESRCH),
    })
}

/// Gives process `pid`, and the threads and processes it started while it was confined to
/// other CPUs, with theirs, the CPUs `cpus` (a command spawned on its spawner's one CPU, which
/// may have started others before it was given more; they inherited the confinement). The main
/// thread of `pid` comes first, so that what it starts from then on inherits `cpus`; then each
/// task /proc lists under it (`/proc/PID/task`, and each task's `children`, proc(5)) that does
/// not have `cpus` yet is given them, and its process is looked into in turn, pass after pass
/// until a pass finds no such task, since a task not yet given `cpus` may start another
/// meanwhile. A task that has `cpus` already started nothing confined, and a command that
/// keeps starting processes ends the walk as soon as those it started confined are given
/// `cpus`. Tasks that end meanwhile are passed over; an error on `pid` itself is returned
/// (ESRCH: it has ended).
pub fn release_tree(pid: u32, cpus: &[usize]) -> Result<(), SysError> {
    let set = CpuSet::new(cpus);
    set.apply_to(pid)?;
    let mut released = vec![pid];
    loop {
        let mut found = false;
        let mut next = 0;
        while let Some(&process) = released.get(next) {
            next += 1;
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{process}/task")) else {
                continue;
            };
            let tids = tasks.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok());
            for tid in tids {
                if set.give(tid) {
                    found = true;
                }
                let children = format!("/proc/{process}/task/{tid}/children");
                let Ok(children) = std::fs::read_to_string(children) else {
                    continue;
                };
                for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                    if set.give(child) {
                        found = true;
                        released.push(child);
                    }
                }
            }
        }
        if !found {
            return Ok(());
        }
    }
}

/// Whether the kernel lists each task's children (`/proc/PID/task/TID/children`,
/// CONFIG_PROC_CHILDREN), which [`release_tree`] needs to find the processes a process started.
pub fn children_listed() -> bool {
    std::path::Path::new("/proc/thread-self/children").exists()
}

/// Restricts the calling thread to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> Result<(), SysError> {
    CpuSet::new(cpus).pin_current_thread()
}

/// The CPU the calling thread runs on (sched_getcpu(3)); u64::MAX when unknown.
/// Async-signal-safe.
pub fn current_cpu() -> u64 {
    // SAFETY: no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    u64::try_from(cpu).unwrap_or(u64::MAX)
}

/// The CPUs the calling thread may run on.
pub fn current_affinity() -> Result<Vec<usize>, SysError> {
    affinity_of(0)
}

/// The CPUs thread `tid` (a process's main thread: its pid) may run on.
pub fn affinity_of(tid: u32) -> Result<Vec<usize>, SysError> {
    CpuSet::of(tid).map(|set| set.cpus())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_released_tree_has_the_cpus_in_its_processes_and_threads() {
        let allowed = current_affinity().unwrap();
        if allowed.len() < 2 || !children_listed() {
            eprintln!("skipped: needs two CPUs and /proc/PID/task/TID/children");
            return;
        }
        // Started confined to one CPU: a shell that starts a child process (sleep) and waits
        // for it, so that both exist when the tree is released.
        let first = allowed[0];
        let mut shell = std::thread::spawn(move || {
            pin_current_thread(&[first]).unwrap();
            std::process::Command::new("sh")
                .args(["-c", "sleep 5 & echo started; wait"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .join()
        .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(shell.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let cpus_of = |pid: u32| affinity_of(pid).unwrap();
        let children = |pid: u32| -> Vec<u32> {
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
                .unwrap()
                .split_whitespace()
                .map(|c| c.parse().unwrap())
                .collect()
        };
        let sleep = children(shell.id());
        assert_eq!(sleep.len(), 1, "{sleep:?}");
        assert_eq!(cpus_of(sleep[0]), [first]);
        release_tree(shell.id(), &allowed).unwrap();
        assert_eq!(cpus_of(shell.id()), allowed);
        assert_eq!(cpus_of(sleep[0]), allowed);
        // SAFETY: kill(2) of the child this test started.
        unsafe { libc::kill(sleep[0] as libc::pid_t, libc::SIGKILL) };
        shell.wait().unwrap();
        // An ended process is ESRCH.
        let e = release_tree(shell.id(), &allowed).unwrap_err();
        assert_eq!(e.os_error(), Some(libc::ESRCH), "{e}");
    }

    #[test]
    fn pin_and_read_back_in_a_thread() {
        let allowed = current_affinity().unwrap();
        let first = allowed[0];
        let got = std::thread::spawn(move || {
            pin_current_thread(&[first]).unwrap();
            current_affinity().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(got, vec![first]);
    }
}
