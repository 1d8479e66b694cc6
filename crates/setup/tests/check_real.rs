//! `system check` on the machine the tests run on.

#![allow(clippy::unwrap_used)]

use vernier_model::finding::Severity;
use vernier_setup::system_check;
use vernier_sys::Roots;

#[test]
fn finds_what_this_machine_has() {
    let findings = system_check(&Roots::real());
    assert!(!findings.is_empty());
    let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let hypervisor_flag = cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    if hypervisor_flag {
        let vm = findings.iter().find(|f| f.id == "virtual-machine");
        let vm = vm.unwrap_or_else(|| panic!("no virtual-machine finding in {ids:?}"));
        assert_eq!(vm.title, "virtual machine");
        assert_eq!(vm.severity, Severity::Warning);
    }
    let governor_files = std::path::Path::new("/sys/devices/system/cpu/cpu0/cpufreq").exists();
    assert_eq!(ids.contains(&"no-cpufreq"), !governor_files, "{ids:?}");
    if vernier_sys::affinity::current_affinity().unwrap().len() < 2 {
        eprintln!("skipped: the cross-CPU wake-up finding needs two CPUs");
    } else {
        let w = findings
            .iter()
            .find(|f| f.id == "cross-cpu-wakeup")
            .unwrap_or_else(|| panic!("no wake-up measurement in {ids:?}"));
        assert!(w.detail.contains("per round trip"), "{}", w.detail);
    }
    assert!(findings.windows(2).all(|w| w[0].severity >= w[1].severity));
}
