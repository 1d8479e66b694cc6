//! `rt:priority=N`: run the benchmark child under SCHED_FIFO (sched(7)). Planning checks that
//! the priority is permitted here; the child applies it to itself
//! (`vernier_sys::sched::apply_child_setup`), so nothing in this process changes.

use vernier_model::spec::Spec;
use vernier_model::{
    ChildSetup, Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options,
};
use vernier_sys::{Roots, SysError};

use super::{unavailable, Plugin, PluginKind, When};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct Rt {
    priority: i32,
}

impl PluginKind for Rt {
    fn describe() -> Description {
        Description::new("rt", "run the benchmark under SCHED_FIFO").with_options(vec![
            OptionSpec::new(
                "priority",
                // SCHED_FIFO's range on Linux (sched_get_priority_min/max(2)).
                OptionKind::UInt { min: 1, max: 99 },
                OptionDefault::Value(OptionValue::UInt(50)),
            )
            .help("the real-time priority"),
        ])
    }

    fn plan(spec: &Spec, options: &Options, _roots: &Roots) -> Result<Self, SetupError> {
        let priority = i32::try_from(options.uint("priority")).unwrap_or(i32::MAX);
        probe_fifo(priority).map_err(|r| unavailable(spec, r))?;
        Ok(Rt { priority })
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
