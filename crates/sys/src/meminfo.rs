//! /proc/meminfo: the one parser of it, for the environment (MemTotal), the machine limits
//! (MemAvailable), the swap check (SwapTotal, SwapFree) and the `meminfo` monitor.
//!
//! Each line is `Field:   value [kB]` (proc(5)); `kB` means KiB (fs/proc/meminfo.c prints
//! pages shifted to KiB), and the fields without a unit (`HugePages_Total`, ...) are counts.
//! Values are returned in bytes where the unit is kB.

use std::path::Path;

use crate::{read_file, SysError};

/// Calls `f(field, value)` for every line, the value in bytes where the unit is kB. Allocates
/// nothing unless the text is malformed, so the monitor runs it at every sample.
pub fn visit_meminfo(text: &str, mut f: impl FnMut(&str, u64)) -> Result<(), String> {
    let mut lines = 0;
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let Some(field) = words.next() else { continue };
        let field = field.strip_suffix(':').unwrap_or(field);
        let value = words
            .next()
            .ok_or_else(|| format!("no value for '{field}'"))?;
        let value: u64 = value
            .parse()
            .map_err(|_| format!("bad number '{value}' for {field}"))?;
        let value = match words.next() {
            None => value,
            Some("kB") => value
                .checked_mul(1024)
                .ok_or_else(|| format!("{field} overflows"))?,
            Some(unit) => return Err(format!("unknown unit '{unit}' for {field}")),
        };
        f(field, value);
        lines += 1;
    }
    if lines == 0 {
        return Err("no 'Field: value' lines".into());
    }
    Ok(())
}

/// The fields of /proc/meminfo in file order, values as [`visit_meminfo`] gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meminfo {
    pub fields: Vec<(String, u64)>,
}

impl Meminfo {
    /// The value of `field` (bytes, or a count for the HugePages_* fields).
    pub fn get(&self, field: &str) -> Option<u64> {
        self.fields
            .iter()
            .find(|(name, _)| name == field)
            .map(|(_, v)| *v)
    }

    /// [`Meminfo::get`], with a message naming the missing field.
    pub fn require(&self, field: &str) -> Result<u64, String> {
        self.get(field).ok_or_else(|| format!("no {field} line"))
    }
}

/// Parses /proc/meminfo.
pub fn parse_meminfo(text: &str) -> Result<Meminfo, String> {
    let mut fields = Vec::new();
    visit_meminfo(text, |k, v| fields.push((k.to_string(), v)))?;
    Ok(Meminfo { fields })
}

/// Reads `<proc_root>/meminfo`.
pub fn read_meminfo(proc_root: &Path) -> Result<Meminfo, SysError> {
    let path = proc_root.join("meminfo");
    parse_meminfo(&read_file(&path)?).map_err(|e| SysError::parse(&path, e))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fields_in_bytes_and_counts() {
        let text = "MemTotal:       24634024 kB\nMemFree: 1 kB\nHugePages_Total:       0\n\
                    Hugepagesize:       2048 kB\n";
        let m = parse_meminfo(text).unwrap();
        assert_eq!(m.get("MemTotal"), Some(24_634_024 * 1024));
        assert_eq!(m.get("MemFree"), Some(1024));
        assert_eq!(m.get("HugePages_Total"), Some(0));
        assert_eq!(m.get("Hugepagesize"), Some(2048 * 1024));
        assert_eq!(m.get("SwapFree"), None);
        assert!(m
            .require("SwapFree")
            .unwrap_err()
            .contains("no SwapFree line"));
        assert_eq!(m.fields.len(), 4);
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            "",
            "MemFree: lots kB\n",
            "MemTotal: x kB\n",
            "MemTotal: 1 MB\n",
            "MemTotal:\n",
            "MemTotal: 99999999999999999 kB\n",
        ] {
            assert!(parse_meminfo(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn visits_without_collecting() {
        let mut seen = Vec::new();
        visit_meminfo("Cached: 2 kB\nDirty: 0 kB\n", |k, v| {
            seen.push((k.len(), v))
        })
        .unwrap();
        assert_eq!(seen, [(6, 2048), (5, 0)]);
    }

    #[test]
    fn reads_real_proc() {
        let m = read_meminfo(Path::new("/proc")).unwrap();
        let total = m.require("MemTotal").unwrap();
        assert!(total > 0);
        assert!(m.require("MemAvailable").unwrap() <= total);
    }

    #[test]
    fn missing_file_is_unsupported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_meminfo(dir.path()).unwrap_err().is_unsupported());
    }
}
