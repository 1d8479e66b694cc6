//! Profiled runs (`--profile`): what `perf record` needs of the machine, checked when the plan
//! is made, and how a run is recorded under it and its stacks collapsed.
//!
//! A profiled run is an ordinary run of the configuration whose child is started by
//! `perf record -g` (perf-record(1)): its process and every process it forks are sampled
//! (perf's events are inherited by children), or, with `--profile-scope system`, every CPU
//! while it lasts (`-a`). `perf script` then prints the samples, which
//! [`vernier_formats::perf::collapse_perf_script`] folds. The profiled runs of a configuration
//! come after its timed runs and never enter its statistics: sampling costs time (the
//! overhead is stored: each profiled run's value and duration beside the timed runs').

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use vernier_model::{FoldedStacks, ProfileScope, ProfileSettings};
use vernier_sys::Roots;

/// Why a session cannot profile its runs on this machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error(
        "--profile needs perf, which is not installed (no 'perf' in PATH): install it \
         (Debian and Ubuntu: apt install linux-perf; Fedora: dnf install perf)"
    )]
    NoPerf,
    #[error(
        "--profile cannot sample: kernel.perf_event_paranoid is {paranoid}, which forbids \
         perf events to users other than root; run as root or set \
         'sysctl kernel.perf_event_paranoid={wanted}'"
    )]
    Forbidden { paranoid: i32, wanted: i32 },
    #[error("{0}")]
    Invalid(String),
}

/// How the profiled runs of a session are recorded, as checked at plan time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profiler {
    /// The `perf` program.
    pub perf: PathBuf,
    /// The event sampled: `cycles` where the CPU has a PMU that counts them, else the software
    /// `cpu-clock` (a KVM guest without a virtual PMU); `:u` when only user space may be
    /// sampled.
    pub event: String,
    pub settings: ProfileSettings,
    /// What the profiles will lack on this machine and what would give it (kernel frames
    /// without symbols, or no kernel frames at all): said before the session starts.
    pub notes: Vec<String>,
}

/// What [`check`] reads of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Privileges {
    /// The effective user is root (perf events are then allowed whatever the paranoia).
    pub root: bool,
    /// /proc/sys/kernel/perf_event_paranoid (`None`: not readable; the kernel's default, 2).
    pub paranoid: Option<i32>,
    /// /proc/sys/kernel/kptr_restrict.
    pub kptr_restrict: Option<i32>,
    /// A hardware cycles event can be opened.
    pub cycles: bool,
}

impl Privileges {
    /// Reads this machine.
    pub fn read(roots: &Roots) -> Self {
        let number = |name: &str| -> Option<i32> {
            std::fs::read_to_string(roots.proc_root.join("sys/kernel").join(name))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        Privileges {
            // SAFETY: geteuid has no preconditions.
            root: unsafe { libc::geteuid() } == 0,
            paranoid: number("perf_event_paranoid"),
            kptr_restrict: number("kptr_restrict"),
            cycles: cycles_countable(),
        }
    }
}

/// Whether this process can open the hardware cycles event (perf_event_open(2)): false without
/// a PMU (most virtual machines), where perf would fail on `-e cycles`.
fn cycles_countable() -> bool {
    vernier_monitor::perf::COUNTERS
        .iter()
        .find(|c| c.metric == "cycles")
        .is_some_and(|def| vernier_monitor::perf::PerfCounter::open(def, 0).is_ok())
}

/// Finds `perf` in `path` (the value of PATH).
pub fn find_perf(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join("perf"))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Checks that runs can be profiled as `settings` asks on a machine with `privileges` and
/// `perf` (found or not), and chooses the event. perf_event_paranoid (Documentation/admin-guide/
/// sysctl/kernel.rst): -1 allows everything, 0 no raw tracepoints, 1 no kernel profiling of
/// CPUs, 2 user space only (the kernel's default); Debian's 3 forbids perf events to users
/// altogether. Root may sample whatever the value.
pub fn check(
    settings: ProfileSettings,
    privileges: &Privileges,
    perf: Option<PathBuf>,
) -> Result<Profiler, ProfileError> {
    vernier_model::profile::check_frequency(settings.frequency_hz)
        .map_err(ProfileError::Invalid)?;
    let perf = perf.ok_or(ProfileError::NoPerf)?;
    let paranoid = privileges.paranoid.unwrap_or(2);
    let mut notes = Vec::new();
    let mut user_only = false;
    if !privileges.root {
        match settings.scope {
            ProfileScope::System if paranoid > 0 => {
                return Err(ProfileError::Forbidden {
                    paranoid,
                    wanted: 0,
                })
            }
            ProfileScope::Process if paranoid > 2 => {
                return Err(ProfileError::Forbidden {
                    paranoid,
                    wanted: 1,
                })
            }
            ProfileScope::Process if paranoid == 2 => {
                user_only = true;
                notes.push(format!(
                    "kernel.perf_event_paranoid is {paranoid}: the profiles hold user space \
                     only, no kernel frames; run as root or set \
                     'sysctl kernel.perf_event_paranoid=1' to see the kernel's share"
                ));
            }
            _ => {}
        }
    }
    let kptr = privileges.kptr_restrict.unwrap_or(0);
    if !user_only && (kptr >= 2 || (kptr == 1 && !privileges.root)) {
        notes.push(format!(
            "kernel.kptr_restrict is {kptr}: kernel frames will have no symbol names \
             ([unknown]); set 'sysctl kernel.kptr_restrict=0' to name them"
        ));
    }
    let base = if privileges.cycles {
        "cycles"
    } else {
        "cpu-clock"
    };
    let event = if user_only {
        format!("{base}:u")
    } else {
        base.to_string()
    };
    Ok(Profiler {
        perf,
        event,
        settings,
        notes,
    })
}

/// Why a profiled run's stacks could not be had.
#[derive(Debug, thiserror::Error)]
pub enum CollapseError {
    #[error("cannot run {perf} script: {source}")]
    Spawn {
        perf: String,
        source: std::io::Error,
    },
    #[error("perf script failed ({status}): {stderr}")]
    Failed { status: String, stderr: String },
    #[error(transparent)]
    Collapse(#[from] vernier_formats::perf::PerfScriptError),
}

impl Profiler {
    /// The words that start a run's child under `perf record`, writing its samples to `data`;
    /// the child's program and arguments follow.
    pub fn record_args(&self, data: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            self.perf.clone().into(),
            "record".into(),
            "--quiet".into(),
            "-e".into(),
            self.event.clone().into(),
            "-g".into(),
            "-F".into(),
            self.settings.frequency_hz.to_string().into(),
            "-o".into(),
            data.into(),
        ];
        if self.settings.scope == ProfileScope::System {
            args.push("-a".into());
        }
        args.push("--".into());
        args
    }

    /// The folded stacks of the samples in `data` (`perf script`, inline frames not resolved:
    /// addr2line per address would take minutes).
    pub fn collapse(&self, data: &Path) -> Result<FoldedStacks, CollapseError> {
        let output = Command::new(&self.perf)
            .arg("script")
            .arg("--no-inline")
            .arg("-i")
            .arg(data)
            .output()
            .map_err(|source| CollapseError::Spawn {
                perf: self.perf.display().to_string(),
                source,
            })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(CollapseError::Failed {
                status: output.status.to_string(),
                stderr: stderr.trim().to_string(),
            });
        }
        Ok(vernier_formats::perf::collapse_perf_script(&output.stdout)?)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn machine(root: bool, paranoid: i32, kptr: i32, cycles: bool) -> Privileges {
        Privileges {
            root,
            paranoid: Some(paranoid),
            kptr_restrict: Some(kptr),
            cycles,
        }
    }

    fn settings(scope: ProfileScope) -> ProfileSettings {
        ProfileSettings {
            runs: 3,
            scope,
            frequency_hz: 999,
        }
    }

    const PERF: fn() -> Option<PathBuf> = || Some(PathBuf::from("/usr/bin/perf"));

    #[test]
    fn the_event_is_cycles_with_a_pmu_and_cpu_clock_without() {
        let p = check(
            settings(ProfileScope::Process),
            &machine(true, 2, 0, true),
            PERF(),
        );
        assert_eq!(p.unwrap().event, "cycles");
        let p = check(
            settings(ProfileScope::Process),
            &machine(true, 2, 0, false),
            PERF(),
        );
        let p = p.unwrap();
        assert_eq!(p.event, "cpu-clock");
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn without_perf_the_error_names_the_package() {
        let e = check(
            settings(ProfileScope::Process),
            &machine(true, 2, 0, false),
            None,
        );
        assert!(e.unwrap_err().to_string().contains("linux-perf"));
    }

    #[test]
    fn a_user_is_told_what_to_change() {
        // Debian's 3: nothing for users.
        let e = check(
            settings(ProfileScope::Process),
            &machine(false, 3, 0, false),
            PERF(),
        );
        let text = e.unwrap_err().to_string();
        assert!(text.contains("kernel.perf_event_paranoid=1"), "{text}");
        // The kernel's default 2: user space only, said, and sampled as such.
        let p = check(
            settings(ProfileScope::Process),
            &machine(false, 2, 0, false),
            PERF(),
        );
        let p = p.unwrap();
        assert_eq!(p.event, "cpu-clock:u");
        assert!(p.notes[0].contains("user space only"), "{:?}", p.notes);
        // The whole system needs 0 or root.
        let e = check(
            settings(ProfileScope::System),
            &machine(false, 1, 0, false),
            PERF(),
        );
        assert!(e.unwrap_err().to_string().contains("perf_event_paranoid=0"));
        assert!(check(
            settings(ProfileScope::System),
            &machine(true, 3, 0, false),
            PERF()
        )
        .is_ok());
        // Kernel frames without names.
        let p = check(
            settings(ProfileScope::Process),
            &machine(false, 1, 1, false),
            PERF(),
        );
        assert!(p.unwrap().notes[0].contains("kptr_restrict=0"));
        let p = check(
            settings(ProfileScope::Process),
            &machine(true, 1, 2, false),
            PERF(),
        );
        assert!(p.unwrap().notes[0].contains("kptr_restrict is 2"));
    }

    #[test]
    fn the_frequency_is_checked() {
        let mut s = settings(ProfileScope::Process);
        s.frequency_hz = 0;
        assert!(check(s, &machine(true, 2, 0, false), PERF()).is_err());
    }

    #[test]
    fn perf_record_wraps_the_child() {
        let p = check(
            settings(ProfileScope::System),
            &machine(true, 2, 0, false),
            PERF(),
        )
        .unwrap();
        let args: Vec<String> = p
            .record_args(Path::new("/tmp/x.data"))
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args.join(" "),
            "/usr/bin/perf record --quiet -e cpu-clock -g -F 999 -o /tmp/x.data -a --"
        );
    }

    #[test]
    fn perf_is_found_in_path() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find_perf(Some(dir.path().as_os_str())), None);
        let perf = dir.path().join("perf");
        std::fs::write(&perf, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&perf, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths(["/nonexistent".as_ref(), dir.path()]).unwrap();
        assert_eq!(find_perf(Some(&path)), Some(perf));
    }
}
