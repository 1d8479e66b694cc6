//! Swap areas: /proc/swaps (proc(5)) and swapon(2)/swapoff(2).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vernier_sys::read_file;

use crate::SetupError;

/// swapon(2): use the priority in the low 15 bits of the flags (<linux/swap.h>).
const SWAP_FLAG_PREFER: libc::c_int = 0x8000;
const SWAP_FLAG_PRIO_MASK: libc::c_int = 0x7fff;

/// One active swap area, a line of /proc/swaps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapArea {
    pub path: PathBuf,
    /// `file` or `partition`.
    pub kind: String,
    pub size_kib: u64,
    pub used_kib: u64,
    /// Kernel-assigned areas have negative priorities; explicit ones are 0..=32767.
    pub priority: i32,
}

/// Parses /proc/swaps. The kernel escapes space, tab, newline and backslash in the path as
/// octal `\ooo` (seq_file_path in mm/swapfile.c), which is undone here.
pub fn parse_proc_swaps(text: &str) -> Result<Vec<SwapArea>, String> {
    let mut areas = Vec::new();
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 {
            return Err(format!("short line '{line}'"));
        }
        let num = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| format!("bad number '{s}' in '{line}'"))
        };
        areas.push(SwapArea {
            path: PathBuf::from(unescape_octal(f[0])),
            kind: f[1].to_string(),
            size_kib: num(f[2])?.max(0) as u64,
            used_kib: num(f[3])?.max(0) as u64,
            priority: num(f[4])? as i32,
        });
    }
    Ok(areas)
}

fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads the active swap areas from `swaps_path` (normally /proc/swaps).
pub(crate) fn read_swaps(swaps_path: &Path) -> Result<Vec<SwapArea>, SetupError> {
    let text = read_file(swaps_path)?;
    parse_proc_swaps(&text)
        .map_err(|e| SetupError::Sys(vernier_sys::SysError::parse(swaps_path, e)))
}

fn c_path(path: &Path) -> Result<CString, SetupError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SetupError::Apply {
        plugin: "swap-reset".into(),
        detail: format!("{}: path contains a NUL byte", path.display()),
    })
}

pub(crate) fn swapoff(path: &Path) -> Result<(), SetupError> {
    let c = c_path(path)?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    if unsafe { libc::swapoff(c.as_ptr()) } != 0 {
        return Err(SetupError::last_os("swapoff"));
    }
    Ok(())
}

/// Activates `path` with `priority`. Only 0..=32767 can be requested (swapon(2)); a negative,
/// kernel-assigned priority is requested by omitting SWAP_FLAG_PREFER, and the kernel then
/// assigns the next free negative value, which can differ from the original number while
/// keeping the same order among the automatically prioritized areas.
pub(crate) fn swapon(path: &Path, priority: i32) -> Result<(), SetupError> {
    let c = c_path(path)?;
    let flags = if priority >= 0 {
        SWAP_FLAG_PREFER | (priority & SWAP_FLAG_PRIO_MASK)
    } else {
        0
    };
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    if unsafe { libc::swapon(c.as_ptr(), flags) } != 0 {
        return Err(SetupError::last_os("swapon"));
    }
    Ok(())
}

/// swapoff every area in `areas`, then swapon each one that went off, with its original
/// priority. Moving swapped-out pages back into memory empties the areas, so every run starts
/// without stale swap. A failed swapon does not stop the others; all failures are reported.
pub(crate) fn reset_areas(areas: &[SwapArea]) -> Result<(), SetupError> {
    let mut failures = Vec::new();
    let mut off = Vec::new();
    for area in areas {
        match swapoff(&area.path) {
            Ok(()) => off.push(area),
            Err(e) => failures.push(format!("swapoff {}: {e}", area.path.display())),
        }
    }
    for area in off {
        if let Err(e) = swapon(&area.path, area.priority) {
            failures.push(format!("swapon {}: {e}", area.path.display()));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(SetupError::Swap { failures })
    }
}

/// Switches on every area of `areas` that is not active; used by restore when a reset was
/// interrupted between swapoff and swapon. An area that is already active makes swapon(2) fail
/// with EBUSY, which counts as success, so this does not depend on reading /proc/swaps.
pub(crate) fn ensure_active(areas: &[SwapArea]) -> Result<(), SetupError> {
    let mut failures = Vec::new();
    for area in areas {
        match swapon(&area.path, area.priority) {
            Ok(()) => {}
            Err(SetupError::Syscall { source, .. })
                if source.raw_os_error() == Some(libc::EBUSY) => {}
            Err(e) => failures.push(format!("swapon {}: {e}", area.path.display())),
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(SetupError::Swap { failures })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_swaps_with_escapes() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /dev/vdb                                partition\t1048572\t\t0\t\t-2\n\
                    /tmp/my\\040swap                          file\t\t65532\t\t12\t\t7\n";
        let areas = parse_proc_swaps(text).unwrap();
        assert_eq!(areas.len(), 2);
        assert_eq!(areas[0].path, PathBuf::from("/dev/vdb"));
        assert_eq!(areas[0].priority, -2);
        assert_eq!(areas[1].path, PathBuf::from("/tmp/my swap"));
        assert_eq!(areas[1].kind, "file");
        assert_eq!(areas[1].used_kib, 12);
        assert_eq!(areas[1].priority, 7);
        assert!(parse_proc_swaps("Filename Type\n/x file 1\n").is_err());
        assert!(parse_proc_swaps("Filename\n/x file a 0 1\n").is_err());
        assert!(parse_proc_swaps("Filename Type Size Used Priority\n")
            .unwrap()
            .is_empty());
    }

    #[test]
    fn reads_real_proc_swaps() {
        assert!(read_swaps(Path::new("/proc/swaps")).is_ok());
    }
}
