//! The cost of one sample of the `latency` loop besides its sleep: reading CLOCK_MONOTONIC and
//! the bookkeeping of the sample, against the clock read alone and against cyclictest's own
//! bookkeeping (rt-tests src/cyclictest/cyclictest.c `timerthread()` with `-h`: `calcdiff()`,
//! min, max and the sum for the mean, `hist_sample()` into 1 us buckets with an overflow
//! count, `cycles++`, `next += interval`, the catch-up loop), written here in Rust on the same
//! clock values. The work after the clock read is what lengthens the time between wake-up and
//! the next sleep; it does not enter the measured latency, which ends at the clock read.
//!
//! `cargo run --release -p vernier-bench --example latency_sample_cost [ITERATIONS]`
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example is a program that prints what it measured

use std::hint::black_box;
use std::process::ExitCode;

use vernier_bench::latency::advance;
use vernier_model::Recording;
use vernier_sys::clock::monotonic_ns;

/// The OSADL interval, only used for the period arithmetic.
const INTERVAL_NS: u64 = 200_000;
/// cyclictest -h 1000.
const BUCKETS: usize = 1000;
const REPEATS: usize = 7;

fn timespec_now() -> libc::timespec {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts
}

/// cyclictest's per-thread statistics with a histogram, as far as the loop touches them.
struct CyclictestStat {
    min: i64,
    max: i64,
    avg: f64,
    cycles: u64,
    hist: Vec<u64>,
    overflows: u64,
    /// cyclictest records the cycle of each overflow, at most `BUCKETS` of them.
    overflow_cycles: Vec<u64>,
}

/// `calcdiff()` of rt-tests src/include/rt-utils.h: microseconds, truncated.
// time_t and c_long are i64 on 64-bit Linux and i32 on 32-bit targets: the casts are needed there.
#[allow(clippy::unnecessary_cast)]
fn calcdiff(t1: &libc::timespec, t2: &libc::timespec) -> i64 {
    let diff = 1_000_000 * (t1.tv_sec - t2.tv_sec) as i64;
    diff + ((t1.tv_nsec - t2.tv_nsec) / 1000) as i64
}

fn tsgreater(a: &libc::timespec, b: &libc::timespec) -> bool {
    a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec)
}

fn tsnorm(ts: &mut libc::timespec) {
    while ts.tv_nsec >= 1_000_000_000 {
        ts.tv_nsec -= 1_000_000_000;
        ts.tv_sec += 1;
    }
}

/// Nanoseconds per iteration of `body`, the least of `REPEATS` timings of `n` iterations.
fn per_iteration(n: u64, mut body: impl FnMut()) -> f64 {
    (0..REPEATS)
        .map(|_| {
            let start = monotonic_ns();
            for _ in 0..n {
                body();
            }
            (monotonic_ns() - start) as f64 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> ExitCode {
    let n: u64 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 2_000_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: latency_sample_cost [ITERATIONS]");
            return ExitCode::from(2);
        }
    };
    // The clock alone.
    let clock = per_iteration(n, || {
        black_box(monotonic_ns());
    });
    // vernier: the sample is the time since the previous clock read (a realistic few tens of
    // nanoseconds, in the exact part of the counts), recorded, then the period arithmetic.
    let mut recording = Recording::new();
    let mut next = monotonic_ns();
    let vernier = per_iteration(n, || {
        let now = monotonic_ns();
        recording.record(now.saturating_sub(next));
        let (following, skipped) = advance(next, now, INTERVAL_NS);
        if skipped > 0 {
            recording.miss(skipped);
        }
        black_box(following);
        next = now;
    });
    black_box(recording.count());
    // cyclictest's bookkeeping on the same values.
    let mut stat = CyclictestStat {
        min: 1_000_000,
        max: 0,
        avg: 0.0,
        cycles: 0,
        hist: vec![0; BUCKETS],
        overflows: 0,
        overflow_cycles: vec![0; BUCKETS],
    };
    let mut next = timespec_now();
    let cyclictest = per_iteration(n, || {
        let now = timespec_now();
        let diff = calcdiff(&now, &next);
        if diff < stat.min {
            stat.min = diff;
        }
        if diff > stat.max {
            stat.max = diff;
        }
        stat.avg += diff as f64;
        // hist_sample() of src/lib/histogram.c with 1 us buckets.
        if diff >= 0 && (diff as usize) < BUCKETS {
            stat.hist[diff as usize] += 1;
        } else {
            if (stat.overflows as usize) < BUCKETS {
                stat.overflow_cycles[stat.overflows as usize] = stat.cycles;
            }
            stat.overflows += 1;
        }
        stat.cycles += 1;
        let mut following = next;
        following.tv_nsec += INTERVAL_NS as libc::c_long;
        tsnorm(&mut following);
        while tsgreater(&now, &following) {
            following.tv_nsec += INTERVAL_NS as libc::c_long;
            tsnorm(&mut following);
        }
        black_box(following);
        next = now;
    });
    black_box((stat.min, stat.max, stat.avg, &stat.hist, stat.overflows));
    println!("iterations\t{n}");
    println!("clock_gettime alone\t{clock:.1} ns");
    println!(
        "clock + vernier's bookkeeping\t{vernier:.1} ns (bookkeeping {:.1} ns)",
        vernier - clock
    );
    println!(
        "clock + cyclictest's bookkeeping\t{cyclictest:.1} ns (bookkeeping {:.1} ns)",
        cyclictest - clock
    );
    ExitCode::SUCCESS
}
