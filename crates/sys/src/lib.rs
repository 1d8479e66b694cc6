//! Everything vernier knows about Linux: readers of /proc and /sys that take the root directory
//! as a parameter (so tests run on fixture trees), CPU affinity, scheduling policy, clocks,
//! resource usage, the process groups vernier starts ([`process::Group`]) and the pipe
//! ping-pong that measures a wake-up ([`pingpong`]).
//! A missing interface is reported as [`SysError::Unsupported`], never as a panic.

pub mod affinity;
pub mod cache;
pub mod clock;
pub mod cpulist;
pub mod environment;
mod error;
pub mod fd;
pub mod kernel;
pub mod limits;
pub mod loadavg;
pub mod meminfo;
pub mod memlock;
pub mod pingpong;
pub mod pmqos;
pub mod process;
pub mod procstat;
mod reads;
pub mod roots;
pub mod sched;
pub mod tracefs;

pub use error::SysError;
pub use limits::{LimitError, MachineLimits, PrivilegeError};
pub use reads::Reads;
pub use roots::Roots;

use std::path::Path;

/// Reads a whole file, mapping "not found" to [`SysError::Unsupported`].
pub fn read_file(path: &Path) -> Result<String, SysError> {
    std::fs::File::open(path)
        .and_then(|mut file| read_open_file(&mut file))
        .map_err(|source| SysError::from_io(path, source))
}

/// The rest of `file` as text (an error of kind `InvalidData` when it is not UTF-8, as
/// `read_to_string` gives). Read in pages without asking the file its size first: std's
/// `read_to_string` takes a size hint with an fstat (and for an open `File`, an lseek too), two
/// system calls that tell nothing for /proc and /sys files (size 0 or 4096), and a start-up
/// reads some 250 of them.
pub(crate) fn read_open_file(file: &mut std::fs::File) -> std::io::Result<String> {
    read_until(file, false)
}

/// [`read_open_file`] of a file that gives all it has to one read(2) when it fits, as a
/// tunable of /proc/sys does (fs/proc/proc_sysctl.c, `proc_sys_call_handler`: the tunable's
/// handler fills the buffer once per read): a read that does not fill the buffer was the last,
/// without the read of the end, which formats the value again.
pub(crate) fn read_open_tunable(file: &mut std::fs::File) -> std::io::Result<String> {
    read_until(file, true)
}

fn read_until(file: &mut std::fs::File, short_is_end: bool) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let mut page = [0u8; 4096];
    loop {
        match file.read(&mut page) {
            Ok(0) => break,
            Ok(n) if short_is_end && n < page.len() => {
                bytes.extend_from_slice(&page[..n]);
                break;
            }
            Ok(n) => bytes.extend_from_slice(&page[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Writes `bytes` to `path` whole or not at all: into a file beside it, renamed over it
/// (rename(2) is atomic), creating the directory. For caches that several processes may
/// read while one writes.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
