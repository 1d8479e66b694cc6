//! `fork`: process creation throughput. Each worker process repeats fork(2), an immediate
//! _exit(2) in the child and waitpid(2) in the parent until its duration is over, as
//! `stress-ng --fork` does, and counts as stress-ng counts its bogo-ops: forks per second of
//! each worker's own elapsed time, summed over workers. The cost measured is dominated by
//! copying the worker's page tables and tearing them down again, so it grows with the
//! worker's address space.
//!
//! It does not reproduce stress-ng's rate. stress-ng's fork worker is a bigger process (on
//! this project's 2-vCPU KVM guest, kernel 6.18, stress-ng 0.15: 75 MiB mapped, 3 MiB
//! resident) and also calls setpgid(2) and kill(2) for every child; vernier's workers are
//! small. `parent_mem` maps that much anonymous memory in 4 KiB pages (transparent huge pages
//! declined with madvise(2) MADV_NOHUGEPAGE) and writes every page before the workers are
//! forked, so that every fork copies that many page table entries: the dependence of fork
//! cost on the parent's size that a kernel change may shift. Memory that is mapped but never
//! touched costs fork little (it has no page table entries to copy), so stress-ng's resident
//! size, not its mapped size, is the comparable setting. `bench/fork-vs-stress-ng.sh` prints
//! both tools' rates side by side; one worker each, under heavy background load (load
//! average 15 on 2 CPUs), it measured stress-ng 1,898 forks per second of CPU time (241 per
//! second of real time, which is what vernier counts) and vernier 2,818 with `parent_mem=0`,
//! 1,420 with 3 MiB and 21 with 75 MiB.
//!
//! The memory is mapped and touched by the run process before the start line; the workers
//! inherit it when they are forked, so none of that work is timed.

use vernier_model::{BenchmarkInfo, MetricInfo, Options};
use vernier_sys::MachineLimits;

use crate::opts::{
    check_rate_benchmark, duration_spec, run_rate_benchmark, uint, uint_spec, workers_spec,
};
use crate::workers::{errno, status};
use crate::{BenchError, Benchmark, Measurement, RunContext};

pub struct Fork;

impl Benchmark for Fork {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            "fork",
            "1",
            "fork + exit + wait throughput of N worker processes",
            MetricInfo::higher("forks_per_second", "forks/s"),
        )
        .with_options(vec![
            workers_spec(),
            duration_spec(),
            uint_spec(
                "parent_mem",
                0,
                0,
                1 << 20,
                "MiB",
                "anonymous memory mapped and touched before the workers are forked",
            ),
        ])
    }

    /// Each worker is a process with at most one child of its own at a time.
    /// The parent memory exists once; its copy-on-write pages are shared by the workers.
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let info = self.info();
        check_rate_benchmark(&info, options, limits, 2)?;
        let mib = uint(&info, options, "parent_mem")?;
        limits.check_memory(mib.saturating_mul(1 << 20))?;
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let info = self.info();
        let mib = uint(&info, options, "parent_mem")?;
        let bytes = usize::try_from(mib)
            .ok()
            .and_then(|m| m.checked_mul(1 << 20))
            .ok_or_else(|| BenchError::Options(format!("parent_mem = {mib} MiB is too large")))?;
        // Held until the workers have been reaped.
        let _memory = TouchedMemory::new(bytes)?;
        run_rate_benchmark(&info, options, fork_until)
    }
}

/// Private anonymous memory in small pages, every page written; unmapped on drop.
struct TouchedMemory {
    addr: *mut libc::c_void,
    len: usize,
}

impl TouchedMemory {
    fn new(len: usize) -> Result<Option<Self>, BenchError> {
        if len == 0 {
            return Ok(None);
        }
        // SAFETY: a fresh private anonymous mapping; checked for MAP_FAILED below.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(BenchError::last_os("mmap"));
        }
        let memory = TouchedMemory { addr, len };
        // Huge pages would make the page tables, and so the fork cost, 512 times smaller than
        // those of a process that size; without THP support the call fails harmlessly.
        // SAFETY: advice on our own mapping.
        unsafe { libc::madvise(addr, len, libc::MADV_NOHUGEPAGE) };
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|p| *p > 0)
            .unwrap_or(4096);
        let base = addr.cast::<u8>();
        for offset in (0..len).step_by(page) {
            // SAFETY: `offset` is inside the writable mapping of `len` bytes.
            unsafe { base.add(offset).write_volatile(1) };
        }
        Ok(Some(memory))
    }
}

impl Drop for TouchedMemory {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing uses any more.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

/// Forks, lets the child exit at once and reaps it, until `deadline_ns`. Async-signal-safe.
fn fork_until(deadline_ns: u64) -> Result<u64, i32> {
    let mut count = 0u64;
    loop {
        // SAFETY: the child only calls _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: leaves the child at once, without running any of the parent's code.
            unsafe { libc::_exit(0) };
        }
        if pid < 0 {
            return Err(status::FORK);
        }
        let mut st = 0;
        loop {
            // SAFETY: `st` is a valid out pointer; `pid` is our child.
            let rc = unsafe { libc::waitpid(pid, &mut st, 0) };
            if rc == pid {
                break;
            }
            if rc < 0 && errno() != libc::EINTR {
                return Err(status::FORK);
            }
        }
        count += 1;
        if vernier_sys::clock::monotonic_ns() >= deadline_ns {
            return Ok(count);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;
    use vernier_model::{OptionDefault, OptionKind, OptionValue};

    #[test]
    fn defaults() {
        let info = Fork.info();
        assert_eq!((info.name(), info.version()), ("fork", "1"));
        assert!(info.metric().higher_is_better);
        assert_eq!(info.metric().unit, "forks/s");
        let workers = info.option("workers").unwrap();
        assert_eq!(workers.default, OptionDefault::OnlineCpus);
        assert_eq!(workers.kind, OptionKind::UInt { min: 1, max: 4096 });
        assert_eq!(
            info.option("duration").unwrap().default,
            OptionDefault::Value(OptionValue::Float(5.0))
        );
    }

    #[test]
    fn parent_memory_is_mapped_and_every_page_touched() {
        let len = 8 << 20;
        let memory = TouchedMemory::new(len).unwrap().unwrap();
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let mut resident = vec![0u8; len.div_ceil(page)];
        // SAFETY: the range is our mapping; `resident` has one byte per page (mincore(2)).
        let rc = unsafe { libc::mincore(memory.addr, len, resident.as_mut_ptr()) };
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
        let absent = resident.iter().filter(|r| *r & 1 == 0).count();
        assert_eq!(
            absent,
            0,
            "{absent} of {} pages not touched",
            resident.len()
        );
        assert!(TouchedMemory::new(0).unwrap().is_none());
    }

    #[test]
    fn parent_mem_runs_and_defaults_to_none() {
        let info = Fork.info();
        let spec = info.option("parent_mem").unwrap();
        assert_eq!(spec.default, OptionDefault::Value(OptionValue::UInt(0)));
        assert_eq!(spec.unit, "MiB");
        let options = resolve_options(
            &info,
            &[("workers", "1"), ("duration", "0.05"), ("parent_mem", "16")],
        )
        .unwrap();
        let m = Fork.run(&options, &RunContext::default()).unwrap();
        assert!(m.values["forks_per_second"] > 0.0);
    }

    #[test]
    fn short_run_counts_forks() {
        let b = Fork;
        let options =
            resolve_options(&b.info(), &[("workers", "2"), ("duration", "0.05")]).unwrap();
        let m = b.run(&options, &RunContext::default()).unwrap();
        let rate = m.values["forks_per_second"];
        // Every worker forks at least once; nothing forks faster than once per microsecond.
        assert!(rate > 0.0 && rate < 2e6, "{rate}");
        // Each worker's rate is its forks over at least the duration, so the forks of all
        // workers are at least the rate times the duration.
        let forks = m.values[vernier_model::values::OPERATIONS];
        assert!(forks >= 2.0 && forks.fract() == 0.0, "{forks}");
        assert!(
            forks >= rate * 0.05 * (1.0 - 1e-9),
            "{forks} forks, {rate}/s"
        );
    }
}
