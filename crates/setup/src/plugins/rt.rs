//! `rt:priority=N`: run the benchmark child under SCHED_FIFO (sched(7)). Planning checks that
//! the priority is permitted here; the child applies it to itself
//! (`vernier_sys::sched::apply_child_setup`), so nothing in this process changes.

use vernier_model::spec::Spec;
use vernier_model::ChildSetup;
use vernier_sys::{Roots, SysError};

use super::{option_f64, unavailable, Plugin, PluginHelp, PluginKind, When};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct Rt {
    priority: i32,
}

impl PluginKind for Rt {
    const HELP: PluginHelp = PluginHelp {
        name: "rt",
        help: "run the benchmark under SCHED_FIFO",
        options: &[("priority", "the real-time priority, 1 to 99 (default 50)")],
    };

    fn plan(spec: &Spec, _roots: &Roots) -> Result<Self, SetupError> {
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
        Ok(Rt { priority: p as i32 })
    }
}

impl Plugin for Rt {
    fn when(&self) -> Option<When> {
        None
    }

    fn child(&self, child: &mut ChildSetup) {
        child.rt_priority = Some(self.priority);
    }
}

/// Checks that SCHED_FIFO at `priority` is permitted (root, CAP_SYS_NICE or RLIMIT_RTPRIO;
/// sched(7)) without changing this process.
pub(crate) fn probe_fifo(priority: i32) -> Result<(), String> {
    vernier_sys::sched::probe_fifo(priority).map_err(|e| match e {
        SysError::Syscall { source, .. } => format!(
            "SCHED_FIFO priority {priority} is not permitted ({source}; needs root, CAP_SYS_NICE or RLIMIT_RTPRIO)"
        ),
        other => other.to_string(),
    })
}
