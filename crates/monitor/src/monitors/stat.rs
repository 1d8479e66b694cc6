//! The `stat` monitor: its registry entry and its reading of /proc/stat.

use std::path::PathBuf;

use super::{buffer, load, Entry};
use crate::procfs::parse_proc_stat;
use crate::{MetricNames, Monitor, MonitorError, Reader, Reading};
use vernier_model::Description;

/// The registry's entry of `stat`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "stat",
            "/proc/stat: CPU times incl. steal, ctxt, intr, forks; procs_running/blocked",
        ),
        true,
        |_, roots| Box::new(StatMonitor::new(roots.proc_root.clone())),
    )
}

/// `stat`: /proc/stat (proc(5)). CPU times are summed over CPUs and converted from USER_HZ
/// ticks to ns; note they advance in whole ticks, unlike rusage.
pub struct StatMonitor {
    path: PathBuf,
    buf: Reader,
    ns_per_tick: f64,
    names: MetricNames,
    /// The busy ticks of the last sample ([`Monitor::machine_busy_ticks`]).
    busy_ticks: Option<u64>,
}

impl StatMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        StatMonitor {
            path: proc_root.join("stat"),
            buf: buffer(),
            ns_per_tick: 1e9 / vernier_sys::clock::clock_ticks_per_second() as f64,
            names: MetricNames::default(),
            busy_ticks: None,
        }
    }
}

impl Monitor for StatMonitor {
    fn name(&self) -> &'static str {
        "stat"
    }

    /// Its start only finds its files, which hold for the next run.
    fn reusable(&self) -> bool {
        true
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, parse_proc_stat).map(|_| ())
    }

    fn machine_busy_ticks(&self) -> Option<u64> {
        self.busy_ticks
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        self.names.restart();
        self.busy_ticks = None;
        let s = load(&self.path, &mut self.buf, parse_proc_stat)?;
        let c = s.cpu;
        self.busy_ticks = Some(c.busy());
        for (metric, ticks) in [
            ("user_ns", c.user),
            ("nice_ns", c.nice),
            ("system_ns", c.system),
            ("idle_ns", c.idle),
            ("iowait_ns", c.iowait),
            ("irq_ns", c.irq),
            ("softirq_ns", c.softirq),
            ("steal_ns", c.steal),
        ] {
            out.push(Reading::counter(
                self.names.get(metric),
                "ns",
                ticks as f64 * self.ns_per_tick,
            ));
        }
        let n = &mut self.names;
        out.push(Reading::counter(n.get("ctxt"), "count", s.ctxt as f64));
        out.push(Reading::counter(n.get("intr"), "count", s.intr as f64));
        out.push(Reading::counter(
            n.get("processes"),
            "count",
            s.processes as f64,
        ));
        out.push(Reading::gauge(
            n.get("procs_running"),
            "count",
            s.procs_running as f64,
        ));
        out.push(Reading::gauge(
            n.get("procs_blocked"),
            "count",
            s.procs_blocked as f64,
        ));
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::monitors::testing::{get, sample_once};
    use crate::SeriesKind;

    #[test]
    fn stat_on_real_proc() {
        let r = sample_once(&mut StatMonitor::new("/proc".into()));
        assert_eq!(r.len(), 13);
        assert_eq!(get(&r, "ctxt").kind, SeriesKind::Counter);
        assert!(get(&r, "user_ns").value > 0.0);
        assert_eq!(get(&r, "procs_running").kind, SeriesKind::Gauge);
    }

    #[test]
    fn the_busy_ticks_are_the_last_samples_and_none_after_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stat");
        let text = |user: u64| {
            format!(
                "cpu  {user} 2 3 400 5 6 7 8 0 0\nctxt 10\nbtime 1\nprocesses 20\n\
                 procs_running 1\nprocs_blocked 0\nintr 30 0\n"
            )
        };
        std::fs::write(&path, text(100)).unwrap();
        let mut m = StatMonitor::new(dir.path().into());
        assert_eq!(m.machine_busy_ticks(), None);
        m.start(0).unwrap();
        let mut out = Vec::new();
        m.sample(&mut out).unwrap();
        // user + nice + system + irq + softirq (vernier_sys::procstat::CpuTimes::busy).
        assert_eq!(m.machine_busy_ticks(), Some(100 + 2 + 3 + 6 + 7));
        std::fs::write(&path, text(150)).unwrap();
        m.sample(&mut out).unwrap();
        assert_eq!(m.machine_busy_ticks(), Some(150 + 2 + 3 + 6 + 7));
        std::fs::write(&path, "garbage\n").unwrap();
        assert!(m.sample(&mut out).is_err());
        assert_eq!(m.machine_busy_ticks(), None);
    }
}
