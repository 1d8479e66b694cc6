//! Kernel tunables: /proc/sys/kernel and /proc/sys/vm (Documentation/admin-guide/sysctl/) and
//! the scheduler's debugfs knobs, as a map keyed like sysctl(8): `kernel.sched_rt_runtime_us`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::Reads;

/// Values longer than this are tables or dumps, not tunables.
const MAX_VALUE_BYTES: u64 = 4096;

/// Directories below the sysctl tree are shallow (`kernel.keys.maxkeys`); this bounds a walk of
/// a corrupt or looping tree.
const MAX_DEPTH: usize = 4;

/// Files that are state rather than configuration, or that reading changes:
/// - `kernel.random.*`: boot_id and uuid (a new random value per read), entropy counters;
/// - `kernel.ns_last_pid`, `kernel.{msg,sem,shm}_next_id`: the last PID and the next IPC ids
///   (checkpoint/restore state);
/// - `kernel.pty.nr`: ptys in use; `kernel.hung_task_detect_count`: a counter;
/// - `kernel.hostname`, `kernel.domainname`, `kernel.osrelease`, `kernel.ostype`,
///   `kernel.version`: identities kept in their own fields (the hostname is deliberately
///   outside the fingerprint);
/// - `vm.stat_refresh`: reading it folds every per-CPU vmstat counter into the totals
///   (Documentation/admin-guide/sysctl/vm.rst), a side effect on the monitors.
fn is_excluded(key: &str) -> bool {
    const EXCLUDED: &[&str] = &[
        "kernel.ns_last_pid",
        "kernel.msg_next_id",
        "kernel.sem_next_id",
        "kernel.shm_next_id",
        "kernel.pty.nr",
        "kernel.hung_task_detect_count",
        "kernel.hostname",
        "kernel.domainname",
        "kernel.osrelease",
        "kernel.ostype",
        "kernel.version",
        "vm.stat_refresh",
    ];
    key.starts_with("kernel.random.") || EXCLUDED.contains(&key)
}

/// The scheduler tunables that moved from sysctl to debugfs in 5.13 (kernel/sched/debug.c);
/// only plain values, not the `debug` dump or the per-domain directories.
const DEBUGFS_SCHED: &[&str] = &[
    "base_slice_ns",
    "latency_ns",
    "min_granularity_ns",
    "wakeup_granularity_ns",
    "migration_cost_ns",
    "nr_migrate",
    "tunable_scaling",
    "latency_warn_ms",
    "latency_warn_once",
];

/// Reads the sysctls under `<proc_root>/sys/kernel` and `<proc_root>/sys/vm`, and the
/// scheduler's debugfs tunables under `<sys_root>/kernel/debug/sched` (keyed `debug.sched.*`)
/// when debugfs is mounted and readable. Unreadable, write-only, huge and binary files are
/// skipped: the map holds what could be read.
///
/// The files are read through `reads`, where the system check finds those it looks at.
pub fn read_sysctls(proc_root: &Path, sys_root: &Path, reads: &Reads) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for top in ["kernel", "vm"] {
        walk(reads, &proc_root.join("sys").join(top), top, 0, &mut out);
    }
    let sched = sys_root.join("kernel/debug/sched");
    for name in DEBUGFS_SCHED {
        if let Some(value) = read_value(reads, &sched.join(name)) {
            out.insert(format!("debug.sched.{name}"), value);
        }
    }
    out
}

fn walk(reads: &Reads, dir: &Path, prefix: &str, depth: usize, out: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let key = format!("{prefix}.{name}");
        if is_excluded(&key) {
            continue;
        }
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            if depth < MAX_DEPTH {
                walk(reads, &entry.path(), &key, depth + 1, out);
            }
        } else if let Some(value) = read_value(reads, &entry.path()) {
            out.insert(key, value);
        }
    }
}

/// The value of one tunable with runs of white space folded to one space (multi-value sysctls
/// such as `kernel.printk` are tab-separated), or `None` when it is not a readable short text
/// (a write-only file does not open for reading: [`Reads::read`]).
///
/// The ~180 files are read in every session: their values can be changed at any moment and
/// nothing tells that one was (no change time on /proc/sys), so a cache would have to read
/// them all to know it still holds. They are read without a `stat` of each path first, which
/// made the walk about twice as slow, nor an `fstat` of each open file (the kernel checks a
/// tunable's mode at the open: [`Reads::read`]), which took the walk of 159 tunables from
/// 1.35 to 1.15 ms on the 2-vCPU KVM guest: some 5 us a file, four system calls each.
fn read_value(reads: &Reads, path: &Path) -> Option<String> {
    let text = reads.read(path).ok()?;
    if text.len() as u64 > MAX_VALUE_BYTES || text.contains('\0') {
        return None;
    }
    if text
        .chars()
        .any(|c| c.is_control() && !c.is_ascii_whitespace())
    {
        return None;
    }
    let value = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(root: &Path, rel: &str, content: &[u8]) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    #[test]
    fn reads_tunables_and_skips_state_write_only_huge_and_binary() {
        let dir = tempfile::tempdir().unwrap();
        let proc_root = dir.path().join("proc");
        let sys_root = dir.path().join("sys");
        write(&proc_root, "sys/kernel/sched_rt_runtime_us", b"950000\n");
        write(&proc_root, "sys/kernel/printk", b"4\t4\t1\t7\n");
        write(&proc_root, "sys/kernel/keys/maxkeys", b"200\n");
        write(&proc_root, "sys/kernel/random/boot_id", b"0f1e\n");
        write(&proc_root, "sys/kernel/ns_last_pid", b"4242\n");
        write(&proc_root, "sys/kernel/pty/nr", b"3\n");
        write(&proc_root, "sys/kernel/pty/max", b"4096\n");
        write(&proc_root, "sys/kernel/hostname", b"box\n");
        write(&proc_root, "sys/kernel/empty", b"");
        write(&proc_root, "sys/kernel/binary", b"a\0b");
        write(&proc_root, "sys/kernel/huge", &vec![b'1'; 5000]);
        write(&proc_root, "sys/vm/swappiness", b"60\n");
        write(&proc_root, "sys/vm/drop_caches", b"0\n");
        write(&proc_root, "sys/fs/file-nr", b"1 0 9\n");
        let drop = proc_root.join("sys/vm/drop_caches");
        std::fs::set_permissions(&drop, std::fs::Permissions::from_mode(0o200)).unwrap();
        write(&sys_root, "kernel/debug/sched/base_slice_ns", b"3000000\n");
        write(&sys_root, "kernel/debug/sched/debug", b"huge dump\n");

        let got = read_sysctls(&proc_root, &sys_root, &Reads::new());
        let expected: BTreeMap<String, String> = [
            ("debug.sched.base_slice_ns", "3000000"),
            ("kernel.keys.maxkeys", "200"),
            ("kernel.printk", "4 4 1 7"),
            ("kernel.pty.max", "4096"),
            ("kernel.sched_rt_runtime_us", "950000"),
            ("vm.swappiness", "60"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn missing_tree_gives_empty_map() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_sysctls(dir.path(), dir.path(), &Reads::new()).is_empty());
    }
}
