//! How the shape of a harness moves the time of a short command it spawns: the same spawn and
//! wait of `true` (`std::process::Command`, as hyperfine and the `command` benchmark spawn),
//! timed from before the spawn to after the wait, in two shapes:
//!
//! - `alone N WORK_US`: one process does WORK_US microseconds of CPU work, then spawns and
//!   waits, N times (hyperfine's shape, whose own work between executions is small);
//! - `served N WORK_US`: a controller process does WORK_US of work, then asks a second process
//!   over a pipe, which spawns and waits and answers, N times (the shape of a served run:
//!   vernier's controller samples the monitors and stores the run, ~0.13 ms a run with
//!   `--monitor none` and ~0.6 ms with the default monitors, and its run process spawns).
//!
//! Prints the median spawn-to-reaped time in nanoseconds. `bench/spawner-placement.sh` runs
//! the shapes alternately and prints their ratios.
//!
//! Usage: spawner_placement alone|served RUNS WORK_US
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example is a program that prints what it measured

use std::io::{Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Keeps the CPU busy for `us` microseconds, as a harness's own work between runs does.
fn work(us: u64) {
    let until = Instant::now() + Duration::from_micros(us);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Spawns `true` and waits for it: nanoseconds from before the spawn to after the wait.
fn spawn_and_wait() -> Result<u64, String> {
    let mut command = Command::new("true");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let start = Instant::now();
    let mut child = command.spawn().map_err(|e| format!("spawn true: {e}"))?;
    child.wait().map_err(|e| format!("wait for true: {e}"))?;
    Ok(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX))
}

fn median(mut times: Vec<u64>) -> u64 {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or(0)
}

fn alone(runs: usize, work_us: u64) -> Result<u64, String> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        work(work_us);
        times.push(spawn_and_wait()?);
    }
    Ok(median(times))
}

/// The server of `served`: one spawn per byte read from standard input, its time written back
/// as 8 bytes; the median of its times is what `served` reports.
fn serve() -> Result<(), String> {
    let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
    let mut request = [0u8; 1];
    while input.read_exact(&mut request).is_ok() {
        let ns = spawn_and_wait()?;
        output
            .write_all(&ns.to_le_bytes())
            .and_then(|()| output.flush())
            .map_err(|e| format!("answer: {e}"))?;
    }
    Ok(())
}

fn served(runs: usize, work_us: u64) -> Result<u64, String> {
    let me = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
    let mut server = Command::new(me)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start the server: {e}"))?;
    let (Some(mut ask), Some(mut answers)) = (server.stdin.take(), server.stdout.take()) else {
        return Err("the server has no pipes".into());
    };
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        work(work_us);
        let mut answer = [0u8; 8];
        ask.write_all(b"r")
            .and_then(|()| ask.flush())
            .and_then(|()| answers.read_exact(&mut answer))
            .map_err(|e| format!("ask the server: {e}"))?;
        times.push(u64::from_le_bytes(answer));
    }
    drop(ask);
    server
        .wait()
        .map_err(|e| format!("wait for the server: {e}"))?;
    Ok(median(times))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: spawner_placement alone|served RUNS WORK_US";
    let result = match args.as_slice() {
        [mode] if mode == "serve" => serve().map(|()| None),
        [mode, runs, work_us] => match (runs.parse::<usize>(), work_us.parse::<u64>()) {
            (Ok(runs), Ok(work_us)) if runs > 0 => match mode.as_str() {
                "alone" => alone(runs, work_us).map(Some),
                "served" => served(runs, work_us).map(Some),
                _ => Err(usage.into()),
            },
            _ => Err(usage.into()),
        },
        _ => Err(usage.into()),
    };
    match result {
        Ok(Some(median_ns)) => {
            println!("{median_ns}");
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("spawner_placement: {message}");
            ExitCode::from(2)
        }
    }
}
