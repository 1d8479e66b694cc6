//! `vernier completions SHELL` and `vernier man [COMMAND]`, generated from the one clap
//! definition in `cli.rs`, so they never disagree with `--help`.

use std::process::ExitCode;

use anyhow::{bail, Result};

use crate::out;

/// The words a shell completes for specs and plugin lists, from the registries: every built-in
/// benchmark and the executables in the user's benchmark directory, each also as
/// `NAME:OPTION=` for each of its options (the built-ins'), and the names of the suites,
/// monitors, setup plugins and loads. The script holds them as they are when it is made.
struct Words {
    specs: Vec<String>,
    suites: Vec<String>,
    monitors: Vec<String>,
    setups: Vec<String>,
    loads: Vec<String>,
}

fn words() -> Words {
    let mut specs = Vec::new();
    for b in vernier_bench::builtins().listed() {
        let info = b.info();
        specs.push(info.name().to_string());
        for o in info.options() {
            specs.push(format!("{}:{}=", info.name(), o.name));
        }
    }
    if let Some(dir) = vernier_app::config::benchmark_dir() {
        for name in vernier_bench::user::names(&dir) {
            if !specs.contains(&name) {
                specs.push(name);
            }
        }
    }
    let mut suites: Vec<String> = vernier_engine::suite::builtin_suites()
        .into_iter()
        .map(|s| s.name)
        .collect();
    // The user's suites: NAME for $XDG_CONFIG_HOME/vernier/suites/NAME.toml.
    if let Some(dir) = vernier_app::config::suite_dir() {
        let mut mine: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let path = e.path();
                (path.extension()? == "toml")
                    .then(|| path.file_stem()?.to_str().map(str::to_string))
                    .flatten()
            })
            .filter(|name| !suites.contains(name))
            .collect();
        mine.sort();
        suites.extend(mine);
    }
    let names = |v: Vec<&str>| v.into_iter().map(str::to_string).collect::<Vec<_>>();
    let mut monitors = names(vernier_monitor::registry().names());
    monitors.extend(["default", "all", "none"].map(String::from));
    Words {
        specs,
        suites,
        monitors,
        setups: names(vernier_setup::registry().names()),
        loads: names(vernier_load::registry().names()),
    }
}

/// `command` with the words as the possible values of its specs, `--suite`, `--monitor`,
/// `--setup` and `--load`, which the shells' scripts complete. Only the script's copy of the
/// command gets them: parsing accepts any spec, as before.
fn with_words(command: clap::Command, words: &Words) -> clap::Command {
    let values = |list: &[String]| {
        clap::builder::PossibleValuesParser::new(
            list.iter()
                .map(|s| clap::builder::PossibleValue::new(s.clone())),
        )
    };
    let mut command = command;
    let ids: Vec<String> = command
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        let list = match id.as_str() {
            "specs" => &words.specs,
            "suite" => &words.suites,
            "monitors" => &words.monitors,
            "setup" => &words.setups,
            "loads" => &words.loads,
            _ => continue,
        };
        let parser = values(list);
        command = command.mut_arg(id, |a| a.value_parser(parser));
    }
    command.mut_subcommands(|sub| with_words(sub, words))
}

pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut command = with_words(crate::cli::command(), &words());
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
