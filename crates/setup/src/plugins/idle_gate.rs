//! `idle-gate`: before every measured run, wait until the CPUs are idle. The busy fraction of
//! all CPUs over one window comes from /proc/stat (proc(5)): busy ticks over busy + idle +
//! iowait ticks. Steal is left out: it is neither our work nor idle.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use vernier_model::spec::Spec;
use vernier_sys::procstat::read_proc_stat_cpu;
use vernier_sys::Roots;

use super::{option_f64, unavailable, Plugin, PluginHelp, PluginKind, Waiter, When};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct IdleGate {
    busy_pct: f64,
    window: Duration,
    timeout: Duration,
    proc_root: PathBuf,
}

impl PluginKind for IdleGate {
    const HELP: PluginHelp = PluginHelp {
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
    };

    fn plan(spec: &Spec, roots: &Roots) -> Result<Self, SetupError> {
        let busy_pct = option_f64(spec, "threshold", 0.0, 100.0)?.unwrap_or(5.0);
        let window_ms = option_f64(spec, "window", 10.0, 60_000.0)?.unwrap_or(250.0);
        let timeout = option_f64(spec, "timeout", 0.0, 86_400.0)?.unwrap_or(60.0);
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
