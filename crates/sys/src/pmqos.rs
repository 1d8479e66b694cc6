//! PM QoS CPU latency requests through /dev/cpu_dma_latency
//! (Documentation/power/pm_qos_interface.rst): writing a binary s32 of microseconds asks every
//! CPU to stay out of idle states whose exit latency is larger (0: no deep C-state), and the
//! request holds while the file stays open. `--setup dma-latency` holds one for a session; the
//! `latency` benchmark holds one for each run, as cyclictest does (`--latency`, default 0).

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Where the kernel offers the request.
pub const CPU_DMA_LATENCY: &str = "/dev/cpu_dma_latency";

/// Makes the request of `latency_us` at `path`; it holds until the returned file is closed (or
/// the process ends).
pub fn hold_cpu_latency(path: &Path, latency_us: i32) -> std::io::Result<File> {
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.write_all(&latency_us.to_ne_bytes())?;
    Ok(f)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_request_as_a_binary_s32() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cpu_dma_latency");
        std::fs::write(&path, b"").unwrap();
        let held = hold_cpu_latency(&path, 20).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), 20i32.to_ne_bytes());
        drop(held);
        assert!(hold_cpu_latency(&dir.path().join("absent"), 0).is_err());
    }
}
