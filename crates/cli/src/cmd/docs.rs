//! `vernier completions SHELL` and `vernier man [COMMAND]`, generated from the one clap
//! definition in `cli.rs`, so they never disagree with `--help`.

use std::process::ExitCode;

use anyhow::{bail, Result};

use crate::out;

pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut command = crate::cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "vernier", &mut script);
    out::write_bytes(&script)?;
    Ok(ExitCode::SUCCESS)
}

pub fn man(name: Option<&str>) -> Result<ExitCode> {
    let mut top = crate::cli::command();
    // Builds the help of every subcommand (the global --db among them) as `--help` shows it.
    top.build();
    let page = match name {
        None => top,
        Some(name) => {
            let visible: Vec<&str> = top
                .get_subcommands()
                .filter(|c| !c.is_hide_set())
                .map(|c| c.get_name())
                .collect();
            match top
                .get_subcommands()
                .find(|c| c.get_name() == name && !c.is_hide_set())
            {
                // Built, it is titled `vernier-run(1)`, the name man and git use for the page of
                // a command, and its synopsis reads `vernier run`.
                Some(sub) => sub.clone().version(env!("CARGO_PKG_VERSION")),
                None => bail!(
                    "no command '{}'; commands: {}",
                    out::printable(name),
                    visible.join(", ")
                ),
            }
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff)?;
    out::write_bytes(&roff)?;
    Ok(ExitCode::SUCCESS)
}
