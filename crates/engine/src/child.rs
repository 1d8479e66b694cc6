//! The child side of a run, and the protocol between controller and child.
//!
//! The controller starts `vernier` again with a hidden subcommand for every run, writes one
//! [`ChildRequest`] as JSON to its stdin and reads one [`ChildReply`] from its stdout. The child
//! runs exactly one measurement; the controller, monitors and database stay in the parent, so
//! nothing of theirs shares the child's address space, caches or allocator state.
//!
//! A benchmark whose measured work is a process it starts afresh in every run
//! (`vernier_bench::Benchmark::measures_a_fresh_process`: `command`) is served instead: the
//! controller starts `vernier __child --serve` once for a configuration, and [`serve_main`]
//! reads one request per line and answers each with one [`ServedReply`] line, after a first
//! line [`SERVER_READY`] once it is ready. Every run's measured work is still a fresh process;
//! what stays warm is the process that spawns it, as in hyperfine, which spawns every
//! execution from one process. It spawns on its own CPU ([`crate::placement`]).

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};

use serde::{Deserialize, Serialize};
use vernier_bench::RunContext;
use vernier_model::{ChildSetup, Options, RunHistogram, Rusage};

use crate::placement::Placement;

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

/// What a served run process answers to one request: the reply and the resource usage of the
/// run (the server's own and that of the processes it waited for during the run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServedReply {
    pub reply: ChildReply,
    pub rusage: Rusage,
}

/// The first line a served run process writes, once it is ready for requests.
pub const SERVER_READY: &str = "ready";

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
        Ok(request) => measure(&request, find(&request.benchmark).as_deref(), 0, None),
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

/// Serves runs (see the module documentation): writes [`SERVER_READY`], then reads one
/// [`ChildRequest`] per line from `input` and writes one [`ServedReply`] per line to `output`,
/// until `input` ends (status 0) or a request or reply cannot cross (status 1).
pub fn serve_main(mut input: impl BufRead, mut output: impl Write, find: Finder<'_>) -> i32 {
    // SAFETY: prctl(PR_SET_PDEATHSIG) only changes a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let mut line = String::new();
    let written = |output: &mut dyn Write, text: &str| {
        output
            .write_all(text.as_bytes())
            .and_then(|_| output.write_all(b"\n"))
            .and_then(|_| output.flush())
            .is_ok()
    };
    if !written(&mut output, SERVER_READY) {
        return 1;
    }
    let placement = Placement::of_this_thread().filter(Placement::stay_home);
    let mut runs_before = 0u32;
    // The built-in benchmark of the last request, kept for the next request of the same name
    // (`vernier_bench::is_builtin`); a user's own is found afresh for every run, as a run in a
    // process of its own finds it.
    let mut kept: Option<(String, Box<dyn vernier_bench::Benchmark>)> = None;
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => return 0,
            Ok(_) => {}
            Err(_) => return 1,
        }
        let before = usage_so_far();
        let (reply, malformed) = match serde_json::from_str::<ChildRequest>(&line) {
            Ok(request) => {
                let (benchmark, builtin) = match kept.take() {
                    Some((name, benchmark)) if name == request.benchmark => (Some(benchmark), true),
                    _ => (
                        find(&request.benchmark),
                        vernier_bench::is_builtin(&request.benchmark),
                    ),
                };
                // A configuration pinned with `--setup pin` runs where it is pinned.
                let release_cpus = placement
                    .as_ref()
                    .filter(|_| request.setup.cpus.is_none())
                    .map(|p| p.allowed().to_vec());
                let reply = measure(&request, benchmark.as_deref(), runs_before, release_cpus);
                if let (Some(benchmark), true) = (benchmark, builtin) {
                    kept = Some((request.benchmark, benchmark));
                }
                (reply, false)
            }
            Err(e) => (
                ChildReply::Failed {
                    message: format!("malformed run request: {e}"),
                },
                true,
            ),
        };
        runs_before = runs_before.saturating_add(1);
        let rusage = usage_between(&before, &usage_so_far());
        let Ok(text) = serde_json::to_string(&ServedReply { reply, rusage }) else {
            return 1;
        };
        if !written(&mut output, &text) || malformed {
            return 1;
        }
    }
}

/// The resource usage of this process and of the children it waited for, so far
/// (getrusage(2), RUSAGE_SELF and RUSAGE_CHILDREN).
fn usage_so_far() -> Rusage {
    let get = |who| {
        // SAFETY: an all-zero rusage is valid; getrusage only writes into it.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid, writable rusage.
        unsafe { libc::getrusage(who, &mut ru) };
        ru
    };
    let (me, children) = (get(libc::RUSAGE_SELF), get(libc::RUSAGE_CHILDREN));
    let ns = |tv: libc::timeval| tv.tv_sec * 1_000_000_000 + tv.tv_usec * 1_000;
    Rusage {
        user_cpu_ns: ns(me.ru_utime) + ns(children.ru_utime),
        system_cpu_ns: ns(me.ru_stime) + ns(children.ru_stime),
        voluntary_cs: me.ru_nvcsw + children.ru_nvcsw,
        involuntary_cs: me.ru_nivcsw + children.ru_nivcsw,
        // KiB (getrusage(2)); the largest of either, which only grows: a run's own peak is
        // not told apart from an earlier run's.
        max_rss_bytes: me.ru_maxrss.max(children.ru_maxrss) * 1024,
    }
}

/// The usage between `before` and `after`; the maximum resident set size is `after`'s.
fn usage_between(before: &Rusage, after: &Rusage) -> Rusage {
    Rusage {
        user_cpu_ns: after.user_cpu_ns - before.user_cpu_ns,
        system_cpu_ns: after.system_cpu_ns - before.system_cpu_ns,
        voluntary_cs: after.voluntary_cs - before.voluntary_cs,
        involuntary_cs: after.involuntary_cs - before.involuntary_cs,
        max_rss_bytes: after.max_rss_bytes,
    }
}

fn measure(
    request: &ChildRequest,
    benchmark: Option<&dyn vernier_bench::Benchmark>,
    runs_before: u32,
    release_cpus: Option<Vec<usize>>,
) -> ChildReply {
    let Some(benchmark) = benchmark else {
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
        runs_before,
        trace_instance: request.setup.trace_instance.clone(),
        release_cpus,
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
    fn a_server_answers_each_request_line_until_its_input_ends() {
        let req = |benchmark: &str| {
            let mut text = serde_json::to_string(&ChildRequest {
                benchmark: benchmark.into(),
                options: Options::default(),
                warmup: false,
                index: 0,
                setup: ChildSetup::default(),
                work_dir: None,
                expected_s: None,
            })
            .unwrap();
            text.push('\n');
            text
        };
        let input = format!("{}{}", req("first"), req("second"));
        let seen = std::cell::RefCell::new(Vec::new());
        let mut out = Vec::new();
        let status = serve_main(input.as_bytes(), &mut out, &|name| {
            seen.borrow_mut().push(name.to_string());
            None
        });
        assert_eq!(status, 0);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], SERVER_READY);
        assert_eq!(lines.len(), 3, "{text}");
        let second: ServedReply = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(
            second.reply,
            ChildReply::Failed {
                message: "unknown benchmark 'second'".into()
            }
        );
        assert_eq!(*seen.borrow(), ["first", "second"]);
        // A built-in is found once for the requests of its name; another name, every time.
        let input = [req("mock"), req("mock"), req("absent"), req("absent")].concat();
        seen.borrow_mut().clear();
        let mut out = Vec::new();
        let status = serve_main(input.as_bytes(), &mut out, &|name| {
            seen.borrow_mut().push(name.to_string());
            vernier_bench::builtin(name)
        });
        assert_eq!(status, 0);
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 5);
        assert_eq!(*seen.borrow(), ["mock", "absent", "absent"]);
        // A request that is not one ends the server after its answer.
        let mut out = Vec::new();
        assert_eq!(serve_main(&b"{not json\n"[..], &mut out, &|_| None), 1);
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("malformed run request"));
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
