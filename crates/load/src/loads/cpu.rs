//! The `cpu` load: busy loops at normal priority, one thread pinned to each CPU, busy for
//! `duty` percent of every [`CPU_PERIOD_MS`].

use std::sync::mpsc::{channel, Sender};

use vernier_model::cpulist::{format_cpu_list, parse_cpu_list};
use vernier_model::options::ALL_CPUS;
use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
use vernier_sys::clock::monotonic_ns;

use super::{Entry, Work};
use crate::work::{sleep_until, spawn};

/// Length of one busy-and-sleep period.
pub const CPU_PERIOD_MS: u64 = 100;

pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new("cpu", "busy loops at normal priority, one per CPU").with_options(vec![
            OptionSpec::new(
                "cpus",
                OptionKind::CpuList,
                OptionDefault::Value(OptionValue::Text(ALL_CPUS.into())),
            )
            .help("the CPUs, each online"),
            OptionSpec::new(
                "duty",
                OptionKind::UInt { min: 1, max: 100 },
                OptionDefault::Value(OptionValue::UInt(100)),
            )
            .unit("%")
            .help("busy share of every 100 ms period"),
        ]),
        complete,
        Work::Threads {
            start,
            writes_files: false,
        },
    )
}

/// `all` becomes the online CPUs; each CPU named must be online.
fn complete(options: &mut Options, online: &[usize]) -> Result<(), String> {
    let cpus = match options.text("cpus") {
        ALL_CPUS => online.to_vec(),
        list => parse_cpu_list(list)?,
    };
    if let Some(cpu) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(format!(
            "CPU {cpu} is not online; online CPUs: {}",
            format_cpu_list(online)
        ));
    }
    options
        .0
        .insert("cpus".into(), OptionValue::Text(format_cpu_list(&cpus)));
    Ok(())
}

fn start(
    options: &Options,
    _dir: Option<&std::path::Path>,
    errors: &Sender<String>,
) -> Result<(), String> {
    let duty = options.uint("duty");
    for cpu in parse_cpu_list(options.text("cpus"))? {
        spawn_cpu(cpu, duty, errors)?;
    }
    Ok(())
}

fn spawn_cpu(cpu: usize, duty: u64, errors: &Sender<String>) -> Result<(), String> {
    let (ready_tx, ready_rx) = channel();
    spawn(&format!("load cpu {cpu}"), errors, move || {
        if let Err(e) = vernier_sys::affinity::pin_current_thread(&[cpu]) {
            let _ = ready_tx.send(Err(format!("cannot pin a thread to CPU {cpu}: {e}")));
            return String::new();
        }
        let _ = ready_tx.send(Ok(()));
        let period = CPU_PERIOD_MS * 1_000_000;
        let busy = period * duty / 100;
        let mut start = monotonic_ns();
        let mut x = 1u64;
        loop {
            while monotonic_ns() < start + busy {
                for _ in 0..1000 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
            start += period;
            if busy < period {
                sleep_until(start);
            }
            // After a stall (the machine suspended, the thread preempted for long), start a
            // fresh period instead of catching up.
            start = start.max(monotonic_ns().saturating_sub(period));
        }
    })?;
    ready_rx
        .recv()
        .unwrap_or_else(|_| Err("the CPU load thread ended at once".into()))
}
