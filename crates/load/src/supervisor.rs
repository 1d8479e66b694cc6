//! The supervisor: the process `vernier __load SPEC [--dir DIR] [--check-ms MS]` that runs one
//! load until SIGTERM (see the crate documentation for why a process and why a subreaper).
//!
//! Protocol with the controller ([`crate::RunningLoads`]): the supervisor writes `ready` and a
//! newline to standard output once the load runs, or exits with status 1 and its reason as the
//! last line on standard error. A process load (`command`, `hackbench`) counts as running when
//! its program has not failed within the start check (`--check-ms`, [`START_CHECK_MS`] unless
//! given): a program that exits at once with a failure (a missing program, a bad argument) is an
//! error before anything is measured. `run` checks once with a longer time before the session,
//! since on a busy machine a failing program may take longer than 100 ms to fail. After that it
//! is restarted whenever it exits, at most once per [`START_CHECK_MS`], so that a command that
//! ends at once does not become a fork loop.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use vernier_sys::clock::monotonic_ns;
use vernier_sys::process::{die_with_parent, end_descendants, reap_ended_children, Exit, Group};

use crate::loads::Program;
use crate::spec::Load;

/// How long a load's program must keep running, or end successfully, to count as started.
pub const START_CHECK_MS: u64 = 100;
const START_CHECK: u64 = START_CHECK_MS * 1_000_000;
const USAGE: &str = "usage: __load SPEC [--dir DIR] [--check-ms MS]";

/// How long the supervisor waits for its descendants to die after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// What the `hackbench` load runs each time: vernier's hackbench benchmark in process mode
/// over Unix sockets, with 20 senders and 20 receivers per group (rt-tests' defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HackbenchParams {
    pub groups: u64,
    pub loops: u64,
    pub datasize: u64,
}

static TERMINATE: AtomicBool = AtomicBool::new(false);

/// Only records the request: the signal interrupts the supervisor's sleep (no SA_RESTART), so
/// the main loop ends the load's program at once, and the controller, which counts the load's
/// CPU time until the supervisor has ended, counts no more than that.
extern "C" fn on_terminate(_: libc::c_int) {
    TERMINATE.store(true, Ordering::SeqCst);
}

/// Only there to interrupt the supervisor's sleep when a child ends.
extern "C" fn on_child(_: libc::c_int) {}

/// Runs the supervisor of the load in `args` (`SPEC [--dir DIR]`), writing `ready` to `ready`
/// once it runs, until SIGTERM. `hackbench` runs one hackbench (in a forked child of this
/// single-threaded process); the binary supplies it, since this crate does not see the
/// benchmarks. The error is the one line the binary prints on standard error before it exits
/// with status 1.
pub fn load_main(
    args: &[String],
    ready: &mut dyn Write,
    hackbench: &dyn Fn(&HackbenchParams) -> Result<(), String>,
) -> Result<(), String> {
    let Some((spec, mut flags)) = args.split_first() else {
        return Err(USAGE.into());
    };
    let mut dir = None;
    let mut check_ms = START_CHECK_MS;
    while let [flag, value, rest @ ..] = flags {
        match flag.as_str() {
            "--dir" => dir = Some(PathBuf::from(value)),
            "--check-ms" => check_ms = value.parse().map_err(|_| USAGE.to_string())?,
            _ => return Err(USAGE.into()),
        }
        flags = rest;
    }
    if !flags.is_empty() {
        return Err(USAGE.into());
    }
    let load =
        Load::parse(spec, &vernier_sys::cpulist::online_cpus()).map_err(|e| e.to_string())?;
    // A SIGTERM sent so far waits, blocked, for the handler (see install_handlers).
    install_handlers()?;
    // Its own process group, which the controller kills if this process does not end: the
    // controller starts it so, and run by hand it must not share the shell's group.
    // SAFETY: getpgrp(2), getpid(2) and setpgid(2) on this process.
    if unsafe { libc::getpgrp() != libc::getpid() && libc::setpgid(0, 0) != 0 } {
        return Err(format!(
            "cannot make a process group: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only changes a flag of this process.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(format!(
            "cannot become a child subreaper: {}",
            std::io::Error::last_os_error()
        ));
    }
    normal_priority();
    // The process group of the load's program while it runs.
    let mut work: Option<Group> = None;
    let result = run(&load, dir.clone(), check_ms, ready, hackbench, &mut work);
    // The load's CPU time runs on until its processes are dead: its program's group first, in
    // one call (hackbench's workers die with their parent, by their parent-death signal), then
    // whatever is left in the tree (orphans come back to this subreaper). Threads end with
    // this process.
    if let Some(group) = work.take() {
        group.kill();
        // Reaps the program.
        drop(group);
    }
    if load.program().is_some() {
        end_descendants(KILL_WAIT);
    }
    // The controller removes the directory too; this covers a controller that died (its
    // parent-death signal ends this supervisor the ordinary way).
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

fn install_handlers() -> Result<(), String> {
    for (signal, handler) in [
        (libc::SIGTERM, on_terminate as extern "C" fn(libc::c_int)),
        (libc::SIGCHLD, on_child as extern "C" fn(libc::c_int)),
    ] {
        // SAFETY: a zeroed sigaction is valid; the handlers only store to an atomic. Without
        // SA_RESTART, the signals interrupt the supervisor's nanosleep(2).
        let ok = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut()) == 0
        };
        if !ok {
            return Err(format!(
                "cannot install a signal handler: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    // The controller starts the supervisor with SIGTERM blocked, so that one sent before
    // this point waits for the handler.
    // SAFETY: a sigset made by sigemptyset and sigaddset; sigprocmask(2) on this thread, the
    // only one so far.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
    Ok(())
}

/// A load runs at normal priority even when vernier itself was started with a real-time one
/// (`chrt -f 50 vernier run ...`): SCHED_OTHER, which the threads and processes it starts
/// inherit. Lowering the policy needs no privilege (sched(7)).
fn normal_priority() {
    // SAFETY: pid 0 is the calling thread; `param` is valid for the call.
    unsafe {
        if libc::sched_getscheduler(0) != libc::SCHED_OTHER {
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
        }
    }
}

/// Sleeps for at most `ns`, returning early when a signal arrives.
fn nap(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; the remaining time is not wanted.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// Reaps every child that has ended (the load's program and orphans that came back to this
/// subreaper); returns how the program ended if it was among them, and forgets its group
/// (what it forked and left behind is killed with the tree at the end).
fn reap(work: &mut Option<Group>) -> Option<Exit> {
    let exit = reap_ended_children(work.as_mut()).into_iter().next();
    if exit.is_some() {
        *work = None;
    }
    exit
}

fn run(
    load: &Load,
    dir: Option<PathBuf>,
    check_ms: u64,
    ready: &mut dyn Write,
    hackbench: &dyn Fn(&HackbenchParams) -> Result<(), String>,
    work: &mut Option<Group>,
) -> Result<(), String> {
    let process = load.program().is_some();
    let mut errors: Option<Receiver<String>> = None;
    let mut started = monotonic_ns();
    if process {
        *work = Some(start_work(load, hackbench)?);
        let deadline = started + check_ms * 1_000_000;
        loop {
            if let Some(exit) = reap(work) {
                if !exit.success() {
                    return Err(format!("{} {exit} within {check_ms} ms", what(load)));
                }
                break;
            }
            let now = monotonic_ns();
            if now >= deadline || TERMINATE.load(Ordering::SeqCst) {
                break;
            }
            nap((deadline - now).min(10_000_000));
        }
    } else {
        errors = Some(crate::work::start(load, dir.as_deref())?);
    }
    ready
        .write_all(b"ready\n")
        .and_then(|_| ready.flush())
        .map_err(|e| format!("cannot report ready: {e}"))?;
    while !TERMINATE.load(Ordering::SeqCst) {
        if let Some(Ok(error)) = errors.as_ref().map(Receiver::try_recv) {
            return Err(error);
        }
        reap(work);
        if process && work.is_none() {
            let due = started + START_CHECK;
            let now = monotonic_ns();
            if now >= due {
                started = now;
                *work = Some(start_work(load, hackbench)?);
            } else {
                nap(due - now);
                continue;
            }
        }
        nap(50_000_000);
    }
    Ok(())
}

fn what(load: &Load) -> String {
    match load.program() {
        Some(Program::Shell(cmd)) => format!("`{cmd}`"),
        _ => load.name().to_string(),
    }
}

/// Starts the program of a process load in a process group of its own, as the group's leader;
/// it dies with this supervisor.
fn start_work(
    load: &Load,
    hackbench: &dyn Fn(&HackbenchParams) -> Result<(), String>,
) -> Result<Group, String> {
    let mut group = Group::new();
    match load.program() {
        Some(Program::Shell(cmd)) => {
            let mut command = Command::new("sh");
            command
                .arg("-c")
                .arg(&cmd)
                .stdin(Stdio::null())
                .stdout(Stdio::null());
            die_with_parent(&mut command, libc::SIGKILL);
            group
                .spawn(&mut command)
                .map_err(|e| format!("cannot start sh -c `{cmd}`: {e}"))?;
        }
        Some(Program::Hackbench(params)) => {
            let child = || {
                // SAFETY: signal(2) in the forked child, before its own work.
                unsafe {
                    libc::signal(libc::SIGTERM, libc::SIG_DFL);
                    libc::signal(libc::SIGCHLD, libc::SIG_DFL);
                }
                match hackbench(&params) {
                    Ok(()) => 0,
                    Err(e) => {
                        let _ = writeln!(std::io::stderr(), "hackbench: {e}");
                        1
                    }
                }
            };
            // SAFETY: the supervisor of a process load has one thread, so the child may
            // allocate and run ordinary code.
            unsafe { group.fork(child) }.map_err(|e| match e {
                vernier_sys::SysError::Syscall { source, .. } => format!("cannot fork: {source}"),
                other => format!("cannot fork: {other}"),
            })?;
        }
        _ => return Err(format!("load '{}' runs no program", load.name())),
    }
    Ok(group)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn main_with(args: &[&str]) -> Result<(), String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        load_main(&args, &mut Vec::new(), &|_| Ok(()))
    }

    #[test]
    fn bad_arguments_are_refused_before_anything_starts() {
        assert_eq!(main_with(&[]).unwrap_err(), USAGE);
        assert_eq!(main_with(&["cpu", "--dir"]).unwrap_err(), USAGE);
        assert_eq!(main_with(&["cpu", "--bogus", "1"]).unwrap_err(), USAGE);
        assert_eq!(main_with(&["cpu", "--check-ms", "x"]).unwrap_err(), USAGE);
        assert_eq!(
            main_with(&["fire"]).unwrap_err(),
            "unknown load 'fire'; valid loads: cpu, hackbench, memory, io, net, osadl, command"
        );
    }
}
