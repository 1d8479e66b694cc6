//! The `cpuidle` monitor: its registry entry and its reading of the cpuidle states in sysfs.

use std::path::PathBuf;

use super::{load, Entry};
use crate::procfs::{parse_cpuidle_value, read_cpuidle_states};
use crate::{Metric, Monitor, MonitorError, Reader, Reading};
use vernier_model::Description;

/// The registry's entry of `cpuidle`.
pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "cpuidle",
            "idle states per CPU: entries, residency (us), exit latency (us), disabled; where a \
             cpuidle driver exists",
        ),
        // Four series per CPU and idle state, two files read per state and sample: opt-in,
        // for latency runs (an idle state's exit latency is a classic cause of a worst case).
        false,
        |_, roots| Box::new(CpuidleMonitor::new(roots.sys_root.clone())),
    )
}

/// The files and series of one idle state of one CPU.
struct IdleStateSeries {
    usage: PathBuf,
    time: PathBuf,
    usage_metric: Metric,
    time_metric: Metric,
    latency_metric: Metric,
    disabled_metric: Metric,
    latency_us: f64,
    disabled: f64,
}

/// The metric name of an idle state: its name with characters other than letters, digits,
/// `-` and `_` made `_` (`haltpoll idle` -> `haltpoll_idle`), `state<K>` when empty.
pub fn idle_state_key(name: &str, index: u32) -> String {
    let key: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if key.is_empty() {
        format!("state{index}")
    } else {
        key
    }
}

/// `cpuidle`: per CPU and idle state (Documentation/admin-guide/pm/cpuidle.rst), the entries
/// into the state (`cpu<N>.<state>.usage`) and the time spent in it (`cpu<N>.<state>.time_us`)
/// as counters, and as constant facts read at the start of the run the state's exit latency
/// (`cpu<N>.<state>.latency_us`) and whether it is disabled (`cpu<N>.<state>.disabled`, 0 or
/// 1). A deep state entered often on the CPU of a latency spike, with an exit latency near the
/// spike, explains it. States are named as the driver names them (`POLL`, `C1E`); a name
/// repeated on one CPU gets `_<K>` appended. Unsupported without a cpuidle driver.
pub struct CpuidleMonitor {
    sys_root: PathBuf,
    states: Vec<IdleStateSeries>,
    buf: Reader,
}

impl CpuidleMonitor {
    pub fn new(sys_root: PathBuf) -> Self {
        CpuidleMonitor {
            sys_root,
            states: Vec::new(),
            buf: Reader::new(64),
        }
    }
}

impl Monitor for CpuidleMonitor {
    fn name(&self) -> &'static str {
        "cpuidle"
    }

    fn start(&mut self, _child_pid: i32) -> Result<(), MonitorError> {
        let states = read_cpuidle_states(&self.sys_root)?;
        let mut seen: std::collections::HashSet<(u32, String)> = Default::default();
        self.states = states
            .into_iter()
            .map(|s| {
                let mut key = idle_state_key(&s.name, s.index);
                if !seen.insert((s.cpu, key.clone())) {
                    key = format!("{key}_{}", s.index);
                }
                let metric = |what: &str| Metric::from(format!("cpu{}.{key}.{what}", s.cpu));
                IdleStateSeries {
                    usage: s.dir.join("usage"),
                    time: s.dir.join("time"),
                    usage_metric: metric("usage"),
                    time_metric: metric("time_us"),
                    latency_metric: metric("latency_us"),
                    disabled_metric: metric("disabled"),
                    latency_us: s.latency_us as f64,
                    disabled: if s.disabled { 1.0 } else { 0.0 },
                }
            })
            .collect();
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<Reading>) -> Result<(), MonitorError> {
        for s in &self.states {
            let usage = load(&s.usage, &mut self.buf, |t| parse_cpuidle_value(t, "usage"))?;
            let time = load(&s.time, &mut self.buf, |t| parse_cpuidle_value(t, "time"))?;
            out.push(Reading::counter(
                s.usage_metric.clone(),
                "count",
                usage as f64,
            ));
            out.push(Reading::counter(s.time_metric.clone(), "us", time as f64));
            out.push(Reading::gauge(s.latency_metric.clone(), "us", s.latency_us));
            out.push(Reading::gauge(
                s.disabled_metric.clone(),
                "bool",
                s.disabled,
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::monitors::testing::{fixture, get, sample_once};
    use crate::SeriesKind;
    use std::path::Path;

    #[test]
    fn cpuidle_on_fixtures() {
        let mut m = CpuidleMonitor::new(fixture("kvm-2cpu").sys_root);
        let r = sample_once(&mut m);
        assert_eq!(r.len(), 2 * 2 * 4);
        assert_eq!(get(&r, "cpu0.POLL.latency_us").value, 0.0);
        assert_eq!(get(&r, "cpu1.haltpoll_idle.latency_us").value, 1.0);
        assert_eq!(
            get(&r, "cpu1.haltpoll_idle.latency_us").kind,
            SeriesKind::Gauge
        );
        let time = get(&r, "cpu0.haltpoll_idle.time_us");
        assert_eq!((time.kind, time.unit), (SeriesKind::Counter, "us"));
        assert!(time.value > 0.0);

        let mut m = CpuidleMonitor::new(fixture("four-cpu").sys_root);
        let r = sample_once(&mut m);
        // cpu3 has no cpuidle directory.
        assert_eq!(r.len(), 3 * 4 * 4);
        assert_eq!(get(&r, "cpu2.C1E.disabled").value, 1.0);
        assert_eq!(get(&r, "cpu1.C1E.disabled").value, 0.0);
        assert_eq!(get(&r, "cpu2.C6.latency_us").value, 133.0);
        assert_eq!(get(&r, "cpu2.C6.usage").value, 2301.0);
        assert_eq!(get(&r, "cpu1.C1.time_us").value, 1_250_000.0);
        assert!(r.iter().all(|x| !x.metric.starts_with("cpu3")));
    }

    #[test]
    fn cpuidle_names_states_and_is_unsupported_without_a_driver() {
        assert_eq!(idle_state_key("haltpoll idle", 1), "haltpoll_idle");
        assert_eq!(idle_state_key("C1E", 2), "C1E");
        assert_eq!(idle_state_key(" ", 3), "state3");

        let dir = tempfile::tempdir().unwrap();
        for k in 0..2 {
            let d = dir
                .path()
                .join(format!("devices/system/cpu/cpu0/cpuidle/state{k}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("name"), "C1\n").unwrap();
            std::fs::write(d.join("latency"), "1\n").unwrap();
            std::fs::write(d.join("usage"), "5\n").unwrap();
            std::fs::write(d.join("time"), "7\n").unwrap();
        }
        let r = sample_once(&mut CpuidleMonitor::new(dir.path().into()));
        // No `disable` file: enabled; a repeated name gets its index.
        assert_eq!(get(&r, "cpu0.C1.disabled").value, 0.0);
        assert_eq!(get(&r, "cpu0.C1_1.usage").value, 5.0);

        let empty = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(empty.path().join("devices/system/cpu/cpu0")).unwrap();
        let e = CpuidleMonitor::new(empty.path().into())
            .start(0)
            .unwrap_err();
        assert!(e.is_unsupported() && e.reason().contains("cpuidle"), "{e}");
        let e = CpuidleMonitor::new(Path::new("/nonexistent").into()).start(0);
        assert!(e.unwrap_err().is_unsupported());

        // The running machine: states, or unsupported with a reason; never a crash.
        let mut real = CpuidleMonitor::new("/sys".into());
        match real.start(0) {
            Ok(()) => {
                let mut out = Vec::new();
                real.sample(&mut out).unwrap();
                assert!(out.iter().any(|x| x.metric.starts_with("cpu0.")), "{out:?}");
            }
            Err(e) => assert!(e.is_unsupported(), "{e}"),
        }
    }
}
