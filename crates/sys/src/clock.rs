//! Clocks. Benchmarks time their work with CLOCK_MONOTONIC (a vDSO call, ~17 ns here);
//! records carry wall-clock timestamps in nanoseconds since the Unix epoch.

/// CLOCK_MONOTONIC in nanoseconds.
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_THREAD_CPUTIME_ID in nanoseconds: the CPU time of the calling thread (a system call,
/// not a vDSO one; clock_gettime(2)), which stops while the thread is not running.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the calling thread's CPU clock exists.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall-clock time in nanoseconds since the Unix epoch.
pub fn unix_now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Clock ticks per second of /proc accounting on this machine (USER_HZ, sysconf(_SC_CLK_TCK);
/// proc(5)); [`vernier_model::record::USER_HZ`] when sysconf cannot tell.
pub fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as u64
    } else {
        vernier_model::record::USER_HZ
    }
}

/// The CPU's time-stamp counter, where vernier reads one (x86_64): `lfence; rdtsc`, the fence
/// keeping the read from executing before the instructions ahead of it have completed (Intel
/// SDM vol. 2B, RDTSC: "If software requires RDTSC to be executed only after all previous
/// instructions have executed [...] it can execute LFENCE immediately before RDTSC").
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn cycles() -> Option<u64> {
    // SAFETY: lfence and rdtsc exist on every x86_64 CPU and have no preconditions.
    unsafe {
        std::arch::x86_64::_mm_lfence();
        Some(std::arch::x86_64::_rdtsc())
    }
}

/// The CPU's time-stamp counter: none on this architecture.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn cycles() -> Option<u64> {
    None
}

/// Whether the time-stamp counter of a machine with this /proc/cpuinfo counts at a constant
/// rate whatever the CPU's frequency (`constant_tsc`) and also in deep idle states
/// (`nonstop_tsc`): only then do cycles convert to time with one frequency. Every CPU's flags
/// must have both.
pub fn tsc_is_invariant(cpuinfo: &str) -> bool {
    let mut flag_lines = cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .filter_map(|l| l.split_once(':').map(|(_, flags)| flags))
        .peekable();
    flag_lines.peek().is_some()
        && flag_lines.all(|flags| {
            ["constant_tsc", "nonstop_tsc"]
                .iter()
                .all(|want| flags.split_whitespace().any(|w| w == *want))
        })
}

/// The time-stamp counter's frequency in cycles per nanosecond, measured against
/// CLOCK_MONOTONIC over `window_ns` (sleeping in between), or `None` without a counter.
pub fn measure_cycles_per_ns(window_ns: u64) -> Option<f64> {
    let (t0, c0) = (monotonic_ns(), cycles()?);
    std::thread::sleep(std::time::Duration::from_nanos(window_ns));
    let (c1, t1) = (cycles()?, monotonic_ns());
    (t1 > t0 && c1 > c0).then(|| (c1 - c0) as f64 / (t1 - t0) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_does_not_go_back() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(b >= a);
        assert!(unix_now_ns() > 1_600_000_000_000_000_000);
        // The value analysis assumes for recorded data is this machine's.
        assert_eq!(clock_ticks_per_second(), vernier_model::record::USER_HZ);
    }

    #[test]
    fn an_invariant_tsc_needs_both_flags_on_every_cpu() {
        let both = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc sse\n";
        assert!(tsc_is_invariant(both));
        assert!(tsc_is_invariant(&format!("{both}\n{both}")));
        assert!(!tsc_is_invariant("flags\t: fpu tsc constant_tsc\n"));
        assert!(!tsc_is_invariant(&format!("{both}flags\t: nonstop_tsc\n")));
        assert!(!tsc_is_invariant("processor\t: 0\n"));
    }

    #[test]
    fn the_cycle_counter_advances_at_a_plausible_rate() {
        if cycles().is_none() {
            return;
        }
        let per_ns = measure_cycles_per_ns(10_000_000).unwrap_or(0.0);
        // Between 100 MHz and 10 GHz.
        assert!(per_ns > 0.1 && per_ns < 10.0, "{per_ns}");
    }
}
