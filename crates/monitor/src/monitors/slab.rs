//! The `slab` monitor: its registry entry and its reading of /proc/slabinfo, with each cache's
//! allocation and free fast-path and slow-path counts where the kernel has CONFIG_SLUB_STATS.

use std::path::{Path, PathBuf};

use super::{load, top, top_option, Entry};
use crate::procfs::{parse_slabinfo, parse_slub_stat, visit_slabinfo};
use crate::{top_movers, MetricNames, Monitor, MonitorError, Reader, Reading};
use vernier_model::Description;

/// The registry's entry of `slab`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "slab",
            "/proc/slabinfo (root only): active objects of the top-moving caches, and their \
             fast- and slow-path allocations and frees where the kernel has CONFIG_SLUB_STATS",
        )
        .with_options(vec![top_option()]),
        // Reading slabinfo walks every cache under slab_mutex (mm/slab_common.c) and costs
        // several times more than all default monitors together: opt-in.
        false,
        |options, roots| {
            Box::new(
                SlabMonitor::new(roots.proc_root.clone(), top(options))
                    .with_slub_stats(roots.sys_root.join("kernel/slab")),
            )
        },
    )
}

/// `slab`: active objects per cache of /proc/slabinfo (`active_objs.<cache>`) and the bytes
/// they occupy in all (`active_bytes`); the `top` caches with the largest change are kept.
/// slabinfo is readable by root only (slabinfo(5)): unsupported otherwise.
///
/// Where the kernel has CONFIG_SLUB_STATS, also each cache's counts of /sys/kernel/slab/CACHE/
/// ([`SLUB_STATS`], Documentation/ABI/testing/sysfs-kernel-slab): allocations and frees by the
/// lockless per-CPU fast path and by the slow path that takes the node's lock, as slabinfo's
/// `-r` report shows them (the seed's Listing 8). Without it they are unsupported, the rest
/// recorded.
pub struct SlabMonitor {
    path: PathBuf,
    buf: Reader,
    top: usize,
    names: MetricNames,
    /// /sys/kernel/slab, when the counts are asked for.
    slub_root: Option<PathBuf>,
    /// Per cache with the counts: its name and the files of [`SLUB_STATS`].
    slub_files: Vec<(String, Vec<PathBuf>)>,
    missing: Vec<(String, String)>,
}

/// The CONFIG_SLUB_STATS counters the monitor records per cache (mm/slub.c, `STAT_ATTR`).
pub const SLUB_STATS: [&str; 4] = [
    "alloc_fastpath",
    "alloc_slowpath",
    "free_fastpath",
    "free_slowpath",
];

impl SlabMonitor {
    pub fn new(proc_root: PathBuf, top: usize) -> Self {
        SlabMonitor {
            path: proc_root.join("slabinfo"),
            buf: Reader::new(64 * 1024),
            top,
            names: MetricNames::default(),
            slub_root: None,
            slub_files: Vec::new(),
            missing: Vec::new(),
        }
    }

    /// Also the CONFIG_SLUB_STATS counts of the caches under `slub_root` (/sys/kernel/slab).
    pub fn with_slub_stats(mut self, slub_root: PathBuf) -> Self {
        self.slub_root = Some(slub_root);
        self
    }

    /// The caches of slabinfo whose directory under `root` has the counters.
    fn find_slub_files(&mut self, root: &Path, caches: &[String]) {
        self.slub_files = caches
            .iter()
            .map(|c| (c.clone(), root.join(c)))
            .filter(|(_, dir)| dir.join(SLUB_STATS[0]).is_file())
            .map(|(c, dir)| (c, SLUB_STATS.iter().map(|s| dir.join(s)).collect()))
            .collect();
        self.missing.clear();
        if self.slub_files.is_empty() {
            self.missing.push((
                "fastpath".into(),
                format!(
                    "no {}/*/alloc_fastpath: the kernel was built without CONFIG_SLUB_STATS",
                    root.display()
                ),
            ));
        }
    }
}

impl Monitor for SlabMonitor {
    fn name(&self) -> &'static str {
        "slab"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        let caches = load(&self.path, &mut self.buf, parse_slabinfo)?;
        if let Some(root) = self.slub_root.clone() {
            let names: Vec<String> = caches.into_iter().map(|c| c.name).collect();
            self.find_slub_files(&root, &names);
        }
        Ok(())
    }

    fn unsupported(&self) -> Vec<(String, String)> {
        self.missing.clone()
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        self.names.restart();
        let names = &mut self.names;
        let mut bytes = 0u64;
        load(&self.path, &mut self.buf, |text| {
            visit_slabinfo(text, |c| {
                bytes = bytes.saturating_add(c.active_objs.saturating_mul(c.objsize));
                out.push(Reading::gauge(
                    names.format(format_args!("active_objs.{}", c.name)),
                    "count",
                    c.active_objs as f64,
                ));
            })
        })?;
        out.push(Reading::gauge(
            names.get("active_bytes"),
            "bytes",
            bytes as f64,
        ));
        for (cache, files) in &self.slub_files {
            for (stat, file) in SLUB_STATS.iter().zip(files) {
                let count = load(file, &mut self.buf, parse_slub_stat)?;
                out.push(Reading::counter(
                    names.format(format_args!("{stat}.{cache}")),
                    "count",
                    count as f64,
                ));
            }
        }
        Ok(())
    }

    fn keep(&self, changes: &[(&str, f64)]) -> Vec<bool> {
        top_movers(changes, self.top, |m| m == "active_bytes")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::monitors::testing::get;

    #[test]
    fn slub_stats_are_read_where_the_kernel_has_them() {
        let roots = crate::monitors::testing::fixture("slub-stats");
        let mut m = SlabMonitor::new(roots.proc_root.clone(), 5)
            .with_slub_stats(roots.sys_root.join("kernel/slab"));
        let out = crate::monitors::testing::sample_once(&mut m);
        assert!(m.unsupported().is_empty());
        assert_eq!(get(&out, "alloc_fastpath.kmalloc-512").value, 68000.0);
        assert_eq!(get(&out, "free_slowpath.kmalloc-512").value, 93000.0);
        assert_eq!(get(&out, "alloc_slowpath.skbuff_head_cache").value, 100.0);
        assert_eq!(
            get(&out, "alloc_fastpath.kmalloc-512").kind,
            vernier_model::monitor::SeriesKind::Counter
        );
        // dentry has no counters: only its objects.
        assert!(!out
            .iter()
            .any(|r| r.metric.ends_with(".dentry") && r.metric.contains("path")));
        assert_eq!(get(&out, "active_objs.dentry").value, 61803.0);

        // Without CONFIG_SLUB_STATS: unsupported, said, and slabinfo still read.
        let none = tempfile::tempdir().unwrap();
        let mut m =
            SlabMonitor::new(roots.proc_root.clone(), 5).with_slub_stats(none.path().into());
        let out = crate::monitors::testing::sample_once(&mut m);
        let missing = m.unsupported();
        assert_eq!(missing.len(), 1);
        assert!(missing[0].1.contains("CONFIG_SLUB_STATS"), "{missing:?}");
        assert_eq!(get(&out, "active_objs.kmalloc-512").value, 1600.0);
    }

    #[test]
    fn slab_is_unsupported_without_the_file_and_reads_as_root() {
        let empty = tempfile::tempdir().unwrap();
        let e = SlabMonitor::new(empty.path().into(), 5)
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported());
        let mut m = SlabMonitor::new("/proc".into(), 5);
        match m.start(0) {
            Ok(()) => {
                let mut out = Vec::new();
                m.sample(&mut out).unwrap();
                assert!(get(&out, "active_bytes").value > 0.0);
                assert!(out.len() > 10);
            }
            // Not root: slabinfo is mode 0400.
            Err(e) => assert!(e.is_unsupported(), "{e}"),
        }
    }
}
