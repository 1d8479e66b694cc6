//! The `vernier` binary: parses the command line, runs one subcommand, prints its result.
//! Exit status: 0 success, 2 usage or runtime error, 128 + the signal when a session was
//! interrupted (130 Ctrl-C, 129 SIGHUP, 143 SIGTERM), 141 when the reader of standard output
//! went away (the status of a process killed by SIGPIPE, which is what `yes | head -1` reports
//! for `yes`).
#![allow(clippy::print_stderr)] // the binary reports on stderr; stdout goes through out.rs

mod cli;
mod cmd;
mod db;
mod out;
mod progress;
mod session;

use std::process::ExitCode;

/// 128 + SIGPIPE (13).
const EXIT_CLOSED_PIPE: u8 = 141;

/// The default of every option of every built-in benchmark, which labels leave out
/// (`vernier_model::ids::set_label_defaults`).
fn label_defaults() -> std::collections::BTreeMap<String, vernier_model::Options> {
    use vernier_model::options::OptionDefault;
    vernier_bench::builtins()
        .iter()
        .map(|b| {
            let info = b.info();
            let defaults = info
                .options()
                .iter()
                .filter_map(|o| match &o.default {
                    OptionDefault::Value(v) => Some((o.name.to_string(), v.clone())),
                    _ => None,
                })
                .collect();
            (info.name().to_string(), vernier_model::Options(defaults))
        })
        .collect()
}

fn main() -> ExitCode {
    // A run's process names no configuration by its label: it needs no label defaults.
    if let Some(serve) = run_process() {
        return cmd::child::child(serve);
    }
    vernier_model::ids::set_label_defaults(label_defaults());
    let cli = match cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = cmd::dispatch(cli).and_then(|code| {
        out::flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        Err(error) => {
            let closed = error
                .chain()
                .filter_map(|e| e.downcast_ref::<out::StdoutError>())
                .any(out::StdoutError::is_closed_pipe);
            if closed {
                return ExitCode::from(EXIT_CLOSED_PIPE);
            }
            eprintln!("error: {}", out::error_line(&error));
            ExitCode::from(2)
        }
    }
}

/// Whether this process is a run's (`vernier __child`, `--serve` or not: `Some(serve)`), as the
/// controller starts it with exactly these words for every run of most benchmarks. It goes
/// straight to its work instead of building the parser of the whole command line first (every
/// subcommand, and the help that lists every plugin) and every benchmark's description (the
/// label defaults). Anything else, `__child --help` too, is clap's.
fn run_process() -> Option<bool> {
    let mut words = std::env::args_os().skip(1);
    if words.next()? != "__child" {
        return None;
    }
    match (words.next(), words.next()) {
        (None, _) => Some(false),
        (Some(flag), None) if flag == "--serve" => Some(true),
        _ => None,
    }
}

/// Help and version go to standard output as clap writes them; a usage error is one line (clap's
/// own first line, with its tip if it has one) and status 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    // clap's message without the usage and the pointer to --help: the message, the lines that
    // complete it (the missing arguments, the possible values) and its tip.
    let text = e.render().to_string();
    let mut parts = Vec::new();
    let mut tips = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        match line.strip_prefix("tip: ") {
            Some(tip) => tips.push(tip),
            None => parts.push(line),
        }
    }
    let mut line = parts.join(" ");
    if line.is_empty() {
        line = "error: invalid arguments".to_string();
    }
    if !tips.is_empty() {
        line.push_str(&format!(" ({})", tips.join("; ")));
    }
    eprintln!("{}", out::printable(&line));
    ExitCode::from(2)
}
