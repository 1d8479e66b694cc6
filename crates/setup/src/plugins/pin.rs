//! `pin:cpus=LIST`: restrict the benchmark child to CPUs (a CPU list such as `0,2-3`, all
//! online). The child applies it to itself (`vernier_sys::sched::apply_child_setup`), so
//! nothing in this process changes.

use vernier_model::options::ALL_CPUS;
use vernier_model::spec::Spec;
use vernier_model::{ChildSetup, Description, OptionDefault, OptionKind, OptionSpec, Options};
use vernier_sys::cpulist::{parse_cpu_list, read_online_cpus};
use vernier_sys::Roots;

use super::{unavailable, Plugin, PluginKind, When};
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct Pin {
    cpus: Vec<usize>,
}

impl PluginKind for Pin {
    fn describe() -> Description {
        Description::new("pin", "pin the benchmark to CPUs (required option)").with_options(vec![
            OptionSpec::new("cpus", OptionKind::CpuList, OptionDefault::Required)
                .help("the CPUs, each online"),
        ])
    }

    fn plan(spec: &Spec, options: &Options, roots: &Roots) -> Result<Self, SetupError> {
        if options.get("cpus").is_none() {
            return Err(SetupError::Parse {
                spec: spec.text.clone(),
                detail: "pin needs cpus=LIST, e.g. pin:cpus=1 or pin:cpus=0,2-3".into(),
            });
        }
        let online =
            read_online_cpus(&roots.sys_root).map_err(|e| unavailable(spec, e.to_string()))?;
        let cpus = match options.text("cpus") {
            ALL_CPUS => online.clone(),
            // Canonical already: the option's type parsed it.
            list => parse_cpu_list(list).map_err(|e| unavailable(spec, e))?,
        };
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
