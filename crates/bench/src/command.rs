//! `command`: the wall time of any command, with hyperfine's semantics where a user expects
//! them (hyperfine 1.15, `src/benchmark/executor.rs`), one execution per run.
//!
//! - The command runs through a shell, `sh -c CMD` by default (`shell=PROGRAM [ARGS]`), or,
//!   with `shell=none`, directly after splitting it into words as a POSIX shell would
//!   (hyperfine's `-N`).
//! - Through a shell, each run first times `SHELL -c ''` `calibration` times, exactly as it then
//!   times the command, and subtracts the median of those times from the command's wall, user
//!   and system times: what is left is the command's own time, not the shell's start-up.
//!   hyperfine does the same once per benchmark with 50 executions and their mean; vernier
//!   does it in every run (the shell's start-up drifts with the machine like everything else)
//!   and takes the median, which a stray slow start moves less.
//!   The subtracted time is stored as `shell_time`.
//! - The run process, which spawns the command, serves all of a configuration's runs
//!   ([`Benchmark::measures_a_fresh_process`]): what a run measures, the command, is a fresh
//!   process in every run, and the spawner stays warm from one run to the next, as hyperfine's
//!   one long-lived process does. Before its first run it executes `true` (found in PATH)
//!   `spawn_warmup` times (10), untimed, so that no timed spawn is among the first of a fresh
//!   process, which are slower. Version 2 paid those spawns, and a fresh run process, in
//!   every run: 10 ms of harness per run against hyperfine's 0.6 ms. Measured on a
//!   2-vCPU KVM guest (`true` with `shell=none`, median of 30 runs each, alternately with
//!   `hyperfine -N` over 3 rounds): the timed spawn of a fresh process took 618-673 us where
//!   hyperfine measured 512-552 us; after 1, 3 and 10 warm-up spawns it took 580-605, 571-583
//!   and 541-571 us. Pinned to one CPU: 557-576 us cold, 508-538 after 3 and 503-527 after 10,
//!   against hyperfine's 516-521 us.
//! - Unpinned, the run process spawns the command on the one CPU it stays on, and gives the
//!   command every CPU it may use itself as soon as the exec has replaced it
//!   (`RunContext::release_cpus`, `vernier_engine::placement`): the kernel's exec balancing
//!   would otherwise move a short command to another CPU far more often than hyperfine's,
//!   whose spawns mostly run where spawned (docs/benchmarks.md). What the command started
//!   before that (where it ran first, on a busy CPU) is given every CPU once the command has
//!   run a millisecond ([`crate::release`]).
//! - `prepare` and `cleanup` run before and after the command in every run, untimed, through
//!   the same shell (hyperfine's `--prepare` and `--cleanup`, though hyperfine runs its cleanup
//!   once after all runs); either failing fails the run.
//! - A non-zero exit status or a death by signal fails the run, and so its configuration,
//!   unless `ignore_failure=true` (hyperfine's `-i`).
//! - Standard input is /dev/null; standard output and error go to /dev/null, or with
//!   `output=FILE` to that file, created anew for each execution (hyperfine's `--output`).
//!   hyperfine's `inherit` and `pipe` are refused: a run's own standard output carries its
//!   result to vernier and its terminal belongs to the progress display.
//! - `timeout=SECONDS` ends a command (and a prepare or cleanup command) that runs longer
//!   by killing its whole process group; the run fails. In a run that vernier started, the
//!   command runs in the run's own process group, which the engine kills as a whole when it
//!   ends a run itself (`--run-timeout`, Ctrl-C), so nothing the command started outlives the
//!   run; at `timeout` the run kills every other member of that group (/proc lists them). Run
//!   elsewhere (tests), the command leads a process group of its own, which is killed. Either
//!   way the run process is a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER) while it
//!   waits, so it reaps the orphans of the killed processes itself. Processes that leave the
//!   group (setsid(2), daemons) are beyond the kill.
//! - `{name}` in `cmd`, `prepare`, `cleanup` and `output` is replaced by the value of the
//!   parameter `name`, an option that the benchmark does not declare:
//!   `command:cmd=sleep {t}:t=0.1,0.2` is a sweep of two configurations, as hyperfine's
//!   `-L t 0.1,0.2`. A parameter that fills no placeholder is refused when the plan is made, so
//!   a misspelt option (`timout=5`) does not pass silently as a parameter. Braces around
//!   anything that is not a given parameter stay as written (`find -exec {}`, `${HOME}`).
//!
//! The metric is the command's wall time, from just before it is spawned (fork and exec) to
//! just after wait4(2) has reaped it, CLOCK_MONOTONIC. wait4's resource usage of the command
//! gives the user and system CPU time (shell's subtracted, at least 0) and the largest
//! resident set size of the command and the descendants it waited for (getrusage(2)), stored
//! as the secondary metrics `user_time`, `system_time` and `max_rss_bytes`. That maximum has a
//! floor: at exec, Linux folds the high-water RSS of the memory it replaces into the process's
//! `ru_maxrss` (fs/exec.c, `exec_mmap`), and a spawned child replaces the run process's memory
//! (shared through vfork, or copied by fork), so a command smaller than the run process (about
//! 7 MB) reads as the run process's size. hyperfine and GNU time report the same way, with
//! their own sizes as the floor.
//!
//! A command that takes no longer than the shell's start-up (`true`) has a time near zero, of
//! either sign; hyperfine clamps it at 0. vernier stores durations as positive numbers, so the
//! time is clamped at 1 ns, the monotonic clock's unit: a median at that floor means the
//! command's own time is not measurable through a shell, and `shell=none` measures it with
//! the start-up of the program itself.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use vernier_model::{BenchmarkInfo, Describe, MetricInfo, OptionDefault, OptionKind, OptionSpec};
use vernier_model::{OptionValue, Options};
use vernier_sys::affinity::CpuSet;
use vernier_sys::clock::monotonic_ns;
use vernier_sys::process::Group;
use vernier_sys::MachineLimits;

use crate::opts::{choice, float, text_spec, uint};
use crate::release::Releaser;
use crate::{BenchError, Benchmark, Measurement, RunContext, PARAMETERS};

/// The primary metric and the values stored beside it.
pub const TIME: &str = "time";
pub const USER_TIME: &str = "user_time";
pub const SYSTEM_TIME: &str = "system_time";
pub const MAX_RSS_BYTES: &str = "max_rss_bytes";
pub const SHELL_TIME: &str = "shell_time";

/// The options whose text may hold `{name}` placeholders.
const FILLED: [&str; 4] = ["cmd", "prepare", "cleanup", "output"];

/// The program executed to warm up a run's spawns: it does nothing, as quickly as a program
/// can (POSIX requires it).
const WARMUP_PROGRAM: &str = "true";

/// The least time a run reports: the monotonic clock's unit (see the module documentation).
const FLOOR_NS: f64 = 1.0;

pub struct CommandBench;

fn seconds_metric(name: &str) -> MetricInfo {
    MetricInfo::lower(name, "s")
}

impl Benchmark for CommandBench {
    fn info(&self) -> BenchmarkInfo {
        // Version 2: the untimed warm-up spawns before the timed one (`spawn_warmup`).
        // Version 3: one run process per configuration spawns the command in every run; the
        // warm-up spawns precede its first run only.
        // Version 4: an unpinned run process spawns the command on its own CPU and gives it
        // every CPU once it has exec'd (`RunContext::release_cpus`).
        BenchmarkInfo::new(
            "command",
            "4",
            "wall time of any command, the shell's start-up subtracted (as hyperfine)",
            MetricInfo::lower(TIME, "s"),
        )
        .with_secondary_metrics(vec![
            seconds_metric(USER_TIME),
            seconds_metric(SYSTEM_TIME),
            MetricInfo::lower(MAX_RSS_BYTES, "bytes"),
            seconds_metric(SHELL_TIME),
        ])
        .with_options(vec![
            text_spec(
                "cmd",
                "",
                "the command to time (required); {name} is filled from parameter name",
            ),
            text_spec(
                "shell",
                "sh",
                "runs each command as SHELL -c CMD; none: splits it into words and runs it",
            ),
            text_spec("prepare", "", "a command run before the timed one, untimed"),
            text_spec("cleanup", "", "a command run after the timed one, untimed"),
            text_spec(
                "output",
                "null",
                "where the command's output goes: null (discarded) or a FILE",
            ),
            OptionSpec::new(
                "timeout",
                OptionKind::Float {
                    min: 0.0,
                    max: 86400.0,
                },
                OptionDefault::Value(OptionValue::Float(0.0)),
            )
            .unit("s")
            .help("kills each command's process group after this long; 0: no limit"),
            OptionSpec::new(
                "ignore_failure",
                OptionKind::choice(&["false", "true"]),
                OptionDefault::Value(OptionValue::Text("false".into())),
            )
            .help("true: a non-zero exit status does not fail the run"),
            OptionSpec::new(
                "spawn_warmup",
                OptionKind::UInt { min: 0, max: 1000 },
                OptionDefault::Value(OptionValue::UInt(10)),
            )
            .help(
                "untimed executions of true before a configuration's first run, so that \
                 no timed spawn is among a fresh process's first (slower) ones",
            ),
            OptionSpec::new(
                "calibration",
                OptionKind::UInt { min: 0, max: 1000 },
                OptionDefault::Value(OptionValue::UInt(20)),
            )
            .help("executions of SHELL -c '' per run whose median time is subtracted"),
        ])
        .with_parameters(PARAMETERS)
    }

    /// The run's process and the command; what the command starts is its own business.
    fn check_machine(&self, _options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        limits.check_tasks(2)?;
        Ok(())
    }

    /// The command is spawned afresh in every run; the process that spawns it may stay.
    fn measures_a_fresh_process(&self) -> bool {
        true
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        let resolved = Resolved::new(&self.info(), options)?;
        if resolved.spawn_warmup > 0 && find_program(WARMUP_PROGRAM).is_none() {
            return Err(BenchError::Options(format!(
                "program '{WARMUP_PROGRAM}' (executed spawn_warmup={} times per run) is not \
                 found in PATH; install coreutils or set spawn_warmup=0",
                resolved.spawn_warmup
            )));
        }
        for argv in [
            Some(&resolved.cmd),
            resolved.prepare.as_ref(),
            resolved.cleanup.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            if find_program(&argv[0]).is_none() {
                return Err(BenchError::Options(format!(
                    "program '{}' is not found{}",
                    argv[0],
                    if argv[0].contains('/') {
                        " or not executable"
                    } else {
                        " in PATH"
                    }
                )));
            }
        }
        Ok(())
    }

    fn run(&self, options: &Options, ctx: &RunContext) -> Result<Measurement, BenchError> {
        let resolved = Resolved {
            release_cpus: ctx.release_cpus.clone(),
            ..Resolved::new(&self.info(), options)?
        };
        resolved.warm_up_spawns(ctx)?;
        let shell = resolved.shell_overhead()?;
        if let Some(prepare) = &resolved.prepare {
            resolved.untimed("prepare", prepare)?;
        }
        let measured = resolved.execute(&resolved.cmd, &resolved.output);
        let cleanup = match &resolved.cleanup {
            Some(cleanup) => resolved.untimed("cleanup", cleanup),
            None => Ok(()),
        };
        let measured = measured?;
        resolved.check_exit("the command", &measured, resolved.ignore_failure)?;
        cleanup?;
        let seconds = |ns: f64| ns / 1e9;
        let mut values = BTreeMap::new();
        values.insert(
            TIME.to_string(),
            seconds((measured.wall_ns as f64 - shell.wall_ns).max(FLOOR_NS)),
        );
        values.insert(
            USER_TIME.to_string(),
            seconds((measured.user_ns as f64 - shell.user_ns).max(0.0)),
        );
        values.insert(
            SYSTEM_TIME.to_string(),
            seconds((measured.system_ns as f64 - shell.system_ns).max(0.0)),
        );
        values.insert(MAX_RSS_BYTES.to_string(), measured.max_rss_bytes as f64);
        values.insert(SHELL_TIME.to_string(), seconds(shell.wall_ns));
        Ok(Measurement {
            values,
            histograms: Vec::new(),
        })
    }
}

/// Where the command's standard output and error go.
#[derive(Debug, Clone, PartialEq)]
enum Output {
    Null,
    File(PathBuf),
}

/// A configuration's options turned into what one run executes.
#[derive(Debug, Clone, PartialEq)]
struct Resolved {
    /// The shell and its arguments before `-c`; `None` for `shell=none`.
    shell: Option<Vec<String>>,
    cmd: Vec<String>,
    prepare: Option<Vec<String>>,
    cleanup: Option<Vec<String>>,
    output: Output,
    timeout: Option<Duration>,
    ignore_failure: bool,
    spawn_warmup: u64,
    calibration: u64,
    /// The CPUs each spawned process gets once it has exec'd (`RunContext::release_cpus`).
    release_cpus: Option<Vec<usize>>,
}

impl Resolved {
    fn new(info: &BenchmarkInfo, options: &Options) -> Result<Self, BenchError> {
        let bad = |message: String| BenchError::Options(message);
        let parameters: BTreeMap<&str, &str> = options
            .0
            .iter()
            .filter(|(name, _)| info.option(name).is_none())
            .map(|(name, value)| match value {
                OptionValue::Text(text) => Ok((name.as_str(), text.as_str())),
                other => Err(bad(format!("parameter '{name}' is not text: {other}"))),
            })
            .collect::<Result<_, _>>()?;
        let mut used = BTreeSet::new();
        let mut filled = BTreeMap::new();
        for name in FILLED {
            filled.insert(name, fill(options.text(name), &parameters, &mut used));
        }
        if let Some(unused) = parameters.keys().find(|p| !used.contains(*p)) {
            return Err(bad(format!(
                "parameter '{unused}' fills nothing: there is no {{{unused}}} in cmd, \
                 prepare, cleanup or output; the options of command are {}",
                info.description().option_names(&[])
            )));
        }
        let shell_text = options.text("shell");
        let shell = if shell_text == "none" {
            None
        } else {
            Some(split_words("shell", shell_text)?)
        };
        let argv = |name: &str| -> Result<Option<Vec<String>>, BenchError> {
            let line = filled[name].trim();
            if line.is_empty() {
                return Ok(None);
            }
            Ok(Some(match &shell {
                Some(words) => {
                    let mut argv = words.clone();
                    argv.extend(["-c".to_string(), line.to_string()]);
                    argv
                }
                None => split_words(name, line)?,
            }))
        };
        let cmd = argv("cmd")?.ok_or_else(|| {
            bad("option 'cmd' is required: command:cmd=COMMAND, e.g. command:cmd=sleep 0.1".into())
        })?;
        let output = match filled["output"].trim() {
            "null" | "" => Output::Null,
            word @ ("inherit" | "pipe") => {
                return Err(bad(format!(
                    "output={word} is not possible: a run's standard output carries its \
                     result to vernier; use output=null or output=FILE"
                )))
            }
            path => Output::File(PathBuf::from(path)),
        };
        let timeout = float(info, options, "timeout")?;
        Ok(Resolved {
            cmd,
            prepare: argv("prepare")?,
            cleanup: argv("cleanup")?,
            shell,
            output,
            timeout: (timeout > 0.0).then(|| Duration::from_secs_f64(timeout)),
            ignore_failure: choice(info, options, "ignore_failure")? == 1,
            spawn_warmup: uint(info, options, "spawn_warmup")?,
            calibration: uint(info, options, "calibration")?,
            release_cpus: None,
        })
    }

    /// The median wall, user and system times of `SHELL -c ''` over `calibration`
    /// executions, in nanoseconds; zero without a shell or calibration.
    fn shell_overhead(&self) -> Result<Usage, BenchError> {
        let Some(shell) = self.shell.as_ref().filter(|_| self.calibration > 0) else {
            return Ok(Usage::default());
        };
        let mut argv = shell.clone();
        argv.extend(["-c".to_string(), String::new()]);
        let n = usize::try_from(self.calibration).unwrap_or(usize::MAX);
        let (mut wall, mut user, mut system) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for _ in 0..n {
            let finished = self.execute(&argv, &Output::Null)?;
            self.check_exit("the shell's empty command (-c '')", &finished, false)?;
            wall.push(finished.wall_ns as f64);
            user.push(finished.user_ns as f64);
            system.push(finished.system_ns as f64);
        }
        let median = |xs: &[f64]| {
            vernier_stats::median(xs).map_err(|e| BenchError::Worker(format!("shell time: {e}")))
        };
        Ok(Usage {
            wall_ns: median(&wall)?,
            user_ns: median(&user)?,
            system_ns: median(&system)?,
        })
    }

    /// Executes [`WARMUP_PROGRAM`] `spawn_warmup` times, untimed, in the first run of a run
    /// process (see the module documentation); returns how many executions there were.
    fn warm_up_spawns(&self, ctx: &RunContext) -> Result<u64, BenchError> {
        if self.spawn_warmup == 0 || ctx.runs_before > 0 {
            return Ok(0);
        }
        let program = find_program(WARMUP_PROGRAM).ok_or_else(|| {
            BenchError::Command(format!("program '{WARMUP_PROGRAM}' is not found in PATH"))
        })?;
        let argv = [program.to_string_lossy().into_owned()];
        for _ in 0..self.spawn_warmup {
            let finished = self.execute(&argv, &Output::Null)?;
            self.check_exit("the warm-up spawn", &finished, false)?;
        }
        Ok(self.spawn_warmup)
    }

    /// Executes `argv` as this configuration does ([`execute`]).
    fn execute(&self, argv: &[String], output: &Output) -> Result<Finished, BenchError> {
        execute(argv, output, self.timeout, self.release_cpus.as_deref())
    }

    /// Runs a prepare or cleanup command, which must succeed.
    fn untimed(&self, what: &str, argv: &[String]) -> Result<(), BenchError> {
        let finished = self.execute(argv, &Output::Null)?;
        self.check_exit(&format!("the {what} command"), &finished, false)
    }

    /// Fails unless `finished` exited with status 0, or when `accept_failure`, at least ended
    /// by itself.
    fn check_exit(
        &self,
        what: &str,
        finished: &Finished,
        accept_failure: bool,
    ) -> Result<(), BenchError> {
        let status = finished.status;
        if finished.timed_out {
            let limit = self.timeout.map(|t| t.as_secs_f64()).unwrap_or_default();
            return Err(BenchError::Command(format!(
                "{what} did not finish within timeout={limit} s; its process group was killed"
            )));
        }
        let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        if ok || accept_failure {
            return Ok(());
        }
        let how = if libc::WIFSIGNALED(status) {
            format!("was killed by signal {}", libc::WTERMSIG(status))
        } else {
            // A POSIX shell exits 127 when it finds no such command and 126 when it cannot
            // execute the file it found (POSIX.1-2017, Shell Command Language 2.8.2).
            let shell_says = match (self.shell.is_some(), libc::WEXITSTATUS(status)) {
                (true, 127) => ": the shell found no such command",
                (true, 126) => ": the shell found the command but could not execute it",
                _ => "",
            };
            format!(
                "exited with status {}{shell_says}",
                libc::WEXITSTATUS(status)
            )
        };
        let hint = if accept_failure || what != "the command" {
            ""
        } else {
            " (ignore_failure=true accepts that)"
        };
        let output = if self.output == Output::Null {
            "; output=FILE keeps its output"
        } else {
            ""
        };
        Err(BenchError::Command(format!("{what} {how}{hint}{output}")))
    }
}

/// `text` with each `{name}` whose name is a key of `parameters` replaced by its value, in one
/// pass (a value is not searched again); the names it filled are added to `used`.
fn fill<'a>(
    text: &str,
    parameters: &BTreeMap<&'a str, &str>,
    used: &mut BTreeSet<&'a str>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let filled = after.find('}').and_then(|close| {
            let (name, value) = parameters.get_key_value(&after[..close])?;
            used.insert(*name);
            Some((*value, close))
        });
        match filled {
            Some((value, close)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Splits `line` into words as a POSIX shell would (quotes and backslashes), for
/// `shell=none` and for the shell's own words.
fn split_words(option: &str, line: &str) -> Result<Vec<String>, BenchError> {
    match shlex::split(line) {
        Some(words) if !words.is_empty() => Ok(words),
        Some(_) => Err(BenchError::Options(format!("option '{option}' is empty"))),
        None => Err(BenchError::Options(format!(
            "option '{option}': '{line}' cannot be split into words (a quote is not closed)"
        ))),
    }
}

/// Where `program` is: itself when it holds a `/`, otherwise the first executable file of
/// that name in a directory of PATH, as execvp(3) searches.
fn find_program(program: &str) -> Option<PathBuf> {
    let executable = |path: &Path| {
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| executable(candidate))
}

/// Wall, user and system time, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Usage {
    wall_ns: f64,
    user_ns: f64,
    system_ns: f64,
}

/// What one execution took and how it ended.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Finished {
    /// The wait status (wait4(2)).
    status: i32,
    wall_ns: u64,
    user_ns: u64,
    system_ns: u64,
    max_rss_bytes: u64,
    /// Killed with its process group at the timeout.
    timed_out: bool,
}

/// Executes `argv` and times it, from before the spawn to after wait4(2) has reaped it,
/// killing its process group after `timeout`; gives it the CPUs `release_cpus` as soon as it
/// has exec'd (`RunContext::release_cpus`).
fn execute(
    argv: &[String],
    output: &Output,
    timeout: Option<Duration>,
    release_cpus: Option<&[usize]>,
) -> Result<Finished, BenchError> {
    let (stdout, stderr) = match output {
        Output::Null => (Stdio::null(), Stdio::null()),
        Output::File(path) => {
            let file = File::create(path).map_err(|e| {
                BenchError::Command(format!("cannot create output file {}: {e}", path.display()))
            })?;
            let copy = file.try_clone().map_err(|e| {
                BenchError::Command(format!("cannot share output file {}: {e}", path.display()))
            })?;
            (Stdio::from(file), Stdio::from(copy))
        }
    };
    let Some((program, args)) = argv.split_first() else {
        return Err(BenchError::Options("nothing to execute".into()));
    };
    if timeout.is_some() {
        // Orphans of the killed processes reparent to this process, which reaps them.
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only changes a flag of this process.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } != 0 {
            return Err(BenchError::last_os("prctl(PR_SET_CHILD_SUBREAPER)"));
        }
    }
    // The process group the command runs in (see the module documentation): the run's own,
    // when the run process leads it, or else a new one.
    let mut group = Group::own().unwrap_or_default();
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    // Armed before the clock starts and disarmed after it stops (crate::release).
    let _armed = release_cpus.and_then(|cpus| Some(Releaser::get()?.arm(cpus)));
    let start = monotonic_ns();
    let pid = group
        .spawn(&mut command)
        .map_err(|e| BenchError::Command(format!("cannot start '{program}': {e}")))?
        .pid;
    // The spawn returns once the exec has replaced the child: it started on this process's
    // CPU, which it could not leave, and from now on it may use all (and what it started
    // before this, once the releaser has looked).
    let released = release_cpus.map(|cpus| CpuSet::new(cpus).apply_to(pid));
    let ended = match timeout {
        Some(limit) => group.wait_within(pid, limit)?,
        None => Some(group.wait(pid)?),
    };
    let timed_out = ended.is_none();
    let exit = match ended {
        Some(exit) => exit,
        None => {
            // Everything of the group but this process.
            group.kill();
            group.wait(pid)?
        }
    };
    let wall_ns = monotonic_ns().saturating_sub(start);
    if timed_out {
        // The orphans of the killed processes came back to this subreaper.
        group.reap_all();
    }
    match (released, release_cpus) {
        // A child that has already ended has nothing to be given.
        (Some(Err(e)), Some(cpus)) if e.os_error() != Some(libc::ESRCH) => {
            return Err(BenchError::Command(format!(
                "cannot let '{program}' use CPUs {} after its start: {e}",
                vernier_model::cpulist::format_cpu_list(cpus)
            )));
        }
        _ => {}
    }
    let ns = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(Finished {
        status: exit.status,
        wall_ns,
        user_ns: ns(exit.rusage.user_cpu_ns),
        system_ns: ns(exit.rusage.system_cpu_ns),
        max_rss_bytes: ns(exit.rusage.max_rss_bytes),
        timed_out,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;

    fn options(overrides: &[(&str, &str)]) -> Options {
        resolve_options(&CommandBench.info(), overrides).unwrap()
    }

    fn resolved(overrides: &[(&str, &str)]) -> Result<Resolved, String> {
        Resolved::new(&CommandBench.info(), &options(overrides)).map_err(|e| e.to_string())
    }

    fn check(overrides: &[(&str, &str)]) -> Result<(), String> {
        CommandBench
            .check_options(&options(overrides))
            .map_err(|e| e.to_string())
    }

    fn run(overrides: &[(&str, &str)]) -> Result<BTreeMap<String, f64>, String> {
        CommandBench
            .run(&options(overrides), &RunContext::default())
            .map(|m| m.values)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn info() {
        let info = CommandBench.info();
        assert_eq!((info.name(), info.version()), ("command", "4"));
        assert!(CommandBench.measures_a_fresh_process());
        assert_eq!(info.metric().name, "time");
        assert_eq!(info.metric().unit, "s");
        assert!(!info.metric().higher_is_better);
        assert!(info.parameters());
        let secondary: Vec<&str> = info
            .secondary_metrics()
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(
            secondary,
            [USER_TIME, SYSTEM_TIME, MAX_RSS_BYTES, SHELL_TIME]
        );
        assert!(info.takes_parameter("t"));
        assert!(!info.takes_parameter("cmd"));
        assert!(!info.takes_parameter("9t"));
    }

    #[test]
    fn placeholders_are_filled_once_and_other_braces_stay() {
        let parameters = BTreeMap::from([("t", "0.5"), ("n", "{t}")]);
        let mut used = BTreeSet::new();
        assert_eq!(
            fill(
                "sleep {t}; echo {n} {} ${HOME} {x} {t",
                &parameters,
                &mut used
            ),
            "sleep 0.5; echo {t} {} ${HOME} {x} {t"
        );
        assert_eq!(used, BTreeSet::from(["n", "t"]));
        let mut used = BTreeSet::new();
        assert_eq!(fill("{{t}}", &parameters, &mut used), "{0.5}");
        assert_eq!(fill("", &parameters, &mut used), "");
    }

    #[test]
    fn options_resolve_to_what_runs() {
        let r = resolved(&[
            ("cmd", "sleep {t}"),
            ("t", "0.1"),
            ("prepare", "touch {t}.x"),
        ])
        .unwrap();
        assert_eq!(r.cmd, ["sh", "-c", "sleep 0.1"]);
        assert_eq!(r.prepare.unwrap(), ["sh", "-c", "touch 0.1.x"]);
        assert_eq!(r.cleanup, None);
        assert_eq!(r.output, Output::Null);
        assert_eq!(r.timeout, None);
        assert!(!r.ignore_failure);
        assert_eq!(r.spawn_warmup, 10);
        assert_eq!(r.calibration, 20);

        let r = resolved(&[
            ("cmd", "printf '%s\\n' 'a b' c"),
            ("shell", "none"),
            ("output", "/tmp/out-{x}"),
            ("x", "1"),
            ("timeout", "2.5"),
            ("ignore_failure", "true"),
        ])
        .unwrap();
        assert_eq!(r.shell, None);
        assert_eq!(r.cmd, ["printf", "%s\\n", "a b", "c"]);
        assert_eq!(r.output, Output::File("/tmp/out-1".into()));
        assert_eq!(r.timeout, Some(Duration::from_millis(2500)));
        assert!(r.ignore_failure);

        let r = resolved(&[("cmd", "echo"), ("shell", "bash --norc")]).unwrap();
        assert_eq!(r.cmd, ["bash", "--norc", "-c", "echo"]);
    }

    #[test]
    fn bad_options_are_refused_with_what_is_valid() {
        let e = resolved(&[]).unwrap_err();
        assert!(e.contains("option 'cmd' is required"), "{e}");
        let e = resolved(&[("cmd", "sleep 1"), ("timout", "5")]).unwrap_err();
        assert!(
            e.contains("parameter 'timout' fills nothing: there is no {timout} in cmd,")
                && e.contains("options of command are cmd, shell, prepare"),
            "{e}"
        );
        let e = resolved(&[("cmd", "echo 'a"), ("shell", "none")]).unwrap_err();
        assert!(e.contains("a quote is not closed"), "{e}");
        for word in ["inherit", "pipe"] {
            let e = resolved(&[("cmd", "true"), ("output", word)]).unwrap_err();
            assert!(e.contains(&format!("output={word} is not possible")), "{e}");
        }
        let e = check(&[("cmd", "true"), ("shell", "no-such-shell-here")]).unwrap_err();
        assert!(
            e.contains("program 'no-such-shell-here' is not found in PATH"),
            "{e}"
        );
        let e = check(&[("cmd", "/nonexistent/x"), ("shell", "none")]).unwrap_err();
        assert!(e.contains("is not found or not executable"), "{e}");
        check(&[("cmd", "sleep {t}"), ("t", "1"), ("shell", "none")]).unwrap();
        check(&[("cmd", "anything at all"), ("prepare", "true")]).unwrap();
    }

    #[test]
    fn a_run_reports_its_times_and_the_shell_it_subtracted() {
        let values = run(&[("cmd", "true"), ("calibration", "3")]).unwrap();
        let keys: Vec<&str> = values.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [MAX_RSS_BYTES, SHELL_TIME, SYSTEM_TIME, TIME, USER_TIME]
        );
        // The shell's start-up was measured and subtracted; what is left is positive.
        assert!(values[SHELL_TIME] > 0.0, "{values:?}");
        assert!(values[TIME] > 0.0, "{values:?}");
        assert!(values[USER_TIME] >= 0.0 && values[SYSTEM_TIME] >= 0.0);
        assert!(values[MAX_RSS_BYTES] > 0.0, "{values:?}");

        // Without a shell nothing is subtracted.
        let values = run(&[("cmd", "true"), ("shell", "none")]).unwrap();
        assert_eq!(values[SHELL_TIME], 0.0);
        assert!(values[TIME] > 0.0);
        let values = run(&[("cmd", "true"), ("calibration", "0")]).unwrap();
        assert_eq!(values[SHELL_TIME], 0.0);
    }

    #[test]
    fn a_run_warms_up_its_spawns_as_often_as_asked() {
        for n in [0, 3] {
            let r = resolved(&[("cmd", "true"), ("spawn_warmup", &n.to_string())]).unwrap();
            assert_eq!(r.warm_up_spawns(&RunContext::default()).unwrap(), n);
            // A run process's later runs are as warm as its first one left it.
            let later = RunContext {
                runs_before: 1,
                ..RunContext::default()
            };
            assert_eq!(r.warm_up_spawns(&later).unwrap(), 0);
        }
        let values = run(&[("cmd", "true"), ("shell", "none"), ("spawn_warmup", "0")]).unwrap();
        assert!(values[TIME] > 0.0, "{values:?}");
    }

    #[test]
    fn a_command_the_shell_cannot_find_says_so() {
        let e = run(&[("cmd", "no-such-command-here-x"), ("calibration", "1")]).unwrap_err();
        assert!(
            e.contains("exited with status 127: the shell found no such command"),
            "{e}"
        );
    }

    #[test]
    fn a_failing_command_fails_the_run_unless_ignored() {
        let e = run(&[("cmd", "exit 3"), ("calibration", "1")]).unwrap_err();
        assert_eq!(
            e,
            "the command exited with status 3 (ignore_failure=true accepts that); \
             output=FILE keeps its output"
        );
        let e = run(&[("cmd", "kill -9 $$"), ("calibration", "1")]).unwrap_err();
        assert!(e.contains("the command was killed by signal 9"), "{e}");
        let values = run(&[
            ("cmd", "exit 3"),
            ("calibration", "1"),
            ("ignore_failure", "true"),
        ])
        .unwrap();
        assert!(values[TIME] > 0.0);
        // A failing prepare or cleanup command fails the run whatever ignore_failure says.
        for step in ["prepare", "cleanup"] {
            let e = run(&[
                ("cmd", "true"),
                (step, "false"),
                ("calibration", "1"),
                ("ignore_failure", "true"),
            ])
            .unwrap_err();
            assert!(
                e.starts_with(&format!("the {step} command exited with status 1;")),
                "{e}"
            );
        }
        let e = run(&[("cmd", "no-such-program-here"), ("shell", "none")]).unwrap_err();
        assert!(e.starts_with("cannot start 'no-such-program-here'"), "{e}");
    }

    #[test]
    fn a_spawned_process_may_use_the_cpus_it_is_released_to_once_it_has_exec_d() {
        let allowed = vernier_sys::affinity::current_affinity().unwrap();
        if allowed.len() < 2 {
            eprintln!("skipped: needs two CPUs to release a process to more than one");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("status");
        // Read after RELEASE_CHECK: on a busy machine the command may run before its spawner
        // gives it every CPU, and is given them at the latest then (crate::release).
        let options = options(&[
            (
                "cmd",
                "sh -c 'sleep 0.05; grep Cpus_allowed_list /proc/$$/status'",
            ),
            ("shell", "none"),
            ("output", &out.display().to_string()),
            ("spawn_warmup", "0"),
        ]);
        // Spawned by a thread confined to one CPU, as a served run process is.
        let seen = |release_cpus: Option<Vec<usize>>| {
            let (options, out, first) = (options.clone(), out.clone(), allowed[0]);
            std::thread::spawn(move || {
                vernier_sys::affinity::pin_current_thread(&[first]).unwrap();
                let ctx = RunContext {
                    release_cpus,
                    ..RunContext::default()
                };
                CommandBench.run(&options, &ctx).unwrap();
                let text = std::fs::read_to_string(&out).unwrap();
                text.trim().rsplit('\t').next().unwrap().to_string()
            })
            .join()
            .unwrap()
        };
        let all = vernier_model::cpulist::format_cpu_list(&allowed);
        assert_eq!(seen(Some(allowed.clone())), all);
        assert_eq!(seen(None), allowed[0].to_string());
    }

    #[test]
    fn prepare_and_cleanup_run_around_the_command_and_output_goes_to_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let out = dir.path().join("out-{p}");
        let log_text = log.display().to_string();
        let out_text = out.display().to_string();
        for _ in 0..2 {
            run(&[
                ("prepare", &format!("echo prepare {{p}} >> {log_text}")),
                (
                    "cmd",
                    &format!("echo command {{p}} >> {log_text}; echo to-output"),
                ),
                ("cleanup", &format!("echo cleanup {{p}} >> {log_text}")),
                ("output", &out_text),
                ("p", "7"),
                ("calibration", "1"),
            ])
            .unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "prepare 7\ncommand 7\ncleanup 7\n".repeat(2)
        );
        // Created anew for each execution.
        let out = dir.path().join("out-7");
        assert_eq!(std::fs::read_to_string(out).unwrap(), "to-output\n");
    }

    /// Environment variable that turns `timeout_probe` into a probe: the needle of its sleeps.
    const PROBE: &str = "VERNIER_BENCH_COMMAND_TIMEOUT_PROBE";

    /// The processes whose command line holds `needle`.
    fn processes_with(needle: &str) -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| {
                let e = e.ok()?;
                e.file_name().to_str()?.parse::<u32>().ok()?;
                let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
                let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                text.contains(needle).then_some(text)
            })
            .collect()
    }

    /// Runs a command past its timeout in this (fresh) test process, which does not lead its
    /// process group, so the command gets a group of its own. Only does something when started
    /// by `a_timeout_kills_the_commands_own_group` with the probe variable set.
    #[test]
    #[ignore = "started as a subprocess by a_timeout_kills_the_commands_own_group"]
    fn timeout_probe() {
        let Ok(needle) = std::env::var(PROBE) else {
            return;
        };
        assert!(Group::own().is_none());
        let cmd = format!("sleep {needle} & sleep {needle}; true");
        let e = run(&[("cmd", &cmd), ("timeout", "0.3"), ("calibration", "1")]).unwrap_err();
        assert_eq!(
            e,
            "the command did not finish within timeout=0.3 s; its process group was killed"
        );
        let left = processes_with(&format!("sleep {needle}"));
        assert!(left.is_empty(), "left behind: {left:?}");
        let mut status = 0;
        // SAFETY: valid out pointer.
        let rc = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        let err = std::io::Error::last_os_error().raw_os_error();
        assert_eq!((rc, err), (-1, Some(libc::ECHILD)), "a child was left");
    }

    #[test]
    fn a_timeout_kills_the_commands_own_group() {
        let needle = format!("{}.75", 5000 + std::process::id() % 1000);
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "command::tests::timeout_probe",
                "--ignored",
                "--test-threads=1",
            ])
            .env(PROBE, &needle)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("1 passed"), "the probe did not run: {text}");
    }
}
