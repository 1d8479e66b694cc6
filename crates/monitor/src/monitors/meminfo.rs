//! The `meminfo` monitor: its registry entry and its reading of /proc/meminfo.

use std::path::PathBuf;

use super::{buffer, load, Entry};
use crate::{Metric, Monitor, MonitorError, Reader, Reading};
use vernier_model::Description;
use vernier_sys::meminfo::visit_meminfo;

/// The registry's entry of `meminfo`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "meminfo",
            "/proc/meminfo: cached, dirty, anon, slab, available, free, ... (bytes)",
        ),
        true,
        |_, roots| Box::new(MeminfoMonitor::new(roots.proc_root.clone())),
    )
}

/// The /proc/meminfo fields of the `meminfo` monitor (proc(5)).
pub const MEMINFO_FIELDS: [&str; 10] = [
    "Cached",
    "Buffers",
    "Dirty",
    "AnonPages",
    "Slab",
    "SReclaimable",
    "MemAvailable",
    "MemFree",
    "Writeback",
    "Shmem",
];

/// `meminfo`: gauges in bytes, named `<Field>_bytes`.
pub struct MeminfoMonitor {
    path: PathBuf,
    buf: Reader,
    missing: Vec<(String, String)>,
    /// `<Field>_bytes` of each of [`MEMINFO_FIELDS`].
    names: Vec<Metric>,
}

impl MeminfoMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        MeminfoMonitor {
            path: proc_root.join("meminfo"),
            buf: buffer(),
            missing: Vec::new(),
            names: MEMINFO_FIELDS
                .iter()
                .map(|f| Metric::from(format!("{f}_bytes")))
                .collect(),
        }
    }
}

impl Monitor for MeminfoMonitor {
    fn name(&self) -> &'static str {
        "meminfo"
    }

    /// Its start only finds its files, which hold for the next run.
    fn reusable(&self) -> bool {
        true
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        let mut seen = [false; MEMINFO_FIELDS.len()];
        load(&self.path, &mut self.buf, |t| {
            visit_meminfo(t, |k, _| {
                if let Some(i) = MEMINFO_FIELDS.iter().position(|f| *f == k) {
                    seen[i] = true;
                }
            })
        })?;
        self.missing = MEMINFO_FIELDS
            .iter()
            .zip(seen)
            .filter(|(_, s)| !s)
            .map(|(f, _)| (format!("{f}_bytes"), format!("no {f} in /proc/meminfo")))
            .collect();
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, |t| {
            visit_meminfo(t, |k, v| {
                if let Some(i) = MEMINFO_FIELDS.iter().position(|f| *f == k) {
                    out.push(Reading::gauge(self.names[i].clone(), "bytes", v as f64));
                }
            })
        })
    }

    fn unsupported(&self) -> Vec<(String, String)> {
        self.missing.clone()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::monitors::testing::{get, sample_once};

    #[test]
    fn meminfo_records_fields_and_missing_ones() {
        let r = sample_once(&mut MeminfoMonitor::new("/proc".into()));
        assert_eq!(r.len(), MEMINFO_FIELDS.len());
        assert!(get(&r, "MemAvailable_bytes").value > 0.0);

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("meminfo"), "MemFree: 10 kB\nCached: 2 kB\n").unwrap();
        let mut m = MeminfoMonitor::new(dir.path().into());
        let r = sample_once(&mut m);
        assert_eq!(get(&r, "MemFree_bytes").value, 10240.0);
        let missing = m.unsupported();
        assert_eq!(missing.len(), MEMINFO_FIELDS.len() - 2);
        assert!(missing.iter().any(|(k, _)| k == "Shmem_bytes"));
    }
}
