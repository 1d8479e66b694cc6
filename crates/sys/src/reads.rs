//! The files of one moment, each read once ([`Reads`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::SysError;

/// Files read at most once each and kept: what several parts of one start-up read (the
/// environment capture and the system check both read the governor, the turbo switch, the
/// transparent huge page mode, the online CPUs, /proc/meminfo, the boot id and some sysctls).
/// For values of one moment only: a monitor, which samples a file again and again, reads it
/// afresh each time.
#[derive(Debug, Default)]
pub struct Reads {
    files: RefCell<HashMap<PathBuf, Result<String, Failure>>>,
}

/// Why a file could not be read, kept to give the same error again.
#[derive(Debug, Clone)]
struct Failure {
    kind: std::io::ErrorKind,
    os_error: Option<i32>,
    message: String,
}

impl Failure {
    fn of(error: &std::io::Error) -> Self {
        Failure {
            kind: error.kind(),
            os_error: error.raw_os_error(),
            message: error.to_string(),
        }
    }

    fn error(&self) -> std::io::Error {
        match self.os_error {
            Some(code) => std::io::Error::from_raw_os_error(code),
            None => std::io::Error::new(self.kind, self.message.clone()),
        }
    }
}

impl Reads {
    pub fn new() -> Self {
        Reads::default()
    }

    /// The whole text of `path` as [`crate::read_file`] gives it, read the first time it is
    /// asked for. A file whose mode has no read bit is unreadable, as /proc/sys makes it even
    /// for root (fs/proc/proc_sysctl.c, `test_perm`), also in a fixture tree.
    pub fn read(&self, path: &Path) -> Result<String, SysError> {
        if let Some(kept) = self.files.borrow().get(path) {
            return kept.clone().map_err(|f| SysError::from_io(path, f.error()));
        }
        let read = read_readable(path);
        let kept = match &read {
            Ok(text) => Ok(text.clone()),
            Err(e) => Err(Failure::of(e)),
        };
        self.files.borrow_mut().insert(path.to_path_buf(), kept);
        read.map_err(|e| SysError::from_io(path, e))
    }
}

/// The real /proc/sys (not a fixture tree's copy).
const PROC_SYS: &str = "/proc/sys";

fn read_readable(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut file = std::fs::File::open(path)?;
    // /proc/sys applies a tunable's mode to root too (fs/proc/proc_sysctl.c, `test_perm`: root
    // gets the owner's bits, with no override), so a tunable that opened there is readable and
    // its ~180 reads of a start-up need no `fstat` each. Elsewhere (sysfs, a fixture tree) root
    // opens a file whose mode has no read bit, which is checked here.
    if path.starts_with(PROC_SYS) {
        return crate::read_open_tunable(&mut file);
    }
    if file.metadata()?.permissions().mode() & 0o444 == 0 {
        return Err(std::io::Error::from_raw_os_error(libc::EACCES));
    }
    crate::read_open_file(&mut file)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_once_and_its_failure_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("value");
        std::fs::write(&path, "1\n").unwrap();
        let reads = Reads::new();
        assert_eq!(reads.read(&path).unwrap(), "1\n");
        // Changed on disk: the kept text is the one read.
        std::fs::write(&path, "2\n").unwrap();
        assert_eq!(reads.read(&path).unwrap(), "1\n");
        assert_eq!(Reads::new().read(&path).unwrap(), "2\n");

        let missing = dir.path().join("missing");
        assert!(reads.read(&missing).unwrap_err().is_unsupported());
        std::fs::write(&missing, "now\n").unwrap();
        assert!(reads.read(&missing).unwrap_err().is_unsupported());
    }

    #[test]
    fn a_file_without_read_permission_is_unreadable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("write-only");
        std::fs::write(&path, "0\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o200)).unwrap();
        let reads = Reads::new();
        let first = reads.read(&path).unwrap_err();
        assert_eq!(first.os_error(), Some(libc::EACCES), "{first}");
        let again = reads.read(&path).unwrap_err();
        assert_eq!(again.to_string(), first.to_string());
    }

    /// A tunable read in one read(2) reads as the whole file does.
    #[test]
    fn a_tunable_read_at_once_is_whole() {
        let reads = Reads::new();
        let mut compared = 0;
        for name in [
            "kernel/osrelease",
            "kernel/ostype",
            "vm/swappiness",
            "kernel/pid_max",
        ] {
            let path = Path::new(PROC_SYS).join(name);
            let Ok(whole) = std::fs::read_to_string(&path) else {
                continue;
            };
            assert_eq!(reads.read(&path).unwrap(), whole, "{name}");
            compared += 1;
        }
        if compared == 0 {
            eprintln!("skipped: no /proc/sys");
        }
    }

    /// /proc/sys checks a tunable's mode for root too, so a write-only one is unreadable
    /// without the `fstat` that other files get.
    #[test]
    fn a_write_only_tunable_is_unreadable() {
        let path = Path::new(PROC_SYS).join("vm/compact_memory");
        if !path.exists() {
            eprintln!("skipped: no {} (CONFIG_COMPACTION)", path.display());
            return;
        }
        let error = Reads::new().read(&path).unwrap_err();
        assert_eq!(error.os_error(), Some(libc::EACCES), "{error}");
    }
}
