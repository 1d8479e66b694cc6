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
}
