//! Executes one run: the real executor starts a fresh child process; tests substitute a
//! scripted one.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use vernier_model::monitor::{MonitorFailure, RunMonitorData};
use vernier_model::Rusage;
use vernier_monitor::{MonitorRoots, MonitorSpec, RunSampler};
use vernier_sys::clock::{clock_ticks_per_second, unix_now_ns};
use vernier_sys::procstat::read_proc_stat_cpu;

use crate::child::{ChildReply, ChildRequest};
use crate::interrupt::Interrupt;

/// What one run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub started_at_ns: i64,
    pub ended_at_ns: i64,
    pub values: BTreeMap<String, f64>,
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
    #[error("interrupted")]
    Interrupted,
}

/// Executes single runs.
pub trait Executor {
    fn execute(
        &mut self,
        request: &ChildRequest,
        interrupt: &Interrupt,
    ) -> Result<RunOutcome, ExecError>;
}

/// Runs each request in a fresh child process: `program args...` reading the request on stdin.
#[derive(Debug, Clone)]
pub struct ProcessExecutor {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Root of procfs, for the foreign-CPU signal.
    pub proc_root: PathBuf,
    /// Monitors sampled in this process during every measured run.
    pub monitors: Vec<MonitorSpec>,
    pub monitor_roots: MonitorRoots,
}

impl ProcessExecutor {
    pub fn new(program: PathBuf, args: Vec<String>) -> Self {
        ProcessExecutor {
            program,
            args,
            proc_root: PathBuf::from("/proc"),
            monitors: Vec::new(),
            monitor_roots: MonitorRoots::default(),
        }
    }

    /// Busy CPU time of the whole machine in nanoseconds; `None` without /proc/stat.
    fn machine_busy_ns(&self) -> Option<i64> {
        let ticks = read_proc_stat_cpu(&self.proc_root).ok()?.busy();
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
        let request_json = serde_json::to_vec(request)
            .map_err(|e| ExecError::Child(format!("request cannot be encoded: {e}")))?;
        let busy_before = self.machine_busy_ns();
        let controller_before = self_cpu_ns();
        let started_at_ns = unix_now_ns();
        // The child leads a process group of its own: Ctrl-C at the terminal reaches only the
        // controller, which then ends the whole run (the benchmark's workers included) at once.
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|source| ExecError::Spawn {
                program: self.program.display().to_string(),
                source,
            })?;
        let pid = child.id() as i32;
        interrupt.set_child_group(pid);
        if interrupt.is_requested() {
            interrupt.kill_child();
        }
        // The monitors start before the child has its request, so they see all of its work
        // (the perf counters must exist before it forks its workers). A monitor that cannot
        // start is recorded as a failure; the run goes on.
        let sampler = if request.warmup || self.monitors.is_empty() {
            None
        } else {
            Some(
                RunSampler::start(&self.monitors, &self.monitor_roots, pid).map_err(|e| {
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
        let mut reply_text = Vec::new();
        let mut stderr_text = Vec::new();
        if let Some(mut stdin) = child.stdin.take() {
            // A child that died early makes this fail with EPIPE; its exit status tells why.
            let _ = stdin.write_all(&request_json);
        }
        if let Some(mut stdout) = child.stdout.take() {
            let _ = stdout.read_to_end(&mut reply_text);
        }
        if let Some(mut stderr) = child.stderr.take() {
            let _ = stderr.read_to_end(&mut stderr_text);
        }
        interrupt.set_child_group(0);
        let waited = wait4(pid);
        let ended_at_ns = unix_now_ns();
        let monitors = sampler.map(|s| match s {
            Ok(sampler) => sampler.finish(),
            Err(data) => data,
        });
        let (status, ru) = waited?;
        let controller_cpu_ns = self_cpu_ns() - controller_before;
        let busy_after = self.machine_busy_ns();
        if interrupt.is_requested() {
            return Err(ExecError::Interrupted);
        }
        let rusage = Rusage {
            user_cpu_ns: timeval_ns(ru.ru_utime),
            system_cpu_ns: timeval_ns(ru.ru_stime),
            voluntary_cs: ru.ru_nvcsw,
            involuntary_cs: ru.ru_nivcsw,
            // ru_maxrss is in kilobytes (getrusage(2)).
            max_rss_bytes: ru.ru_maxrss * 1024,
        };
        let reply: Option<ChildReply> = serde_json::from_slice(&reply_text).ok();
        let values = match reply {
            Some(ChildReply::Measured { values }) => values,
            Some(ChildReply::Failed { message }) => return Err(ExecError::Benchmark(message)),
            None => {
                let stderr = String::from_utf8_lossy(&stderr_text);
                let stderr = stderr.trim();
                let how = if libc::WIFSIGNALED(status) {
                    format!("was killed by signal {}", libc::WTERMSIG(status))
                } else {
                    format!("exited with status {}", libc::WEXITSTATUS(status))
                };
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
            rusage,
            foreign_cpu_ns,
            controller_cpu_ns,
            monitors,
        })
    }
}

/// Reaps `pid`, returning its wait status and resource usage (wait4(2)); the usage includes
/// the descendants it reaped itself, such as a benchmark's forked workers.
fn wait4(pid: i32) -> Result<(i32, libc::rusage), ExecError> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 only writes into `status` and `ru`.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to local variables.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            return Ok((status, ru));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(ExecError::Child(format!("cannot be waited for: {err}")));
        }
    }
}
