//! How two environments differ (`vernier env diff` and the report site's environment pages):
//! field by field, the kernel command line parameter by parameter, and their kernel
//! configurations option by option, as the OSADL QA Farm's kernel configuration comparison
//! shows them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use vernier_model::environment::parse_kernel_config;
use vernier_model::Environment;

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
    use vernier_model::environment::CpuTopology;

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
