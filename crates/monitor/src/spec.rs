//! `--monitor NAME[:option=value...],...`: the registry of monitors and the parsing of specs.
//!
//! Specs are validated here, before anything runs; [`build`] turns a spec into a working
//! [`Monitor`].

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use vernier_model::spec::{parse_spec_list, Spec};
use vernier_sys::Roots;

use crate::monitors::{
    CpufreqMonitor, CpuidleMonitor, InterruptsMonitor, MeminfoMonitor, PressureMonitor,
    SchedstatMonitor, SlabMonitor, SoftirqsMonitor, StatMonitor, VmstatMonitor,
};
use crate::{Monitor, MonitorError};

/// The built-in monitors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MonitorKind {
    Stat,
    Meminfo,
    Vmstat,
    Schedstat,
    Pressure,
    Interrupts,
    Softirqs,
    Slab,
    Perf,
    Cpufreq,
    Cpuidle,
}

/// What the registry knows about a monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonitorInfo {
    pub kind: MonitorKind,
    pub name: &'static str,
    pub description: &'static str,
    /// Options beyond `interval`, which every monitor takes.
    pub options: &'static [&'static str],
    /// Part of the default set.
    pub default: bool,
}

/// Every monitor, in registry order.
pub const MONITORS: [MonitorInfo; 11] = [
    MonitorInfo {
        kind: MonitorKind::Stat,
        name: "stat",
        description: "/proc/stat: CPU times incl. steal, ctxt, intr, forks; procs_running/blocked",
        options: &[],
        default: true,
    },
    MonitorInfo {
        kind: MonitorKind::Meminfo,
        name: "meminfo",
        description: "/proc/meminfo: cached, dirty, anon, slab, available, free, ... (bytes)",
        options: &[],
        default: true,
    },
    MonitorInfo {
        kind: MonitorKind::Vmstat,
        name: "vmstat",
        description: "/proc/vmstat: page faults, swap, reclaim (pgscan/pgsteal), compaction",
        options: &[],
        default: true,
    },
    MonitorInfo {
        kind: MonitorKind::Schedstat,
        name: "schedstat",
        description: "/proc/schedstat: schedule() calls, wake-ups, run-queue delay (v15-v17)",
        options: &[],
        default: true,
    },
    MonitorInfo {
        kind: MonitorKind::Pressure,
        name: "pressure",
        description: "PSI /proc/pressure/{cpu,memory,io}: some/full avg10 and total stall time",
        options: &[],
        default: true,
    },
    MonitorInfo {
        kind: MonitorKind::Interrupts,
        name: "interrupts",
        description: "/proc/interrupts and /proc/softirqs: totals, per-CPU totals, the top movers",
        options: &["top", "per-cpu"],
        default: true,
    },
    MonitorInfo {
        kind: MonitorKind::Softirqs,
        name: "softirqs",
        description: "/proc/softirqs per CPU and softirq: TIMER, NET_RX, SCHED, RCU, ...",
        options: &[],
        // One series per CPU and softirq (ten each): opt-in, for latency runs, where which
        // CPU ran which softirq explains a worst case. There are no per-benchmark defaults.
        default: false,
    },
    MonitorInfo {
        kind: MonitorKind::Slab,
        name: "slab",
        description: "/proc/slabinfo (root only): active objects of the top-moving caches",
        options: &["top"],
        // Reading slabinfo walks every cache under slab_mutex (mm/slab_common.c) and costs
        // several times more than all default monitors together: opt-in.
        default: false,
    },
    MonitorInfo {
        kind: MonitorKind::Perf,
        name: "perf",
        description: "perf_event counters of the benchmark's processes: context switches, \
                      migrations, page faults, task clock; cycles, instructions where present",
        options: &[],
        // Not by default: per-task counters are switched on every context switch of the
        // benchmark, which measurably slows switch-bound benchmarks (pipe ping-pong here:
        // 2.9 us -> 3.5 us per round trip with the counters attached).
        default: false,
    },
    MonitorInfo {
        kind: MonitorKind::Cpufreq,
        name: "cpufreq",
        description: "cpufreq scaling_cur_freq per CPU (kHz), where a driver exists",
        options: &[],
        default: true,
    },
    MonitorInfo {
        kind: MonitorKind::Cpuidle,
        name: "cpuidle",
        description: "idle states per CPU: entries, residency (us), exit latency (us), \
                      disabled; where a cpuidle driver exists",
        options: &[],
        // Four series per CPU and idle state, two files read per state and sample: opt-in,
        // for latency runs (an idle state's exit latency is a classic cause of a worst case).
        default: false,
    },
];

/// Default sampling interval.
pub const DEFAULT_INTERVAL_MS: u64 = 1000;
/// Shortest interval accepted: shorter ones cost the controller more than they tell.
pub const MIN_INTERVAL_MS: u64 = 10;
/// Default number of top movers kept by `interrupts` and `slab`.
pub const DEFAULT_TOP: usize = 5;

impl MonitorKind {
    pub fn info(self) -> &'static MonitorInfo {
        // MONITORS lists every kind in declaration order.
        &MONITORS[self as usize]
    }

    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    pub fn all() -> impl Iterator<Item = MonitorKind> {
        MONITORS.iter().map(|m| m.kind)
    }
}

impl fmt::Display for MonitorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn valid_names() -> String {
    let names: Vec<&str> = MONITORS.iter().map(|m| m.name).collect();
    format!("{} (or default, all, none)", names.join(", "))
}

impl FromStr for MonitorKind {
    type Err = MonitorError;
    fn from_str(s: &str) -> Result<Self, MonitorError> {
        MONITORS
            .iter()
            .find(|m| m.name == s)
            .map(|m| m.kind)
            .ok_or_else(|| MonitorError::UnknownMonitor {
                name: s.to_string(),
                valid: valid_names(),
            })
    }
}

/// A validated monitor choice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonitorSpec {
    pub kind: MonitorKind,
    pub interval_ms: u64,
    /// Top movers kept (`interrupts`, `slab`).
    pub top: usize,
    /// `interrupts` also records each IRQ line per CPU (`per-cpu=on`).
    #[serde(default)]
    pub per_cpu: bool,
}

impl MonitorSpec {
    pub fn new(kind: MonitorKind) -> Self {
        MonitorSpec {
            kind,
            interval_ms: DEFAULT_INTERVAL_MS,
            top: DEFAULT_TOP,
            per_cpu: false,
        }
    }

    pub fn interval(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.interval_ms)
    }

    fn set(&mut self, option: &str, value: &str) -> Result<(), MonitorError> {
        let bad = |reason: &str| MonitorError::BadOption {
            monitor: self.kind.to_string(),
            option: option.to_string(),
            value: value.to_string(),
            reason: reason.to_string(),
        };
        match option {
            "interval" => {
                let s: f64 = value
                    .parse()
                    .map_err(|_| bad("expected seconds, e.g. 0.5"))?;
                if !s.is_finite() || s * 1000.0 < MIN_INTERVAL_MS as f64 || s > 3600.0 {
                    return Err(bad("must be between 0.01 and 3600 seconds"));
                }
                self.interval_ms = (s * 1000.0).round() as u64;
            }
            "top" if self.kind.info().options.contains(&"top") => {
                self.top = value
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| bad("expected a positive integer"))?;
            }
            "per-cpu" if self.kind.info().options.contains(&"per-cpu") => {
                self.per_cpu = match value {
                    "on" | "yes" | "true" | "1" => true,
                    "off" | "no" | "false" | "0" => false,
                    _ => return Err(bad("expected on or off")),
                };
            }
            _ => {
                let mut valid = vec!["interval"];
                valid.extend(self.kind.info().options);
                return Err(MonitorError::UnknownOption {
                    monitor: self.kind.to_string(),
                    option: option.to_string(),
                    valid: valid.join(", "),
                });
            }
        }
        Ok(())
    }
}

/// The canonical text of a spec, accepted back by [`parse_monitor_list`].
impl fmt::Display for MonitorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if self.interval_ms != DEFAULT_INTERVAL_MS {
            write!(f, ":interval={}", self.interval_ms as f64 / 1000.0)?;
        }
        if self.top != DEFAULT_TOP {
            write!(f, ":top={}", self.top)?;
        }
        if self.per_cpu {
            write!(f, ":per-cpu=on")?;
        }
        Ok(())
    }
}

/// The monitors sampled when none are chosen: every cheap one. Those unsupported on a machine
/// (schedstat, cpufreq, hardware counters in a VM) just record that.
pub fn default_monitors() -> Vec<MonitorSpec> {
    MONITORS
        .iter()
        .filter(|m| m.default)
        .map(|m| MonitorSpec::new(m.kind))
        .collect()
}

/// Parses `NAME[:option=value[:option=value]],...`, in vernier's one spec grammar
/// ([`vernier_model::spec`]). `default` and `all` stand for the default set and every monitor
/// (options given to them apply to each), `none` for no monitor. A monitor named again replaces
/// the earlier choice in place, so `default,stat:interval=0.1` samples stat faster. The options
/// are `interval` (seconds), for `interrupts` and `slab` `top` (series kept), and for
/// `interrupts` `per-cpu` (on or off).
pub fn parse_monitor_list(text: &str) -> Result<Vec<MonitorSpec>, MonitorError> {
    let bad = |reason: String| MonitorError::BadSpec {
        text: text.to_string(),
        reason,
    };
    if text.trim() == "none" {
        return Ok(Vec::new());
    }
    let items = parse_spec_list(text)
        .and_then(|items| {
            items.iter().try_for_each(Spec::not_optional)?;
            Ok(items)
        })
        .map_err(|e| {
            bad(if e.spec == text.trim() {
                e.problem.to_string()
            } else {
                e.to_string()
            })
        })?;
    let mut out: Vec<MonitorSpec> = Vec::new();
    for item in items {
        let name = item.name.as_str();
        let mut specs = match name {
            "default" => default_monitors(),
            "all" => MonitorKind::all().map(MonitorSpec::new).collect(),
            "none" => return Err(bad("'none' cannot be combined with monitors".into())),
            _ => vec![MonitorSpec::new(name.parse()?)],
        };
        for (key, value) in &item.options {
            for spec in &mut specs {
                // `top` and `per-cpu` given to a group apply to the monitors that take them.
                if name != spec.kind.as_str()
                    && matches!(key.as_str(), "top" | "per-cpu")
                    && !spec.kind.info().options.contains(&key.as_str())
                {
                    continue;
                }
                spec.set(key, value)?;
            }
        }
        for spec in specs {
            match out.iter_mut().find(|s| s.kind == spec.kind) {
                Some(existing) => *existing = spec,
                None => out.push(spec),
            }
        }
    }
    Ok(out)
}

/// Creates the working monitor of `spec`.
pub fn build(spec: &MonitorSpec, roots: &Roots) -> Box<dyn Monitor> {
    let proc_root = roots.proc_root.clone();
    match spec.kind {
        MonitorKind::Stat => Box::new(StatMonitor::new(proc_root)),
        MonitorKind::Meminfo => Box::new(MeminfoMonitor::new(proc_root)),
        MonitorKind::Vmstat => Box::new(VmstatMonitor::new(proc_root)),
        MonitorKind::Schedstat => Box::new(SchedstatMonitor::new(proc_root)),
        MonitorKind::Pressure => Box::new(PressureMonitor::new(proc_root)),
        MonitorKind::Interrupts => {
            Box::new(InterruptsMonitor::new(proc_root, spec.top).per_cpu(spec.per_cpu))
        }
        MonitorKind::Softirqs => Box::new(SoftirqsMonitor::new(proc_root)),
        MonitorKind::Slab => Box::new(SlabMonitor::new(proc_root, spec.top)),
        MonitorKind::Perf => Box::new(crate::monitors::PerfMonitor::new()),
        MonitorKind::Cpufreq => Box::new(CpufreqMonitor::new(roots.sys_root.clone())),
        MonitorKind::Cpuidle => Box::new(CpuidleMonitor::new(roots.sys_root.clone())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn registry_order_matches_kinds() {
        for (i, m) in MONITORS.iter().enumerate() {
            assert_eq!(m.kind as usize, i);
            assert_eq!(m.name.parse::<MonitorKind>().unwrap(), m.kind);
        }
    }

    #[test]
    fn default_set_excludes_slab_perf_softirqs_and_cpuidle() {
        let d = default_monitors();
        let names: Vec<String> = d.iter().map(|s| s.kind.to_string()).collect();
        assert_eq!(
            names,
            [
                "stat",
                "meminfo",
                "vmstat",
                "schedstat",
                "pressure",
                "interrupts",
                "cpufreq"
            ]
        );
        assert!(d.iter().all(|s| s.interval_ms == 1000));
    }

    #[test]
    fn parses_names_and_options() {
        let s = parse_monitor_list("stat:interval=0.1, interrupts:top=3:interval=2,perf").unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].kind, MonitorKind::Stat);
        assert_eq!(s[0].interval_ms, 100);
        assert_eq!((s[1].top, s[1].interval_ms), (3, 2000));
        assert_eq!(s[2], MonitorSpec::new(MonitorKind::Perf));
        assert_eq!(parse_monitor_list("none").unwrap(), vec![]);
        assert_eq!(parse_monitor_list("all").unwrap().len(), MONITORS.len());
    }

    #[test]
    fn later_choice_replaces_earlier_and_group_options_apply_to_all() {
        let s = parse_monitor_list("default:interval=0.5,stat:interval=0.1,slab").unwrap();
        assert_eq!(s.len(), default_monitors().len() + 1);
        assert_eq!(s[0].kind, MonitorKind::Stat);
        assert_eq!(s[0].interval_ms, 100);
        assert!(s[1..s.len() - 1].iter().all(|m| m.interval_ms == 500));
        assert_eq!(s.last().unwrap().kind, MonitorKind::Slab);
        let t = parse_monitor_list("all:top=2").unwrap();
        assert!(t
            .iter()
            .all(|m| m.top == 2 || m.kind.info().options.is_empty()));
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "stat",
            "stat:interval=0.25",
            "slab:interval=2:top=9",
            "interrupts:top=3:per-cpu=on",
        ] {
            let s = parse_monitor_list(text).unwrap();
            assert_eq!(s[0].to_string(), text);
        }
    }

    #[test]
    fn errors_name_the_valid_choices() {
        let e = parse_monitor_list("stat,bogus").unwrap_err().to_string();
        assert!(e.contains("unknown monitor 'bogus'"), "{e}");
        assert!(
            e.contains("stat, meminfo, vmstat") && e.contains("cpufreq"),
            "{e}"
        );

        let e = parse_monitor_list("stat:top=3").unwrap_err().to_string();
        assert!(
            e.contains("no option 'top'") && e.contains("valid options: interval"),
            "{e}"
        );
        let e = parse_monitor_list("slab:depth=3").unwrap_err().to_string();
        assert!(e.contains("interval, top"), "{e}");
        let e = parse_monitor_list("slab:per-cpu=on")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no option 'per-cpu'"), "{e}");
        let s = parse_monitor_list("default:per-cpu=on").unwrap();
        assert!(s
            .iter()
            .all(|m| m.per_cpu == (m.kind == MonitorKind::Interrupts)));

        for bad in [
            "stat:interval=0",
            "stat:interval=fast",
            "stat:interval=0.001",
            "stat:interval=inf",
            "interrupts:top=0",
            "interrupts:per-cpu=maybe",
        ] {
            let e = parse_monitor_list(bad).unwrap_err();
            assert!(matches!(e, MonitorError::BadOption { .. }), "{bad}: {e}");
        }
        for bad in ["", "stat,,meminfo", "stat:interval", "none,stat"] {
            let e = parse_monitor_list(bad).unwrap_err();
            assert!(matches!(e, MonitorError::BadSpec { .. }), "{bad}: {e}");
        }
    }
}
