//! `dma-latency`: hold a PM QoS CPU latency request for the session. The request is a binary
//! s32 in microseconds written to /dev/cpu_dma_latency, and it holds while the file is open
//! (Documentation/power/pm_qos_interface.rst): the guard keeps the file open, and closing it
//! (or the death of the process) is the restore.

use std::fs::File;
use std::path::{Path, PathBuf};

use vernier_model::spec::Spec;
use vernier_model::{Description, OptionDefault, OptionKind, OptionSpec, OptionValue, Options};
use vernier_sys::Roots;

use super::{check_writable, unavailable, Plugin, PluginKind, When};
use crate::record::Change;
use crate::SetupError;

#[derive(Debug)]
pub(crate) struct DmaLatency {
    path: PathBuf,
    latency_us: i32,
}

impl PluginKind for DmaLatency {
    fn describe() -> Description {
        Description::new(
            "dma-latency",
            "hold a PM QoS CPU latency request (/dev/cpu_dma_latency) for the session",
        )
        .with_options(vec![OptionSpec::new(
            "us",
            // The request is an s32 (Documentation/power/pm_qos_interface.rst).
            OptionKind::UInt {
                min: 0,
                max: i32::MAX as u64,
            },
            OptionDefault::Value(OptionValue::UInt(0)),
        )
        .unit("us")
        .help("the latency limit; 0: no deep C-states")])
    }

    fn plan(spec: &Spec, options: &Options, roots: &Roots) -> Result<Self, SetupError> {
        let latency_us = i32::try_from(options.uint("us")).unwrap_or(i32::MAX);
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
