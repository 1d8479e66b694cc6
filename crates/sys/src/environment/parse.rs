//! Pure parsers of the files the environment capture reads. Each takes the file's text and
//! returns a value or a reason; reading happens in the parent module.

use std::collections::{BTreeMap, BTreeSet};

use vernier_model::environment::CpuTopology;

/// The CPU model from /proc/cpuinfo. The key differs between architectures
/// (arch/*/kernel/cpuinfo.c or proc.c): `model name` on x86 and loongarch (`Model Name`),
/// `cpu model` on MIPS, `cpu` on PowerPC, `uarch` on RISC-V, `Processor` on old ARM; arm64 has
/// only the implementer and part numbers (Documentation/arch/arm64/cpu-feature-registers.rst).
pub fn parse_cpuinfo_model(text: &str) -> Result<String, String> {
    let first = |wanted: &str| {
        text.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == wanted && !value.trim().is_empty()).then(|| value.trim().to_string())
        })
    };
    for key in [
        "model name",
        "Model Name",
        "cpu model",
        "cpu",
        "uarch",
        "Processor",
    ] {
        if let Some(model) = first(key) {
            return Ok(model);
        }
    }
    match (first("CPU implementer"), first("CPU part")) {
        (Some(implementer), Some(part)) => Ok(format!("implementer {implementer} part {part}")),
        _ => Err("no CPU model key in cpuinfo".to_string()),
    }
}

/// Whether the x86 `hypervisor` CPU flag is set (CPUID.1:ECX bit 31, which hypervisors set
/// for their guests; arch/x86/include/asm/cpufeatures.h).
pub fn cpuinfo_has_hypervisor_flag(text: &str) -> bool {
    text.lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(key, _)| key.trim() == "flags")
        .any(|(_, flags)| flags.split_whitespace().any(|f| f == "hypervisor"))
}

/// PRETTY_NAME (or NAME when absent) of os-release(5). Values may be quoted in shell style;
/// the quotes and backslash escapes are removed.
pub fn parse_os_release(text: &str) -> Result<String, String> {
    let get = |wanted: &str| {
        text.lines().find_map(|line| {
            let (key, value) = line.trim().split_once('=')?;
            (key == wanted).then(|| unquote(value))
        })
    };
    get("PRETTY_NAME")
        .or_else(|| get("NAME"))
        .filter(|v| !v.is_empty())
        .ok_or_else(|| "no PRETTY_NAME or NAME".to_string())
}

fn unquote(value: &str) -> String {
    let value = value.trim();
    let inner = if value.len() >= 2
        && ((value.starts_with('"') && value.ends_with('"'))
            || (value.starts_with('\'') && value.ends_with('\'')))
    {
        &value[1..value.len() - 1]
    } else {
        value
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The selected value of a sysfs choice file such as THP's `always [madvise] never`
/// (Documentation/admin-guide/mm/transhuge.rst).
pub fn parse_bracketed(text: &str) -> Result<String, String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .map(str::to_string)
        .ok_or_else(|| format!("no [selected] value in '{}'", text.trim()))
}

/// The current model in debugfs `sched/preempt`, which lists the models with the current one
/// in parentheses: `none (voluntary) full lazy` (kernel/sched/debug.c).
pub fn parse_debugfs_preempt(text: &str) -> Result<String, String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('(').and_then(|w| w.strip_suffix(')')))
        .map(str::to_string)
        .ok_or_else(|| format!("no (current) model in '{}'", text.trim()))
}

/// The preemption model, from the best source available:
/// 1. debugfs `sched/preempt`: the model in force now (it can be switched at run time);
/// 2. with CONFIG_PREEMPT_DYNAMIC, the `preempt=` boot parameter, which overrides the built-in
///    default (Documentation/admin-guide/kernel-parameters.txt);
/// 3. the kernel configuration: CONFIG_PREEMPT_RT, _LAZY, CONFIG_PREEMPT, _VOLUNTARY, _NONE
///    (kernel/Kconfig.preempt);
/// 4. the words of /proc/version, which init/version-timestamp.c builds from the same options
///    (`PREEMPT_RT`, `PREEMPT_DYNAMIC`, `PREEMPT_LAZY`, `PREEMPT`).
///
/// ` (dynamic)` is appended when the model can be switched (PREEMPT_DYNAMIC).
pub fn preemption_model(
    debugfs: Option<&str>,
    config: Option<&BTreeMap<String, String>>,
    version: Option<&str>,
    cmdline: Option<&str>,
) -> Result<String, String> {
    let version_words: BTreeSet<&str> = version
        .map(|v| v.split_whitespace().collect())
        .unwrap_or_default();
    let config_set = |option: &str| config.is_some_and(|c| c.get(option).is_some_and(|v| v == "y"));
    let dynamic = config_set("CONFIG_PREEMPT_DYNAMIC") || version_words.contains("PREEMPT_DYNAMIC");
    let with_dynamic = |model: &str| {
        if dynamic {
            format!("{model} (dynamic)")
        } else {
            model.to_string()
        }
    };

    if let Some(Ok(current)) = debugfs.map(parse_debugfs_preempt) {
        return Ok(format!("{current} (dynamic)"));
    }
    let boot_param = cmdline.and_then(|c| {
        c.split_whitespace()
            .take_while(|w| *w != "--")
            .filter_map(|w| w.strip_prefix("preempt="))
            .last()
    });
    if let (true, Some(model)) = (dynamic, boot_param) {
        return Ok(format!("{model} (dynamic)"));
    }
    if config.is_some() {
        for (option, model) in [
            ("CONFIG_PREEMPT_RT", "rt"),
            ("CONFIG_PREEMPT_LAZY", "lazy"),
            ("CONFIG_PREEMPT", "full"),
            ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
            ("CONFIG_PREEMPT_NONE", "none"),
        ] {
            if config_set(option) {
                return Ok(with_dynamic(model));
            }
        }
    }
    for (word, model) in [
        ("PREEMPT_RT", "rt"),
        ("PREEMPT_LAZY", "lazy"),
        ("PREEMPT", "full"),
    ] {
        if version_words.contains(word) {
            return Ok(with_dynamic(model));
        }
    }
    if let Some(model) = boot_param {
        // The parameter exists only in PREEMPT_DYNAMIC kernels.
        return Ok(format!("{model} (dynamic)"));
    }
    Err(if dynamic {
        "PREEMPT_DYNAMIC kernel, but neither debugfs nor the kernel configuration says which model is in force".to_string()
    } else {
        "no debugfs sched/preempt, kernel configuration or preemption word in /proc/version"
            .to_string()
    })
}

/// The adaptive-tick CPU list of /sys/devices/system/cpu/nohz_full (drivers/base/cpu.c prints
/// `tick_nohz_full_mask` as a CPU list): empty when there are none, which kernels whose mask
/// was never allocated print as `(null)`.
pub fn parse_nohz_full(text: &str) -> String {
    match text.trim() {
        "(null)" => String::new(),
        list => list.to_string(),
    }
}

/// Whether and where the scheduler tick stops (Documentation/timers/no_hz.rst): `periodic`,
/// `nohz_idle` or `nohz_full`, as [`vernier_model::Environment::tick`] describes them.
///
/// `nohz=off` on the command line keeps the tick running everywhere, also on nohz_full CPUs
/// (kernel/time/tick-sched.c: the NOHZ mode is never activated). Otherwise the kernel
/// configuration's tick choice (kernel/time/Kconfig) decides; without the configuration, the
/// presence of `nohz_full` in sysfs tells a CONFIG_NO_HZ_FULL kernel.
pub fn tick_mode(
    config: Option<&BTreeMap<String, String>>,
    cmdline: Option<&str>,
    nohz_full: Option<&str>,
) -> Result<String, String> {
    let nohz_off = cmdline.is_some_and(|c| {
        c.split_whitespace()
            .take_while(|w| *w != "--")
            .filter_map(|w| w.strip_prefix("nohz="))
            .last()
            .is_some_and(|v| v == "off")
    });
    let set = |option: &str| config.is_some_and(|c| c.get(option).is_some_and(|v| v == "y"));
    let full_kernel = set("CONFIG_NO_HZ_FULL") || (config.is_none() && nohz_full.is_some());
    let mode = if nohz_off || set("CONFIG_HZ_PERIODIC") {
        "periodic"
    } else if full_kernel && nohz_full.is_some_and(|cpus| !cpus.is_empty()) {
        "nohz_full"
    } else if full_kernel || set("CONFIG_NO_HZ_IDLE") {
        "nohz_idle"
    } else if config.is_some() {
        // Before Linux 3.10 there was only CONFIG_NO_HZ (idle ticks stopped).
        if set("CONFIG_NO_HZ") {
            "nohz_idle"
        } else {
            "periodic"
        }
    } else {
        return Err(
            "no kernel configuration to tell CONFIG_NO_HZ_IDLE from CONFIG_HZ_PERIODIC".into(),
        );
    };
    Ok(mode.to_string())
}

/// CONFIG_HZ, the tick rate, from the kernel configuration.
pub fn config_hz(config: Option<&BTreeMap<String, String>>) -> Result<u32, String> {
    let config = config.ok_or("no kernel configuration")?;
    let hz = config
        .get("CONFIG_HZ")
        .ok_or("no CONFIG_HZ in the kernel configuration")?;
    hz.parse()
        .map_err(|_| format!("CONFIG_HZ is not a number: '{hz}'"))
}

/// The hypervisor named by DMI strings (/sys/class/dmi/id), using the vendor table of
/// systemd's detect-virt (src/basic/virt.c): vendor, product or BIOS vendor prefixes.
pub fn dmi_hypervisor(values: &[&str]) -> Option<&'static str> {
    const TABLE: &[(&str, &str)] = &[
        ("KVM", "kvm"),
        ("OpenStack", "kvm"),
        ("KubeVirt", "kvm"),
        ("Amazon EC2", "amazon"),
        ("QEMU", "qemu"),
        ("VMware", "vmware"),
        ("VMW", "vmware"),
        ("innotek GmbH", "virtualbox"),
        ("VirtualBox", "virtualbox"),
        ("Oracle Corporation", "virtualbox"),
        ("Xen", "xen"),
        ("Bochs", "bochs"),
        ("Parallels", "parallels"),
        ("BHYVE", "bhyve"),
        ("Hyper-V", "hyperv"),
        ("Apple Virtualization", "apple"),
        ("Google Compute Engine", "google"),
        ("Firecracker", "firecracker"),
    ];
    let trimmed: Vec<&str> = values.iter().map(|v| v.trim()).collect();
    for value in &trimmed {
        if let Some((_, name)) = TABLE.iter().find(|(prefix, _)| value.starts_with(prefix)) {
            return Some(name);
        }
    }
    // Hyper-V guests say "Microsoft Corporation" / "Virtual Machine"; the vendor alone is
    // also that of Surface hardware.
    if trimmed.contains(&"Microsoft Corporation") && trimmed.contains(&"Virtual Machine") {
        return Some("hyperv");
    }
    None
}

/// The hypervisor named by the OEM ID of an ACPI table header (bytes 10..16, ACPI
/// specification 5.2.6). Guests without DMI, such as Firecracker's, still have ACPI tables
/// written by their VMM.
pub fn acpi_oem_hypervisor(header: &[u8]) -> Option<&'static str> {
    let oem = header.get(10..16)?;
    let oem = String::from_utf8_lossy(oem);
    let oem = oem.trim_end_matches([' ', '\0']);
    match oem {
        "FIRECK" => Some("firecracker"),
        "BOCHS" => Some("qemu"),
        "VBOX" => Some("virtualbox"),
        "VRTUAL" => Some("hyperv"),
        "Xen" => Some("xen"),
        "AMAZON" => Some("amazon"),
        _ => None,
    }
}

/// A container engine named in /proc/1/cgroup paths (cgroups(7)): `docker`, `podman`
/// (libpod), `kubernetes` (kubepods) or `lxc`. Empty under a cgroup namespace, where every
/// path is `/`.
pub fn cgroup_container(text: &str) -> Option<&'static str> {
    for line in text.lines() {
        let path = line.splitn(3, ':').nth(2).unwrap_or("");
        if path.contains("kubepods") {
            return Some("kubernetes");
        }
        if path.contains("libpod") {
            return Some("podman");
        }
        if path.contains("/docker") || path.contains("docker-") {
            return Some("docker");
        }
        if path.contains("/lxc") || path.contains("lxc.payload") {
            return Some("lxc");
        }
    }
    None
}

/// Governors by CPU as one value: the name when all agree, else `cpu0=x cpu1=y`.
pub fn format_governors(governors: &BTreeMap<usize, String>) -> Option<String> {
    let distinct: BTreeSet<&String> = governors.values().collect();
    match distinct.len() {
        0 => None,
        1 => distinct.into_iter().next().cloned(),
        _ => Some(
            governors
                .iter()
                .map(|(cpu, g)| format!("cpu{cpu}={g}"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

/// Sockets, cores and threads per core from `(physical_package_id, die_id, core_id)` of each
/// online CPU (Documentation/admin-guide/cputopology.rst: core_id is unique only within a
/// package and die).
pub fn summarize_topology(cpus: &[(i64, i64, i64)]) -> Option<CpuTopology> {
    if cpus.is_empty() {
        return None;
    }
    let sockets: BTreeSet<i64> = cpus.iter().map(|c| c.0).collect();
    let mut cores: BTreeMap<(i64, i64, i64), u32> = BTreeMap::new();
    for &cpu in cpus {
        *cores.entry(cpu).or_default() += 1;
    }
    Some(CpuTopology {
        sockets: u32::try_from(sockets.len()).unwrap_or(u32::MAX),
        cores: u32::try_from(cores.len()).unwrap_or(u32::MAX),
        threads_per_core: cores.values().copied().max().unwrap_or(1),
    })
}

/// The format version on the first line of /proc/schedstat (`version 15`;
/// Documentation/scheduler/sched-stats.rst).
pub fn parse_schedstat_version(text: &str) -> Result<u32, String> {
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix("version "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| "no 'version N' first line".to_string())
}

/// A sysfs boolean: `1`/`0` (also `on`/`off`, `Y`/`N`).
pub fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim() {
        "1" | "on" | "Y" | "y" => Ok(true),
        "0" | "off" | "N" | "n" => Ok(false),
        other => Err(format!("not a boolean: '{other}'")),
    }
}

/// A machine id (machine-id(5)): 32 hexadecimal digits, returned in lowercase. `uninitialized`
/// (written during a first boot) and anything else is no id.
pub fn parse_machine_id(text: &str) -> Result<String, String> {
    let id = text.trim();
    if id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(id.to_ascii_lowercase())
    } else {
        Err(format!(
            "'{}' is not a machine id (32 hexadecimal digits)",
            id.escape_debug()
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn machine_ids_are_32_hex_digits() {
        assert_eq!(
            parse_machine_id("3D1219C7c4c5404aaa1f6d2a48adfda4\n").unwrap(),
            "3d1219c7c4c5404aaa1f6d2a48adfda4"
        );
        for bad in [
            "",
            "uninitialized",
            "3d1219c7",
            "3d1219c7c4c5404aaa1f6d2a48adfdzz",
        ] {
            assert!(parse_machine_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpu_model_per_architecture() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu hypervisor lm\n";
        assert_eq!(
            parse_cpuinfo_model(x86).unwrap(),
            "Intel(R) Xeon(R) Processor"
        );
        assert!(cpuinfo_has_hypervisor_flag(x86));
        assert!(!cpuinfo_has_hypervisor_flag(
            "flags\t: fpu hypervisor_x lm\n"
        ));
        assert_eq!(
            parse_cpuinfo_model("processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n")
                .unwrap(),
            "POWER9 (raw), altivec supported"
        );
        assert_eq!(
            parse_cpuinfo_model("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n")
                .unwrap(),
            "implementer 0x41 part 0xd0c"
        );
        assert!(parse_cpuinfo_model("processor\t: 0\n").is_err());
    }

    #[test]
    fn os_release_quoting() {
        let text = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            parse_os_release(text).unwrap(),
            "Debian GNU/Linux 12 (bookworm)"
        );
        assert_eq!(parse_os_release("NAME=Alpine\n").unwrap(), "Alpine");
        assert_eq!(
            parse_os_release("PRETTY_NAME='A \\\"b\\\"'\n").unwrap(),
            "A \"b\""
        );
        assert!(parse_os_release("ID=x\n").is_err());
    }

    #[test]
    fn bracketed_and_debugfs_choices() {
        assert_eq!(
            parse_bracketed("always [madvise] never\n").unwrap(),
            "madvise"
        );
        assert_eq!(
            parse_bracketed("always defer defer+madvise [madvise] never").unwrap(),
            "madvise"
        );
        assert!(parse_bracketed("always madvise never").is_err());
        assert_eq!(
            parse_debugfs_preempt("none (voluntary) full lazy\n").unwrap(),
            "voluntary"
        );
        assert!(parse_debugfs_preempt("none voluntary").is_err());
    }

    #[test]
    fn preemption_sources_in_order() {
        let config = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let dynamic_none = config(&[
            ("CONFIG_PREEMPT_NONE", "y"),
            ("CONFIG_PREEMPT_DYNAMIC", "y"),
        ]);
        let version = "#1 SMP PREEMPT_DYNAMIC @0";
        // debugfs wins over everything.
        assert_eq!(
            preemption_model(
                Some("none voluntary (full) lazy"),
                Some(&dynamic_none),
                Some(version),
                Some("preempt=none")
            )
            .unwrap(),
            "full (dynamic)"
        );
        // The boot parameter overrides the built-in default of a dynamic kernel.
        assert_eq!(
            preemption_model(
                None,
                Some(&dynamic_none),
                Some(version),
                Some("quiet preempt=voluntary")
            )
            .unwrap(),
            "voluntary (dynamic)"
        );
        // The configuration, as on the reference machine.
        assert_eq!(
            preemption_model(None, Some(&dynamic_none), Some(version), Some("quiet")).unwrap(),
            "none (dynamic)"
        );
        let rt = config(&[("CONFIG_PREEMPT_RT", "y"), ("CONFIG_PREEMPT", "y")]);
        assert_eq!(preemption_model(None, Some(&rt), None, None).unwrap(), "rt");
        // /proc/version alone.
        assert_eq!(
            preemption_model(None, None, Some("#1 SMP PREEMPT_RT Tue"), None).unwrap(),
            "rt"
        );
        assert_eq!(
            preemption_model(None, None, Some("#1 SMP PREEMPT Tue"), None).unwrap(),
            "full"
        );
        assert!(preemption_model(None, None, Some(version), None).is_err());
        assert!(preemption_model(None, None, Some("#1 SMP Tue"), None).is_err());
        // A preempt= word after "--" belongs to init, not to the kernel.
        assert!(preemption_model(None, None, Some(version), Some("-- preempt=full")).is_err());
        assert_eq!(
            preemption_model(None, None, Some(version), Some("preempt=full")).unwrap(),
            "full (dynamic)"
        );
    }

    #[test]
    fn hypervisors_from_dmi_and_acpi() {
        assert_eq!(
            dmi_hypervisor(&["QEMU\n", "Standard PC (Q35 + ICH9, 2009)\n"]),
            Some("qemu")
        );
        assert_eq!(dmi_hypervisor(&["Red Hat", "KVM"]), Some("kvm"));
        assert_eq!(
            dmi_hypervisor(&["VMware, Inc.", "VMware7,1"]),
            Some("vmware")
        );
        assert_eq!(
            dmi_hypervisor(&["Microsoft Corporation", "Virtual Machine"]),
            Some("hyperv")
        );
        assert_eq!(
            dmi_hypervisor(&["Microsoft Corporation", "Surface Pro"]),
            None
        );
        assert_eq!(dmi_hypervisor(&["Dell Inc.", "PowerEdge R640"]), None);

        let mut header = b"DSDTS\x0f\x00\x00\x02wFIRECKFCVMDSDT".to_vec();
        assert_eq!(acpi_oem_hypervisor(&header), Some("firecracker"));
        header[10..16].copy_from_slice(b"BOCHS ");
        assert_eq!(acpi_oem_hypervisor(&header), Some("qemu"));
        header[10..16].copy_from_slice(b"DELL  ");
        assert_eq!(acpi_oem_hypervisor(&header), None);
        assert_eq!(acpi_oem_hypervisor(b"DSDT"), None);
    }

    fn config(text: &str) -> BTreeMap<String, String> {
        vernier_model::environment::parse_kernel_config(text)
    }

    #[test]
    fn tick_modes_from_config_cmdline_and_sysfs() {
        // This machine's configuration (Linux 6.18, KVM guest).
        let idle = config(
            "CONFIG_NO_HZ_COMMON=y\n# CONFIG_HZ_PERIODIC is not set\nCONFIG_NO_HZ_IDLE=y\n\
             # CONFIG_NO_HZ_FULL is not set\nCONFIG_NO_HZ=y\nCONFIG_HZ=250\n",
        );
        assert_eq!(
            tick_mode(Some(&idle), Some("ro quiet"), None).unwrap(),
            "nohz_idle"
        );
        assert_eq!(
            tick_mode(Some(&idle), Some("ro nohz=off"), None).unwrap(),
            "periodic"
        );
        assert_eq!(
            tick_mode(Some(&idle), Some("nohz=off nohz=on"), None).unwrap(),
            "nohz_idle"
        );
        // After `--` the words belong to init.
        assert_eq!(
            tick_mode(Some(&idle), Some("-- nohz=off"), None).unwrap(),
            "nohz_idle"
        );
        assert_eq!(config_hz(Some(&idle)).unwrap(), 250);

        let full = config("CONFIG_NO_HZ_COMMON=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_HZ=1000\n");
        assert_eq!(
            tick_mode(Some(&full), None, Some("2-3")).unwrap(),
            "nohz_full"
        );
        assert_eq!(tick_mode(Some(&full), None, Some("")).unwrap(), "nohz_idle");
        assert_eq!(
            tick_mode(Some(&full), Some("nohz=off"), Some("2-3")).unwrap(),
            "periodic"
        );

        let periodic = config("CONFIG_HZ_PERIODIC=y\nCONFIG_HZ=100\n");
        assert_eq!(tick_mode(Some(&periodic), None, None).unwrap(), "periodic");
        let old = config("CONFIG_NO_HZ=y\n");
        assert_eq!(tick_mode(Some(&old), None, None).unwrap(), "nohz_idle");
        assert_eq!(
            tick_mode(Some(&config("")), None, None).unwrap(),
            "periodic"
        );

        // Without the configuration only a nohz_full file tells.
        assert_eq!(tick_mode(None, None, Some("1")).unwrap(), "nohz_full");
        assert_eq!(tick_mode(None, None, Some("")).unwrap(), "nohz_idle");
        assert!(tick_mode(None, Some("quiet"), None).is_err());
        assert_eq!(tick_mode(None, Some("nohz=off"), None).unwrap(), "periodic");

        assert_eq!(parse_nohz_full("(null)\n"), "");
        assert_eq!(parse_nohz_full("\n"), "");
        assert_eq!(parse_nohz_full("2-3,6\n"), "2-3,6");
        assert!(config_hz(None).is_err());
        assert!(config_hz(Some(&config("CONFIG_HZ=x\n"))).is_err());
        assert!(config_hz(Some(&config("CONFIG_NO_HZ=y\n"))).is_err());
    }

    #[test]
    fn containers_from_cgroup_paths() {
        assert_eq!(
            cgroup_container("12:pids:/docker/0123abcd\n0::/docker/0123abcd\n"),
            Some("docker")
        );
        assert_eq!(
            cgroup_container("0::/system.slice/docker-0123.scope\n"),
            Some("docker")
        );
        assert_eq!(
            cgroup_container("0::/kubepods/besteffort/pod1/abc\n"),
            Some("kubernetes")
        );
        assert_eq!(cgroup_container("9:name=systemd:/\n0::/\n"), None);
        assert_eq!(cgroup_container("0::/init.scope\n"), None);
    }

    #[test]
    fn governors_compact_when_equal() {
        let mut g = BTreeMap::new();
        assert_eq!(format_governors(&g), None);
        g.insert(0, "performance".to_string());
        g.insert(1, "performance".to_string());
        assert_eq!(format_governors(&g).unwrap(), "performance");
        g.insert(10, "powersave".to_string());
        assert_eq!(
            format_governors(&g).unwrap(),
            "cpu0=performance cpu1=performance cpu10=powersave"
        );
    }

    #[test]
    fn topology_counts() {
        assert_eq!(summarize_topology(&[]), None);
        // Two sockets, two cores each, SMT: core ids repeat across sockets.
        let cpus = [
            (0, 0, 0),
            (0, 0, 1),
            (1, 0, 0),
            (1, 0, 1),
            (0, 0, 0),
            (0, 0, 1),
            (1, 0, 0),
            (1, 0, 1),
        ];
        assert_eq!(
            summarize_topology(&cpus).unwrap(),
            CpuTopology {
                sockets: 2,
                cores: 4,
                threads_per_core: 2
            }
        );
        assert_eq!(
            summarize_topology(&[(0, 0, 0), (0, 0, 1)]).unwrap(),
            CpuTopology {
                sockets: 1,
                cores: 2,
                threads_per_core: 1
            }
        );
    }

    #[test]
    fn small_values() {
        assert_eq!(
            parse_schedstat_version("version 17\ntimestamp 1\n").unwrap(),
            17
        );
        assert!(parse_schedstat_version("cpu0 1 2\n").is_err());
        assert!(parse_bool("1\n").unwrap());
        assert!(!parse_bool("0").unwrap());
        assert!(parse_bool("2").is_err());
    }
}
