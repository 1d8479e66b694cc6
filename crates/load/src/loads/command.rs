//! The `command` load: `sh -c cmd`, restarted when it exits, killed with its process group at
//! the end.

use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, Options};

use super::{Entry, Program, Work};

pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new("command", "any program (sh -c), restarted when it exits").with_options(
            vec![
                OptionSpec::new("cmd", OptionKind::Text, OptionDefault::Required)
                    .help("the command, run by sh -c (no ':' in it)"),
            ],
        ),
        complete,
        Work::Program(program),
    )
}

fn complete(options: &mut Options, _online: &[usize]) -> Result<(), String> {
    match options.get("cmd") {
        Some(_) => Ok(()),
        None => Err("needs cmd=COMMAND, e.g. command:cmd=make -j4".into()),
    }
}

fn program(options: &Options) -> Program {
    Program::Shell(options.text("cmd").to_string())
}
