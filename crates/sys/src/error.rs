use std::path::{Path, PathBuf};

/// Errors of the Linux layer.
#[derive(Debug, thiserror::Error)]
pub enum SysError {
    /// The interface does not exist on this machine (file absent, feature not compiled in).
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
}

impl SysError {
    pub fn from_io(path: &Path, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::NotFound {
            SysError::Unsupported {
                what: format!("{} is absent", path.display()),
            }
        } else {
            SysError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }

    pub fn parse(path: &Path, detail: impl Into<String>) -> Self {
        SysError::Parse {
            path: path.to_path_buf(),
            detail: detail.into(),
        }
    }

    /// The error of the last failed libc call.
    pub fn last_os(call: &'static str) -> Self {
        SysError::Syscall {
            call,
            source: std::io::Error::last_os_error(),
        }
    }

    /// The OS error number of a failed call or file operation.
    pub fn os_error(&self) -> Option<i32> {
        match self {
            SysError::Io { source, .. } | SysError::Syscall { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    pub fn is_unsupported(&self) -> bool {
        matches!(self, SysError::Unsupported { .. })
    }
}
