//! The child side of a run, and the protocol between controller and child.
//!
//! The controller starts `vernier` again with a hidden subcommand for every run, writes one
//! [`ChildRequest`] as JSON to its stdin and reads one [`ChildReply`] from its stdout. The child
//! runs exactly one measurement; the controller, monitors and database stay in the parent, so
//! nothing of theirs shares the child's address space, caches or allocator state.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use serde::{Deserialize, Serialize};
use vernier_bench::RunContext;
use vernier_model::{ChildSetup, Options, RunHistogram};

/// What the child is to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildRequest {
    pub benchmark: String,
    pub options: Options,
    pub warmup: bool,
    pub index: u32,
    /// Real-time priority and CPU pinning the child applies to itself before measuring.
    #[serde(default)]
    pub setup: ChildSetup,
    /// The configuration's work directory, prepared once per session by the controller
    /// (`vernier_bench::Benchmark::prepare`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<std::path::PathBuf>,
    /// Seconds the run is expected to take, when its preparation measured it (the warm-up
    /// build of `compile`): the automatic run timeout's guide before any run has completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_s: Option<f64>,
}

/// What the child measured, or why it could not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildReply {
    Measured {
        values: BTreeMap<String, f64>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        histograms: Vec<RunHistogram>,
    },
    Failed {
        message: String,
    },
}

/// Finds the benchmark a request names: the built-ins, and the user's own where the binary
/// knows their directory (`vernier_bench::find`).
pub type Finder<'a> = &'a dyn Fn(&str) -> Option<Box<dyn vernier_bench::Benchmark>>;

/// Runs the child side: reads a request from `input`, measures the benchmark `find` finds,
/// writes the reply to `output`. Returns the process exit status (0 when measured).
pub fn child_main(mut input: impl Read, mut output: impl Write, find: Finder<'_>) -> i32 {
    // If the controller dies (kill -9), take the run down with it instead of running on.
    // SAFETY: prctl(PR_SET_PDEATHSIG) only changes a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let reply = match read_request(&mut input) {
        Ok(request) => measure(&request, find),
        Err(message) => ChildReply::Failed { message },
    };
    let status = match reply {
        ChildReply::Measured { .. } => 0,
        ChildReply::Failed { .. } => 1,
    };
    let text = serde_json::to_string(&reply).unwrap_or_else(|e| {
        format!(r#"{{"failed":{{"message":"cannot encode the reply: {e}"}}}}"#)
    });
    if output
        .write_all(text.as_bytes())
        .and_then(|_| output.flush())
        .is_err()
    {
        return 1;
    }
    status
}

fn read_request(input: &mut impl Read) -> Result<ChildRequest, String> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the run request: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("malformed run request: {e}"))
}

fn measure(request: &ChildRequest, find: Finder<'_>) -> ChildReply {
    let Some(benchmark) = find(&request.benchmark) else {
        return ChildReply::Failed {
            message: format!("unknown benchmark '{}'", request.benchmark),
        };
    };
    if let Err(e) = vernier_sys::sched::apply_child_setup(&request.setup) {
        return ChildReply::Failed {
            message: format!("cannot apply the run's setup: {e}"),
        };
    }
    let ctx = RunContext {
        warmup: request.warmup,
        index: request.index,
        work_dir: request.work_dir.clone(),
    };
    match benchmark.run(&request.options, &ctx) {
        Ok(m) => ChildReply::Measured {
            values: m.values,
            histograms: m.histograms,
        },
        Err(e) => ChildReply::Failed {
            message: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_request_is_a_failed_reply() {
        let mut out = Vec::new();
        let status = child_main(&b"{not json"[..], &mut out, &vernier_bench::builtin);
        assert_eq!(status, 1);
        let reply: ChildReply = serde_json::from_slice(&out).unwrap();
        assert!(matches!(reply, ChildReply::Failed { message } if message.contains("malformed")));
    }

    #[test]
    fn unknown_benchmark_is_a_failed_reply() {
        let req = ChildRequest {
            benchmark: "nope".into(),
            options: Options::default(),
            warmup: false,
            index: 0,
            setup: ChildSetup::default(),
            work_dir: None,
            expected_s: None,
        };
        let mut out = Vec::new();
        let status = child_main(
            serde_json::to_vec(&req).unwrap().as_slice(),
            &mut out,
            &vernier_bench::builtin,
        );
        assert_eq!(status, 1);
        let reply: ChildReply = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            reply,
            ChildReply::Failed {
                message: "unknown benchmark 'nope'".into()
            }
        );
    }

    #[test]
    fn reply_values_cross_the_pipe_bit_for_bit() {
        // Doubles that inexact decimal parsing reads one ulp off (serde_json without its
        // float_roundtrip feature), subnormals and extremes.
        let tricky = [
            0.9555510602119553,
            2.2250738585072014e-308,
            2.225073858507201e-308,
            5e-324,
            f64::MAX,
            9007199254740993.0,
            8.98846567431158e307,
            0.1 + 0.2,
            -0.0,
        ];
        let values: BTreeMap<String, f64> = tricky
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("v{i}"), *v))
            .collect();
        let text = serde_json::to_string(&ChildReply::Measured {
            values: values.clone(),
            histograms: Vec::new(),
        })
        .unwrap();
        let Ok(ChildReply::Measured { values: back, .. }) = serde_json::from_slice(text.as_bytes())
        else {
            panic!("{text}");
        };
        for (name, v) in &values {
            assert_eq!(back[name].to_bits(), v.to_bits(), "{name}: {v:e} in {text}");
        }
    }
}
