//! `hackbench`: the scheduler and Unix-socket/pipe stress of rt-tests hackbench
//! (src/hackbench/hackbench.c, rt-tests 2.4), with the same semantics so that its runtime is
//! comparable with `hackbench -g G -f F -l L -s S [-p] [-T]`.
//!
//! Each of `groups` groups has `fds` receivers and `fds` senders. Every receiver owns one
//! socketpair(AF_UNIX, SOCK_STREAM) or pipe; every sender writes `loops` messages of
//! `datasize` bytes to each receiver of its group (outer loop over loops, inner loop over
//! receivers, partial writes completed), and every receiver reads `fds * loops` messages.
//! All workers report ready on one pipe and poll a wake pipe; the controller takes the start
//! time when all are ready, writes the wake byte, reaps every worker and takes the stop time.
//! As in hackbench, process-mode receivers are forked before their group's senders, each
//! receiver closes its sending end, and the controller closes the ends it no longer needs.
//!
//! Where it deviates from hackbench.c, and why:
//! - Clock: CLOCK_MONOTONIC in nanoseconds, reported in seconds; hackbench takes
//!   gettimeofday(2) (CLOCK_REALTIME, which NTP may step) and prints milliseconds.
//! - Default loops: 1000 instead of hackbench's 100, so that starting and reaping the 400
//!   tasks is a small part of a default run (on a 2-vCPU KVM guest under background load the
//!   median run took 8.1 s with 1000 loops, 1.1 s with 100); pass `loops=100` for hackbench's
//!   default workload. The other defaults are hackbench's.
//! - Start line: the ready and wake channels are always pipes; hackbench makes them with its
//!   fdpair(), so they are sockets unless `-p` is given. Senders fill their message before the
//!   start instead of after it (hackbench's memset of `datasize` bytes falls in the timed span).
//! - Receive buffer: a heap buffer made before the workers start (each forked receiver has its
//!   copy-on-write copy, each receiver thread its own), written once per page by the receiver
//!   before it reports ready, so that its page faults (copy-on-write after
//!   fork(2), or the first touch of fresh memory in thread mode) happen before the start line
//!   and are not timed. hackbench reads into a stack array whose page the receiver has already
//!   touched on its way to the start, which is the same for messages up to a page.
//! - Thread stacks: 64 KiB instead of PTHREAD_STACK_MIN (16 KiB with glibc on x86-64).
//! - Not offered: `-i` (TCP over loopback) and `-F` (SCHED_FIFO for the main thread; use
//!   `--setup rt` for the run instead). A worker that fails makes the run fail with its error
//!   instead of printing it and exiting.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use vernier_model::{BenchmarkInfo, MetricInfo, Options};
use vernier_sys::clock::monotonic_ns;
use vernier_sys::MachineLimits;

use crate::opts::{choice, choice_spec, uint, uint_spec};
use crate::workers::{
    pipe, read_exact, socket_pair, status, write_all, Gate, ProcessWorkers, StartLine,
};
use crate::{BenchError, Benchmark, Measurement, RunContext};

/// Stack of a worker thread: the message buffers live on the heap, so a small stack suffices
/// (hackbench uses PTHREAD_STACK_MIN).
const THREAD_STACK: usize = 64 * 1024;

/// Memory the kernel gives every task whatever it does: its kernel stack (THREAD_SIZE, 16 KiB
/// on x86-64, Documentation/arch/x86/kernel-stacks.rst).
const TASK_KERNEL_BYTES: u64 = 16 * 1024;

/// A page: a forked receiver that writes into its copy of the message buffer copies whole pages.
const PAGE: u64 = 4096;

const IPC: &[&str] = &["socket", "pipe"];
const TASKS: &[&str] = &["process", "thread"];

pub struct Hackbench;

#[derive(Debug, Clone, Copy)]
struct Params {
    groups: usize,
    fds: usize,
    loops: u64,
    datasize: usize,
    pipes: bool,
}

impl Params {
    /// Messages of one run: every sender of every group sends `loops` to each of its group's
    /// `fds` receivers.
    fn messages(&self) -> u64 {
        let per_group = (self.fds as u64).saturating_mul(self.fds as u64);
        (self.groups as u64)
            .saturating_mul(per_group)
            .saturating_mul(self.loops)
    }

    fn channel(&self) -> Result<(OwnedFd, OwnedFd), BenchError> {
        if self.pipes {
            pipe()
        } else {
            socket_pair()
        }
    }

    fn workers(&self) -> usize {
        self.groups * self.fds * 2
    }
}

impl Benchmark for Hackbench {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            "hackbench",
            "1",
            "groups of senders spraying messages to receivers over Unix sockets \
                          or pipes (rt-tests hackbench)",
            MetricInfo::lower("runtime", "s"),
        )
        .with_options(vec![
            uint_spec("groups", 10, 1, 10_000, "", "number of groups"),
            uint_spec("fds", 20, 1, 1000, "", "senders and receivers per group"),
            uint_spec(
                "loops",
                1000,
                1,
                u64::MAX,
                "",
                "messages each sender sends to each receiver",
            ),
            uint_spec(
                "datasize",
                100,
                1,
                1_000_000,
                "bytes",
                "size of one message",
            ),
            choice_spec("ipc", IPC, "Unix stream sockets or pipes"),
            choice_spec("tasks", TASKS, "workers are processes or threads"),
        ])
    }

    /// hackbench starts `2 * groups * fds` tasks at once. In process mode the controller holds
    /// one group's channels at a time; in thread mode every channel is open in the one process.
    /// Every receiver has its own message buffer (in process mode a private copy of the pages
    /// it writes).
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let info = self.info();
        let groups = uint(&info, options, "groups")?;
        let fds = uint(&info, options, "fds")?;
        let datasize = uint(&info, options, "datasize")?;
        let threads = choice(&info, options, "tasks")? == 1;
        let receivers = groups.saturating_mul(fds);
        let workers = receivers.saturating_mul(2);
        limits.check_tasks(workers.saturating_add(1))?;
        let files = if threads {
            workers
        } else {
            fds.saturating_add(2)
        };
        limits.check_files(files.saturating_add(crate::RESERVED_FILES))?;
        let buffer = if threads {
            datasize
        } else {
            datasize.div_ceil(PAGE).saturating_mul(PAGE)
        };
        let bytes = receivers
            .saturating_add(2)
            .saturating_mul(buffer)
            .saturating_add(workers.saturating_mul(TASK_KERNEL_BYTES));
        limits.check_memory(bytes)?;
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let info = self.info();
        let size = |name| {
            uint(&info, options, name).and_then(|v| {
                usize::try_from(v).map_err(|_| BenchError::Options(format!("{name} is too large")))
            })
        };
        let params = Params {
            groups: size("groups")?,
            fds: size("fds")?,
            loops: uint(&info, options, "loops")?,
            datasize: size("datasize")?,
            pipes: choice(&info, options, "ipc")? == 1,
        };
        let seconds = if choice(&info, options, "tasks")? == 0 {
            run_processes(&params)?
        } else {
            run_threads(&params)?
        };
        let mut m = Measurement::single("runtime", seconds);
        m.values.insert(
            vernier_model::values::OPERATIONS.into(),
            params.messages() as f64,
        );
        Ok(m)
    }
}

/// Writes every page of `buf`, so that its page faults happen now. The stride is the smallest
/// page size Linux uses; with larger pages every page is still written. Async-signal-safe.
fn touch(buf: &mut [u8]) {
    for i in (0..buf.len()).step_by(PAGE as usize) {
        buf[i] = 0;
    }
}

/// hackbench's receiver(): fault its buffer in, wait for the start, then read `packets` whole
/// messages.
#[inline]
fn receive(gate: Gate, fd: RawFd, buf: &mut [u8], packets: u64) -> i32 {
    // Before the start line: a forked receiver's first write to its buffer is a copy-on-write
    // fault (fork(2)), a thread's the first touch of fresh memory; neither is to be timed.
    touch(buf);
    if !gate.ready_and_wait() {
        return status::CALLED_OFF;
    }
    for _ in 0..packets {
        if !read_exact(fd, buf) {
            return status::IO;
        }
    }
    status::OK
}

/// hackbench's sender(): wait for the start, then write `loops` messages to every receiver.
#[inline]
fn send(gate: Gate, out: &[RawFd], data: &[u8], loops: u64) -> i32 {
    if !gate.ready_and_wait() {
        return status::CALLED_OFF;
    }
    for _ in 0..loops {
        for &fd in out {
            if !write_all(fd, data) {
                return status::IO;
            }
        }
    }
    status::OK
}

fn run_processes(p: &Params) -> Result<f64, BenchError> {
    let line = StartLine::new()?;
    let gate = line.gate();
    let mut workers = ProcessWorkers::new();
    // Buffers are made before forking: a forked child must not allocate.
    let data = vec![b'-'; p.datasize];
    let mut buf = vec![0u8; p.datasize];
    let packets = p.fds as u64 * p.loops;
    for _ in 0..p.groups {
        let mut outs: Vec<OwnedFd> = Vec::with_capacity(p.fds);
        for _ in 0..p.fds {
            let (rx, tx) = p.channel()?;
            let (rx_raw, tx_raw) = (rx.as_raw_fd(), tx.as_raw_fd());
            let buf = buf.as_mut_slice();
            // SAFETY: the receiver makes only system calls on memory prepared before the fork.
            unsafe {
                workers.spawn(move || {
                    // The receiver does not send (hackbench closes in_fds[1]).
                    libc::close(tx_raw);
                    receive(gate, rx_raw, buf, packets)
                })?;
            }
            // The controller keeps only the sending end, for the senders to inherit.
            drop(rx);
            outs.push(tx);
        }
        let out_raw: Vec<RawFd> = outs.iter().map(OwnedFd::as_raw_fd).collect();
        for _ in 0..p.fds {
            let (out, data, loops) = (out_raw.as_slice(), data.as_slice(), p.loops);
            // SAFETY: the sender makes only system calls on memory prepared before the fork.
            unsafe { workers.spawn(move || send(gate, out, data, loops))? };
        }
        // "Close the fds we have left".
        drop(outs);
    }
    line.wait_ready(p.workers(), || workers.check_alive())?;
    let start = monotonic_ns();
    line.go()?;
    workers.reap_all()?;
    let stop = monotonic_ns();
    Ok(stop.saturating_sub(start) as f64 / 1e9)
}

fn run_threads(p: &Params) -> Result<f64, BenchError> {
    let mut line = StartLine::new()?;
    let gate = line.gate();
    // All channels and buffers exist before the first thread does. Threads share the
    // descriptors, so nothing is closed until every thread has been joined.
    let mut channels: Vec<(OwnedFd, OwnedFd)> = Vec::with_capacity(p.groups * p.fds);
    for _ in 0..p.groups * p.fds {
        channels.push(p.channel()?);
    }
    let outs: Vec<Vec<RawFd>> = channels
        .chunks(p.fds)
        .map(|group| group.iter().map(|(_, tx)| tx.as_raw_fd()).collect())
        .collect();
    let data = vec![b'-'; p.datasize];
    let mut bufs: Vec<Vec<u8>> = (0..p.groups * p.fds)
        .map(|_| vec![0u8; p.datasize])
        .collect();
    let packets = p.fds as u64 * p.loops;

    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(p.workers());
        let mut spawned: Result<(), BenchError> = Ok(());
        let mut bufs = bufs.iter_mut();
        'groups: for (g, out) in outs.iter().enumerate() {
            for (i, buf) in bufs.by_ref().take(p.fds).enumerate() {
                let rx = channels[g * p.fds + i].0.as_raw_fd();
                let builder = std::thread::Builder::new().stack_size(THREAD_STACK);
                match builder.spawn_scoped(scope, move || receive(gate, rx, buf, packets)) {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        spawned = Err(BenchError::Syscall {
                            call: "pthread_create",
                            source: e,
                        });
                        break 'groups;
                    }
                }
            }
            for _ in 0..p.fds {
                let (out, data, loops) = (out.as_slice(), data.as_slice(), p.loops);
                let builder = std::thread::Builder::new().stack_size(THREAD_STACK);
                match builder.spawn_scoped(scope, move || send(gate, out, data, loops)) {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        spawned = Err(BenchError::Syscall {
                            call: "pthread_create",
                            source: e,
                        });
                        break 'groups;
                    }
                }
            }
        }
        let ready = spawned.and_then(|()| line.wait_ready(handles.len(), || Ok(())));
        if let Err(e) = ready {
            // Release the threads waiting at the gate so that the scope can join them.
            line.call_off();
            return Err(e);
        }
        let start = monotonic_ns();
        if let Err(e) = line.go() {
            line.call_off();
            return Err(e);
        }
        let mut failure = None;
        for h in handles {
            let code = h.join().unwrap_or(status::PANIC);
            if code != status::OK && failure.is_none() {
                failure = Some(code);
            }
        }
        let stop = monotonic_ns();
        match failure {
            Some(code) => Err(BenchError::Worker(format!(
                "a worker thread failed: {}",
                status::explain(code)
            ))),
            None => Ok(stop.saturating_sub(start) as f64 / 1e9),
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;
    use vernier_model::{OptionKind, OptionValue};

    fn run_with(overrides: &[(&str, &str)]) -> Result<f64, BenchError> {
        let b = Hackbench;
        let options = resolve_options(&b.info(), overrides).unwrap();
        let m = b.run(&options, &RunContext::default())?;
        Ok(m.values["runtime"])
    }

    #[test]
    fn a_run_counts_its_messages() {
        let b = Hackbench;
        let options = resolve_options(
            &b.info(),
            &[
                ("groups", "2"),
                ("fds", "3"),
                ("loops", "5"),
                ("datasize", "8"),
            ],
        )
        .unwrap();
        let m = b.run(&options, &RunContext::default()).unwrap();
        // Each of the 2 x 3 receivers reads fds x loops = 15 messages.
        assert_eq!(m.values[vernier_model::values::OPERATIONS], 90.0);
    }

    /// The defaults of rt-tests hackbench.c (its static variables `num_groups`, `num_fds`,
    /// `loops`, `datasize`, and sockets in process mode unless `-p` or `-T` is given).
    const RT_TESTS_DEFAULTS: [(&str, &str); 6] = [
        ("groups", "10"),
        ("fds", "20"),
        ("loops", "100"),
        ("datasize", "100"),
        ("ipc", "socket"),
        ("tasks", "process"),
    ];

    /// The defaults that deviate from hackbench's on purpose, as the module docs say.
    const DEVIATIONS: [(&str, &str); 1] = [("loops", "1000")];

    #[test]
    fn defaults_match_rt_tests_usage() {
        let info = Hackbench.info();
        assert_eq!(info.name(), "hackbench");
        assert_eq!(info.version(), "1");
        assert!(!info.metric().higher_is_better);
        assert_eq!(info.metric().name, "runtime");
        assert_eq!(info.metric().unit, "s");
        // Every hackbench option has a counterpart, and nothing else is offered.
        let names: Vec<&str> = info.options().iter().map(|o| o.name.as_ref()).collect();
        let rt_names: Vec<&str> = RT_TESTS_DEFAULTS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, rt_names);
        for (name, rt_default) in RT_TESTS_DEFAULTS {
            let ours = info.option(name).unwrap().default_label();
            match DEVIATIONS.iter().find(|(n, _)| *n == name) {
                Some((_, documented)) => {
                    assert_eq!(ours, *documented, "{name}: not the documented deviation");
                    assert_ne!(ours, rt_default, "{name}: no longer a deviation");
                }
                None => assert_eq!(ours, rt_default, "{name} differs from hackbench.c"),
            }
        }
        // hackbench.c accepts any integer > 0 for -g, -f, -l and -s; ours accept 1 as well.
        for name in ["groups", "fds", "loops", "datasize"] {
            match info.option(name).unwrap().kind {
                OptionKind::UInt { min, .. } => assert_eq!(min, 1, "{name}"),
                ref other => panic!("{name} is {other:?}"),
            }
        }
        // Options given as hackbench's command line does resolve to its workload.
        let options = resolve_options(&info, &RT_TESTS_DEFAULTS).unwrap();
        assert_eq!(options.uint("loops"), 100);
        assert_eq!(options.text("ipc"), "socket");
    }

    #[test]
    fn receivers_touch_their_buffer_before_the_start_line() {
        let mut line = StartLine::new().unwrap();
        line.call_off();
        let page = PAGE as usize;
        let mut buf = vec![0xAAu8; 3 * page + 10];
        // The start is called off: the receiver returns at the gate, before reading anything.
        assert_eq!(receive(line.gate(), -1, &mut buf, 1), status::CALLED_OFF);
        for i in 0..4 {
            assert_eq!(buf[i * page], 0, "page {i} was not touched");
        }
        assert_eq!(buf[1], 0xAA, "only one byte per page is written");
    }

    #[test]
    fn all_four_variants_run() {
        for ipc in IPC {
            for tasks in TASKS {
                let t = run_with(&[
                    ("groups", "1"),
                    ("fds", "2"),
                    ("loops", "10"),
                    ("ipc", ipc),
                    ("tasks", tasks),
                ])
                .unwrap();
                assert!(t > 0.0 && t < 60.0, "{ipc}/{tasks}: {t}");
            }
        }
    }

    #[test]
    fn partial_reads_and_writes_of_big_messages() {
        // 200 KB messages exceed the pipe and socket buffers, so every message takes several
        // write and read calls.
        for ipc in IPC {
            for tasks in TASKS {
                let t = run_with(&[
                    ("groups", "2"),
                    ("fds", "2"),
                    ("loops", "3"),
                    ("datasize", "200000"),
                    ("ipc", ipc),
                    ("tasks", tasks),
                ])
                .unwrap();
                assert!(t > 0.0, "{ipc}/{tasks}: {t}");
            }
        }
    }

    #[test]
    fn invalid_options_are_refused_before_anything_runs() {
        let b = Hackbench;
        let mut options = resolve_options(&b.info(), &[]).unwrap();
        options.0.insert("groups".into(), OptionValue::UInt(0));
        let err = b.run(&options, &RunContext::default()).unwrap_err();
        assert!(matches!(err, BenchError::Options(_)), "{err}");
        let mut options = resolve_options(&b.info(), &[]).unwrap();
        options
            .0
            .insert("ipc".into(), OptionValue::Text("tcp".into()));
        let err = b.run(&options, &RunContext::default()).unwrap_err();
        assert!(err.to_string().contains("socket, pipe"), "{err}");
    }
}
