//! The `vernier` binary: parses the command line, runs one subcommand, prints its result.
//! Exit status: 0 success, 2 usage or runtime error, 130 interrupted by Ctrl-C.

mod cli;
mod cmd;
mod db;
mod progress;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cmd::dispatch(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
