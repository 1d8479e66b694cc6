//! The `osadl` load: the OSADL QA Farm's load mix (RESEARCH.md 1.5): "about 1 Mbit/s network
//! load, 1 MByte/s I/O … 1 MByte/s memory allocation", in bursts at low average CPU.

use std::path::Path;
use std::sync::mpsc::Sender;

use vernier_model::{Description, Options};

use super::{complete_nothing, io, memory, net, Entry, Work};
use crate::work::need_dir;

const MEMORY_MB: u64 = 1;
const MEMORY_RATE: f64 = 1.0;
const IO_MB_PER_S: f64 = 1.0;
const NET_MBIT: f64 = 1.0;

pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "osadl",
            "the OSADL QA Farm's mix: 1 MB/s memory, 1 MB/s I/O, 1 Mbit/s network",
        ),
        complete_nothing,
        Work::Threads {
            start,
            writes_files: true,
        },
    )
}

fn start(_options: &Options, dir: Option<&Path>, errors: &Sender<String>) -> Result<(), String> {
    memory::spawn_memory(MEMORY_MB, MEMORY_RATE, errors)?;
    io::spawn_io(need_dir(dir)?, IO_MB_PER_S, errors)?;
    net::spawn_net(NET_MBIT, errors)
}
