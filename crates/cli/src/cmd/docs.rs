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

/// Examples of the top page, in the order of a first session: run, look, compare, publish.
const EXAMPLES: &str = "\
vernier run --suite scheduler --tag kernel=A     # measure, tagged, on kernel A
vernier run --suite scheduler --tag kernel=B     # and again after booting kernel B
vernier sessions                                 # what is stored
vernier show latest                              # medians, intervals, warnings of a session
vernier compare kernel=A kernel=B                # ratio, interval and verdict per configuration
vernier report kernel=A kernel=B -o site         # the same as a website
vernier export kernel=A kernel=B -o runs.json    # every run, for another database or tool
vernier man run > vernier-run.1                  # the page of one command (vernier-run(1))";

/// The exit statuses of every command (README's \"Exit status\").
const EXIT_STATUS: &str = "\
0    success
1    compare --fail-on-regression (and history's) found a configuration slower
2    bad input or a runtime error: one line on standard error
130  interrupted by SIGINT (129 after SIGHUP, 143 after SIGTERM); the system is restored
141  standard output closed by its reader (vernier sessions | head -1), quietly";

/// A section of preformatted lines in roff: each line as it is, escaped so that no line is
/// read as a request (a leading `.` or `'`) and no backslash as an escape.
fn roff_section(title: &str, body: &str) -> String {
    let mut out = format!(".SH \"{title}\"\n.nf\n");
    for line in body.lines() {
        let line = line.replace('\\', "\\e");
        if line.starts_with('.') || line.starts_with('\'') {
            out.push_str("\\&");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(".fi\n");
    out
}

/// A command's page as clap_mangen renders it, with the extra help (`after_long_help`, such as
/// compare's columns) under NOTES instead of clap_mangen's EXTRA, and EXAMPLES (of the top
/// page) and EXIT STATUS, the sections of man-pages(7) that a reader looks for.
fn page(command: clap::Command, top: bool) -> Result<Vec<u8>> {
    let man = clap_mangen::Man::new(command.clone());
    let mut roff = Vec::new();
    man.render_title(&mut roff)?;
    man.render_name_section(&mut roff)?;
    man.render_synopsis_section(&mut roff)?;
    man.render_description_section(&mut roff)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut roff)?;
    }
    if command.get_subcommands().any(|c| !c.is_hide_set()) {
        man.render_subcommands_section(&mut roff)?;
    }
    if let Some(notes) = command.get_after_long_help() {
        roff.extend(roff_section("NOTES", &notes.to_string()).bytes());
    }
    if top {
        roff.extend(roff_section("EXAMPLES", EXAMPLES).bytes());
    }
    roff.extend(roff_section("EXIT STATUS", EXIT_STATUS).bytes());
    man.render_version_section(&mut roff)?;
    Ok(roff)
}

pub fn man(name: Option<&str>) -> Result<ExitCode> {
    let mut top = crate::cli::command();
    // Builds the help of every subcommand (the global --db among them) as `--help` shows it.
    top.build();
    // The top page refers to a command's page as vernier-run(1): that name is taken too.
    let name = name.map(|n| n.strip_prefix("vernier-").unwrap_or(n));
    let page = match name {
        None => page(top, true)?,
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
                Some(sub) => page(sub.clone().version(env!("CARGO_PKG_VERSION")), false)?,
                None => bail!(
                    "no command '{}'; commands: {}",
                    out::printable(name),
                    visible.join(", ")
                ),
            }
        }
    };
    out::write_bytes(&page)?;
    Ok(ExitCode::SUCCESS)
}
