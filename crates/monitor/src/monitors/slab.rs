//! The `slab` monitor: its registry entry and its reading of /proc/slabinfo.

use std::path::PathBuf;

use super::{load, top, top_option, Entry};
use crate::procfs::{parse_slabinfo, visit_slabinfo};
use crate::{top_movers, MetricNames, Monitor, MonitorError, Reading};
use vernier_model::Description;

/// The registry's entry of `slab`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "slab",
            "/proc/slabinfo (root only): active objects of the top-moving caches",
        )
        .with_options(vec![top_option()]),
        // Reading slabinfo walks every cache under slab_mutex (mm/slab_common.c) and costs
        // several times more than all default monitors together: opt-in.
        false,
        |options, roots| Box::new(SlabMonitor::new(roots.proc_root.clone(), top(options))),
    )
}

/// `slab`: active objects per cache of /proc/slabinfo (`active_objs.<cache>`) and the bytes
/// they occupy in all (`active_bytes`); the `top` caches with the largest change are kept.
/// slabinfo is readable by root only (slabinfo(5)): unsupported otherwise.
pub struct SlabMonitor {
    path: PathBuf,
    buf: String,
    top: usize,
    names: MetricNames,
}

impl SlabMonitor {
    pub fn new(proc_root: PathBuf, top: usize) -> Self {
        SlabMonitor {
            path: proc_root.join("slabinfo"),
            buf: String::with_capacity(64 * 1024),
            top,
            names: MetricNames::default(),
        }
    }
}

impl Monitor for SlabMonitor {
    fn name(&self) -> &'static str {
        "slab"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, parse_slabinfo).map(|_| ())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
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
