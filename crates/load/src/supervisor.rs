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
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::Receiver;

use vernier_sys::clock::monotonic_ns;

use crate::loads::Program;
use crate::spec::Load;

/// How long a load's program must keep running, or end successfully, to count as started.
pub const START_CHECK_MS: u64 = 100;
const START_CHECK: u64 = START_CHECK_MS * 1_000_000;
const USAGE: &str = "usage: __load SPEC [--dir DIR] [--check-ms MS]";

/// How long the supervisor waits for the members of its process group to die after SIGKILL.
const KILL_WAIT_NS: u64 = 2_000_000_000;

/// What the `hackbench` load runs each time: vernier's hackbench benchmark in process mode
/// over Unix sockets, with 20 senders and 20 receivers per group (rt-tests' defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HackbenchParams {
    pub groups: u64,
    pub loops: u64,
    pub datasize: u64,
}

static TERMINATE: AtomicBool = AtomicBool::new(false);

/// The pid of the load's program, which leads a process group of its own (0: none running).
static WORK: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_terminate(_: libc::c_int) {
    TERMINATE.store(true, Ordering::SeqCst);
    // The load's program stops using CPU at once, not when the main loop gets to it: the
    // controller counts the load's CPU time until it has ended.
    let work = WORK.load(Ordering::SeqCst);
    if work > 0 {
        // SAFETY: kill(2) is async-signal-safe; `work` leads the process group of the load's
        // program, cleared as soon as it is reaped.
        unsafe { libc::kill(-work, libc::SIGKILL) };
    }
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
    let result = run(&load, dir.clone(), check_ms, ready, hackbench);
    // The load's CPU time runs on until its processes are dead: its program's group first, in
    // one call (hackbench's workers die with their parent, by their parent-death signal), then
    // whatever is left in the tree. Threads end with this process.
    let work = WORK.load(Ordering::SeqCst);
    if work > 0 {
        // SAFETY: kill(2) of our unreaped child and of the process group it leads.
        unsafe {
            libc::kill(-work, libc::SIGKILL);
            libc::kill(work, libc::SIGKILL);
        }
    }
    if load.program().is_some() {
        kill_the_descendants();
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

/// How a child ended, from its wait status; `None` when it succeeded.
fn failure(status: libc::c_int) -> Option<String> {
    if libc::WIFEXITED(status) {
        match libc::WEXITSTATUS(status) {
            0 => None,
            code => Some(format!("exited with status {code}")),
        }
    } else if libc::WIFSIGNALED(status) {
        Some(format!("was killed by signal {}", libc::WTERMSIG(status)))
    } else {
        None
    }
}

/// Reaps every child that has ended (the load's program and orphans that came back to this
/// subreaper); returns the wait status of `work` if it was among them.
fn reap(work: Option<i32>) -> Option<libc::c_int> {
    let mut work_status = None;
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) with WNOHANG on any child; `status` is writable.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return work_status;
        }
        if Some(pid) == work {
            // What it forked and left behind is killed with the tree at the end.
            WORK.store(0, Ordering::SeqCst);
            work_status = Some(status);
        }
    }
}

fn run(
    load: &Load,
    dir: Option<PathBuf>,
    check_ms: u64,
    ready: &mut dyn Write,
    hackbench: &dyn Fn(&HackbenchParams) -> Result<(), String>,
) -> Result<(), String> {
    let process = load.program().is_some();
    let mut errors: Option<Receiver<String>> = None;
    let mut work = None;
    let mut started = monotonic_ns();
    if process {
        work = Some(start_work(load, hackbench)?);
        let deadline = started + check_ms * 1_000_000;
        loop {
            if let Some(status) = reap(work) {
                if let Some(how) = failure(status) {
                    return Err(format!("{} {how} within {check_ms} ms", what(load)));
                }
                work = None;
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
        if reap(work).is_some() {
            work = None;
        }
        if process && work.is_none() {
            let due = started + START_CHECK;
            let now = monotonic_ns();
            if now >= due {
                started = now;
                work = Some(start_work(load, hackbench)?);
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

/// Starts the program of a process load; returns its pid.
fn start_work(
    load: &Load,
    hackbench: &dyn Fn(&HackbenchParams) -> Result<(), String>,
) -> Result<i32, String> {
    match load.program() {
        Some(Program::Shell(cmd)) => {
            let mut command = Command::new("sh");
            command
                .arg("-c")
                .arg(&cmd)
                .stdin(Stdio::null())
                .stdout(Stdio::null());
            // SAFETY: prctl(2) is async-signal-safe; the program dies with this supervisor.
            unsafe {
                command.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            let child = command
                .process_group(0)
                .spawn()
                .map_err(|e| format!("cannot start sh -c `{cmd}`: {e}"))?;
            WORK.store(child.id() as i32, Ordering::SeqCst);
            Ok(child.id() as i32)
        }
        Some(Program::Hackbench(params)) => {
            // SAFETY: the supervisor of a process load has one thread, so the child may
            // allocate and run ordinary code; it leaves only through _exit.
            let pid = unsafe { libc::fork() };
            if pid < 0 {
                return Err(format!("cannot fork: {}", std::io::Error::last_os_error()));
            }
            if pid == 0 {
                // SAFETY: plain system calls, then the child's own work and _exit(2).
                unsafe {
                    libc::signal(libc::SIGTERM, libc::SIG_DFL);
                    libc::signal(libc::SIGCHLD, libc::SIG_DFL);
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    libc::setpgid(0, 0);
                }
                let status = match hackbench(&params) {
                    Ok(()) => 0,
                    Err(e) => {
                        let _ = writeln!(std::io::stderr(), "hackbench: {e}");
                        1
                    }
                };
                // SAFETY: ends the forked child without running the parent's exit handlers.
                unsafe { libc::_exit(status) };
            }
            // Set the group from both sides, whichever runs first (setpgid(2)).
            // SAFETY: `pid` is our child.
            unsafe { libc::setpgid(pid, pid) };
            WORK.store(pid, Ordering::SeqCst);
            Ok(pid)
        }
        _ => Err(format!("load '{}' runs no program", load.name())),
    }
}

/// Kills every descendant of this supervisor (the load's program and whatever it forked, also
/// in process groups of its own, like hackbench's workers; orphans come back to this
/// subreaper, so none leaves the tree) and reaps them, for at most [`KILL_WAIT_NS`].
fn kill_the_descendants() {
    // SAFETY: getpid(2) cannot fail.
    let me = unsafe { libc::getpid() } as u32;
    let deadline = monotonic_ns() + KILL_WAIT_NS;
    loop {
        reap(None);
        let others: Vec<u32> = vernier_sys::process::process_tree(me)
            .into_iter()
            .filter(|(pid, stat)| *pid != me && !matches!(stat.state, 'Z' | 'X'))
            .map(|(pid, _)| pid)
            .collect();
        if others.is_empty() || monotonic_ns() > deadline {
            break;
        }
        for pid in others {
            // SAFETY: kill(2) of a descendant, not reaped yet (its parent is in the tree).
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        nap(1_000_000);
    }
    // Zombies of this process's children that died last.
    while monotonic_ns() < deadline {
        let mut status = 0;
        // SAFETY: waitpid(2) with WNOHANG on any child.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid < 0 {
            break;
        }
        if pid == 0 {
            nap(1_000_000);
        }
    }
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
