//! `sysctl:NAME=VALUE[:NAME=VALUE...]`: set sysctls for the session by writing
//! /proc/sys/NAME with the dots as slashes (sysctl(8)); restore writes the previous values
//! back.

use std::path::PathBuf;

use vernier_model::spec::Spec;
use vernier_model::{Description, Options};
use vernier_sys::Roots;

use super::{check_writable, unavailable, Plugin, PluginKind, When};
use crate::record::{write_changes, Change};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct Sysctl {
    writes: Vec<(PathBuf, String)>,
}

impl PluginKind for Sysctl {
    fn describe() -> Description {
        Description::new(
            "sysctl",
            "set sysctls for the session: sysctl:NAME=VALUE[:NAME=VALUE...] (root)",
        )
        .with_other_options(
            "NAME=VALUE sets the sysctl NAME, e.g. kernel.timer_migration=0",
            true,
        )
    }

    /// The sysctls in the order given (`spec`; `options` holds the same, by name).
    fn plan(spec: &Spec, _options: &Options, roots: &Roots) -> Result<Self, SetupError> {
        if spec.options.is_empty() {
            return Err(SetupError::Parse {
                spec: spec.text.clone(),
                detail: "give at least one sysctl, e.g. sysctl:kernel.timer_migration=0".into(),
            });
        }
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
            let path = roots.proc_root.join("sys").join(rel);
            check_writable(&path).map_err(|r| unavailable(spec, r))?;
            writes.push((path, value.clone()));
        }
        Ok(Sysctl { writes })
    }
}

impl Plugin for Sysctl {
    fn when(&self) -> Option<When> {
        Some(When::Session)
    }

    fn changes(&self, label: &str) -> Result<Vec<Change>, SetupError> {
        write_changes(label, &self.writes)
    }
}
