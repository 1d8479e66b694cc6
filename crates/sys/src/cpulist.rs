//! The CPUs of this machine, read in the kernel's CPU list format (`0-3,8,10-11`) from
//! /sys/devices/system/cpu/online (Documentation/admin-guide/cputopology.rst). The format
//! itself is [`vernier_model::cpulist`], which user input shares.

use std::path::Path;

pub use vernier_model::cpulist::{format_cpu_list, parse_cpu_list};

use crate::{read_file, SysError};

/// Reads the online CPUs from `<sys_root>/devices/system/cpu/online`.
pub fn read_online_cpus(sys_root: &Path) -> Result<Vec<usize>, SysError> {
    let text = read_online_text(sys_root)?;
    parse_cpu_list(&text).map_err(|e| SysError::parse(&online_path(sys_root), e))
}

/// The text of `<sys_root>/devices/system/cpu/online`, trimmed. This machine's (`/sys`) is read
/// once per process and kept: a session plans, checks its limits, captures its environment and
/// parses its loads against one list, where each of them read the file anew before (21 reads
/// for one `vernier run mock`). A failed read is not kept; the next reader tries again.
pub fn read_online_text(sys_root: &Path) -> Result<String, SysError> {
    static SYS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let read = || read_file(&online_path(sys_root)).map(|t| t.trim().to_string());
    if sys_root != Path::new("/sys") {
        return read();
    }
    if let Some(text) = SYS.get() {
        return Ok(text.clone());
    }
    let text = read()?;
    Ok(SYS.get_or_init(|| text).clone())
}

fn online_path(sys_root: &Path) -> std::path::PathBuf {
    sys_root.join("devices/system/cpu/online")
}

/// The online CPUs of this machine; falls back to the CPUs this process may run on.
pub fn online_cpus() -> Vec<usize> {
    read_online_cpus(Path::new("/sys"))
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| crate::affinity::current_affinity().ok())
        .unwrap_or_else(|| vec![0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fixture_and_real_sys() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("devices/system/cpu")).unwrap();
        std::fs::write(dir.path().join("devices/system/cpu/online"), "0-1\n").unwrap();
        assert_eq!(read_online_cpus(dir.path()).unwrap(), vec![0, 1]);
        let missing = tempfile::tempdir().unwrap();
        assert!(read_online_cpus(missing.path())
            .unwrap_err()
            .is_unsupported());
        assert!(!online_cpus().is_empty());
    }

    /// Only this machine's list is kept: a tree given by a test (or another root) is read
    /// each time, as it is now.
    #[test]
    fn only_the_real_list_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cpu = dir.path().join("devices/system/cpu");
        std::fs::create_dir_all(&cpu).unwrap();
        std::fs::write(cpu.join("online"), "0-1\n").unwrap();
        assert_eq!(read_online_text(dir.path()).unwrap(), "0-1");
        std::fs::write(cpu.join("online"), "0-3,8\n").unwrap();
        assert_eq!(read_online_cpus(dir.path()).unwrap(), vec![0, 1, 2, 3, 8]);
        if let Ok(first) = read_online_text(Path::new("/sys")) {
            assert_eq!(read_online_text(Path::new("/sys")).unwrap(), first);
            assert_eq!(online_cpus(), parse_cpu_list(&first).unwrap());
        }
    }
}
