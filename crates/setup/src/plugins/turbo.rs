//! `turbo`: switch turbo/boost off for the session, through intel_pstate's `no_turbo`
//! (Documentation/admin-guide/pm/intel_pstate.rst) or the generic cpufreq `boost`
//! (Documentation/admin-guide/pm/cpufreq.rst), whichever are present; restore writes the
//! previous values back. `system tune` uses the same files.

use std::path::{Path, PathBuf};

use vernier_model::spec::Spec;
use vernier_model::{Description, Options};
use vernier_sys::Roots;

use super::{check_writable, unavailable, Plugin, PluginKind, When};
use crate::record::{write_changes, Change};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct Turbo {
    writes: Vec<(PathBuf, String)>,
}

/// The files that switch turbo/boost off, where present, with the value that does it.
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

impl PluginKind for Turbo {
    fn describe() -> Description {
        Description::new(
            "turbo",
            "switch turbo/boost off for the session (intel_pstate no_turbo or cpufreq boost)",
        )
    }

    fn plan(spec: &Spec, _options: &Options, roots: &Roots) -> Result<Self, SetupError> {
        let writes = turbo_writes(&roots.sys_root);
        if writes.is_empty() {
            let cpu_dir = roots.sys_root.join("devices/system/cpu");
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
        Ok(Turbo { writes })
    }
}

impl Plugin for Turbo {
    fn when(&self) -> Option<When> {
        Some(When::Session)
    }

    fn changes(&self, label: &str) -> Result<Vec<Change>, SetupError> {
        write_changes(label, &self.writes)
    }
}
