//! The `net` load: every 100 ms, a tenth of `mbit` megabits sent over one TCP connection on
//! 127.0.0.1 and read on the other side.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::mpsc::Sender;

use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
use vernier_sys::clock::monotonic_ns;

use super::{complete_nothing, Entry, Work};
use crate::work::{sleep_until, spawn, MIB};

pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new("net", "TCP bursts over 127.0.0.1").with_options(vec![OptionSpec::new(
            "mbit",
            OptionKind::Float {
                min: 0.01,
                max: 100_000.0,
            },
            OptionDefault::Value(OptionValue::Float(100.0)),
        )
        .unit("Mbit/s")
        .help("sent over TCP on 127.0.0.1")]),
        complete_nothing,
        Work::Threads {
            start,
            writes_files: false,
        },
    )
}

fn start(options: &Options, _dir: Option<&Path>, errors: &Sender<String>) -> Result<(), String> {
    spawn_net(options.float("mbit"), errors)
}

/// Bursts every 100 ms: a tenth of a second's bytes.
const NET_PERIOD_NS: u64 = 100_000_000;

/// Starts the threads that send and receive `mbit` per second (also the `osadl` mix's
/// network).
pub(super) fn spawn_net(mbit: f64, errors: &Sender<String>) -> Result<(), String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
    let address = listener
        .local_addr()
        .map_err(|e| format!("cannot read the listening address: {e}"))?;
    let mut sender =
        TcpStream::connect(address).map_err(|e| format!("cannot connect to {address}: {e}"))?;
    let (mut receiver, _) = listener
        .accept()
        .map_err(|e| format!("cannot accept on {address}: {e}"))?;
    spawn("load net receive", errors, move || {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match receiver.read(&mut buffer) {
                Ok(0) => return "the loopback connection closed".into(),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return format!("cannot read from the loopback connection: {e}"),
            }
        }
    })?;
    let burst = ((mbit * 1e6 / 8.0) * (NET_PERIOD_NS as f64 / 1e9)).max(1.0) as usize;
    spawn("load net send", errors, move || {
        let data = vec![0xa5u8; burst.min(MIB)];
        let mut next = monotonic_ns();
        loop {
            let mut left = burst;
            while left > 0 {
                let n = left.min(data.len());
                if let Err(e) = sender.write_all(&data[..n]) {
                    return format!("cannot write to the loopback connection: {e}");
                }
                left -= n;
            }
            next += NET_PERIOD_NS;
            sleep_until(next);
            next = next.max(monotonic_ns().saturating_sub(NET_PERIOD_NS));
        }
    })?;
    Ok(())
}
