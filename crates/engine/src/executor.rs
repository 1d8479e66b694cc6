//! Executes one run: the real executor starts a fresh child process; tests substitute a
//! scripted one.
//!
//! The child's stdout (the reply) and stderr (diagnostics) are drained at the same time, stderr
//! by a thread of its own: read one after the other, a child that fills the stderr pipe
//! (64 KiB, pipe(7)) before closing stdout would block forever while the controller waits on
//! stdout. The child leads a process group of its own ([`Group`]); a watchdog thread kills the
//! whole group when the run exceeds its [`RunTimeout`], so a hung benchmark or kernel ends as a
//! failed run instead of hanging the session.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use vernier_model::monitor::{MonitorFailure, RunMonitorData};
use vernier_model::{ConfigKey, FoldedStacks, RunHistogram, Rusage};
use vernier_monitor::{MonitorSpec, RunSampler};
use vernier_sys::clock::{clock_ticks_per_second, unix_now_ns};
use vernier_sys::process::{Exit, Group, Signaller, Spawned};
use vernier_sys::procstat::read_proc_stat_cpu;
use vernier_sys::Roots;

use crate::child::{ChildReply, ChildRequest};
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
#[derive(Debug, Clone)]
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
}

impl ProcessExecutor {
    pub fn new(program: PathBuf, args: Vec<String>) -> Self {
        ProcessExecutor {
            program,
            args,
            roots: Roots::real(),
            monitors: Vec::new(),
            timeout: RunTimeout::Auto,
            longest_runs: HashMap::new(),
        }
    }

    /// Busy CPU time of the whole machine in nanoseconds; `None` without /proc/stat.
    fn machine_busy_ns(&self) -> Option<i64> {
        let ticks = read_proc_stat_cpu(&self.roots.proc_root).ok()?.busy();
        Some((ticks as i128 * 1_000_000_000 / clock_ticks_per_second() as i128) as i64)
    }
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
        let busy_before = self.machine_busy_ns();
        let controller_before = self_cpu_ns();
        let started_at_ns = unix_now_ns();
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
        let sampler = if request.warmup || self.monitors.is_empty() || !wrapper.is_empty() {
            None
        } else {
            Some(
                RunSampler::start(&self.monitors, &self.roots, pid as i32).map_err(|e| {
                    RunMonitorData {
                        failures: vec![MonitorFailure {
                            monitor: "sampler".into(),
                            t_ns: 0,
                            message: e.to_string(),
                        }],
                        ..RunMonitorData::default()
                    }
                }),
            )
        };
        let config_key = ConfigKey::new(&request.benchmark, &request.options);
        let limit = self.timeout.limit(
            request
                .options
                .get("duration")
                .map(|_| request.options.float("duration"))
                .or(request.expected_s),
            self.longest_runs.get(&config_key).copied(),
        );
        let drained = drain_and_wait(&mut group, child, &request_json, limit);
        interrupt.set_child(None);
        let ended_at_ns = unix_now_ns();
        let monitors = sampler.map(|s| match s {
            Ok(sampler) => sampler.finish(),
            Err(data) => data,
        });
        let Drained {
            reply: reply_text,
            stderr: stderr_text,
            timed_out,
            exit,
        } = drained?;
        let controller_cpu_ns = self_cpu_ns() - controller_before;
        let busy_after = self.machine_busy_ns();
        if interrupt.is_requested() {
            return Err(ExecError::Interrupted);
        }
        if timed_out {
            return Err(ExecError::Timeout { limit });
        }
        let wall = Duration::from_nanos(u64::try_from(ended_at_ns - started_at_ns).unwrap_or(0));
        let longest = self.longest_runs.entry(config_key).or_default();
        *longest = (*longest).max(wall);
        let rusage = exit.rusage;
        let reply: Option<ChildReply> = serde_json::from_slice(&reply_text).ok();
        let (values, histograms) = match reply {
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
        let foreign_cpu_ns = match (busy_before, busy_after) {
            (Some(b), Some(a)) => a - b - rusage.cpu_ns() - controller_cpu_ns,
            _ => 0,
        };
        Ok(RunOutcome {
            started_at_ns,
            ended_at_ns,
            values,
            histograms,
            rusage,
            foreign_cpu_ns,
            controller_cpu_ns,
            monitors,
        })
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
    /// The watchdog killed the process group because the run exceeded its limit.
    timed_out: bool,
    exit: Exit,
}

/// Writes the request to the child, reads its stdout and stderr to their ends at the same time
/// and reaps it, with its wait status and resource usage (wait4(2); the usage includes the
/// descendants it reaped itself, such as a benchmark's forked workers). A watchdog kills the
/// process group if the run exceeds `limit`; the group signals nothing once its leader is
/// reaped, so the watchdog cannot hit a process that took over the id.
fn drain_and_wait(
    group: &mut Group,
    child: Spawned,
    request_json: &[u8],
    limit: Duration,
) -> Result<Drained, ExecError> {
    let signaller = group.signaller();
    let spawn_failed = |e: std::io::Error| {
        signaller.kill();
        ExecError::Child(format!("cannot be supervised (no thread): {e}"))
    };
    let stderr = child.stderr;
    let stderr_reader = std::thread::Builder::new()
        .name("run-stderr".into())
        .spawn(move || {
            let mut kept = Vec::new();
            if let Some(mut stderr) = stderr {
                let mut buf = [0u8; 8192];
                loop {
                    match stderr.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            kept.extend_from_slice(&buf[..n]);
                            if kept.len() > 2 * STDERR_KEEP {
                                kept.drain(..kept.len() - STDERR_KEEP);
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            }
            kept
        })
        .map_err(spawn_failed)?;
    let timed_out = Arc::new(AtomicBool::new(false));
    let (exited_tx, exited_rx) = mpsc::channel::<()>();
    let watchdog = {
        let timed_out = Arc::clone(&timed_out);
        let signaller: Signaller = group.signaller();
        std::thread::Builder::new()
            .name("run-watchdog".into())
            .spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = exited_rx.recv_timeout(limit) {
                    timed_out.store(true, Ordering::SeqCst);
                    signaller.kill();
                }
            })
            .map_err(spawn_failed)
    };
    let watchdog = match watchdog {
        Ok(w) => w,
        Err(e) => {
            let _ = stderr_reader.join();
            return Err(e);
        }
    };
    if let Some(mut stdin) = child.stdin {
        // A child that died early makes this fail with EPIPE; its exit status tells why.
        let _ = stdin.write_all(request_json);
    }
    let mut reply = Vec::new();
    if let Some(mut stdout) = child.stdout {
        let _ = stdout.read_to_end(&mut reply);
    }
    let stderr = stderr_reader.join().unwrap_or_default();
    // The pipes can close before the child exits (or stay open after it did, held by a
    // worker): the watchdog runs until the child itself has exited.
    let exit = group.wait(child.pid);
    let _ = exited_tx.send(());
    let _ = watchdog.join();
    let exit = exit.map_err(|e| ExecError::Child(format!("cannot be waited for: {e}")))?;
    Ok(Drained {
        reply,
        stderr,
        timed_out: timed_out.load(Ordering::SeqCst),
        exit,
    })
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
