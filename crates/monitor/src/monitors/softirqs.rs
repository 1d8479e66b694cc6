//! The `softirqs` monitor: its registry entry and its reading of /proc/softirqs per CPU.

use std::path::PathBuf;

use super::{buffer, load, Entry};
use crate::procfs::visit_interrupt_lines;
use crate::{MetricNames, Monitor, MonitorError, Reader, Reading};
use vernier_model::Description;

/// The registry's entry of `softirqs`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "softirqs",
            "/proc/softirqs per CPU and softirq: TIMER, NET_RX, SCHED, RCU, ...",
        ),
        // One series per CPU and softirq (ten each): opt-in, for latency runs, where which
        // CPU ran which softirq explains a worst case.
        false,
        |_, roots| Box::new(SoftirqsMonitor::new(roots.proc_root.clone())),
    )
}

/// `softirqs`: /proc/softirqs per CPU and softirq (`cpu<N>.<softirq>`: `cpu1.TIMER`,
/// `cpu1.NET_RX`, ...; the names are those of kernel/softirq.c `softirq_to_name`). The
/// `interrupts` monitor has the same counts summed over CPUs.
pub struct SoftirqsMonitor {
    path: PathBuf,
    buf: Reader,
    names: MetricNames,
}

impl SoftirqsMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        SoftirqsMonitor {
            path: proc_root.join("softirqs"),
            buf: buffer(),
            names: MetricNames::default(),
        }
    }
}

impl Monitor for SoftirqsMonitor {
    fn name(&self) -> &'static str {
        "softirqs"
    }

    /// Its start only finds its files, which hold for the next run.
    fn reusable(&self) -> bool {
        true
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        load(&self.path, &mut self.buf, |t| {
            visit_interrupt_lines(t, |_| ())
        })
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        self.names.restart();
        let names = &mut self.names;
        load(&self.path, &mut self.buf, |text| {
            visit_interrupt_lines(text, |line| {
                for (cpu, count) in line.per_cpu() {
                    out.push(Reading::counter(
                        names.format(format_args!("cpu{cpu}.{}", line.label)),
                        "count",
                        count as f64,
                    ));
                }
            })
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::monitors::testing::{fixture, get, sample_once};
    use crate::SeriesKind;

    #[test]
    fn softirqs_per_cpu_on_fixtures_and_real_proc() {
        let mut m = SoftirqsMonitor::new(fixture("four-cpu").proc_root);
        let r = sample_once(&mut m);
        assert_eq!(r.len(), 40);
        assert_eq!(get(&r, "cpu2.NET_RX").value, 90_000.0);
        assert_eq!(get(&r, "cpu3.TIMER").kind, SeriesKind::Counter);
        let r = sample_once(&mut SoftirqsMonitor::new(fixture("kvm-2cpu").proc_root));
        assert_eq!(get(&r, "cpu1.TIMER").value, 411_253.0);
        let r = sample_once(&mut SoftirqsMonitor::new("/proc".into()));
        assert!(get(&r, "cpu0.TIMER").value > 0.0);
        let empty = tempfile::tempdir().unwrap();
        let e = SoftirqsMonitor::new(empty.path().into())
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported(), "{e}");
    }
}
