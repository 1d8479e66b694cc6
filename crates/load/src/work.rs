//! What the in-process loads do, each in threads of the supervisor: `cpu`, `memory`, `io`,
//! `net` and their mix `osadl`. Setup that can fail (pinning, the file, the sockets) happens
//! before [`start`] returns, so that a load that cannot run fails before anything is measured;
//! an error later is sent on the returned channel and ends the supervisor with it.
//!
//! The loads pace themselves against CLOCK_MONOTONIC: each period's work starts at a fixed
//! time, so a slow burst shortens the following sleep instead of shifting every later burst.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use vernier_sys::clock::monotonic_ns;

use crate::spec::{Load, CPU_PERIOD_MS};

const MIB: usize = 1 << 20;

/// OSADL's mix (RESEARCH.md 1.5): "about 1 Mbit/s network load, 1 MByte/s I/O … 1 MByte/s
/// memory allocation".
const OSADL_MEMORY: Load = Load::Memory { mb: 1, rate: 1.0 };
const OSADL_IO_MB_PER_S: f64 = 1.0;
const OSADL_NET_MBIT: f64 = 1.0;

/// Starts the threads of an in-process load; `dir` is the directory a file load writes in.
/// Returns the channel on which a thread reports the error that ended it.
pub(crate) fn start(load: &Load, dir: Option<&Path>) -> Result<Receiver<String>, String> {
    let (errors, received) = channel();
    match load {
        Load::Cpu { cpus, duty } => {
            for &cpu in cpus {
                spawn_cpu(cpu, *duty, &errors)?;
            }
        }
        Load::Memory { mb, rate } => spawn_memory(*mb, *rate, &errors)?,
        Load::Io { mb_per_s, .. } => spawn_io(need_dir(dir)?, *mb_per_s, &errors)?,
        Load::Net { mbit } => spawn_net(*mbit, &errors)?,
        Load::Osadl => {
            if let Load::Memory { mb, rate } = OSADL_MEMORY {
                spawn_memory(mb, rate, &errors)?;
            }
            spawn_io(need_dir(dir)?, OSADL_IO_MB_PER_S, &errors)?;
            spawn_net(OSADL_NET_MBIT, &errors)?;
        }
        Load::Hackbench { .. } | Load::Command { .. } => {
            return Err(format!("load '{}' is not in-process", load.name()))
        }
    }
    Ok(received)
}

fn need_dir(dir: Option<&Path>) -> Result<&Path, String> {
    dir.ok_or_else(|| "no directory to write in was given".to_string())
}

fn spawn(
    name: &str,
    errors: &Sender<String>,
    work: impl FnOnce() -> String + Send + 'static,
) -> Result<(), String> {
    let errors = errors.clone();
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let _ = errors.send(work());
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start a thread: {e}"))
}

/// Sleeps until CLOCK_MONOTONIC reaches `deadline_ns`.
fn sleep_until(deadline_ns: u64) {
    let now = monotonic_ns();
    if deadline_ns > now {
        std::thread::sleep(Duration::from_nanos(deadline_ns - now));
    }
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

fn spawn_memory(mb: u64, rate: f64, errors: &Sender<String>) -> Result<(), String> {
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

fn spawn_io(dir: &Path, mb_per_s: f64, errors: &Sender<String>) -> Result<(), String> {
    let path = dir.join(format!("io-{}.dat", monotonic_ns()));
    let mut file = File::create(&path)
        .map_err(|e| format!("cannot create a file in {}: {e}", dir.display()))?;
    let bytes = (mb_per_s * MIB as f64) as usize;
    spawn("load io", errors, move || {
        let chunk = vec![0x5au8; MIB.min(bytes.max(1))];
        let mut next = monotonic_ns();
        loop {
            let mut left = bytes;
            while left > 0 {
                let n = left.min(chunk.len());
                if let Err(e) = file.write_all(&chunk[..n]) {
                    return format!("cannot write {}: {e}", path.display());
                }
                left -= n;
            }
            if let Err(e) = file.sync_all() {
                return format!("cannot fsync {}: {e}", path.display());
            }
            if let Err(e) = file.set_len(0).and_then(|_| file.sync_all()) {
                return format!("cannot truncate {}: {e}", path.display());
            }
            if let Err(e) = std::io::Seek::rewind(&mut file) {
                return format!("cannot rewind {}: {e}", path.display());
            }
            next += 1_000_000_000;
            sleep_until(next);
            next = next.max(monotonic_ns().saturating_sub(1_000_000_000));
        }
    })?;
    Ok(())
}

/// Bursts every 100 ms: a tenth of a second's bytes.
const NET_PERIOD_NS: u64 = 100_000_000;

fn spawn_net(mbit: f64, errors: &Sender<String>) -> Result<(), String> {
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
