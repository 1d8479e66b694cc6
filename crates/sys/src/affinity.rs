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
        // SAFETY: `self.0` is a valid cpu_set_t of the size passed.
        let r =
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.0) };
        if r != 0 {
            return Err(SysError::last_os("sched_setaffinity"));
        }
        Ok(())
    }
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
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(SysError::last_os("sched_getaffinity"));
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
