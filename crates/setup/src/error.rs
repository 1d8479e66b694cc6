use std::path::{Path, PathBuf};

use vernier_sys::SysError;

/// Errors of system setup, restore, tune and reset.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A `--setup` list that does not parse.
    #[error("setup '{spec}': {detail}")]
    Parse { spec: String, detail: String },
    /// An unknown plugin, an unknown option or a value its option's type refuses.
    #[error(transparent)]
    Plugin(#[from] vernier_model::PluginError),
    /// A value its option's type allows but the plugin does not (`sysctl:NAME`, a name that is
    /// no sysctl's).
    #[error("setup plugin '{plugin}': bad value '{value}' for option '{option}': {detail}")]
    BadOption {
        plugin: String,
        option: String,
        value: String,
        detail: String,
    },
    /// The plugin cannot be applied on this machine (mark it optional with a trailing `?` to
    /// skip it instead).
    #[error("setup plugin '{plugin}' cannot be applied here: {reason}")]
    Unavailable { plugin: String, reason: String },
    /// A restore record from an earlier session or `system tune`, whose process has ended, is
    /// still present; restoring it first keeps the original values (overwriting it would lose
    /// them).
    #[error(
        "{owner} ended without restoring the system; run `vernier system reset` first to put \
         back the values its restore record {path} lists"
    )]
    RecordExists { path: PathBuf, owner: String },
    /// The restore record belongs to a process that still runs: that process restores the
    /// system itself when it ends, and nothing else may undo or change what it set up.
    #[error(
        "{owner} is running with its setup applied and restores it when it ends (restore \
         record {path}); try again after it ends, or stop it with `kill {pid}`"
    )]
    RecordInUse {
        path: PathBuf,
        owner: String,
        pid: u32,
    },
    #[error("restore record {path}: {detail}")]
    Record { path: PathBuf, detail: String },
    #[error("setup plugin '{plugin}' failed: {detail}")]
    Apply { plugin: String, detail: String },
    /// swap-reset: some areas could not be switched back on (each listed).
    #[error("swap reset failed: {}", failures.join("; "))]
    Swap { failures: Vec<String> },
    /// Some changes could not be restored (each listed); the record is kept for a later reset.
    #[error("restore failed: {}", failures.join("; "))]
    Restore { failures: Vec<String> },
    /// A wait before a run was interrupted by the cancel flag (Ctrl-C).
    #[error("cancelled")]
    Cancelled,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{call} failed: {source}")]
    Syscall {
        call: &'static str,
        source: std::io::Error,
    },
    #[error(transparent)]
    Sys(#[from] SysError),
}

impl SetupError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        SetupError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The error of the last failed libc call.
    pub(crate) fn last_os(call: &'static str) -> Self {
        SetupError::Syscall {
            call,
            source: std::io::Error::last_os_error(),
        }
    }
}
