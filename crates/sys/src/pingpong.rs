//! Ping-pong over two pipes between two tasks, as `perf bench sched pipe`
//! (tools/perf/bench/sched-pipe.c): task A writes an int and reads the reply, task B reads it
//! and writes it back. The `pipe` benchmark times this loop ([`Side::run`]) in two processes or
//! two threads ([`threads`]), and the system check measures the cost of a cross-CPU wake-up
//! with the same threads ([`thread_round_trip_ns`]), so its figure is the one
//! `pipe:tasks=thread` reports.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::affinity::{current_cpu, CpuSet};
use crate::clock::monotonic_ns;
use crate::fd::{pipe, read_exact, write_all};
use crate::SysError;

/// One task's ends of the two pipes.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    read_fd: RawFd,
    write_fd: RawFd,
    /// Task A, which starts each round trip and times them.
    first: bool,
}

impl Side {
    /// The two tasks over the pipes `a_to_b` and `b_to_a` (read end, write end): A reads
    /// `b_to_a` and writes `a_to_b`, B the other way round.
    pub fn pair(a_to_b: (RawFd, RawFd), b_to_a: (RawFd, RawFd)) -> [Side; 2] {
        [
            Side {
                read_fd: b_to_a.0,
                write_fd: a_to_b.1,
                first: true,
            },
            Side {
                read_fd: a_to_b.0,
                write_fd: b_to_a.1,
                first: false,
            },
        ]
    }

    /// Whether this is task A.
    pub fn is_first(&self) -> bool {
        self.first
    }

    /// A: write, then read the reply. B: read, then write it back. False on an error or end of
    /// file (the other task is gone). Async-signal-safe.
    #[inline]
    fn round_trip(&self, m: &mut [u8; 4]) -> bool {
        if self.first {
            if !write_all(self.write_fd, m) {
                return false;
            }
            read_exact(self.read_fd, m)
        } else {
            if !read_exact(self.read_fd, m) {
                return false;
            }
            write_all(self.write_fd, m)
        }
    }

    /// `warmup` round trips, then `loops` timed ones; their CLOCK_MONOTONIC time in ns, or
    /// `None` when the other task went away. Async-signal-safe: only the clock, reads and
    /// writes.
    pub fn run(&self, warmup: u64, loops: u64) -> Option<u64> {
        let mut m = [0u8; 4];
        for _ in 0..warmup {
            if !self.round_trip(&mut m) {
                return None;
            }
        }
        let start = monotonic_ns();
        for _ in 0..loops {
            if !self.round_trip(&mut m) {
                return None;
            }
        }
        Some(monotonic_ns().saturating_sub(start))
    }
}

/// What [`threads`] measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// The time of the timed round trips, in ns, as task A took it.
    pub elapsed_ns: u64,
    /// The CPU each task ended on ([`current_cpu`]).
    pub cpus: [u64; 2],
}

/// The start of [`threads`]: each task reports whether it could be placed, and the caller
/// starts both, or calls the start off when one could not be placed or not started at all, so
/// that no task waits for a peer that will never answer.
#[derive(Default)]
struct Start {
    state: Mutex<StartState>,
    changed: Condvar,
}

#[derive(Default)]
struct StartState {
    ready: usize,
    failed: bool,
    /// The caller's decision: go (true) or call off (false).
    go: Option<bool>,
}

impl Start {
    fn lock(&self) -> MutexGuard<'_, StartState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A task's side: reports whether it was placed, then waits for the decision.
    fn ready_and_wait(&self, placed: bool) -> bool {
        let mut state = self.lock();
        state.ready += 1;
        state.failed |= !placed;
        self.changed.notify_all();
        loop {
            if let Some(go) = state.go {
                return go;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The caller's side: waits until `tasks` have reported, then starts them unless one
    /// failed or `call_off`; returns whether they go.
    fn decide(&self, tasks: usize, call_off: bool) -> bool {
        let mut state = self.lock();
        while state.ready < tasks {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        let go = !call_off && !state.failed;
        state.go = Some(go);
        self.changed.notify_all();
        go
    }
}

/// `warmup` and then `loops` timed round trips between two threads, the first on `cpus[0]`
/// and the second on `cpus[1]` (not pinned without `cpus`), started together once both are
/// placed.
pub fn threads(cpus: Option<[usize; 2]>, warmup: u64, loops: u64) -> Result<Measured, SysError> {
    let (ab_r, ab_w) = pipe()?;
    let (ba_r, ba_w) = pipe()?;
    let sides = Side::pair(
        (ab_r.as_raw_fd(), ab_w.as_raw_fd()),
        (ba_r.as_raw_fd(), ba_w.as_raw_fd()),
    );
    let start = Start::default();
    let called_off = || SysError::Syscall {
        call: "pipe ping-pong",
        source: std::io::Error::other("the start was called off"),
    };
    let task = |i: usize| -> Result<(u64, u64), SysError> {
        let placed = cpus.map_or(Ok(()), |c| CpuSet::new(&c[i..=i]).pin_current_thread());
        if !start.ready_and_wait(placed.is_ok()) {
            placed?;
            return Err(called_off());
        }
        let elapsed = sides[i]
            .run(warmup, loops)
            .ok_or_else(|| SysError::Syscall {
                call: "pipe ping-pong",
                source: std::io::Error::from(std::io::ErrorKind::BrokenPipe),
            })?;
        Ok((elapsed, current_cpu()))
    };
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(2);
        let mut spawn_error = None;
        for i in 0..2 {
            let spawned = std::thread::Builder::new()
                .name(format!("ping-pong/{i}"))
                .spawn_scoped(scope, move || task(i));
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(source) => {
                    spawn_error = Some(SysError::Syscall {
                        call: "pthread_create",
                        source,
                    });
                    break;
                }
            }
        }
        start.decide(handles.len(), spawn_error.is_some());
        let mut results = Vec::with_capacity(2);
        for handle in handles {
            results.push(handle.join().unwrap_or_else(|_| {
                Err(SysError::Syscall {
                    call: "pipe ping-pong",
                    source: std::io::Error::other("a task panicked"),
                })
            }));
        }
        if let Some(e) = spawn_error {
            return Err(e);
        }
        // The tasks' own errors say more than the start's.
        let mut results = results.into_iter();
        let (Some(a), Some(b)) = (results.next(), results.next()) else {
            return Err(called_off());
        };
        match (a, b) {
            (Ok((elapsed_ns, cpu_a)), Ok((_, cpu_b))) => Ok(Measured {
                elapsed_ns,
                cpus: [cpu_a, cpu_b],
            }),
            // The task that could not be placed says why; its peer only that the start was
            // called off.
            (
                Err(SysError::Syscall {
                    call: "pipe ping-pong",
                    ..
                }),
                Err(e),
            )
            | (Err(e), _)
            | (_, Err(e)) => Err(e),
        }
    })
}

/// Nanoseconds per round trip between two threads, the first on `cpus[0]`, the second on
/// `cpus[1]`, after `warmup` round trips that are not timed ([`threads`]).
pub fn thread_round_trip_ns(cpus: [usize; 2], warmup: u64, loops: u64) -> Result<f64, SysError> {
    if loops == 0 {
        return Err(SysError::Unsupported {
            what: "a ping-pong of no timed round trip".into(),
        });
    }
    Ok(threads(Some(cpus), warmup, loops)?.elapsed_ns as f64 / loops as f64)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn thread_round_trips_with_a_warmup() {
        let allowed = crate::affinity::current_affinity().unwrap();
        let cpus = [allowed[0], *allowed.last().unwrap()];
        let ns = thread_round_trip_ns(cpus, 20, 200).unwrap();
        assert!(ns > 0.0 && ns.is_finite(), "{ns}");
        assert!(thread_round_trip_ns(cpus, 0, 0).is_err());
        let m = threads(Some([allowed[0], allowed[0]]), 0, 50).unwrap();
        assert_eq!(m.cpus, [allowed[0] as u64; 2], "both pinned to one CPU");
    }

    #[test]
    fn a_task_that_cannot_be_placed_calls_the_start_off() {
        let allowed = crate::affinity::current_affinity().unwrap();
        // The last CPU a cpu_set_t can name, which this machine does not have.
        if allowed.contains(&1023) {
            eprintln!("skipped: CPU 1023 exists here");
            return;
        }
        for cpus in [[1023, allowed[0]], [allowed[0], 1023]] {
            let e = threads(Some(cpus), 0, 10).unwrap_err();
            assert!(
                matches!(
                    e,
                    SysError::Syscall {
                        call: "sched_setaffinity",
                        ..
                    }
                ),
                "{cpus:?}: {e}"
            );
        }
    }
}
