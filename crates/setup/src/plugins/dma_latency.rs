//! `dma-latency`: hold a PM QoS CPU latency request for the session. The request is a binary
//! s32 in microseconds written to /dev/cpu_dma_latency, and it holds while the file is open
//! (Documentation/power/pm_qos_interface.rst): the guard keeps the file open, and closing it
//! (or the death of the process) is the restore.

use std::fs::File;
use std::path::{Path, PathBuf};

use vernier_model::spec::Spec;
use vernier_sys::Roots;

use super::{check_writable, option_f64, unavailable, Plugin, PluginHelp, PluginKind, When};
use crate::record::Change;
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct DmaLatency {
    path: PathBuf,
    latency_us: i32,
}

impl PluginKind for DmaLatency {
    const HELP: PluginHelp = PluginHelp {
        name: "dma-latency",
        help: "hold a PM QoS CPU latency request (/dev/cpu_dma_latency) for the session",
        options: &[(
            "us",
            "the latency limit in microseconds (default 0: no deep C-states)",
        )],
    };

    fn plan(spec: &Spec, roots: &Roots) -> Result<Self, SetupError> {
        let latency_us = option_f64(spec, "us", 0.0, 2e9)?.unwrap_or(0.0) as i32;
        let path = roots.dev_root.join("cpu_dma_latency");
        check_writable(&path).map_err(|r| unavailable(spec, r))?;
        Ok(DmaLatency { path, latency_us })
    }
}

impl Plugin for DmaLatency {
    fn when(&self) -> Option<When> {
        Some(When::Session)
    }

    fn changes(&self, _label: &str) -> Result<Vec<Change>, SetupError> {
        Ok(vec![Change::DmaLatency {
            path: self.path.clone(),
            latency_us: self.latency_us,
        }])
    }
}

/// Makes the request; it holds until the returned file is closed.
pub(crate) fn hold(path: &Path, latency_us: i32) -> Result<File, SetupError> {
    vernier_sys::pmqos::hold_cpu_latency(path, latency_us).map_err(|e| SetupError::io(path, e))
}
