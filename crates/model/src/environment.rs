//! The environment a session ran in, and its fingerprint.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A snapshot of the machine and kernel. A field that could not be read is `None` and the reason
/// is listed in `unsupported` ("unsupported is a value": a missing interface never fails a run).
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
    pub distro: Option<String>,
    /// Hypervisor or container detected, `none` on bare metal.
    pub virtualization: Option<String>,
    pub clocksource: Option<String>,
    /// Preemption model: none, voluntary, full, lazy or rt (with `dynamic` when switchable).
    pub preemption: Option<String>,
    /// Scaling governor per CPU (`cpu0=performance`), absent without a cpufreq driver.
    pub governor: Option<String>,
    /// What could not be read, and why: field name -> reason.
    pub unsupported: BTreeMap<String, String>,
}

impl Environment {
    /// The stable fields that identify an environment, as `(name, value)` pairs. Measured
    /// quantities and volatile facts (hostname, free memory, load) are deliberately absent, so two
    /// sessions on the same kernel, configuration and hardware share a fingerprint.
    pub fn stable_fields(&self) -> Vec<(&'static str, String)> {
        fn s<T: ToString>(v: &Option<T>) -> String {
            v.as_ref().map(|v| v.to_string()).unwrap_or_default()
        }
        vec![
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
    }
}

impl Environment {
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

#[cfg(test)]
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
}
