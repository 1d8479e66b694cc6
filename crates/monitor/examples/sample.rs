//! Runs a command under monitors and prints what they recorded as JSON.
//!
//! Usage: sample MONITORS COMMAND [ARGS...]   e.g. sample default,slab hackbench -l 200
//! The command is held on a pipe until the monitors (perf counters included) are ready.
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example is a program that prints what it measured

use std::io::Write;
use std::process::{Command, Stdio};

use vernier_monitor::{parse_monitor_list, RunSampler};
use vernier_sys::Roots;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [monitors, command, rest @ ..] = &args[..] else {
        eprintln!("usage: sample MONITORS COMMAND [ARGS...]");
        std::process::exit(2);
    };
    let specs = parse_monitor_list(monitors).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    // `sh -c 'read _; exec "$@"'` waits for a line, then becomes the command.
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg("read _; exec \"$@\"")
        .arg("sh")
        .arg(command)
        .args(rest)
        .stdin(Stdio::piped())
        // stdout carries the JSON; the command's output goes to stderr.
        .stdout(std::io::stderr())
        .spawn()
        .unwrap_or_else(|e| {
            eprintln!("spawn: {e}");
            std::process::exit(2);
        });
    let sampler =
        RunSampler::start(&specs, &Roots::real(), child.id() as i32).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2);
        });
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"\n");
    }
    let status = child.wait();
    let data = sampler.finish();
    eprintln!("command: {status:?}");
    match serde_json::to_string_pretty(&data) {
        Ok(json) => println!("{json}"),
        Err(e) => eprintln!("{e}"),
    }
}
