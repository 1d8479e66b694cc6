//! `pin:cpus=LIST`: restrict the benchmark child to CPUs (a CPU list such as `0,2-3`, all
//! online). The child applies it to itself (`vernier_sys::sched::apply_child_setup`), so
//! nothing in this process changes.

use vernier_model::spec::Spec;
use vernier_model::ChildSetup;
use vernier_sys::cpulist::{parse_cpu_list, read_online_cpus};
use vernier_sys::Roots;

use super::{unavailable, Plugin, PluginHelp, PluginKind, When};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct Pin {
    cpus: Vec<usize>,
}

impl PluginKind for Pin {
    const HELP: PluginHelp = PluginHelp {
        name: "pin",
        help: "pin the benchmark to CPUs (required option)",
        options: &[("cpus", "a CPU list such as 1 or 0,2-3, all online")],
    };

    fn plan(spec: &Spec, roots: &Roots) -> Result<Self, SetupError> {
        let Some(text) = spec.option("cpus") else {
            return Err(SetupError::Parse {
                spec: spec.text.clone(),
                detail: "pin needs cpus=LIST, e.g. pin:cpus=1 or pin:cpus=0,2-3".into(),
            });
        };
        let cpus = parse_cpu_list(text)
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| SetupError::BadOption {
                plugin: spec.name.clone(),
                option: "cpus".into(),
                value: text.into(),
                detail: "expected a CPU list such as 0-3,8".into(),
            })?;
        let online =
            read_online_cpus(&roots.sys_root).map_err(|e| unavailable(spec, e.to_string()))?;
        if let Some(off) = cpus.iter().find(|c| !online.contains(c)) {
            return Err(unavailable(
                spec,
                format!("CPU {off} is not online (online: {online:?})"),
            ));
        }
        Ok(Pin { cpus })
    }
}

impl Plugin for Pin {
    fn when(&self) -> Option<When> {
        None
    }

    fn child(&self, child: &mut ChildSetup) {
        child.cpus = Some(self.cpus.clone());
    }
}
