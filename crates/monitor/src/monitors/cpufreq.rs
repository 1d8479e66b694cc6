//! The `cpufreq` monitor: its registry entry and its reading of cpufreq's scaling_cur_freq in sysfs.

use std::path::PathBuf;

use super::{load, Entry};
use crate::procfs::{cpufreq_files, parse_scaling_cur_freq};
use crate::{Metric, Monitor, MonitorError, Reader, Reading};
use vernier_model::Description;

/// The registry's entry of `cpufreq`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "cpufreq",
            "cpufreq scaling_cur_freq per CPU (kHz), where a driver exists",
        ),
        true,
        |_, roots| Box::new(CpufreqMonitor::new(roots.sys_root.clone())),
    )
}

/// `cpufreq`: scaling_cur_freq of every CPU with a policy (`cpu<N>_khz`), where a cpufreq
/// driver exists (Documentation/admin-guide/pm/cpufreq.rst).
pub struct CpufreqMonitor {
    sys_root: PathBuf,
    files: Vec<(Metric, PathBuf)>,
    buf: Reader,
}

impl CpufreqMonitor {
    pub fn new(sys_root: PathBuf) -> Self {
        CpufreqMonitor {
            sys_root,
            files: Vec::new(),
            buf: Reader::new(64),
        }
    }
}

impl Monitor for CpufreqMonitor {
    fn name(&self) -> &'static str {
        "cpufreq"
    }

    /// Its start only finds its files, which hold for the next run.
    fn reusable(&self) -> bool {
        true
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        self.files = cpufreq_files(&self.sys_root)?
            .into_iter()
            .map(|(cpu, path)| (Metric::from(format!("cpu{cpu}_khz")), path))
            .collect();
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        for (metric, path) in &self.files {
            let khz = load(path, &mut self.buf, parse_scaling_cur_freq)?;
            out.push(Reading::gauge(metric.clone(), "kHz", khz as f64));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::monitors::testing::{get, sample_once};

    #[test]
    fn cpufreq_from_a_fixture_tree() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("devices/system/cpu/cpu3/cpufreq");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("scaling_cur_freq"), "1800000\n").unwrap();
        let r = sample_once(&mut CpufreqMonitor::new(dir.path().into()));
        assert_eq!(get(&r, "cpu3_khz").value, 1_800_000.0);
        assert_eq!(r[0].unit, "kHz");
    }
}
