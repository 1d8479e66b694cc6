//! `sysbench`: one execution of `sysbench TEST --threads=N [--time=T] ... run` per run (Debian
//! package sysbench), its text report parsed into metrics.
//!
//! | test | metric |
//! |---|---|
//! | cpu | `events_per_sec`, events/s: its "events per second" (primes up to `cpu_max_prime`) |
//! | memory | `bandwidth`, MiB/s: its "MiB transferred (X MiB/sec)" |
//! | threads | `events_per_sec`, events/s: its total number of events over its total time |
//! | mutex | `total_time`, s: the time to do its fixed work |
//!
//! Every test also stores its events, its total time and the latency of one event (avg, 95th
//! percentile and max, ms), as sysbench prints them. cpu, memory and threads run for `time`
//! seconds (or until `events`, when given); mutex does a fixed amount of work, so `time` does
//! not apply to it. Options of one test are refused with another unless left at their
//! defaults.

use std::collections::BTreeMap;

use vernier_model::{BenchmarkInfo, MetricInfo, Options};
use vernier_sys::MachineLimits;

use crate::opts::{choice, choice_spec, text_spec, uint, uint_spec};
use crate::tool::{missing, number, Tool};
use crate::{BenchError, Benchmark, Measurement, RunContext};

const SYSBENCH: Tool = Tool {
    program: "sysbench",
    package: "sysbench",
};

const NAME: &str = "sysbench";

/// The metrics, by name.
pub const EVENTS_PER_SEC: &str = "events_per_sec";
pub const BANDWIDTH: &str = "bandwidth";
pub const TOTAL_TIME: &str = "total_time";
pub const EVENTS: &str = "events";
pub const LATENCY_AVG: &str = "latency_avg";
pub const LATENCY_P95: &str = "latency_p95";
pub const LATENCY_MAX: &str = "latency_max";

const TESTS: &[&str] = &["cpu", "memory", "threads", "mutex"];

/// The options each test passes to sysbench; the others apply to every test.
const OWN_OPTIONS: [(&str, &str); 6] = [
    ("cpu_max_prime", "cpu"),
    ("memory_block_size", "memory"),
    ("memory_total_size", "memory"),
    ("memory_oper", "memory"),
    ("memory_access_mode", "memory"),
    ("time", "cpu memory threads"),
];

pub struct Sysbench;

fn metric(name: &str, unit: &str, higher_is_better: bool) -> MetricInfo {
    MetricInfo {
        name: name.into(),
        unit: unit.into(),
        higher_is_better,
    }
}

/// The primary and secondary metrics of a test.
fn test_metrics(test: &str) -> (MetricInfo, Vec<MetricInfo>) {
    let primary = match test {
        "memory" => metric(BANDWIDTH, "MiB/s", true),
        "mutex" => metric(TOTAL_TIME, "s", false),
        _ => metric(EVENTS_PER_SEC, "events/s", true),
    };
    let mut secondary = vec![
        metric(EVENTS, "events", true),
        metric(TOTAL_TIME, "s", false),
        metric(LATENCY_AVG, "ms", false),
        metric(LATENCY_P95, "ms", false),
        metric(LATENCY_MAX, "ms", false),
    ];
    secondary.retain(|m| m.name != primary.name);
    (primary, secondary)
}

impl Sysbench {
    fn test(&self, options: &Options) -> Result<&'static str, BenchError> {
        Ok(TESTS[choice(&self.info(), options, "test")?])
    }

    /// The arguments of `sysbench` for a configuration.
    fn args(&self, options: &Options) -> Result<Vec<String>, BenchError> {
        let info = self.info();
        let test = self.test(options)?;
        let mut args = vec![
            test.to_string(),
            format!("--threads={}", uint(&info, options, "threads")?),
        ];
        if test != "mutex" {
            args.push(format!("--time={}", uint(&info, options, "time")?));
        }
        let events = uint(&info, options, "events")?;
        if events > 0 {
            args.push(format!("--events={events}"));
        }
        match test {
            "cpu" => args.push(format!(
                "--cpu-max-prime={}",
                uint(&info, options, "cpu_max_prime")?
            )),
            "memory" => {
                for name in [
                    "memory_block_size",
                    "memory_total_size",
                    "memory_oper",
                    "memory_access_mode",
                ] {
                    args.push(format!(
                        "--{}={}",
                        name.replace('_', "-"),
                        options.text(name)
                    ));
                }
            }
            _ => {}
        }
        args.push("run".into());
        Ok(args)
    }
}

impl Benchmark for Sysbench {
    fn info(&self) -> BenchmarkInfo {
        let (metric, secondary_metrics) = test_metrics("cpu");
        BenchmarkInfo::new(
            NAME,
            "1",
            "sysbench (package sysbench): cpu, memory, threads and mutex; the \
                          metric follows test",
            metric,
        )
        .with_secondary_metrics(secondary_metrics)
        .with_options(vec![
            choice_spec("test", TESTS, "the sysbench test to run"),
            uint_spec("threads", 1, 1, 4096, "", "worker threads (--threads)"),
            uint_spec(
                "time",
                5,
                1,
                86400,
                "s",
                "cpu, memory, threads: how long it runs (--time)",
            ),
            uint_spec(
                "events",
                0,
                0,
                u64::MAX >> 1,
                "",
                "stops after this many events (--events); 0: no limit",
            ),
            uint_spec(
                "cpu_max_prime",
                10_000,
                3,
                1 << 31,
                "",
                "cpu: primes are computed up to this (--cpu-max-prime)",
            ),
            text_spec(
                "memory_block_size",
                "1K",
                "memory: the block size (--memory-block-size)",
            ),
            text_spec(
                "memory_total_size",
                "100G",
                "memory: the total size to transfer (--memory-total-size)",
            ),
            choice_spec(
                "memory_oper",
                &["write", "read", "none"],
                "memory: the operation (--memory-oper)",
            ),
            choice_spec(
                "memory_access_mode",
                &["seq", "rnd"],
                "memory: sequential or random access (--memory-access-mode)",
            ),
        ])
    }

    fn metrics(&self, options: &Options) -> (MetricInfo, Vec<MetricInfo>) {
        test_metrics(self.test(options).unwrap_or("cpu"))
    }

    fn tools(&self, _options: &Options) -> Vec<&'static str> {
        vec![SYSBENCH.program]
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        let info = self.info();
        let test = self.test(options)?;
        for (name, tests) in OWN_OPTIONS {
            let Some(spec) = info.option(name) else {
                continue;
            };
            let changed = options
                .get(name)
                .is_some_and(|v| Some(v) != spec.default_value(0).as_ref());
            if changed && !tests.split(' ').any(|t| t == test) {
                return Err(BenchError::Options(format!(
                    "option '{name}' does not apply to test={test}; it is for {}",
                    tests.replace(' ', ", ")
                )));
            }
        }
        for name in ["memory_block_size", "memory_total_size"] {
            let size = options.text(name);
            let digits = size.trim_end_matches(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']);
            if digits.is_empty()
                || !digits.chars().all(|c| c.is_ascii_digit())
                || size.len() > digits.len() + 1
            {
                return Err(BenchError::Options(format!(
                    "{name}='{size}' is not a size sysbench reads: a number and K, M, G or T"
                )));
            }
        }
        SYSBENCH.find(NAME)?;
        Ok(())
    }

    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        // The run's process, sysbench and its worker threads.
        let threads = uint(&self.info(), options, "threads")?;
        limits.check_tasks(threads.saturating_add(2))?;
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let test = self.test(options)?;
        let output = SYSBENCH.run(NAME, &self.args(options)?)?;
        Ok(Measurement {
            values: parse_sysbench(test, &output)?,
            histograms: Vec::new(),
        })
    }
}

/// The metrics of one `sysbench TEST run` (sysbench 1.0's text report).
pub fn parse_sysbench(test: &str, output: &str) -> Result<BTreeMap<String, f64>, BenchError> {
    let tool = "sysbench";
    let field = |label: &str| -> Result<f64, BenchError> {
        let text = output
            .lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(label))
            .ok_or_else(|| missing(tool, &format!("'{label}' line"), output))?;
        number(
            tool,
            label.trim_end_matches(':'),
            text.trim().trim_end_matches('s'),
        )
    };
    let mut values = BTreeMap::new();
    let total_time = field("total time:")?;
    let events = field("total number of events:")?;
    values.insert(TOTAL_TIME.to_string(), total_time);
    values.insert(EVENTS.to_string(), events);
    values.insert(LATENCY_AVG.to_string(), field("avg:")?);
    values.insert(LATENCY_P95.to_string(), field("95th percentile:")?);
    values.insert(LATENCY_MAX.to_string(), field("max:")?);
    match test {
        "cpu" => {
            values.insert(EVENTS_PER_SEC.to_string(), field("events per second:")?);
        }
        "memory" => {
            // "1024.00 MiB transferred (1483.09 MiB/sec)"
            let text = output
                .lines()
                .filter(|l| l.contains("MiB transferred"))
                .find_map(|l| l.split_once('(')?.1.strip_suffix("MiB/sec)"))
                .ok_or_else(|| missing(tool, "'MiB transferred (N MiB/sec)' line", output))?;
            values.insert(BANDWIDTH.to_string(), number(tool, "MiB/sec", text)?);
        }
        "threads" => {
            if total_time <= 0.0 {
                return Err(BenchError::Command(
                    "sysbench printed a total time of 0 s".into(),
                ));
            }
            values.insert(EVENTS_PER_SEC.to_string(), events / total_time);
        }
        _ => {}
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

    /// Captured from sysbench 1.0.20 on Debian 12.
    #[test]
    fn parses_real_output() {
        let cpu = parse_sysbench("cpu", &fixture("sysbench-cpu.txt")).unwrap();
        assert_eq!(cpu[EVENTS_PER_SEC], 1259.96);
        assert_eq!(cpu[TOTAL_TIME], 1.0003);
        assert_eq!(cpu[EVENTS], 1261.0);
        assert_eq!(cpu[LATENCY_AVG], 0.79);
        assert_eq!(cpu[LATENCY_P95], 0.99);
        assert_eq!(cpu[LATENCY_MAX], 268.47);
        let memory = parse_sysbench("memory", &fixture("sysbench-memory.txt")).unwrap();
        assert_eq!(memory[BANDWIDTH], 1483.09);
        let threads = parse_sysbench("threads", &fixture("sysbench-threads.txt")).unwrap();
        assert_eq!(threads[EVENTS_PER_SEC], 364.0 / 1.0003);
        let mutex = parse_sysbench("mutex", &fixture("sysbench-mutex.txt")).unwrap();
        assert_eq!(mutex[TOTAL_TIME], 0.2455);
        // Every metric a test declares is among its values.
        for (test, values) in [("cpu", &cpu), ("memory", &memory), ("threads", &threads)] {
            let (primary, secondary) = test_metrics(test);
            for m in std::iter::once(primary).chain(secondary) {
                assert!(values.contains_key(&m.name), "{test}: {}", m.name);
            }
        }
    }

    #[test]
    fn malformed_output_is_a_clear_error() {
        let e = |test, text: &str| parse_sysbench(test, text).unwrap_err().to_string();
        assert_eq!(
            e("cpu", "FATAL: something\n"),
            "cannot read sysbench's output: no 'total time:' line (its last line: FATAL: \
             something)"
        );
        let no_rate = fixture("sysbench-cpu.txt").replace("events per second", "events");
        assert!(e("cpu", &no_rate).contains("'events per second:'"));
        let no_bandwidth = fixture("sysbench-memory.txt").replace("MiB/sec", "MB/s");
        assert!(e("memory", &no_bandwidth).contains("MiB transferred"));
        let bad = fixture("sysbench-cpu.txt").replace("1259.96", "many");
        assert!(e("cpu", &bad).contains("'many'"));
    }

    fn options(o: &[(&str, &str)]) -> Options {
        resolve_options(&Sysbench.info(), o).unwrap()
    }

    #[test]
    fn builds_arguments_and_refuses_options_of_other_tests() {
        let args = |o: &[(&str, &str)]| Sysbench.args(&options(o)).unwrap().join(" ");
        assert_eq!(
            args(&[]),
            "cpu --threads=1 --time=5 --cpu-max-prime=10000 run"
        );
        assert_eq!(
            args(&[("test", "memory"), ("memory_total_size", "1G")]),
            "memory --threads=1 --time=5 --memory-block-size=1K --memory-total-size=1G \
             --memory-oper=write --memory-access-mode=seq run"
        );
        assert_eq!(
            args(&[("test", "mutex"), ("threads", "2")]),
            "mutex --threads=2 run"
        );
        let check = |o: &[(&str, &str)]| {
            Sysbench
                .check_options(&options(o))
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            check(&[("test", "mutex"), ("time", "1")]).unwrap_err(),
            "invalid options: option 'time' does not apply to test=mutex; it is for cpu, \
             memory, threads"
        );
        assert!(check(&[("test", "memory"), ("memory_block_size", "1 K")])
            .unwrap_err()
            .contains("is not a size sysbench reads"));
        let metric = |t| Sysbench.metrics(&options(&[("test", t)])).0;
        assert_eq!(metric("memory").unit, "MiB/s");
        assert_eq!(metric("mutex").name, TOTAL_TIME);
        assert!(!metric("mutex").higher_is_better);
    }
}
