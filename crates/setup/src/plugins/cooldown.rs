//! `cooldown`: before every measured run, pause, then wait until the 1-minute load average is
//! below a limit. The load average is an exponentially damped average updated every 5 s
//! (kernel/sched/loadavg.c), so after a busy run it takes a minute or more to fall: the
//! timeout must allow for that.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use vernier_model::spec::Spec;
use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
use vernier_sys::loadavg::read_loadavg;
use vernier_sys::Roots;

use super::{unavailable, Plugin, PluginKind, Waiter, When};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct Cooldown {
    seconds: f64,
    load: Option<f64>,
    timeout: Duration,
    proc_root: PathBuf,
}

impl PluginKind for Cooldown {
    fn describe() -> Description {
        let seconds = |name, default, help| {
            OptionSpec::new(
                name,
                OptionKind::Float {
                    min: 0.0,
                    max: 86_400.0,
                },
                default,
            )
            .unit("s")
            .help(help)
        };
        Description::new(
            "cooldown",
            "pause before every run, and wait for the load average to fall",
        )
        .with_options(vec![
            seconds(
                "seconds",
                OptionDefault::Unset("5, or 0 with load".into()),
                "the pause",
            ),
            OptionSpec::new(
                "load",
                OptionKind::Float { min: 0.0, max: 1e6 },
                OptionDefault::Unset("none: no wait".into()),
            )
            .help("then wait until the 1-minute load average is below this"),
            seconds(
                "timeout",
                OptionDefault::Value(OptionValue::Float(300.0)),
                "longest wait for the load",
            ),
        ])
    }

    fn plan(spec: &Spec, options: &Options, roots: &Roots) -> Result<Self, SetupError> {
        let load = options.get("load").map(|_| options.float("load"));
        let timeout = options.float("timeout");
        // Without options: a fixed pause that lets caches, clocks and temperatures settle.
        let seconds = match options.get("seconds") {
            Some(_) => options.float("seconds"),
            None if load.is_some() => 0.0,
            None => 5.0,
        };
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
