//! A process group that this process starts and owns: its members are spawned commands or
//! forked functions, it is signalled and killed as a whole, and it is waited for with the
//! resource usage of what ended (wait4(2)) and, where asked, a time limit.
//!
//! A process group id is a pid (setpgid(2)): once every process of the group is gone the
//! kernel may give the number to a new process, and a kill(2) of the old id would then hit a
//! stranger's group. A [`Group`] therefore signals only while one of its members is not yet
//! reaped (a zombie member still holds the id), and reaping the last one and forgetting the id
//! happen under one lock, which a [`Signaller`] in another thread (a watchdog, a signal watcher)
//! takes too. Waiting first lets the member exit without reaping it (waitid(2) with WNOWAIT),
//! so that no lock is held while it runs.
//!
//! Dropping a group kills its members still running and reaps them, so that no error path
//! leaves a process behind.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use vernier_model::Rusage;

use super::{pipe_holders, process_group_members, process_tree, read_pid_stat, send};
use crate::SysError;

/// The exit status of a forked member ([`Group::fork`]) whose parent ended before the member
/// could ask to die with it.
pub const ORPHAN_STATUS: i32 = 5;
/// The exit status of a forked member whose work panicked.
pub const PANIC_STATUS: i32 = 101;

/// What signallers share with the group.
#[derive(Debug, Default)]
struct State {
    /// The group's id; 0 before the first member and once every member is reaped, when the
    /// id may belong to someone else.
    pgid: i32,
    /// Members started here and not reaped yet.
    live: Vec<i32>,
    /// The members join the caller's own group, which the caller leads: signalling them
    /// signals every process of that group but the caller.
    own: bool,
}

impl State {
    /// Sends `signal` to the group and to its live members (one that left the group, with
    /// setsid(2), is reached too); in the caller's own group, to every member but the caller.
    fn signal(&self, signal: i32) {
        if self.pgid == 0 {
            return;
        }
        if self.own {
            for (pid, _) in alive_members_but_me(self.pgid) {
                send(pid, signal);
            }
            return;
        }
        send(-self.pgid, signal);
        for &pid in &self.live {
            send(pid, signal);
        }
    }

    /// Forgets `pid` once it is reaped, and the group's id with the last member.
    fn reaped(&mut self, pid: i32) -> bool {
        let Some(i) = self.live.iter().position(|&p| p == pid) else {
            return false;
        };
        self.live.swap_remove(i);
        if self.live.is_empty() && !self.own {
            self.pgid = 0;
        }
        true
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic while the lock was held left the state whole: every change is one assignment.
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The processes of group `pgid` that still run (not zombies), this one left out.
fn alive_members_but_me(pgid: i32) -> Vec<(i32, super::PidStat)> {
    let me = std::process::id();
    process_group_members(pgid.unsigned_abs())
        .into_iter()
        .filter(|(pid, stat)| *pid != me && !matches!(stat.state, 'Z' | 'X'))
        .filter_map(|(pid, stat)| Some((i32::try_from(pid).ok()?, stat)))
        .collect()
}

/// A process group this process started (see the module documentation).
#[derive(Debug, Default)]
pub struct Group {
    state: Arc<Mutex<State>>,
    /// The member that leads the group (its pid is the group's id); `None` in the caller's
    /// own group, or before the first member.
    leader: Option<i32>,
    /// The group's id as it was, kept after the last member is reaped
    /// ([`Group::kill_what_outlived`]).
    last_id: i32,
}

/// A member [`Group::spawn`] started, with the pipes of its standard streams that the command
/// asked for ([`std::process::Stdio::piped`]).
#[derive(Debug)]
pub struct Spawned {
    pub pid: u32,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
}

/// How a member ended and what it used: wait4(2)'s status and resource usage, which includes
/// the descendants it waited for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub pid: u32,
    /// The wait status (wait(2)).
    pub status: i32,
    pub rusage: Rusage,
}

impl Exit {
    /// The exit status, when it exited rather than died by a signal.
    pub fn code(&self) -> Option<i32> {
        libc::WIFEXITED(self.status).then(|| libc::WEXITSTATUS(self.status))
    }

    /// The signal that killed it.
    pub fn signal(&self) -> Option<i32> {
        libc::WIFSIGNALED(self.status).then(|| libc::WTERMSIG(self.status))
    }

    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.code() == Some(0)
    }
}

impl std::fmt::Display for Exit {
    /// `exited with status 3`, `was killed by signal 9`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code(), self.signal()) {
            (Some(code), _) => write!(f, "exited with status {code}"),
            (None, Some(signal)) => write!(f, "was killed by signal {signal}"),
            (None, None) => write!(f, "ended with wait status {:#x}", self.status),
        }
    }
}

/// Signals a [`Group`] from another thread, for as long as one of its members is not reaped;
/// after that it does nothing.
#[derive(Debug, Clone)]
pub struct Signaller(Arc<Mutex<State>>);

impl Signaller {
    /// Sends `signal` to the group and its live members.
    pub fn signal(&self, signal: i32) {
        lock(&self.0).signal(signal);
    }

    /// SIGKILL to the group and its live members.
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
    }
}

impl Group {
    /// A group without members: the first member spawned or forked leads a new process group.
    pub fn new() -> Self {
        Group::default()
    }

    /// The caller's own process group, when the caller leads it (a run process that the
    /// engine started in a group of its own): members stay in it, so whatever kills the
    /// caller's group kills them too, and [`Group::kill`] kills every process of the group
    /// but the caller. `None` when the caller does not lead its group.
    pub fn own() -> Option<Self> {
        // SAFETY: getpgrp and getpid have no preconditions.
        let (pgrp, pid) = unsafe { (libc::getpgrp(), libc::getpid()) };
        (pgrp == pid).then(|| Group {
            state: Arc::new(Mutex::new(State {
                pgid: pgrp,
                live: Vec::new(),
                own: true,
            })),
            leader: None,
            last_id: pgrp,
        })
    }

    /// The group's id while it has a member not yet reaped.
    pub fn id(&self) -> Option<u32> {
        let pgid = lock(&self.state).pgid;
        (pgid > 0).then_some(pgid.unsigned_abs())
    }

    /// The member that leads the group (not in the caller's own group).
    pub fn leader(&self) -> Option<u32> {
        self.leader.map(i32::unsigned_abs)
    }

    /// How many members are not reaped yet.
    pub fn live(&self) -> usize {
        lock(&self.state).live.len()
    }

    /// Starts `command` as a member: the leader of a new group when the group has none, else
    /// in the group. Its error is [`Command::spawn`]'s.
    pub fn spawn(&mut self, command: &mut Command) -> io::Result<Spawned> {
        let (pgid, own) = {
            let state = lock(&self.state);
            (state.pgid, state.own)
        };
        if !own {
            // 0: a new group whose id is the child's pid.
            command.process_group(pgid);
        }
        let mut child = command.spawn()?;
        let pid = i32::try_from(child.id())
            .map_err(|_| io::Error::other(format!("process id {} is out of range", child.id())))?;
        self.joined(pid, pgid);
        // Dropping std's handle neither kills nor reaps the child: the group waits for it.
        Ok(Spawned {
            pid: pid.unsigned_abs(),
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
        })
    }

    /// Forks a member that runs `work` and exits with the status it returns. The member dies
    /// with the thread that forked it (prctl(2) PR_SET_PDEATHSIG, SIGKILL); one whose parent
    /// ended before it asked for that exits at once with [`ORPHAN_STATUS`], and one whose
    /// `work` panics exits with [`PANIC_STATUS`].
    ///
    /// # Safety
    /// `work` runs in a forked copy of a possibly multi-threaded process, so it must be
    /// async-signal-safe (signal-safety(7)): system calls on data prepared before the fork
    /// only; no allocation, locking or printing. A process that has only one thread may run
    /// ordinary code there.
    pub unsafe fn fork(&mut self, work: impl FnOnce() -> i32) -> Result<u32, SysError> {
        let (pgid, own) = {
            let state = lock(&self.state);
            (state.pgid, state.own)
        };
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the child runs only async-signal-safe code (the caller's contract and the
        // system calls below) and leaves with _exit, never returning into the caller.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(SysError::last_os("fork"));
        }
        if pid == 0 {
            // SAFETY: plain system calls in the child, on values read before the fork.
            unsafe {
                if !own {
                    libc::setpgid(0, pgid);
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(ORPHAN_STATUS);
                }
                // A panic must never unwind into the parent's code in this copy.
                let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                    .unwrap_or(PANIC_STATUS);
                libc::_exit(code);
            }
        }
        if !own {
            // Set the group from both sides, so that it holds whichever runs first (the
            // job-control idiom of setpgid(2)).
            // SAFETY: `pid` is our child.
            unsafe { libc::setpgid(pid, if pgid == 0 { pid } else { pgid }) };
        }
        self.joined(pid, pgid);
        Ok(pid.unsigned_abs())
    }

    /// Records member `pid`, started with the group's id `pgid` (0: it leads a new one).
    fn joined(&mut self, pid: i32, pgid: i32) {
        let mut state = lock(&self.state);
        if state.pgid == 0 {
            state.pgid = if pgid == 0 { pid } else { pgid };
            self.leader = Some(pid);
        }
        self.last_id = state.pgid;
        state.live.push(pid);
    }

    /// A handle that signals the group from another thread.
    pub fn signaller(&self) -> Signaller {
        Signaller(Arc::clone(&self.state))
    }

    /// Sends `signal` to the group and to its live members.
    pub fn signal(&self, signal: i32) {
        lock(&self.state).signal(signal);
    }

    /// Sends `signal` to member `pid` alone, if it is not reaped yet.
    pub fn signal_member(&self, pid: u32, signal: i32) {
        let state = lock(&self.state);
        if let Some(&pid) = state.live.iter().find(|&&p| p.unsigned_abs() == pid) {
            send(pid, signal);
        }
    }

    /// SIGKILL to the group and its live members. In the caller's own group, to every other
    /// process of it, again until none is left: a process killed in one pass cannot start
    /// another, and one that started a process before it was killed is found in the next.
    pub fn kill(&self) {
        let state = lock(&self.state);
        state.signal(libc::SIGKILL);
        if state.own {
            while !alive_members_but_me(state.pgid).is_empty() {
                std::thread::sleep(Duration::from_millis(1));
                state.signal(libc::SIGKILL);
            }
        }
    }

    /// [`Group::kill`], after SIGKILL to the descendants of the live members that run (also
    /// those that left the group), while they are still their descendants.
    pub fn kill_tree(&self) {
        let state = lock(&self.state);
        for &member in &state.live {
            if has_exited(member) {
                continue;
            }
            for (pid, _) in process_tree(member.unsigned_abs()).into_iter().skip(1) {
                if let Ok(pid) = i32::try_from(pid) {
                    send(pid, libc::SIGKILL);
                }
            }
        }
        drop(state);
        self.kill();
    }

    /// [`Group::kill_tree`], and SIGKILL to every other process that holds one of the pipes
    /// whose inodes are `pipes` open ([`pipe_holders`]): a child that left the group and the
    /// session (`setsid`) while holding the output of a member is found there when it is
    /// found nowhere else. Returns those holders outside the group, with their command names
    /// as read before the kill.
    pub fn kill_with_holders(&self, pipes: &[u64]) -> Vec<Holder> {
        let mut holders: Vec<Holder> = Vec::new();
        for &inode in pipes {
            for pid in pipe_holders(inode) {
                let stat = read_pid_stat(pid);
                let in_group = stat
                    .as_ref()
                    .is_some_and(|s| i32::try_from(s.pgrp).ok() == Some(self.last_id));
                if !in_group && !holders.iter().any(|h| h.pid == pid) {
                    holders.push(Holder {
                        pid,
                        command: stat.map(|s| s.comm),
                    });
                }
            }
        }
        self.kill_tree();
        for holder in &holders {
            if let Ok(pid) = i32::try_from(holder.pid) {
                send(pid, libc::SIGKILL);
            }
        }
        holders
    }

    /// After every member is reaped: SIGKILL to what is left of the group (processes that
    /// outlived its members, or that they could not kill), again while /proc shows any of them
    /// run, for at most `limit`. Between reading /proc and the kill a last process may end and
    /// its id be reused, a window of microseconds that the kill of a group without a member
    /// left cannot close.
    pub fn kill_what_outlived(&self, limit: Duration) {
        let pgid = self.last_id;
        if pgid <= 0 || lock(&self.state).own {
            return;
        }
        let deadline = Instant::now() + limit;
        while !alive_members_but_me(pgid).is_empty() && Instant::now() < deadline {
            send(-pgid, libc::SIGKILL);
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Whether member `pid` has exited; it is left to be reaped (WNOWAIT).
    pub fn has_exited(&self, pid: u32) -> bool {
        i32::try_from(pid).is_ok_and(has_exited)
    }

    /// Waits until member `pid` has exited, reaps it and returns how it ended.
    pub fn wait(&mut self, pid: u32) -> Result<Exit, SysError> {
        let pid = i32::try_from(pid).map_err(|_| no_child("wait4"))?;
        self.reap(pid, false)?.ok_or_else(|| no_child("wait4"))
    }

    /// [`Group::wait`] for at most `limit`: `None` when member `pid` still runs then (it is
    /// neither signalled nor reaped).
    pub fn wait_within(&mut self, pid: u32, limit: Duration) -> Result<Option<Exit>, SysError> {
        if !wait_for_exit(pid, limit)? {
            return Ok(None);
        }
        self.wait(pid).map(Some)
    }

    /// Reaps a child of this process in the group that has ended (a member or, for a child
    /// subreaper, an orphan that came back to it), without waiting; `None` when none has.
    pub fn try_wait_any(&mut self) -> Result<Option<Exit>, SysError> {
        match self.id() {
            Some(pgid) => self.reap(-(pgid as i32), true),
            None => Ok(None),
        }
    }

    /// Waits until a child of this process in the group ends and reaps it; `None` when the
    /// group has no member left.
    pub fn wait_any(&mut self) -> Result<Option<Exit>, SysError> {
        match self.id() {
            Some(pgid) => self.reap(-(pgid as i32), false),
            None => Ok(None),
        }
    }

    /// Reaps every child of this process in the group, waiting for each: after a kill, the
    /// processes a child subreaper got back from killed members.
    pub fn reap_all(&mut self) {
        let pgid = self.last_id;
        if pgid <= 0 {
            return;
        }
        // Each one's children reparent to the subreaper before it can be reaped itself, so
        // waiting until none is left reaps the whole tree that stayed in the group.
        while let Ok(Some(_)) = self.reap(-pgid, false) {}
    }

    /// Reaps `which` (a pid, or minus a group's id for any child in that group), waiting
    /// unless `nohang`; `None` when `nohang` and none has ended, or when a group has no child
    /// left (ECHILD).
    fn reap(&mut self, which: i32, nohang: bool) -> Result<Option<Exit>, SysError> {
        let flags = if nohang { libc::WNOHANG } else { 0 };
        let waited = if Arc::strong_count(&self.state) == 1 {
            // With no signaller the lock cannot be contended: reap at once, as the lock would
            // only add system calls to a wait that a benchmark may time.
            let waited = wait4(which, flags)?;
            if let Waited::Ended(exit) = &waited {
                lock(&self.state).reaped(exit.pid as i32);
            }
            waited
        } else {
            // A signaller may signal the group meanwhile: wait for the end without reaping,
            // then forget and reap under the lock.
            let Some(pid) = waitid_nowait(which, nohang)? else {
                return Ok(None);
            };
            let mut state = lock(&self.state);
            state.reaped(pid);
            wait4(pid, 0)?
        };
        match waited {
            Waited::Ended(exit) => Ok(Some(exit)),
            Waited::Running => Ok(None),
            Waited::NoChild if which < 0 => Ok(None),
            Waited::NoChild => Err(no_child("wait4")),
        }
    }
}

impl Drop for Group {
    /// Kills the members that are not reaped yet and reaps them.
    fn drop(&mut self) {
        let live = lock(&self.state).live.clone();
        if live.is_empty() {
            return;
        }
        self.kill();
        for pid in live {
            let _ = self.reap(pid, false);
        }
    }
}

/// A process that held a pipe of a group's member ([`Group::kill_with_holders`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its command name (proc(5), field 2 of /proc/PID/stat), when it could be read.
    pub command: Option<String>,
}

fn no_child(call: &'static str) -> SysError {
    SysError::Syscall {
        call,
        source: io::Error::from_raw_os_error(libc::ECHILD),
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn timeval_ns(tv: libc::timeval) -> i64 {
    tv.tv_sec * 1_000_000_000 + tv.tv_usec * 1_000
}

/// What [`wait4`] found.
enum Waited {
    Ended(Exit),
    /// WNOHANG, and nothing has ended.
    Running,
    /// No such child (ECHILD): a group without a child left, or a pid that is none.
    NoChild,
}

/// wait4(2) of `which` (a pid, minus a group's id, or -1 for any child) with `flags`, retried
/// on EINTR.
fn wait4(which: i32, flags: i32) -> Result<Waited, SysError> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 only writes into `status` and `ru`.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to local variables.
        let r = unsafe { libc::wait4(which, &mut status, flags, &mut ru) };
        if r > 0 {
            return Ok(Waited::Ended(Exit {
                pid: r.unsigned_abs(),
                status,
                rusage: Rusage {
                    user_cpu_ns: timeval_ns(ru.ru_utime),
                    system_cpu_ns: timeval_ns(ru.ru_stime),
                    voluntary_cs: ru.ru_nvcsw,
                    involuntary_cs: ru.ru_nivcsw,
                    // ru_maxrss is in kilobytes (getrusage(2)).
                    max_rss_bytes: ru.ru_maxrss * 1024,
                },
            }));
        }
        if r == 0 {
            return Ok(Waited::Running);
        }
        match errno() {
            libc::EINTR => continue,
            libc::ECHILD => return Ok(Waited::NoChild),
            _ => return Err(SysError::last_os("wait4")),
        }
    }
}

/// waitid(2) with WNOWAIT: the pid of `which` (a pid, or minus a group's id) once it has
/// exited, left to be reaped; `None` for `nohang` with nothing ended, or for a group without a
/// child left.
fn waitid_nowait(which: i32, nohang: bool) -> Result<Option<i32>, SysError> {
    let (idtype, id) = if which < 0 {
        (libc::P_PGID, which.unsigned_abs())
    } else {
        (libc::P_PID, which.unsigned_abs())
    };
    let flags = libc::WEXITED | libc::WNOWAIT | if nohang { libc::WNOHANG } else { 0 };
    loop {
        // SAFETY: an all-zero siginfo_t is a valid out value for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t.
        let r = unsafe { libc::waitid(idtype, id, &mut info, flags) };
        if r == 0 {
            // SAFETY: waitid filled `info`; si_pid 0 means nothing has ended (WNOHANG).
            let pid = unsafe { info.si_pid() };
            return Ok((pid > 0).then_some(pid));
        }
        match errno() {
            libc::EINTR => continue,
            libc::ECHILD if which < 0 => return Ok(None),
            _ => return Err(SysError::last_os("waitid")),
        }
    }
}

/// Whether child `pid` has exited, left to be reaped (WNOHANG | WNOWAIT).
fn has_exited(pid: i32) -> bool {
    // SAFETY: an all-zero siginfo_t is a valid out value for waitid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid out pointer.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid.unsigned_abs(),
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: waitid filled `info` (si_pid 0: no state change yet).
    r == 0 && unsafe { info.si_pid() } != 0
}

/// Waits until process `pid` (any process, not only a child) has exited or `limit` has
/// passed, without reaping it; true when it exited or is gone. A pidfd (pidfd_open(2), Linux
/// 5.3) becomes readable when its process exits; without one, /proc is read every millisecond.
pub fn wait_for_exit(pid: u32, limit: Duration) -> Result<bool, SysError> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let deadline = Instant::now() + limit;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if raw < 0 {
        return match errno() {
            // Gone, and reaped.
            libc::ESRCH => Ok(true),
            libc::ENOSYS => Ok(poll_proc_for_exit(pid, deadline)),
            _ => Err(SysError::last_os("pidfd_open")),
        };
    }
    // SAFETY: `raw` is a descriptor this process just got and nothing else owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(raw as i32) };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let ms = i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX);
        let mut pfd = libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r > 0 {
            return Ok(true);
        }
        if r < 0 && errno() != libc::EINTR {
            return Err(SysError::last_os("poll"));
        }
    }
}

/// Without pidfds: whether `pid` ends (is a zombie or gone) by `deadline`, read from /proc.
fn poll_proc_for_exit(pid: u32, deadline: Instant) -> bool {
    loop {
        if read_pid_stat(pid).is_none_or(|s| matches!(s.state, 'Z' | 'X')) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Has `command`'s process receive `signal` when the thread that spawns it ends (prctl(2)
/// PR_SET_PDEATHSIG, set between fork and exec), so that it does not run on after its parent;
/// the spawn fails (ESRCH) when the parent ended before that, since the signal would then
/// never come.
pub fn die_with_parent(command: &mut Command, signal: i32) {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and makes only async-signal-safe system
    // calls.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// For a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), to which orphaned descendants
/// come back: reaps every child of this process that has ended, without waiting. The members
/// of `group` among them are reaped through it (it forgets them) and their exits returned.
pub fn reap_ended_children(group: Option<&mut Group>) -> Vec<Exit> {
    // The group's lock is held while reaping, so that no signaller signals an id just freed.
    let mut state = group.map(|g| lock(&g.state));
    let mut exits = Vec::new();
    while let Ok(Waited::Ended(exit)) = wait4(-1, libc::WNOHANG) {
        if state.as_mut().is_some_and(|s| s.reaped(exit.pid as i32)) {
            exits.push(exit);
        }
    }
    exits
}

/// For a child subreaper: SIGKILL to every descendant of this process, again until none runs,
/// reaping its children as they end, for at most `limit` (orphans come back to a subreaper, so
/// none leaves the tree).
pub fn end_descendants(limit: Duration) {
    let me = std::process::id();
    let deadline = Instant::now() + limit;
    loop {
        reap_ended_children(None);
        let others: Vec<i32> = process_tree(me)
            .into_iter()
            .filter(|(pid, stat)| *pid != me && !matches!(stat.state, 'Z' | 'X'))
            .filter_map(|(pid, _)| i32::try_from(pid).ok())
            .collect();
        if others.is_empty() || Instant::now() > deadline {
            break;
        }
        for pid in others {
            // A descendant, not reaped yet: its parent is in the tree.
            send(pid, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // The zombies of the children that died last.
    while Instant::now() < deadline {
        match wait4(-1, libc::WNOHANG) {
            Ok(Waited::Ended(_)) => {}
            Ok(Waited::Running) => std::thread::sleep(Duration::from_millis(1)),
            Ok(Waited::NoChild) | Err(_) => break,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::process::Stdio;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]).stdin(Stdio::null());
        command
    }

    /// Whether this process may still wait for `pid` (a child not yet reaped).
    fn is_unreaped_child(pid: u32) -> bool {
        // SAFETY: an all-zero siginfo_t is a valid out value for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid out pointer.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        r == 0
    }

    #[test]
    fn a_member_is_waited_for_with_its_status_and_resource_usage() {
        let mut group = Group::new();
        let spawned = group
            .spawn(&mut sh(
                "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3",
            ))
            .unwrap();
        assert_eq!(group.leader(), Some(spawned.pid));
        assert_eq!(group.id(), Some(spawned.pid));
        let exit = group.wait(spawned.pid).unwrap();
        assert_eq!(
            (exit.pid, exit.code(), exit.signal()),
            (spawned.pid, Some(3), None)
        );
        assert!(!exit.success());
        assert_eq!(exit.to_string(), "exited with status 3");
        assert!(exit.rusage.cpu_ns() > 0, "{:?}", exit.rusage);
        assert!(exit.rusage.max_rss_bytes > 0, "{:?}", exit.rusage);
        // Reaped: the id is forgotten, and signalling does nothing.
        assert_eq!((group.id(), group.live()), (None, 0));
        group.signaller().kill();
        assert!(group.wait(spawned.pid).is_err());
    }

    #[test]
    fn killing_a_group_at_its_time_limit_kills_what_its_leader_started() {
        let mut group = Group::new();
        let mut command = sh("sleep 1000 & echo $!; wait");
        let spawned = group.spawn(command.stdout(Stdio::piped())).unwrap();
        let mut line = [0u8; 32];
        let n = spawned.stdout.unwrap().read(&mut line).unwrap();
        let sleeper: u32 = std::str::from_utf8(&line[..n])
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(group
            .wait_within(spawned.pid, Duration::from_millis(50))
            .unwrap()
            .is_none());
        assert!(
            is_unreaped_child(spawned.pid),
            "a timed-out wait reaps nothing"
        );
        group.kill();
        let exit = group.wait(spawned.pid).unwrap();
        assert_eq!(exit.signal(), Some(libc::SIGKILL));
        assert_eq!(exit.to_string(), "was killed by signal 9");
        // The sleeper, a member of the group but not a child of this process, died too.
        assert!(wait_for_exit(sleeper, Duration::from_secs(60)).unwrap());
    }

    #[test]
    fn a_signaller_in_another_thread_ends_the_wait() {
        let mut group = Group::new();
        let spawned = group.spawn(&mut sh("exec sleep 1000")).unwrap();
        let signaller = group.signaller();
        let watchdog = std::thread::spawn(move || signaller.kill());
        let exit = group.wait(spawned.pid).unwrap();
        watchdog.join().unwrap();
        assert_eq!(exit.signal(), Some(libc::SIGKILL));
        assert_eq!(group.id(), None);
    }

    #[test]
    fn dropping_a_group_kills_and_reaps_its_members() {
        let mut group = Group::new();
        let first = group.spawn(&mut sh("exec sleep 1000")).unwrap().pid;
        let second = group.spawn(&mut sh("exec sleep 1000")).unwrap().pid;
        assert_eq!(group.live(), 2);
        let pgid = group.id().unwrap();
        assert_eq!(pgid, first);
        if let Some(stat) = read_pid_stat(second) {
            assert_eq!(
                stat.pgrp, pgid,
                "the second member joined the first's group"
            );
        }
        drop(group);
        for pid in [first, second] {
            assert!(!is_unreaped_child(pid), "{pid} was not reaped");
        }
    }

    #[test]
    fn forked_members_are_waited_for_in_any_order() {
        let mut group = Group::new();
        for code in [0, 7] {
            // SAFETY: the work only returns a number.
            unsafe { group.fork(move || code) }.unwrap();
        }
        let mut codes = Vec::new();
        while let Some(exit) = group.wait_any().unwrap() {
            codes.push(exit.code().unwrap());
        }
        codes.sort_unstable();
        assert_eq!(codes, [0, 7]);
        assert_eq!(group.live(), 0);
        assert!(group.try_wait_any().unwrap().is_none());
    }

    #[test]
    fn the_end_of_any_process_is_awaited() {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        assert!(wait_for_exit(pid, Duration::from_secs(60)).unwrap());
        child.wait().unwrap();
        // Reaped and gone.
        assert!(wait_for_exit(pid, Duration::ZERO).unwrap());
        // This process runs on.
        assert!(!wait_for_exit(std::process::id(), Duration::from_millis(1)).unwrap());
    }

    #[test]
    fn a_spawn_that_fails_is_no_member() {
        let mut group = Group::new();
        let e = group
            .spawn(&mut Command::new("/nonexistent/vernier-test"))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!((group.id(), group.live()), (None, 0));
    }

    #[test]
    fn a_test_process_does_not_lead_its_group() {
        // cargo's test harness runs in the group of whoever started it.
        // SAFETY: getpgrp and getpid have no preconditions.
        let leads = unsafe { libc::getpgrp() == libc::getpid() };
        assert_eq!(Group::own().is_some(), leads);
    }
}
