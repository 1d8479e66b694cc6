//! What this machine lets a benchmark start: tasks, open files, memory and CPUs. Read from
//! /proc and /sys under an injected root (so plans are checked against fixture trees in tests)
//! and compared with what a configuration needs before anything starts: a run that asks for
//! more tasks than the PID space holds must be refused, not fork until the machine is full.
//!
//! Every field is what the kernel enforces at fork(2) or open(2) (kernel/fork.c
//! copy_process(), kernel/pid.c alloc_pid(), fs/file.c), for the vernier process whose children
//! inherit its limits. A limit that cannot be read is `None` and checks nothing.

use std::path::{Path, PathBuf};

use crate::loadavg::read_loadavg;
use crate::meminfo::parse_meminfo;
use crate::{cpulist, Reads, Roots};

/// PIDs below this are not handed out again once the PID counter wraps (kernel/pid.c
/// RESERVED_PIDS), so they do not count as room for new tasks.
const RESERVED_PIDS: u64 = 300;

/// CAP_SYS_ADMIN and CAP_SYS_RESOURCE (linux/capability.h): either exempts a task from
/// RLIMIT_NPROC, as does a real user id of 0 (kernel/fork.c copy_process()).
const CAP_SYS_ADMIN: u32 = 21;
const CAP_SYS_RESOURCE: u32 = 24;
/// CAP_IPC_LOCK exempts a task from RLIMIT_MEMLOCK (mm/mlock.c can_do_mlock(), mlockall()).
const CAP_IPC_LOCK: u32 = 14;
/// CAP_SYS_NICE exempts a task from RLIMIT_RTPRIO (kernel/sched/syscalls.c
/// user_check_sched_setscheduler()).
const CAP_SYS_NICE: u32 = 23;

/// The limits that bound what a benchmark run may start, as read on one machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachineLimits {
    /// kernel.pid_max: every task (process or thread) takes a PID below it.
    pub pid_max: Option<u64>,
    /// kernel.threads-max: the number of tasks the kernel allows in total.
    pub threads_max: Option<u64>,
    /// Tasks that exist now: the second number of the fourth field of /proc/loadavg
    /// (proc(5): "the number of kernel scheduling entities that currently exist").
    pub tasks: Option<u64>,
    /// Soft RLIMIT_NPROC when it applies to this process: `None` when unlimited or when the
    /// process is exempt (real uid 0, CAP_SYS_ADMIN or CAP_SYS_RESOURCE).
    pub nproc: Option<u64>,
    /// Tasks of this process's real user now, which RLIMIT_NPROC counts (0 unless `nproc`).
    pub user_tasks: u64,
    /// The least room the cgroup pids controller leaves, over this process's cgroup and its
    /// ancestors: (pids.max, pids.current) of the tightest one.
    pub cgroup_pids: Option<(u64, u64)>,
    /// Soft RLIMIT_NOFILE: open file descriptors per process.
    pub nofile: Option<u64>,
    /// MemAvailable of /proc/meminfo in bytes: memory that can be used without swapping.
    pub mem_available_bytes: Option<u64>,
    /// The CPUs this process may run on (Cpus_allowed_list of /proc/self/status, limited to
    /// the online CPUs); empty when unknown.
    pub cpus: Vec<usize>,
    /// Hard RLIMIT_RTPRIO when it bounds this process: the highest SCHED_FIFO or SCHED_RR
    /// priority it may take (a process may raise its soft limit up to the hard one, as
    /// cyclictest does). `None` with CAP_SYS_NICE, or when unknown.
    pub rtprio: Option<u64>,
    /// Hard RLIMIT_MEMLOCK in bytes when it bounds this process: mlockall(MCL_CURRENT) fails
    /// when the process maps more than this (mm/mlock.c). `None` when unlimited, with
    /// CAP_IPC_LOCK, or when unknown.
    pub memlock_bytes: Option<u64>,
}

/// A privilege a configuration needs and this process lacks, as one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PrivilegeError(pub String);

/// A need that the machine cannot meet, as one line: "needs 20001 tasks; only ... ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("needs {needed} {what}; {limit}")]
pub struct LimitError {
    pub needed: u64,
    pub what: &'static str,
    /// Which limit is too small and how to see or raise it.
    pub limit: String,
}

impl MachineLimits {
    /// Reads the limits of the calling process on the machine under `roots`. Never fails: what
    /// cannot be read is left unknown.
    pub fn read(roots: &Roots) -> Self {
        Self::read_through(roots, &Reads::new())
    }

    /// [`MachineLimits::read`], with the files that the environment capture and the system
    /// check of the same start-up read too (sysctls, /proc/meminfo, the cgroup's pids files)
    /// read through `reads`.
    pub fn read_through(roots: &Roots, reads: &Reads) -> Self {
        let proc_root = &roots.proc_root;
        let number = |path: PathBuf| {
            reads
                .read(&path)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
        };
        let status = std::fs::read_to_string(proc_root.join("self/status")).unwrap_or_default();
        let limits = std::fs::read_to_string(proc_root.join("self/limits")).unwrap_or_default();
        let real_uid = status_field(&status, "Uid")
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u32>().ok());
        let capabilities = status_field(&status, "CapEff")
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .unwrap_or(0);
        let exempt = real_uid == Some(0)
            || capabilities & (1 << CAP_SYS_ADMIN) != 0
            || capabilities & (1 << CAP_SYS_RESOURCE) != 0;
        let nproc = parse_soft_limit(&limits, "Max processes").filter(|_| !exempt);
        let capable = |cap: u32| capabilities & (1 << cap) != 0;
        let rtprio = parse_hard_limit(&limits, "Max realtime priority")
            .flatten()
            .filter(|_| !capable(CAP_SYS_NICE));
        let memlock_bytes = parse_hard_limit(&limits, "Max locked memory")
            .flatten()
            .filter(|_| !capable(CAP_IPC_LOCK));
        let user_tasks = match (nproc, real_uid) {
            (Some(_), Some(uid)) => count_user_tasks(proc_root, uid),
            _ => 0,
        };
        let online = cpulist::read_online_cpus(&roots.sys_root).ok();
        let allowed = status_field(&status, "Cpus_allowed_list")
            .and_then(|v| cpulist::parse_cpu_list(v).ok());
        let cpus = match (allowed, online) {
            (Some(allowed), Some(online)) => {
                allowed.into_iter().filter(|c| online.contains(c)).collect()
            }
            (Some(cpus), None) | (None, Some(cpus)) => cpus,
            (None, None) => Vec::new(),
        };
        MachineLimits {
            pid_max: number(proc_root.join("sys/kernel/pid_max")),
            threads_max: number(proc_root.join("sys/kernel/threads-max")),
            tasks: read_loadavg(proc_root).ok().map(|l| l.tasks),
            nproc,
            user_tasks,
            cgroup_pids: std::fs::read_to_string(proc_root.join("self/cgroup"))
                .ok()
                .and_then(|t| cgroup_pids_room(&roots.sys_root, &t, reads)),
            nofile: parse_soft_limit(&limits, "Max open files"),
            mem_available_bytes: reads
                .read(&proc_root.join("meminfo"))
                .ok()
                .and_then(|t| parse_meminfo(&t).ok())
                .and_then(|m| m.get("MemAvailable")),
            cpus,
            rtprio,
            memlock_bytes,
        }
    }

    /// Checks that `needed` more tasks (processes and threads) can start now.
    pub fn check_tasks(&self, needed: u64) -> Result<(), LimitError> {
        let tasks = self.tasks.unwrap_or(0);
        let running =
            |what: &str, limit: u64| format!("{what} is {limit} and {tasks} tasks exist already");
        let mut rooms: Vec<(u64, String)> = Vec::new();
        if let Some(max) = self.pid_max {
            rooms.push((
                max.saturating_sub(RESERVED_PIDS).saturating_sub(tasks),
                running("kernel.pid_max", max),
            ));
        }
        if let Some(max) = self.threads_max {
            rooms.push((
                max.saturating_sub(tasks),
                running("kernel.threads-max", max),
            ));
        }
        if let Some(max) = self.nproc {
            rooms.push((
                max.saturating_sub(self.user_tasks),
                format!(
                    "RLIMIT_NPROC (ulimit -u) is {max} and this user has {} tasks",
                    self.user_tasks
                ),
            ));
        }
        if let Some((max, current)) = self.cgroup_pids {
            rooms.push((
                max.saturating_sub(current),
                format!("the cgroup's pids.max is {max} and it holds {current} tasks"),
            ));
        }
        match rooms.into_iter().min_by_key(|(room, _)| *room) {
            Some((room, why)) if needed > room => Err(LimitError {
                needed,
                what: "tasks",
                limit: format!("only {room} more can start here ({why})"),
            }),
            _ => Ok(()),
        }
    }

    /// Checks that one process may hold `needed` open file descriptors.
    pub fn check_files(&self, needed: u64) -> Result<(), LimitError> {
        match self.nofile {
            Some(max) if needed > max => Err(LimitError {
                needed,
                what: "open files in one process",
                limit: format!("RLIMIT_NOFILE (ulimit -n) is {max}"),
            }),
            _ => Ok(()),
        }
    }

    /// Checks that `bytes` of memory are available without swapping.
    pub fn check_memory(&self, bytes: u64) -> Result<(), LimitError> {
        match self.mem_available_bytes {
            Some(available) if bytes > available => Err(LimitError {
                needed: bytes,
                what: "bytes of memory",
                limit: format!("MemAvailable is {available} bytes"),
            }),
            _ => Ok(()),
        }
    }

    /// Checks that this process may run on at least `needed` distinct CPUs.
    pub fn check_cpus(&self, needed: u64) -> Result<(), LimitError> {
        let have = self.cpus.len() as u64;
        if self.cpus.is_empty() || needed <= have {
            return Ok(());
        }
        let list: Vec<String> = self.cpus.iter().map(usize::to_string).collect();
        Err(LimitError {
            needed,
            what: "CPUs",
            limit: format!(
                "this process may run on {have} (CPU {}; see taskset, cpusets and --setup pin)",
                list.join(",")
            ),
        })
    }
}

impl MachineLimits {
    /// Checks that a thread of this process may switch to SCHED_FIFO or SCHED_RR at
    /// `priority`.
    pub fn check_rt_priority(&self, priority: u64) -> Result<(), PrivilegeError> {
        match self.rtprio {
            Some(max) if priority > max => Err(PrivilegeError(format!(
                "real-time priority {priority} is not permitted here: RLIMIT_RTPRIO (ulimit -r) \
                 is {max} and the process lacks CAP_SYS_NICE (run as root, or raise rtprio in \
                 /etc/security/limits.conf)"
            ))),
            _ => Ok(()),
        }
    }

    /// Checks that this process may lock all its memory (mlockall(2)). A finite RLIMIT_MEMLOCK
    /// is refused: what a process maps (its binary, stacks, allocator arenas) is not known
    /// before it runs.
    pub fn check_memlock(&self) -> Result<(), PrivilegeError> {
        match self.memlock_bytes {
            Some(max) => Err(PrivilegeError(format!(
                "locking the memory (mlockall) is not permitted here: RLIMIT_MEMLOCK (ulimit -l) \
                 is {} KiB and the process lacks CAP_IPC_LOCK (run as root, or set memlock \
                 unlimited in /etc/security/limits.conf)",
                max / 1024
            ))),
            None => Ok(()),
        }
    }
}

/// The value of `Name:` in a /proc/PID/status text.
fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key == name).then_some(value.trim())
    })
}

/// The soft limit of a row of /proc/PID/limits (`Max processes  63704  63704  processes`);
/// `None` for `unlimited` or a missing row.
fn parse_soft_limit(limits: &str, row: &str) -> Option<u64> {
    let rest = limits.lines().find_map(|l| l.strip_prefix(row))?;
    rest.split_whitespace().next()?.parse().ok()
}

/// The hard limit of a row of /proc/PID/limits (`Max locked memory  8388608  8388608  bytes`):
/// `Some(None)` for `unlimited`, `None` for a missing or unreadable row.
fn parse_hard_limit(limits: &str, row: &str) -> Option<Option<u64>> {
    let rest = limits.lines().find_map(|l| l.strip_prefix(row))?;
    match rest.split_whitespace().nth(1)? {
        "unlimited" => Some(None),
        v => v.parse().ok().map(Some),
    }
}

/// Tasks whose real user id is `uid`: the sum of `Threads:` over /proc/PID/status. Processes
/// that end while being read are skipped.
fn count_user_tasks(proc_root: &Path, uid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .filter(|status| {
            status_field(status, "Uid")
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u32>().ok())
                == Some(uid)
        })
        .map(|status| {
            status_field(&status, "Threads")
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(1)
        })
        .sum()
}

/// The tightest (pids.max, pids.current) over the cgroup of /proc/self/cgroup `text` and its
/// ancestors, for cgroup v2 (`0::/path`) or the v1 pids hierarchy (`N:pids:/path`)
/// (Documentation/admin-guide/cgroup-v2.rst, "PID").
fn cgroup_pids_room(sys_root: &Path, text: &str, reads: &Reads) -> Option<(u64, u64)> {
    let base = sys_root.join("fs/cgroup");
    let mut dirs: Vec<PathBuf> = Vec::new();
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let relative = path.trim_start_matches('/');
        if id == "0" && controllers.is_empty() {
            dirs.push(base.join(relative));
            dirs.push(base.join("unified").join(relative));
        } else if controllers.split(',').any(|c| c == "pids") {
            dirs.push(base.join("pids").join(relative));
        }
    }
    let mut tightest: Option<(u64, u64)> = None;
    for dir in dirs {
        let mut level = Some(dir.as_path());
        while let Some(d) = level.filter(|d| d.starts_with(&base)) {
            // The walk up from `<base>/unified` meets `<base>` again: read once.
            let max = reads
                .read(&d.join("pids.max"))
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok());
            let current = reads
                .read(&d.join("pids.current"))
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok());
            if let (Some(max), Some(current)) = (max, current) {
                let room = max.saturating_sub(current);
                if tightest.is_none_or(|(m, c)| room < m.saturating_sub(c)) {
                    tightest = Some((max, current));
                }
            }
            level = d.parent();
        }
    }
    tightest
}

/// A per-process resource limit (getrlimit(2)) that vernier raises for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// RLIMIT_NOFILE: open file descriptors (`vernier serve` holds one per connection).
    OpenFiles,
    /// RLIMIT_RTPRIO: the highest SCHED_FIFO or SCHED_RR priority without CAP_SYS_NICE.
    RealtimePriority,
    /// RLIMIT_MEMLOCK: bytes locked in RAM without CAP_IPC_LOCK.
    LockedMemory,
}

impl Resource {
    fn raw(self) -> libc::__rlimit_resource_t {
        match self {
            Resource::OpenFiles => libc::RLIMIT_NOFILE,
            Resource::RealtimePriority => libc::RLIMIT_RTPRIO,
            Resource::LockedMemory => libc::RLIMIT_MEMLOCK,
        }
    }
}

/// Raises the soft limit of `resource` to `want`, or to its hard limit when that is lower, and
/// never lowers it: any process may move its soft limit up to the hard one (setrlimit(2)).
/// Returns the soft limit before and after (`u64::MAX` is RLIM_INFINITY), or `None` when it
/// cannot be read. A failed raise leaves the soft limit as it was, and `after` says so.
pub fn raise_soft_limit(resource: Resource, want: u64) -> Option<(u64, u64)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid out pointer.
    if unsafe { libc::getrlimit(resource.raw(), &mut limit) } != 0 {
        return None;
    }
    let before = limit.rlim_cur;
    let target = want.min(limit.rlim_max);
    if target <= before {
        return Some((before, before));
    }
    limit.rlim_cur = target;
    // SAFETY: `limit` is a valid rlimit whose soft value does not exceed its hard one.
    let raised = unsafe { libc::setrlimit(resource.raw(), &limit) } == 0;
    Some((before, if raised { target } else { before }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {

    #[test]
    fn a_soft_limit_is_raised_up_to_the_hard_one_and_never_lowered() {
        let (before, now) = raise_soft_limit(Resource::OpenFiles, 0).unwrap();
        assert_eq!(before, now, "never lowered");
        let mut hard = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `hard` is a valid out pointer.
        let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut hard) };
        assert_eq!(read, 0);
        let (_, raised) = raise_soft_limit(Resource::OpenFiles, u64::MAX).unwrap();
        assert_eq!(raised, hard.rlim_max, "up to the hard limit, not beyond");
        let (before, now) = raise_soft_limit(Resource::OpenFiles, raised).unwrap();
        assert_eq!((before, now), (raised, raised));
    }

    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const LIMITS: &str =
        "Limit                     Soft Limit           Hard Limit           Units     \n\
        Max processes             500                  63704                processes \n\
        Max open files            1024                 524288               files     \n\
        Max locked memory         8388608              8388608              bytes     \n\
        Max realtime priority     0                    0                              \n";

    /// A machine seen by a normal user (uid 1000, no capabilities) in a cgroup v2 leaf.
    fn fixture(dir: &Path) {
        write(dir, "proc/sys/kernel/pid_max", "32768\n");
        write(dir, "proc/sys/kernel/threads-max", "192731\n");
        write(dir, "proc/loadavg", "0.89 0.91 0.46 5/119 25859\n");
        write(
            dir,
            "proc/meminfo",
            "MemTotal: 4000 kB\nMemAvailable:   2000 kB\n",
        );
        write(
            dir,
            "proc/self/status",
            "Name:\tvernier\nUid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n\
             Cpus_allowed_list:\t1-3\n",
        );
        write(dir, "proc/self/limits", LIMITS);
        write(dir, "proc/self/cgroup", "0::/user.slice/vernier.scope\n");
        // Two processes of the user (3 tasks) and one of root.
        write(dir, "proc/1/status", "Uid:\t0\t0\t0\t0\nThreads:\t1\n");
        write(
            dir,
            "proc/40/status",
            "Uid:\t1000\t1000\t1000\t1000\nThreads:\t2\n",
        );
        write(
            dir,
            "proc/41/status",
            "Uid:\t1000\t1000\t1000\t1000\nThreads:\t1\n",
        );
        write(dir, "sys/devices/system/cpu/online", "0-2\n");
        write(dir, "sys/fs/cgroup/user.slice/pids.max", "1000\n");
        write(dir, "sys/fs/cgroup/user.slice/pids.current", "900\n");
        write(
            dir,
            "sys/fs/cgroup/user.slice/vernier.scope/pids.max",
            "max\n",
        );
        write(
            dir,
            "sys/fs/cgroup/user.slice/vernier.scope/pids.current",
            "3\n",
        );
    }

    #[test]
    fn reads_a_fixture_machine() {
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path());
        let limits = MachineLimits::read(&Roots::under(dir.path()));
        assert_eq!(
            limits,
            MachineLimits {
                pid_max: Some(32768),
                threads_max: Some(192_731),
                tasks: Some(119),
                nproc: Some(500),
                user_tasks: 3,
                cgroup_pids: Some((1000, 900)),
                nofile: Some(1024),
                mem_available_bytes: Some(2000 * 1024),
                cpus: vec![1, 2],
                rtprio: Some(0),
                memlock_bytes: Some(8 << 20),
            }
        );
    }

    #[test]
    fn capabilities_lift_the_real_time_and_memory_lock_limits() {
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path());
        let limits = MachineLimits::read(&Roots::under(dir.path()));
        assert_eq!(
            limits.check_rt_priority(99).unwrap_err().to_string(),
            "real-time priority 99 is not permitted here: RLIMIT_RTPRIO (ulimit -r) is 0 and \
             the process lacks CAP_SYS_NICE (run as root, or raise rtprio in \
             /etc/security/limits.conf)"
        );
        assert!(limits
            .check_memlock()
            .unwrap_err()
            .to_string()
            .contains("RLIMIT_MEMLOCK (ulimit -l) is 8192 KiB"));
        // CAP_IPC_LOCK (bit 14) and CAP_SYS_NICE (bit 23).
        write(
            dir.path(),
            "proc/self/status",
            "Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000804000\n",
        );
        let limits = MachineLimits::read(&Roots::under(dir.path()));
        assert_eq!((limits.rtprio, limits.memlock_bytes), (None, None));
        assert!(limits.check_rt_priority(99).is_ok() && limits.check_memlock().is_ok());
        // A hard limit is what counts: the soft one may be raised to it.
        write(
            dir.path(),
            "proc/self/limits",
            "Max locked memory         65536                unlimited            bytes     \n\
             Max realtime priority     0                    95                             \n",
        );
        write(
            dir.path(),
            "proc/self/status",
            "Uid:\t1000\t1000\t1000\t1000\n",
        );
        let limits = MachineLimits::read(&Roots::under(dir.path()));
        assert_eq!((limits.rtprio, limits.memlock_bytes), (Some(95), None));
        assert!(limits.check_rt_priority(95).is_ok() && limits.check_rt_priority(96).is_err());
    }

    #[test]
    fn root_and_capabilities_are_exempt_from_rlimit_nproc() {
        let dir = tempfile::tempdir().unwrap();
        fixture(dir.path());
        let status =
            |uid: u32, caps: &str| format!("Uid:\t{uid}\t{uid}\t{uid}\t{uid}\nCapEff:\t{caps}\n");
        write(
            dir.path(),
            "proc/self/status",
            &status(0, "0000000000000000"),
        );
        assert_eq!(MachineLimits::read(&Roots::under(dir.path())).nproc, None);
        // CAP_SYS_ADMIN (bit 21) without CAP_SYS_RESOURCE, as in this test's own container.
        write(
            dir.path(),
            "proc/self/status",
            &status(1000, "0000000000200000"),
        );
        assert_eq!(MachineLimits::read(&Roots::under(dir.path())).nproc, None);
        write(
            dir.path(),
            "proc/self/status",
            &status(1000, "0000000001000000"),
        );
        assert_eq!(MachineLimits::read(&Roots::under(dir.path())).nproc, None);
    }

    #[test]
    fn an_empty_tree_knows_nothing_and_checks_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let limits = MachineLimits::read(&Roots::under(dir.path()));
        assert_eq!(limits, MachineLimits::default());
        assert!(limits.check_tasks(u64::MAX).is_ok());
        assert!(limits.check_files(u64::MAX).is_ok());
        assert!(limits.check_memory(u64::MAX).is_ok());
        assert!(limits.check_cpus(64).is_ok());
    }

    #[test]
    fn the_tightest_task_limit_is_named() {
        let base = MachineLimits {
            pid_max: Some(32768),
            threads_max: Some(192_731),
            tasks: Some(119),
            ..MachineLimits::default()
        };
        // 32768 - 300 reserved - 119 existing.
        assert!(base.check_tasks(32349).is_ok());
        let e = base.check_tasks(32350).unwrap_err();
        assert_eq!(
            e.to_string(),
            "needs 32350 tasks; only 32349 more can start here \
             (kernel.pid_max is 32768 and 119 tasks exist already)"
        );
        let threads = MachineLimits {
            threads_max: Some(1000),
            ..base.clone()
        };
        let e = threads.check_tasks(2000).unwrap_err().to_string();
        assert!(
            e.contains("only 881 more") && e.contains("kernel.threads-max is 1000"),
            "{e}"
        );
        let nproc = MachineLimits {
            nproc: Some(500),
            user_tasks: 3,
            ..base.clone()
        };
        let e = nproc.check_tasks(498).unwrap_err().to_string();
        assert!(e.contains("RLIMIT_NPROC (ulimit -u) is 500"), "{e}");
        assert!(nproc.check_tasks(497).is_ok());
        let cgroup = MachineLimits {
            cgroup_pids: Some((1000, 900)),
            ..nproc
        };
        let e = cgroup.check_tasks(101).unwrap_err().to_string();
        assert!(
            e.contains("only 100 more") && e.contains("pids.max is 1000"),
            "{e}"
        );
    }

    #[test]
    fn files_memory_and_cpus() {
        let limits = MachineLimits {
            nofile: Some(1024),
            mem_available_bytes: Some(1 << 30),
            cpus: vec![3],
            ..MachineLimits::default()
        };
        assert!(limits.check_files(1024).is_ok());
        assert_eq!(
            limits.check_files(1025).unwrap_err().to_string(),
            "needs 1025 open files in one process; RLIMIT_NOFILE (ulimit -n) is 1024"
        );
        assert!(limits.check_memory(1 << 30).is_ok());
        assert!(limits.check_memory((1 << 30) + 1).is_err());
        assert!(limits.check_cpus(1).is_ok());
        let e = limits.check_cpus(2).unwrap_err().to_string();
        assert!(
            e.starts_with("needs 2 CPUs; this process may run on 1 (CPU 3"),
            "{e}"
        );
    }

    #[test]
    fn reads_the_real_machine() {
        let limits = MachineLimits::read(&Roots::real());
        assert!(limits.pid_max.is_some_and(|m| m > RESERVED_PIDS));
        assert!(limits.threads_max.is_some());
        assert!(limits.tasks.is_some_and(|t| t > 0));
        assert!(!limits.cpus.is_empty());
        assert!(limits.nofile.is_some_and(|n| n >= 3));
        // This very process can always start one task more.
        assert!(limits.check_tasks(1).is_ok());
    }
}
