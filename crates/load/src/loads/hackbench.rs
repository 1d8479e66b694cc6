//! The `hackbench` load: vernier's hackbench (rt-tests semantics) in process mode over
//! sockets, restarted when it ends, as rteval's hackbench load runs `hackbench -P -g G -l 1000
//! -s 1000` (G = 3 x the CPUs; rteval/modules/loads/hackbench.py).

use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};

use super::{Entry, Program, Work};
use crate::supervisor::HackbenchParams;

pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "hackbench",
            "hackbench in process mode, restarted when it ends (as rteval)",
        )
        .with_options(vec![
            OptionSpec::new(
                "groups",
                OptionKind::UInt { min: 1, max: 1000 },
                OptionDefault::Unset("3 x the online CPUs".into()),
            )
            .help("groups of 20 senders and 20 receivers"),
            OptionSpec::new(
                "loops",
                OptionKind::UInt {
                    min: 1,
                    max: u64::MAX,
                },
                OptionDefault::Value(OptionValue::UInt(1000)),
            )
            .help("messages each sender sends to each receiver"),
            OptionSpec::new(
                "datasize",
                OptionKind::UInt {
                    min: 1,
                    max: 1_000_000,
                },
                OptionDefault::Value(OptionValue::UInt(1000)),
            )
            .unit("bytes")
            .help("size of one message"),
        ]),
        complete,
        Work::Program(program),
    )
}

/// The groups, unless given: 3 x the online CPUs, as rteval.
fn complete(options: &mut Options, online: &[usize]) -> Result<(), String> {
    if options.get("groups").is_none() {
        let groups = 3 * (online.len().max(1) as u64);
        options.0.insert("groups".into(), OptionValue::UInt(groups));
    }
    Ok(())
}

fn program(options: &Options) -> Program {
    Program::Hackbench(HackbenchParams {
        groups: options.uint("groups"),
        loops: options.uint("loops"),
        datasize: options.uint("datasize"),
    })
}
