//! The `schedstat` monitor: its registry entry and its reading of /proc/schedstat.

use std::path::PathBuf;

use super::{buffer, load, Entry};
use crate::procfs::parse_schedstat;
use crate::{MetricNames, Monitor, MonitorError, Reader, Reading};
use vernier_model::Description;

/// The registry's entry of `schedstat`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "schedstat",
            "/proc/schedstat: schedule() calls, wake-ups, run-queue delay (v15-v17)",
        ),
        true,
        |_, roots| Box::new(SchedstatMonitor::new(roots.proc_root.clone())),
    )
}

/// `schedstat`: /proc/schedstat summed over CPUs; unsupported without CONFIG_SCHEDSTATS.
pub struct SchedstatMonitor {
    path: PathBuf,
    buf: Reader,
    names: MetricNames,
}

impl SchedstatMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        SchedstatMonitor {
            path: proc_root.join("schedstat"),
            buf: buffer(),
            names: MetricNames::default(),
        }
    }
}

impl Monitor for SchedstatMonitor {
    fn name(&self) -> &'static str {
        "schedstat"
    }

    /// Its start only finds its files, which hold for the next run.
    fn reusable(&self) -> bool {
        true
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        // An unknown format version is unsupported rather than misread.
        load(&self.path, &mut self.buf, parse_schedstat)
            .map(|_| ())
            .map_err(|e| match e {
                MonitorError::Parse { path, detail } => MonitorError::Unsupported {
                    what: format!("{}: {detail}", path.display()),
                },
                e => e,
            })
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        self.names.restart();
        let s = load(&self.path, &mut self.buf, parse_schedstat)?;
        for (metric, unit, v) in [
            ("yld_count", "count", s.yld_count),
            ("sched_count", "count", s.sched_count),
            ("sched_goidle", "count", s.sched_goidle),
            ("ttwu_count", "count", s.ttwu_count),
            ("ttwu_local", "count", s.ttwu_local),
            ("run_time_ns", "ns", s.run_time_ns),
            ("run_delay_ns", "ns", s.run_delay_ns),
            ("timeslices", "count", s.timeslices),
        ] {
            out.push(Reading::counter(self.names.get(metric), unit, v as f64));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::monitors::testing::{get, sample_once};
    use std::path::Path;

    #[test]
    fn schedstat_from_fixture_trees() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("schedstat"),
            "version 16\ntimestamp 1\ncpu0 0 0 10 2 8 4 1000 500 12\n",
        )
        .unwrap();
        let r = sample_once(&mut SchedstatMonitor::new(dir.path().into()));
        assert_eq!(get(&r, "run_delay_ns").value, 500.0);
        std::fs::write(dir.path().join("schedstat"), "version 99\n").unwrap();
        let e = SchedstatMonitor::new(dir.path().into())
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported(), "{e}");
        let e = SchedstatMonitor::new(Path::new("/nonexistent").into()).start(0);
        assert!(e.unwrap_err().is_unsupported());
    }
}
