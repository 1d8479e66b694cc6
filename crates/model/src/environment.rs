//! The environment a session ran in, its fingerprint, and the grammar of the kernel
//! configuration it records ([`parse_kernel_config`]). How two environments differ (`env diff`)
//! is `vernier_analysis::environment`'s.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A snapshot of the machine and kernel. A field that could not be read is `None` (or an empty
/// map) and the reason is listed in `unsupported` ("unsupported is a value": a missing interface
/// never fails a run). Every field has a serde default, so JSON written before a field existed
/// still reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    pub kernel_release: Option<String>,
    pub kernel_version: Option<String>,
    pub kernel_cmdline: Option<String>,
    pub arch: Option<String>,
    pub cpu_model: Option<String>,
    /// Number of online CPUs.
    pub online_cpus: Option<u32>,
    /// The online CPU list as the kernel prints it, for example `0-1`.
    pub online_cpu_list: Option<String>,
    pub memory_bytes: Option<u64>,
    pub hostname: Option<String>,
    /// The machine's identity, /etc/machine-id (machine-id(5): 32 lowercase hex digits, set once
    /// when the system is installed), so sessions of one machine stay together when its
    /// hostname changes or two machines share one. Not part of the fingerprint: identical
    /// machines are one configuration.
    pub machine_id: Option<String>,
    pub distro: Option<String>,
    /// Hypervisor or container detected (`kvm`, `firecracker`, `docker`, `kvm+docker`), `none`
    /// when nothing indicates either.
    pub virtualization: Option<String>,
    pub clocksource: Option<String>,
    /// Preemption model: none, voluntary, full, lazy or rt, followed by ` (dynamic)` when the
    /// kernel can switch models at boot or run time (CONFIG_PREEMPT_DYNAMIC).
    pub preemption: Option<String>,
    /// Scaling governor: one name when every CPU uses the same one, otherwise per CPU
    /// (`cpu0=performance cpu1=powersave`). Absent without a cpufreq driver.
    pub governor: Option<String>,
    /// SHA-256 (hex) of the kernel configuration text; the text itself is stored once per
    /// distinct hash by the store.
    pub kernel_config_sha256: Option<String>,
    /// The cpufreq scaling driver (`intel_pstate`, `acpi-cpufreq`, ...).
    pub cpufreq_driver: Option<String>,
    /// Whether frequency boost (turbo) is enabled.
    pub turbo: Option<bool>,
    /// Tunables under /proc/sys/kernel and /proc/sys/vm (and the scheduler's debugfs knobs when
    /// readable), keyed as sysctl(8) names them: `kernel.sched_rt_runtime_us`.
    pub sysctls: BTreeMap<String, String>,
    /// /sys/devices/system/cpu/vulnerabilities: vulnerability -> kernel's mitigation status.
    pub mitigations: BTreeMap<String, String>,
    /// Transparent huge pages `enabled` mode (the bracketed value).
    pub thp_enabled: Option<String>,
    /// Transparent huge pages `defrag` mode (the bracketed value).
    pub thp_defrag: Option<String>,
    /// SMT control: on, off, forceoff, notsupported or notimplemented.
    pub smt_control: Option<String>,
    /// Whether SMT siblings are currently active.
    pub smt_active: Option<bool>,
    /// The cpuidle driver (`intel_idle`, `acpi_idle`, `haltpoll`) and governor (`menu`, `teo`,
    /// `ladder`, `haltpoll`), from /sys/devices/system/cpu/cpuidle.
    pub cpuidle_driver: Option<String>,
    pub cpuidle_governor: Option<String>,
    /// Whether the scheduler tick stops (Documentation/timers/no_hz.rst): `periodic` (never:
    /// CONFIG_HZ_PERIODIC, or `nohz=off` at boot), `nohz_idle` (on idle CPUs:
    /// CONFIG_NO_HZ_IDLE, or CONFIG_NO_HZ_FULL without nohz_full CPUs) or `nohz_full` (also on
    /// the nohz_full CPUs while they run a single task).
    pub tick: Option<String>,
    /// The tick rate, CONFIG_HZ.
    pub tick_hz: Option<u32>,
    /// The adaptive-tick CPUs (`nohz_full=`, /sys/devices/system/cpu/nohz_full) as a CPU list,
    /// empty when there are none; absent in kernels without CONFIG_NO_HZ_FULL.
    pub nohz_full_cpus: Option<String>,
    /// Control group hierarchy: `v2`, `hybrid` (v1 controllers beside a unified hierarchy) or
    /// `v1`.
    pub cgroup_version: Option<String>,
    pub topology: Option<CpuTopology>,
    /// Version of the /proc/schedstat format, present when the kernel has CONFIG_SCHEDSTATS.
    pub schedstat_version: Option<u32>,
    /// Versions of external tools a plan uses: tool -> version line.
    pub tool_versions: BTreeMap<String, String>,
    /// What could not be read, and why: field name -> reason.
    pub unsupported: BTreeMap<String, String>,
}

/// CPU topology summary over the online CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTopology {
    /// Physical packages.
    pub sockets: u32,
    /// Physical cores in all sockets.
    pub cores: u32,
    /// Hardware threads of the most populated core (2 with SMT active, 1 without).
    pub threads_per_core: u32,
}

impl fmt::Display for CpuTopology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sockets={} cores={} threads_per_core={}",
            self.sockets, self.cores, self.threads_per_core
        )
    }
}

/// Sysctls that the kernel changes by itself, so they would split the history of one machine
/// into many fingerprints. They are still captured and shown by [`diff`].
/// - `kernel.perf_event_max_sample_rate`: lowered by the kernel when perf interrupts take too
///   long ("perf: interrupt took too long ... lowering kernel.perf_event_max_sample_rate",
///   Documentation/admin-guide/sysctl/kernel.rst).
/// - `kernel.tainted`: set by the kernel on a warning or an out-of-tree module; a validity
///   concern for `system check`, not an identity of the environment.
pub const FINGERPRINT_EXCLUDED_SYSCTLS: &[&str] =
    &["kernel.perf_event_max_sample_rate", "kernel.tainted"];

impl Environment {
    /// The stable fields that identify an environment, as `(name, value)` pairs.
    ///
    /// Included: what a user sets up or installs and expects to be compared separately: kernel
    /// (release, build, command line, configuration hash, preemption model), hardware (arch, CPU
    /// model, online CPUs, topology, memory), distro, virtualization, clocksource and every
    /// tuning (governor, turbo, SMT, THP, cpuidle, cgroup version, mitigations, sysctls).
    ///
    /// Excluded: measured quantities and identities (hostname, machine id, free memory, load), sysctls
    /// the kernel changes by itself ([`FINGERPRINT_EXCLUDED_SYSCTLS`]), tool versions (they
    /// depend on which tools a plan uses, not on the machine; `env diff` still shows them), the
    /// schedstat format (implied by the kernel), the tick (`tick`, `tick_hz`,
    /// `nohz_full_cpus`: stable, but implied by the kernel configuration and command line,
    /// which are included; listing them would only change the fingerprint of every machine
    /// from the sessions stored before they were captured) and `unsupported`.
    ///
    /// The fields that existed first are always listed, empty when unknown; the fields added
    /// later are listed only when known, so a stored environment from before they existed keeps
    /// the fingerprint it was stored with.
    pub fn stable_fields(&self) -> Vec<(String, String)> {
        fn s<T: ToString>(v: &Option<T>) -> String {
            v.as_ref().map(|v| v.to_string()).unwrap_or_default()
        }
        let mut fields: Vec<(String, String)> = [
            ("kernel_release", s(&self.kernel_release)),
            ("kernel_version", s(&self.kernel_version)),
            ("kernel_cmdline", s(&self.kernel_cmdline)),
            ("arch", s(&self.arch)),
            ("cpu_model", s(&self.cpu_model)),
            ("online_cpus", s(&self.online_cpus)),
            ("memory_bytes", s(&self.memory_bytes)),
            ("distro", s(&self.distro)),
            ("virtualization", s(&self.virtualization)),
            ("clocksource", s(&self.clocksource)),
            ("preemption", s(&self.preemption)),
            ("governor", s(&self.governor)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let optional = [
            ("kernel_config_sha256", s(&self.kernel_config_sha256)),
            ("cpufreq_driver", s(&self.cpufreq_driver)),
            ("turbo", s(&self.turbo)),
            ("thp_enabled", s(&self.thp_enabled)),
            ("thp_defrag", s(&self.thp_defrag)),
            ("smt_control", s(&self.smt_control)),
            ("smt_active", s(&self.smt_active)),
            ("cpuidle_driver", s(&self.cpuidle_driver)),
            ("cpuidle_governor", s(&self.cpuidle_governor)),
            ("cgroup_version", s(&self.cgroup_version)),
            ("topology", s(&self.topology)),
        ];
        fields.extend(
            optional
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (k.to_string(), v)),
        );
        fields.extend(
            self.mitigations
                .iter()
                .map(|(k, v)| (format!("mitigations.{k}"), v.clone())),
        );
        fields.extend(
            self.sysctls
                .iter()
                .filter(|(k, _)| !FINGERPRINT_EXCLUDED_SYSCTLS.contains(&k.as_str()))
                .map(|(k, v)| (format!("sysctl.{k}"), v.clone())),
        );
        fields
    }

    /// A short hash (16 hex digits of SHA-256) of [`Environment::stable_fields`].
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        for (name, value) in self.stable_fields() {
            hasher.update(name.as_bytes());
            hasher.update([0]);
            hasher.update(value.as_bytes());
            hasher.update([0]);
        }
        let digest = hasher.finalize();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Parses a kernel `.config`: option -> value for every option that is set. `# CONFIG_X is not
/// set` and an absent option both mean unset (scripts/kconfig/confdata.c writes the former for
/// visible options that are off), so neither appears in the map.
pub fn parse_kernel_config(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.starts_with('#') {
                return None;
            }
            let (option, value) = line.split_once('=')?;
            let option = option.trim();
            option
                .starts_with("CONFIG_")
                .then(|| (option.to_string(), value.trim().to_string()))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_ignores_hostname_but_not_kernel() {
        let a = Environment {
            kernel_release: Some("6.18.0".into()),
            hostname: Some("a".into()),
            ..Default::default()
        };
        let b = Environment {
            hostname: Some("b".into()),
            ..a.clone()
        };
        let c = Environment {
            kernel_release: Some("6.19.0".into()),
            ..a.clone()
        };
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
        assert_eq!(a.fingerprint().len(), 16);
    }

    #[test]
    fn fingerprint_of_old_fields_is_unchanged_by_new_empty_ones() {
        // The value the original twelve-field fingerprint gave this environment (computed
        // independently with Python's hashlib): a stored session keeps its fingerprint after
        // the model grew.
        let env = Environment {
            kernel_release: Some("6.18.0".into()),
            online_cpus: Some(2),
            ..Default::default()
        };
        assert_eq!(env.fingerprint(), "a86fa4927085aeb9");
        assert_eq!(env.stable_fields().len(), 12);
    }

    #[test]
    fn fingerprint_covers_config_sysctls_and_mitigations_but_not_volatile_ones() {
        let base = Environment {
            kernel_release: Some("6.18.0".into()),
            kernel_config_sha256: Some("aa".into()),
            ..Default::default()
        };
        let other_config = Environment {
            kernel_config_sha256: Some("bb".into()),
            ..base.clone()
        };
        assert_ne!(base.fingerprint(), other_config.fingerprint());

        let mut tuned = base.clone();
        tuned
            .sysctls
            .insert("kernel.sched_rt_runtime_us".into(), "-1".into());
        assert_ne!(base.fingerprint(), tuned.fingerprint());

        let mut mitigated = base.clone();
        mitigated
            .mitigations
            .insert("meltdown".into(), "Mitigation: PTI".into());
        assert_ne!(base.fingerprint(), mitigated.fingerprint());

        let mut volatile = base.clone();
        volatile
            .sysctls
            .insert("kernel.perf_event_max_sample_rate".into(), "100000".into());
        volatile.tool_versions.insert("perf".into(), "6.1".into());
        volatile.schedstat_version = Some(17);
        volatile.unsupported.insert("governor".into(), "x".into());
        // Implied by the configuration and the command line, which are in the fingerprint.
        volatile.tick = Some("nohz_idle".into());
        volatile.tick_hz = Some(250);
        volatile.nohz_full_cpus = Some(String::new());
        assert_eq!(base.fingerprint(), volatile.fingerprint());
    }

    #[test]
    fn old_json_without_new_fields_still_reads() {
        let json =
            r#"{"kernel_release":"6.1.0","online_cpus":2,"unsupported":{"governor":"absent"}}"#;
        let env: Environment = serde_json::from_str(json).unwrap();
        assert_eq!(env.kernel_release.as_deref(), Some("6.1.0"));
        assert_eq!(env.online_cpus, Some(2));
        assert!(env.sysctls.is_empty());
        assert_eq!(env.topology, None);
        assert_eq!(
            (
                env.tick.is_none(),
                env.tick_hz,
                env.nohz_full_cpus.is_none()
            ),
            (true, None, true)
        );
        let back: Environment =
            serde_json::from_str(&serde_json::to_string(&env).unwrap()).unwrap();
        assert_eq!(back, env);
    }
}
