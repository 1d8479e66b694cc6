//! `memlat`: the latency of one load from memory, by a dependent-load pointer chase over a
//! random cycle, as lmbench's `lat_mem_rd` (L. McVoy and C. Staelin, "lmbench: Portable Tools
//! for Performance Analysis", USENIX 1996) measures it, but in a random order.
//!
//! A buffer of `size` bytes holds one pointer every `stride` bytes (every 64-byte cache line
//! by default). The pointers form one cycle through all of them in a random order: a random
//! cyclic permutation by Sattolo's algorithm (S. Sattolo, "An algorithm to generate a random
//! cyclic permutation", Information Processing Letters 22(6), 1986) drawn from the project's
//! seeded generator ([`vernier_stats::SeededRng`]; the same `seed` gives the same cycle in
//! every version). Each load's address is the value of the load before it, so no two loads
//! overlap, and the order defeats the hardware prefetchers, which `lat_mem_rd`'s fixed stride
//! lets run ahead. Once the working set outgrows a cache level, nearly every load misses it;
//! the result is the time per load in ns, so a sweep over `size` shows the cache levels.
//!
//! The run pins itself to the CPU it starts on, builds the cycle, walks it once in full
//! untimed (the pages are then present and the caches as warm as the working set allows),
//! and then chases pointers in blocks of 65 536 loads for `duration` seconds, reading the
//! clocks between blocks only. The result is the thread's CPU time per load
//! (CLOCK_THREAD_CPUTIME_ID), so that time the thread spends preempted by other tasks does
//! not count as load latency (the caches those tasks evict still do); `wall_load_ns`, the
//! elapsed CLOCK_MONOTONIC time per load as `lat_mem_rd` reports it, is the same on an idle
//! machine and larger on a busy one. `hugepages` asks for transparent huge pages on the
//! buffer (madvise MADV_HUGEPAGE) or forbids them (MADV_NOHUGEPAGE); with 4 KiB pages a
//! random load past the TLB's reach also pays a page walk, with 2 MiB pages far fewer do. The
//! bytes of the process in huge pages (`AnonHugePages` of /proc/self/smaps_rollup) are
//! recorded with each run as `huge_page_bytes`.

use std::hint::black_box;

use vernier_model::{BenchmarkInfo, MetricInfo, OptionDefault, OptionKind, OptionSpec};
use vernier_model::{OptionValue, Options};
use vernier_stats::SeededRng;
use vernier_sys::clock::{monotonic_ns, thread_cpu_ns};
use vernier_sys::MachineLimits;

use crate::opts::{choice, choice_spec, float, uint, uint_spec};
use crate::{BenchError, Benchmark, Measurement, RunContext};

const NAME: &str = "memlat";

/// The metric: nanoseconds of the thread's CPU time per load.
pub const LOAD_NS: &str = "load_ns";

/// Elapsed nanoseconds per load.
pub const WALL_LOAD_NS: &str = "wall_load_ns";

/// The bytes of the process in transparent huge pages after the run, a condition of the run.
pub const HUGE_PAGE_BYTES: &str = "huge_page_bytes";

/// Loads between two readings of the clock: the clock's ~20 ns are then 0.03% of even an L1
/// hit's block.
const BLOCK: u64 = 65_536;

/// The size of a transparent huge page on x86-64 and most other 64-bit machines, to which the
/// buffer is aligned so that huge pages can back it from its first byte.
const HUGE_PAGE_BYTES_ALIGN: usize = 2 << 20;

const HUGEPAGES: &[&str] = &["off", "on"];

const POINTER_BYTES: u64 = std::mem::size_of::<usize>() as u64;

pub struct Memlat;

impl Benchmark for Memlat {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            NAME,
            "1",
            "memory load latency: a dependent pointer chase over a random cycle \
                          (ns per load); sweep size to see the cache levels",
            MetricInfo::lower(LOAD_NS, "ns"),
        )
        .with_secondary_metrics(vec![MetricInfo::lower(WALL_LOAD_NS, "ns")])
        .with_options(vec![
            OptionSpec::new(
                "size",
                OptionKind::Bytes {
                    min: 2 * POINTER_BYTES,
                    max: 1 << 40,
                },
                OptionDefault::Value(OptionValue::UInt(256 << 20)),
            )
            .unit("bytes")
            .help(
                "the working set; sweep it to see the cache levels \
                           (size=16K,256K,8M,256M)",
            ),
            OptionSpec::new(
                "stride",
                OptionKind::Bytes {
                    min: POINTER_BYTES,
                    max: 1 << 30,
                },
                OptionDefault::Value(OptionValue::UInt(64)),
            )
            .unit("bytes")
            .help(
                "bytes between two pointers, a multiple of 8: 64 puts one in every \
                           cache line, 4K one in every page",
            ),
            OptionSpec::new(
                "duration",
                OptionKind::Float {
                    min: 0.001,
                    max: 3600.0,
                },
                OptionDefault::Value(OptionValue::Float(1.0)),
            )
            .unit("s")
            .help("how long each run chases pointers (after one untimed pass)"),
            choice_spec(
                "hugepages",
                HUGEPAGES,
                "transparent huge pages on the buffer: off (MADV_NOHUGEPAGE) or on \
                     (MADV_HUGEPAGE)",
            ),
            uint_spec("seed", 1, 0, u64::MAX, "", "seed of the random cycle"),
        ])
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        let s = Settings::read(&self.info(), options)?;
        if s.hugepages {
            let path = std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
            let mode = std::fs::read_to_string(path).unwrap_or_default();
            if !mode.contains("[always]") && !mode.contains("[madvise]") {
                return Err(BenchError::Options(format!(
                    "hugepages=on needs transparent huge pages, but {} says '{}' (always or \
                     madvise is needed); use hugepages=off",
                    path.display(),
                    mode.trim()
                )));
            }
        }
        Ok(())
    }

    /// The run's process, the buffer and the permutation that builds it.
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let s = Settings::read(&self.info(), options)?;
        limits.check_tasks(1)?;
        let permutation = (s.slots() as u64).saturating_mul(POINTER_BYTES);
        limits.check_memory(s.size_bytes.saturating_add(permutation))?;
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let s = Settings::read(&self.info(), options)?;
        // SAFETY: sched_getcpu takes no arguments.
        let cpu = unsafe { libc::sched_getcpu() };
        if cpu >= 0 {
            vernier_sys::affinity::pin_current_thread(&[cpu as usize])?;
        }
        let mut buffer = Buffer::new(s.size_bytes as usize, s.hugepages)?;
        let start = buffer.link_cycle(s.stride as usize, s.slots(), s.seed);
        // One untimed pass over the whole cycle.
        let p = chase(start, s.slots() as u64);
        let timed = chase_for(p, (s.duration * 1e9) as u64);
        let mut measurement =
            Measurement::single(LOAD_NS, timed.cpu_ns as f64 / timed.loads as f64);
        measurement.values.insert(
            WALL_LOAD_NS.into(),
            timed.wall_ns as f64 / timed.loads as f64,
        );
        if let Some(bytes) = huge_page_bytes() {
            measurement
                .values
                .insert(HUGE_PAGE_BYTES.into(), bytes as f64);
        }
        drop(buffer);
        Ok(measurement)
    }
}

/// A run's options, read and checked.
struct Settings {
    size_bytes: u64,
    stride: u64,
    duration: f64,
    hugepages: bool,
    seed: u64,
}

impl Settings {
    fn read(info: &BenchmarkInfo, options: &Options) -> Result<Self, BenchError> {
        let bytes = |name: &str| match options.get(name) {
            Some(OptionValue::UInt(v)) => Ok(*v),
            other => Err(BenchError::Options(format!(
                "option '{name}' must be a number of bytes, got {other:?}"
            ))),
        };
        let s = Settings {
            size_bytes: bytes("size")?,
            stride: bytes("stride")?,
            duration: float(info, options, "duration")?,
            hugepages: choice(info, options, "hugepages")? == 1,
            seed: uint(info, options, "seed")?,
        };
        if !s.stride.is_multiple_of(POINTER_BYTES) || s.stride == 0 {
            return Err(BenchError::Options(format!(
                "stride={} is not a multiple of {POINTER_BYTES} bytes (a pointer's size): \
                 give 8, 64, 4K, ...",
                s.stride
            )));
        }
        if s.size_bytes < 2 * s.stride {
            return Err(BenchError::Options(format!(
                "size={} holds fewer than two pointers {} bytes apart: give a size of at least \
                 twice the stride",
                s.size_bytes, s.stride
            )));
        }
        Ok(s)
    }

    /// The pointers in the buffer: one every `stride` bytes.
    fn slots(&self) -> usize {
        (self.size_bytes / self.stride) as usize
    }
}

/// Sattolo's algorithm: a uniformly random cyclic permutation of `0..n`, as `next[i]`, the
/// element after `i` in the one cycle through all of them. Like Fisher-Yates from the last
/// position down, but position `i` swaps only with one strictly before it, which makes the
/// result a single cycle (Sattolo 1986; D. Knuth, TAOCP vol. 2, 3rd ed., sec. 3.4.2, exercise
/// 14).
pub fn sattolo_cycle(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = SeededRng::new(seed);
    let mut next: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.index(i);
        next.swap(i, j);
    }
    next
}

/// An anonymous private mapping, aligned to a huge page, unmapped on drop.
struct Buffer {
    mapping: *mut libc::c_void,
    mapped_len: usize,
    /// The aligned start and length the benchmark uses.
    start: *mut u8,
    len: usize,
}

impl Buffer {
    fn new(len: usize, hugepages: bool) -> Result<Self, BenchError> {
        let mapped_len = len
            .checked_add(HUGE_PAGE_BYTES_ALIGN)
            .ok_or_else(|| BenchError::Options("size is too large".into()))?;
        // SAFETY: a new anonymous private mapping; the arguments are valid.
        let mapping = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if mapping == libc::MAP_FAILED {
            return Err(BenchError::last_os("mmap"));
        }
        let offset = (mapping as usize).next_multiple_of(HUGE_PAGE_BYTES_ALIGN) - mapping as usize;
        let buffer = Buffer {
            mapping,
            mapped_len,
            // SAFETY: offset < HUGE_PAGE_BYTES_ALIGN, inside the mapping.
            start: unsafe { mapping.cast::<u8>().add(offset) },
            len,
        };
        let advice = if hugepages {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        // SAFETY: the range lies inside the mapping and is page-aligned.
        if unsafe { libc::madvise(buffer.start.cast(), len, advice) } != 0 {
            return Err(BenchError::last_os("madvise"));
        }
        Ok(buffer)
    }

    /// Writes the cycle: the pointer at slot `i` (byte `i * stride`) holds the address of the
    /// slot after `i` in a Sattolo cycle of `slots` slots. Returns the address of slot 0.
    fn link_cycle(&mut self, stride: usize, slots: usize, seed: u64) -> *const usize {
        debug_assert!(
            slots * stride <= self.len && stride.is_multiple_of(std::mem::size_of::<usize>())
        );
        let next = sattolo_cycle(slots, seed);
        for (i, &j) in next.iter().enumerate() {
            // SAFETY: i, j < slots, so both slots lie inside the buffer; the slots are
            // aligned to 8 bytes (stride is a multiple of 8, start to 2 MiB).
            unsafe {
                let target = self.start.add(j * stride) as usize;
                self.start.add(i * stride).cast::<usize>().write(target);
            }
        }
        self.start.cast()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by mmap with this length and is unmapped once.
        unsafe {
            libc::munmap(self.mapping, self.mapped_len);
        }
    }
}

/// Follows `loads` pointers from `p`, each load's address the value of the one before.
#[inline(never)]
fn chase(mut p: *const usize, loads: u64) -> *const usize {
    for _ in 0..loads {
        // SAFETY: every pointer of the cycle holds the address of another slot of the buffer,
        // which outlives the chase.
        p = unsafe { p.read() } as *const usize;
    }
    black_box(p)
}

/// What a timed chase did: its loads, and the elapsed and CPU nanoseconds they took.
struct Chased {
    loads: u64,
    wall_ns: u64,
    cpu_ns: u64,
}

/// Chases from `p` in blocks of [`BLOCK`] loads until `duration_ns` have passed.
fn chase_for(mut p: *const usize, duration_ns: u64) -> Chased {
    let start = monotonic_ns();
    let cpu_start = thread_cpu_ns();
    let mut loads = 0u64;
    loop {
        p = chase(p, BLOCK);
        loads += BLOCK;
        let now = monotonic_ns();
        if now - start >= duration_ns {
            return Chased {
                loads,
                wall_ns: now - start,
                cpu_ns: thread_cpu_ns() - cpu_start,
            };
        }
    }
}

/// The bytes of this process in transparent huge pages (`AnonHugePages:` of
/// /proc/self/smaps_rollup, in kB; proc(5)), when the file exists.
fn huge_page_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    parse_anon_huge_pages(&text)
}

/// The `AnonHugePages:` line of smaps or smaps_rollup, in bytes.
pub fn parse_anon_huge_pages(text: &str) -> Option<u64> {
    let kb = text
        .lines()
        .find_map(|l| l.strip_prefix("AnonHugePages:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    kb.checked_mul(1024)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;

    /// The length of the cycle through 0 and whether it visits every element.
    fn cycle_length(next: &[usize]) -> usize {
        let mut seen = vec![false; next.len()];
        let (mut i, mut length) = (0, 0);
        while !seen[i] {
            seen[i] = true;
            i = next[i];
            length += 1;
        }
        assert_eq!(i, 0, "the walk from 0 entered a cycle not through 0");
        length
    }

    #[test]
    fn sattolo_gives_one_cycle_through_everything_reproducibly() {
        for n in [1, 2, 3, 10, 1_000, 65_536] {
            for seed in [0, 1, 42] {
                let next = sattolo_cycle(n, seed);
                assert_eq!(cycle_length(&next), n, "n={n} seed={seed}");
                assert_eq!(next, sattolo_cycle(n, seed));
            }
        }
        // No element points at itself or at its neighbour every time: the order is random,
        // and another seed gives another one.
        let next = sattolo_cycle(1_000, 1);
        assert!(next.iter().enumerate().all(|(i, &j)| i != j));
        let sequential = next.iter().enumerate().filter(|(i, &j)| j == i + 1).count();
        assert!(sequential < 10, "{sequential} sequential steps");
        assert_ne!(next, sattolo_cycle(1_000, 2));
    }

    #[test]
    fn the_buffer_holds_one_cycle_through_every_slot() {
        for (size, stride, hugepages) in
            [(4096, 64, false), (1 << 16, 8, true), (8192, 4096, false)]
        {
            let slots = size / stride;
            let mut buffer = Buffer::new(size, hugepages).unwrap();
            let start = buffer.link_cycle(stride, slots, 7);
            let base = start as usize;
            let mut p = start;
            let mut visited = std::collections::BTreeSet::new();
            for _ in 0..slots {
                let offset = p as usize - base;
                assert_eq!(offset % stride, 0);
                assert!(offset < size);
                assert!(visited.insert(offset), "slot {offset} visited twice");
                p = chase(p, 1);
            }
            assert_eq!(p, start, "the walk returns to its start after every slot");
            assert_eq!(chase(start, slots as u64), start);
        }
    }

    #[test]
    fn options_and_their_checks() {
        let info = Memlat.info();
        let options = resolve_options(&info, &[("size", "16K"), ("duration", "0.01")]).unwrap();
        let s = Settings::read(&info, &options).unwrap();
        assert_eq!((s.size_bytes, s.stride, s.slots()), (16 << 10, 64, 256));
        let m = Memlat.run(&options, &RunContext::default()).unwrap();
        assert!(m.values[LOAD_NS] > 0.0 && m.values[LOAD_NS].is_finite());
        let e = |o: &[(&str, &str)]| {
            let options = resolve_options(&info, o).unwrap();
            Memlat.check_options(&options).unwrap_err().to_string()
        };
        assert_eq!(
            e(&[("stride", "12")]),
            "invalid options: stride=12 is not a multiple of 8 bytes (a pointer's size): give \
             8, 64, 4K, ..."
        );
        assert_eq!(
            e(&[("size", "64"), ("stride", "64")]),
            "invalid options: size=64 holds fewer than two pointers 64 bytes apart: give a size \
             of at least twice the stride"
        );
        assert!(resolve_options(&info, &[("size", "1.5M")]).is_err());
    }

    #[test]
    fn anon_huge_pages_of_smaps() {
        let text = "Rss:              1234 kB\nAnonHugePages:      4096 kB\nShared_Hugetlb: 0 kB\n";
        assert_eq!(parse_anon_huge_pages(text), Some(4 << 20));
        assert_eq!(parse_anon_huge_pages("Rss: 1 kB\n"), None);
        // The running kernel writes the line.
        assert!(huge_page_bytes().is_some());
    }
}
