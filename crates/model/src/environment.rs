//! The environment a session ran in, its fingerprint, and the difference between two
//! environments (`env diff`), including an OSADL-style kernel configuration diff.

use std::collections::{BTreeMap, BTreeSet};
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

/// One difference between two environments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDifference {
    /// "kernel", "cmdline", "cpu", "memory", "system", "sysctl", "mitigations" or "tools".
    pub group: &'static str,
    /// The field, the command line parameter, the sysctl, the vulnerability or the tool.
    pub field: String,
    /// Value in the first environment (`None`: absent or unknown).
    pub a: Option<String>,
    /// Value in the second environment.
    pub b: Option<String>,
}

/// How two environments differ: [`diff`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EnvDiff {
    /// The fields that both environments recorded and that differ.
    pub differences: Vec<EnvDifference>,
    /// How many fields only the first environment recorded; they are not compared.
    pub only_a: usize,
    /// How many fields only the second environment recorded; they are not compared.
    pub only_b: usize,
}

impl EnvDiff {
    /// Whether nothing differs and both recorded the same fields.
    pub fn is_empty(&self) -> bool {
        self.differences.is_empty() && self.only_a == 0 && self.only_b == 0
    }

    /// One line on the fields that only one side recorded, the sides named `a` and `b`
    /// (`218 fields recorded only by environment 1 are not compared`); `None` when there are
    /// none.
    pub fn not_compared(&self, a: &str, b: &str) -> Option<String> {
        let count = |n: usize, side: &str| {
            (n > 0).then(|| {
                format!(
                    "{n} field{} recorded only by {side}",
                    if n == 1 { "" } else { "s" }
                )
            })
        };
        let parts: Vec<String> = [count(self.only_a, a), count(self.only_b, b)]
            .into_iter()
            .flatten()
            .collect();
        match parts.len() {
            0 => None,
            1 => Some(format!(
                "{} {} not compared",
                parts[0],
                if self.only_a + self.only_b == 1 {
                    "is"
                } else {
                    "are"
                }
            )),
            _ => Some(format!("{} are not compared", parts.join(" and "))),
        }
    }
}

/// What differs between `a` and `b`, grouped and in a fixed order (groups as listed in
/// [`EnvDifference::group`], fields in declaration or key order). The kernel command line is
/// compared parameter by parameter (see [`parse_cmdline`]) so a long command line shows only
/// what changed.
///
/// Only the fields that both environments recorded are compared; the others are counted in
/// [`EnvDiff::only_a`] and [`EnvDiff::only_b`]. An environment recorded a field when it has a
/// value (a non-empty map, a command line) or when its `unsupported` says why the field could
/// not be read: vernier's capture looked for it, so its absence is a difference (a machine
/// without cpufreq). A session imported from a tool's output recorded only what that output
/// says (cyclictest's JSON: the kernel, the host name, the architecture, its version), and
/// an environment stored before a field existed lacks it; against either, every field of the
/// other side would otherwise be a difference. A field unknown on both sides is no difference.
pub fn diff(a: &Environment, b: &Environment) -> EnvDiff {
    fn s<T: ToString>(v: &Option<T>) -> Option<String> {
        v.as_ref().map(|v| v.to_string())
    }
    // Whether `e` looked for the field `name`: it has a value or says why it has none.
    fn looked(e: &Environment, name: &str, has_value: bool) -> bool {
        has_value
            || e.unsupported.contains_key(name)
            // The online CPU list is read with the number of online CPUs.
            || (name == "online_cpu_list" && e.unsupported.contains_key("online_cpus"))
    }
    let mut out = EnvDiff::default();
    // Compares a field that both recorded, or counts `fields` of it for the side that did.
    let mut push = |group: &'static str,
                    field: &str,
                    (x, looked_a): (Option<String>, bool),
                    (y, looked_b): (Option<String>, bool)| {
        match (looked_a, looked_b) {
            (true, true) if x != y => out.differences.push(EnvDifference {
                group,
                field: field.to_string(),
                a: x,
                b: y,
            }),
            (true, false) if x.is_some() => out.only_a += 1,
            (false, true) if y.is_some() => out.only_b += 1,
            _ => {}
        }
    };
    // Compares one field of both environments under its own name.
    macro_rules! field {
        ($group:literal, $name:ident) => {{
            let name = stringify!($name);
            let (x, y) = (s(&a.$name), s(&b.$name));
            let (la, lb) = (looked(a, name, x.is_some()), looked(b, name, y.is_some()));
            push($group, name, (x, la), (y, lb))
        }};
    }

    field!("kernel", kernel_release);
    field!("kernel", kernel_version);
    field!("kernel", kernel_config_sha256);
    field!("kernel", preemption);
    field!("kernel", schedstat_version);
    field!("kernel", tick);
    field!("kernel", tick_hz);
    field!("kernel", nohz_full_cpus);

    let (ca, cb) = (
        looked(a, "kernel_cmdline", a.kernel_cmdline.is_some()),
        looked(b, "kernel_cmdline", b.kernel_cmdline.is_some()),
    );
    let pa = cmdline_map(a.kernel_cmdline.as_deref());
    let pb = cmdline_map(b.kernel_cmdline.as_deref());
    let keys: BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
    for key in keys {
        push(
            "cmdline",
            key,
            (pa.get(key).cloned(), ca),
            (pb.get(key).cloned(), cb),
        );
    }

    field!("cpu", arch);
    field!("cpu", cpu_model);
    field!("cpu", online_cpus);
    field!("cpu", online_cpu_list);
    field!("cpu", topology);
    field!("cpu", governor);
    field!("cpu", cpufreq_driver);
    field!("cpu", turbo);
    field!("cpu", smt_control);
    field!("cpu", smt_active);
    field!("cpu", cpuidle_driver);
    field!("cpu", cpuidle_governor);

    field!("memory", memory_bytes);
    field!("memory", thp_enabled);
    field!("memory", thp_defrag);

    field!("system", hostname);
    field!("system", machine_id);
    field!("system", distro);
    field!("system", virtualization);
    field!("system", clocksource);
    field!("system", cgroup_version);

    for (group, name, ma, mb) in [
        ("sysctl", "sysctls", &a.sysctls, &b.sysctls),
        ("mitigations", "mitigations", &a.mitigations, &b.mitigations),
    ] {
        let (la, lb) = (
            looked(a, name, !ma.is_empty()),
            looked(b, name, !mb.is_empty()),
        );
        let keys: BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
        for key in keys {
            push(
                group,
                key,
                (ma.get(key).cloned(), la),
                (mb.get(key).cloned(), lb),
            );
        }
    }
    // Tool versions belong to a plan (the tools it runs), not to the machine: a tool that only
    // one session used is a difference between them, not a field the other failed to record.
    let tools: BTreeSet<&String> = a
        .tool_versions
        .keys()
        .chain(b.tool_versions.keys())
        .collect();
    for tool in tools {
        let (x, y) = (
            a.tool_versions.get(tool).cloned(),
            b.tool_versions.get(tool).cloned(),
        );
        push("tools", tool, (x, true), (y, true));
    }
    out
}

/// Splits a kernel command line into `(parameter name, word)` pairs, in order.
///
/// Words are separated by white space outside double quotes, as the kernel's `next_arg()`
/// does (lib/cmdline.c, Documentation/admin-guide/kernel-parameters.rst); the name is the part
/// before the first `=`. Everything after a lone `--` is passed to init and is returned as one
/// pair named `--`.
pub fn parse_cmdline(cmdline: &str) -> Vec<(String, String)> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    for c in cmdline.chars() {
        if c == '"' {
            in_quotes = !in_quotes;
            current.push(c);
        } else if c.is_whitespace() && !in_quotes {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        words.push(current);
    }

    let mut out = Vec::new();
    let mut iter = words.into_iter();
    for word in iter.by_ref() {
        if word == "--" {
            break;
        }
        let name = word
            .split_once('=')
            .map_or(word.as_str(), |(name, _)| name)
            .trim_matches('"')
            .to_string();
        out.push((name, word));
    }
    let init: Vec<String> = iter.collect();
    if !init.is_empty() {
        out.push(("--".to_string(), init.join(" ")));
    }
    out
}

/// Parameter name -> its words; a parameter given more than once (`console=ttyS0
/// console=tty0`) keeps all its words, in order, separated by a space.
fn cmdline_map(cmdline: Option<&str>) -> BTreeMap<String, String> {
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    for (name, word) in parse_cmdline(cmdline.unwrap_or("")) {
        map.entry(name)
            .and_modify(|v| {
                v.push(' ');
                v.push_str(&word);
            })
            .or_insert(word);
    }
    map
}

/// One kernel configuration option that differs between two configurations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigChange {
    /// The option, for example `CONFIG_HZ`.
    pub option: String,
    /// Value in the first configuration; `None` when unset or absent.
    pub a: Option<String>,
    /// Value in the second configuration.
    pub b: Option<String>,
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

/// The options set in one configuration and not in the other, or set to different values, in
/// option order, as the OSADL QA Farm's kernel configuration comparison shows them.
pub fn kernel_config_diff(a: &str, b: &str) -> Vec<ConfigChange> {
    let ca = parse_kernel_config(a);
    let cb = parse_kernel_config(b);
    let options: BTreeSet<&String> = ca.keys().chain(cb.keys()).collect();
    options
        .into_iter()
        .filter_map(|option| {
            let (x, y) = (ca.get(option), cb.get(option));
            (x != y).then(|| ConfigChange {
                option: option.clone(),
                a: x.cloned(),
                b: y.cloned(),
            })
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

    #[test]
    fn parses_cmdline_with_quotes_and_init_arguments() {
        let words = parse_cmdline("ro quiet  acpi_osi=\"Windows 2020\" console=ttyS0 -- --init x");
        assert_eq!(
            words,
            vec![
                ("ro".to_string(), "ro".to_string()),
                ("quiet".to_string(), "quiet".to_string()),
                (
                    "acpi_osi".to_string(),
                    "acpi_osi=\"Windows 2020\"".to_string()
                ),
                ("console".to_string(), "console=ttyS0".to_string()),
                ("--".to_string(), "--init x".to_string()),
            ]
        );
        assert!(parse_cmdline("  \n").is_empty());
    }

    #[test]
    fn diff_reports_cmdline_parameters_only_in_a_only_in_b_and_changed() {
        let a = Environment {
            kernel_cmdline: Some("quiet mitigations=auto console=ttyS0 isolcpus=1".into()),
            ..Default::default()
        };
        let b = Environment {
            kernel_cmdline: Some("console=ttyS0 mitigations=off nohz_full=1 quiet".into()),
            ..Default::default()
        };
        let d = diff(&a, &b);
        let got: Vec<(&str, &str, Option<&str>, Option<&str>)> = d
            .differences
            .iter()
            .map(|x| (x.group, x.field.as_str(), x.a.as_deref(), x.b.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("cmdline", "isolcpus", Some("isolcpus=1"), None),
                (
                    "cmdline",
                    "mitigations",
                    Some("mitigations=auto"),
                    Some("mitigations=off")
                ),
                ("cmdline", "nohz_full", None, Some("nohz_full=1")),
            ]
        );
    }

    #[test]
    fn diff_groups_fields_and_maps_and_is_empty_for_equal_environments() {
        let mut a = Environment {
            kernel_release: Some("6.18.0".into()),
            cpu_model: Some("Xeon".into()),
            memory_bytes: Some(1 << 30),
            hostname: Some("a".into()),
            thp_enabled: Some("madvise".into()),
            topology: Some(CpuTopology {
                sockets: 1,
                cores: 2,
                threads_per_core: 1,
            }),
            ..Default::default()
        };
        a.sysctls.insert("vm.swappiness".into(), "60".into());
        a.sysctls.insert("kernel.pid_max".into(), "4194304".into());
        a.mitigations
            .insert("meltdown".into(), "Not affected".into());
        a.tool_versions
            .insert("perf".into(), "perf version 6.1".into());
        assert!(diff(&a, &a.clone()).is_empty());

        let mut b = a.clone();
        b.kernel_release = Some("6.19.0".into());
        // A field vernier looked for and could not read is a difference.
        b.hostname = None;
        b.unsupported.insert("hostname".into(), "unreadable".into());
        b.thp_enabled = Some("always".into());
        b.topology = Some(CpuTopology {
            sockets: 1,
            cores: 2,
            threads_per_core: 2,
        });
        b.sysctls.insert("vm.swappiness".into(), "10".into());
        b.sysctls.remove("kernel.pid_max");
        b.mitigations.insert("retbleed".into(), "Vulnerable".into());
        b.tool_versions.clear();
        // Unsupported entries are not differences of the environment itself.
        b.unsupported.insert("governor".into(), "absent".into());

        let d = diff(&a, &b);
        let got: Vec<(&str, &str, Option<&str>, Option<&str>)> = d
            .differences
            .iter()
            .map(|x| (x.group, x.field.as_str(), x.a.as_deref(), x.b.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("kernel", "kernel_release", Some("6.18.0"), Some("6.19.0")),
                (
                    "cpu",
                    "topology",
                    Some("sockets=1 cores=2 threads_per_core=1"),
                    Some("sockets=1 cores=2 threads_per_core=2")
                ),
                ("memory", "thp_enabled", Some("madvise"), Some("always")),
                ("system", "hostname", Some("a"), None),
                ("sysctl", "kernel.pid_max", Some("4194304"), None),
                ("sysctl", "vm.swappiness", Some("60"), Some("10")),
                ("mitigations", "retbleed", None, Some("Vulnerable")),
                ("tools", "perf", Some("perf version 6.1"), None),
            ]
        );
        assert_eq!((d.only_a, d.only_b), (0, 0));
        assert_eq!(d.not_compared("A", "B"), None);
    }

    #[test]
    fn diff_compares_only_the_fields_both_recorded() {
        // A full capture against what cyclictest's JSON says of its machine.
        let mut full = Environment {
            kernel_release: Some("6.18.0".into()),
            kernel_cmdline: Some("quiet console=ttyS0".into()),
            arch: Some("x86_64".into()),
            hostname: Some("a".into()),
            ..Default::default()
        };
        full.sysctls.insert("vm.swappiness".into(), "60".into());
        full.sysctls
            .insert("kernel.pid_max".into(), "4194304".into());
        full.unsupported
            .insert("governor".into(), "no cpufreq".into());
        let mut partial = Environment {
            kernel_release: Some("6.19.0".into()),
            arch: Some("x86_64".into()),
            hostname: Some("b".into()),
            ..Default::default()
        };
        partial
            .tool_versions
            .insert("cyclictest".into(), "2.40".into());
        let d = diff(&full, &partial);
        let fields: Vec<&str> = d.differences.iter().map(|x| x.field.as_str()).collect();
        assert_eq!(fields, ["kernel_release", "hostname", "cyclictest"]);
        // Two command line parameters and two sysctls; the governor has no value to count.
        assert_eq!((d.only_a, d.only_b), (4, 0));
        assert_eq!(
            d.not_compared("environment 1", "environment 2").as_deref(),
            Some("4 fields recorded only by environment 1 are not compared")
        );
        partial.sysctls.insert("vm.swappiness".into(), "10".into());
        let back = diff(&partial, &full);
        assert_eq!((back.only_a, back.only_b), (0, 2));
        assert_eq!(
            back.not_compared("A", "B").as_deref(),
            Some("2 fields recorded only by B are not compared")
        );
        assert_eq!(
            diff(&partial, &partial.clone()).not_compared("a", "b"),
            None
        );
    }

    #[test]
    fn kernel_config_diff_treats_not_set_as_unset() {
        let a = "\
#
# Automatically generated file; DO NOT EDIT.
#
CONFIG_HZ_250=y
CONFIG_HZ=250
# CONFIG_PREEMPT_RT is not set
CONFIG_PREEMPT_NONE=y
CONFIG_LOCALVERSION=\"-a\"
CONFIG_ONLY_A=m
";
        let b = "\
CONFIG_HZ_1000=y
CONFIG_HZ=1000
CONFIG_PREEMPT_RT=y
CONFIG_PREEMPT_NONE=y
CONFIG_LOCALVERSION=\"-b\"
# CONFIG_ONLY_A is not set
";
        let changes = kernel_config_diff(a, b);
        let c = |o: &str, x: Option<&str>, y: Option<&str>| ConfigChange {
            option: o.into(),
            a: x.map(Into::into),
            b: y.map(Into::into),
        };
        assert_eq!(
            changes,
            vec![
                c("CONFIG_HZ", Some("250"), Some("1000")),
                c("CONFIG_HZ_1000", None, Some("y")),
                c("CONFIG_HZ_250", Some("y"), None),
                c("CONFIG_LOCALVERSION", Some("\"-a\""), Some("\"-b\"")),
                c("CONFIG_ONLY_A", Some("m"), None),
                c("CONFIG_PREEMPT_RT", None, Some("y")),
            ]
        );
        assert!(kernel_config_diff(a, a).is_empty());
        // "is not set" on one side and absent on the other are the same: no change.
        assert!(kernel_config_diff("# CONFIG_X is not set\n", "").is_empty());
    }
}
