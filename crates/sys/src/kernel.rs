//! The kernel running now, as a bisection of kernels checks it after a boot: its release
//! (`uname -r`: proc(5), /proc/sys/kernel/osrelease) and the boot id (random(4):
//! /proc/sys/kernel/random/boot_id, new at every boot), read under the given roots.

use crate::{read_file, Roots, SysError};

/// The running kernel's release and the id of the boot that brought it up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningKernel {
    pub release: String,
    pub boot_id: String,
}

/// Reads the running kernel under `roots` (an empty file is unsupported, as a missing one).
pub fn read_running_kernel(roots: &Roots) -> Result<RunningKernel, SysError> {
    let dir = roots.proc_root.join("sys/kernel");
    let field = |name: &str| -> Result<String, SysError> {
        let path = dir.join(name);
        let text = read_file(&path)?.trim().to_string();
        if text.is_empty() {
            return Err(SysError::Unsupported {
                what: format!("{} is empty", path.display()),
            });
        }
        Ok(text)
    };
    Ok(RunningKernel {
        release: field("osrelease")?,
        boot_id: field("random/boot_id")?,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_fixture_tree_and_the_machine() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::under(dir.path());
        assert!(read_running_kernel(&roots).is_err());
        let kernel = dir.path().join("proc/sys/kernel");
        std::fs::create_dir_all(kernel.join("random")).unwrap();
        std::fs::write(kernel.join("osrelease"), "6.18.0-c1\n").unwrap();
        std::fs::write(kernel.join("random/boot_id"), "\n").unwrap();
        assert!(read_running_kernel(&roots).is_err(), "an empty boot id");
        std::fs::write(kernel.join("random/boot_id"), "b-1\n").unwrap();
        assert_eq!(
            read_running_kernel(&roots).unwrap(),
            RunningKernel {
                release: "6.18.0-c1".into(),
                boot_id: "b-1".into()
            }
        );
        // The machine's own, where procfs shows them.
        if let Ok(k) = read_running_kernel(&Roots::real()) {
            assert!(!k.release.is_empty() && !k.boot_id.is_empty());
        }
    }
}
