//! The `memory` load: `rate` bursts per second, each allocating `mb` MiB, writing every byte
//! and copying it into a second allocation, then freeing both.

use std::path::Path;
use std::sync::mpsc::Sender;

use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
use vernier_sys::clock::monotonic_ns;

use super::{complete_nothing, Entry, Work};
use crate::work::{sleep_until, spawn, MIB};

pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new("memory", "allocation and copy bursts").with_options(vec![
            OptionSpec::new(
                "mb",
                OptionKind::UInt { min: 1, max: 65536 },
                OptionDefault::Value(OptionValue::UInt(32)),
            )
            .unit("MiB")
            .help("allocated, written and copied per burst"),
            OptionSpec::new(
                "rate",
                OptionKind::Float {
                    min: 0.01,
                    max: 1000.0,
                },
                OptionDefault::Value(OptionValue::Float(2.0)),
            )
            .unit("per second")
            .help("bursts"),
        ]),
        complete_nothing,
        Work::Threads {
            start,
            writes_files: false,
        },
    )
}

fn start(options: &Options, _dir: Option<&Path>, errors: &Sender<String>) -> Result<(), String> {
    spawn_memory(options.uint("mb"), options.float("rate"), errors)
}

/// Starts the thread of `rate` bursts of `mb` MiB per second (also the `osadl` mix's memory).
pub(super) fn spawn_memory(mb: u64, rate: f64, errors: &Sender<String>) -> Result<(), String> {
    let bytes = usize::try_from(mb).map_err(|_| "mb is too large")? * MIB;
    let period = (1e9 / rate) as u64;
    spawn("load memory", errors, move || {
        let mut next = monotonic_ns();
        let mut round = 0u8;
        loop {
            let mut source = Vec::<u8>::new();
            if source.try_reserve_exact(bytes).is_err() {
                return format!("cannot allocate {mb} MiB");
            }
            source.resize(bytes, round);
            let copy = source.clone();
            std::hint::black_box((&source, &copy));
            drop((source, copy));
            round = round.wrapping_add(1);
            next += period;
            sleep_until(next);
            next = next.max(monotonic_ns().saturating_sub(period));
        }
    })?;
    Ok(())
}
