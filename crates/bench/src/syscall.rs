//! `syscall`: the time of each call of one kernel entry, after the kernel-function
//! microbenchmarks of the kbench write-up in the project's sources (a cycle counter read
//! around each call, every duration kept, min, max, count, percentiles and MAD per run, the
//! distribution drawn with its CDF), from user space: what is timed is the whole trip of one
//! call, the entry and exit included.
//!
//! The run pins itself to one CPU (`cpu`), prepares its inputs (files for `stat` and `open`
//! in a new directory under `dir`, removed at the end of the run; a netlink socket for
//! `route-get`), makes `warmup_calls` untimed calls, measures the timer's own overhead, and
//! then times `calls` calls one by one, each duration recorded into the run's histogram
//! (quantity [`CALL`]). The loop touches preallocated memory only: the inputs' order is drawn
//! before it from a seeded generator ([`input_order`]), so that the inputs vary between calls
//! over a large set and the same `seed` gives the same sequence.
//!
//! The timer is the CPU's time-stamp counter where vernier reads one (x86_64) and
//! /proc/cpuinfo says it is invariant (`constant_tsc` and `nonstop_tsc`), converted with its
//! frequency measured against CLOCK_MONOTONIC over [`TSC_WINDOW_NS`] at the start of the run;
//! otherwise, or with `timer=monotonic`, CLOCK_MONOTONIC. Each run says which in its values
//! (`cycle_counter`, 1 or 0) and records the timer's overhead, the median of back-to-back
//! timer reads (`timer_overhead`), beside the results: it is included in every call's time
//! and not subtracted, since it is not a constant to take away from each call.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};

use vernier_model::histogram::call_values;
use vernier_model::{BenchmarkInfo, MetricInfo, OptionDefault, OptionKind, OptionSpec};
use vernier_model::{OptionValue, Options, Recording};
use vernier_stats::SeededRng;
use vernier_sys::MachineLimits;

use crate::opts::{choice, choice_spec, uint, uint_spec};
use crate::{BenchError, Benchmark, Measurement, RunContext};

pub use vernier_model::histogram::CALL;

/// The kernel entries `call` names, in the option's order.
pub const CALLS: &[&str] = &[
    "getpid",
    "clock_gettime",
    "clock_gettime-raw",
    "read",
    "write",
    "futex-wake",
    "sched_yield",
    "stat",
    "open",
    "route-get",
];

// The index of each entry in [`CALLS`], the benchmark loop's constant parameter.
const GETPID: usize = 0;
const CLOCK_GETTIME: usize = 1;
const CLOCK_GETTIME_RAW: usize = 2;
const READ: usize = 3;
const WRITE: usize = 4;
const FUTEX_WAKE: usize = 5;
const SCHED_YIELD: usize = 6;
const STAT: usize = 7;
const OPEN: usize = 8;
const ROUTE_GET: usize = 9;

const TIMERS: &[&str] = &["auto", "monotonic"];

/// How long the cycle counter's frequency is measured against CLOCK_MONOTONIC.
pub const TSC_WINDOW_NS: u64 = 100_000_000;

/// Back-to-back timer reads whose median is the timer's overhead.
const OVERHEAD_READS: usize = 10_000;

/// The secondary values that say how the run timed.
pub const TIMER_OVERHEAD: &str = "timer_overhead";
pub const CYCLE_COUNTER: &str = "cycle_counter";

/// Default destinations of `route-get`: the benchmarking range of RFC 2544 (198.18.0.0/15),
/// its first /16.
const DEFAULT_DESTINATIONS: &str = "198.18.0.0/16";

pub struct Syscall;

impl Benchmark for Syscall {
    fn info(&self) -> BenchmarkInfo {
        let ns = |name: &str| MetricInfo::lower(name, "ns");
        BenchmarkInfo::new(
            "syscall",
            "1",
            "the time of each call of one kernel entry (getpid, clock_gettime, \
                          read, write, futex, sched_yield, stat, open, route lookup), with \
                          its distribution",
            ns("p50"),
        )
        .with_secondary_metrics(vec![
            ns("min"),
            ns("p90"),
            ns("p95"),
            ns("p99"),
            ns("max"),
            ns("mad"),
            MetricInfo::higher("count", "calls"),
            ns(TIMER_OVERHEAD),
            MetricInfo::higher(CYCLE_COUNTER, "bool"),
        ])
        .with_options(vec![
            choice_spec(
                "call",
                CALLS,
                "the kernel entry: getpid (raw syscall), clock_gettime (vDSO), \
                     clock_gettime-raw (syscall), read (/dev/zero), write (/dev/null), \
                     futex-wake (no waiter), sched_yield, stat, open (open and close), \
                     route-get (RTM_GETROUTE over netlink and its reply)",
            ),
            uint_spec("calls", 100_000, 1, 100_000_000, "", "calls timed per run"),
            uint_spec(
                "warmup_calls",
                1_000,
                0,
                100_000_000,
                "",
                "untimed calls before the timed ones",
            ),
            uint_spec("size", 1, 1, 1 << 20, "B", "bytes per read or write"),
            uint_spec(
                "files",
                4_096,
                1,
                1 << 20,
                "",
                "files created for stat and open, visited in a seeded random order",
            ),
            text_spec(
                "dir",
                "/tmp",
                "where stat's and open's files are created (in a new directory, removed \
                     after the run)",
            ),
            text_spec(
                "destinations",
                DEFAULT_DESTINATIONS,
                "the IPv4 network whose addresses route-get looks up, in a seeded random \
                     order",
            ),
            uint_spec(
                "seed",
                1,
                0,
                u64::MAX,
                "",
                "seed of the order of the inputs",
            ),
            text_spec(
                "cpu",
                "last",
                "the CPU the run is pinned to: a number, or last (the highest-numbered \
                     one the run may use)",
            ),
            choice_spec(
                "timer",
                TIMERS,
                "auto: the CPU's invariant cycle counter where there is one, else \
                     CLOCK_MONOTONIC; monotonic: always CLOCK_MONOTONIC",
            ),
        ])
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        Settings::read(&self.info(), options).map(|_| ())
    }

    /// The run's process, a recording, the input order and the files.
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let s = Settings::read(&self.info(), options)?;
        limits.check_tasks(1)?;
        let order_bytes = (s.calls + s.warmup_calls).saturating_mul(4);
        limits.check_memory(Recording::new().memory_bytes().saturating_add(order_bytes))?;
        if let CpuChoice::Number(cpu) = s.cpu {
            if !limits.cpus.is_empty() && !limits.cpus.contains(&cpu) {
                return Err(BenchError::NotPermitted(format!(
                    "cpu={cpu} is not a CPU this process may run on ({})",
                    vernier_sys::cpulist::format_cpu_list(&limits.cpus)
                )));
            }
        }
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let s = Settings::read(&self.info(), options)?;
        let allowed = vernier_sys::affinity::current_affinity()?;
        let cpu = match s.cpu {
            CpuChoice::Last => *allowed
                .iter()
                .max()
                .ok_or_else(|| BenchError::NotPermitted("this process may run on no CPU".into()))?,
            CpuChoice::Number(c) if allowed.contains(&c) => c,
            CpuChoice::Number(c) => {
                return Err(BenchError::NotPermitted(format!(
                    "CPU {c} is not one this process may run on ({})",
                    vernier_sys::cpulist::format_cpu_list(&allowed)
                )))
            }
        };
        vernier_sys::affinity::pin_current_thread(&[cpu])?;
        let outcome = measure_pinned(&s, cpu);
        // The run's process ends right after; a failure to widen again changes nothing.
        let _ = vernier_sys::affinity::pin_current_thread(&allowed);
        outcome
    }
}

fn text_spec(name: &'static str, default: &str, help: &'static str) -> OptionSpec {
    OptionSpec::new(
        name,
        OptionKind::Text,
        OptionDefault::Value(OptionValue::Text(default.into())),
    )
    .help(help)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CpuChoice {
    Last,
    Number(usize),
}

/// A run's options, read and checked.
#[derive(Debug, Clone)]
struct Settings {
    call: usize,
    calls: u64,
    warmup_calls: u64,
    size: usize,
    files: usize,
    dir: PathBuf,
    /// Network address (host order) and prefix length of the route destinations.
    destinations: (u32, u32),
    seed: u64,
    cpu: CpuChoice,
    monotonic_only: bool,
}

impl Settings {
    fn read(info: &BenchmarkInfo, options: &Options) -> Result<Self, BenchError> {
        let cpu = match options.text("cpu") {
            "last" => CpuChoice::Last,
            text => CpuChoice::Number(text.parse().map_err(|_| {
                BenchError::Options(format!(
                    "option 'cpu' = '{text}' is neither a CPU number nor 'last'"
                ))
            })?),
        };
        let dir = options.text("dir");
        if dir.is_empty() || dir.contains('\0') {
            return Err(BenchError::Options(format!(
                "option 'dir' = '{dir}' is not a directory path"
            )));
        }
        let destinations = parse_network(options.text("destinations")).ok_or_else(|| {
            BenchError::Options(format!(
                "option 'destinations' = '{}' is not an IPv4 network such as {DEFAULT_DESTINATIONS} \
                 (prefix length 8 to 32)",
                options.text("destinations")
            ))
        })?;
        Ok(Settings {
            call: choice(info, options, "call")?,
            calls: uint(info, options, "calls")?,
            warmup_calls: uint(info, options, "warmup_calls")?,
            size: uint(info, options, "size")? as usize,
            files: uint(info, options, "files")? as usize,
            dir: PathBuf::from(dir),
            destinations,
            seed: uint(info, options, "seed")?,
            cpu,
            monotonic_only: choice(info, options, "timer")? == 1,
        })
    }

    fn call_name(&self) -> &'static str {
        CALLS[self.call]
    }
}

/// `a.b.c.d/len` with len in 8..=32: the network address (host order, host bits cleared)
/// and the prefix length.
pub fn parse_network(text: &str) -> Option<(u32, u32)> {
    let (addr, len) = text.split_once('/')?;
    let addr: std::net::Ipv4Addr = addr.parse().ok()?;
    let len: u32 = len.parse().ok()?;
    if !(8..=32).contains(&len) {
        return None;
    }
    let mask = if len == 32 {
        u32::MAX
    } else {
        !(u32::MAX >> len)
    };
    Some((u32::from(addr) & mask, len))
}

/// The order in which the inputs are visited: `n` indices drawn uniformly from `0..set` with
/// the seeded generator (the same `seed` gives the same order in every version,
/// [`SeededRng`]). Random, not a linear scan: the kbench write-up's "too regular dataset"
/// trap, where each call finds what the previous one left in the caches.
pub fn input_order(seed: u64, set: usize, n: usize) -> Vec<u32> {
    let mut rng = SeededRng::new(seed);
    (0..n).map(|_| rng.index(set.max(1)) as u32).collect()
}

/// The timer of a run: the cycle counter with its cycles per nanosecond, or CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy)]
enum Timer {
    Cycles { per_ns: f64 },
    Monotonic,
}

impl Timer {
    fn choose(monotonic_only: bool) -> Timer {
        if monotonic_only {
            return Timer::Monotonic;
        }
        let invariant = std::fs::read_to_string("/proc/cpuinfo")
            .map(|text| vernier_sys::clock::tsc_is_invariant(&text))
            .unwrap_or(false);
        match invariant
            .then(|| vernier_sys::clock::measure_cycles_per_ns(TSC_WINDOW_NS))
            .flatten()
        {
            Some(per_ns) => Timer::Cycles { per_ns },
            None => Timer::Monotonic,
        }
    }

    /// A reading in the timer's own units.
    #[inline(always)]
    fn now(self) -> u64 {
        match self {
            Timer::Cycles { .. } => vernier_sys::clock::cycles().unwrap_or(0),
            Timer::Monotonic => vernier_sys::clock::monotonic_ns(),
        }
    }

    /// Nanoseconds between two readings, rounded to the nearest.
    #[inline(always)]
    fn ns(self, start: u64, end: u64) -> u64 {
        let units = end.saturating_sub(start);
        match self {
            Timer::Cycles { per_ns } => (units as f64 / per_ns).round() as u64,
            Timer::Monotonic => units,
        }
    }
}

/// The median of back-to-back timer reads, nanoseconds: what every timed call includes.
fn timer_overhead_ns(timer: Timer) -> u64 {
    let mut samples = vec![0u64; OVERHEAD_READS];
    for s in samples.iter_mut() {
        let a = timer.now();
        let b = timer.now();
        *s = timer.ns(a, b);
    }
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// Everything a call needs, prepared before the loop; dropped (files removed, descriptors
/// closed) after it.
struct Inputs {
    /// The order of the inputs, `warmup_calls + calls` indices.
    order: Vec<u32>,
    paths: Vec<CString>,
    /// Route destinations, network byte order.
    addresses: Vec<u32>,
    fd: Option<std::fs::File>,
    netlink: Option<Netlink>,
    buffer: Vec<u8>,
    files: Option<FileSet>,
    futex_word: u32,
}

impl Inputs {
    fn prepare(s: &Settings) -> Result<Inputs, BenchError> {
        let total = (s.calls + s.warmup_calls) as usize;
        let mut inputs = Inputs {
            order: Vec::new(),
            paths: Vec::new(),
            addresses: Vec::new(),
            fd: None,
            netlink: None,
            buffer: vec![0u8; s.size],
            files: None,
            futex_word: 0,
        };
        match s.call {
            READ => inputs.fd = Some(open_device("/dev/zero", false)?),
            WRITE => inputs.fd = Some(open_device("/dev/null", true)?),
            STAT | OPEN => {
                let set = FileSet::create(&s.dir, s.files)?;
                inputs.paths = set.paths()?;
                inputs.files = Some(set);
                inputs.order = input_order(s.seed, s.files, total);
            }
            ROUTE_GET => {
                let (network, len) = s.destinations;
                // Every address of the network, or 65536 spread evenly over a larger one.
                let hosts = 1u64 << (32 - len);
                let step = (hosts >> 16).max(1);
                inputs.addresses = (0..hosts.min(1 << 16))
                    .map(|i| (network | (i * step) as u32).to_be())
                    .collect();
                inputs.order = input_order(s.seed, inputs.addresses.len(), total);
                inputs.netlink = Some(Netlink::open()?);
            }
            _ => {}
        }
        Ok(inputs)
    }
}

fn open_device(path: &str, write: bool) -> Result<std::fs::File, BenchError> {
    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .open(path)
        .map_err(|source| BenchError::Syscall {
            call: "open",
            source,
        })
}

/// A directory of empty files for `stat` and `open`, removed with its files when dropped.
pub struct FileSet {
    dir: PathBuf,
    count: usize,
}

impl FileSet {
    /// Creates `count` files `f0`, `f1`, ... in a new directory under `parent`.
    pub fn create(parent: &Path, count: usize) -> Result<FileSet, BenchError> {
        let io = |call: &'static str| move |source| BenchError::Syscall { call, source };
        let dir = parent.join(format!(
            "vernier-syscall-{}-{}",
            std::process::id(),
            vernier_sys::clock::monotonic_ns()
        ));
        std::fs::create_dir(&dir).map_err(io("mkdir"))?;
        let set = FileSet { dir, count };
        for i in 0..count {
            std::fs::File::create(set.path(i)).map_err(io("creat"))?;
        }
        Ok(set)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("f{i}"))
    }

    fn paths(&self) -> Result<Vec<CString>, BenchError> {
        (0..self.count)
            .map(|i| {
                CString::new(self.path(i).into_os_string().into_encoded_bytes())
                    .map_err(|_| BenchError::Options("option 'dir' holds a NUL character".into()))
            })
            .collect()
    }
}

impl Drop for FileSet {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A NETLINK_ROUTE socket for route lookups (rtnetlink(7)).
struct Netlink {
    fd: std::os::fd::OwnedFd,
    request: [u8; ROUTE_REQUEST_BYTES],
    reply: Vec<u8>,
    seq: u32,
}

/// nlmsghdr (16 bytes), rtmsg (12) and one RTA_DST attribute (4 + 4).
const ROUTE_REQUEST_BYTES: usize = 36;

impl Netlink {
    fn open() -> Result<Netlink, BenchError> {
        use std::os::fd::FromRawFd;
        // SAFETY: plain socket(2) call.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            )
        };
        if fd < 0 {
            return Err(BenchError::last_os("socket(AF_NETLINK)"));
        }
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let mut request = [0u8; ROUTE_REQUEST_BYTES];
        let put16 =
            |b: &mut [u8], at: usize, v: u16| b[at..at + 2].copy_from_slice(&v.to_ne_bytes());
        request[0..4].copy_from_slice(&(ROUTE_REQUEST_BYTES as u32).to_ne_bytes());
        put16(&mut request, 4, libc::RTM_GETROUTE);
        put16(&mut request, 6, libc::NLM_F_REQUEST as u16);
        // rtmsg at 16: rtm_family, rtm_dst_len, then zeros (any table, protocol, scope, type).
        request[16] = libc::AF_INET as u8;
        request[17] = 32;
        // rtattr at 28: rta_len 8, rta_type RTA_DST; the address at 32, per call.
        put16(&mut request, 28, 8);
        put16(&mut request, 30, libc::RTA_DST);
        Ok(Netlink {
            fd,
            request,
            reply: vec![0u8; 8192],
            seq: 0,
        })
    }

    /// Looks up the route to `address` (network byte order): sends the request and receives
    /// the reply. 0, or the errno of a failed call or of an error reply.
    #[inline(always)]
    fn route_get(&mut self, address: u32) -> i32 {
        use std::os::fd::AsRawFd;
        self.seq = self.seq.wrapping_add(1);
        self.request[8..12].copy_from_slice(&self.seq.to_ne_bytes());
        self.request[32..36].copy_from_slice(&address.to_ne_bytes());
        let fd = self.fd.as_raw_fd();
        // SAFETY: the buffers are valid for their lengths; the kernel is the peer (no address).
        let sent = unsafe { libc::send(fd, self.request.as_ptr().cast(), self.request.len(), 0) };
        if sent < 0 {
            return errno();
        }
        // SAFETY: as above.
        let got = unsafe { libc::recv(fd, self.reply.as_mut_ptr().cast(), self.reply.len(), 0) };
        if got < 0 {
            return errno();
        }
        // An NLMSG_ERROR reply carries a negative errno after its header.
        let kind = u16::from_ne_bytes([self.reply[4], self.reply[5]]);
        if kind == libc::NLMSG_ERROR as u16 && got >= 20 {
            let e = i32::from_ne_bytes([
                self.reply[16],
                self.reply[17],
                self.reply[18],
                self.reply[19],
            ]);
            return -e;
        }
        0
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(-1)
}

/// One call of the kernel entry `call` with input `i`: 0, or the errno of a failure.
/// Every result reaches `black_box` so that the compiler keeps the call (the kbench write-up's
/// "dead code" trap: a call into libc is opaque to the compiler already; `black_box` keeps
/// that true should it ever be inlined).
#[inline(always)]
fn one_call<const CALL: usize>(inputs: &mut Inputs, i: usize) -> i32 {
    use std::hint::black_box;
    let rc: libc::c_long = match CALL {
        // SAFETY: getpid has no arguments and always succeeds.
        GETPID => unsafe { libc::syscall(libc::SYS_getpid) },
        CLOCK_GETTIME => {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a plain call on valid, preallocated arguments.
            let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
            black_box(ts.tv_nsec);
            rc as libc::c_long
        }
        CLOCK_GETTIME_RAW => {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a plain call on valid, preallocated arguments.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_clock_gettime,
                    libc::CLOCK_MONOTONIC,
                    &mut ts as *mut libc::timespec,
                )
            };
            black_box(ts.tv_nsec);
            rc
        }
        READ | WRITE => {
            use std::os::fd::AsRawFd;
            let fd = inputs.fd.as_ref().map_or(-1, |f| f.as_raw_fd());
            let len = inputs.buffer.len();
            let n = if CALL == READ {
                // SAFETY: a plain call on valid, preallocated arguments.
                unsafe { libc::read(fd, inputs.buffer.as_mut_ptr().cast(), len) }
            } else {
                // SAFETY: a plain call on valid, preallocated arguments.
                unsafe { libc::write(fd, inputs.buffer.as_ptr().cast(), len) }
            };
            if n == len as isize {
                0
            } else {
                -1
            }
        }
        // SAFETY: a plain call on valid, preallocated arguments.
        FUTEX_WAKE => unsafe {
            libc::syscall(
                libc::SYS_futex,
                &mut inputs.futex_word as *mut u32,
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                0,
            )
        },
        // SAFETY: a plain call on valid, preallocated arguments.
        SCHED_YIELD => unsafe { libc::sched_yield() as libc::c_long },
        STAT => {
            let path = &inputs.paths[inputs.order[i] as usize];
            let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
            // SAFETY: a plain call on valid, preallocated arguments.
            let rc = unsafe { libc::stat(path.as_ptr(), st.as_mut_ptr()) };
            black_box(&st);
            rc as libc::c_long
        }
        OPEN => {
            let path = &inputs.paths[inputs.order[i] as usize];
            // SAFETY: a plain call on valid, preallocated arguments.
            let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            if fd < 0 {
                -1
            } else {
                // SAFETY: a plain call on valid, preallocated arguments.
                unsafe { libc::close(fd) as libc::c_long }
            }
        }
        ROUTE_GET => {
            let address = inputs.addresses[inputs.order[i] as usize];
            match inputs.netlink.as_mut().map(|n| n.route_get(address)) {
                Some(0) => 0,
                Some(e) => return e,
                None => -1,
            }
        }
        _ => -1,
    };
    if black_box(rc) < 0 {
        errno()
    } else {
        0
    }
}

/// Prepares the inputs, warms up, measures the timer and times the calls, on the CPU the
/// thread is pinned to.
fn measure_pinned(s: &Settings, cpu: usize) -> Result<Measurement, BenchError> {
    let mut inputs = Inputs::prepare(s)?;
    let timer = Timer::choose(s.monotonic_only);
    let mut recording = Recording::new();
    let warmup = s.warmup_calls as usize;
    let calls = s.calls as usize;
    // Each call's loop is its own instance, the call a constant in it.
    let (overhead, failure) = match s.call {
        GETPID => warm_and_time::<GETPID>(&mut inputs, &mut recording, timer, warmup, calls),
        CLOCK_GETTIME => {
            warm_and_time::<CLOCK_GETTIME>(&mut inputs, &mut recording, timer, warmup, calls)
        }
        CLOCK_GETTIME_RAW => {
            warm_and_time::<CLOCK_GETTIME_RAW>(&mut inputs, &mut recording, timer, warmup, calls)
        }
        READ => warm_and_time::<READ>(&mut inputs, &mut recording, timer, warmup, calls),
        WRITE => warm_and_time::<WRITE>(&mut inputs, &mut recording, timer, warmup, calls),
        FUTEX_WAKE => {
            warm_and_time::<FUTEX_WAKE>(&mut inputs, &mut recording, timer, warmup, calls)
        }
        SCHED_YIELD => {
            warm_and_time::<SCHED_YIELD>(&mut inputs, &mut recording, timer, warmup, calls)
        }
        STAT => warm_and_time::<STAT>(&mut inputs, &mut recording, timer, warmup, calls),
        OPEN => warm_and_time::<OPEN>(&mut inputs, &mut recording, timer, warmup, calls),
        _ => warm_and_time::<ROUTE_GET>(&mut inputs, &mut recording, timer, warmup, calls),
    };
    drop(inputs);
    if failure != 0 {
        return Err(BenchError::Syscall {
            call: s.call_name(),
            source: std::io::Error::from_raw_os_error(failure),
        });
    }
    let histograms = vec![recording.finish(CALL, 0, Some(cpu as u32))];
    let mut values: BTreeMap<String, f64> = call_values(&histograms).map_err(BenchError::Worker)?;
    values.insert(TIMER_OVERHEAD.into(), overhead as f64);
    values.insert(
        CYCLE_COUNTER.into(),
        f64::from(u8::from(matches!(timer, Timer::Cycles { .. }))),
    );
    Ok(Measurement { values, histograms })
}

/// The warm-up calls (untimed), the timer's overhead, then the timed loop: a timer reading
/// before and after each call, the difference recorded. Returns the overhead and the OR of
/// the calls' errnos (any failure fails the run, as kbench's `err |=`).
fn warm_and_time<const CALL: usize>(
    inputs: &mut Inputs,
    recording: &mut Recording,
    timer: Timer,
    warmup: usize,
    calls: usize,
) -> (u64, i32) {
    let mut failure = 0;
    for i in 0..warmup {
        failure |= one_call::<CALL>(inputs, i);
    }
    let overhead = timer_overhead_ns(timer);
    for i in warmup..warmup + calls {
        let start = timer.now();
        failure |= one_call::<CALL>(inputs, i);
        let end = timer.now();
        recording.record(timer.ns(start, end));
    }
    (overhead, failure)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;

    #[test]
    fn the_input_order_is_seeded_varied_and_reproducible() {
        let a = input_order(7, 4096, 1000);
        assert_eq!(a, input_order(7, 4096, 1000));
        assert_ne!(a, input_order(8, 4096, 1000));
        let distinct: std::collections::BTreeSet<_> = a.iter().collect();
        assert!(distinct.len() > 800, "{}", distinct.len());
        assert!(a.windows(2).filter(|w| w[0] == w[1]).count() < 5);
        assert!(a.iter().all(|&i| i < 4096));
    }

    #[test]
    fn networks_parse_with_their_host_bits_cleared() {
        assert_eq!(parse_network("198.18.0.0/16"), Some((0xc612_0000, 16)));
        assert_eq!(parse_network("10.1.2.3/24"), Some((0x0a01_0200, 24)));
        assert_eq!(parse_network("10.1.2.3/32"), Some((0x0a01_0203, 32)));
        assert_eq!(parse_network("10.0.0.0/4"), None);
        assert_eq!(parse_network("10.0.0/16"), None);
        assert_eq!(parse_network("10.0.0.0"), None);
    }

    #[test]
    fn the_file_set_is_removed_when_dropped() {
        let parent = tempfile::tempdir().unwrap();
        let set = FileSet::create(parent.path(), 10).unwrap();
        let dir = set.dir().to_path_buf();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 10);
        drop(set);
        assert!(!dir.exists());
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn options_are_checked() {
        let info = Syscall.info();
        for bad in [
            ("cpu", "first"),
            ("destinations", "198.18.0.0"),
            ("destinations", "1.2.3.4/40"),
        ] {
            let options = resolve_options(&info, &[bad]).unwrap();
            assert!(Syscall.check_options(&options).is_err(), "{bad:?}");
        }
        assert!(resolve_options(&info, &[("call", "nope")]).is_err());
        assert!(resolve_options(&info, &[("calls", "0")]).is_err());
    }

    #[test]
    fn every_call_runs_and_records_each_call() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().to_str().unwrap();
        for call in CALLS {
            let options = resolve_options(
                &Syscall.info(),
                &[
                    ("call", call),
                    ("calls", "500"),
                    ("warmup_calls", "10"),
                    ("files", "64"),
                    ("dir", dir),
                ],
            )
            .unwrap();
            let m = Syscall.run(&options, &RunContext::default()).unwrap();
            assert_eq!(m.histograms.len(), 1, "{call}");
            assert_eq!(m.histograms[0].count, 500, "{call}");
            assert_eq!(m.values["count"], 500.0, "{call}");
            assert!(m.values["p50"] > 0.0 && m.values["p50"] < 1e7, "{call}");
            assert!(m.values.contains_key(TIMER_OVERHEAD), "{call}");
            assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
        }
    }

    #[test]
    fn the_monotonic_timer_is_used_when_asked() {
        let options =
            resolve_options(&Syscall.info(), &[("calls", "100"), ("timer", "monotonic")]).unwrap();
        let m = Syscall.run(&options, &RunContext::default()).unwrap();
        assert_eq!(m.values[CYCLE_COUNTER], 0.0);
    }
}
