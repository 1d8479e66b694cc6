//! The setup plugins: option checking and preflight ([`plan_setup`]). Applying and restoring
//! live in [`crate::guard`]; the child-side part (`rt`, `pin`) is a [`ChildSetup`] that each
//! benchmark child applies to itself with `vernier_sys::sched::apply_child_setup`.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use vernier_model::ChildSetup;
use vernier_sys::cpulist::{parse_cpu_list, read_online_cpus};

use crate::spec::parse_setup_list;
use crate::{swap, SetupError};
use vernier_model::spec::Spec as SetupSpec;
use vernier_sys::{Roots, SysError};

/// Every plugin with its options, in help order.
const PLUGINS: &[(&str, &[&str])] = &[
    ("drop-caches", &[]),
    ("swap-reset", &["when"]),
    ("cooldown", &["seconds", "load", "timeout"]),
    ("idle-gate", &["threshold", "window", "timeout"]),
    ("governor", &["governor"]),
    ("turbo", &[]),
    ("dma-latency", &["us"]),
    ("rt", &["priority"]),
    ("pin", &["cpus"]),
    ("sysctl", &[]),
];

/// The names accepted by `--setup`.
pub const PLUGIN_NAMES: &[&str] = &[
    "drop-caches",
    "swap-reset",
    "cooldown",
    "idle-gate",
    "governor",
    "turbo",
    "dma-latency",
    "rt",
    "pin",
    "sysctl",
];

/// A setup plugin as `vernier list -v` and `vernier run --help` describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginHelp {
    pub name: &'static str,
    pub help: &'static str,
    /// Each option with what it means, its default and its range.
    pub options: &'static [(&'static str, &'static str)],
}

/// The help of every plugin, in [`PLUGIN_NAMES`] order; a test checks it names the options
/// [`plan_setup`] accepts and no others.
pub const PLUGIN_HELP: &[PluginHelp] = &[
    PluginHelp {
        name: "drop-caches",
        help: "sync, then drop the page cache, dentries and inodes before every run (root)",
        options: &[],
    },
    PluginHelp {
        name: "swap-reset",
        help: "swapoff and swapon every active swap area, emptying swap (root)",
        options: &[("when", "session (once, default) or run (before every run)")],
    },
    PluginHelp {
        name: "cooldown",
        help: "pause before every run, and wait for the load average to fall",
        options: &[
            (
                "seconds",
                "pause in seconds, 0 to 86400 (default 5, or 0 with load)",
            ),
            (
                "load",
                "then wait until the 1-minute load average is below this",
            ),
            (
                "timeout",
                "longest wait for the load, seconds (default 300)",
            ),
        ],
    },
    PluginHelp {
        name: "idle-gate",
        help: "before every run, wait until the CPUs are idle",
        options: &[
            (
                "threshold",
                "busy percent of all CPUs that counts as idle, 0 to 100 (default 5)",
            ),
            (
                "window",
                "measuring window, milliseconds, 10 to 60000 (default 250)",
            ),
            ("timeout", "longest wait, seconds (default 60)"),
        ],
    },
    PluginHelp {
        name: "governor",
        help: "set the cpufreq governor of every online CPU for the session (root)",
        options: &[("governor", "the governor (default performance)")],
    },
    PluginHelp {
        name: "turbo",
        help: "switch turbo/boost off for the session (intel_pstate no_turbo or cpufreq boost)",
        options: &[],
    },
    PluginHelp {
        name: "dma-latency",
        help: "hold a PM QoS CPU latency request (/dev/cpu_dma_latency) for the session",
        options: &[(
            "us",
            "the latency limit in microseconds (default 0: no deep C-states)",
        )],
    },
    PluginHelp {
        name: "rt",
        help: "run the benchmark under SCHED_FIFO",
        options: &[("priority", "the real-time priority, 1 to 99 (default 50)")],
    },
    PluginHelp {
        name: "pin",
        help: "pin the benchmark to CPUs (required option)",
        options: &[("cpus", "a CPU list such as 1 or 0,2-3, all online")],
    },
    PluginHelp {
        name: "sysctl",
        help: "set sysctls for the session: sysctl:NAME=VALUE[:NAME=VALUE...] (root)",
        options: &[],
    },
];

/// When a step is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum When {
    /// Once, when the session starts; restored when it ends.
    Session,
    /// Before every measured run; nothing is left changed afterwards.
    Run,
}

/// What a plugin does, with everything resolved to paths and numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// sync(2), then write `3` to /proc/sys/vm/drop_caches: free the page cache, dentries and
    /// inodes (Documentation/admin-guide/sysctl/vm.rst, drop_caches). Dirty pages are not
    /// dropped, hence the sync first.
    DropCaches { path: PathBuf },
    /// swapoff and swapon again every area active at that moment (read from `swaps_path`).
    SwapReset { swaps_path: PathBuf },
    /// Sleep `seconds`, then wait until the 1-minute load average is below `load`, for at most
    /// `timeout`.
    Cooldown {
        seconds: f64,
        load: Option<f64>,
        timeout: Duration,
        loadavg_path: PathBuf,
    },
    /// Wait until the CPUs are busy less than `busy_pct` percent over one `window` (from
    /// `stat_path`), for at most `timeout`.
    IdleGate {
        busy_pct: f64,
        window: Duration,
        timeout: Duration,
        stat_path: PathBuf,
    },
    /// Write each value to its file (governor, turbo, sysctl); restore writes the previous one.
    Write { writes: Vec<(PathBuf, String)> },
    /// Hold /dev/cpu_dma_latency open with a request of `latency_us`.
    DmaLatency { path: PathBuf, latency_us: i32 },
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedStep {
    /// The plugin as the user wrote it, for messages and the session record.
    pub plugin: String,
    pub when: When,
    pub step: Step,
}

/// An optional plugin that cannot be applied on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub plugin: String,
    pub reason: String,
}

/// A checked setup: nothing has changed on the machine yet.
#[derive(Debug, Clone, PartialEq)]
pub struct SetupPlan {
    /// Session steps in the order given; per-run steps in a fixed order (swap reset, drop
    /// caches, cooldown, idle gate) so that the waits come last, after the I/O of the others.
    pub steps: Vec<PlannedStep>,
    pub child: ChildSetup,
    pub skipped: Vec<Skipped>,
}

impl SetupPlan {
    pub fn session_steps(&self) -> impl Iterator<Item = &PlannedStep> {
        self.steps.iter().filter(|s| s.when == When::Session)
    }

    pub fn run_steps(&self) -> impl Iterator<Item = &PlannedStep> {
        self.steps.iter().filter(|s| s.when == When::Run)
    }

    /// True when the plan neither changes the system nor the child.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.child == ChildSetup::default()
    }
}

/// Parses the `--setup` arguments and checks every plugin against the machine at `roots`.
/// Nothing is changed. An unavailable plugin fails the plan unless it is optional (`name?`).
pub fn plan_setup<S: AsRef<str>>(specs: &[S], roots: &Roots) -> Result<SetupPlan, SetupError> {
    let specs = parse_setup_list(specs)?;
    let mut plan = SetupPlan {
        steps: Vec::new(),
        child: ChildSetup::default(),
        skipped: Vec::new(),
    };
    for spec in &specs {
        check_option_names(spec)?;
        match plan_one(spec, roots) {
            Ok(Planned::Step(step)) => plan.steps.push(step),
            Ok(Planned::Rt(p)) => plan.child.rt_priority = Some(p),
            Ok(Planned::Pin(cpus)) => plan.child.cpus = Some(cpus),
            Err(SetupError::Unavailable { plugin, reason }) if spec.optional => {
                plan.skipped.push(Skipped { plugin, reason })
            }
            Err(e) => return Err(e),
        }
    }
    let order = |s: &PlannedStep| match (&s.when, &s.step) {
        (When::Session, _) => 0,
        (When::Run, Step::SwapReset { .. }) => 1,
        (When::Run, Step::DropCaches { .. }) => 2,
        (When::Run, Step::Cooldown { .. }) => 3,
        (When::Run, _) => 4,
    };
    plan.steps.sort_by_key(order);
    Ok(plan)
}

fn check_option_names(spec: &SetupSpec) -> Result<(), SetupError> {
    let Some((_, valid)) = PLUGINS.iter().find(|(n, _)| *n == spec.name) else {
        return Err(SetupError::UnknownPlugin {
            name: spec.name.clone(),
            valid: PLUGIN_NAMES.join(", "),
        });
    };
    if spec.name == "sysctl" {
        if spec.options.is_empty() {
            return Err(SetupError::Parse {
                spec: spec.text.clone(),
                detail: "give at least one sysctl, e.g. sysctl:kernel.timer_migration=0".into(),
            });
        }
        return Ok(());
    }
    for (k, _) in &spec.options {
        if !valid.contains(&k.as_str()) {
            return Err(SetupError::UnknownOption {
                plugin: spec.name.clone(),
                option: k.clone(),
                valid: if valid.is_empty() {
                    "none".into()
                } else {
                    valid.join(", ")
                },
            });
        }
    }
    Ok(())
}

enum Planned {
    Step(PlannedStep),
    Rt(i32),
    Pin(Vec<usize>),
}

fn unavailable(spec: &SetupSpec, reason: impl Into<String>) -> SetupError {
    SetupError::Unavailable {
        plugin: spec.name.clone(),
        reason: reason.into(),
    }
}

fn option_f64(spec: &SetupSpec, name: &str, min: f64, max: f64) -> Result<Option<f64>, SetupError> {
    let Some(v) = spec.option(name) else {
        return Ok(None);
    };
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && (min..=max).contains(&x) => Ok(Some(x)),
        _ => Err(SetupError::BadOption {
            plugin: spec.name.clone(),
            option: name.into(),
            value: v.into(),
            detail: format!("expected a number from {min} to {max}"),
        }),
    }
}

/// Ok when `path` exists and this process may write it (access(2) with W_OK).
fn check_writable(path: &Path) -> Result<(), String> {
    if !path.exists() {
        return Err(format!("{} is absent", path.display()));
    }
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{}: path contains a NUL byte", path.display()))?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(format!(
            "{} is not writable ({}; run as root)",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

fn step(spec: &SetupSpec, when: When, step: Step) -> Planned {
    Planned::Step(PlannedStep {
        plugin: spec.text.trim_end_matches('?').to_string(),
        when,
        step,
    })
}

fn plan_one(spec: &SetupSpec, roots: &Roots) -> Result<Planned, SetupError> {
    let proc_root = &roots.proc_root;
    let cpu_dir = roots.sys_root.join("devices/system/cpu");
    match spec.name.as_str() {
        "drop-caches" => {
            let path = proc_root.join("sys/vm/drop_caches");
            check_writable(&path).map_err(|r| unavailable(spec, r))?;
            Ok(step(spec, When::Run, Step::DropCaches { path }))
        }
        "swap-reset" => {
            let when = match spec.option("when").unwrap_or("session") {
                "session" => When::Session,
                "run" => When::Run,
                other => {
                    return Err(SetupError::BadOption {
                        plugin: spec.name.clone(),
                        option: "when".into(),
                        value: other.into(),
                        detail: "expected 'session' or 'run'".into(),
                    })
                }
            };
            let swaps_path = proc_root.join("swaps");
            let areas =
                swap::read_swaps(&swaps_path).map_err(|e| unavailable(spec, e.to_string()))?;
            // No swap is fine: the step then has nothing to do. swapoff(2) needs CAP_SYS_ADMIN.
            // SAFETY: geteuid has no preconditions.
            if !areas.is_empty() && unsafe { libc::geteuid() } != 0 {
                return Err(unavailable(
                    spec,
                    "swapoff/swapon need root (CAP_SYS_ADMIN)",
                ));
            }
            Ok(step(spec, when, Step::SwapReset { swaps_path }))
        }
        "cooldown" => {
            let seconds = option_f64(spec, "seconds", 0.0, 86_400.0)?;
            let load = option_f64(spec, "load", 0.0, 1e6)?;
            let timeout = option_f64(spec, "timeout", 0.0, 86_400.0)?.unwrap_or(300.0);
            // Without options: a fixed pause that lets caches, clocks and temperatures settle.
            let seconds = seconds.unwrap_or(if load.is_some() { 0.0 } else { 5.0 });
            let loadavg_path = proc_root.join("loadavg");
            if load.is_some() {
                vernier_sys::loadavg::read_loadavg(proc_root)
                    .map_err(|e| unavailable(spec, e.to_string()))?;
            }
            Ok(step(
                spec,
                When::Run,
                Step::Cooldown {
                    seconds,
                    load,
                    timeout: Duration::from_secs_f64(timeout),
                    loadavg_path,
                },
            ))
        }
        "idle-gate" => {
            let busy_pct = option_f64(spec, "threshold", 0.0, 100.0)?.unwrap_or(5.0);
            let window_ms = option_f64(spec, "window", 10.0, 60_000.0)?.unwrap_or(250.0);
            let timeout = option_f64(spec, "timeout", 0.0, 86_400.0)?.unwrap_or(60.0);
            let stat_path = proc_root.join("stat");
            vernier_sys::procstat::read_proc_stat_cpu(proc_root)
                .map_err(|e| unavailable(spec, e.to_string()))?;
            Ok(step(
                spec,
                When::Run,
                Step::IdleGate {
                    busy_pct,
                    window: Duration::from_secs_f64(window_ms / 1000.0),
                    timeout: Duration::from_secs_f64(timeout),
                    stat_path,
                },
            ))
        }
        "governor" => {
            let target = spec.option("governor").unwrap_or("performance");
            let cpus =
                read_online_cpus(&roots.sys_root).map_err(|e| unavailable(spec, e.to_string()))?;
            let mut writes = Vec::new();
            for cpu in cpus {
                let dir = cpu_dir.join(format!("cpu{cpu}/cpufreq"));
                let path = dir.join("scaling_governor");
                if !path.exists() {
                    return Err(unavailable(
                        spec,
                        format!("no cpufreq driver ({} is absent)", path.display()),
                    ));
                }
                check_writable(&path).map_err(|r| unavailable(spec, r))?;
                if let Ok(avail) = vernier_sys::read_file(&dir.join("scaling_available_governors"))
                {
                    if !avail.split_whitespace().any(|g| g == target) {
                        return Err(unavailable(
                            spec,
                            format!(
                                "cpu{cpu} has no governor '{target}' (available: {})",
                                avail.trim()
                            ),
                        ));
                    }
                }
                writes.push((path, target.to_string()));
            }
            Ok(step(spec, When::Session, Step::Write { writes }))
        }
        "turbo" => {
            let writes = turbo_writes(&roots.sys_root);
            if writes.is_empty() {
                return Err(unavailable(
                    spec,
                    format!(
                        "no turbo control ({} and {} are absent)",
                        cpu_dir.join("intel_pstate/no_turbo").display(),
                        cpu_dir.join("cpufreq/boost").display()
                    ),
                ));
            }
            for (p, _) in &writes {
                check_writable(p).map_err(|r| unavailable(spec, r))?;
            }
            Ok(step(spec, When::Session, Step::Write { writes }))
        }
        "dma-latency" => {
            let latency_us = option_f64(spec, "us", 0.0, 2e9)?.unwrap_or(0.0) as i32;
            let path = roots.dev_root.join("cpu_dma_latency");
            check_writable(&path).map_err(|r| unavailable(spec, r))?;
            Ok(step(
                spec,
                When::Session,
                Step::DmaLatency { path, latency_us },
            ))
        }
        "sysctl" => {
            let mut writes = Vec::new();
            for (name, value) in &spec.options {
                let rel = name.replace('.', "/");
                if rel.split('/').any(|c| c.is_empty() || c == "..") {
                    return Err(SetupError::BadOption {
                        plugin: spec.name.clone(),
                        option: name.clone(),
                        value: value.clone(),
                        detail: "not a sysctl name".into(),
                    });
                }
                let path = proc_root.join("sys").join(rel);
                check_writable(&path).map_err(|r| unavailable(spec, r))?;
                writes.push((path, value.clone()));
            }
            Ok(step(spec, When::Session, Step::Write { writes }))
        }
        "rt" => {
            // SAFETY: plain queries without pointers.
            let (min, max) = unsafe {
                (
                    libc::sched_get_priority_min(libc::SCHED_FIFO),
                    libc::sched_get_priority_max(libc::SCHED_FIFO),
                )
            };
            let p = option_f64(spec, "priority", min as f64, max as f64)?.unwrap_or(50.0);
            if p.fract() != 0.0 {
                return Err(SetupError::BadOption {
                    plugin: spec.name.clone(),
                    option: "priority".into(),
                    value: p.to_string(),
                    detail: "expected a whole number".into(),
                });
            }
            probe_fifo(p as i32).map_err(|r| unavailable(spec, r))?;
            Ok(Planned::Rt(p as i32))
        }
        "pin" => {
            let Some(text) = spec.option("cpus") else {
                return Err(SetupError::Parse {
                    spec: spec.text.clone(),
                    detail: "pin needs cpus=LIST, e.g. pin:cpus=1 or pin:cpus=0,2-3".into(),
                });
            };
            let cpus = parse_cpu_list(text)
                .ok()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| SetupError::BadOption {
                    plugin: spec.name.clone(),
                    option: "cpus".into(),
                    value: text.into(),
                    detail: "expected a CPU list such as 0-3,8".into(),
                })?;
            let online =
                read_online_cpus(&roots.sys_root).map_err(|e| unavailable(spec, e.to_string()))?;
            if let Some(off) = cpus.iter().find(|c| !online.contains(c)) {
                return Err(unavailable(
                    spec,
                    format!("CPU {off} is not online (online: {online:?})"),
                ));
            }
            Ok(Planned::Pin(cpus))
        }
        other => Err(SetupError::UnknownPlugin {
            name: other.into(),
            valid: PLUGIN_NAMES.join(", "),
        }),
    }
}

/// The files that switch turbo/boost off, where present: intel_pstate's `no_turbo`
/// (Documentation/admin-guide/pm/intel_pstate.rst) and the generic cpufreq `boost`
/// (Documentation/admin-guide/pm/cpufreq.rst).
pub(crate) fn turbo_writes(sys_root: &Path) -> Vec<(PathBuf, String)> {
    let cpu_dir = sys_root.join("devices/system/cpu");
    let mut writes = Vec::new();
    let no_turbo = cpu_dir.join("intel_pstate/no_turbo");
    if no_turbo.exists() {
        writes.push((no_turbo, "1".to_string()));
    }
    let boost = cpu_dir.join("cpufreq/boost");
    if boost.exists() {
        writes.push((boost, "0".to_string()));
    }
    writes
}

/// Checks that SCHED_FIFO at `priority` is permitted (root, CAP_SYS_NICE or RLIMIT_RTPRIO;
/// sched(7)) without changing this process.
fn probe_fifo(priority: i32) -> Result<(), String> {
    vernier_sys::sched::probe_fifo(priority).map_err(|e| match e {
        SysError::Syscall { source, .. } => format!(
            "SCHED_FIFO priority {priority} is not permitted ({source}; needs root, CAP_SYS_NICE or RLIMIT_RTPRIO)"
        ),
        other => other.to_string(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn plans_every_plugin_on_a_fixture_tree() {
        let dir = tempfile::tempdir().unwrap();
        let roots = fixture::tree(dir.path());
        // rt asks the running process for SCHED_FIFO, which root has and a normal user
        // usually not; without it the refusal is checked instead.
        let rt = if probe_fifo(50).is_ok() {
            "rt"
        } else {
            eprintln!("skipped: planning rt needs SCHED_FIFO (root); checking the refusal");
            let e = plan_setup(&["rt"], &roots).unwrap_err();
            assert!(matches!(e, SetupError::Unavailable { .. }), "{e}");
            "rt?"
        };
        let plan = plan_setup(
            &[
                "idle-gate,cooldown:seconds=1,governor,drop-caches,turbo,dma-latency",
                &format!("swap-reset:when=run,{rt},pin:cpus=1,sysctl:kernel.timer_migration=0"),
            ],
            &roots,
        )
        .unwrap();
        let skipped: Vec<&str> = plan.skipped.iter().map(|s| s.plugin.as_str()).collect();
        let permitted = rt == "rt";
        assert_eq!(skipped, if permitted { vec![] } else { vec!["rt"] });
        assert_eq!(
            plan.child,
            ChildSetup {
                rt_priority: permitted.then_some(50),
                cpus: Some(vec![1])
            }
        );
        let session: Vec<&str> = plan.session_steps().map(|s| s.plugin.as_str()).collect();
        assert_eq!(
            session,
            [
                "governor",
                "turbo",
                "dma-latency",
                "sysctl:kernel.timer_migration=0"
            ]
        );
        // Per-run steps in the fixed order: swap reset, drop caches, then the waits.
        let run: Vec<&str> = plan.run_steps().map(|s| s.plugin.as_str()).collect();
        assert_eq!(
            run,
            [
                "swap-reset:when=run",
                "drop-caches",
                "cooldown:seconds=1",
                "idle-gate"
            ]
        );
        let governor = plan.session_steps().next().unwrap();
        let Step::Write { writes } = &governor.step else {
            panic!("governor is a write step");
        };
        assert_eq!(writes.len(), 2);
        assert!(writes.iter().all(|(_, v)| v == "performance"));
        assert!(!plan.is_empty());
        assert!(plan_setup::<&str>(&[], &roots).unwrap().is_empty());
    }

    #[test]
    fn names_the_valid_plugins_and_options() {
        let dir = tempfile::tempdir().unwrap();
        let roots = fixture::tree(dir.path());
        let e = plan_setup(&["drop-cache"], &roots).unwrap_err();
        assert!(matches!(e, SetupError::UnknownPlugin { .. }));
        assert!(e.to_string().contains("drop-caches, swap-reset"), "{e}");
        let e = plan_setup(&["cooldown:secs=3"], &roots).unwrap_err();
        assert!(e.to_string().contains("seconds, load, timeout"), "{e}");
        let e = plan_setup(&["turbo:x=1"], &roots).unwrap_err();
        assert!(e.to_string().contains("valid: none"), "{e}");
        for bad in [
            "cooldown:seconds=-1",
            "cooldown:load=abc",
            "idle-gate:threshold=101",
            "swap-reset:when=always",
            "rt:priority=0",
            "rt:priority=100",
            "rt:priority=2.5",
            "pin:cpus=x",
            "sysctl:kernel..x=1",
        ] {
            assert!(
                matches!(
                    plan_setup(&[bad], &roots),
                    Err(SetupError::BadOption { .. })
                ),
                "{bad} should be a bad option"
            );
        }
        assert!(matches!(
            plan_setup(&["pin"], &roots),
            Err(SetupError::Parse { .. })
        ));
        assert!(matches!(
            plan_setup(&["sysctl"], &roots),
            Err(SetupError::Parse { .. })
        ));
        assert_eq!(PLUGIN_NAMES.len(), PLUGINS.len());
        assert!(PLUGINS.iter().zip(PLUGIN_NAMES).all(|((a, _), b)| a == b));
        // The help names the same plugins and options, in the same order.
        assert_eq!(PLUGIN_HELP.len(), PLUGINS.len());
        for (help, (name, options)) in PLUGIN_HELP.iter().zip(PLUGINS) {
            assert_eq!(help.name, *name);
            let helped: Vec<&str> = help.options.iter().map(|(o, _)| *o).collect();
            assert_eq!(helped, *options, "{name}");
        }
    }

    #[test]
    fn unavailable_plugins_fail_unless_optional() {
        let dir = tempfile::tempdir().unwrap();
        let roots = fixture::tree(dir.path());
        for rel in [
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
            "sys/devices/system/cpu/cpufreq/boost",
            "dev/cpu_dma_latency",
        ] {
            std::fs::remove_file(dir.path().join(rel)).unwrap();
        }
        let e = plan_setup(&["governor"], &roots).unwrap_err();
        assert!(matches!(e, SetupError::Unavailable { .. }));
        assert!(e.to_string().contains("no cpufreq driver"), "{e}");
        let e = plan_setup(&["turbo"], &roots).unwrap_err();
        assert!(e.to_string().contains("no turbo control"), "{e}");
        assert!(plan_setup(&["dma-latency"], &roots).is_err());
        assert!(plan_setup(&["sysctl:kernel.nope=1"], &roots).is_err());
        let e = plan_setup(&["pin:cpus=0-2"], &roots).unwrap_err();
        assert!(e.to_string().contains("CPU 2 is not online"), "{e}");
        // A governor that the driver does not offer.
        let roots2_dir = tempfile::tempdir().unwrap();
        let roots2 = fixture::tree(roots2_dir.path());
        assert!(plan_setup(&["governor:governor=schedutil"], &roots2).is_err());

        let plan = plan_setup(&["governor?,turbo?,dma-latency?,drop-caches"], &roots).unwrap();
        let skipped: Vec<&str> = plan.skipped.iter().map(|s| s.plugin.as_str()).collect();
        assert_eq!(skipped, ["governor", "turbo", "dma-latency"]);
        assert_eq!(plan.steps.len(), 1);
        // Optional does not hide mistakes in the request itself.
        assert!(plan_setup(&["governor?:bogus=1"], &roots).is_err());
    }
}
