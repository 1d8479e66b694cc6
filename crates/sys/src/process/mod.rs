//! Processes: which process owns something that outlives a call (a recording session, a
//! restore record) and whether that process still runs; what /proc shows of a process, its
//! group, its tree and the holders of a pipe; and the process groups vernier starts and kills
//! ([`Group`]).
//!
//! A pid alone is not enough: after a reboot every pid is new, and within one boot the kernel
//! hands a freed pid to a later process. The boot id (random(4):
//! /proc/sys/kernel/random/boot_id, new at every boot) and the start time of the process
//! (proc(5): field 22 `starttime` of /proc/PID/stat, clock ticks after boot) together with the
//! pid name one process of one boot.

use std::path::Path;

mod group;

pub use group::{
    die_with_parent, end_descendants, reap_ended_children, wait_for_exit, Exit, Group, Holder,
    Signaller, Spawned, ORPHAN_STATUS, PANIC_STATUS,
};

const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// One process of one boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity {
    pub pid: u32,
    /// The boot id when the identity was taken; `None` where the kernel does not expose it.
    pub boot_id: Option<String>,
    /// `starttime` of /proc/PID/stat; `None` without procfs.
    pub start_ticks: Option<u64>,
}

impl ProcessIdentity {
    /// This process.
    pub fn current() -> Self {
        let pid = std::process::id();
        ProcessIdentity {
            pid,
            boot_id: boot_id(),
            start_ticks: read_stat(pid).ok().map(|s| s.start_ticks),
        }
    }

    /// The process with this pid now, if procfs shows one.
    pub fn of(pid: u32) -> Option<Self> {
        let stat = read_stat(pid).ok()?;
        Some(ProcessIdentity {
            pid,
            boot_id: boot_id(),
            start_ticks: Some(stat.start_ticks),
        })
    }

    /// Whether this is the calling process.
    pub fn is_current(&self) -> bool {
        self.pid == std::process::id() && self.is_alive()
    }

    /// Whether the process still runs: same boot, its pid in use by a process that is not a
    /// zombie and that started when it did. What cannot be told (no boot id, no procfs, a
    /// process hidden by `hidepid`) counts as alive, so a live owner is never taken for dead.
    pub fn is_alive(&self) -> bool {
        if let (Some(then), Some(now)) = (&self.boot_id, boot_id()) {
            if *then != now {
                return false;
            }
        }
        match read_stat(self.pid) {
            Ok(stat) => {
                // Z: a zombie, dead but not yet reaped; X: dead (proc(5), field 3).
                !matches!(stat.state, 'Z' | 'X')
                    && self.start_ticks.is_none_or(|t| t == stat.start_ticks)
            }
            Err(_) => pid_exists(self.pid),
        }
    }
}

/// /proc/sys/kernel/random/boot_id, trimmed.
pub fn boot_id() -> Option<String> {
    std::fs::read_to_string(Path::new(BOOT_ID))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Whether some process has this pid: kill(2) with signal 0 checks without sending anything;
/// EPERM means it exists but belongs to another user.
pub fn pid_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // Signal 0 performs only the existence and permission checks.
    send(pid, 0) || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// kill(2): sends `signal` to process `pid`, or to process group `-pid`; false when it
/// could not (the process is gone, or another user's). Async-signal-safe. The only place
/// vernier sends a signal to another process: who may be signalled is decided around it
/// ([`Group`] signals only ids that cannot have been reused).
fn send(pid: i32, signal: i32) -> bool {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe { libc::kill(pid, signal) == 0 }
}

/// The fields of a /proc/PID/stat line that vernier uses (proc(5)); times in clock ticks
/// (USER_HZ, [`crate::clock::clock_ticks_per_second`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidStat {
    /// Field 2, the command name, without its parentheses.
    pub comm: String,
    /// Field 3, e.g. `R`, `S`, `Z`.
    pub state: char,
    /// Field 4: the parent process.
    pub ppid: u32,
    /// Field 5: the process group.
    pub pgrp: u32,
    /// Field 14: time spent in user mode.
    pub utime: u64,
    /// Field 15: time spent in kernel mode.
    pub stime: u64,
    /// Fields 16 and 17: user and kernel time of the children it has waited for.
    pub cutime: u64,
    pub cstime: u64,
    /// Field 22 `starttime`: when the process started, after boot.
    pub start_ticks: u64,
}

fn read_stat(pid: u32) -> Result<PidStat, ()> {
    read_pid_stat(pid).ok_or(())
}

/// /proc/PID/stat of one process, if procfs shows it.
pub fn read_pid_stat(pid: u32) -> Option<PidStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_pid_stat(&text)
}

/// CPU time of process `pid`'s live threads in nanoseconds, exact: the sum of the first field
/// of /proc/PID/task/TID/schedstat (time spent on the CPU, Documentation/scheduler/
/// sched-stats.rst), where /proc/PID/stat's utime and stime are whole clock ticks, truncated.
/// `None` where the kernel has no schedstat (CONFIG_SCHED_INFO) or the process is gone.
pub fn threads_runtime_ns(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0u64;
    let mut any = false;
    for task in tasks.filter_map(Result::ok) {
        let path = task.path().join("schedstat");
        // A thread that ends while the tasks are read is left out.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
        any = true;
    }
    any.then_some(total)
}

/// Every process /proc shows now (zombies included), with its stat line. A process that ends
/// while /proc is read is left out.
fn all_processes() -> Vec<(u32, PidStat)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, read_pid_stat(pid)?)))
        .collect()
}

/// The processes of process group `pgrp` that /proc shows now (zombies included), with their
/// stat lines.
pub fn process_group_members(pgrp: u32) -> Vec<(u32, PidStat)> {
    all_processes()
        .into_iter()
        .filter(|(_, stat)| stat.pgrp == pgrp)
        .collect()
}

/// Process `pid` and its descendants that /proc shows now (zombies included), with their stat
/// lines, `pid` first if it is shown.
pub fn process_tree(pid: u32) -> Vec<(u32, PidStat)> {
    let all = all_processes();
    let mut tree: Vec<(u32, PidStat)> = Vec::new();
    let mut members = vec![pid];
    let mut i = 0;
    while i < members.len() {
        let parent = members[i];
        for (child, stat) in &all {
            if stat.ppid == parent && !members.contains(child) {
                members.push(*child);
            }
        }
        i += 1;
    }
    for member in members {
        if let Some((p, stat)) = all.iter().find(|(p, _)| *p == member) {
            tree.push((*p, stat.clone()));
        }
    }
    tree
}

/// The processes, other than this one, that /proc shows holding a descriptor of the pipe whose
/// inode is `inode` (either end: both are one inode, shown as `pipe:[INODE]` by proc(5)'s
/// /proc/PID/fd links). A child that left its parent's process group and session (`setsid`)
/// while holding the write end of the parent's output is found here when it is found nowhere
/// else. Processes of other users whose descriptors this one may not read are left out.
pub fn pipe_holders(inode: u64) -> Vec<u32> {
    let target = format!("pipe:[{inode}]");
    let me = std::process::id();
    all_processes()
        .into_iter()
        .map(|(pid, _)| pid)
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.filter_map(Result::ok).any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == target.as_str())
                })
            })
        })
        .collect()
}

/// CPU time of process `pid`, its live descendants and the children they reaped, in
/// nanoseconds: the live threads' exact runtimes ([`threads_runtime_ns`]; their clock ticks
/// without schedstat), and the reaped children's times in clock ticks (one truncation per
/// process that reaped some, instead of one per process of a tree that starts many
/// short-lived ones, as hackbench does).
///
/// Reading a busy process tree takes long on a machine the tree itself saturates, and what it
/// uses meanwhile would count as someone else's. So the descendants are stopped (SIGSTOP)
/// while their times are read, and continued right after. `pid` itself is not stopped: it
/// should be a child of this process that kills its descendants when this process dies
/// (SIGKILL ends stopped processes too).
pub fn tree_cpu_ns(pid: u32) -> i64 {
    let tick_ns = 1e9 / crate::clock::clock_ticks_per_second() as f64;
    let ticks = |t: u64| (t as f64 * tick_ns) as i64;
    let members: Vec<u32> = process_tree(pid)
        .into_iter()
        .filter(|(_, s)| !matches!(s.state, 'Z' | 'X'))
        .map(|(p, _)| p)
        .collect();
    let descendants: Vec<i32> = members
        .get(1..)
        .unwrap_or_default()
        .iter()
        .filter_map(|&p| i32::try_from(p).ok())
        .collect();
    for &p in &descendants {
        send(p, libc::SIGSTOP);
    }
    let total = members
        .iter()
        .filter_map(|&p| {
            let stat = read_pid_stat(p)?;
            let own = threads_runtime_ns(p)
                .map(|ns| ns as i64)
                .unwrap_or_else(|| ticks(stat.utime + stat.stime));
            Some(own + ticks(stat.cutime + stat.cstime))
        })
        .sum();
    for &p in &descendants {
        send(p, libc::SIGCONT);
    }
    total
}

/// Parses a /proc/PID/stat line. Field 2, the command name in parentheses, may itself hold
/// spaces and parentheses, so fields are counted after the last closing parenthesis.
pub fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let (head, rest) = text.rsplit_once(')')?;
    let comm = head.get(open + 1..)?.to_string();
    // rest holds fields 3, 4, ...: field n is the (n - 3)th.
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let number = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(PidStat {
        comm,
        state: fields.first()?.chars().next()?,
        ppid: number(4)?.try_into().ok()?,
        pgrp: number(5)?.try_into().ok()?,
        utime: number(14)?,
        stime: number(15)?,
        cutime: number(16)?,
        cstime: number(17)?,
        start_ticks: number(22)?,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_state_and_start_time_past_odd_command_names() {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 \
                    987654 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1";
        let stat = parse_pid_stat(line).unwrap();
        assert_eq!(stat.comm, "a (b) c");
        assert_eq!(stat.state, 'S');
        assert_eq!((stat.utime, stat.stime), (5, 3));
        assert_eq!((stat.cutime, stat.cstime), (0, 0));
        assert_eq!((stat.ppid, stat.pgrp), (1, 4242));
        assert_eq!(stat.start_ticks, 987654);
        assert!(parse_pid_stat("4242 (x) S 1 2").is_none());
        assert!(parse_pid_stat("").is_none());
        let this = std::fs::read_to_string("/proc/self/stat").unwrap();
        // The test harness's main thread, whose state varies; its start time does not.
        assert!(parse_pid_stat(&this).is_some_and(|s| s.start_ticks > 0 && !s.comm.is_empty()));
    }

    #[test]
    fn the_runtime_of_a_busy_process_grows() {
        // A child of one thread that only burns CPU: the test binary's own threads (other
        // tests) end at any time and take their runtime out of its sum.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let Some(before) = threads_runtime_ns(pid) else {
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("skipped: no /proc/PID/task/TID/schedstat");
            return;
        };
        // On a machine busy with other work the child may wait for a CPU; it gets one within
        // seconds.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut after = before;
        while after <= before && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
            after = threads_runtime_ns(pid).unwrap_or(before);
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(after > before, "{before} -> {after}");
    }

    #[test]
    fn the_tree_of_a_process_holds_its_children() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let me = std::process::id();
        let tree = process_tree(me);
        child.kill().unwrap();
        child.wait().unwrap();
        if tree.is_empty() {
            eprintln!("skipped: no /proc");
            return;
        }
        assert_eq!(tree[0].0, me);
        assert!(tree.iter().any(|(p, s)| *p == child.id() && s.ppid == me));
    }

    #[test]
    fn the_holders_of_a_pipe_are_found() {
        use std::os::unix::fs::MetadataExt;
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let read_end = child.stdout.take().unwrap();
        let inode = std::fs::File::from(std::os::fd::OwnedFd::from(read_end))
            .metadata()
            .unwrap()
            .ino();
        let holders = pipe_holders(inode);
        child.kill().unwrap();
        child.wait().unwrap();
        if all_processes().is_empty() {
            eprintln!("skipped: no /proc");
            return;
        }
        // The child holds the write end; this process, which holds the read end, is left out.
        assert_eq!(holders, [child.id()]);
    }

    #[test]
    fn this_process_is_alive_and_others_are_told_apart() {
        let me = ProcessIdentity::current();
        assert!(me.is_alive());
        assert!(me.is_current());
        if me.start_ticks.is_none() {
            eprintln!("skipped: no /proc/self/stat, start times cannot be compared");
            return;
        }
        // The same pid with another start time is a later process that reused the pid.
        let reused = ProcessIdentity {
            start_ticks: me.start_ticks.map(|t| t + 1),
            ..me.clone()
        };
        assert!(!reused.is_alive());
        let other_boot = ProcessIdentity {
            boot_id: Some("not-this-boot".into()),
            ..me.clone()
        };
        if me.boot_id.is_some() {
            assert!(!other_boot.is_alive());
        }
    }

    #[test]
    fn a_reaped_child_is_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let Some(id) = ProcessIdentity::of(child.id()) else {
            child.wait().unwrap();
            eprintln!("skipped: no /proc/PID/stat, start times cannot be compared");
            return;
        };
        // Not reaped yet: a zombie, already dead.
        while read_stat(child.id()).is_ok_and(|s| s.state != 'Z') {
            std::thread::yield_now();
        }
        assert!(!id.is_alive());
        child.wait().unwrap();
        // Reaped: the pid is free, or reused by a process with another start time.
        assert!(!id.is_alive());
    }
}
