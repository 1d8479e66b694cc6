//! The restore record: a JSON file, written before anything changes, that lists every change
//! with its previous value. A clean restore removes it; after `kill -9`, a crash or a power
//! loss it stays behind and [`restore_from_record`] (`vernier system reset`) replays it.
//!
//! The record names the process that made the changes (pid, boot id and start time, see
//! [`vernier_sys::process`]) and its session. While that process runs, the record is its own:
//! it restores the system itself when it ends, so another session may not change the system
//! over it and `system reset` may not undo it.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use vernier_sys::process::{boot_id, ProcessIdentity};

use crate::swap::{self, SwapArea};
use crate::SetupError;

const FORMAT: &str = "vernier-restore-record";
const VERSION: u32 = 1;

/// One change to the system and how to undo it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Change {
    /// A procfs/sysfs file (sysctl, scaling_governor, boost) set to `value`; restore writes
    /// `previous` back.
    WriteFile {
        plugin: String,
        path: PathBuf,
        previous: String,
        value: String,
    },
    /// Swap areas that swap-reset switches off and on again; restore switches on any of them
    /// that is not active (a reset interrupted between swapoff and swapon).
    SwapAreas { areas: Vec<SwapArea> },
    /// A PM QoS CPU latency request held through an open /dev/cpu_dma_latency. Closing the file
    /// removes the request, and the kernel closes it when the process dies
    /// (Documentation/power/pm_qos_interface.rst), so there is nothing to replay; listed so
    /// the record tells the whole story.
    DmaLatency { path: PathBuf, latency_us: i32 },
    /// tracefs mounted at `path` for the session (it was not mounted); restore unmounts it.
    MountTracefs { path: PathBuf },
    /// The session's ftrace instance at `path` on `cpus` (`latency:trace=US`); restore stops
    /// and removes it, which frees its buffer.
    TraceInstance { path: PathBuf, cpus: Vec<usize> },
}

impl Change {
    /// A one-line description for a table.
    pub fn describe(&self) -> String {
        match self {
            Change::WriteFile {
                path,
                previous,
                value,
                ..
            } => format!("{}: {previous} -> {value}", path.display()),
            Change::SwapAreas { areas, .. } => {
                let list: Vec<String> = areas
                    .iter()
                    .map(|a| format!("{} (priority {})", a.path.display(), a.priority))
                    .collect();
                format!("swap reset of {}", list.join(", "))
            }
            Change::DmaLatency { path, latency_us } => {
                format!("{} held at {latency_us} us", path.display())
            }
            Change::MountTracefs { path } => format!("tracefs mounted at {}", path.display()),
            Change::TraceInstance { path, cpus } => format!(
                "ftrace instance {} on CPUs {}",
                path.display(),
                vernier_sys::cpulist::format_cpu_list(cpus)
            ),
        }
    }

    /// Makes the change. Returns the file to hold open for the session when closing it is the
    /// restore (/dev/cpu_dma_latency).
    pub(crate) fn apply(&self) -> Result<Option<File>, SetupError> {
        match self {
            Change::WriteFile {
                path,
                value,
                previous,
                plugin,
            } => {
                if previous != value {
                    write_value(path, value).map_err(|e| SetupError::Apply {
                        plugin: plugin.clone(),
                        detail: e.to_string(),
                    })?;
                }
                Ok(None)
            }
            Change::SwapAreas { areas } => swap::reset_areas(areas).map(|()| None),
            Change::DmaLatency { path, latency_us } => {
                crate::plugins::dma_latency::hold(path, *latency_us).map(Some)
            }
            Change::MountTracefs { path } => crate::plugins::trace::mount(path).map(|()| None),
            Change::TraceInstance { path, cpus } => {
                crate::plugins::trace::create(path, cpus).map(|()| None)
            }
        }
    }

    /// Whether the change is registered for restore before it is applied, because applying
    /// it can fail half-way: a swap reset that fails between swapoff and swapon is repaired
    /// by restoring.
    pub(crate) fn registered_first(&self) -> bool {
        // An instance made half-way (created, an event refused) is removed by restoring.
        matches!(
            self,
            Change::SwapAreas { .. } | Change::TraceInstance { .. } | Change::MountTracefs { .. }
        )
    }

    /// Undoes the change. Idempotent: writing a previous value twice or switching on an
    /// already active swap area is harmless.
    pub(crate) fn restore(&self) -> Result<(), SetupError> {
        match self {
            Change::WriteFile { path, previous, .. } => write_value(path, previous),
            Change::SwapAreas { areas } => swap::ensure_active(areas),
            Change::DmaLatency { .. } => Ok(()),
            Change::MountTracefs { path } => crate::plugins::trace::unmount(path),
            Change::TraceInstance { path, .. } => crate::plugins::trace::remove(path),
        }
    }
}

/// The changes that write each `(path, value)` of `writes`, with the previous values read now,
/// labelled `plugin`.
pub(crate) fn write_changes(
    plugin: &str,
    writes: &[(PathBuf, String)],
) -> Result<Vec<Change>, SetupError> {
    writes
        .iter()
        .map(|(path, value)| {
            Ok(Change::WriteFile {
                plugin: plugin.to_string(),
                path: path.clone(),
                previous: read_value(path)?,
                value: value.clone(),
            })
        })
        .collect()
}

/// Writes `value` to an existing procfs/sysfs file (never creates one: a vanished interface is
/// an error, not a stray file).
pub(crate) fn write_value(path: &Path, value: &str) -> Result<(), SetupError> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| SetupError::io(path, e))?;
    f.write_all(value.as_bytes())
        .map_err(|e| SetupError::io(path, e))
}

/// Reads a procfs/sysfs value without its trailing newline.
pub(crate) fn read_value(path: &Path) -> Result<String, SetupError> {
    Ok(vernier_sys::read_file(path)?.trim_end().to_string())
}

/// The file format of the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreRecord {
    pub format: String,
    pub version: u32,
    pub created_unix_s: u64,
    /// The process that made the changes.
    pub pid: u32,
    /// /proc/sys/kernel/random/boot_id at the time: after a reboot the changes are gone, and
    /// replaying old values could override what the new boot configured.
    pub boot_id: Option<String>,
    /// When the process started (field 22 of /proc/PID/stat), so that a later process with the
    /// same pid is not taken for it. Absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ticks: Option<u64>,
    /// The id of the session whose setup this is; absent for `system tune`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// In the order applied; restore goes in reverse.
    pub changes: Vec<Change>,
}

impl RestoreRecord {
    /// A record of this process (for `session`, if any) listing `changes`.
    pub fn new(changes: Vec<Change>) -> Self {
        let owner = ProcessIdentity::current();
        RestoreRecord {
            format: FORMAT.to_string(),
            version: VERSION,
            created_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            pid: owner.pid,
            boot_id: owner.boot_id,
            start_ticks: owner.start_ticks,
            session: None,
            changes,
        }
    }

    /// The process that made the changes.
    pub fn owner(&self) -> ProcessIdentity {
        ProcessIdentity {
            pid: self.pid,
            boot_id: self.boot_id.clone(),
            start_ticks: self.start_ticks,
        }
    }

    /// Whether another process that still runs made the changes: it restores them itself
    /// when it ends, so nobody else may undo them or change the system over them.
    pub fn held_by_another_process(&self) -> bool {
        let owner = self.owner();
        owner.is_alive() && !owner.is_current()
    }

    /// Whether the record is from an earlier boot, whose changes the reboot discarded.
    fn is_of_another_boot(&self) -> bool {
        matches!((&self.boot_id, boot_id()), (Some(then), Some(now)) if *then != now)
    }

    /// "vernier session ID (pid N)" or, for `system tune`, "vernier (pid N)".
    pub fn owner_description(&self) -> String {
        match &self.session {
            Some(id) => format!("vernier session {id} (pid {})", self.pid),
            None => format!("vernier (pid {})", self.pid),
        }
    }

    /// Writes the record to a new file at `path`. A record already there holds the values of
    /// a session or `system tune` that was not restored: when its process still runs, this is
    /// [`SetupError::RecordInUse`], otherwise [`SetupError::RecordExists`] (`system reset`
    /// puts its values back). Only a record of an earlier boot, which nothing needs any more,
    /// is replaced. Written to a temporary file, synced and linked into place, so the record
    /// on disk is always complete and two processes cannot both create it.
    pub fn create(&self, path: &Path) -> Result<(), SetupError> {
        check_absent(path)?;
        let tmp = self.write_temporary(path)?;
        // link(2) fails with EEXIST if the name exists, unlike rename(2), which would replace
        // a record another process created since the check.
        let linked = std::fs::hard_link(&tmp, path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                check_absent(path)?;
                self.save(path)
            }
            Err(e) => Err(SetupError::io(path, e)),
        }
    }

    /// Replaces the record at `path`.
    pub(crate) fn save(&self, path: &Path) -> Result<(), SetupError> {
        let tmp = self.write_temporary(path)?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            SetupError::io(path, e)
        })
    }

    /// Writes the record, synced, to a temporary file of this process beside `path`.
    fn write_temporary(&self, path: &Path) -> Result<PathBuf, SetupError> {
        let json = serde_json::to_vec_pretty(self).map_err(|e| SetupError::Record {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| SetupError::io(dir, e))?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".{}.tmp", std::process::id()));
        let tmp = PathBuf::from(tmp);
        // Readable by every user (a session without privilege reads whose setup holds the
        // host), writable by its owner only.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .open(&tmp)
            .map_err(|e| SetupError::io(&tmp, e))?;
        f.write_all(&json)
            .and_then(|()| f.sync_all())
            .map_err(|e| SetupError::io(&tmp, e))?;
        Ok(tmp)
    }

    /// Reads a record; `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<Self>, SetupError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(SetupError::io(path, e)),
        };
        let record: RestoreRecord =
            serde_json::from_str(&text).map_err(|e| SetupError::Record {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })?;
        if record.format != FORMAT || record.version != VERSION {
            return Err(SetupError::Record {
                path: path.to_path_buf(),
                detail: format!(
                    "not a {FORMAT} version {VERSION} (found '{}' version {})",
                    record.format, record.version
                ),
            });
        }
        Ok(Some(record))
    }
}

/// Fails when a record is at `path`, unless it is from an earlier boot (then it is removed).
pub fn check_absent(path: &Path) -> Result<(), SetupError> {
    // A file that is not a record is an error too: not ours to replace.
    let Some(record) = RestoreRecord::load(path)? else {
        return Ok(());
    };
    if record.held_by_another_process() {
        return Err(in_use(path, &record));
    }
    if record.is_of_another_boot() {
        return remove_record(path);
    }
    Err(SetupError::RecordExists {
        path: path.to_path_buf(),
        owner: record.owner_description(),
    })
}

fn in_use(path: &Path, record: &RestoreRecord) -> SetupError {
    SetupError::RecordInUse {
        path: path.to_path_buf(),
        owner: record.owner_description(),
        pid: record.pid,
    }
}

/// Undoes every change of the record at `path` in reverse order and removes the record.
/// Returns the changes undone: empty when there is no record, or when the record is from an
/// earlier boot (the reboot already discarded the changes). When some change cannot be
/// undone, the others are still tried, the record is kept and the failures are returned.
/// A record whose process still runs (other than this one) is left alone:
/// [`SetupError::RecordInUse`].
pub fn restore_from_record(path: &Path) -> Result<Vec<Change>, SetupError> {
    let Some(record) = RestoreRecord::load(path)? else {
        return Ok(Vec::new());
    };
    check_replayable(path)?;
    if record.held_by_another_process() {
        return Err(in_use(path, &record));
    }
    if record.is_of_another_boot() {
        remove_record(path)?;
        return Ok(Vec::new());
    }
    let failures: Vec<String> = record
        .changes
        .iter()
        .rev()
        .filter_map(|c| c.restore().err().map(|e| format!("{}: {e}", c.describe())))
        .collect();
    if !failures.is_empty() {
        return Err(SetupError::Restore { failures });
    }
    remove_record(path)?;
    Ok(record.changes)
}

/// Refuses to replay a record that neither this user nor root wrote: replaying writes its
/// values to its files with this process's privileges, so a record that another user could
/// have written (in a directory shared with them) could make root write anything anywhere.
fn check_replayable(path: &Path) -> Result<(), SetupError> {
    let owner = std::fs::metadata(path)
        .map_err(|e| SetupError::io(path, e))?
        .uid();
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if owner != me && owner != 0 {
        return Err(SetupError::Record {
            path: path.to_path_buf(),
            detail: format!(
                "written by user {owner}, neither this user ({me}) nor root: not replayed"
            ),
        });
    }
    Ok(())
}

pub(crate) fn remove_record(path: &Path) -> Result<(), SetupError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(SetupError::io(path, e)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trip_and_replay() {
        let dir = tempfile::tempdir().unwrap();
        let knob = dir.path().join("knob");
        std::fs::write(&knob, "0").unwrap();
        let record_path = dir.path().join("state/restore.json");
        let changes = vec![
            Change::WriteFile {
                plugin: "sysctl".into(),
                path: knob.clone(),
                previous: "1".into(),
                value: "0".into(),
            },
            Change::DmaLatency {
                path: dir.path().join("cpu_dma_latency"),
                latency_us: 0,
            },
            Change::SwapAreas { areas: vec![] },
        ];
        let record = RestoreRecord::new(changes.clone());
        record.create(&record_path).unwrap();
        let back = RestoreRecord::load(&record_path).unwrap().unwrap();
        assert_eq!(back, record);
        let json = std::fs::read_to_string(&record_path).unwrap();
        assert!(json.contains("\"kind\": \"write-file\""), "{json}");
        assert!(matches!(
            record.create(&record_path),
            Err(SetupError::RecordExists { .. })
        ));

        let undone = restore_from_record(&record_path).unwrap();
        assert_eq!(undone, changes);
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "1");
        assert!(!record_path.exists());
        assert!(restore_from_record(&record_path).unwrap().is_empty());
    }

    #[test]
    fn failed_replay_keeps_the_record_and_other_boots_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good");
        std::fs::write(&good, "x").unwrap();
        let record_path = dir.path().join("r.json");
        let mut record = RestoreRecord::new(vec![
            Change::WriteFile {
                plugin: "t".into(),
                path: good.clone(),
                previous: "old".into(),
                value: "x".into(),
            },
            Change::WriteFile {
                plugin: "t".into(),
                path: dir.path().join("vanished"),
                previous: "1".into(),
                value: "0".into(),
            },
        ]);
        record.create(&record_path).unwrap();
        let e = restore_from_record(&record_path).unwrap_err();
        assert!(matches!(e, SetupError::Restore { ref failures } if failures.len() == 1));
        assert_eq!(std::fs::read_to_string(&good).unwrap(), "old");
        assert!(record_path.exists());
        assert!(!dir.path().join("vanished").exists());

        record.boot_id = Some("not-this-boot".into());
        record.save(&record_path).unwrap();
        std::fs::write(&good, "x").unwrap();
        assert!(restore_from_record(&record_path).unwrap().is_empty());
        assert_eq!(std::fs::read_to_string(&good).unwrap(), "x");
        assert!(!record_path.exists());
    }

    #[test]
    #[allow(clippy::print_stderr)] // a skipped part says why
    fn a_record_of_another_user_is_not_replayed() {
        let dir = tempfile::tempdir().unwrap();
        let knob = dir.path().join("knob");
        std::fs::write(&knob, "0").unwrap();
        let path = dir.path().join("r.json");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let mut record = RestoreRecord::new(vec![Change::WriteFile {
            plugin: "sysctl".into(),
            path: knob.clone(),
            previous: "1".into(),
            value: "0".into(),
        }]);
        record.pid = child.id();
        child.wait().unwrap();
        record.save(&path).unwrap();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: giving a record to another user needs root");
            return;
        }
        std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
        let e = restore_from_record(&path).unwrap_err();
        assert!(e.to_string().contains("written by user 65534"), "{e}");
        assert_eq!(std::fs::read_to_string(&knob).unwrap(), "0");
        assert!(path.exists());
    }

    #[test]
    fn rejects_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        std::fs::write(&p, "{\"hello\": 1}").unwrap();
        assert!(matches!(
            restore_from_record(&p),
            Err(SetupError::Record { .. })
        ));
        let mut r = RestoreRecord::new(vec![]);
        r.format = "other".into();
        r.save(&p).unwrap();
        assert!(RestoreRecord::load(&p).is_err());
    }
}
