//! The `vmstat` monitor: its registry entry and its reading of /proc/vmstat.

use std::path::PathBuf;

use super::{buffer, load, Entry};
use crate::procfs::visit_vmstat;
use crate::{MetricNames, Monitor, MonitorError, Reader, Reading};
use vernier_model::Description;

/// The registry's entry of `vmstat`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "vmstat",
            "/proc/vmstat: page faults, swap, reclaim (pgscan/pgsteal), compaction",
        ),
        true,
        |_, roots| Box::new(VmstatMonitor::new(roots.proc_root.clone())),
    )
}

/// Whether the `vmstat` monitor records a /proc/vmstat counter: faults, swap traffic, reclaim
/// scanning and stealing (the kswapd/direct split shows who reclaimed), compaction.
pub fn vmstat_selected(name: &str) -> bool {
    matches!(name, "pgfault" | "pgmajfault" | "pswpin" | "pswpout")
        || name.starts_with("pgscan_")
        || name.starts_with("pgsteal_")
        || name.starts_with("compact_")
}

/// `vmstat`: the counters of [`vmstat_selected`].
pub struct VmstatMonitor {
    path: PathBuf,
    buf: Reader,
    names: MetricNames,
}

impl VmstatMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        VmstatMonitor {
            path: proc_root.join("vmstat"),
            buf: buffer(),
            names: MetricNames::default(),
        }
    }
}

impl Monitor for VmstatMonitor {
    fn name(&self) -> &'static str {
        "vmstat"
    }

    /// Its start only finds its files, which hold for the next run.
    fn reusable(&self) -> bool {
        true
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, |t| {
            visit_vmstat(t, vmstat_selected, |_, _| ())
        })
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        self.names.restart();
        load(&self.path, &mut self.buf, |t| {
            visit_vmstat(t, vmstat_selected, |k, v| {
                out.push(Reading::counter(self.names.get(k), "count", v as f64));
            })
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::monitors::testing::{get, sample_once};

    #[test]
    fn vmstat_selects_reclaim_and_compaction() {
        assert!(vmstat_selected("pgscan_kswapd") && vmstat_selected("compact_stall"));
        assert!(!vmstat_selected("nr_free_pages"));
        let r = sample_once(&mut VmstatMonitor::new("/proc".into()));
        assert!(get(&r, "pgfault").value > 0.0);
        assert!(r.iter().all(|x| vmstat_selected(&x.metric)));
    }
}
