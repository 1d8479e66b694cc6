//! Machinery shared by the benchmarks that run several tasks: owned file descriptors, the
//! ready/go start line (the scheme of rt-tests hackbench: every worker writes one byte to a
//! "ready" pipe and then poll(2)s a "wake" pipe until the controller writes to it), worker
//! processes in their own process group, and result slots in shared memory.
//!
//! Worker processes are forked from the run process. Code that runs in a forked child must be
//! async-signal-safe (signal-safety(7)) because the run process may have other threads (the
//! test harness does): only system calls, no allocation, locks, printing or panics.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

use vernier_sys::process::Group;

use crate::BenchError;

pub(crate) use vernier_sys::affinity::current_cpu;
pub(crate) use vernier_sys::fd::{read_exact, write_all};

/// The errno of the last failed libc call (reads thread-local errno; allocation-free).
#[inline]
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A pipe(2) as (read end, write end), closed on drop ([`vernier_sys::fd::pipe`]).
pub(crate) fn pipe() -> Result<(OwnedFd, OwnedFd), BenchError> {
    Ok(vernier_sys::fd::pipe()?)
}

/// A connected pair of Unix stream sockets, as hackbench's fdpair() makes them
/// (socketpair(AF_UNIX, SOCK_STREAM)). Returned as (receiving end, sending end).
pub(crate) fn socket_pair() -> Result<(OwnedFd, OwnedFd), BenchError> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(BenchError::last_os("socketpair"));
    }
    // SAFETY: socketpair just made both descriptors, and nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The worker's side of the start line. Copyable into threads and forked children.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gate {
    ready_w: RawFd,
    go_r: RawFd,
}

impl Gate {
    /// Tells the controller this worker is ready, then blocks until the start signal.
    /// Returns false when the start was called off (the go pipe hung up without data) or a
    /// call failed. Async-signal-safe.
    pub(crate) fn ready_and_wait(&self) -> bool {
        if !write_all(self.ready_w, b"R") {
            return false;
        }
        let mut pfd = libc::pollfd {
            fd: self.go_r,
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut pfd, 1, -1) };
            if n == 1 {
                // The start byte is never consumed, so every worker sees POLLIN.
                return pfd.revents & libc::POLLIN != 0;
            }
            if n < 0 && errno() == libc::EINTR {
                continue;
            }
            return false;
        }
    }
}

/// The controller's side of the start line.
#[derive(Debug)]
pub(crate) struct StartLine {
    ready_r: OwnedFd,
    ready_w: OwnedFd,
    go_r: OwnedFd,
    go_w: Option<OwnedFd>,
}

impl StartLine {
    pub(crate) fn new() -> Result<Self, BenchError> {
        let (ready_r, ready_w) = pipe()?;
        let (go_r, go_w) = pipe()?;
        Ok(StartLine {
            ready_r,
            ready_w,
            go_r,
            go_w: Some(go_w),
        })
    }

    pub(crate) fn gate(&self) -> Gate {
        Gate {
            ready_w: self.ready_w.as_raw_fd(),
            go_r: self.go_r.as_raw_fd(),
        }
    }

    /// Waits until `n` workers have signalled ready. Every half second without progress it
    /// calls `check`, which reports workers that died before getting ready.
    pub(crate) fn wait_ready(
        &self,
        n: usize,
        mut check: impl FnMut() -> Result<(), BenchError>,
    ) -> Result<(), BenchError> {
        let mut seen = 0usize;
        let mut buf = [0u8; 512];
        while seen < n {
            let mut pfd = libc::pollfd {
                fd: self.ready_r.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let rc = unsafe { libc::poll(&mut pfd, 1, 500) };
            if rc < 0 {
                if errno() == libc::EINTR {
                    continue;
                }
                return Err(BenchError::last_os("poll"));
            }
            if rc == 0 {
                check()?;
                continue;
            }
            let want = (n - seen).min(buf.len());
            // SAFETY: `buf` holds at least `want` bytes.
            let got =
                unsafe { libc::read(self.ready_r.as_raw_fd(), buf.as_mut_ptr().cast(), want) };
            if got < 0 {
                if errno() == libc::EINTR {
                    continue;
                }
                return Err(BenchError::last_os("read"));
            }
            if got == 0 {
                return Err(BenchError::Worker("ready pipe closed".into()));
            }
            seen += got as usize;
        }
        Ok(())
    }

    /// Starts every worker waiting at the gate.
    pub(crate) fn go(&self) -> Result<(), BenchError> {
        let Some(fd) = &self.go_w else {
            return Err(BenchError::Worker("start already called off".into()));
        };
        if !write_all(fd.as_raw_fd(), b"G") {
            return Err(BenchError::last_os("write"));
        }
        Ok(())
    }

    /// Calls the start off: threads waiting at the gate return false from
    /// [`Gate::ready_and_wait`].
    pub(crate) fn call_off(&mut self) {
        self.go_w = None;
    }
}

/// One worker thread for [`start_threads`]: its name, its stack size (the default when
/// `None`) and its body, which gets the thread's gate and must pass it
/// ([`Gate::ready_and_wait`], returning at once when that says false) before it does its work.
pub(crate) struct WorkerThread<F> {
    pub(crate) name: String,
    pub(crate) stack_bytes: Option<usize>,
    pub(crate) body: F,
}

/// Runs worker threads released together from one start line: spawns every thread, waits
/// until each has passed its set-up and reported ready, starts them all, runs `lead` on the
/// calling thread while they work, and joins them. A thread that ends before it is ready
/// (its set-up failed) or a failed spawn calls the start off, so that the others return
/// without working and nothing hangs. The threads' own errors say more than the start
/// line's, so the first of those is returned, then the start line's or `lead`'s. `what`
/// names the threads in errors ("a memory thread panicked").
pub(crate) fn start_threads<F>(
    what: &str,
    threads: Vec<WorkerThread<F>>,
    lead: impl FnOnce() -> Result<(), BenchError>,
) -> Result<(), BenchError>
where
    F: FnOnce(Gate) -> Result<(), BenchError> + Send,
{
    let mut line = StartLine::new()?;
    let count = threads.len();
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(count);
        let mut outcome = Ok(());
        for thread in threads {
            let gate = line.gate();
            let body = thread.body;
            let mut builder = std::thread::Builder::new().name(thread.name);
            if let Some(bytes) = thread.stack_bytes {
                builder = builder.stack_size(bytes);
            }
            match builder.spawn_scoped(scope, move || body(gate)) {
                Ok(handle) => handles.push(handle),
                Err(source) => {
                    outcome = Err(BenchError::Syscall {
                        call: "pthread_create",
                        source,
                    });
                    break;
                }
            }
        }
        if outcome.is_ok() {
            outcome = line
                .wait_ready(count, || {
                    if handles.iter().any(|h| h.is_finished()) {
                        Err(BenchError::Worker(format!(
                            "a {what} thread ended before the start"
                        )))
                    } else {
                        Ok(())
                    }
                })
                .and_then(|()| line.go());
        }
        if outcome.is_err() {
            line.call_off();
        } else {
            outcome = lead();
        }
        let mut first_thread_error = None;
        for handle in handles {
            let result = handle
                .join()
                .unwrap_or_else(|_| Err(BenchError::Worker(format!("a {what} thread panicked"))));
            if let (Err(e), None) = (result, &first_thread_error) {
                first_thread_error = Some(e);
            }
        }
        match first_thread_error {
            Some(e) => Err(e),
            None => outcome,
        }
    })
}

/// Worker processes forked from the run process, all in one process group
/// ([`vernier_sys::process::Group`]) so that they can be waited for and killed together
/// without touching other children of the process. Dropping it kills and reaps whatever is
/// left, so every error path leaves no process behind.
#[derive(Debug, Default)]
pub(crate) struct ProcessWorkers {
    group: Group,
    #[cfg(test)]
    _turn: crate::test_turns::Forking,
}

impl ProcessWorkers {
    pub(crate) fn new() -> Self {
        ProcessWorkers::default()
    }

    /// Forks a worker that runs `child` and exits with the status it returns; it dies with the
    /// run process ([`status::ORPHAN`] when that died before it was set up).
    ///
    /// # Safety
    /// `child` runs in a forked copy of a possibly multi-threaded process, so it must be
    /// async-signal-safe: system calls on data prepared before the fork only; no allocation,
    /// locking, printing or panicking.
    pub(crate) unsafe fn spawn(&mut self, child: impl FnOnce() -> i32) -> Result<(), BenchError> {
        // SAFETY: the caller's contract.
        unsafe { self.group.fork(child) }?;
        Ok(())
    }

    /// Fails when a worker has already exited (for [`StartLine::wait_ready`]).
    pub(crate) fn check_alive(&mut self) -> Result<(), BenchError> {
        match self.group.try_wait_any()? {
            Some(exit) => Err(BenchError::Worker(format!(
                "a worker exited before the start ({})",
                describe_status(exit.status)
            ))),
            None => Ok(()),
        }
    }

    /// Waits for every worker. The first one that fails gets the others killed, so a broken
    /// worker cannot leave its peers blocked forever.
    pub(crate) fn reap_all(&mut self) -> Result<(), BenchError> {
        let mut failure: Option<String> = None;
        while let Some(exit) = self.group.wait_any()? {
            if !exit.success() && failure.is_none() {
                failure = Some(match exit.code() {
                    Some(code) => format!("{}, exit status {code}", status::explain(code)),
                    None => describe_status(exit.status),
                });
                self.group.kill();
            }
        }
        match failure {
            Some(why) => Err(BenchError::Worker(format!("a worker failed ({why})"))),
            None => Ok(()),
        }
    }
}

fn describe_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit status {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("wait status {status:#x}")
    }
}

/// Fixed-size result slots in anonymous shared memory: worker `i` stores its numbers in slot
/// `i`, the controller reads them after reaping (waitpid orders the accesses). Works the same
/// for threads and forked processes.
pub(crate) struct SharedSlots {
    ptr: *mut AtomicU64,
    len: usize,
    width: usize,
}

// SAFETY: the memory is only accessed through atomics.
unsafe impl Send for SharedSlots {}
// SAFETY: the memory is only accessed through atomics.
unsafe impl Sync for SharedSlots {}

impl SharedSlots {
    /// `slots` slots of `width` numbers each, all zero.
    pub(crate) fn new(slots: usize, width: usize) -> Result<Self, BenchError> {
        let len = slots.max(1) * width.max(1);
        let bytes = len * std::mem::size_of::<u64>();
        // SAFETY: a fresh anonymous shared mapping; checked for MAP_FAILED below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(BenchError::last_os("mmap"));
        }
        Ok(SharedSlots {
            ptr: ptr.cast(),
            len,
            width: width.max(1),
        })
    }

    /// Stores `value` as number `k` of slot `i` (ignored when out of range). Async-signal-safe.
    #[inline]
    pub(crate) fn set(&self, i: usize, k: usize, value: u64) {
        let idx = i * self.width + k;
        if k < self.width && idx < self.len {
            // SAFETY: `idx` is inside the mapping, which lives as long as `self`; zeroed
            // memory is a valid AtomicU64.
            unsafe { (*self.ptr.add(idx)).store(value, Ordering::Release) };
        }
    }

    /// Number `k` of slot `i`, 0 when out of range.
    pub(crate) fn get(&self, i: usize, k: usize) -> u64 {
        let idx = i * self.width + k;
        if k < self.width && idx < self.len {
            // SAFETY: as in `set`.
            unsafe { (*self.ptr.add(idx)).load(Ordering::Acquire) }
        } else {
            0
        }
    }
}

impl Drop for SharedSlots {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len * std::mem::size_of::<u64>());
        }
    }
}

/// Runs `n` worker processes that start together; each calls `work(deadline_ns)` until the
/// CLOCK_MONOTONIC deadline `duration_ns` after its start and returns how many operations it
/// did (or a [`status`] code). Returns the sum over workers of operations per second of that
/// worker's own elapsed time, as stress-ng computes its bogo-op rates, and the operations of
/// all workers.
///
/// `work` runs in a forked child and must be async-signal-safe.
pub(crate) fn rate_of_workers(
    n: usize,
    duration_ns: u64,
    work: fn(u64) -> Result<u64, i32>,
) -> Result<WorkerRate, BenchError> {
    const COUNT: usize = 0;
    const ELAPSED: usize = 1;
    let line = StartLine::new()?;
    let slots = SharedSlots::new(n, 2)?;
    let mut workers = ProcessWorkers::new();
    for i in 0..n {
        let (gate, slots) = (line.gate(), &slots);
        // SAFETY: the worker makes only system calls, clock reads and atomic stores; `work`
        // is async-signal-safe by this function's contract.
        unsafe {
            workers.spawn(move || {
                if !gate.ready_and_wait() {
                    return status::CALLED_OFF;
                }
                let start = vernier_sys::clock::monotonic_ns();
                match work(start.saturating_add(duration_ns)) {
                    Ok(count) => {
                        let stop = vernier_sys::clock::monotonic_ns();
                        slots.set(i, COUNT, count);
                        slots.set(i, ELAPSED, stop.saturating_sub(start));
                        status::OK
                    }
                    Err(code) => code,
                }
            })?;
        }
    }
    line.wait_ready(n, || workers.check_alive())?;
    line.go()?;
    workers.reap_all()?;
    let mut total = WorkerRate::default();
    for i in 0..n {
        let elapsed = slots.get(i, ELAPSED);
        if elapsed == 0 {
            return Err(BenchError::Worker(format!("worker {i} reported no time")));
        }
        let count = slots.get(i, COUNT);
        total.per_second += count as f64 / (elapsed as f64 / 1e9);
        total.operations = total.operations.saturating_add(count);
    }
    Ok(total)
}

/// What the workers of [`rate_of_workers`] did together.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct WorkerRate {
    /// Sum over the workers of each one's operations per second of its own elapsed time.
    pub(crate) per_second: f64,
    /// Operations of all workers.
    pub(crate) operations: u64,
}

/// Exit statuses of worker processes, shared by the benchmarks.
pub(crate) mod status {
    pub(crate) const OK: i32 = 0;
    pub(crate) const CALLED_OFF: i32 = 1;
    pub(crate) const IO: i32 = 2;
    pub(crate) const AFFINITY: i32 = 3;
    pub(crate) const FORK: i32 = 4;
    /// Exit status of a worker whose parent died before it was set up.
    pub(crate) const ORPHAN: i32 = vernier_sys::process::ORPHAN_STATUS;
    pub(crate) const PANIC: i32 = vernier_sys::process::PANIC_STATUS;

    /// Words for a worker's exit status.
    pub(crate) fn explain(code: i32) -> &'static str {
        match code {
            CALLED_OFF => "the start was called off",
            IO => "reading or writing its pipe or socket failed",
            AFFINITY => "sched_setaffinity failed",
            FORK => "fork or waitpid failed",
            ORPHAN => "the run process died",
            PANIC => "the worker panicked",
            _ => "unknown failure",
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn exists(pid: libc::pid_t) -> bool {
        // SAFETY: signal 0 only checks for existence.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn workers_start_together_and_report_through_slots() {
        let line = StartLine::new().unwrap();
        let slots = SharedSlots::new(3, 2).unwrap();
        let mut workers = ProcessWorkers::new();
        for i in 0..3 {
            let gate = line.gate();
            let slots = &slots;
            // SAFETY: the child makes only system calls and atomic stores.
            unsafe {
                workers
                    .spawn(move || {
                        if !gate.ready_and_wait() {
                            return 1;
                        }
                        slots.set(i, 0, 10 + i as u64);
                        slots.set(i, 1, 7);
                        0
                    })
                    .unwrap();
            }
        }
        line.wait_ready(3, || workers.check_alive()).unwrap();
        line.go().unwrap();
        workers.reap_all().unwrap();
        assert_eq!(workers.group.live(), 0);
        for i in 0..3 {
            assert_eq!(slots.get(i, 0), 10 + i as u64);
            assert_eq!(slots.get(i, 1), 7);
        }
        assert_eq!(slots.get(3, 0), 0, "out of range reads as 0");
    }

    #[test]
    fn a_failing_worker_fails_the_reap_and_kills_its_peers() {
        let line = StartLine::new().unwrap();
        let mut workers = ProcessWorkers::new();
        let gate = line.gate();
        // SAFETY: the children make only system calls.
        unsafe {
            // Blocks forever after the start unless killed.
            workers
                .spawn(move || {
                    gate.ready_and_wait();
                    libc::pause();
                    0
                })
                .unwrap();
            workers
                .spawn(move || {
                    gate.ready_and_wait();
                    4
                })
                .unwrap();
        }
        line.wait_ready(2, || workers.check_alive()).unwrap();
        line.go().unwrap();
        let err = workers.reap_all().unwrap_err().to_string();
        assert!(
            err.contains("fork or waitpid failed, exit status 4"),
            "{err}"
        );
        assert_eq!(workers.group.live(), 0);
    }

    #[test]
    fn dropping_workers_kills_and_reaps_them() {
        let line = StartLine::new().unwrap();
        let mut workers = ProcessWorkers::new();
        let gate = line.gate();
        // SAFETY: the child makes only system calls.
        unsafe {
            workers
                .spawn(move || {
                    gate.ready_and_wait();
                    0
                })
                .unwrap();
        }
        line.wait_ready(1, || workers.check_alive()).unwrap();
        let pgid = workers.group.id().unwrap() as libc::pid_t;
        assert!(exists(pgid));
        drop(workers);
        // Reaped, not a zombie: the pid is gone and waiting for it fails.
        let mut status = 0;
        // SAFETY: valid out pointer.
        let rc = unsafe { libc::waitpid(pgid, &mut status, libc::WNOHANG) };
        assert_eq!(rc, -1);
        assert_eq!(errno(), libc::ECHILD);
    }

    /// Threads as the benchmarks make them: each fails its set-up when told to, then passes
    /// the gate and counts itself as having worked.
    fn counting_threads(
        n: usize,
        failing: Option<usize>,
        worked: &AtomicU64,
    ) -> Vec<WorkerThread<impl FnOnce(Gate) -> Result<(), BenchError> + Send + '_>> {
        (0..n)
            .map(|i| WorkerThread {
                name: format!("test/{i}"),
                stack_bytes: (i == 0).then_some(256 << 10),
                body: move |gate: Gate| {
                    if failing == Some(i) {
                        return Err(BenchError::Worker(format!("set-up of {i} failed")));
                    }
                    if gate.ready_and_wait() {
                        worked.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok(())
                },
            })
            .collect()
    }

    #[test]
    fn threads_start_together_and_the_lead_runs_while_they_work() {
        let worked = AtomicU64::new(0);
        let mut led = false;
        start_threads("test", counting_threads(3, None, &worked), || {
            led = true;
            Ok(())
        })
        .unwrap();
        assert!(led);
        assert_eq!(worked.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_thread_failing_its_set_up_calls_the_start_off_with_its_own_error() {
        let worked = AtomicU64::new(0);
        let mut led = false;
        let e = start_threads("test", counting_threads(3, Some(1), &worked), || {
            led = true;
            Ok(())
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            BenchError::Worker("set-up of 1 failed".into()).to_string()
        );
        assert!(!led, "the lead must not run when the start is called off");
        assert_eq!(worked.load(Ordering::SeqCst), 0, "no thread may work");
    }

    #[test]
    fn calling_off_releases_waiting_threads() {
        let mut line = StartLine::new().unwrap();
        let gate = line.gate();
        let t = std::thread::spawn(move || gate.ready_and_wait());
        line.wait_ready(1, || Ok(())).unwrap();
        line.call_off();
        assert!(!t.join().unwrap());
        assert!(line.go().is_err());
    }

    #[test]
    fn partial_io_helpers_move_everything() {
        let (r, w) = pipe().unwrap();
        assert!(write_all(w.as_raw_fd(), b"hello"));
        let mut buf = [0u8; 5];
        assert!(read_exact(r.as_raw_fd(), &mut buf));
        assert_eq!(&buf, b"hello");
        drop(w);
        assert!(
            !read_exact(r.as_raw_fd(), &mut buf),
            "end of file is a failure"
        );
        let (a, b) = socket_pair().unwrap();
        assert!(write_all(b.as_raw_fd(), b"xy"));
        let mut two = [0u8; 2];
        assert!(read_exact(a.as_raw_fd(), &mut two));
        assert_eq!(&two, b"xy");
    }
}
