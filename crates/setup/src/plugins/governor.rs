//! `governor`: set the cpufreq governor of every online CPU for the session
//! (Documentation/admin-guide/pm/cpufreq.rst, scaling_governor); restore writes the previous
//! one back.

use std::path::PathBuf;

use vernier_model::spec::Spec;
use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
use vernier_sys::cpulist::read_online_cpus;
use vernier_sys::Roots;

use super::{check_writable, unavailable, Plugin, PluginKind, When};
use crate::record::{write_changes, Change};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct Governor {
    writes: Vec<(PathBuf, String)>,
}

impl PluginKind for Governor {
    fn describe() -> Description {
        Description::new(
            "governor",
            "set the cpufreq governor of every online CPU for the session (root)",
        )
        .with_options(vec![OptionSpec::new(
            "governor",
            OptionKind::Text,
            OptionDefault::Value(OptionValue::Text("performance".into())),
        )
        .help("the governor, one the driver offers")])
    }

    fn plan(spec: &Spec, options: &Options, roots: &Roots) -> Result<Self, SetupError> {
        let target = options.text("governor");
        let cpu_dir = roots.sys_root.join("devices/system/cpu");
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
            if let Ok(avail) = vernier_sys::read_file(&dir.join("scaling_available_governors")) {
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
        Ok(Governor { writes })
    }
}

impl Plugin for Governor {
    fn when(&self) -> Option<When> {
        Some(When::Session)
    }

    fn changes(&self, label: &str) -> Result<Vec<Change>, SetupError> {
        write_changes(label, &self.writes)
    }
}
