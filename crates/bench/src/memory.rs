//! `memory`: sustainable memory bandwidth with STREAM's four kernels (J. D. McCalpin, "Memory
//! Bandwidth and Machine Balance in Current High Performance Computers", IEEE TCCA Newsletter,
//! 1995; the reference code is stream.c, version 5.10).
//!
//! Three arrays `a`, `b`, `c` of `size` bytes each (8-byte floats) are set to 1, 2 and 0, `a`
//! is doubled once (stream.c's timer test), and then `ntimes` times, in this order:
//!
//! | kernel | loop                     | bytes counted per element |
//! |--------|--------------------------|---------------------------|
//! | copy   | `c[j] = a[j]`            | 16                        |
//! | scale  | `b[j] = q * c[j]`        | 16                        |
//! | add    | `c[j] = a[j] + b[j]`     | 24                        |
//! | triad  | `a[j] = b[j] + q * c[j]` | 24                        |
//!
//! with `q = 3`, as stream.c counts them: the bytes the loop reads and writes, not the extra
//! read of a cache line that a write allocates. Each kernel is timed as a whole, across all
//! threads: the controller reads CLOCK_MONOTONIC, releases the threads from a barrier and
//! reads the clock again when the last has finished its slice (stream.c times the OpenMP
//! parallel loop the same way, its fork and join included). The rate of a kernel is its bytes
//! divided by its best time over the iterations but the first, in MB/s (10^6 bytes per
//! second), which is what stream.c prints as "Best Rate MB/s".
//!
//! `threads` threads each own an equal slice of every array, are pinned to the CPUs the run
//! may use in turn, and write their slices first (so that the kernel places those pages near
//! them, as stream.c's parallel initialisation does). After the last iteration the arrays are
//! checked as stream.c's `checkSTREAMresults` does: the mean absolute error of each array
//! against the value the kernels must have produced, relative to that value, must be below
//! 1e-13. A run whose kernels did not do their work fails.

use std::hint::black_box;
use std::sync::Barrier;

use vernier_model::OptionValue;
use vernier_model::{BenchmarkInfo, MetricInfo, OptionDefault, OptionKind, OptionSpec, Options};
use vernier_sys::clock::monotonic_ns;
use vernier_sys::MachineLimits;

use crate::opts::{uint, uint_spec};
use crate::workers::{start_threads, Gate, WorkerThread};
use crate::{BenchError, Benchmark, Measurement, RunContext};

const NAME: &str = "memory";

/// STREAM's scalar `q`.
const SCALAR: f64 = 3.0;

/// stream.c's tolerance of the mean relative error of an array of doubles.
const EPSILON: f64 = 1e-13;

/// The kernels in the order they run, with the bytes stream.c counts per element.
pub const KERNELS: [(&str, u64); 4] = [("copy", 16), ("scale", 16), ("add", 24), ("triad", 24)];

/// The array size when the machine tells no caches: stream.c's default STREAM_ARRAY_SIZE of
/// 10 000 000 elements.
const FALLBACK_ARRAY_BYTES: u64 = 80_000_000;

/// The smallest array the automatic size gives, whatever the caches.
const MIN_AUTO_ARRAY_BYTES: u64 = 16 << 20;

pub struct Memory;

/// The size of each array by STREAM's rule ("each array must be at least 4 times the size of
/// the available cache memory", stream.c's header), from the bytes of all data caches; a
/// machine that tells none gets stream.c's default.
pub fn stream_array_bytes(total_cache_bytes: u64) -> u64 {
    if total_cache_bytes == 0 {
        return FALLBACK_ARRAY_BYTES;
    }
    total_cache_bytes
        .saturating_mul(4)
        .max(MIN_AUTO_ARRAY_BYTES)
        .next_multiple_of(1 << 20)
}

impl Benchmark for Memory {
    fn info(&self) -> BenchmarkInfo {
        let rate = |name: &str| MetricInfo::higher(name, "MB/s");
        BenchmarkInfo::new(
            NAME,
            "1",
            "memory bandwidth with STREAM's copy, scale, add and triad kernels \
                          (best of ntimes, MB/s)",
            rate("triad"),
        )
        .with_secondary_metrics(vec![rate("copy"), rate("scale"), rate("add")])
        .with_options(vec![
            OptionSpec::new(
                "size",
                OptionKind::Bytes {
                    min: 0,
                    max: 1 << 40,
                },
                OptionDefault::Value(OptionValue::UInt(0)),
            )
            .unit("bytes")
            .help(
                "bytes of each of the three arrays; 0: STREAM's rule, 4 times the \
                           bytes of all data caches (from sysfs), filled in when the plan is \
                           made",
            ),
            OptionSpec::new(
                "threads",
                OptionKind::UInt { min: 1, max: 4096 },
                OptionDefault::OnlineCpus,
            )
            .help(
                "threads, each with its own slice of the arrays, pinned to the CPUs \
                           the run may use in turn",
            ),
            uint_spec(
                "ntimes",
                10,
                2,
                10_000,
                "",
                "times each kernel runs per run; the best time but the first's counts \
                     (STREAM's NTIMES)",
            ),
        ])
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        let s = Settings::read(&self.info(), options)?;
        if s.size_bytes != 0 && s.elements() < s.threads {
            return Err(BenchError::Options(format!(
                "size={} holds {} 8-byte elements per array, fewer than threads={}: give each \
                 thread at least one",
                s.size_bytes,
                s.elements(),
                s.threads
            )));
        }
        Ok(())
    }

    /// `size=0` becomes the size STREAM's rule gives on this machine, so that the stored
    /// configuration says what was measured.
    fn complete_options(&self, options: &mut Options) -> Result<(), BenchError> {
        if options.uint("size") == 0 {
            let caches =
                vernier_sys::cache::read_caches(std::path::Path::new("/sys")).unwrap_or_default();
            let bytes = stream_array_bytes(vernier_sys::cache::total_data_cache_bytes(&caches));
            options.0.insert("size".into(), OptionValue::UInt(bytes));
        }
        Ok(())
    }

    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let s = Settings::read(&self.info(), options)?;
        limits.check_tasks(s.threads as u64 + 1)?;
        limits.check_memory(s.size_bytes.saturating_mul(3))?;
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let s = Settings::read(&self.info(), options)?;
        if s.size_bytes == 0 || s.elements() < s.threads {
            return Err(BenchError::Options(format!(
                "size={} is too small for threads={}",
                s.size_bytes, s.threads
            )));
        }
        let cpus = vernier_sys::affinity::current_affinity()?;
        let best = stream(s.elements(), s.threads, s.ntimes, &cpus)?;
        let mut measurement = Measurement::default();
        for ((name, bytes_per_element), best_ns) in KERNELS.iter().zip(best) {
            let bytes = (bytes_per_element * s.elements() as u64) as f64;
            // MB/s with MB = 10^6 bytes, as stream.c: bytes / ns * 1e9 / 1e6.
            let rate = bytes / best_ns.max(1) as f64 * 1e3;
            measurement.values.insert((*name).to_string(), rate);
        }
        Ok(measurement)
    }
}

/// A run's options, read and checked.
struct Settings {
    size_bytes: u64,
    threads: usize,
    ntimes: usize,
}

impl Settings {
    fn read(info: &BenchmarkInfo, options: &Options) -> Result<Self, BenchError> {
        let size_bytes = match options.get("size") {
            Some(OptionValue::UInt(v)) => *v,
            other => {
                return Err(BenchError::Options(format!(
                    "option 'size' must be a number of bytes, got {other:?}"
                )))
            }
        };
        Ok(Settings {
            size_bytes,
            threads: uint(info, options, "threads")? as usize,
            ntimes: uint(info, options, "ntimes")? as usize,
        })
    }

    fn elements(&self) -> usize {
        (self.size_bytes / 8) as usize
    }
}

/// `c[j] = a[j]`. Not inlined, so that the loop stands alone in the binary and can be read
/// there (docs/benchmarks.md says what the compiler made of each).
#[inline(never)]
fn copy(c: &mut [f64], a: &[f64]) {
    for (c, a) in c.iter_mut().zip(a) {
        *c = *a;
    }
}

/// `b[j] = q * c[j]`.
#[inline(never)]
fn scale(b: &mut [f64], c: &[f64], q: f64) {
    for (b, c) in b.iter_mut().zip(c) {
        *b = q * *c;
    }
}

/// `c[j] = a[j] + b[j]`.
#[inline(never)]
fn add(c: &mut [f64], a: &[f64], b: &[f64]) {
    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
        *c = *a + *b;
    }
}

/// `a[j] = b[j] + q * c[j]`.
#[inline(never)]
fn triad(a: &mut [f64], b: &[f64], c: &[f64], q: f64) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = *b + q * *c;
    }
}

/// One thread's slices of the three arrays.
struct Slices<'a> {
    a: &'a mut [f64],
    b: &'a mut [f64],
    c: &'a mut [f64],
}

impl Slices<'_> {
    /// stream.c's initialisation and timer test: a = 1, b = 2, c = 0, then a = 2a.
    fn initialise(&mut self) {
        self.a.fill(1.0);
        self.b.fill(2.0);
        self.c.fill(0.0);
        for a in self.a.iter_mut() {
            *a *= 2.0;
        }
    }

    fn kernel(&mut self, k: usize, q: f64) {
        match k {
            0 => copy(self.c, self.a),
            1 => scale(self.b, self.c, q),
            2 => add(self.c, self.a, self.b),
            _ => triad(self.a, self.b, self.c, q),
        }
        // The arrays are read after the last iteration; this makes every iteration's stores
        // observable on their own, so none can be merged with the next.
        black_box(&mut *self.a);
        black_box(&mut *self.b);
        black_box(&mut *self.c);
    }
}

/// Splits `v` into `parts` consecutive slices whose lengths differ by at most one.
fn split(mut v: &mut [f64], parts: usize) -> Vec<&mut [f64]> {
    let n = v.len();
    let mut out = Vec::with_capacity(parts);
    for i in 0..parts {
        let len = (i + 1) * n / parts - i * n / parts;
        let (head, tail) = v.split_at_mut(len);
        out.push(head);
        v = tail;
    }
    out
}

/// Runs STREAM over arrays of `n` elements with `threads` threads pinned in turn to `cpus`,
/// checks the results, and returns each kernel's best time in ns over iterations 2..=ntimes.
pub fn stream(
    n: usize,
    threads: usize,
    ntimes: usize,
    cpus: &[usize],
) -> Result<[u64; 4], BenchError> {
    // vec! of zeros maps untouched pages; each thread's first write places its own slice.
    let mut a = vec![0.0f64; n];
    let mut b = vec![0.0f64; n];
    let mut c = vec![0.0f64; n];
    let mut times = vec![[0u64; 4]; ntimes];
    let barrier = Barrier::new(threads + 1);
    let q = black_box(SCALAR);
    let workers = split(&mut a, threads)
        .into_iter()
        .zip(split(&mut b, threads))
        .zip(split(&mut c, threads))
        .enumerate()
        .map(|(i, ((a, b), c))| {
            let cpu = cpus.get(i % cpus.len().max(1)).copied();
            let barrier = &barrier;
            WorkerThread {
                name: format!("memory/{i}"),
                stack_bytes: None,
                body: move |gate: Gate| {
                    if let Some(cpu) = cpu {
                        vernier_sys::affinity::pin_current_thread(&[cpu])?;
                    }
                    // Every thread is running before any waits at the barrier, which could
                    // otherwise never fill.
                    if !gate.ready_and_wait() {
                        return Ok(());
                    }
                    let mut s = Slices { a, b, c };
                    s.initialise();
                    barrier.wait();
                    for _ in 0..ntimes {
                        for k in 0..KERNELS.len() {
                            barrier.wait();
                            s.kernel(k, q);
                            barrier.wait();
                        }
                    }
                    Ok(())
                },
            }
        })
        .collect();
    let outcome = start_threads("memory", workers, || {
        barrier.wait();
        for row in times.iter_mut() {
            for t in row.iter_mut() {
                let start = monotonic_ns();
                barrier.wait();
                barrier.wait();
                *t = monotonic_ns() - start;
            }
        }
        Ok(())
    });
    outcome?;
    check_results(&a, &b, &c, ntimes)?;
    let mut best = [u64::MAX; 4];
    for row in &times[1..] {
        for (b, &t) in best.iter_mut().zip(row) {
            *b = (*b).min(t);
        }
    }
    Ok(best)
}

/// The values the arrays must hold after `ntimes` iterations (stream.c's
/// `checkSTREAMresults`: the same operations on scalars).
pub fn expected_values(ntimes: usize) -> (f64, f64, f64) {
    let (mut a, mut b, mut c) = (1.0f64, 2.0f64, 0.0f64);
    a *= 2.0;
    for _ in 0..ntimes {
        c = a;
        b = SCALAR * c;
        c = a + b;
        a = b + SCALAR * c;
    }
    (a, b, c)
}

/// Checks the arrays as stream.c does: the mean absolute error of each against its expected
/// value, relative to that value, must be below [`EPSILON`].
pub fn check_results(a: &[f64], b: &[f64], c: &[f64], ntimes: usize) -> Result<(), BenchError> {
    let (ea, eb, ec) = expected_values(ntimes);
    for (name, values, expected) in [("a", a, ea), ("b", b, eb), ("c", c, ec)] {
        let mean_error =
            values.iter().map(|v| (v - expected).abs()).sum::<f64>() / values.len().max(1) as f64;
        let relative = mean_error / expected.abs();
        // A NaN fails too: it is not within any tolerance.
        if relative.is_nan() || relative > EPSILON {
            return Err(BenchError::Worker(format!(
                "STREAM's check failed: array {name} is off its expected value {expected} by \
                 a mean relative error of {relative:e} (at most {EPSILON:e} allowed)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;

    #[test]
    fn the_kernels_produce_what_stream_checks_for_any_split() {
        let cpus = vernier_sys::affinity::current_affinity().unwrap();
        for (n, threads, ntimes) in [(1, 1, 2), (1_000, 1, 3), (1_001, 3, 2), (4_096, 2, 5)] {
            let best = stream(n, threads, ntimes, &cpus).unwrap();
            assert!(best.iter().all(|&t| t > 0 && t < u64::MAX), "{best:?}");
        }
    }

    #[test]
    fn the_check_catches_a_kernel_that_did_not_run() {
        let n = 100;
        let (ea, eb, ec) = expected_values(3);
        let (a, b, mut c) = (vec![ea; n], vec![eb; n], vec![ec; n]);
        check_results(&a, &b, &c, 3).unwrap();
        // One iteration fewer: the values of ntimes = 2.
        let (pa, pb, pc) = expected_values(2);
        let e = check_results(&vec![pa; n], &vec![pb; n], &vec![pc; n], 3)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("worker failed: STREAM's check failed: array a"),
            "{e}"
        );
        // One element of c wrong by its own value.
        c[17] = 0.0;
        let e = check_results(&a, &b, &c, 3).unwrap_err().to_string();
        assert!(e.contains("array c"), "{e}");
        // A NaN is never within the tolerance.
        c[17] = f64::NAN;
        assert!(check_results(&a, &b, &c, 3).is_err());
    }

    #[test]
    fn expected_values_follow_stream() {
        // stream.c with NTIMES = 1: a = 2; c = 2; b = 6; c = 8; a = 6 + 24 = 30.
        assert_eq!(expected_values(1), (30.0, 6.0, 8.0));
        // Then c = 30; b = 90; c = 120; a = 90 + 360.
        assert_eq!(expected_values(2), (450.0, 90.0, 120.0));
    }

    #[test]
    fn the_array_size_follows_streams_rule() {
        // Two CPUs with 48K L1d and 1M L2 each and a shared 32M L3: 34.1 MiB of caches.
        let caches = 2 * (48 << 10) + 2 * (1 << 20) + (32 << 20);
        assert_eq!(stream_array_bytes(caches), 137 << 20);
        assert_eq!(stream_array_bytes(1 << 10), MIN_AUTO_ARRAY_BYTES);
        assert_eq!(stream_array_bytes(0), FALLBACK_ARRAY_BYTES);
    }

    #[test]
    fn options_sizes_and_the_automatic_size() {
        let info = Memory.info();
        let mut options =
            resolve_options(&info, &[("size", "64K"), ("threads", "2"), ("ntimes", "2")]).unwrap();
        assert_eq!(options.uint("size"), 64 << 10);
        Memory.check_options(&options).unwrap();
        Memory.complete_options(&mut options).unwrap();
        assert_eq!(options.uint("size"), 64 << 10);
        let mut auto = resolve_options(&info, &[]).unwrap();
        Memory.complete_options(&mut auto).unwrap();
        assert!(auto.uint("size") >= MIN_AUTO_ARRAY_BYTES);
        let tiny = resolve_options(&info, &[("size", "8"), ("threads", "2")]).unwrap();
        let e = Memory.check_options(&tiny).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid options: size=8 holds 1 8-byte elements per array, fewer than threads=2: \
             give each thread at least one"
        );
        assert!(resolve_options(&info, &[("ntimes", "1")]).is_err());
        let m = Memory.run(&options, &RunContext::default()).unwrap().values;
        assert_eq!(
            m.keys().collect::<Vec<_>>(),
            ["add", "copy", "scale", "triad"]
        );
        assert!(m.values().all(|&v| v > 0.0 && v.is_finite()), "{m:?}");
    }

    #[test]
    fn split_gives_every_element_once() {
        let mut v: Vec<f64> = (0..10).map(f64::from).collect();
        let parts = split(&mut v, 3);
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), [3, 3, 4]);
        assert_eq!(parts[2][0], 6.0);
    }
}
