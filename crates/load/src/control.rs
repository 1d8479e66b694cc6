//! The controller's side: start the supervisors of a [`LoadPlan`], wait until each runs, and
//! stop them again with what their CPU time was.
//!
//! The CPU time of a load is the user and system time wait4(2) reports for its supervisor,
//! which includes every descendant it reaped, minus what the load had used when it was
//! reported ready (read from /proc/PID/stat of its process group, proc(5)), so that the start
//! check's time before the measured run is not counted.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use vernier_sys::clock::monotonic_ns;
use vernier_sys::process::{die_with_parent, tree_cpu_ns, Group};

use crate::spec::{LoadError, LoadPlan};

/// How long a supervisor may take to report ready, beyond its start check.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a supervisor has after SIGTERM to kill its load and exit before the controller
/// kills its whole process group.
const GRACE: Duration = Duration::from_secs(3);
/// Most of a supervisor's standard error kept for messages.
const STDERR_KEEP: usize = 16 * 1024;

/// What the loads of one measured run used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadUsage {
    /// CPU time of every load process from the moment the loads ran until they were stopped.
    pub cpu_ns: i64,
    /// Loads that failed while they ran (their supervisor ended before it was stopped), or
    /// whose temporary directory could not be removed; one line each.
    pub problems: Vec<String>,
}

/// One supervisor, the leader of its process group.
struct LoadProcess {
    spec: String,
    group: Group,
    pid: u32,
    /// Its CPU time when it reported ready.
    baseline_ns: i64,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: mpsc::Receiver<()>,
    reaped: bool,
}

/// Loads that run; [`RunningLoads::stop`] (or dropping it) stops them all.
pub struct RunningLoads {
    processes: Vec<LoadProcess>,
    dirs: Vec<PathBuf>,
    stopped: bool,
}

impl LoadPlan {
    /// Starts every load and waits until each runs. A load that cannot start is an error, and
    /// the loads started before it are stopped again.
    pub fn start(&self) -> Result<RunningLoads, LoadError> {
        let mut running = RunningLoads {
            processes: Vec::new(),
            dirs: Vec::new(),
            stopped: false,
        };
        let (program, prefix) = match &self.launcher {
            Some(launcher) => launcher.clone(),
            None => {
                let exe = std::env::current_exe().map_err(|e| LoadError::Start {
                    load: "*".into(),
                    reason: format!("cannot find the vernier executable: {e}"),
                })?;
                (exe, vec!["__load".to_string()])
            }
        };
        for load in &self.loads {
            let spec = load.to_string();
            let start_error = |reason: String| LoadError::Start {
                load: spec.clone(),
                reason,
            };
            let dir = if let Some(base) = load.dir_base() {
                let dir = make_dir(&base).map_err(start_error)?;
                running.dirs.push(dir.clone());
                Some(dir)
            } else {
                None
            };
            let mut command = Command::new(&program);
            command.args(&prefix).arg(&spec);
            if let Some(dir) = &dir {
                command.arg("--dir").arg(dir);
            }
            if let Some(check) = self.start_check {
                command.arg("--check-ms").arg(check.as_millis().to_string());
            }
            command
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            // SAFETY: sigprocmask(2) is async-signal-safe. SIGTERM stays blocked across
            // exec(2) until the supervisor has its handler, so that one arriving while it
            // starts is handled (its directory removed), not fatal.
            unsafe {
                command.pre_exec(|| {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut set);
                    libc::sigaddset(&mut set, libc::SIGTERM);
                    libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                    Ok(())
                });
            }
            // The supervisor gets SIGTERM, its ordinary stop, when the thread that started it
            // dies.
            die_with_parent(&mut command, libc::SIGTERM);
            let mut group = Group::new();
            let child = group
                .spawn(&mut command)
                .map_err(|e| start_error(format!("cannot run {}: {e}", program.display())))?;
            let stdout = child.stdout;
            let stderr = Arc::new(Mutex::new(Vec::new()));
            let (done_tx, stderr_done) = mpsc::channel();
            if let Some(mut pipe) = child.stderr {
                let tail = Arc::clone(&stderr);
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 4096];
                    while let Ok(n) = pipe.read(&mut buffer) {
                        if n == 0 {
                            break;
                        }
                        if let Ok(mut tail) = tail.lock() {
                            tail.extend_from_slice(&buffer[..n]);
                            if tail.len() > STDERR_KEEP {
                                let cut = tail.len() - STDERR_KEEP;
                                tail.drain(..cut);
                            }
                        }
                    }
                    let _ = done_tx.send(());
                });
            }
            running.processes.push(LoadProcess {
                spec: spec.clone(),
                group,
                pid: child.pid,
                baseline_ns: 0,
                stderr,
                stderr_done,
                reaped: false,
            });
            let (ready_tx, ready_rx) = mpsc::channel();
            if let Some(stdout) = stdout {
                std::thread::spawn(move || {
                    let mut line = String::new();
                    let _ = BufReader::new(stdout).read_line(&mut line);
                    let _ = ready_tx.send(line);
                });
            }
            let timeout = READY_TIMEOUT + self.start_check.unwrap_or_default();
            let reason = match ready_rx.recv_timeout(timeout) {
                Ok(line) if line.trim() == "ready" => None,
                Ok(_) | Err(RecvTimeoutError::Disconnected) => Some(String::new()),
                Err(RecvTimeoutError::Timeout) => {
                    Some(format!("not running after {} s", READY_TIMEOUT.as_secs()))
                }
            };
            if let Some(reason) = reason {
                let i = running.processes.len() - 1;
                let ended = running.stop_one(i, false);
                let reason = if reason.is_empty() {
                    ended.message()
                } else {
                    reason
                };
                return Err(start_error(reason));
            }
        }
        for p in &mut running.processes {
            p.baseline_ns = tree_cpu_ns(p.pid);
        }
        Ok(running)
    }
}

/// How a supervisor ended.
struct Ended {
    cpu_ns: i64,
    failure: Option<String>,
    stderr: String,
}

impl Ended {
    /// The supervisor's reason (the last lines of its standard error) or how it ended.
    fn message(&self) -> String {
        let lines: Vec<&str> = self
            .stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let tail = lines[lines.len().saturating_sub(3)..].join("; ");
        match (&self.failure, tail.is_empty()) {
            (_, false) => tail,
            (Some(how), true) => format!("its process {how}"),
            (None, true) => "its process ended without reporting ready".into(),
        }
    }
}

impl RunningLoads {
    /// The process groups of the loads (each supervisor's pid), for checks that nothing is
    /// left.
    pub fn process_groups(&self) -> Vec<u32> {
        self.processes.iter().map(|p| p.pid).collect()
    }

    /// The temporary directories the loads write in, removed by [`RunningLoads::stop`].
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Stops every load: SIGTERM to each supervisor, which kills its descendants and exits;
    /// its whole group killed when it has not ended after a grace time. Reaps them, removes the
    /// temporary directories and returns the CPU time the loads used.
    pub fn stop(mut self) -> LoadUsage {
        self.stop_all()
    }

    fn stop_all(&mut self) -> LoadUsage {
        if self.stopped {
            return LoadUsage::default();
        }
        self.stopped = true;
        let mut usage = LoadUsage::default();
        for p in &self.processes {
            p.group.signal_member(p.pid, libc::SIGTERM);
        }
        for i in 0..self.processes.len() {
            if self.processes[i].reaped {
                continue;
            }
            let ended = self.stop_one(i, true);
            usage.cpu_ns += (ended.cpu_ns - self.processes[i].baseline_ns).max(0);
            if ended.failure.is_some() {
                usage.problems.push(format!(
                    "load '{}' failed while it ran: {}",
                    self.processes[i].spec,
                    ended.message()
                ));
            }
        }
        for dir in self.dirs.drain(..) {
            if let Err(e) = std::fs::remove_dir_all(&dir) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    usage
                        .problems
                        .push(format!("cannot remove {}: {e}", dir.display()));
                }
            }
        }
        usage
    }

    /// Ends supervisor `i` (SIGTERM unless `signalled`, then the grace time, then SIGKILL to
    /// its group), reaps it and kills what is left of its group.
    fn stop_one(&mut self, i: usize, signalled: bool) -> Ended {
        let p = &mut self.processes[i];
        if !signalled {
            p.group.signal_member(p.pid, libc::SIGTERM);
        }
        let mut killed = false;
        let exit = match p.group.wait_within(p.pid, GRACE) {
            Ok(Some(exit)) => Ok(exit),
            Ok(None) => {
                // Its descendants first (the load's program leads a group of its own), while
                // they are still its descendants, then its group.
                p.group.kill_tree();
                killed = true;
                p.group.wait(p.pid)
            }
            Err(e) => Err(e),
        };
        p.reaped = true;
        // What the supervisor could not kill, or what outlived it when it was killed.
        p.group.kill_what_outlived(GRACE);
        // Standard error ends when every process holding it has ended.
        let _ = p.stderr_done.recv_timeout(Duration::from_millis(500));
        let stderr = p
            .stderr
            .lock()
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .unwrap_or_default();
        let failure = match &exit {
            _ if killed => Some(format!(
                "did not end within {} s of SIGTERM and was killed",
                GRACE.as_secs()
            )),
            Ok(exit) if exit.success() => None,
            Ok(exit) => Some(exit.to_string()),
            Err(e) => Some(format!("cannot be waited for: {e}")),
        };
        Ended {
            cpu_ns: exit.map_or(0, |e| e.rusage.cpu_ns()),
            failure,
            stderr,
        }
    }
}

impl Drop for RunningLoads {
    /// Loads never outlive the run that started them, also after an error or a panic.
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// A fresh directory under `base` for a load's files.
fn make_dir(base: &Path) -> Result<PathBuf, String> {
    for attempt in 0..100u32 {
        let dir = base.join(format!(
            "vernier-load-{}-{}-{attempt}",
            std::process::id(),
            monotonic_ns()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(format!(
                    "cannot create a directory in {}: {e}",
                    base.display()
                ))
            }
        }
    }
    Err(format!("cannot create a directory in {}", base.display()))
}
