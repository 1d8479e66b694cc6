//! The `pressure` monitor: its registry entry and its reading of /proc/pressure (PSI).

use std::path::PathBuf;

use super::{buffer, load, Entry};
use crate::procfs::parse_pressure;
use crate::{MetricNames, Monitor, MonitorError, Reader, Reading};
use vernier_model::Description;

/// The registry's entry of `pressure`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "pressure",
            "PSI /proc/pressure/{cpu,memory,io}: some/full avg10 and total stall time",
        ),
        true,
        |_, roots| Box::new(PressureMonitor::new(roots.proc_root.clone())),
    )
}

/// The PSI resources.
pub const PSI_RESOURCES: [&str; 3] = ["cpu", "memory", "io"];

/// `pressure`: PSI (Documentation/accounting/psi.rst). avg10 as a gauge in percent, total
/// stall time as a counter in us, for `some` and `full`. The system-wide cpu `full` line is
/// always zero (reported since 5.13 only for the format's sake) and is skipped.
pub struct PressureMonitor {
    paths: Vec<(&'static str, PathBuf)>,
    buf: Reader,
    missing: Vec<(String, String)>,
    names: MetricNames,
}

impl PressureMonitor {
    pub fn new(proc_root: PathBuf) -> Self {
        let dir = proc_root.join("pressure");
        PressureMonitor {
            paths: PSI_RESOURCES.iter().map(|r| (*r, dir.join(r))).collect(),
            buf: buffer(),
            missing: Vec::new(),
            names: MetricNames::default(),
        }
    }
}

impl Monitor for PressureMonitor {
    fn name(&self) -> &'static str {
        "pressure"
    }

    /// Its start only finds its files, which hold for the next run.
    fn reusable(&self) -> bool {
        true
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        let mut present = Vec::new();
        let mut reasons = Vec::new();
        for (resource, path) in std::mem::take(&mut self.paths) {
            match load(&path, &mut self.buf, parse_pressure) {
                Ok(_) => present.push((resource, path)),
                Err(e) if e.is_unsupported() => {
                    self.missing.push((resource.to_string(), e.reason()));
                    reasons.push(e.reason());
                }
                Err(e) => return Err(e),
            }
        }
        self.paths = present;
        if self.paths.is_empty() {
            return Err(MonitorError::Unsupported {
                what: format!("no PSI (CONFIG_PSI, psi=1): {}", reasons.join("; ")),
            });
        }
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        self.names.restart();
        for (resource, path) in &self.paths {
            let p = load(path, &mut self.buf, parse_pressure)?;
            let full = if *resource == "cpu" { None } else { p.full };
            for (line, psi) in [("some", Some(p.some)), ("full", full)] {
                let Some(psi) = psi else { continue };
                out.push(Reading::gauge(
                    self.names
                        .format(format_args!("{resource}.{line}_avg10_pct")),
                    "pct",
                    psi.avg10,
                ));
                out.push(Reading::counter(
                    self.names
                        .format(format_args!("{resource}.{line}_total_us")),
                    "us",
                    psi.total_us as f64,
                ));
            }
        }
        Ok(())
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
    use crate::SeriesKind;

    #[test]
    fn pressure_skips_cpu_full_and_records_missing_resources() {
        let r = sample_once(&mut PressureMonitor::new("/proc".into()));
        assert_eq!(r.len(), 10);
        assert_eq!(get(&r, "io.full_total_us").kind, SeriesKind::Counter);
        assert!(r.iter().all(|x| &*x.metric != "cpu.full_avg10_pct"));

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("pressure")).unwrap();
        std::fs::write(
            dir.path().join("pressure/memory"),
            "some avg10=1.50 avg60=0 avg300=0 total=7\nfull avg10=0 avg60=0 avg300=0 total=3\n",
        )
        .unwrap();
        let mut m = PressureMonitor::new(dir.path().into());
        let r = sample_once(&mut m);
        assert_eq!(get(&r, "memory.some_avg10_pct").value, 1.5);
        assert_eq!(m.unsupported().len(), 2);

        let empty = tempfile::tempdir().unwrap();
        let e = PressureMonitor::new(empty.path().into())
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported(), "{e}");
    }
}
