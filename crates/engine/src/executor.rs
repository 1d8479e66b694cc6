//! Executes one run: the real executor starts a fresh child process; tests substitute a
//! scripted one.
//!
//! The child's stdin (the request), stdout (the reply) and stderr (diagnostics) are served at
//! the same time by one poll(2) loop in the caller's thread ([`drain_and_wait`]), whose
//! timeout is the run's limit. The child leads a process group of its own ([`Group`]); the
//! whole group is killed when the run exceeds its [`RunTimeout`], so a hung benchmark or kernel
//! ends as a failed run instead of hanging the session.
//!
//! A benchmark whose measured work is a fresh process of its own
//! (`vernier_bench::Benchmark::measures_a_fresh_process`) is served when the executor has
//! [`ProcessExecutor::serve_args`]: one run process per configuration ([`Server`]) executes
//! its runs one request after the other (`crate::child::serve_main`), so that neither the
//! start of a ~100 MB binary nor the spawner's warm-up is paid in every run. Everything else
//! holds as for a fresh child: the server leads a process group of its own, which the
//! watchdog (here a time limit on the reply) and Ctrl-C kill as a whole; the monitors sample
//! the run with the server's pid (perf counters opened per run count it and what it spawns
//! from then on); the run's resource usage is what the server and the children it waited for
//! used during the run. A server that failed a run, timed out or died is dropped (killed and
//! reaped), and the configuration's next run starts a new one.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use vernier_model::monitor::{MonitorFailure, RunMonitorData};
use vernier_model::{ConfigKey, FoldedStacks, RunHistogram, Rusage};
use vernier_monitor::{MonitorSet, MonitorSpec, Reader, RunSampler};
use vernier_sys::clock::{clock_ticks_per_second, unix_now_ns};
use vernier_sys::process::{Exit, Group, Spawned};
use vernier_sys::procstat::parse_proc_stat_cpu;
use vernier_sys::Roots;

use crate::child::{ChildReply, ChildRequest, ServedReply, SERVER_READY};
use crate::interrupt::Interrupt;
use crate::profile::Profiler;

/// What one run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub started_at_ns: i64,
    pub ended_at_ns: i64,
    pub values: BTreeMap<String, f64>,
    /// The distributions of the run's samples (benchmarks that take many per run).
    pub histograms: Vec<RunHistogram>,
    pub rusage: Rusage,
    pub foreign_cpu_ns: i64,
    pub controller_cpu_ns: i64,
    /// What the monitors recorded (measured runs with monitors only).
    pub monitors: Option<RunMonitorData>,
}

/// Why a run produced no measurement.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("cannot start the run's child process {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Benchmark(String),
    #[error("the run's child process {0}")]
    Child(String),
    #[error(
        "the run did not finish within its time limit of {} s; its process group was killed",
        limit.as_secs_f64()
    )]
    Timeout { limit: Duration },
    #[error("interrupted")]
    Interrupted,
    #[error("the profile could not be recorded: {0}")]
    Profile(String),
}

/// How long one run may take before its process group is killed and the run fails.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum RunTimeout {
    /// The same limit for every run.
    Fixed(Duration),
    /// Derived from the benchmark, see [`RunTimeout::limit`].
    #[default]
    Auto,
}

/// The least limit [`RunTimeout::Auto`] gives a run.
pub const AUTO_TIMEOUT_FLOOR: Duration = Duration::from_secs(60);
/// The limit [`RunTimeout::Auto`] gives a configuration's first run, whose length is unknown.
pub const AUTO_TIMEOUT_FIRST: Duration = Duration::from_secs(600);

impl RunTimeout {
    /// The limit of the next run of a configuration whose `duration` option (seconds, for the
    /// benchmarks that run for a set time) and longest completed run so far are given.
    ///
    /// `Auto`: ten times the longest completed run, ten times the duration option plus the
    /// floor, and at least [`AUTO_TIMEOUT_FLOOR`]; before any run of the configuration has
    /// completed and without a duration option, [`AUTO_TIMEOUT_FIRST`]. Ten times leaves room
    /// for a noisy machine; a run that exceeds it is hung, not slow.
    pub fn limit(self, duration_s: Option<f64>, longest_run: Option<Duration>) -> Duration {
        match self {
            RunTimeout::Fixed(limit) => limit,
            RunTimeout::Auto => {
                let from_option = duration_s
                    .filter(|d| d.is_finite() && *d > 0.0)
                    .map(|d| Duration::from_secs_f64(d.min(1e6) * 10.0) + AUTO_TIMEOUT_FLOOR);
                let from_runs = longest_run.map(|r| r.saturating_mul(10));
                match (from_option, from_runs) {
                    (None, None) => AUTO_TIMEOUT_FIRST,
                    (a, b) => a
                        .into_iter()
                        .chain(b)
                        .fold(AUTO_TIMEOUT_FLOOR, Duration::max),
                }
            }
        }
    }
}

/// Executes single runs.
pub trait Executor {
    fn execute(
        &mut self,
        request: &ChildRequest,
        interrupt: &Interrupt,
    ) -> Result<RunOutcome, ExecError>;

    /// Executes one run under `profiler` (`perf record`) and returns it with the folded stacks
    /// of its samples. An executor that runs no processes cannot.
    fn profile(
        &mut self,
        request: &ChildRequest,
        interrupt: &Interrupt,
        profiler: &Profiler,
    ) -> Result<(RunOutcome, FoldedStacks), ExecError> {
        let _ = (request, interrupt, profiler);
        Err(ExecError::Profile(
            "this executor cannot profile runs".into(),
        ))
    }
}

/// Runs each request in a fresh child process: `program args...` reading the request on stdin.
#[derive(Debug)]
pub struct ProcessExecutor {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Where /proc and /sys are, for the foreign-CPU signal and the monitors.
    pub roots: Roots,
    /// Monitors sampled in this process during every measured run.
    pub monitors: Vec<MonitorSpec>,
    pub timeout: RunTimeout,
    /// The longest completed run of each configuration (benchmark and options), for
    /// [`RunTimeout::Auto`].
    longest_runs: HashMap<ConfigKey, Duration>,
    /// The arguments that start `program` as a server of runs (`__child --serve`); `None`:
    /// every run in a fresh process.
    pub serve_args: Option<Vec<String>>,
    /// The servers of configurations, with the number of the run that last used each.
    servers: HashMap<ConfigKey, (Server, u64)>,
    /// Whether each benchmark met so far is served.
    served: HashMap<String, bool>,
    /// Runs executed, to tell which server was used longest ago.
    runs: u64,
    /// The monitors of each configuration, kept from its last measured run for its next one
    /// ([`MonitorSet`]), with the number of the run that last used them; at most
    /// [`MAX_SERVERS`], each with its files open.
    monitor_sets: HashMap<ConfigKey, (MonitorSet, u64)>,
    /// /proc/stat, kept open for [`ProcessExecutor::machine_busy_ns`].
    proc_stat: Reader,
}

/// At most this many servers stay; beyond, the one used longest ago is ended. A sweep of
/// many configurations keeps this many idle processes, each a few MB of its own.
const MAX_SERVERS: usize = 16;

impl ProcessExecutor {
    pub fn new(program: PathBuf, args: Vec<String>) -> Self {
        ProcessExecutor {
            program,
            args,
            roots: Roots::real(),
            monitors: Vec::new(),
            timeout: RunTimeout::Auto,
            longest_runs: HashMap::new(),
            serve_args: None,
            servers: HashMap::new(),
            served: HashMap::new(),
            runs: 0,
            monitor_sets: HashMap::new(),
            proc_stat: Reader::new(8 * 1024),
        }
    }

    /// Whether the runs of `benchmark` go to a server.
    fn is_served(&mut self, benchmark: &str) -> bool {
        if self.serve_args.is_none() {
            return false;
        }
        *self.served.entry(benchmark.to_string()).or_insert_with(|| {
            vernier_bench::builtin(benchmark).is_some_and(|b| b.measures_a_fresh_process())
        })
    }

    /// The server of `key`, started when there is none.
    fn server(&mut self, key: &ConfigKey, limit: Duration) -> Result<&mut Server, ExecError> {
        if !self.servers.contains_key(key) {
            if self.servers.len() >= MAX_SERVERS {
                let oldest = self
                    .servers
                    .iter()
                    .min_by_key(|(_, (_, used))| *used)
                    .map(|(k, _)| k.clone());
                if let Some(oldest) = oldest {
                    self.servers.remove(&oldest);
                }
            }
            let args = self.serve_args.clone().unwrap_or_default();
            let server = Server::start(&self.program, &args, limit)?;
            self.servers.insert(key.clone(), (server, 0));
        }
        let (server, used) = self
            .servers
            .get_mut(key)
            .ok_or_else(|| ExecError::Child("has no server".into()))?;
        *used = self.runs;
        Ok(server)
    }

    /// Busy CPU time of the whole machine in nanoseconds; `None` without /proc/stat. Read
    /// before and after every run whose monitors did not read it (see [`RunClocks`]), through
    /// a [`Reader`] that keeps the file open.
    fn machine_busy_ns(&mut self) -> Option<i64> {
        let path = self.roots.proc_root.join("stat");
        let text = self.proc_stat.read(&path).ok()?;
        Some(ticks_ns(parse_proc_stat_cpu(text).ok()?.busy()))
    }
}

/// Clock ticks of /proc/stat in nanoseconds.
fn ticks_ns(ticks: u64) -> i64 {
    (ticks as i128 * 1_000_000_000 / clock_ticks_per_second() as i128) as i64
}

fn timeval_ns(tv: libc::timeval) -> i64 {
    tv.tv_sec * 1_000_000_000 + tv.tv_usec * 1_000
}

/// CPU time of this process (all its threads), in nanoseconds (getrusage(2), RUSAGE_SELF).
fn self_cpu_ns() -> i64 {
    // SAFETY: an all-zero rusage is valid; getrusage only writes into it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    timeval_ns(ru.ru_utime) + timeval_ns(ru.ru_stime)
}

/// The clocks read around one run, spawned or served alike: its wall-clock span, the
/// controller's own CPU time and the machine's busy time. What the machine spent beyond the
/// run's processes and the controller is the CPU time of everything else (`foreign_cpu_ns`).
///
/// The machine's busy time comes from /proc/stat before and after the run. When the `stat`
/// monitor samples the run, its start and end samples have just read that file, and their
/// values are taken ([`RunSampler::machine_busy_ticks`]) rather than the file read twice more
/// (about 8 us a read on a 2-vCPU KVM guest); otherwise the clocks read it themselves,
/// after the start sample and before the end sample. Either way the reads enclose the run.
struct RunClocks {
    started_at_ns: i64,
    controller_before_ns: i64,
    busy_before_ns: Option<i64>,
}

/// [`RunClocks`] once the run has ended.
struct RunSpan {
    started_at_ns: i64,
    ended_at_ns: i64,
    controller_cpu_ns: i64,
    machine_busy_ns: Option<i64>,
}

impl RunClocks {
    fn start() -> Self {
        let controller_before_ns = self_cpu_ns();
        RunClocks {
            started_at_ns: unix_now_ns(),
            controller_before_ns,
            busy_before_ns: None,
        }
    }

    /// Reads the machine's busy time before the run: from the start sample of the run's
    /// monitors when they read it, else from /proc/stat now.
    fn busy_before(
        &mut self,
        executor: &mut ProcessExecutor,
        sampler: Option<&Result<RunSampler, RunMonitorData>>,
    ) {
        let sampled = sampler.and_then(|s| s.as_ref().ok()?.machine_busy_ticks());
        self.busy_before_ns = match sampled {
            Some(ticks) => Some(ticks_ns(ticks)),
            None => executor.machine_busy_ns(),
        };
    }

    /// Stops the CPU clocks of a run that ended at `ended_at_ns` (read by the caller as soon
    /// as the run ended, before the monitors are collected), with the machine's busy time as
    /// the end sample of the run's monitors read it (`busy_after_ticks`), or else read now.
    fn stop(
        self,
        executor: &mut ProcessExecutor,
        ended_at_ns: i64,
        busy_after_ticks: Option<u64>,
    ) -> RunSpan {
        let controller_cpu_ns = self_cpu_ns() - self.controller_before_ns;
        let busy_after_ns = match busy_after_ticks {
            Some(ticks) => Some(ticks_ns(ticks)),
            None => executor.machine_busy_ns(),
        };
        let machine_busy_ns = match (self.busy_before_ns, busy_after_ns) {
            (Some(before), Some(after)) => Some(after - before),
            _ => None,
        };
        RunSpan {
            started_at_ns: self.started_at_ns,
            ended_at_ns,
            controller_cpu_ns,
            machine_busy_ns,
        }
    }
}

impl RunSpan {
    fn outcome(
        self,
        (values, histograms): (BTreeMap<String, f64>, Vec<RunHistogram>),
        rusage: Rusage,
        monitors: Option<RunMonitorData>,
    ) -> RunOutcome {
        let foreign_cpu_ns = self
            .machine_busy_ns
            .map_or(0, |busy| busy - rusage.cpu_ns() - self.controller_cpu_ns);
        RunOutcome {
            started_at_ns: self.started_at_ns,
            ended_at_ns: self.ended_at_ns,
            values,
            histograms,
            rusage,
            foreign_cpu_ns,
            controller_cpu_ns: self.controller_cpu_ns,
            monitors,
        }
    }
}

impl Executor for ProcessExecutor {
    fn execute(
        &mut self,
        request: &ChildRequest,
        interrupt: &Interrupt,
    ) -> Result<RunOutcome, ExecError> {
        self.run(request, interrupt, &[])
    }

    fn profile(
        &mut self,
        request: &ChildRequest,
        interrupt: &Interrupt,
        profiler: &Profiler,
    ) -> Result<(RunOutcome, FoldedStacks), ExecError> {
        let dir = tempfile::Builder::new()
            .prefix("vernier-profile-")
            .tempdir()
            .map_err(|e| ExecError::Profile(format!("no temporary directory: {e}")))?;
        let data = dir.path().join("perf.data");
        let outcome = self.run(request, interrupt, &profiler.record_args(&data))?;
        let stacks = profiler
            .collapse(&data)
            .map_err(|e| ExecError::Profile(e.to_string()))?;
        if stacks.total() == 0 {
            return Err(ExecError::Profile(format!(
                "perf recorded no samples of {} at {} Hz",
                profiler.event, profiler.settings.frequency_hz
            )));
        }
        Ok((outcome, stacks))
    }
}

impl ProcessExecutor {
    /// One run whose child is started by the words of `wrapper` (`perf record ... --`) when
    /// there are some; monitors sample only unwrapped measured runs.
    fn run(
        &mut self,
        request: &ChildRequest,
        interrupt: &Interrupt,
        wrapper: &[OsString],
    ) -> Result<RunOutcome, ExecError> {
        let request_json = serde_json::to_vec(request)
            .map_err(|e| ExecError::Child(format!("request cannot be encoded: {e}")))?;
        self.runs += 1;
        let config_key = ConfigKey::new(&request.benchmark, &request.options);
        let limit = self.timeout.limit(
            request
                .options
                .get("duration")
                .map(|_| request.options.float("duration"))
                .or(request.expected_s),
            self.longest_runs.get(&config_key).copied(),
        );
        // A profiled run is a fresh child under perf, also of a served benchmark.
        if wrapper.is_empty() && self.is_served(&request.benchmark) {
            return self.execute_served(request, &request_json, config_key, limit, interrupt);
        }
        let mut clocks = RunClocks::start();
        // The child leads a process group of its own: Ctrl-C at the terminal reaches only the
        // controller, which then ends the whole run (the benchmark's workers included) at once.
        // Dropping the group on an error path kills and reaps what is left of it.
        let mut group = Group::new();
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(&self.program);
                c
            }
            None => Command::new(&self.program),
        };
        let child = group
            .spawn(
                command
                    .args(&self.args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped()),
            )
            .map_err(|source| ExecError::Spawn {
                program: match wrapper.first() {
                    Some(program) => program.to_string_lossy().into_owned(),
                    None => self.program.display().to_string(),
                },
                source,
            })?;
        let pid = child.pid;
        interrupt.set_child(Some(group.signaller()));
        if interrupt.is_requested() {
            interrupt.kill_child();
        }
        // The monitors start before the child has its request, so they see all of its work
        // (the perf counters must exist before it forks its workers). A monitor that cannot
        // start is recorded as a failure; the run goes on.
        // A profiled run's monitors would sample perf too: none.
        let sampler = if wrapper.is_empty() {
            self.start_sampler(request, &config_key, pid)
        } else {
            None
        };
        clocks.busy_before(self, sampler.as_ref());
        let drained = drain_and_wait(&mut group, child, &request_json, limit);
        interrupt.set_child(None);
        let ended_at_ns = unix_now_ns();
        let (monitors, busy_after_ticks) = self.finish_sampler(&config_key, sampler);
        let Drained {
            reply: reply_text,
            stderr: stderr_text,
            timed_out,
            exit,
        } = drained?;
        let span = clocks.stop(self, ended_at_ns, busy_after_ticks);
        if interrupt.is_requested() {
            return Err(ExecError::Interrupted);
        }
        if timed_out {
            return Err(ExecError::Timeout { limit });
        }
        self.note_run_length(config_key, span.started_at_ns, span.ended_at_ns);
        let reply: Option<ChildReply> = serde_json::from_slice(&reply_text).ok();
        let measured = match reply {
            Some(ChildReply::Measured { values, histograms }) => (values, histograms),
            Some(ChildReply::Failed { message }) => return Err(ExecError::Benchmark(message)),
            None => {
                let stderr = String::from_utf8_lossy(&stderr_text);
                let stderr = stderr.trim();
                let how = exit.to_string();
                return Err(ExecError::Child(if stderr.is_empty() {
                    format!("{how} without a result")
                } else {
                    format!("{how} without a result: {stderr}")
                }));
            }
        };
        Ok(span.outcome(measured, exit.rusage, monitors))
    }
}

impl ProcessExecutor {
    /// Starts the monitors for a measured run whose process is `pid` (see [`RunSampler`]),
    /// with those the configuration's last run kept; `None` for a warmup run or without
    /// monitors. A sampler that cannot start is the run's monitor failure; the run goes on.
    fn start_sampler(
        &mut self,
        request: &ChildRequest,
        key: &ConfigKey,
        pid: u32,
    ) -> Option<Result<RunSampler, RunMonitorData>> {
        if request.warmup || self.monitors.is_empty() {
            return None;
        }
        let set = match self.monitor_sets.remove(key) {
            Some((set, _)) => set,
            None => MonitorSet::new(&self.monitors, &self.roots),
        };
        Some(
            RunSampler::start_set(set, pid as i32).map_err(|e| RunMonitorData {
                failures: vec![MonitorFailure {
                    monitor: "sampler".into(),
                    t_ns: 0,
                    message: e.to_string(),
                }],
                ..RunMonitorData::default()
            }),
        )
    }

    /// What the monitors recorded, or why they could not start, and the machine's busy ticks
    /// at the end sample when they read them; keeps the monitors of `key` for its next run.
    fn finish_sampler(
        &mut self,
        key: &ConfigKey,
        sampler: Option<Result<RunSampler, RunMonitorData>>,
    ) -> (Option<RunMonitorData>, Option<u64>) {
        let Some(sampler) = sampler else {
            return (None, None);
        };
        let (data, set, busy) = match sampler {
            Ok(sampler) => sampler.finish_set(),
            Err(data) => (data, None, None),
        };
        if let Some(set) = set {
            if self.monitor_sets.len() >= MAX_SERVERS {
                let oldest = self
                    .monitor_sets
                    .iter()
                    .min_by_key(|(_, (_, used))| *used)
                    .map(|(k, _)| k.clone());
                if let Some(oldest) = oldest {
                    self.monitor_sets.remove(&oldest);
                }
            }
            self.monitor_sets.insert(key.clone(), (set, self.runs));
        }
        (Some(data), busy.map(|b| b.end))
    }

    /// Remembers a completed run's length for [`RunTimeout::Auto`].
    fn note_run_length(&mut self, key: ConfigKey, started_at_ns: i64, ended_at_ns: i64) {
        let wall = Duration::from_nanos(u64::try_from(ended_at_ns - started_at_ns).unwrap_or(0));
        let longest = self.longest_runs.entry(key).or_default();
        *longest = (*longest).max(wall);
    }

    /// [`Executor::execute`] of a served benchmark: the request goes to the configuration's
    /// server (see the module documentation).
    fn execute_served(
        &mut self,
        request: &ChildRequest,
        request_json: &[u8],
        key: ConfigKey,
        limit: Duration,
        interrupt: &Interrupt,
    ) -> Result<RunOutcome, ExecError> {
        let server = self.server(&key, limit)?;
        let (pid, signaller) = (server.pid, server.group.signaller());
        let mut clocks = RunClocks::start();
        interrupt.set_child(Some(signaller));
        if interrupt.is_requested() {
            interrupt.kill_child();
        }
        let sampler = self.start_sampler(request, &key, pid);
        clocks.busy_before(self, sampler.as_ref());
        let answer = match self.servers.get_mut(&key) {
            Some((server, _)) => server.ask(request_json, limit),
            None => Err(Asked::Died),
        };
        interrupt.set_child(None);
        let ended_at_ns = unix_now_ns();
        let (monitors, busy_after_ticks) = self.finish_sampler(&key, sampler);
        let span = clocks.stop(self, ended_at_ns, busy_after_ticks);
        let served = match answer {
            Ok(served) => served,
            Err(failure) => {
                let ended = self.servers.remove(&key).map(|(server, _)| server.end());
                if interrupt.is_requested() {
                    return Err(ExecError::Interrupted);
                }
                return Err(match failure {
                    Asked::TimedOut => ExecError::Timeout { limit },
                    Asked::Died => ExecError::Child(ended.unwrap_or_else(|| "ended".into())),
                    Asked::Garbled(e) => ExecError::Child(format!("answered garbled: {e}")),
                });
            }
        };
        if interrupt.is_requested() {
            return Err(ExecError::Interrupted);
        }
        let measured = match served.reply {
            ChildReply::Measured { values, histograms } => (values, histograms),
            ChildReply::Failed { message } => {
                // A fresh server for the next run: nothing of a failed run stays.
                self.servers.remove(&key);
                return Err(ExecError::Benchmark(message));
            }
        };
        self.note_run_length(key, span.started_at_ns, span.ended_at_ns);
        Ok(span.outcome(measured, served.rusage, monitors))
    }
}

/// A run process that serves a configuration's runs (see the module documentation).
#[derive(Debug)]
struct Server {
    group: Group,
    pid: u32,
    stdin: Option<ChildStdin>,
    /// Its standard output, read line by line by the controller's thread itself.
    lines: Lines,
    /// The end of its standard error, read by a thread of its own.
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Closed when that thread has read the standard error to its end.
    stderr_read: mpsc::Receiver<()>,
}

/// How long a server that failed is given to exit by itself, before it is killed.
const SERVER_END_WAIT: Duration = Duration::from_secs(1);

/// Why a served run has no answer.
enum Asked {
    /// The run exceeded its limit; the server's group was killed.
    TimedOut,
    /// The server ended (or was killed) before it answered.
    Died,
    /// The answer is not a [`ServedReply`].
    Garbled(String),
}

impl Server {
    /// Starts `program args...` and waits up to `limit` for it to say that it is ready.
    fn start(
        program: &std::path::Path,
        args: &[String],
        limit: Duration,
    ) -> Result<Self, ExecError> {
        let mut group = Group::new();
        let spawned = group
            .spawn(
                Command::new(program)
                    .args(args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped()),
            )
            .map_err(|source| ExecError::Spawn {
                program: program.display().to_string(),
                source,
            })?;
        let no_thread =
            |e: std::io::Error| ExecError::Child(format!("cannot be supervised (no thread): {e}"));
        let Some(stdout) = spawned.stdout else {
            return Err(ExecError::Child("has no standard output".into()));
        };
        let lines = Lines::new(stdout);
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (stderr_reader, stderr_read) = mpsc::channel::<()>();
        if let Some(mut pipe) = spawned.stderr {
            let kept = Arc::clone(&stderr);
            std::thread::Builder::new()
                .name("run-server-err".into())
                .spawn(move || {
                    let _closed_at_the_end = stderr_reader;
                    let mut buf = [0u8; 8192];
                    loop {
                        match pipe.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => {
                                let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                                kept.extend_from_slice(&buf[..n]);
                                if kept.len() > 2 * STDERR_KEEP {
                                    let excess = kept.len() - STDERR_KEEP;
                                    kept.drain(..excess);
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(_) => break,
                        }
                    }
                })
                .map_err(no_thread)?;
        }
        let mut server = Server {
            group,
            pid: spawned.pid,
            stdin: spawned.stdin,
            lines,
            stderr,
            stderr_read,
        };
        match server.lines.next_within(limit) {
            Ok(line) if line.trim_ascii() == SERVER_READY.as_bytes() => Ok(server),
            Ok(line) => Err(ExecError::Child(format!(
                "started as a server, said '{}' instead of '{SERVER_READY}'",
                String::from_utf8_lossy(line.trim_ascii())
            ))),
            Err(NoLine::TimedOut) => Err(ExecError::Timeout { limit }),
            Err(NoLine::Closed) => Err(ExecError::Child(
                server.end().replace("ended", "ended at its start"),
            )),
        }
    }

    /// Sends one request line and waits up to `limit` for its answer; kills the server's
    /// group at the limit.
    fn ask(&mut self, request_json: &[u8], limit: Duration) -> Result<ServedReply, Asked> {
        // The request and its newline in one write(2): written apart, the first write wakes
        // the server, which reads, finds no end of line and sleeps until the second.
        let mut line = Vec::with_capacity(request_json.len() + 1);
        line.extend_from_slice(request_json);
        line.push(b'\n');
        let sent = self
            .stdin
            .as_mut()
            .is_some_and(|stdin| stdin.write_all(&line).and_then(|_| stdin.flush()).is_ok());
        if !sent {
            return Err(Asked::Died);
        }
        match self.lines.next_within(limit) {
            Ok(line) => serde_json::from_slice(&line).map_err(|e| Asked::Garbled(e.to_string())),
            Err(NoLine::TimedOut) => {
                self.group.kill();
                Err(Asked::TimedOut)
            }
            Err(NoLine::Closed) => Err(Asked::Died),
        }
    }

    /// Ends the server (its group killed, its leader reaped) and says how it ended, with the
    /// end of its standard error: "exited with status 1 ...".
    fn end(mut self) -> String {
        // A server that closed its output is exiting: its own status says why, unless it
        // does not come soon.
        self.stdin = None;
        let exit = match self.group.wait_within(self.pid, SERVER_END_WAIT) {
            Ok(Some(exit)) => Ok(exit),
            _ => {
                self.group.kill();
                self.group.wait(self.pid)
            }
        };
        let how = match exit {
            Ok(exit) => exit.to_string(),
            Err(e) => format!("cannot be waited for: {e}"),
        };
        // Its last words may still be in the pipe when it has exited: the reader gets them
        // before the message is made (bounded: a process that inherited the pipe may hold it).
        let _ = self.stderr_read.recv_timeout(SERVER_END_WAIT);
        let stderr = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        let stderr = String::from_utf8_lossy(&stderr);
        let stderr = stderr.trim();
        if stderr.is_empty() {
            format!("{how} without a result")
        } else {
            format!("{how} without a result: {stderr}")
        }
    }
}

/// A server's standard output, read line by line in the caller's thread with a time limit
/// (poll(2)): a reply wakes the thread that waits for it, not a reader thread that would then
/// wake it (on a 2-vCPU KVM guest each wake-up on another CPU costs tens of microseconds).
#[derive(Debug)]
struct Lines {
    pipe: ChildStdout,
    /// What was read beyond the last line returned.
    pending: Vec<u8>,
    closed: bool,
}

/// Why [`Lines::next_within`] returned no line.
#[derive(Debug, PartialEq)]
enum NoLine {
    TimedOut,
    /// The pipe ended (the server exited or closed it) before a whole line.
    Closed,
}

impl Lines {
    fn new(pipe: ChildStdout) -> Self {
        Lines {
            pipe,
            pending: Vec::with_capacity(4096),
            closed: false,
        }
    }

    /// The next line, its newline included, within `limit`.
    fn next_within(&mut self, limit: Duration) -> Result<Vec<u8>, NoLine> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                return Ok(self.pending.drain(..=end).collect());
            }
            if self.closed {
                return Err(NoLine::Closed);
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(NoLine::TimedOut);
            }
            let mut poll = libc::pollfd {
                fd: self.pipe.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = poll_ms(left);
            // SAFETY: one valid pollfd.
            let ready = unsafe { libc::poll(&mut poll, 1, ms) };
            if ready < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                self.closed = true;
                continue;
            }
            if ready == 0 {
                continue;
            }
            // Readable, or hung up: read() returns what there is, or 0 at the end.
            let mut buf = [0u8; 8192];
            match self.pipe.read(&mut buf) {
                Ok(0) => self.closed = true,
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => self.closed = true,
            }
        }
    }
}

/// Most of the child's stderr kept for the error message (its end, where a panic or the last
/// error is).
const STDERR_KEEP: usize = 64 * 1024;

/// What [`drain_and_wait`] got from the child.
struct Drained {
    reply: Vec<u8>,
    /// The end of its standard error.
    stderr: Vec<u8>,
    /// The process group was killed because the run exceeded its limit.
    timed_out: bool,
    exit: Exit,
}

/// One of the child's pipes in [`drain_and_wait`]'s poll(2) loop, `None` once closed.
enum Pipe {
    /// Its standard input, with the part of the request not yet written.
    In(std::process::ChildStdin, usize),
    Out(ChildStdout),
    Err(std::process::ChildStderr),
}

/// Writes the request to the child, reads its stdout and stderr to their ends and reaps it,
/// with its wait status and resource usage (wait4(2); the usage includes the descendants it
/// reaped itself, such as a benchmark's forked workers). The process group is killed if the
/// run exceeds `limit`; the group signals nothing once its leader is reaped, so the kill
/// cannot hit a process that took over the id.
///
/// All of it happens in the caller's thread, in one poll(2) loop over the three pipes whose
/// timeout is the run's limit: the pipes are drained at the same time (read one after the
/// other, a child that fills the stderr pipe, 64 KiB by pipe(7), before closing stdout would
/// block forever while the controller waits on stdout), and neither a reader thread nor a
/// watchdog thread has to be started, woken and joined in every run. On a loaded machine each
/// such hand-off waited for a CPU (2-9 ms at 4 busy loops on 2 vCPUs, bench/startup.sh).
fn drain_and_wait(
    group: &mut Group,
    child: Spawned,
    request_json: &[u8],
    limit: Duration,
) -> Result<Drained, ExecError> {
    let deadline = std::time::Instant::now() + limit;
    let mut timed_out = false;
    let mut pipes: Vec<Pipe> = Vec::with_capacity(3);
    if let Some(stdin) = child.stdin {
        // Not blocking: a child that does not read its request must not stop the loop.
        set_nonblocking(stdin.as_raw_fd());
        pipes.push(Pipe::In(stdin, 0));
    }
    pipes.extend(child.stdout.map(Pipe::Out));
    pipes.extend(child.stderr.map(Pipe::Err));
    let (mut reply, mut stderr) = (Vec::new(), Vec::new());
    let mut buf = [0u8; 8192];
    while !pipes.is_empty() {
        let mut polled: Vec<libc::pollfd> = pipes
            .iter()
            .map(|pipe| {
                let (fd, events) = match pipe {
                    Pipe::In(p, _) => (p.as_raw_fd(), libc::POLLOUT),
                    Pipe::Out(p) => (p.as_raw_fd(), libc::POLLIN),
                    Pipe::Err(p) => (p.as_raw_fd(), libc::POLLIN),
                };
                libc::pollfd {
                    fd,
                    events,
                    revents: 0,
                }
            })
            .collect();
        // After the kill, the pipes close as the group dies: no limit any more.
        let ms = if timed_out {
            -1
        } else {
            poll_ms(deadline.saturating_duration_since(std::time::Instant::now()))
        };
        // SAFETY: `polled` is a valid array of `polled.len()` pollfds.
        let ready = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, ms) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // Cannot happen with valid descriptors; the pipes are given up, the child is not.
            break;
        }
        if ready == 0 {
            if std::time::Instant::now() >= deadline {
                timed_out = true;
                group.kill();
            }
            continue;
        }
        let mut closed = [false; 3];
        for (i, (pipe, polled)) in pipes.iter_mut().zip(&polled).enumerate() {
            if polled.revents == 0 {
                continue;
            }
            closed[i] = match pipe {
                Pipe::In(stdin, written) => match stdin.write(&request_json[*written..]) {
                    Ok(n) => {
                        *written += n;
                        // All written: closing it ends the request.
                        *written == request_json.len()
                    }
                    Err(e) => !matches!(
                        e.kind(),
                        std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                    ),
                },
                Pipe::Out(stdout) => drain_some(stdout, &mut buf, &mut reply, usize::MAX),
                Pipe::Err(pipe) => drain_some(pipe, &mut buf, &mut stderr, STDERR_KEEP),
            };
        }
        let mut i = 0;
        pipes.retain(|_| {
            i += 1;
            !closed[i - 1]
        });
    }
    // The pipes can close before the child exits (or stay open after it did, held by a
    // worker): the limit holds until the child itself has exited.
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    let exit = match group.wait_within(child.pid, left) {
        Ok(Some(exit)) => Ok(exit),
        Ok(None) => {
            timed_out = true;
            group.kill();
            group.wait(child.pid)
        }
        Err(e) => Err(e),
    };
    let exit = exit.map_err(|e| ExecError::Child(format!("cannot be waited for: {e}")))?;
    Ok(Drained {
        reply,
        stderr,
        timed_out,
        exit,
    })
}

/// One read from a readable (or hung up) pipe into `kept`, of which at most about `keep`
/// bytes stay (its end); true when the pipe has ended.
fn drain_some(pipe: &mut impl Read, buf: &mut [u8], kept: &mut Vec<u8>, keep: usize) -> bool {
    match pipe.read(buf) {
        Ok(0) => true,
        Ok(n) => {
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > keep.saturating_mul(2) {
                kept.drain(..kept.len() - keep);
            }
            false
        }
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
        ),
    }
}

/// A poll(2) timeout for `left`: rounded up, so that a limit is never cut short, and at most
/// i32::MAX ms per call.
fn poll_ms(left: Duration) -> i32 {
    i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX)
}

/// Sets O_NONBLOCK on descriptor `fd` (fcntl(2)); left blocking if that fails.
fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl(2) F_GETFL/F_SETFL on a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn request() -> ChildRequest {
        serde_json::from_str(r#"{"benchmark":"mock","options":{},"warmup":true,"index":0}"#)
            .unwrap()
    }

    /// A child that is the shell script `script` (it reads the request from stdin itself).
    fn shell(script: &str, timeout: RunTimeout) -> ProcessExecutor {
        let mut e = ProcessExecutor::new("/bin/sh".into(), vec!["-c".into(), script.into()]);
        e.timeout = timeout;
        e
    }

    const REPLY: &str = r#"printf '{"measured":{"values":{"value":1.5}}}'"#;

    #[test]
    fn a_servers_lines_are_read_whole_within_their_limit() {
        let piped = |script: &str| {
            Command::new("/bin/sh")
                .args(["-c", script])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let mut child = piped("printf 'one\\ntwo\\n'; printf 'three\\npart'");
        let mut lines = Lines::new(child.stdout.take().unwrap());
        let limit = Duration::from_secs(60);
        for expected in ["one\n", "two\n", "three\n"] {
            assert_eq!(lines.next_within(limit).unwrap(), expected.as_bytes());
        }
        // A line cut off by the end of the pipe is none.
        assert_eq!(lines.next_within(limit), Err(NoLine::Closed));
        assert_eq!(lines.next_within(limit), Err(NoLine::Closed));
        child.wait().unwrap();

        // Nothing within the limit: it says so and can wait again.
        let mut child = piped("exec sleep 60");
        let mut lines = Lines::new(child.stdout.take().unwrap());
        assert_eq!(
            lines.next_within(Duration::from_millis(20)),
            Err(NoLine::TimedOut)
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(lines.next_within(limit), Err(NoLine::Closed));
    }

    #[test]
    fn stderr_beyond_a_pipe_buffer_does_not_block_the_run() {
        // 200 KB on stderr before the reply: read one after the other, the child blocks on a
        // full stderr pipe while the controller waits for stdout. The timeout turns that
        // regression into a failure instead of a hang.
        let script = format!("cat >/dev/null; head -c 200000 /dev/zero | tr '\\0' x >&2; {REPLY}");
        let mut e = shell(&script, RunTimeout::Fixed(Duration::from_secs(120)));
        let outcome = e.execute(&request(), &Interrupt::new()).unwrap();
        assert_eq!(outcome.values["value"], 1.5);
    }

    #[test]
    fn a_failing_childs_error_keeps_the_end_of_a_long_stderr() {
        let script = "cat >/dev/null; head -c 300000 /dev/zero | tr '\\0' x >&2; \
                      echo 'the last words' >&2; exit 3";
        let mut e = shell(script, RunTimeout::Fixed(Duration::from_secs(120)));
        let err = e.execute(&request(), &Interrupt::new()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("exited with status 3"), "{}", &text[..80]);
        assert!(
            text.ends_with("the last words"),
            "{}",
            &text[text.len() - 80..]
        );
        assert!(text.len() <= 2 * STDERR_KEEP + 200, "{}", text.len());
    }

    #[test]
    fn a_run_beyond_its_timeout_is_killed_with_its_process_group() {
        // `sleep` is a child of the shell in the same process group and holds stdout open:
        // unless the whole group is killed, the controller never sees the end of stdout.
        let script = "cat >/dev/null; sleep 1000; true";
        let limit = Duration::from_millis(200);
        let mut e = shell(script, RunTimeout::Fixed(limit));
        let err = e.execute(&request(), &Interrupt::new()).unwrap_err();
        assert!(
            matches!(err, ExecError::Timeout { limit: l } if l == limit),
            "{err}"
        );
        assert!(err.to_string().contains("time limit of 0.2 s"), "{err}");
    }

    /// A request of the served benchmark `command`.
    fn served_request() -> ChildRequest {
        serde_json::from_str(r#"{"benchmark":"command","options":{},"warmup":false,"index":0}"#)
            .unwrap()
    }

    /// A server that is the shell script `script`, started for `command`'s runs.
    fn shell_server(script: &str, timeout: RunTimeout) -> ProcessExecutor {
        let mut e = shell(script, timeout);
        e.serve_args = Some(e.args.clone());
        e
    }

    /// Answers each request line with its own pid as the value, after the ready line.
    const PID_SERVER: &str = r#"echo ready; while read -r line; do
        printf '{"reply":{"measured":{"values":{"value":%s}}},"rusage":{"user_cpu_ns":1,"system_cpu_ns":2,"voluntary_cs":0,"involuntary_cs":0,"max_rss_bytes":4096}}\n' $$
    done"#;

    #[test]
    fn a_served_configuration_runs_in_one_process_and_a_failed_one_is_replaced() {
        let mut e = shell_server(PID_SERVER, RunTimeout::Fixed(Duration::from_secs(120)));
        let run = |e: &mut ProcessExecutor| e.execute(&served_request(), &Interrupt::new());
        let first = run(&mut e).unwrap();
        assert_eq!(first.rusage.cpu_ns(), 3);
        assert_eq!(first.rusage.max_rss_bytes, 4096);
        let pid = first.values["value"];
        assert_eq!(run(&mut e).unwrap().values["value"], pid);
        assert_eq!(e.servers.len(), 1);
        // Another benchmark still gets a fresh process per run (the plain child protocol).
        let mut plain = request();
        plain.benchmark = "mock".into();
        assert!(e.execute(&plain, &Interrupt::new()).is_err());
        assert_eq!(e.servers.len(), 1);
        // Killed from outside, the server's run fails with how it ended; the next run has a
        // new server.
        // SAFETY: kill(2) of the server this test started.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let err = run(&mut e).unwrap_err().to_string();
        assert!(err.contains("was killed by signal 9"), "{err}");
        assert!(e.servers.is_empty());
        assert_ne!(run(&mut e).unwrap().values["value"], pid);
    }

    #[test]
    fn a_served_run_beyond_its_timeout_kills_the_server() {
        let script = "echo ready; read -r line; sleep 1000";
        let limit = Duration::from_millis(300);
        let mut e = shell_server(script, RunTimeout::Fixed(limit));
        let err = e.execute(&served_request(), &Interrupt::new()).unwrap_err();
        assert!(
            matches!(err, ExecError::Timeout { limit: l } if l == limit),
            "{err}"
        );
        assert!(e.servers.is_empty());
    }

    #[test]
    fn a_server_that_fails_to_start_says_why() {
        let mut e = shell_server(
            "echo 'no such thing' >&2; exit 3",
            RunTimeout::Fixed(Duration::from_secs(120)),
        );
        let err = e
            .execute(&served_request(), &Interrupt::new())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("exited with status 3") && err.contains("no such thing"),
            "{err}"
        );
    }

    #[test]
    fn auto_timeout_follows_the_benchmark() {
        let s = Duration::from_secs;
        let auto = RunTimeout::Auto;
        assert_eq!(auto.limit(None, None), AUTO_TIMEOUT_FIRST);
        assert_eq!(auto.limit(Some(5.0), None), s(110));
        assert_eq!(auto.limit(None, Some(s(2))), AUTO_TIMEOUT_FLOOR);
        assert_eq!(auto.limit(None, Some(s(30))), s(300));
        assert_eq!(auto.limit(Some(5.0), Some(s(30))), s(300));
        assert_eq!(auto.limit(Some(f64::NAN), None), AUTO_TIMEOUT_FIRST);
        assert_eq!(RunTimeout::Fixed(s(7)).limit(Some(5.0), Some(s(30))), s(7));
    }

    #[test]
    fn auto_timeout_remembers_each_configurations_longest_run() {
        let mut e = shell(&format!("cat >/dev/null; {REPLY}"), RunTimeout::Auto);
        e.execute(&request(), &Interrupt::new()).unwrap();
        let key = ConfigKey::new("mock", &request().options);
        let longest = e.longest_runs[&key];
        assert!(longest > Duration::ZERO && longest < AUTO_TIMEOUT_FLOOR);
        assert_eq!(e.longest_runs.len(), 1);
    }
}
