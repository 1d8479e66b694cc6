//! Environment capture: what the machine and kernel were when a session ran.
//!
//! [`capture`] never fails. Every field is read on its own; a field whose source is missing or
//! cannot be parsed stays `None` and `unsupported` says why, so a machine without cpufreq or a
//! locked-down debugfs still gets a full record of everything else. The kernel configuration
//! text comes with it from [`capture_with_kernel_config`] (the environment keeps only its
//! hash) and tool versions from [`record_tool_versions`], with the tools a plan actually uses.
//!
//! Each file is read once. What cannot change while the machine runs ([`BootFacts`]: the
//! kernel's version, command line and configuration, the CPU model, the virtualization) can
//! be kept in a cache file for the boot: `vernier run` then reads neither /proc/config.gz
//! (decompressed and hashed: most of a capture's time) nor /proc/cpuinfo nor the DMI tables
//! again until the machine reboots, the kernel release changes or the /boot configuration
//! file does. Everything that can be changed at run time (sysctls, governor, THP, SMT, idle
//! states, online CPUs, the preemption mode of a PREEMPT_DYNAMIC kernel) is read every time.

pub mod parse;
pub mod sysctl;
pub mod tools;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use vernier_model::Environment;

use crate::{cpulist, read_file, Reads, Roots, SysError};

pub use sysctl::read_sysctls;
pub use tools::{capture_tool_versions, record_tool_versions, tool_version};

/// A kernel configuration is a few hundred KiB; more than this is not one.
const MAX_CONFIG_BYTES: u64 = 64 * 1024 * 1024;

/// Captures the environment from the files under `roots`. See the module documentation.
pub fn capture(roots: &Roots) -> Environment {
    capture_with_kernel_config(roots, None, &Reads::new()).environment
}

/// An environment and the kernel configuration text whose hash it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    pub environment: Environment,
    /// `None` when it cannot be read (`environment.unsupported` says why).
    pub kernel_config: Option<String>,
}

/// [`capture`], with the kernel configuration's text, and with the [`BootFacts`] taken from
/// the cache file `cache` when it holds them for this boot (and stored there otherwise).
/// Without a boot id, or with a cache that cannot be read, they are read anew; a cache that
/// cannot be written is left as it is: the cache only saves time. The files are read through
/// `reads`, so that the system check of the same start-up reads none of them again.
pub fn capture_with_kernel_config(roots: &Roots, cache: Option<&Path>, reads: &Reads) -> Captured {
    let proc_sys_kernel = roots.proc_root.join("sys/kernel");
    let release = text(&proc_sys_kernel.join("osrelease"));
    let facts = match cache {
        Some(cache) => cached_boot_facts(roots, release.as_deref().unwrap_or(""), cache, reads),
        None => BootFacts::read(roots, release.as_deref().unwrap_or("")),
    };
    capture_from(roots, release, facts, reads)
}

/// What cannot change while the machine runs (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct BootFacts {
    kernel_version: Result<String, String>,
    kernel_cmdline: Result<String, String>,
    arch: Result<String, String>,
    cpu_model: Result<String, String>,
    virtualization: Result<String, String>,
    /// The configuration's text.
    kernel_config: Result<String, String>,
    kernel_config_sha256: Option<String>,
    /// The options of the configuration that the preemption model and the tick are told
    /// from ([`SCHEDULING_OPTIONS`]): parsed once per boot, not from the whole text (some
    /// ten thousand lines) in every session.
    scheduling_options: Option<BTreeMap<String, String>>,
}

/// The prefixes of the configuration options that [`parse::preemption_model`],
/// [`parse::tick_mode`] and [`parse::config_hz`] read.
const SCHEDULING_OPTIONS: [&str; 3] = ["CONFIG_PREEMPT", "CONFIG_HZ", "CONFIG_NO_HZ"];

/// The options of a kernel configuration's text that start with a prefix of
/// [`SCHEDULING_OPTIONS`].
fn scheduling_options(config: &str) -> BTreeMap<String, String> {
    vernier_model::environment::parse_kernel_config(config)
        .into_iter()
        .filter(|(key, _)| SCHEDULING_OPTIONS.iter().any(|p| key.starts_with(p)))
        .collect()
}

impl BootFacts {
    /// Reads them, each file once.
    fn read(roots: &Roots, release: &str) -> Self {
        let proc_sys_kernel = roots.proc_root.join("sys/kernel");
        let cpuinfo = text(&roots.proc_root.join("cpuinfo"));
        let kernel_config = read_kernel_config(roots, release).map_err(|e| e.to_string());
        BootFacts {
            kernel_version: text(&proc_sys_kernel.join("version")),
            kernel_cmdline: text(&roots.proc_root.join("cmdline")),
            arch: read_arch(roots),
            cpu_model: cpuinfo
                .as_deref()
                .map_err(Clone::clone)
                .and_then(parse::parse_cpuinfo_model),
            virtualization: detect_virtualization(roots, cpuinfo.as_deref().ok()),
            kernel_config_sha256: kernel_config.as_deref().ok().map(sha256_hex),
            scheduling_options: kernel_config.as_deref().ok().map(scheduling_options),
            kernel_config,
        }
    }
}

/// What a cache of [`BootFacts`] holds them for: one boot of one machine, as vernier of this
/// version reads them under these roots, with this kernel release and /boot configuration
/// file, in this PID namespace (a container shares its host's boot id, not its view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct BootKey {
    boot_id: String,
    version: String,
    roots: [PathBuf; 4],
    kernel_release: String,
    /// Size and modification time (ns) of `<boot_root>/config-<release>`, when it exists.
    boot_config: Option<(u64, i128)>,
    pid_namespace: Option<PathBuf>,
}

#[derive(Serialize, Deserialize)]
struct BootCache {
    key: BootKey,
    facts: BootFacts,
}

fn cached_boot_facts(roots: &Roots, release: &str, cache: &Path, reads: &Reads) -> BootFacts {
    let Ok(boot_id) = read_text(reads, &roots.proc_root.join("sys/kernel/random/boot_id")) else {
        return BootFacts::read(roots, release);
    };
    let boot_config = std::fs::metadata(roots.boot_root.join(format!("config-{release}")))
        .ok()
        .map(|m| {
            let mtime = m.modified().ok().and_then(|t| {
                t.duration_since(std::time::UNIX_EPOCH)
                    .ok()
                    .map(|d| d.as_nanos() as i128)
            });
            (m.len(), mtime.unwrap_or(-1))
        });
    let key = BootKey {
        boot_id,
        version: env!("CARGO_PKG_VERSION").to_string(),
        roots: [
            roots.proc_root.clone(),
            roots.sys_root.clone(),
            roots.etc_root.clone(),
            roots.boot_root.clone(),
        ],
        kernel_release: release.to_string(),
        boot_config,
        pid_namespace: std::fs::read_link(roots.proc_root.join("self/ns/pid")).ok(),
    };
    let cached = std::fs::read(cache)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<BootCache>(&bytes).ok())
        .filter(|c| c.key == key);
    if let Some(cached) = cached {
        return cached.facts;
    }
    let facts = BootFacts::read(roots, release);
    if let Ok(bytes) = serde_json::to_vec(&BootCache {
        key,
        facts: facts.clone(),
    }) {
        let _ = crate::write_file_atomic(cache, &bytes);
    }
    facts
}

/// The environment from the boot's facts and what is read now.
fn capture_from(
    roots: &Roots,
    release: Result<String, String>,
    facts: BootFacts,
    reads: &Reads,
) -> Captured {
    let mut env = Environment::default();
    let mut u = Unsupported::default();
    let proc_sys_kernel = roots.proc_root.join("sys/kernel");
    let cpu_dir = roots.sys_root.join("devices/system/cpu");

    env.kernel_release = u.take("kernel_release", release);
    env.kernel_version = u.take("kernel_version", facts.kernel_version);
    env.kernel_cmdline = u.take("kernel_cmdline", facts.kernel_cmdline);
    env.arch = u.take("arch", facts.arch);
    env.hostname = u.take("hostname", text(&proc_sys_kernel.join("hostname")));
    env.machine_id = u.take("machine_id", read_machine_id(roots));
    env.distro = u.take(
        "distro",
        text(&roots.etc_root.join("os-release")).and_then(|t| parse::parse_os_release(&t)),
    );
    env.clocksource = u.take(
        "clocksource",
        text(
            &roots
                .sys_root
                .join("devices/system/clocksource/clocksource0/current_clocksource"),
        ),
    );

    env.cpu_model = u.take("cpu_model", facts.cpu_model);
    env.virtualization = u.take("virtualization", facts.virtualization);

    let cpus = match cpulist::read_online_cpus(&roots.sys_root) {
        Ok(cpus) => {
            env.online_cpus = u32::try_from(cpus.len()).ok();
            env.online_cpu_list = cpulist::read_online_text(&roots.sys_root)
                .ok()
                .filter(|t| !t.is_empty());
            cpus
        }
        Err(e) => {
            u.take::<()>("online_cpus", Err(e.to_string()));
            numbered_cpus(&cpu_dir)
        }
    };

    env.memory_bytes = u.take(
        "memory_bytes",
        read_text(reads, &roots.proc_root.join("meminfo"))
            .and_then(|t| crate::meminfo::parse_meminfo(&t))
            .and_then(|m| m.require("MemTotal")),
    );

    let config = facts.kernel_config;
    env.kernel_config_sha256 = u.take(
        "kernel_config_sha256",
        config
            .as_ref()
            .map(|_| facts.kernel_config_sha256.unwrap_or_default())
            .map_err(Clone::clone),
    );
    let config_map = facts.scheduling_options;
    let debugfs_preempt = text(&roots.sys_root.join("kernel/debug/sched/preempt")).ok();
    env.preemption = u.take(
        "preemption",
        parse::preemption_model(
            debugfs_preempt.as_deref(),
            config_map.as_ref(),
            env.kernel_version.as_deref(),
            env.kernel_cmdline.as_deref(),
        ),
    );

    let (governor, driver) = read_cpufreq(reads, &cpu_dir, &cpus);
    env.governor = u.take("governor", governor);
    env.cpufreq_driver = u.take("cpufreq_driver", driver);
    env.turbo = u.take("turbo", read_turbo(reads, &cpu_dir));

    env.sysctls = read_sysctls(&roots.proc_root, &roots.sys_root, reads);
    if env.sysctls.is_empty() {
        u.take::<()>(
            "sysctls",
            Err(format!(
                "nothing readable under {}",
                roots.proc_root.join("sys/{kernel,vm}").display()
            )),
        );
    }
    let vulnerabilities = cpu_dir.join("vulnerabilities");
    env.mitigations = read_dir_values(&vulnerabilities);
    if env.mitigations.is_empty() {
        u.take::<()>(
            "mitigations",
            Err(format!("{} is absent or empty", vulnerabilities.display())),
        );
    }

    let thp = roots.sys_root.join("kernel/mm/transparent_hugepage");
    env.thp_enabled = u.take(
        "thp_enabled",
        read_text(reads, &thp.join("enabled")).and_then(|t| parse::parse_bracketed(&t)),
    );
    env.thp_defrag = u.take(
        "thp_defrag",
        text(&thp.join("defrag")).and_then(|t| parse::parse_bracketed(&t)),
    );
    env.smt_control = u.take("smt_control", text(&cpu_dir.join("smt/control")));
    env.smt_active = u.take(
        "smt_active",
        text(&cpu_dir.join("smt/active")).and_then(|t| parse::parse_bool(&t)),
    );
    env.cpuidle_driver = u.take(
        "cpuidle_driver",
        text(&cpu_dir.join("cpuidle/current_driver")),
    );
    env.cpuidle_governor = u.take(
        "cpuidle_governor",
        text(&cpu_dir.join("cpuidle/current_governor"))
            .or_else(|_| text(&cpu_dir.join("cpuidle/current_governor_ro"))),
    );
    let nohz_full = text(&cpu_dir.join("nohz_full"))
        .ok()
        .or_else(|| cpu_dir.join("nohz_full").is_file().then(String::new))
        .map(|t| parse::parse_nohz_full(&t));
    env.tick = u.take(
        "tick",
        parse::tick_mode(
            config_map.as_ref(),
            env.kernel_cmdline.as_deref(),
            nohz_full.as_deref(),
        ),
    );
    env.tick_hz = u.take("tick_hz", parse::config_hz(config_map.as_ref()));
    env.nohz_full_cpus = u.take(
        "nohz_full_cpus",
        nohz_full.ok_or_else(|| {
            format!(
                "{} is absent (a kernel without CONFIG_NO_HZ_FULL)",
                cpu_dir.join("nohz_full").display()
            )
        }),
    );
    env.cgroup_version = u.take(
        "cgroup_version",
        cgroup_version(&roots.sys_root.join("fs/cgroup")),
    );
    env.topology = u.take("topology", read_topology(&cpu_dir, &cpus));
    env.schedstat_version = u.take(
        "schedstat_version",
        text(&roots.proc_root.join("schedstat")).and_then(|t| parse::parse_schedstat_version(&t)),
    );

    env.unsupported = u.0;
    // Texts of files, recorded as vernier records text from outside (vernier_model::text).
    vernier_model::Texts::escape_controls(&mut env);
    Captured {
        environment: env,
        kernel_config: config.ok(),
    }
}

/// Collects the reason of every field that could not be read.
#[derive(Default)]
struct Unsupported(BTreeMap<String, String>);

impl Unsupported {
    fn take<T>(&mut self, field: &str, result: Result<T, String>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(reason) => {
                self.0.insert(field.to_string(), reason);
                None
            }
        }
    }
}

/// The kernel configuration text: `<proc_root>/config.gz` (CONFIG_IKCONFIG_PROC), else
/// `<boot_root>/config-<release>` as distributions install it. `release` may be empty when
/// unknown; then only /proc is tried.
pub fn read_kernel_config(roots: &Roots, release: &str) -> Result<String, SysError> {
    let gz = roots.proc_root.join("config.gz");
    match std::fs::File::open(&gz) {
        Ok(file) => {
            let mut text = String::new();
            flate2::read::GzDecoder::new(file)
                .take(MAX_CONFIG_BYTES)
                .read_to_string(&mut text)
                .map_err(|e| SysError::parse(&gz, format!("not gzip text: {e}")))?;
            return Ok(text);
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(SysError::from_io(&gz, e));
        }
        Err(_) => {}
    }
    let release = release.trim();
    if release.is_empty() || release.contains('/') {
        return Err(SysError::Unsupported {
            what: format!(
                "{} is absent and the kernel release is unknown",
                gz.display()
            ),
        });
    }
    let boot = roots.boot_root.join(format!("config-{release}"));
    read_file(&boot).map_err(|e| match e {
        SysError::Unsupported { .. } => SysError::Unsupported {
            what: format!("neither {} nor {} exists", gz.display(), boot.display()),
        },
        other => other,
    })
}

/// Lower-case hex SHA-256 of a text.
pub fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A trimmed, non-empty file content.
fn text(path: &Path) -> Result<String, String> {
    trimmed(path, read_file(path).map_err(|e| e.to_string())?)
}

/// [`text`] of a file that the system check reads too, through `reads`.
fn read_text(reads: &Reads, path: &Path) -> Result<String, String> {
    trimmed(path, reads.read(path).map_err(|e| e.to_string())?)
}

fn trimmed(path: &Path, content: String) -> Result<String, String> {
    let trimmed = content.trim();
    if trimmed.is_empty() {
        Err(format!("{} is empty", path.display()))
    } else {
        Ok(trimmed.to_string())
    }
}

/// This machine's id ([`read_machine_id`] of the real root), read once per process; `None`
/// where the machine has none.
pub fn this_machine_id() -> Option<&'static str> {
    static ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| read_machine_id(&Roots::real()).ok())
        .as_deref()
}

/// Whether something recorded on the machine with id `recorded` (`None`: unknown) was recorded
/// on another machine than this one: both ids known, and different. A farm's central database
/// holds sessions of every machine, whose processes are not this machine's to look at.
pub fn is_another_machine(recorded: Option<&str>) -> bool {
    recorded
        .zip(this_machine_id())
        .is_some_and(|(recorded, here)| recorded != here)
}

/// The machine id: /etc/machine-id, or /var/lib/dbus/machine-id where D-Bus keeps its own
/// copy (older systems, containers without systemd). machine-id(5): 32 lowercase hexadecimal
/// digits; an empty file or the literal `uninitialized` (a first boot in progress) is no id.
fn read_machine_id(roots: &Roots) -> Result<String, String> {
    let mut reasons = Vec::new();
    for path in [
        roots.etc_root.join("machine-id"),
        roots.var_root.join("lib/dbus/machine-id"),
    ] {
        match text(&path).and_then(|t| parse::parse_machine_id(&t)) {
            Ok(id) => return Ok(id),
            Err(e) => reasons.push(format!("{}: {e}", path.display())),
        }
    }
    Err(reasons.join("; "))
}

/// `kernel.arch` (since Linux 5.x the sysctl reports uname's machine); on the running machine
/// uname(2) itself when the file is missing.
fn read_arch(roots: &Roots) -> Result<String, String> {
    let from_proc = text(&roots.proc_root.join("sys/kernel/arch"));
    if from_proc.is_ok() || !roots.is_real() {
        return from_proc;
    }
    uname_machine().ok_or_else(|| "uname failed".to_string())
}

fn uname_machine() -> Option<String> {
    // SAFETY: utsname is plain data for which all-zero bytes are valid; uname(2) fills it with
    // NUL-terminated strings and touches nothing else.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `uts` is a valid, writable utsname.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return None;
    }
    let bytes: Vec<u8> = uts
        .machine
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8(bytes).ok().filter(|m| !m.is_empty())
}

/// CPUs named by `cpuN` directories, for when the online list is unreadable.
fn numbered_cpus(cpu_dir: &Path) -> Vec<usize> {
    let mut cpus: Vec<usize> = std::fs::read_dir(cpu_dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    cpus.sort_unstable();
    cpus
}

/// The hypervisor and container, from the cheapest trustworthy evidence:
/// 1. DMI strings (/sys/class/dmi/id: sys_vendor, product_name, bios_vendor, board_vendor);
/// 2. the OEM ID of the ACPI DSDT or FADT, for guests without DMI such as Firecracker;
/// 3. /sys/hypervisor/type (Xen);
/// 4. the cpuinfo `hypervisor` flag alone: some hypervisor, `unknown-vm`;
/// 5. a container engine in the cgroup paths of PID 1.
///
/// `/.dockerenv` is deliberately not used: root file systems built from container images keep
/// it, and it is present on the reference Firecracker guest, where systemd-detect-virt
/// therefore wrongly answers `docker`.
fn detect_virtualization(roots: &Roots, cpuinfo: Option<&str>) -> Result<String, String> {
    let Hypervisor {
        name: vm,
        dmi_readable,
        acpi_readable,
    } = detect_hypervisor(roots, cpuinfo);
    let container = text(&roots.proc_root.join("1/cgroup"))
        .ok()
        .and_then(|t| parse::cgroup_container(&t));
    match (vm, container) {
        (Some(vm), Some(c)) => Ok(format!("{vm}+{c}")),
        (Some(vm), None) => Ok(vm),
        (None, Some(c)) => Ok(c.to_string()),
        (None, None) if cpuinfo.is_some() || dmi_readable || acpi_readable => {
            Ok("none".to_string())
        }
        (None, None) => Err("no cpuinfo, DMI or ACPI tables to tell".to_string()),
    }
}

/// The hypervisor this system runs under (steps 1-4 of [`detect_virtualization`]), `None` on
/// bare metal or when nothing tells; for the system check, which warns about it.
pub fn hypervisor(roots: &Roots) -> Option<String> {
    let cpuinfo = text(&roots.proc_root.join("cpuinfo")).ok();
    detect_hypervisor(roots, cpuinfo.as_deref()).name
}

/// What [`detect_hypervisor`] found, and whether it had evidence to read.
struct Hypervisor {
    name: Option<String>,
    dmi_readable: bool,
    acpi_readable: bool,
}

fn detect_hypervisor(roots: &Roots, cpuinfo: Option<&str>) -> Hypervisor {
    let dmi_dir = roots.sys_root.join("class/dmi/id");
    let dmi: Vec<String> = ["sys_vendor", "product_name", "bios_vendor", "board_vendor"]
        .iter()
        .filter_map(|name| text(&dmi_dir.join(name)).ok())
        .collect();
    let dmi_refs: Vec<&str> = dmi.iter().map(String::as_str).collect();
    let mut acpi_readable = false;
    let vm = parse::dmi_hypervisor(&dmi_refs)
        .map(str::to_string)
        .or_else(|| {
            ["DSDT", "FACP"].iter().find_map(|table| {
                let header =
                    read_prefix(&roots.sys_root.join("firmware/acpi/tables").join(table), 36)?;
                acpi_readable = true;
                parse::acpi_oem_hypervisor(&header).map(str::to_string)
            })
        })
        .or_else(|| text(&roots.sys_root.join("hypervisor/type")).ok())
        .or_else(|| {
            cpuinfo
                .is_some_and(parse::cpuinfo_has_hypervisor_flag)
                .then(|| "unknown-vm".to_string())
        });
    Hypervisor {
        name: vm,
        dmi_readable: !dmi.is_empty(),
        acpi_readable,
    }
}

fn read_prefix(path: &Path, len: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(len)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// The scaling governor (one name or per CPU) and the scaling driver, from
/// cpuN/cpufreq/scaling_{governor,driver} (Documentation/admin-guide/pm/cpufreq.rst).
fn read_cpufreq(
    reads: &Reads,
    cpu_dir: &Path,
    cpus: &[usize],
) -> (Result<String, String>, Result<String, String>) {
    let mut governors = BTreeMap::new();
    let mut driver = None;
    for &cpu in cpus {
        let dir = cpu_dir.join(format!("cpu{cpu}/cpufreq"));
        if let Ok(g) = read_text(reads, &dir.join("scaling_governor")) {
            governors.insert(cpu, g);
        }
        if driver.is_none() {
            driver = text(&dir.join("scaling_driver")).ok();
        }
    }
    let absent = || {
        format!(
            "no cpufreq driver: {} is absent",
            cpu_dir
                .join(format!(
                    "cpu{}/cpufreq/scaling_governor",
                    cpus.first().copied().unwrap_or(0)
                ))
                .display()
        )
    };
    (
        parse::format_governors(&governors).ok_or_else(absent),
        driver.ok_or_else(|| absent().replace("scaling_governor", "scaling_driver")),
    )
}

/// Frequency boost: cpufreq/boost (acpi-cpufreq, amd-pstate;
/// Documentation/admin-guide/pm/cpufreq.rst), else the inverse of intel_pstate/no_turbo
/// (Documentation/admin-guide/pm/intel_pstate.rst).
fn read_turbo(reads: &Reads, cpu_dir: &Path) -> Result<bool, String> {
    if let Ok(t) = read_text(reads, &cpu_dir.join("cpufreq/boost")) {
        return parse::parse_bool(&t);
    }
    if let Ok(t) = read_text(reads, &cpu_dir.join("intel_pstate/no_turbo")) {
        return parse::parse_bool(&t).map(|no_turbo| !no_turbo);
    }
    Err(format!(
        "neither {} nor {} exists",
        cpu_dir.join("cpufreq/boost").display(),
        cpu_dir.join("intel_pstate/no_turbo").display()
    ))
}

/// File name -> trimmed content for every readable file of a directory.
fn read_dir_values(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_str()?.to_string();
                    Some((name, text(&e.path()).ok()?))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The control group hierarchy (Documentation/admin-guide/cgroup-v2.rst): `v2` when the unified
/// hierarchy is mounted at /sys/fs/cgroup; `hybrid` when v1 controller hierarchies (directories
/// with a `tasks` file) sit beside a unified one at /sys/fs/cgroup/unified (systemd's hybrid
/// mode); `v1` with v1 hierarchies only.
fn cgroup_version(dir: &Path) -> Result<String, String> {
    if dir.join("cgroup.controllers").is_file() {
        return Ok("v2".to_string());
    }
    let v1 = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().any(|e| e.path().join("tasks").is_file()))
        .unwrap_or(false);
    let unified = dir.join("unified/cgroup.controllers").is_file();
    match (v1, unified) {
        (true, true) => Ok("hybrid".to_string()),
        (true, false) => Ok("v1".to_string()),
        (false, true) => Ok("v2".to_string()),
        (false, false) => Err(format!("no cgroup hierarchy under {}", dir.display())),
    }
}

/// Sockets, cores and threads per core from cpuN/topology of the given CPUs
/// (Documentation/admin-guide/cputopology.rst). die_id is absent before Linux 5.2: 0 then.
fn read_topology(
    cpu_dir: &Path,
    cpus: &[usize],
) -> Result<vernier_model::environment::CpuTopology, String> {
    let number = |path: &Path| -> Result<i64, String> {
        let t = text(path)?;
        t.parse()
            .map_err(|_| format!("{}: not a number: '{t}'", path.display()))
    };
    let mut ids = Vec::with_capacity(cpus.len());
    for &cpu in cpus {
        let dir = cpu_dir.join(format!("cpu{cpu}/topology"));
        let package = number(&dir.join("physical_package_id"))?;
        let die = number(&dir.join("die_id")).unwrap_or(0);
        let core = number(&dir.join("core_id"))?;
        ids.push((package, die, core));
    }
    parse::summarize_topology(&ids).ok_or_else(|| "no online CPUs".to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, content: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    #[test]
    fn empty_tree_gives_empty_environment_with_reasons() {
        let dir = tempfile::tempdir().unwrap();
        let env = capture(&Roots::under(dir.path()));
        assert_eq!(env.kernel_release, None);
        assert_eq!(env.online_cpus, None);
        assert_eq!(env.virtualization, None);
        for field in [
            "kernel_release",
            "kernel_version",
            "kernel_cmdline",
            "arch",
            "cpu_model",
            "online_cpus",
            "memory_bytes",
            "hostname",
            "distro",
            "virtualization",
            "clocksource",
            "preemption",
            "governor",
            "kernel_config_sha256",
            "sysctls",
            "mitigations",
            "thp_enabled",
            "smt_control",
            "cpuidle_driver",
            "cgroup_version",
            "topology",
            "schedstat_version",
            "turbo",
            "tick",
            "tick_hz",
            "nohz_full_cpus",
        ] {
            assert!(env.unsupported.contains_key(field), "{field} not listed");
        }
    }

    #[test]
    fn the_boots_facts_are_read_once_per_boot_and_the_rest_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let roots = Roots::under(root);
        let cache = root.join("cache/environment.json");
        write(root, "proc/sys/kernel/random/boot_id", "boot-1\n");
        write(root, "proc/sys/kernel/osrelease", "6.9.0\n");
        write(
            root,
            "proc/cpuinfo",
            "processor\t: 0\nmodel name\t: First CPU\n",
        );
        write(root, "boot/config-6.9.0", "CONFIG_HZ=250\n");
        write(
            root,
            "sys/kernel/mm/transparent_hugepage/enabled",
            "[always] never\n",
        );
        let first = capture_with_kernel_config(&roots, Some(&cache), &Reads::new());
        assert_eq!(first.kernel_config.as_deref(), Some("CONFIG_HZ=250\n"));
        assert_eq!(
            first.environment.kernel_config_sha256,
            Some(sha256_hex("CONFIG_HZ=250\n"))
        );
        assert_eq!(first.environment.tick_hz, Some(250));
        assert_eq!(first.environment.cpu_model.as_deref(), Some("First CPU"));
        assert!(cache.is_file());
        // Within the boot the cached facts stand; what can change at run time is read anew.
        write(
            root,
            "proc/cpuinfo",
            "processor\t: 0\nmodel name\t: Second CPU\n",
        );
        write(
            root,
            "sys/kernel/mm/transparent_hugepage/enabled",
            "always [never]\n",
        );
        let second = capture_with_kernel_config(&roots, Some(&cache), &Reads::new());
        assert_eq!(second.environment.cpu_model.as_deref(), Some("First CPU"));
        assert_eq!(second.environment.thp_enabled.as_deref(), Some("never"));
        assert_eq!(second.kernel_config, first.kernel_config);
        assert_eq!(second.environment.tick_hz, Some(250));
        // The same capture as without a cache, but for the file that changed.
        let uncached = capture_with_kernel_config(&roots, None, &Reads::new());
        assert_eq!(
            uncached.environment.cpu_model.as_deref(),
            Some("Second CPU")
        );
        // A new /boot configuration file, and a new boot, are read anew.
        write(root, "boot/config-6.9.0", "CONFIG_HZ=1000\n");
        let third = capture_with_kernel_config(&roots, Some(&cache), &Reads::new());
        assert_eq!(third.environment.tick_hz, Some(1000));
        assert_eq!(third.environment.cpu_model.as_deref(), Some("Second CPU"));
        write(
            root,
            "proc/cpuinfo",
            "processor\t: 0\nmodel name\t: Third CPU\n",
        );
        write(root, "proc/sys/kernel/random/boot_id", "boot-2\n");
        let fourth = capture_with_kernel_config(&roots, Some(&cache), &Reads::new());
        assert_eq!(fourth.environment.cpu_model.as_deref(), Some("Third CPU"));
        // A cache that cannot be read is ignored (and replaced).
        std::fs::write(&cache, "garbage").unwrap();
        let fifth = capture_with_kernel_config(&roots, Some(&cache), &Reads::new());
        assert_eq!(fifth, fourth);
    }

    #[test]
    fn the_scheduling_options_kept_for_the_boot_tell_what_the_whole_configuration_tells() {
        let config = "CONFIG_PREEMPT_BUILD=y\n# CONFIG_PREEMPT_NONE is not set\n\
                      CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n\
                      CONFIG_NO_HZ_IDLE=y\nCONFIG_NO_HZ=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n\
                      CONFIG_SMP=y\nCONFIG_MODULES=y\n";
        let kept = scheduling_options(config);
        assert!(kept
            .keys()
            .all(|k| SCHEDULING_OPTIONS.iter().any(|p| k.starts_with(p))));
        assert!(!kept.contains_key("CONFIG_SMP"), "{kept:?}");
        let whole = vernier_model::environment::parse_kernel_config(config);
        let cmdline = Some("root=/dev/sda1 preempt=full");
        for (debugfs, version) in [
            (None, Some("#1 SMP PREEMPT_DYNAMIC")),
            (Some("none (voluntary) full"), None),
        ] {
            assert_eq!(
                parse::preemption_model(debugfs, Some(&kept), version, cmdline),
                parse::preemption_model(debugfs, Some(&whole), version, cmdline)
            );
        }
        for nohz_full in [None, Some("1")] {
            assert_eq!(
                parse::tick_mode(Some(&kept), cmdline, nohz_full),
                parse::tick_mode(Some(&whole), cmdline, nohz_full)
            );
        }
        assert_eq!(parse::config_hz(Some(&kept)), Ok(250));
    }

    #[test]
    fn kernel_config_from_gzip_or_boot() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::under(dir.path());
        write(dir.path(), "boot/config-6.9.0", "CONFIG_HZ=1000\n");
        assert_eq!(
            read_kernel_config(&roots, "6.9.0").unwrap(),
            "CONFIG_HZ=1000\n"
        );
        assert!(read_kernel_config(&roots, "6.8.0")
            .unwrap_err()
            .is_unsupported());
        assert!(read_kernel_config(&roots, "").unwrap_err().is_unsupported());
        assert!(read_kernel_config(&roots, "../etc/x")
            .unwrap_err()
            .is_unsupported());

        std::fs::create_dir_all(&roots.proc_root).unwrap();
        let file = std::fs::File::create(roots.proc_root.join("config.gz")).unwrap();
        let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
        gz.write_all(b"CONFIG_HZ=250\n").unwrap();
        gz.finish().unwrap();
        // /proc/config.gz describes the running kernel: it wins over /boot.
        assert_eq!(
            read_kernel_config(&roots, "6.9.0").unwrap(),
            "CONFIG_HZ=250\n"
        );

        std::fs::write(roots.proc_root.join("config.gz"), "not gzip").unwrap();
        assert!(matches!(
            read_kernel_config(&roots, "6.9.0"),
            Err(SysError::Parse { .. })
        ));
    }

    #[test]
    fn sha256_known_answer() {
        // FIPS 180-2 example "abc".
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn cgroup_versions() {
        let dir = tempfile::tempdir().unwrap();
        let cg = dir.path().join("fs/cgroup");
        assert!(cgroup_version(&cg).is_err());
        write(&cg, "cpu/tasks", "");
        assert_eq!(cgroup_version(&cg).unwrap(), "v1");
        write(&cg, "unified/cgroup.controllers", "");
        assert_eq!(cgroup_version(&cg).unwrap(), "hybrid");
        write(&cg, "cgroup.controllers", "cpu memory\n");
        assert_eq!(cgroup_version(&cg).unwrap(), "v2");
    }

    #[test]
    fn virtualization_evidence_order() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::under(dir.path());
        let x86_vm = "flags\t: fpu hypervisor\n";
        assert!(detect_virtualization(&roots, None).is_err());
        assert_eq!(
            detect_virtualization(&roots, Some("flags\t: fpu\n")).unwrap(),
            "none"
        );
        assert_eq!(
            detect_virtualization(&roots, Some(x86_vm)).unwrap(),
            "unknown-vm"
        );
        let mut dsdt = b"DSDTS\x0f\x00\x00\x02wFIRECKFCVMDSDT".to_vec();
        dsdt.resize(36, 0);
        std::fs::create_dir_all(dir.path().join("sys/firmware/acpi/tables")).unwrap();
        std::fs::write(dir.path().join("sys/firmware/acpi/tables/DSDT"), &dsdt).unwrap();
        assert_eq!(
            detect_virtualization(&roots, Some(x86_vm)).unwrap(),
            "firecracker"
        );
        write(dir.path(), "sys/class/dmi/id/sys_vendor", "QEMU\n");
        assert_eq!(detect_virtualization(&roots, Some(x86_vm)).unwrap(), "qemu");
        write(dir.path(), "proc/1/cgroup", "0::/docker/abc\n");
        assert_eq!(
            detect_virtualization(&roots, Some(x86_vm)).unwrap(),
            "qemu+docker"
        );
    }
}
