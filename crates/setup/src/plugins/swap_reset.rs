//! `swap-reset`: swapoff and swapon again every active swap area, emptying swap, once for the
//! session or before every run. The areas are registered in the restore record, so that a
//! reset interrupted between swapoff and swapon is repaired by switching them back on.

use std::path::PathBuf;

use vernier_model::spec::Spec;
use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
use vernier_sys::Roots;

use super::{unavailable, Plugin, PluginKind, Waiter, When};
use crate::record::Change;
use crate::{swap, SetupError};

#[derive(Debug)]
pub(crate) struct SwapReset {
    when: When,
    /// /proc/swaps, read again when the reset happens: the areas active at that moment.
    swaps_path: PathBuf,
}

impl PluginKind for SwapReset {
    fn describe() -> Description {
        Description::new(
            "swap-reset",
            "swapoff and swapon every active swap area, emptying swap (root)",
        )
        .with_options(vec![OptionSpec::new(
            "when",
            OptionKind::choice(&["session", "run"]),
            OptionDefault::Value(OptionValue::Text("session".into())),
        )
        .help("session: once; run: before every run")])
    }

    fn plan(spec: &Spec, options: &Options, roots: &Roots) -> Result<Self, SetupError> {
        let when = match options.text("when") {
            "run" => When::Run,
            _ => When::Session,
        };
        let swaps_path = roots.proc_root.join("swaps");
        let areas = swap::read_swaps(&swaps_path).map_err(|e| unavailable(spec, e.to_string()))?;
        // No swap is fine: the step then has nothing to do. swapoff(2) needs CAP_SYS_ADMIN.
        // SAFETY: geteuid has no preconditions.
        if !areas.is_empty() && unsafe { libc::geteuid() } != 0 {
            return Err(unavailable(
                spec,
                "swapoff/swapon need root (CAP_SYS_ADMIN)",
            ));
        }
        Ok(SwapReset { when, swaps_path })
    }
}

impl Plugin for SwapReset {
    fn when(&self) -> Option<When> {
        Some(self.when)
    }

    fn changes(&self, _label: &str) -> Result<Vec<Change>, SetupError> {
        let areas = swap::read_swaps(&self.swaps_path)?;
        Ok(if areas.is_empty() {
            Vec::new()
        } else {
            vec![Change::SwapAreas { areas }]
        })
    }

    /// Also per run: a reset interrupted between swapoff and swapon is repaired on restore.
    fn sets_host_state(&self) -> bool {
        true
    }

    fn before_run(&self, _waiter: &Waiter<'_>) -> Result<(bool, String), SetupError> {
        let areas = swap::read_swaps(&self.swaps_path)?;
        swap::reset_areas(&areas)?;
        Ok((false, format!("{} swap areas reset", areas.len())))
    }
}
