//! What the adapters to established tools (`perf-bench`, `stress-ng`, `rt-hackbench`,
//! `sysbench`) share: the tool's program and Debian package, the check that it is installed
//! (made when the plan is made, so a missing tool is one clear line before anything starts),
//! and one execution whose output the adapter's pure parser reads.
//!
//! The tool runs in the run's process group, so the controller's run timeout and Ctrl-C reach
//! it, and dies with the run's process (prctl(2) PR_SET_PDEATHSIG). Its version is recorded in
//! the session's environment (`Environment::tool_versions`), from the plan's
//! [`crate::Benchmark::tools`].

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use vernier_sys::environment::tools::find_on_path;
use vernier_sys::process::{die_with_parent, Group};

use crate::BenchError;

/// An external program and the Debian package that installs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tool {
    pub program: &'static str,
    pub package: &'static str,
}

/// A header a benchmark compiles against (an absolute path) and the Debian package that
/// installs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub path: &'static str,
    pub package: &'static str,
}

impl Tool {
    /// The program's path, or the error that names the package to install.
    pub fn find(&self, benchmark: &str) -> Result<PathBuf, BenchError> {
        let path_var = std::env::var_os("PATH").unwrap_or_default();
        find_on_path(self.program, &path_var)
            .ok_or_else(|| not_installed(benchmark, &[(self.program, self.package)], &[]))
    }

    /// Runs the program with `args` (standard input /dev/null, `LC_ALL=C` so numbers use a
    /// decimal point) and returns its standard output and error, in that order. A start
    /// failure, a non-zero exit status or a death by signal is an error that quotes the last
    /// line of output.
    pub fn run(&self, benchmark: &str, args: &[String]) -> Result<String, BenchError> {
        let program = self.find(benchmark)?;
        let output = execute(&program, args)?;
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        if !output.status.success() {
            let last = text
                .lines()
                .map(str::trim)
                .rfind(|l| !l.is_empty())
                .unwrap_or("no output");
            return Err(BenchError::Command(format!(
                "'{} {}' failed ({}): {last}",
                self.program,
                args.join(" "),
                output.status
            )));
        }
        Ok(text)
    }
}

/// Fails naming every one of `programs` that is not on PATH and every one of `headers` that
/// does not exist, with the Debian packages that install them, all in one line.
pub(crate) fn require(
    benchmark: &str,
    programs: &[Tool],
    headers: &[Header],
) -> Result<(), BenchError> {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    let programs: Vec<(&str, &str)> = programs
        .iter()
        .filter(|t| find_on_path(t.program, &path_var).is_none())
        .map(|t| (t.program, t.package))
        .collect();
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .filter(|h| !Path::new(h.path).exists())
        .map(|h| (h.path, h.package))
        .collect();
    if programs.is_empty() && headers.is_empty() {
        return Ok(());
    }
    Err(not_installed(benchmark, &programs, &headers))
}

/// The error of missing programs and headers, each `(name, package)`: what is missing and the
/// Debian packages to install, each once.
fn not_installed(
    benchmark: &str,
    programs: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> BenchError {
    let names = |missing: &[(&str, &str)]| {
        missing
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut what = Vec::new();
    if !programs.is_empty() {
        what.push(format!("runs {}", names(programs)));
    }
    if !headers.is_empty() {
        what.push(format!("needs {}", names(headers)));
    }
    let which = if programs.len() + headers.len() == 1 {
        "which is"
    } else {
        "which are"
    };
    let where_looked = if headers.is_empty() {
        " (not on PATH)"
    } else {
        ""
    };
    let mut packages: Vec<&str> = Vec::new();
    for (_, package) in programs.iter().chain(headers) {
        if !packages.contains(package) {
            packages.push(package);
        }
    }
    let plural = if packages.len() == 1 { "" } else { "s" };
    let packages = packages.join(" ");
    BenchError::Options(format!(
        "{benchmark} {}, {which} not installed{where_looked}: install the Debian \
         package{plural} {packages} (apt-get install {packages})",
        what.join(" and ")
    ))
}

/// Runs `program` with `args` as a run's own child: standard input /dev/null, standard output
/// and error captured, `LC_ALL=C` so numbers use a decimal point, killed when the run's process
/// dies. Waits for it to end.
pub(crate) fn execute(program: &Path, args: &[String]) -> Result<Output, BenchError> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("LC_ALL", "C");
    die_with_parent(&mut command, libc::SIGKILL);
    command
        .output()
        .map_err(|e| BenchError::Command(format!("cannot start '{}': {e}", program.display())))
}

/// How a program run with a time limit ([`execute_within`]) ended.
#[derive(Debug)]
pub(crate) enum Bounded {
    /// It exited, and every process that held its output closed it, within the limit.
    Finished(Output),
    /// The limit passed first, and everything that still ran or held its output was killed.
    Killed {
        /// The program itself had exited: only processes it left behind held its output.
        exited: bool,
        /// Processes outside its process group that held its output (children that left the
        /// group with `setsid`), as `PID (command)`.
        holders: Vec<String>,
    },
    /// It wrote more than the output limit (both pipes together) first, and was killed as at
    /// the time limit.
    TooMuchOutput {
        /// The limit, in bytes.
        limit: usize,
    },
}

/// One of a child's output pipes, read without blocking.
struct Pipe {
    file: std::fs::File,
    bytes: Vec<u8>,
    closed: bool,
}

impl Pipe {
    fn new(fd: std::os::fd::OwnedFd) -> Result<Self, BenchError> {
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl(2) on a descriptor this process owns.
        let ok = unsafe {
            let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            flags >= 0 && libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
        };
        if !ok {
            return Err(BenchError::last_os("fcntl"));
        }
        Ok(Pipe {
            file: std::fs::File::from(fd),
            bytes: Vec::new(),
            closed: false,
        })
    }

    /// Reads what the pipe holds now, but not beyond `limit` bytes in all: a writer faster
    /// than the reader would otherwise keep it here.
    fn drain(&mut self, limit: usize) -> Result<(), BenchError> {
        use std::io::Read;
        let mut chunk = [0u8; 8192];
        while !self.closed && self.bytes.len() <= limit {
            match self.file.read(&mut chunk) {
                Ok(0) => self.closed = true,
                Ok(n) => self.bytes.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(BenchError::Syscall {
                        call: "read",
                        source: e,
                    })
                }
            }
        }
        Ok(())
    }

    fn inode(&self) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        self.file.metadata().ok().map(|m| m.ino())
    }
}

/// Kills the group, the program's descendants (while it runs, also those that left its group)
/// and every process outside the group that holds one of its output pipes still open; returns
/// those holders, as `PID (command)`.
fn kill_with_holders(group: &Group, pipes: &[Pipe]) -> Vec<String> {
    let open: Vec<u64> = pipes
        .iter()
        .filter(|p| !p.closed)
        .filter_map(Pipe::inode)
        .collect();
    group
        .kill_with_holders(&open)
        .into_iter()
        .map(|h| match h.command {
            Some(command) => format!("PID {} ({command})", h.pid),
            None => format!("PID {}", h.pid),
        })
        .collect()
}

/// Runs `program` with `args` as [`execute`] does, but in a process group of its own, for at
/// most `limit`: for programs asked a question before any run starts (a user benchmark's
/// `describe`), which no run timeout covers. Its output is read as it comes, and the limit
/// covers both its exit and the end of its output: a child it started in a session of its
/// own (`setsid`) that holds the output open does not keep the caller waiting. At the limit
/// the process group, the program's descendants and every process holding its output are
/// killed (SIGKILL) and nothing more is read.
pub(crate) fn execute_within(
    program: &Path,
    args: &[String],
    limit: Duration,
    output_limit: usize,
) -> Result<Bounded, BenchError> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("LC_ALL", "C");
    die_with_parent(&mut command, libc::SIGKILL);
    let deadline = std::time::Instant::now() + limit;
    let mut group = Group::new();
    let spawned = group
        .spawn(&mut command)
        .map_err(|e| BenchError::Command(format!("cannot start '{}': {e}", program.display())))?;
    let (Some(stdout), Some(stderr)) = (spawned.stdout, spawned.stderr) else {
        return Err(BenchError::Command(format!(
            "'{}' has no output pipes",
            program.display()
        )));
    };
    let mut pipes = [Pipe::new(stdout.into())?, Pipe::new(stderr.into())?];
    let mut exited = false;
    loop {
        for pipe in &mut pipes {
            pipe.drain(output_limit)?;
        }
        exited = exited || group.has_exited(spawned.pid);
        if pipes.iter().map(|p| p.bytes.len()).sum::<usize>() > output_limit {
            // Killed as at the time limit, and reaped at once.
            kill_with_holders(&group, &pipes);
            let _ = group.wait(spawned.pid);
            return Ok(Bounded::TooMuchOutput {
                limit: output_limit,
            });
        }
        if exited && pipes.iter().all(|p| p.closed) {
            break;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            let holders = kill_with_holders(&group, &pipes);
            // Killed: reaped at once (a process in uninterruptible sleep dies when it wakes).
            let _ = group.wait(spawned.pid);
            return Ok(Bounded::Killed { exited, holders });
        }
        // Woken by output, its end, or every 10 ms for the program's exit, which no
        // descriptor here tells.
        let mut fds: Vec<libc::pollfd> = pipes
            .iter()
            .filter(|p| !p.closed)
            .map(|p| libc::pollfd {
                fd: std::os::fd::AsRawFd::as_raw_fd(&p.file),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let tick = if exited {
            left
        } else {
            left.min(Duration::from_millis(10))
        };
        let ms = i32::try_from(tick.as_millis().max(1)).unwrap_or(i32::MAX);
        // SAFETY: `fds` is a valid array of pollfd of its length.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Err(BenchError::last_os("poll"));
        }
    }
    let exit = group.wait(spawned.pid)?;
    let [stdout, stderr] = pipes;
    Ok(Bounded::Finished(Output {
        status: std::process::ExitStatus::from_raw(exit.status),
        stdout: stdout.bytes,
        stderr: stderr.bytes,
    }))
}

/// A number the tool printed, which must be finite and not negative (perf prints `inf` when a
/// copy was too fast for its clock).
pub(crate) fn number(tool: &str, what: &str, text: &str) -> Result<f64, BenchError> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(BenchError::Command(format!(
            "{tool} printed '{}' as {what}, which is not a finite number",
            text.trim()
        ))),
    }
}

/// The error of output that lacks what the parser looks for.
pub(crate) fn missing(tool: &str, what: &str, output: &str) -> BenchError {
    let last = output
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no output");
    BenchError::Command(format!(
        "cannot read {tool}'s output: no {what} (its last line: {last})"
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_names_its_package() {
        let tool = Tool {
            program: "vernier-no-such-tool",
            package: "vernier-tools",
        };
        let e = tool.find("x").unwrap_err().to_string();
        assert!(
            e.ends_with(
                "x runs vernier-no-such-tool, which is not installed (not on PATH): install \
                 the Debian package vernier-tools (apt-get install vernier-tools)"
            ),
            "{e}"
        );
    }

    #[test]
    fn every_missing_program_and_header_is_named_with_its_package_once() {
        let sh = Tool {
            program: "sh",
            package: "dash",
        };
        let absent = |program| Tool {
            program,
            package: "vernier-tools",
        };
        let header = |path, package| Header { path, package };
        assert!(require("x", &[sh], &[]).is_ok());
        let e = require(
            "x",
            &[sh, absent("vernier-no-a"), absent("vernier-no-b")],
            &[
                header("/vernier/no/such.h", "libno-dev"),
                header("/", "base-files"),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.ends_with(
                "x runs vernier-no-a, vernier-no-b and needs /vernier/no/such.h, which are not \
                 installed: install the Debian packages vernier-tools libno-dev (apt-get \
                 install vernier-tools libno-dev)"
            ),
            "{e}"
        );
        let e = require("x", &[sh], &[header("/vernier/no/such.h", "libno-dev")])
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with(
                "x needs /vernier/no/such.h, which is not installed: install the Debian \
                 package libno-dev (apt-get install libno-dev)"
            ),
            "{e}"
        );
    }

    #[test]
    fn failures_quote_the_last_line() {
        let sh = Tool {
            program: "sh",
            package: "dash",
        };
        let out = sh.run("x", &["-c".into(), "echo hi; echo oops >&2".into()]);
        assert_eq!(out.unwrap(), "hi\noops\n");
        let e = sh
            .run("x", &["-c".into(), "echo bad >&2; exit 3".into()])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "'sh -c echo bad >&2; exit 3' failed (exit status: 3): bad"
        );
        assert!(number("perf", "a bandwidth", "inf").is_err());
        assert!(number("perf", "a bandwidth", "-1").is_err());
        assert_eq!(number("perf", "a bandwidth", " 2.5 ").unwrap(), 2.5);
    }
}
