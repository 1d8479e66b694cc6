//! `perf-bench`: one execution of `perf bench` per run (tools/perf/bench in the kernel tree,
//! Debian package linux-perf), its default output parsed into metrics.
//!
//! `bench=` chooses the benchmark, and with it the metric:
//!
//! | bench | perf command | metric |
//! |---|---|---|
//! | sched-messaging | `perf bench sched messaging [-g G] [-l L] [-p] [-t]` | `time`, s: its "Total time" |
//! | sched-pipe | `perf bench sched pipe [-l L] [-T]` | `time_per_op`, us ("usecs/op") |
//! | syscall-basic | `perf bench syscall basic [-l L]` | `time_per_op`, us ("usecs/op") |
//! | mem-memcpy, mem-memset | `perf bench mem memcpy -f F -s S [-l L]` | `bandwidth`, GiB/s |
//! | futex-hash | `perf bench futex hash [-r R] [-t T] [-f F] [-S]` | `ops_per_sec`, ops/s ("Averaged") |
//!
//! sched-pipe and syscall-basic also store `ops_per_sec` and the `total_time` in s. perf's
//! "GB/sec" divides by 1024^3 (`print_bps` in tools/perf/bench/mem-functions.c), hence GiB/s.
//! The default output is parsed, not `--format=simple`: that prints only the total time of
//! the sched and syscall benchmarks (no usecs/op) and bytes/sec of the mem ones, and futex
//! hash ignores it.
//!
//! Options that perf takes only for some benchmarks are refused with another `bench` unless
//! left at their defaults; a numeric 0 leaves perf's own default (loops: sched messaging 100,
//! sched pipe 1000000, syscall 10000000, mem 1; groups 10; futex runtime 10 s, threads: the
//! online CPUs, futexes 1024). perf's mem benchmarks time with gettimeofday: a buffer copied
//! too fast for its microseconds prints `inf`, which fails the run (raise size or loops).
//! None of these benchmarks needs root or a perf_event_paranoid setting: they time with
//! clocks, not perf events.

use std::collections::BTreeMap;

use vernier_model::{BenchmarkInfo, MetricInfo, Options};
use vernier_sys::MachineLimits;

use crate::opts::{choice, choice_spec, text_spec, uint, uint_spec};
use crate::tool::{missing, number, Tool};
use crate::{BenchError, Benchmark, Measurement, RunContext};

const PERF: Tool = Tool {
    program: "perf",
    package: "linux-perf",
};

const NAME: &str = "perf-bench";

/// The metrics, by name.
pub const TIME: &str = "time";
pub const TIME_PER_OP: &str = "time_per_op";
pub const OPS_PER_SEC: &str = "ops_per_sec";
pub const TOTAL_TIME: &str = "total_time";
pub const BANDWIDTH: &str = "bandwidth";

/// The benchmarks of `perf bench` this adapter runs, in the order of the `bench` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfBench {
    SchedMessaging,
    SchedPipe,
    SyscallBasic,
    MemMemcpy,
    MemMemset,
    FutexHash,
}

const BENCHES: &[&str] = &[
    "sched-messaging",
    "sched-pipe",
    "syscall-basic",
    "mem-memcpy",
    "mem-memset",
    "futex-hash",
];

impl PerfBench {
    fn from_index(i: usize) -> PerfBench {
        match i {
            0 => PerfBench::SchedMessaging,
            1 => PerfBench::SchedPipe,
            2 => PerfBench::SyscallBasic,
            3 => PerfBench::MemMemcpy,
            4 => PerfBench::MemMemset,
            _ => PerfBench::FutexHash,
        }
    }

    /// perf's collection and benchmark names.
    fn command(self) -> [&'static str; 2] {
        match self {
            PerfBench::SchedMessaging => ["sched", "messaging"],
            PerfBench::SchedPipe => ["sched", "pipe"],
            PerfBench::SyscallBasic => ["syscall", "basic"],
            PerfBench::MemMemcpy => ["mem", "memcpy"],
            PerfBench::MemMemset => ["mem", "memset"],
            PerfBench::FutexHash => ["futex", "hash"],
        }
    }

    /// The options this benchmark passes to perf.
    fn takes(self) -> &'static [&'static str] {
        match self {
            PerfBench::SchedMessaging => &["loops", "groups", "ipc", "tasks"],
            PerfBench::SchedPipe => &["loops", "tasks"],
            PerfBench::SyscallBasic => &["loops"],
            PerfBench::MemMemcpy | PerfBench::MemMemset => &["loops", "size", "function"],
            PerfBench::FutexHash => &["runtime", "threads", "futexes", "shared"],
        }
    }

    fn metrics(self) -> (MetricInfo, Vec<MetricInfo>) {
        let m = |name: &str, unit: &str, higher_is_better| MetricInfo {
            name: name.into(),
            unit: unit.into(),
            higher_is_better,
        };
        match self {
            PerfBench::SchedMessaging => (m(TIME, "s", false), vec![]),
            PerfBench::SchedPipe | PerfBench::SyscallBasic => (
                m(TIME_PER_OP, "us", false),
                vec![m(OPS_PER_SEC, "ops/s", true), m(TOTAL_TIME, "s", false)],
            ),
            PerfBench::MemMemcpy | PerfBench::MemMemset => (m(BANDWIDTH, "GiB/s", true), vec![]),
            PerfBench::FutexHash => (m(OPS_PER_SEC, "ops/s", true), vec![]),
        }
    }
}

pub struct PerfBenchmark;

impl PerfBenchmark {
    fn bench(&self, options: &Options) -> Result<PerfBench, BenchError> {
        Ok(PerfBench::from_index(choice(
            &self.info(),
            options,
            "bench",
        )?))
    }

    /// The arguments of `perf bench` for a configuration.
    fn args(&self, options: &Options) -> Result<Vec<String>, BenchError> {
        let info = self.info();
        let bench = self.bench(options)?;
        let mut args: Vec<String> = bench.command().iter().map(|s| s.to_string()).collect();
        let mut number_arg = |name: &str, flag: &str| -> Result<(), BenchError> {
            let v = uint(&info, options, name)?;
            if v > 0 {
                args.extend([flag.to_string(), v.to_string()]);
            }
            Ok(())
        };
        match bench {
            PerfBench::SchedMessaging => {
                number_arg("groups", "-g")?;
                number_arg("loops", "-l")?;
            }
            PerfBench::SchedPipe | PerfBench::SyscallBasic => number_arg("loops", "-l")?,
            PerfBench::MemMemcpy | PerfBench::MemMemset => number_arg("loops", "-l")?,
            PerfBench::FutexHash => {
                number_arg("runtime", "-r")?;
                number_arg("threads", "-t")?;
                number_arg("futexes", "-f")?;
            }
        }
        match bench {
            PerfBench::SchedMessaging => {
                if choice(&info, options, "ipc")? == 1 {
                    args.push("-p".into());
                }
                if choice(&info, options, "tasks")? == 1 {
                    args.push("-t".into());
                }
            }
            PerfBench::SchedPipe => {
                if choice(&info, options, "tasks")? == 1 {
                    args.push("-T".into());
                }
            }
            PerfBench::MemMemcpy | PerfBench::MemMemset => {
                args.extend([
                    "-f".to_string(),
                    options.text("function").to_string(),
                    "-s".to_string(),
                    options.text("size").to_string(),
                ]);
            }
            PerfBench::FutexHash => {
                if choice(&info, options, "shared")? == 1 {
                    args.push("-S".into());
                }
            }
            PerfBench::SyscallBasic => {}
        }
        Ok(args)
    }
}

impl Benchmark for PerfBenchmark {
    fn info(&self) -> BenchmarkInfo {
        let (metric, secondary_metrics) = PerfBench::SchedMessaging.metrics();
        BenchmarkInfo::new(
            NAME,
            "1",
            "perf bench (linux-perf): sched messaging and pipe, syscall basic, \
                          mem memcpy and memset, futex hash; the metric follows bench",
            metric,
        )
        .with_secondary_metrics(secondary_metrics)
        .with_options(vec![
            choice_spec("bench", BENCHES, "the perf benchmark to run"),
            uint_spec(
                "loops",
                0,
                0,
                1_000_000_000,
                "",
                "perf's -l (sched, syscall, mem); 0: perf's default",
            ),
            uint_spec(
                "groups",
                0,
                0,
                10_000,
                "",
                "sched-messaging's groups of 20 senders and 20 receivers; 0: perf's 10",
            ),
            choice_spec(
                "ipc",
                &["socket", "pipe"],
                "sched-messaging: socketpairs or pipes (-p)",
            ),
            choice_spec(
                "tasks",
                &["process", "thread"],
                "sched-messaging (-t), sched-pipe (-T): processes or threads",
            ),
            text_spec("size", "1MB", "mem: buffer size, B, KB, MB or GB (-s)"),
            text_spec(
                "function",
                "default",
                "mem: the one implementation to time (-f); perf bench mem memcpy -f help \
                     lists them",
            ),
            uint_spec(
                "runtime",
                0,
                0,
                3600,
                "s",
                "futex-hash: how long it runs (-r); 0: perf's 10 s",
            ),
            uint_spec(
                "threads",
                0,
                0,
                4096,
                "",
                "futex-hash: threads (-t); 0: perf's default, the online CPUs",
            ),
            uint_spec(
                "futexes",
                0,
                0,
                1 << 24,
                "",
                "futex-hash: futexes per thread (-f); 0: perf's 1024",
            ),
            choice_spec(
                "shared",
                &["false", "true"],
                "futex-hash: shared futexes instead of private ones (-S)",
            ),
        ])
    }

    fn metrics(&self, options: &Options) -> (MetricInfo, Vec<MetricInfo>) {
        match self.bench(options) {
            Ok(bench) => bench.metrics(),
            Err(_) => {
                let info = self.info();
                (info.metric().clone(), info.secondary_metrics().to_vec())
            }
        }
    }

    fn tools(&self, _options: &Options) -> Vec<&'static str> {
        vec![PERF.program]
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        let info = self.info();
        let bench = self.bench(options)?;
        for spec in info.options().iter().filter(|s| s.name != "bench") {
            let default = spec.default_value(0);
            let value = options.get(&spec.name);
            if !bench.takes().contains(&spec.name.as_ref())
                && value.is_some_and(|v| Some(v) != default.as_ref())
            {
                return Err(BenchError::Options(format!(
                    "option '{}' does not apply to bench={}; it takes {}",
                    spec.name,
                    BENCHES[bench as usize],
                    bench.takes().join(", ")
                )));
            }
        }
        if bench.takes().contains(&"size") {
            check_size(options.text("size"))?;
            let function = options.text("function");
            if function.is_empty()
                || matches!(function, "all" | "help")
                || !function
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(BenchError::Options(format!(
                    "function='{function}' is not one implementation's name; \
                     'perf bench mem memcpy -f help' lists them"
                )));
            }
        }
        PERF.find(NAME)?;
        Ok(())
    }

    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let info = self.info();
        // The run's process, perf, and what perf starts.
        let started = match self.bench(options)? {
            // 20 senders and 20 receivers per group.
            PerfBench::SchedMessaging => match uint(&info, options, "groups")? {
                0 => 10 * 40,
                g => g.saturating_mul(40),
            },
            PerfBench::SchedPipe => 1,
            PerfBench::FutexHash => match uint(&info, options, "threads")? {
                0 => limits.cpus.len().max(1) as u64,
                t => t,
            },
            _ => 0,
        };
        limits.check_tasks(started.saturating_add(2))?;
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let bench = self.bench(options)?;
        let mut args = vec!["bench".to_string()];
        args.extend(self.args(options)?);
        let output = PERF.run(NAME, &args)?;
        Ok(Measurement {
            values: parse_perf_bench(bench, &output)?,
            histograms: Vec::new(),
        })
    }
}

/// Checks a mem buffer size as perf reads it: a number and a unit B, KB, MB, GB or TB, in
/// any case (parse_tag_value in tools/perf/util/parse-sublevel-options.c's neighbours).
fn check_size(size: &str) -> Result<(), BenchError> {
    let upper = size.to_ascii_uppercase();
    let digits = upper.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &upper[digits.len()..];
    let ok = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && digits.parse::<u64>().is_ok_and(|n| n > 0)
        && matches!(unit, "B" | "KB" | "MB" | "GB" | "TB");
    if ok {
        Ok(())
    } else {
        Err(BenchError::Options(format!(
            "size='{size}' is not a size perf reads: a number and B, KB, MB, GB or TB (1MB)"
        )))
    }
}

/// The metrics of one `perf bench` execution of `bench`, from its default output.
pub fn parse_perf_bench(
    bench: PerfBench,
    output: &str,
) -> Result<BTreeMap<String, f64>, BenchError> {
    let tool = "perf bench";
    let mut values = BTreeMap::new();
    let line_ending = |suffix: &str| {
        output
            .lines()
            .map(str::trim)
            .find_map(|l| l.strip_suffix(suffix).map(str::trim))
    };
    let total_time = || -> Result<f64, BenchError> {
        let text = output
            .lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix("Total time:"))
            .and_then(|rest| rest.trim().strip_suffix("[sec]"))
            .ok_or_else(|| missing(tool, "'Total time: N [sec]' line", output))?;
        number(tool, "the total time", text)
    };
    match bench {
        PerfBench::SchedMessaging => {
            values.insert(TIME.to_string(), total_time()?);
        }
        PerfBench::SchedPipe | PerfBench::SyscallBasic => {
            values.insert(TOTAL_TIME.to_string(), total_time()?);
            let per_op = line_ending("usecs/op")
                .ok_or_else(|| missing(tool, "'N usecs/op' line", output))?;
            values.insert(TIME_PER_OP.to_string(), number(tool, "usecs/op", per_op)?);
            let rate =
                line_ending("ops/sec").ok_or_else(|| missing(tool, "'N ops/sec' line", output))?;
            values.insert(OPS_PER_SEC.to_string(), number(tool, "ops/sec", rate)?);
        }
        PerfBench::MemMemcpy | PerfBench::MemMemset => {
            let results: Vec<f64> = output
                .lines()
                .map(str::trim)
                .filter_map(|l| {
                    // print_bps: bytes/sec, KB/sec (printed "%14lfd KB/sec"), MB/sec, GB/sec.
                    [
                        ("bytes/sec", 3),
                        ("KB/sec", 2),
                        ("MB/sec", 1),
                        ("GB/sec", 0),
                    ]
                    .iter()
                    .find_map(|(unit, below_gib)| {
                        let v = l.strip_suffix(unit)?.trim().trim_end_matches('d');
                        Some((v, *below_gib))
                    })
                })
                .map(|(v, below_gib)| {
                    number(tool, "the bandwidth", v).map(|v| v / 1024f64.powi(below_gib))
                })
                .collect::<Result<_, _>>()?;
            match results[..] {
                [gib] => values.insert(BANDWIDTH.to_string(), gib),
                [] => return Err(missing(tool, "'N GB/sec' line", output)),
                _ => {
                    return Err(BenchError::Command(format!(
                        "perf bench printed {} bandwidths; one function at a time is read",
                        results.len()
                    )))
                }
            };
        }
        PerfBench::FutexHash => {
            let text = output
                .lines()
                .map(str::trim)
                .find_map(|l| l.strip_prefix("Averaged"))
                .and_then(|rest| rest.split_whitespace().next())
                .ok_or_else(|| missing(tool, "'Averaged N operations/sec' line", output))?;
            values.insert(
                OPS_PER_SEC.to_string(),
                number(tool, "the operations/sec", text)?,
            );
        }
    }
    Ok(values)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::resolve_options;

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap()
    }

    fn parse(bench: PerfBench, name: &str) -> BTreeMap<String, f64> {
        parse_perf_bench(bench, &fixture(name)).unwrap()
    }

    /// Captured from perf version 6.1.187 on Debian 12.
    #[test]
    fn parses_real_output() {
        assert_eq!(
            parse(PerfBench::SchedMessaging, "perf-sched-messaging.txt")[TIME],
            0.170
        );
        assert_eq!(
            parse(
                PerfBench::SchedMessaging,
                "perf-sched-messaging-thread-pipe.txt"
            )[TIME],
            0.026
        );
        let pipe = parse(PerfBench::SchedPipe, "perf-sched-pipe.txt");
        assert_eq!(pipe[TIME_PER_OP], 13.091950);
        assert_eq!(pipe[OPS_PER_SEC], 76382.0);
        assert_eq!(pipe[TOTAL_TIME], 1.309);
        let syscall = parse(PerfBench::SyscallBasic, "perf-syscall-basic.txt");
        assert_eq!(syscall[TIME_PER_OP], 0.501494);
        assert_eq!(syscall[OPS_PER_SEC], 1994041.0);
        assert_eq!(
            parse(PerfBench::MemMemcpy, "perf-mem-memcpy.txt")[BANDWIDTH],
            27.664660
        );
        assert_eq!(
            parse(PerfBench::MemMemset, "perf-mem-memset.txt")[BANDWIDTH],
            9.232997
        );
        assert_eq!(
            parse(PerfBench::FutexHash, "perf-futex-hash.txt")[OPS_PER_SEC],
            545280.0
        );
        // Every metric a bench declares is among its values.
        for (bench, file) in [
            (PerfBench::SchedPipe, "perf-sched-pipe.txt"),
            (PerfBench::SyscallBasic, "perf-syscall-basic.txt"),
        ] {
            let values = parse(bench, file);
            let (primary, secondary) = bench.metrics();
            for m in std::iter::once(primary).chain(secondary) {
                assert!(values.contains_key(&m.name), "{}", m.name);
            }
        }
    }

    #[test]
    fn converts_the_smaller_units_to_gib() {
        let v = parse_perf_bench(PerfBench::MemMemset, "   512.000000d KB/sec\n").unwrap();
        assert_eq!(v[BANDWIDTH], 512.0 / 1024.0 / 1024.0);
        let v = parse_perf_bench(PerfBench::MemMemset, "   512.000000 MB/sec\n").unwrap();
        assert_eq!(v[BANDWIDTH], 0.5);
    }

    #[test]
    fn malformed_output_is_a_clear_error() {
        let e = |bench, text: &str| parse_perf_bench(bench, text).unwrap_err().to_string();
        assert_eq!(
            e(PerfBench::MemMemset, &fixture("perf-mem-memset-inf.txt")),
            "perf bench printed 'inf' as the bandwidth, which is not a finite number"
        );
        assert_eq!(
            e(
                PerfBench::MemMemcpy,
                &fixture("perf-mem-memcpy-unknown-function.txt")
            ),
            "cannot read perf bench's output: no 'N GB/sec' line (its last line: \
             x86-64-movsb ... movsb-based memcpy() in arch/x86/lib/memcpy_64.S)"
        );
        assert_eq!(
            e(PerfBench::SchedMessaging, ""),
            "cannot read perf bench's output: no 'Total time: N [sec]' line (its last line: \
             no output)"
        );
        assert!(e(PerfBench::SchedPipe, "Total time: 1.0 [sec]\n").contains("usecs/op"));
        assert!(e(PerfBench::SchedMessaging, "Total time: x [sec]\n").contains("'x'"));
        assert!(e(PerfBench::FutexHash, "Run summary\n").contains("Averaged"));
        // Two functions' results (function=all) are not one value.
        let two = "  1.0 GB/sec\n  2.0 GB/sec\n";
        assert!(e(PerfBench::MemMemcpy, two).contains("2 bandwidths"));
    }

    fn options(overrides: &[(&str, &str)]) -> Options {
        resolve_options(&PerfBenchmark.info(), overrides).unwrap()
    }

    #[test]
    fn builds_perf_arguments() {
        let args = |o: &[(&str, &str)]| PerfBenchmark.args(&options(o)).unwrap().join(" ");
        assert_eq!(args(&[]), "sched messaging");
        assert_eq!(
            args(&[
                ("groups", "2"),
                ("loops", "50"),
                ("ipc", "pipe"),
                ("tasks", "thread")
            ]),
            "sched messaging -g 2 -l 50 -p -t"
        );
        assert_eq!(
            args(&[("bench", "sched-pipe"), ("tasks", "thread")]),
            "sched pipe -T"
        );
        assert_eq!(
            args(&[("bench", "mem-memset"), ("size", "16MB"), ("loops", "10")]),
            "mem memset -l 10 -f default -s 16MB"
        );
        assert_eq!(
            args(&[
                ("bench", "futex-hash"),
                ("runtime", "1"),
                ("shared", "true")
            ]),
            "futex hash -r 1 -S"
        );
    }

    #[test]
    fn refuses_options_of_other_benches() {
        let check = |o: &[(&str, &str)]| {
            PerfBenchmark
                .check_options(&options(o))
                .map_err(|e| e.to_string())
        };
        let e = check(&[("bench", "sched-pipe"), ("size", "4KB")]).unwrap_err();
        assert_eq!(
            e,
            "invalid options: option 'size' does not apply to bench=sched-pipe; it takes \
             loops, tasks"
        );
        assert!(check(&[("bench", "mem-memcpy"), ("size", "4 KB")])
            .unwrap_err()
            .contains("is not a size perf reads"));
        assert!(check(&[("bench", "mem-memcpy"), ("function", "all")])
            .unwrap_err()
            .contains("not one implementation's name"));
        let metrics = |b| PerfBenchmark.metrics(&options(&[("bench", b)])).0;
        assert_eq!(metrics("mem-memcpy").unit, "GiB/s");
        assert!(metrics("mem-memcpy").higher_is_better);
        assert_eq!(metrics("sched-pipe").name, TIME_PER_OP);
        assert_eq!(metrics("futex-hash").name, OPS_PER_SEC);
    }
}
