//! The `io` load: every second, `mb_per_s` MiB written to a file and fsync(2)ed, then the file
//! truncated, in a fresh directory under `dir` (default: the temporary directory) removed
//! afterwards.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::Sender;

use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
use vernier_sys::clock::monotonic_ns;

use super::{complete_nothing, Entry, Work};
use crate::work::{need_dir, sleep_until, spawn, MIB};

pub(super) fn entry() -> Entry {
    Entry::new(
        Description::new(
            "io",
            "file writes with fsync bursts in a temporary directory",
        )
        .with_options(vec![
            OptionSpec::new(
                "mb_per_s",
                OptionKind::Float {
                    min: 0.01,
                    max: 100_000.0,
                },
                OptionDefault::Value(OptionValue::Float(10.0)),
            )
            .unit("MiB/s")
            .help("written and fsynced every second"),
            OptionSpec::new(
                "dir",
                OptionKind::Text,
                OptionDefault::Unset("$TMPDIR or /tmp".into()),
            )
            .help("directory to write in, on the file system to load"),
        ]),
        complete_nothing,
        Work::Threads {
            start,
            writes_files: true,
        },
    )
}

fn start(options: &Options, dir: Option<&Path>, errors: &Sender<String>) -> Result<(), String> {
    spawn_io(need_dir(dir)?, options.float("mb_per_s"), errors)
}

/// Starts the thread that writes `mb_per_s` in `dir` (also the `osadl` mix's file I/O).
pub(super) fn spawn_io(dir: &Path, mb_per_s: f64, errors: &Sender<String>) -> Result<(), String> {
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
