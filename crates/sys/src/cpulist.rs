//! The CPUs of this machine, read in the kernel's CPU list format (`0-3,8,10-11`) from
//! /sys/devices/system/cpu/online (Documentation/admin-guide/cputopology.rst). The format
//! itself is [`vernier_model::cpulist`], which user input shares.

use std::path::Path;

pub use vernier_model::cpulist::{format_cpu_list, parse_cpu_list};

use crate::{read_file, SysError};

/// Reads the online CPUs from `<sys_root>/devices/system/cpu/online`.
pub fn read_online_cpus(sys_root: &Path) -> Result<Vec<usize>, SysError> {
    let path = sys_root.join("devices/system/cpu/online");
    let text = read_file(&path)?;
    parse_cpu_list(&text).map_err(|e| SysError::parse(&path, e))
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
}
