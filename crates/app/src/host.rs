//! The host-wide state of setup: one restore record per host, not per user. A session whose
//! setup sets something on the host (`vernier_setup::SetupPlan::sets_host_state`: a sysctl, a
//! governor, turbo, a PM QoS request, a swap reset) and `system tune` write what they change to
//! a record in [`run_dir`] before changing it; the session's record is the host's lock, held
//! while its process runs. Whoever starts vernier (root with another `HOME`, `sudo` with or
//! without `-i`, a systemd unit beside a shell), a second session that changes the host finds
//! it and is refused (or waits, with `--if-busy wait`), and `system reset` finds the records
//! after a crash.
//!
//! Why `/run/vernier`: every change vernier makes lives in the running kernel (procfs, sysfs,
//! swap areas, an open /dev/cpu_dma_latency) and is gone after a reboot, so its record is
//! run-time data, which /run holds and the boot empties (FHS 3.0, section 3.15). A record that
//! outlived a boot would only restore values the new boot never had (records carry the boot
//! id and one of an earlier boot is discarded all the same), so nothing goes to
//! `/var/lib/vernier`. `VERNIER_RUN_DIR` names another directory (the tests' own, so that they
//! never meet a real session).
//!
//! Only root may create /run/vernier or write in it: a setup that sets host state needs root
//! anyway (the files it writes are root's), and one that does not (`rt`, `pin`, `cooldown`,
//! `idle-gate`, `drop-caches`) takes no lock and needs no record. A record is replayed only
//! when this user or root wrote it (`vernier_setup::restore_from_record`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

use vernier_setup::{RestoreRecord, SetupError};

use crate::AppError;

/// The environment variable naming the directory of the host's records instead of
/// [`DEFAULT_RUN_DIR`].
pub const RUN_DIR_VARIABLE: &str = "VERNIER_RUN_DIR";

/// Where the host's records are by default.
const DEFAULT_RUN_DIR: &str = "/run/vernier";

/// The directory of the host's records: `VERNIER_RUN_DIR`, else /run/vernier.
pub fn run_dir() -> PathBuf {
    std::env::var_os(RUN_DIR_VARIABLE)
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_RUN_DIR), PathBuf::from)
}

/// The restore record of the session that holds the host's setup: the host's lock.
pub fn session_record() -> PathBuf {
    run_dir().join("setup.json")
}

/// The restore record of `system tune`.
pub fn tune_record() -> PathBuf {
    run_dir().join("tune.json")
}

/// The records that vernier kept per user before its records were the host's, in
/// `$XDG_STATE_HOME/vernier`, where they are: `system reset` restores them too, and a session
/// refuses to start over one, so that a record an earlier vernier left is not forgotten.
pub fn per_user_records() -> Vec<PathBuf> {
    let Some(dir) = dirs::state_dir().or_else(dirs::data_dir) else {
        return Vec::new();
    };
    ["restore.json", "tune.json"]
        .iter()
        .map(|name| dir.join("vernier").join(name))
        .filter(|p| p.exists())
        .collect()
}

/// The record of the session that holds the host's setup now (its process runs, and it is not
/// this one), if there is one.
pub fn holder() -> Result<Option<RestoreRecord>, AppError> {
    let path = session_record();
    let record = RestoreRecord::load(&path).map_err(|source| AppError::ReadRecord {
        path,
        source: Box::new(source),
    })?;
    Ok(record.filter(RestoreRecord::held_by_another_process))
}

/// Makes sure that this process can write the host's records, before anything changes:
/// creates the directory (mode 0755: everyone may read whose setup holds the host, only its
/// owner may write) or says in one line why it cannot be, naming `what` needs it; `hint` ends
/// the line.
pub fn prepare(what: &str, hint: &str) -> Result<(), AppError> {
    let dir = run_dir();
    let refused = |detail: String| AppError::RunDir {
        what: what.to_string(),
        dir: dir.clone(),
        detail,
        hint: hint.to_string(),
    };
    if let Err(e) = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(&dir)
    {
        return Err(refused(format!("cannot create it ({e})")));
    }
    let c =
        CString::new(dir.as_os_str().as_bytes()).map_err(|_| AppError::NulInPath(dir.clone()))?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(refused(format!("cannot write in it ({e})")));
    }
    Ok(())
}

/// Refuses to start while a record of an earlier vernier in this user's state directory holds
/// changes not restored (see [`per_user_records`]).
pub fn check_per_user_records() -> Result<(), AppError> {
    for path in per_user_records() {
        vernier_setup::check_absent(&path).map_err(|e| match e {
            SetupError::RecordExists { .. } | SetupError::RecordInUse { .. } => AppError::Setup(e),
            source => AppError::ReadRecord {
                path: path.clone(),
                source: Box::new(source),
            },
        })?;
    }
    Ok(())
}
