//! The CPU caches of this machine, from
//! `/sys/devices/system/cpu/cpuN/cache/indexM/{level,type,size,shared_cpu_list}`
//! (Documentation/ABI/testing/sysfs-devices-system-cpu, "cache/index*"): what STREAM's array
//! size rule and the `memlat` documentation read.

use std::collections::BTreeSet;
use std::path::Path;

use crate::{read_file, SysError};

/// One cache, as the kernel describes it for the CPUs that share it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cache {
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    pub size_bytes: u64,
    /// The CPUs sharing this cache, in the kernel's list format (`0-1`).
    pub shared_cpu_list: String,
}

impl Cache {
    /// Whether data lives in it (a data or unified cache, not an instruction cache).
    pub fn holds_data(&self) -> bool {
        self.kind != "Instruction"
    }
}

/// A cache size as sysfs writes it: `48K`, `32768K`, or a number of bytes.
pub fn parse_cache_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, scale) = match text.strip_suffix('K') {
        Some(n) => (n, 1 << 10),
        None => match text.strip_suffix('M') {
            Some(n) => (n, 1 << 20),
            None => (text, 1),
        },
    };
    number.parse::<u64>().ok()?.checked_mul(scale)
}

/// Every distinct cache of the machine: each CPU's caches, those shared by several CPUs once.
/// An absent `cache` directory (some virtual machines and architectures) is an empty list.
pub fn read_caches(sys_root: &Path) -> Result<Vec<Cache>, SysError> {
    let cpus = crate::cpulist::read_online_cpus(sys_root)?;
    let mut caches = BTreeSet::new();
    for cpu in cpus {
        let dir = sys_root.join(format!("devices/system/cpu/cpu{cpu}/cache"));
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_string_lossy().starts_with("index") {
                continue;
            }
            let index = entry.path();
            let field = |f: &str| read_file(&index.join(f)).map(|t| t.trim().to_string());
            let size_path = index.join("size");
            let size_text = field("size")?;
            let level_text = field("level")?;
            caches.insert(Cache {
                level: level_text
                    .parse()
                    .map_err(|_| SysError::parse(&index.join("level"), level_text.clone()))?,
                kind: field("type")?,
                size_bytes: parse_cache_size(&size_text)
                    .ok_or_else(|| SysError::parse(&size_path, size_text.clone()))?,
                shared_cpu_list: field("shared_cpu_list")?,
            });
        }
    }
    Ok(caches.into_iter().collect())
}

/// The bytes of all data caches together (each shared cache counted once).
pub fn total_data_cache_bytes(caches: &[Cache]) -> u64 {
    caches
        .iter()
        .filter(|c| c.holds_data())
        .map(|c| c.size_bytes)
        .sum()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write_cache(root: &Path, cpu: usize, index: usize, fields: [&str; 4]) {
        let dir = root.join(format!("devices/system/cpu/cpu{cpu}/cache/index{index}"));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, value) in ["level", "type", "size", "shared_cpu_list"]
            .iter()
            .zip(fields)
        {
            std::fs::write(dir.join(name), format!("{value}\n")).unwrap();
        }
    }

    #[test]
    fn shared_caches_count_once_and_instruction_caches_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("devices/system/cpu")).unwrap();
        std::fs::write(dir.path().join("devices/system/cpu/online"), "0-1\n").unwrap();
        for cpu in 0..2 {
            let own = cpu.to_string();
            write_cache(dir.path(), cpu, 0, ["1", "Data", "48K", &own]);
            write_cache(dir.path(), cpu, 1, ["1", "Instruction", "32K", &own]);
            write_cache(dir.path(), cpu, 2, ["2", "Unified", "1024K", &own]);
            write_cache(dir.path(), cpu, 3, ["3", "Unified", "32768K", "0-1"]);
        }
        let caches = read_caches(dir.path()).unwrap();
        assert_eq!(caches.len(), 7);
        assert_eq!(
            total_data_cache_bytes(&caches),
            2 * (48 << 10) + 2 * (1 << 20) + (32 << 20)
        );
        // A malformed size names its file.
        write_cache(dir.path(), 1, 0, ["1", "Data", "lots", "1"]);
        let e = read_caches(dir.path()).unwrap_err().to_string();
        assert!(
            e.ends_with("cpu1/cache/index0/size: cannot parse: lots"),
            "{e}"
        );
    }

    #[test]
    fn sizes_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("48K"), Some(48 << 10));
        assert_eq!(parse_cache_size("32768K\n"), Some(32 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("K"), None);
    }

    #[test]
    fn reads_the_real_machine() {
        // Every cache the machine lists has a level and a size; a machine without the
        // directory lists none.
        let caches = read_caches(Path::new("/sys")).unwrap();
        for c in &caches {
            assert!(c.level >= 1 && c.size_bytes > 0, "{c:?}");
        }
    }
}
