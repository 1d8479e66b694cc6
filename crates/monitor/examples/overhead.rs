//! The controller's cost of monitoring: CPU time of the sampler thread per second of run with
//! the default monitors at 1 s and 100 ms, the cost of a run's start and end samples, of one
//! sample of each monitor, and of the kernel's part of it: one read of each file.
//!
//! Usage: overhead [SECONDS]   (default 10 s per configuration; run as root for perf/slab)
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example is a program that prints what it measured

use std::process::Command;
use std::time::Instant;

use vernier_model::Describe;
use vernier_monitor::registry;
use vernier_monitor::sampler::thread_cpu_ns;
use vernier_monitor::{parse_monitor_list, MonitorSet, MonitorSpec, Reader, RunSampler};
use vernier_sys::Roots;

fn run(label: &str, specs: &[MonitorSpec], seconds: u64) -> Result<(), String> {
    // The measured run: a child that sleeps, so the machine is quiet.
    let mut child = Command::new("sleep")
        .arg(seconds.to_string())
        .spawn()
        .map_err(|e| format!("spawn sleep: {e}"))?;
    let t = Instant::now();
    let sampler =
        RunSampler::start(specs, &Roots::real(), child.id() as i32).map_err(|e| e.to_string())?;
    child.wait().map_err(|e| format!("wait: {e}"))?;
    let data = sampler.finish();
    let wall = t.elapsed().as_secs_f64();
    let cpu_s = data.sampler_cpu_ns as f64 / 1e9;
    println!(
        "{label:<28} {:>6.1} s  rounds {:>5}  sampler CPU {:>8.2} ms  = {:.4}% of one CPU  ({}, {} series)",
        wall,
        data.rounds,
        cpu_s * 1e3,
        100.0 * cpu_s / wall,
        data.sampler_priority,
        data.series.len()
    );
    for f in &data.failures {
        println!("    failure: {}: {}", f.monitor, f.message);
    }
    Ok(())
}

/// The cost that does not depend on the run's length: thread start, opening the perf
/// counters, the start and end samples, building the series. Most of it falls before the child
/// is released and after it has ended. The first run of a configuration builds and starts its
/// monitors; each later run keeps those that read files from the run before
/// ([`MonitorSet`]), as the engine does, so that what it pays is mostly the two samples.
/// These runs are short: `interrupts` leaves them out from the first on (its `min-run`) unless
/// `list` says `interrupts:min-run=0`, which gives the cost of a run of 10 ms or more.
fn per_run_cost(list: &str) -> Result<(), String> {
    const RUNS: u32 = 20;
    let specs = parse_monitor_list(list).map_err(|e| e.to_string())?;
    let roots = Roots::real();
    let (mut first_ns, mut later_ns) = (0i64, 0i64);
    for _ in 0..RUNS {
        let mut set = MonitorSet::new(&specs, &roots);
        for run in 0..2 {
            let mut child = Command::new("true")
                .spawn()
                .map_err(|e| format!("spawn true: {e}"))?;
            let sampler =
                RunSampler::start_set(set, child.id() as i32).map_err(|e| e.to_string())?;
            child.wait().map_err(|e| format!("wait: {e}"))?;
            let (data, kept, _) = sampler.finish_set();
            match run {
                0 => first_ns += data.sampler_cpu_ns,
                _ => later_ns += data.sampler_cpu_ns,
            }
            set = kept.ok_or("the monitor set was not given back")?;
        }
    }
    let mean_us = |ns: i64| ns as f64 / 1e3 / f64::from(RUNS);
    println!(
        "\nfixed cost per run ({list}, start + end sample, mean of {RUNS}): \
         {:.0} us CPU in a configuration's first run, {:.0} us in each later one",
        mean_us(first_ns),
        mean_us(later_ns)
    );
    Ok(())
}

/// The files the default monitors read at every sample, to tell the kernel's part of a
/// sample's cost (producing the text) from the monitor's (parsing it); /proc/schedstat and the
/// cpufreq files, which many guests lack, are left out.
const DEFAULT_FILES: [&str; 8] = [
    "stat",
    "meminfo",
    "vmstat",
    "pressure/cpu",
    "pressure/memory",
    "pressure/io",
    "interrupts",
    "softirqs",
];

/// The CPU time of one read of each of [`DEFAULT_FILES`], kept open as a monitor keeps it
/// ([`Reader`]): what the kernel takes to produce the file, whatever reads it.
fn per_read_cost() {
    const N: u32 = 500;
    let proc_root = Roots::real().proc_root;
    println!("\ncost of one read of each file the default monitors sample (thread CPU time, mean of {N}):");
    let mut total_us = 0.0;
    for name in DEFAULT_FILES {
        let path = proc_root.join(name);
        let mut reader = Reader::new(16 * 1024);
        if let Err(e) = reader.read(&path) {
            println!("  /proc/{name:<15} unreadable: {}", e.reason());
            continue;
        }
        let before = thread_cpu_ns();
        for _ in 0..N {
            // Readable a moment ago; a failure now could only make the figure low.
            let _ = reader.read(&path);
        }
        let cpu_us = (thread_cpu_ns() - before) as f64 / 1e3 / f64::from(N);
        total_us += cpu_us;
        println!("  /proc/{name:<15} {cpu_us:>8.1} us CPU");
    }
    println!("  all of them       {total_us:>8.1} us CPU (two samples a run)");
}

fn per_sample_cost() -> Result<(), String> {
    const N: u32 = 200;
    let roots = Roots::real();
    let pid = std::process::id() as i32;
    println!("\ncost of one sample (thread CPU time, mean of {N}):");
    for entry in registry().iter() {
        let name = &entry.description().name;
        let mut m = entry.build(&MonitorSpec::of(entry).options, &roots);
        if let Err(e) = m.start(pid) {
            println!("  {name:<11} unsupported: {}", e.reason());
            continue;
        }
        let mut out = Vec::with_capacity(512);
        let before = thread_cpu_ns();
        let t = Instant::now();
        for _ in 0..N {
            out.clear();
            m.sample(&mut out).map_err(|e| format!("{name}: {e}"))?;
        }
        let cpu_us = (thread_cpu_ns() - before) as f64 / 1e3 / f64::from(N);
        let wall_us = t.elapsed().as_secs_f64() * 1e6 / f64::from(N);
        let skipped: Vec<String> = m.unsupported().into_iter().map(|(k, _)| k).collect();
        println!(
            "  {:<11} {:>8.1} us CPU {:>8.1} us wall  {:>4} readings{}",
            name,
            cpu_us,
            wall_us,
            out.len(),
            if skipped.is_empty() {
                String::new()
            } else {
                format!("  (unsupported: {})", skipped.join(", "))
            }
        );
    }
    Ok(())
}

fn main() {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let configs = [
        ("default @ 1 s", "default"),
        ("default @ 100 ms", "default:interval=0.1"),
        ("default+slab @ 1 s", "default,slab"),
        (
            "default+slab @ 100 ms",
            "default:interval=0.1,slab:interval=0.1",
        ),
    ];
    for (label, text) in configs {
        let result = parse_monitor_list(text)
            .map_err(|e| e.to_string())
            .and_then(|specs| run(label, &specs, seconds));
        if let Err(e) = result {
            eprintln!("{label}: {e}");
            std::process::exit(2);
        }
    }
    if let Err(e) = per_run_cost("default")
        .and_then(|()| per_run_cost("default,interrupts:min-run=0"))
        .and_then(|()| per_sample_cost())
    {
        eprintln!("{e}");
        std::process::exit(2);
    }
    per_read_cost();
}
