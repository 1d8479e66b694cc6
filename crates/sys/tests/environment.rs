//! Environment capture on a fixture tree that has what the reference machine lacks, and on the
//! running machine.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use vernier_model::environment::CpuTopology;
use vernier_sys::environment::{
    capture, read_kernel_config, record_tool_versions, sha256_hex, tools::find_on_path,
};
use vernier_sys::Roots;

fn fixture() -> Roots {
    Roots::under(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/qemu-smt"))
}

#[test]
fn fixture_fields() {
    let roots = fixture();
    let env = capture(&roots);

    assert_eq!(env.kernel_release.as_deref(), Some("6.9.0-rt5-test"));
    assert_eq!(
        env.kernel_version.as_deref(),
        Some("#1 SMP PREEMPT_RT Mon Jan  1 00:00:00 UTC 2024")
    );
    assert_eq!(
        env.kernel_cmdline.as_deref(),
        Some(
            "BOOT_IMAGE=/vmlinuz-6.9.0-rt5-test root=/dev/vda1 ro isolcpus=2,3 nohz_full=2,3 quiet"
        )
    );
    assert_eq!(env.arch.as_deref(), Some("x86_64"));
    assert_eq!(
        env.cpu_model.as_deref(),
        Some("AMD EPYC 7763 64-Core Processor")
    );
    assert_eq!(env.online_cpus, Some(4));
    assert_eq!(env.online_cpu_list.as_deref(), Some("0-3"));
    assert_eq!(env.memory_bytes, Some(8_126_464 * 1024));
    assert_eq!(env.hostname.as_deref(), Some("fixture-host"));
    assert_eq!(
        env.machine_id.as_deref(),
        Some("0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
        "read from /var/lib/dbus when /etc has none"
    );
    assert_eq!(
        env.distro.as_deref(),
        Some("Fedora Linux 40 (Server Edition)")
    );
    assert_eq!(env.virtualization.as_deref(), Some("qemu"));
    assert_eq!(env.preemption.as_deref(), Some("rt"));
    assert_eq!(
        env.governor.as_deref(),
        Some("cpu0=performance cpu1=performance cpu2=performance cpu3=powersave")
    );
    assert_eq!(env.cpufreq_driver.as_deref(), Some("acpi-cpufreq"));
    assert_eq!(env.turbo, Some(true));
    assert_eq!(env.smt_control.as_deref(), Some("on"));
    assert_eq!(env.smt_active, Some(true));
    assert_eq!(env.cgroup_version.as_deref(), Some("v2"));
    assert_eq!(
        env.topology,
        Some(CpuTopology {
            sockets: 1,
            cores: 2,
            threads_per_core: 2
        })
    );
    assert_eq!(env.schedstat_version, Some(17));
    assert_eq!(env.tick.as_deref(), Some("nohz_full"));
    assert_eq!(env.tick_hz, Some(1000));
    assert_eq!(env.nohz_full_cpus.as_deref(), Some("2-3"));

    // The configuration comes from /boot (no /proc/config.gz here); the hash is that of the
    // file, as `sha256sum` gives it.
    assert_eq!(
        env.kernel_config_sha256.as_deref(),
        Some("95b30c6ce4fea6574cc333df632614e6a9d16821b946ba2581765cc2cf45e3eb")
    );
    let config = read_kernel_config(&roots, "6.9.0-rt5-test").unwrap();
    assert!(config.contains("CONFIG_PREEMPT_RT=y"));

    let expected_mitigations: BTreeMap<String, String> = [
        ("meltdown", "Not affected"),
        (
            "retbleed",
            "Mitigation: untrained return thunk; SMT enabled with STIBP protection",
        ),
        (
            "spectre_v2",
            "Mitigation: Retpolines; IBPB: conditional; STIBP: always-on; RSB filling",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(env.mitigations, expected_mitigations);

    let expected_sysctls: BTreeMap<String, String> = [
        ("kernel.arch", "x86_64"),
        ("kernel.printk", "4 4 1 7"),
        ("kernel.pty.max", "4096"),
        ("kernel.sched_rt_runtime_us", "-1"),
        ("vm.swappiness", "10"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(env.sysctls, expected_sysctls);

    // What the fixture lacks, and nothing else.
    let unsupported: Vec<&str> = env.unsupported.keys().map(String::as_str).collect();
    assert_eq!(
        unsupported,
        vec![
            "clocksource",
            "cpuidle_driver",
            "cpuidle_governor",
            "thp_defrag",
            "thp_enabled"
        ]
    );
    assert!(env.unsupported["clocksource"].contains("current_clocksource"));
}

#[test]
fn a_machine_without_a_machine_id_records_it_as_unknown() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("etc")).unwrap();
    std::fs::write(dir.path().join("etc/machine-id"), "uninitialized\n").unwrap();
    let env = capture(&Roots::under(dir.path()));
    assert_eq!(env.machine_id, None);
    let why = &env.unsupported["machine_id"];
    assert!(
        why.contains("uninitialized") && why.contains("dbus"),
        "{why}"
    );
}

#[test]
fn fixture_capture_is_deterministic() {
    let a = capture(&fixture());
    let b = capture(&fixture());
    assert_eq!(a, b);
    assert_eq!(a.fingerprint(), b.fingerprint());
}

#[test]
fn real_machine() {
    let env = capture(&Roots::real());

    assert!(env.kernel_release.as_deref().is_some_and(|r| !r.is_empty()));
    assert!(env.kernel_version.is_some());
    assert!(env.kernel_cmdline.is_some());
    assert_eq!(env.arch.as_deref(), Some(std::env::consts::ARCH));
    assert!(env.cpu_model.is_some());
    assert!(env.online_cpus.is_some_and(|n| n >= 1));
    assert!(env.memory_bytes.is_some_and(|b| b > 0));
    assert!(env.clocksource.is_some());
    assert!(env.virtualization.is_some());
    assert!(env.preemption.is_some());
    assert!(env.distro.is_some());
    assert!(env.thp_enabled.is_some());
    assert!(env.cgroup_version.is_some());
    assert!(env.topology.is_some_and(|t| t.sockets >= 1 && t.cores >= 1));
    assert!(env.sysctls.contains_key("kernel.sched_rt_runtime_us"));
    assert!(env.sysctls.contains_key("vm.swappiness"));
    assert!(!env.sysctls.contains_key("kernel.random.boot_id"));
    assert!(!env.mitigations.is_empty());

    // The hash is that of the kernel configuration's text, where the kernel provides one
    // (/proc/config.gz with CONFIG_IKCONFIG_PROC, or /boot/config-RELEASE).
    match read_kernel_config(&Roots::real(), env.kernel_release.as_deref().unwrap()) {
        Ok(config) => {
            assert!(config.contains("CONFIG_"));
            assert_eq!(env.kernel_config_sha256, Some(sha256_hex(&config)));
        }
        Err(e) => {
            eprintln!("skipped: the kernel configuration hash: {e}");
            assert_eq!(env.kernel_config_sha256, None);
        }
    }

    // The tick where the kernel configuration tells it; the nohz_full CPUs exactly where the
    // kernel has them (CONFIG_NO_HZ_FULL).
    if env.kernel_config_sha256.is_some() {
        assert!(
            env.tick.is_some() && env.tick_hz.is_some(),
            "{:?}",
            env.unsupported
        );
    }
    let nohz_full = std::path::Path::new("/sys/devices/system/cpu/nohz_full").exists();
    assert_eq!(env.nohz_full_cpus.is_some(), nohz_full);
    assert_eq!(env.unsupported.contains_key("nohz_full_cpus"), !nohz_full);

    // A governor exactly where a cpufreq driver is (none in a KVM guest without one).
    let cpufreq =
        std::path::Path::new("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").exists();
    assert_eq!(env.governor.is_some(), cpufreq);
    assert_eq!(env.unsupported.contains_key("governor"), !cpufreq);

    // Two captures share their stable fields: no volatile field leaks in. Sysctls are left
    // out of this comparison because tests of other crates may change and restore one while
    // this runs.
    let stable = |e: &vernier_model::Environment| -> Vec<(String, String)> {
        e.stable_fields()
            .into_iter()
            .filter(|(k, _)| !k.starts_with("sysctl."))
            .collect()
    };
    assert_eq!(stable(&env), stable(&capture(&Roots::real())));
}

#[test]
fn real_tool_versions() {
    let mut env = capture(&Roots::real());
    record_tool_versions(&mut env, &["perf", "vernier-no-such-tool"]);
    assert!(env
        .unsupported
        .contains_key("tool_versions.vernier-no-such-tool"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    if find_on_path("perf", &path).is_some() {
        assert!(env.tool_versions["perf"].contains("perf version"));
    } else {
        assert!(env.unsupported.contains_key("tool_versions.perf"));
    }
}
