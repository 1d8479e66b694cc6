//! The [`Benchmark`] trait and the built-in benchmarks.
//!
//! A benchmark's `run` executes inside a fresh child process that the engine starts for every
//! run; it may fork and spawn threads of its own. It measures only its work with
//! CLOCK_MONOTONIC, keeps its hot loop free of allocation, locks and logging, and never prints.

use std::collections::BTreeMap;

use vernier_model::{BenchmarkInfo, Options};

pub mod fork;
pub mod hackbench;
pub mod mock;
mod opts;
pub mod pipe;
mod workers;
pub mod yield_;

pub use opts::resolve_options;

/// Where a run stands in its configuration, for benchmarks that care (the scripted mock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunContext {
    pub warmup: bool,
    /// Index among runs of the same kind (warmup or measured), from 0.
    pub index: u32,
}

/// The values one run measured: metric name -> value. The primary metric must be present.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measurement {
    pub values: BTreeMap<String, f64>,
}

impl Measurement {
    pub fn single(metric: &str, value: f64) -> Self {
        let mut values = BTreeMap::new();
        values.insert(metric.to_string(), value);
        Measurement { values }
    }
}

/// Why a benchmark run failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{call} failed: {source}")]
    Syscall {
        call: &'static str,
        source: std::io::Error,
    },
    #[error("{0}")]
    Sys(#[from] vernier_sys::SysError),
    #[error("worker failed: {0}")]
    Worker(String),
    #[error("invalid options: {0}")]
    Options(String),
}

impl BenchError {
    /// The error of the last failed libc call.
    pub fn last_os(call: &'static str) -> Self {
        BenchError::Syscall {
            call,
            source: std::io::Error::last_os_error(),
        }
    }
}

/// A benchmark: a description and a way to measure one run.
pub trait Benchmark: Send + Sync {
    fn info(&self) -> BenchmarkInfo;
    fn run(&self, options: &Options, ctx: &RunContext) -> Result<Measurement, BenchError>;
}

/// Every built-in benchmark, hidden ones included, in listing order.
pub fn all() -> Vec<Box<dyn Benchmark>> {
    vec![
        Box::new(hackbench::Hackbench),
        Box::new(pipe::Pipe),
        Box::new(fork::Fork),
        Box::new(yield_::Yield),
        Box::new(mock::Mock),
    ]
}

/// The benchmark called `name`.
pub fn find(name: &str) -> Option<Box<dyn Benchmark>> {
    all().into_iter().find(|b| b.info().name == name)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_builtin_once() {
        let names: Vec<&str> = all().iter().map(|b| b.info().name).collect();
        assert_eq!(names, ["hackbench", "pipe", "fork", "yield", "mock"]);
        let hidden: Vec<&str> = all()
            .iter()
            .map(|b| b.info())
            .filter(|i| i.hidden)
            .map(|i| i.name)
            .collect();
        assert_eq!(hidden, ["mock"]);
        assert!(find("yield").is_some());
        assert!(find("nope").is_none());
        for b in all() {
            let info = b.info();
            assert_eq!(info.version, "1", "{}", info.name);
            // Every default resolves and passes the benchmark's own checks on option values.
            resolve_options(&info, &[]).unwrap();
        }
    }

    /// Environment variable that turns `reap_probe` into a probe: "name:opt=v:opt=v".
    const PROBE: &str = "VERNIER_BENCH_REAP_PROBE";

    fn tasks_of_self() -> usize {
        std::fs::read_dir("/proc/self/task").unwrap().count()
    }

    /// Runs one benchmark in this (fresh) test process and checks that it left no child
    /// process and no thread behind. Only does something when started by
    /// `runs_leave_no_children_behind` with the probe variable set.
    #[test]
    #[ignore = "started as a subprocess by runs_leave_no_children_behind"]
    fn reap_probe() {
        let Ok(spec) = std::env::var(PROBE) else {
            return;
        };
        let mut parts = spec.split(':');
        let b = find(parts.next().unwrap()).unwrap();
        let overrides: Vec<(&str, &str)> = parts.map(|p| p.split_once('=').unwrap()).collect();
        let options = resolve_options(&b.info(), &overrides).unwrap();
        let threads_before = tasks_of_self();
        b.run(&options, &RunContext::default()).unwrap();
        let mut status = 0;
        // SAFETY: valid out pointer.
        let rc = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        let err = std::io::Error::last_os_error().raw_os_error();
        assert_eq!((rc, err), (-1, Some(libc::ECHILD)), "a child was left");
        assert_eq!(tasks_of_self(), threads_before, "a thread was left");
    }

    #[test]
    fn runs_leave_no_children_behind() {
        let exe = std::env::current_exe().unwrap();
        for spec in [
            "hackbench:groups=1:fds=2:loops=10:tasks=process",
            "hackbench:groups=1:fds=2:loops=10:tasks=thread:ipc=pipe",
            "pipe:loops=100:tasks=process",
            "pipe:loops=100:tasks=thread:placement=free",
            "fork:workers=2:duration=0.02",
            "yield:workers=2:duration=0.02",
        ] {
            let out = std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "tests::reap_probe",
                    "--ignored",
                    "--test-threads=1",
                ])
                .env(PROBE, spec)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{spec}: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                text.contains("1 passed"),
                "{spec}: the probe did not run: {text}"
            );
        }
    }
}
