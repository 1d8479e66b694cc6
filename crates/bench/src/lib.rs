//! The [`Benchmark`] trait and the built-in benchmarks.
//!
//! A benchmark's `run` executes inside a fresh child process that the engine starts for every
//! run; it may fork and spawn threads of its own. It measures only its work with
//! CLOCK_MONOTONIC, keeps its hot loop free of allocation, locks and logging, and never prints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vernier_model::{
    BenchmarkInfo, Describe, Description, Kind, MetricInfo, Options, Registry, RunHistogram,
};
use vernier_sys::MachineLimits;

pub mod command;
pub mod compile;
pub mod cyclictest;
pub mod fork;
pub mod hackbench;
pub mod latency;
pub mod memlat;
pub mod memory;
pub mod mock;
mod opts;
pub mod perf_bench;
pub mod pipe;
mod release;
pub mod rt_hackbench;
pub mod stress_ng;
pub mod sysbench;
pub mod syscall;
pub mod sysfs;
mod tool;
pub mod user;
mod workers;
pub mod yield_;

pub use opts::resolve_options;

/// Where a run stands in its configuration, for benchmarks that care (the scripted mock).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunContext {
    pub warmup: bool,
    /// Index among runs of the same kind (warmup or measured), from 0.
    pub index: u32,
    /// The work directory [`Benchmark::prepare`] filled for this configuration, when its
    /// benchmark has a [`Benchmark::preparation`].
    pub work_dir: Option<PathBuf>,
    /// How many runs the process executing this one executed before it: 0 in a fresh run
    /// process; more in the run process of a benchmark that [`Benchmark::measures_a_fresh_process`],
    /// which serves all of a configuration's runs.
    pub runs_before: u32,
    /// The session's ftrace instance, for a configuration that traces (`latency:trace=US`).
    pub trace_instance: Option<PathBuf>,
    /// The CPUs a process the benchmark spawns gets once it has exec'd, with what it started
    /// before, when the run process is confined to its own CPU so that what it spawns starts
    /// there (a served run process, `vernier_engine::placement`; `release`); `None`: a spawned
    /// process keeps the CPUs it inherited.
    pub release_cpus: Option<Vec<usize>>,
}

/// The values one run measured: metric name -> value. The primary metric must be present.
/// Benchmarks that take many samples per run add their distributions, one per measurement
/// thread, and put the summaries of them among the values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measurement {
    pub values: BTreeMap<String, f64>,
    pub histograms: Vec<RunHistogram>,
}

impl Measurement {
    pub fn single(metric: &str, value: f64) -> Self {
        let mut values = BTreeMap::new();
        values.insert(metric.to_string(), value);
        Measurement {
            values,
            histograms: Vec::new(),
        }
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
    /// A command the benchmark executes failed (the `command` benchmark).
    #[error("{0}")]
    Command(String),
    /// The machine cannot run the configuration (too many tasks, files, bytes or CPUs).
    #[error("{0}")]
    Limit(#[from] vernier_sys::LimitError),
    /// The configuration needs something this process may not have here: a privilege, a CPU.
    #[error("{0}")]
    NotPermitted(String),
    /// The session's ftrace instance could not be armed or stopped (`latency:trace=US`).
    #[error("trace: {0}")]
    Trace(String),
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

/// What the parameters of a benchmark that takes them are, as `list -v` says it
/// ([`BenchmarkInfo::with_parameters`]).
pub(crate) const PARAMETERS: &str = "any other option NAME=VALUE is a parameter (see above)";

/// Descriptors a run's process holds besides the benchmark's own: the standard streams, the
/// engine's result and monitor files and the start line's two pipes.
pub(crate) const RESERVED_FILES: u64 = 32;

/// A benchmark: a description, a check of what a configuration needs from the machine, and a
/// way to measure one run.
pub trait Benchmark: Send + Sync {
    fn info(&self) -> BenchmarkInfo;

    /// Checks, before anything starts, that this machine can run `options`: the tasks, file
    /// descriptors, memory and CPUs one run needs against `limits`. The default needs nothing
    /// beyond the run's own process.
    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let _ = options;
        limits.check_tasks(1)?;
        Ok(())
    }

    /// Checks, when the plan is made, what the option types cannot: how options relate to
    /// each other, parameters (see [`BenchmarkInfo::parameters`]), programs that must exist.
    /// The default accepts every set of options that the types accept.
    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        let _ = options;
        Ok(())
    }

    /// The primary and secondary metrics of a configuration. The default: those of
    /// [`Benchmark::info`]. An adapter whose option chooses one of a tool's benchmarks
    /// (`perf-bench:bench=mem-memcpy`) reports that benchmark's metrics, each in its unit.
    fn metrics(&self, options: &Options) -> (MetricInfo, Vec<MetricInfo>) {
        let _ = options;
        let info = self.info();
        (info.metric().clone(), info.secondary_metrics().to_vec())
    }

    /// The external programs a configuration runs, whose versions are recorded in the
    /// session's environment (`Environment::tool_versions`). The default: none.
    fn tools(&self, options: &Options) -> Vec<&'static str> {
        let _ = options;
        Vec::new()
    }

    /// Fills in, when the plan is made, options that are facts of the machine rather than
    /// choices (the source's sha256 and the compiler's version of `compile`), so that they are
    /// stored with the configuration and `compare` matches only configurations that agree on
    /// them. The default fills in nothing.
    fn complete_options(&self, options: &mut Options) -> Result<(), BenchError> {
        let _ = options;
        Ok(())
    }

    /// Whether what a run measures is a process that the run starts afresh (`command`: the
    /// command, spawned and waited for). Then the engine may execute all of a
    /// configuration's runs in one run process that stays warm, one request after the other,
    /// instead of a fresh run process each ([`RunContext::runs_before`] tells them apart): the
    /// measured work is still a fresh process in every run, and the spawner's own start-up,
    /// a cost of the harness, is paid once. The default: false, a fresh run process per run,
    /// for benchmarks whose measured work runs in the run process or its forks.
    fn measures_a_fresh_process(&self) -> bool {
        false
    }

    /// Whether `options` need a work directory prepared once per session (`compile`'s
    /// unpacked and configured tree): `None` needs none; configurations with equal keys share
    /// one directory. The engine creates it, calls [`Benchmark::prepare`] before the first run
    /// that needs it, passes it to every run in [`RunContext::work_dir`] and removes it when
    /// no configuration needs it any more, and on every way out of the session.
    fn preparation(&self, options: &Options) -> Option<String> {
        let _ = options;
        None
    }

    /// Fills the empty directory `dir` for the runs of `options` (see
    /// [`Benchmark::preparation`]). Runs in the controller, not in a run's child; stops early,
    /// with an error, once `cancelled` returns true. Returns how many seconds one run is
    /// expected to take when preparing has learnt it (`compile`'s warm-up build), which the
    /// automatic run timeout then uses instead of its fixed limit for a first run.
    fn prepare(
        &self,
        options: &Options,
        dir: &Path,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Option<f64>, BenchError> {
        let _ = (options, dir, cancelled);
        Ok(None)
    }

    fn run(&self, options: &Options, ctx: &RunContext) -> Result<Measurement, BenchError>;

    /// Monitors that explain this benchmark's results, sampled during its runs on top of the
    /// default set when `--monitor` is not given (`latency`: softirqs and idle states per CPU,
    /// what a latency spike is read against). Names as `--monitor` takes them.
    fn explaining_monitors(&self) -> &'static [&'static str] {
        &[]
    }
}

/// A built-in benchmark with its description, as [`builtins`] holds it.
pub struct Builtin {
    info: BenchmarkInfo,
    benchmark: Box<dyn Benchmark>,
}

impl Builtin {
    fn of(benchmark: impl Benchmark + 'static) -> Self {
        Builtin {
            info: benchmark.info(),
            benchmark: Box::new(benchmark),
        }
    }

    pub fn info(&self) -> &BenchmarkInfo {
        &self.info
    }

    pub fn benchmark(&self) -> &dyn Benchmark {
        self.benchmark.as_ref()
    }
}

impl Describe for Builtin {
    fn description(&self) -> &Description {
        self.info.description()
    }
}

/// The registry of the built-in benchmarks, hidden ones included, in listing order.
pub fn builtins() -> Registry<Builtin> {
    Registry::new(
        Kind::Benchmark,
        vec![
            Builtin::of(hackbench::Hackbench),
            Builtin::of(pipe::Pipe),
            Builtin::of(fork::Fork),
            Builtin::of(yield_::Yield),
            Builtin::of(command::CommandBench),
            Builtin::of(latency::Latency),
            Builtin::of(perf_bench::PerfBenchmark),
            Builtin::of(stress_ng::StressNg),
            Builtin::of(rt_hackbench::RtHackbench),
            Builtin::of(cyclictest::Cyclictest),
            Builtin::of(sysbench::Sysbench),
            Builtin::of(compile::Compile),
            Builtin::of(syscall::Syscall),
            Builtin::of(sysfs::Sysfs),
            Builtin::of(memory::Memory),
            Builtin::of(memlat::Memlat),
            Builtin::of(mock::Mock),
        ],
    )
}

/// The descriptions of the built-in benchmarks, what a plan is checked against
/// (`vernier_engine::build_plan`).
pub fn builtin_infos() -> Vec<BenchmarkInfo> {
    builtins().iter().map(|b| b.info().clone()).collect()
}

/// The built-in benchmark called `name`.
pub fn builtin(name: &str) -> Option<Box<dyn Benchmark>> {
    builtins().take(name).map(|b| b.benchmark)
}

/// Whether `name` is a built-in benchmark. The built-ins are values without state (unit
/// structs; tested), so a process that serves many runs may keep the one it found instead of
/// building the registry, every description with its options, for every run.
pub fn is_builtin(name: &str) -> bool {
    builtins().get(name).is_some()
}

/// The benchmark called `name`: a built-in, else a usable benchmark of the user's own in
/// `user_dir` ([`user::load`]).
pub fn find(name: &str, user_dir: Option<&Path>) -> Option<Box<dyn Benchmark>> {
    builtin(name).or_else(|| match user::load(user_dir?, name) {
        Some(Ok(b)) => Some(Box::new(b) as Box<dyn Benchmark>),
        _ => None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn builtins_hold_no_state() {
        for b in builtins().iter() {
            assert_eq!(
                std::mem::size_of_val(b.benchmark()),
                0,
                "{} holds state: a served process may not keep it between runs",
                b.info().name()
            );
            assert!(is_builtin(b.info().name()));
        }
        assert!(!is_builtin("no-such-benchmark"));
    }

    #[test]
    fn all_lists_every_builtin_once() {
        let registry = builtins();
        let names: Vec<&str> = registry.iter().map(|b| b.info().name()).collect();
        assert_eq!(
            names,
            [
                "hackbench",
                "pipe",
                "fork",
                "yield",
                "command",
                "latency",
                "perf-bench",
                "stress-ng",
                "rt-hackbench",
                "cyclictest",
                "sysbench",
                "compile",
                "syscall",
                "sysfs",
                "memory",
                "memlat",
                "mock"
            ]
        );
        let hidden: Vec<&str> = registry
            .iter()
            .map(|b| b.info())
            .filter(|i| i.is_hidden())
            .map(|i| i.name())
            .collect();
        assert_eq!(hidden, ["mock"]);
        assert_eq!(registry.names().len(), names.len() - 1);
        assert!(find("yield", None).is_some());
        assert!(find("nope", None).is_none());
        assert_eq!(
            registry.find("nope").err().map(|e| e.to_string()).unwrap(),
            format!(
                "unknown benchmark 'nope'; valid benchmarks: {}",
                registry.names().join(", ")
            )
        );
        for b in registry.iter() {
            let info = b.info();
            // What a benchmark says about itself is what the registry holds.
            assert_eq!(&b.benchmark().info(), info);
            // A benchmark's version is a whole number, raised when what it times changes.
            assert!(
                info.version().parse::<u32>().is_ok_and(|v| v >= 1),
                "{}",
                info.name()
            );
            // Every default resolves and passes the benchmark's own checks on option values.
            resolve_options(info, &[]).unwrap();
        }
    }

    fn check(spec: &str, limits: &MachineLimits) -> Result<(), String> {
        let mut parts = spec.split(':');
        let b = builtin(parts.next().unwrap()).unwrap();
        let overrides: Vec<(&str, &str)> = parts.map(|p| p.split_once('=').unwrap()).collect();
        let options = resolve_options(&b.info(), &overrides).unwrap();
        b.check_machine(&options, limits).map_err(|e| e.to_string())
    }

    /// A small machine: 1000 more tasks, 1024 files, 1 GiB, one CPU.
    fn small_machine() -> MachineLimits {
        MachineLimits {
            pid_max: Some(32768),
            threads_max: Some(1100),
            tasks: Some(100),
            nofile: Some(1024),
            mem_available_bytes: Some(1 << 30),
            cpus: vec![0],
            ..MachineLimits::default()
        }
    }

    #[test]
    fn every_default_fits_a_small_machine_and_none_fits_an_empty_one() {
        let small = small_machine();
        let full = MachineLimits {
            tasks: Some(1100),
            ..small_machine()
        };
        for b in builtins().iter().map(Builtin::benchmark) {
            let info = b.info();
            let overrides: &[(&str, &str)] = if info.option("workers").is_some() {
                &[("workers", "2")]
            } else {
                &[]
            };
            let options = resolve_options(&info, overrides).unwrap();
            b.check_machine(&options, &small).unwrap();
            let e = b.check_machine(&options, &full).unwrap_err().to_string();
            assert!(
                e.contains("only 0 more can start here"),
                "{}: {e}",
                info.name()
            );
        }
    }

    #[test]
    fn hackbench_needs_its_tasks_files_and_buffers() {
        let m = small_machine();
        // 2 * 25 * 20 = 1000 workers and the run's process: one more than there is room for.
        assert!(check("hackbench:groups=24:fds=20", &m).is_ok());
        let e = check("hackbench:groups=25:fds=20", &m).unwrap_err();
        assert_eq!(
            e,
            "needs 1001 tasks; only 1000 more can start here \
             (kernel.threads-max is 1100 and 100 tasks exist already)"
        );
        // Threads hold every socket end in one process; processes one group's at a time.
        let e = check(
            "hackbench:groups=25:fds=20:tasks=thread",
            &MachineLimits {
                threads_max: None,
                ..m.clone()
            },
        )
        .unwrap_err();
        assert!(e.starts_with("needs 1032 open files in one process"), "{e}");
        // 960 socket ends and the reserve fit in 1024.
        assert!(check("hackbench:groups=24:fds=20:tasks=thread", &m).is_ok());
        // 100 receivers with 1 MB buffers (rounded to pages) do not fit in 64 MiB; 100 KB do.
        let m = MachineLimits {
            mem_available_bytes: Some(64 << 20),
            ..m
        };
        let e = check("hackbench:groups=5:fds=20:datasize=1000000", &m).unwrap_err();
        assert_eq!(
            e,
            "needs 105635840 bytes of memory; MemAvailable is 67108864 bytes"
        );
        assert!(check("hackbench:groups=5:fds=20:datasize=100000", &m).is_ok());
    }

    #[test]
    fn cross_cpu_pipe_needs_two_cpus() {
        let mut m = small_machine();
        assert!(check("pipe:placement=same-cpu", &m).is_ok());
        assert!(check("pipe:placement=free", &m).is_ok());
        let e = check("pipe:placement=cross-cpu", &m).unwrap_err();
        assert!(
            e.starts_with("needs 2 CPUs; this process may run on 1 (CPU 0"),
            "{e}"
        );
        m.cpus = vec![0, 1];
        assert!(check("pipe:placement=cross-cpu", &m).is_ok());
    }

    #[test]
    fn fork_counts_a_child_per_worker() {
        let m = small_machine();
        assert!(check("fork:workers=499", &m).is_ok());
        assert!(check("fork:workers=500", &m).is_err());
        assert!(check("yield:workers=999", &m).is_ok());
        assert!(check("yield:workers=1000", &m).is_err());
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
        let b = builtin(parts.next().unwrap()).unwrap();
        let overrides: Vec<(&str, &str)> = parts.map(|p| p.split_once('=').unwrap()).collect();
        let options = resolve_options(&b.info(), &overrides).unwrap();
        let threads_before = tasks_of_self();
        b.run(&options, &RunContext::default()).unwrap();
        let mut status = 0;
        // SAFETY: valid out pointer.
        let rc = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        let err = std::io::Error::last_os_error().raw_os_error();
        assert_eq!((rc, err), (-1, Some(libc::ECHILD)), "a child was left");
        // A joined thread may still be listed for a moment: pthread_join returns when the
        // kernel clears its tid at exit (set_tid_address(2)), before the task is released and
        // leaves /proc/self/task. A thread left running stays listed past the bound.
        let listed_until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while tasks_of_self() != threads_before && std::time::Instant::now() < listed_until {
            std::thread::yield_now();
        }
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
            "command:cmd=true:calibration=2",
            "command:cmd=true:timeout=5:calibration=1:prepare=true:cleanup=true",
            "latency:duration=0.02:policy=other:interval=1ms",
            "memory:size=64K:threads=2:ntimes=2",
            "memlat:size=16K:duration=0.01",
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

/// The unit tests that fork workers and those that time a user benchmark's `describe` take
/// turns: a worker forked without exec keeps every descriptor the test process had at the
/// fork, also the write end of the output of a `describe` that another test has just started,
/// which then ends only when the worker does, past the short limits those tests set.
#[cfg(test)]
pub(crate) mod test_turns {
    use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

    static TURNS: RwLock<()> = RwLock::new(());

    /// Held by a set of forked workers for its life.
    #[derive(Debug)]
    pub(crate) struct Forking(#[allow(dead_code)] RwLockReadGuard<'static, ()>);

    impl Default for Forking {
        fn default() -> Self {
            Forking(TURNS.read().unwrap_or_else(|e| e.into_inner()))
        }
    }

    /// Held by a test of `describe` while it runs.
    pub(crate) fn describing() -> RwLockWriteGuard<'static, ()> {
        TURNS.write().unwrap_or_else(|e| e.into_inner())
    }
}
