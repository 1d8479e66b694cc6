//! The roots of the file systems vernier reads and writes. Every reader, monitor, setup plugin
//! and check takes them as a parameter, so the same code works on the running machine or on a
//! fixture tree (sysinfo's `proc_path` pattern). This is the only root-path type of vernier.

use std::path::{Path, PathBuf};

/// Where /proc, /sys, /etc, /boot, /dev and /var are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    pub proc_root: PathBuf,
    pub sys_root: PathBuf,
    pub etc_root: PathBuf,
    pub boot_root: PathBuf,
    /// For device files such as /dev/cpu_dma_latency.
    pub dev_root: PathBuf,
    /// For state kept under /var, such as /var/lib/dbus/machine-id.
    pub var_root: PathBuf,
}

impl Roots {
    /// The running machine: /proc, /sys, /etc, /boot, /dev and /var.
    pub fn real() -> Self {
        Self::under(Path::new("/"))
    }

    /// A tree that mirrors the machine: `dir/proc`, `dir/sys`, `dir/etc`, `dir/boot`, `dir/dev`
    /// and `dir/var`.
    pub fn under(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        Roots {
            proc_root: dir.join("proc"),
            sys_root: dir.join("sys"),
            etc_root: dir.join("etc"),
            boot_root: dir.join("boot"),
            dev_root: dir.join("dev"),
            var_root: dir.join("var"),
        }
    }

    /// Whether these are the running machine's roots. Facts that only a system call can give
    /// (uname, PATH lookups) describe the running machine and are used only then.
    pub fn is_real(&self) -> bool {
        *self == Self::real()
    }
}

impl Default for Roots {
    fn default() -> Self {
        Self::real()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_and_under() {
        let real = Roots::real();
        assert_eq!(real.proc_root, PathBuf::from("/proc"));
        assert_eq!(real.sys_root, PathBuf::from("/sys"));
        assert_eq!(real.etc_root, PathBuf::from("/etc"));
        assert_eq!(real.boot_root, PathBuf::from("/boot"));
        assert_eq!(real.dev_root, PathBuf::from("/dev"));
        assert_eq!(real.var_root, PathBuf::from("/var"));
        assert!(real.is_real());

        let fixture = Roots::under("/tmp/x");
        assert_eq!(fixture.proc_root, PathBuf::from("/tmp/x/proc"));
        assert_eq!(fixture.boot_root, PathBuf::from("/tmp/x/boot"));
        assert_eq!(fixture.dev_root, PathBuf::from("/tmp/x/dev"));
        assert!(!fixture.is_real());
    }
}
