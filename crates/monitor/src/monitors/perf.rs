//! The `perf` monitor: its registry entry and its reading of perf_event counters of the run's processes.

use vernier_model::Description;

use super::Entry;
use crate::perf::{PerfCounter, COUNTERS};
use crate::{Metric, Monitor, MonitorError, Reading};

/// The registry's entry of `perf`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "perf",
            "perf_event counters of the benchmark's processes: context switches, migrations, page \
             faults, task clock; cycles, instructions where present",
        ),
        // Not by default: per-task counters are switched on every context switch of the
        // benchmark, which measurably slows switch-bound benchmarks (pipe ping-pong here:
        // 2.9 us -> 3.5 us per round trip with the counters attached).
        false,
        |_, _| Box::new(PerfMonitor::new()),
    )
}

/// `perf`: the counters of [`COUNTERS`] for the run's child and its descendants.
pub struct PerfMonitor {
    counters: Vec<(Metric, &'static str, PerfCounter)>,
    missing: Vec<(String, String)>,
}

impl PerfMonitor {
    pub fn new() -> Self {
        PerfMonitor {
            counters: Vec::with_capacity(COUNTERS.len()),
            missing: Vec::new(),
        }
    }
}

impl Default for PerfMonitor {
    fn default() -> Self {
        Self::new()
    }
}

impl Monitor for PerfMonitor {
    fn name(&self) -> &'static str {
        "perf"
    }

    fn start(&mut self, child_pid: i32) -> Result<(), MonitorError> {
        if child_pid <= 0 {
            return Err(MonitorError::Unsupported {
                what: "no child process to count".into(),
            });
        }
        for def in &COUNTERS {
            match PerfCounter::open(def, child_pid) {
                Ok(c) => self.counters.push((Metric::from(def.metric), def.unit, c)),
                Err(e) if e.is_unsupported() => {
                    self.missing.push((def.metric.to_string(), e.reason()));
                }
                Err(e) => return Err(e),
            }
        }
        if self.counters.is_empty() {
            return Err(MonitorError::Unsupported {
                what: format!("no perf counter could be opened for pid {child_pid}"),
            });
        }
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        for (metric, unit, counter) in &self.counters {
            out.push(Reading::counter(
                metric.clone(),
                unit,
                counter.read()?.scaled(),
            ));
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

    #[test]
    fn perf_without_child_is_unsupported() {
        let e = PerfMonitor::new().start(0).unwrap_err();
        assert!(e.is_unsupported());
    }
}
