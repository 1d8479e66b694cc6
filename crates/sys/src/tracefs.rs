//! tracefs, the kernel's ftrace interface (Documentation/trace/ftrace.rst): where it is
//! mounted, mounting it, the events and tracers the kernel has, and an ftrace instance of
//! vernier's own (a directory under `instances/`: a buffer, events, a CPU mask and
//! `tracing_on` of its own, so that vernier never touches the top-level trace another tool
//! may be using). Whatever vernier changes here is undone by `vernier_setup`'s restore.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::SysError;

/// Where tracefs is mounted by convention since Linux 4.1 (`/sys/kernel/debug/tracing` is the
/// older place, inside debugfs).
pub const TRACEFS_MOUNT: &str = "kernel/tracing";

/// The trace clock of vernier's instance: CLOCK_MONOTONIC, the clock the latency loop reads,
/// so that an event's time stamp and a sample's expiry compare.
pub const TRACE_CLOCK: &str = "mono";

/// The mount point of tracefs in `mounts` (the text of /proc/mounts), if it is mounted.
pub fn parse_tracefs_mount(mounts: &str) -> Option<PathBuf> {
    mounts.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        let (_, point, kind) = (words.next()?, words.next()?, words.next()?);
        // /proc/mounts escapes spaces in paths as \040.
        (kind == "tracefs").then(|| PathBuf::from(point.replace("\\040", " ")))
    })
}

/// tracefs on this machine: its mount point, if mounted (`proc_root`/mounts).
pub fn mounted_tracefs(proc_root: &Path) -> Option<PathBuf> {
    std::fs::read_to_string(proc_root.join("mounts"))
        .ok()
        .and_then(|text| parse_tracefs_mount(&text))
}

/// The kernel's trace events (`available_events`: `system:event` lines) as `system/event`.
pub fn parse_available_events(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().split_once(':'))
        .map(|(system, event)| format!("{system}/{event}"))
        .collect()
}

/// The events of tracefs at `root` (its `available_events`).
pub fn available_events(root: &Path) -> Result<Vec<String>, SysError> {
    crate::read_file(&root.join("available_events")).map(|t| parse_available_events(&t))
}

/// The tracers the kernel was built with (`available_tracers`): `timerlat` where
/// CONFIG_TIMERLAT_TRACER is set.
pub fn available_tracers(root: &Path) -> Result<Vec<String>, SysError> {
    crate::read_file(&root.join("available_tracers"))
        .map(|t| t.split_whitespace().map(str::to_string).collect())
}

/// A CPU list as `tracing_cpumask` takes it: hexadecimal, in comma-separated groups of 32
/// CPUs, the highest first (the kernel's `%*pb`, Documentation/core-api/printk-formats.rst).
pub fn cpumask_hex(cpus: &[usize]) -> String {
    let groups = cpus.iter().max().map_or(1, |&m| m / 32 + 1);
    let mut words = vec![0u32; groups];
    for &cpu in cpus {
        words[cpu / 32] |= 1 << (cpu % 32);
    }
    words
        .iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Mounts tracefs at `point` (mount(2), as `mount -t tracefs nodev POINT`).
pub fn mount_tracefs(point: &Path) -> Result<(), SysError> {
    let c = |s: &[u8]| {
        std::ffi::CString::new(s).map_err(|_| SysError::Unsupported {
            what: format!("mount point {}: holds a NUL byte", point.display()),
        })
    };
    use std::os::unix::ffi::OsStrExt;
    let (source, target, kind) = (
        c(b"nodev")?,
        c(point.as_os_str().as_bytes())?,
        c(b"tracefs")?,
    );
    // SAFETY: valid NUL-terminated strings; no data argument.
    let rc = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            kind.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(SysError::last_os("mount tracefs"));
    }
    Ok(())
}

/// Unmounts what is mounted at `point` (umount2(2)).
pub fn unmount(point: &Path) -> Result<(), SysError> {
    use std::os::unix::ffi::OsStrExt;
    let target = std::ffi::CString::new(point.as_os_str().as_bytes()).map_err(|_| {
        SysError::Unsupported {
            what: format!("mount point {}: holds a NUL byte", point.display()),
        }
    })?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::umount2(target.as_ptr(), 0) } != 0 {
        return Err(SysError::last_os("umount tracefs"));
    }
    Ok(())
}

/// Writes `value` to the existing tracefs file `path` (never creates one).
pub fn write_control(path: &Path, value: &str) -> Result<(), SysError> {
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(|e| SysError::from_io(path, e))
}

/// Creates the instance directory `dir` (mkdir in `instances/` makes a new buffer) and sets
/// it up, stopped: the trace clock, the CPUs, and each of `events` (`system/event`) that
/// exists. Returns the events that do not exist here.
pub fn create_instance(
    dir: &Path,
    cpus: &[usize],
    events: &[&str],
) -> Result<Vec<String>, SysError> {
    std::fs::create_dir(dir).map_err(|e| SysError::from_io(dir, e))?;
    write_control(&dir.join("tracing_on"), "0")?;
    write_control(&dir.join("trace_clock"), TRACE_CLOCK)?;
    write_control(&dir.join("tracing_cpumask"), &cpumask_hex(cpus))?;
    let mut absent = Vec::new();
    for event in events {
        let enable = dir.join("events").join(event).join("enable");
        if enable.exists() {
            write_control(&enable, "1")?;
        } else {
            absent.push((*event).to_string());
        }
    }
    Ok(absent)
}

/// Removes the instance `dir`: stops it and removes the directory (rmdir frees its buffer).
/// An instance already gone is fine.
pub fn remove_instance(dir: &Path) -> Result<(), SysError> {
    if !dir.exists() {
        return Ok(());
    }
    let _ = write_control(&dir.join("tracing_on"), "0");
    std::fs::remove_dir(dir).map_err(|e| SysError::from_io(dir, e))
}

/// The events `wanted` that the instance `dir` did not enable (its `set_event` lists what is
/// enabled, as `system:event`): those the kernel lacks.
pub fn absent_events(dir: &Path, wanted: &[&str]) -> Vec<String> {
    let enabled = std::fs::read_to_string(dir.join("set_event"))
        .map(|t| parse_available_events(&t))
        .unwrap_or_default();
    wanted
        .iter()
        .filter(|w| !enabled.iter().any(|e| e == *w))
        .map(|w| (*w).to_string())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_mount_point_of_tracefs_is_found_in_mounts() {
        let mounts = "sysfs /sys sysfs rw,nosuid 0 0\n\
                      nodev /sys/kernel/tracing tracefs rw,relatime 0 0\n";
        assert_eq!(
            parse_tracefs_mount(mounts),
            Some(PathBuf::from("/sys/kernel/tracing"))
        );
        assert_eq!(parse_tracefs_mount("sysfs /sys sysfs rw 0 0\n"), None);
        assert_eq!(
            parse_tracefs_mount("none /a\\040b tracefs rw 0 0"),
            Some(PathBuf::from("/a b"))
        );
    }

    #[test]
    fn cpumasks_are_hexadecimal_in_groups_of_32() {
        assert_eq!(cpumask_hex(&[0]), "00000001");
        assert_eq!(cpumask_hex(&[1, 3]), "0000000a");
        assert_eq!(cpumask_hex(&[32, 0]), "00000001,00000001");
        assert_eq!(cpumask_hex(&[]), "00000000");
    }

    #[test]
    fn events_are_read_as_system_slash_event() {
        assert_eq!(
            parse_available_events("sched:sched_switch\nirq:softirq_entry\n\n"),
            vec!["sched/sched_switch", "irq/softirq_entry"]
        );
    }
}
