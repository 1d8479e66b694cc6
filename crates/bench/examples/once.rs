//! Runs one built-in benchmark once in this process and prints what it measured, for checking
//! a benchmark against its reference tool by hand:
//!
//! `cargo run --release -p vernier-bench --example once -- hackbench groups=10 ipc=pipe`
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example is a program that prints what it measured

use std::process::ExitCode;

use vernier_bench::{builtin, resolve_options, RunContext};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((name, rest)) = args.split_first() else {
        eprintln!("usage: once <benchmark> [option=value ...]");
        return ExitCode::from(2);
    };
    let Some(bench) = builtin(name) else {
        eprintln!("unknown benchmark '{name}'");
        return ExitCode::from(2);
    };
    let mut overrides = Vec::new();
    for arg in rest {
        match arg.split_once('=') {
            Some(pair) => overrides.push(pair),
            None => {
                eprintln!("expected option=value, got '{arg}'");
                return ExitCode::from(2);
            }
        }
    }
    let result = resolve_options(&bench.info(), &overrides)
        .and_then(|options| bench.run(&options, &RunContext::default()));
    match result {
        Ok(m) => {
            for (metric, value) in &m.values {
                println!("{metric} {value}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
