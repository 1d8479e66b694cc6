//! `cooldown`: before every measured run, pause, then wait until the 1-minute load average is
//! below a limit. The load average is an exponentially damped average updated every 5 s
//! (kernel/sched/loadavg.c), so after a busy run it takes a minute or more to fall: the
//! timeout must allow for that.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use vernier_model::spec::Spec;
use vernier_sys::loadavg::read_loadavg;
use vernier_sys::Roots;

use super::{option_f64, unavailable, Plugin, PluginHelp, PluginKind, Waiter, When};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct Cooldown {
    seconds: f64,
    load: Option<f64>,
    timeout: Duration,
    proc_root: PathBuf,
}

impl PluginKind for Cooldown {
    const HELP: PluginHelp = PluginHelp {
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
    };

    fn plan(spec: &Spec, roots: &Roots) -> Result<Self, SetupError> {
        let seconds = option_f64(spec, "seconds", 0.0, 86_400.0)?;
        let load = option_f64(spec, "load", 0.0, 1e6)?;
        let timeout = option_f64(spec, "timeout", 0.0, 86_400.0)?.unwrap_or(300.0);
        // Without options: a fixed pause that lets caches, clocks and temperatures settle.
        let seconds = seconds.unwrap_or(if load.is_some() { 0.0 } else { 5.0 });
        if load.is_some() {
            read_loadavg(&roots.proc_root).map_err(|e| unavailable(spec, e.to_string()))?;
        }
        Ok(Cooldown {
            seconds,
            load,
            timeout: Duration::from_secs_f64(timeout),
            proc_root: roots.proc_root.clone(),
        })
    }
}

impl Plugin for Cooldown {
    fn when(&self) -> Option<When> {
        Some(When::Run)
    }

    fn before_run(&self, waiter: &Waiter<'_>) -> Result<(bool, String), SetupError> {
        let start = Instant::now();
        let seconds = self.seconds;
        waiter.sleep(Duration::from_secs_f64(seconds))?;
        let Some(limit) = self.load else {
            return Ok((false, format!("slept {seconds} s")));
        };
        loop {
            let now = read_loadavg(&self.proc_root)?.load_1m;
            if now < limit {
                return Ok((false, format!("load {now} < {limit}")));
            }
            if start.elapsed() >= self.timeout {
                return Ok((true, format!("load {now} still >= {limit}")));
            }
            waiter.sleep(Duration::from_secs(1))?;
        }
    }
}
