//! The kernel's CPU list format (`0-3,8,10-11`), as in /sys/devices/system/cpu/online
//! (Documentation/admin-guide/cputopology.rst).

use std::path::Path;

use crate::{read_file, SysError};

/// Parses a CPU list such as `0-3,8`. Returns the CPUs in ascending order.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo, hi),
            None => (part, part),
        };
        let lo: usize = lo.trim().parse().map_err(|_| format!("bad CPU '{lo}'"))?;
        let hi: usize = hi.trim().parse().map_err(|_| format!("bad CPU '{hi}'"))?;
        if hi < lo {
            return Err(format!("bad range '{part}'"));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

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
    fn parses_ranges_and_singles() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
    }

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
