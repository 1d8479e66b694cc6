use std::path::{Path, PathBuf};

/// Errors of the monitors, the sampler and the parsing of `--monitor` specs.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// The interface does not exist or cannot be read here (file absent, no driver, no
    /// hardware counter, root-only file). Recorded as a value, never fatal to a run.
    #[error("unsupported: {what}")]
    Unsupported { what: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: cannot parse: {detail}")]
    Parse { path: PathBuf, detail: String },
    #[error("{call} failed: {source}")]
    Syscall {
        call: &'static str,
        source: std::io::Error,
    },
    #[error(transparent)]
    Sys(#[from] vernier_sys::SysError),
    /// An unknown monitor, an unknown option or a value its option's type refuses.
    #[error(transparent)]
    Plugin(#[from] vernier_model::PluginError),
    #[error("bad monitor list '{text}': {reason}")]
    BadSpec { text: String, reason: String },
    #[error("sampler thread: {0}")]
    Thread(String),
}

impl MonitorError {
    /// Maps an I/O error on `path`: an absent file, a file this user may not read, and an
    /// interface the kernel has compiled out or disabled at boot (PSI with `psi=0` answers
    /// EOPNOTSUPP, proc(5)) are unsupported; anything else is an I/O error.
    pub fn from_io(path: &Path, source: std::io::Error) -> Self {
        use std::io::ErrorKind;
        let unsupported = matches!(
            source.kind(),
            ErrorKind::NotFound | ErrorKind::PermissionDenied | ErrorKind::Unsupported
        ) || source.raw_os_error() == Some(libc::EOPNOTSUPP);
        if unsupported {
            MonitorError::Unsupported {
                what: format!("{}: {}", path.display(), source),
            }
        } else {
            MonitorError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }

    pub fn parse(path: &Path, detail: impl Into<String>) -> Self {
        MonitorError::Parse {
            path: path.to_path_buf(),
            detail: detail.into(),
        }
    }

    /// The error of the last failed libc call.
    pub fn last_os(call: &'static str) -> Self {
        MonitorError::Syscall {
            call,
            source: std::io::Error::last_os_error(),
        }
    }

    /// The message without the "unsupported: " prefix, for the unsupported map of a run.
    pub fn reason(&self) -> String {
        match self {
            MonitorError::Unsupported { what } => what.clone(),
            MonitorError::Sys(vernier_sys::SysError::Unsupported { what }) => what.clone(),
            e => e.to_string(),
        }
    }

    pub fn is_unsupported(&self) -> bool {
        match self {
            MonitorError::Unsupported { .. } => true,
            MonitorError::Sys(e) => e.is_unsupported(),
            _ => false,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_unsupported_only_when_the_interface_is_missing() {
        let p = Path::new("/proc/x");
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = MonitorError::from_io(p, missing);
        assert!(e.is_unsupported());
        assert!(e.reason().starts_with("/proc/x: "), "{}", e.reason());
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(MonitorError::from_io(p, denied).is_unsupported());
        let disabled = std::io::Error::from_raw_os_error(libc::EOPNOTSUPP);
        assert!(MonitorError::from_io(p, disabled).is_unsupported());
        let other = std::io::Error::from_raw_os_error(libc::EIO);
        assert!(!MonitorError::from_io(p, other).is_unsupported());
    }
}
