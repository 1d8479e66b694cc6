//! `idle-gate`: before every measured run, wait until the CPUs are idle. The busy fraction of
//! all CPUs over one window comes from /proc/stat (proc(5)): busy ticks over busy + idle +
//! iowait ticks. Steal is left out: it is neither our work nor idle.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use vernier_model::spec::Spec;
use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
use vernier_sys::procstat::read_proc_stat_cpu;
use vernier_sys::Roots;

use super::{unavailable, Plugin, PluginKind, Waiter, When};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct IdleGate {
    busy_pct: f64,
    window: Duration,
    timeout: Duration,
    proc_root: PathBuf,
}

impl PluginKind for IdleGate {
    fn describe() -> Description {
        let number = |name, min, max, default, unit, help| {
            OptionSpec::new(
                name,
                OptionKind::Float { min, max },
                OptionDefault::Value(OptionValue::Float(default)),
            )
            .unit(unit)
            .help(help)
        };
        Description::new(
            "idle-gate",
            "before every run, wait until the CPUs are idle",
        )
        .with_options(vec![
            number(
                "threshold",
                0.0,
                100.0,
                5.0,
                "%",
                "busy share of all CPUs that counts as idle",
            ),
            number("window", 10.0, 60_000.0, 250.0, "ms", "measuring window"),
            number("timeout", 0.0, 86_400.0, 60.0, "s", "longest wait"),
        ])
    }

    fn plan(spec: &Spec, options: &Options, roots: &Roots) -> Result<Self, SetupError> {
        let busy_pct = options.float("threshold");
        let window_ms = options.float("window");
        let timeout = options.float("timeout");
        read_proc_stat_cpu(&roots.proc_root).map_err(|e| unavailable(spec, e.to_string()))?;
        Ok(IdleGate {
            busy_pct,
            window: Duration::from_secs_f64(window_ms / 1000.0),
            timeout: Duration::from_secs_f64(timeout),
            proc_root: roots.proc_root.clone(),
        })
    }
}

impl Plugin for IdleGate {
    fn when(&self) -> Option<When> {
        Some(When::Run)
    }

    fn before_run(&self, waiter: &Waiter<'_>) -> Result<(bool, String), SetupError> {
        let busy_pct = self.busy_pct;
        let start = Instant::now();
        loop {
            let a = read_proc_stat_cpu(&self.proc_root)?;
            waiter.sleep(self.window)?;
            let b = read_proc_stat_cpu(&self.proc_root)?;
            let busy = b.busy().saturating_sub(a.busy()) as f64;
            let idle = (b.idle + b.iowait).saturating_sub(a.idle + a.iowait) as f64;
            let pct = if busy + idle > 0.0 {
                100.0 * busy / (busy + idle)
            } else {
                0.0
            };
            if pct < busy_pct {
                return Ok((false, format!("busy {pct:.1}% < {busy_pct}%")));
            }
            if start.elapsed() >= self.timeout {
                return Ok((true, format!("busy {pct:.1}% still >= {busy_pct}%")));
            }
        }
    }
}
