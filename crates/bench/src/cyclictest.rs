//! `cyclictest`: one execution of rt-tests' cyclictest per run (Debian package rt-tests), its
//! per-thread histograms stored as vernier latency histograms, with the same quantity and
//! metrics as the `latency` benchmark so that `show`, `compare` and `plot` treat both alike.
//!
//! The options are `latency`'s, mapped to cyclictest's (RESEARCH 1.2):
//!
//! | vernier | cyclictest |
//! |---|---|
//! | `interval=200us` | `-i 200` |
//! | `duration=5` (whole seconds: `-D` reads an integer, and a fraction would be dropped) | `-D 5` |
//! | `cpus=all` or a list | `--affinity=LIST --threads=N`, the CPUs the run may use written out, one thread pinned to each |
//! | `policy=fifo` / `rr`, `priority=99` | `-p 99` / `--policy=rr -p 99`, and `-m` (mlockall) |
//! | `policy=other` | `--policy=other`, and `-m` where this process may lock its memory |
//! | `dma_latency=on` / `off` | cyclictest's default `--latency=0` / `--default-system` |
//! | `histogram=1000` | `-h 1000`: 1 us buckets up to 1 ms; later samples are overflows |
//!
//! and always `-q --json=FILE` into a temporary directory removed after the run. Unlike
//! `latency`, cyclictest records whole microseconds, truncated, and skips late periods without
//! counting them, so the runs have no `missed` value; samples beyond the histogram are counted
//! as overflows, and a run whose p99 lies among them fails with the larger `-h` to use.
//! cyclictest 2.40 refuses to start without the privilege of a real-time priority, whatever
//! the policy (its `check_privs()` tries SCHED_FIFO first), so the machine check asks for it.
//! The output is read by [`vernier_formats::cyclictest`], the parser `vernier import` uses.

use std::collections::BTreeMap;

use vernier_formats::cyclictest::{metrics, read_json, run_values};
use vernier_model::histogram::MEMORY_LOCKED;
use vernier_model::{BenchmarkInfo, Options, RunHistogram};
use vernier_sys::sched::Policy;
use vernier_sys::MachineLimits;

use crate::latency::Settings;
use crate::opts::{uint, uint_spec};
use crate::tool::Tool;
use crate::{BenchError, Benchmark, Measurement, RunContext};

const CYCLICTEST: Tool = Tool {
    program: "cyclictest",
    package: "rt-tests",
};

const NAME: &str = "cyclictest";

const NS_PER_S: u64 = 1_000_000_000;

pub struct Cyclictest;

impl Cyclictest {
    /// cyclictest's arguments for `options` with its CPUs `cpus`, writing its JSON to `json`.
    fn args(
        &self,
        options: &Options,
        cpus: &[usize],
        may_lock_memory: bool,
        json: &std::path::Path,
    ) -> Result<Vec<String>, BenchError> {
        let s = Settings::read(&self.info(), options)?;
        let histogram = uint(&self.info(), options, "histogram")?;
        let mut args = vec![
            format!("--interval={}", s.interval_ns / 1_000),
            format!("--duration={}", s.duration_ns / NS_PER_S),
            format!("--affinity={}", vernier_sys::cpulist::format_cpu_list(cpus)),
            format!("--threads={}", cpus.len()),
        ];
        match s.policy {
            Policy::Other => args.push("--policy=other".into()),
            Policy::Rr => args.push("--policy=rr".into()),
            _ => {}
        }
        if s.policy.is_real_time() {
            args.push(format!("--priority={}", s.priority));
        }
        if s.policy.is_real_time() || may_lock_memory {
            args.push("--mlockall".into());
        }
        if !s.dma_latency {
            args.push("--default-system".into());
        }
        args.extend([
            format!("--histogram={histogram}"),
            "--quiet".into(),
            format!("--json={}", json.display()),
        ]);
        Ok(args)
    }
}

impl Benchmark for Cyclictest {
    fn info(&self) -> BenchmarkInfo {
        let (metric, secondary_metrics) = metrics();
        let mut options = crate::latency::options();
        // latency's options as cyclictest takes them: -D reads whole seconds, and cyclictest
        // needs a real-time priority whatever the policy (module documentation).
        for option in &mut options {
            match option.name.as_ref() {
                "duration" => {
                    option.help =
                        "how long each run measures, in whole seconds (cyclictest -D)".into()
                }
                "policy" => {
                    option.help = "scheduling policy of the threads (cyclictest --policy); \
                                   cyclictest needs a real-time priority's privilege with any"
                        .into()
                }
                _ => {}
            }
        }
        options.push(uint_spec(
            "histogram",
            1_000,
            1,
            1_000_000,
            "us",
            "histogram size in 1 us buckets (cyclictest -h); larger latencies are overflows",
        ));
        BenchmarkInfo::new(
            NAME,
            "1",
            "rt-tests cyclictest (package rt-tests): its per-thread histograms as \
                          latency histograms",
            metric,
        )
        .with_secondary_metrics(secondary_metrics)
        .with_options(options)
    }

    fn tools(&self, _options: &Options) -> Vec<&'static str> {
        vec![CYCLICTEST.program]
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        let s = Settings::read(&self.info(), options)?;
        if s.duration_ns % NS_PER_S != 0 || s.duration_ns == 0 {
            return Err(BenchError::Options(format!(
                "duration={}: cyclictest's -D takes whole seconds; give 1, 2, ...",
                s.duration_ns as f64 / 1e9
            )));
        }
        CYCLICTEST.find(NAME)?;
        Ok(())
    }

    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let info = self.info();
        let s = Settings::read(&info, options)?;
        let threads = s.threads_on(limits)?;
        // The run's process, cyclictest's main thread and its measurement threads.
        limits.check_tasks(threads + 2)?;
        let priority = if s.policy.is_real_time() {
            s.priority as u64
        } else {
            1
        };
        let policy = options.text("policy");
        limits
            .check_rt_priority(priority)
            .and_then(|()| {
                if s.policy.is_real_time() {
                    limits.check_memlock()
                } else {
                    Ok(())
                }
            })
            .map_err(|e| {
                BenchError::NotPermitted(format!(
                    "policy={policy}: {e}; cyclictest needs a real-time priority to start, \
                     whatever its policy (the latency benchmark measures without it with \
                     policy=other)"
                ))
            })?;
        Ok(())
    }

    fn explaining_monitors(&self) -> &'static [&'static str] {
        &["softirqs", "cpuidle"]
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let s = Settings::read(&self.info(), options)?;
        let cpus = s.run_cpus()?;
        let may_lock_memory = vernier_sys::MachineLimits::read(&vernier_sys::Roots::real())
            .check_memlock()
            .is_ok();
        let dir = tempfile::Builder::new()
            .prefix("vernier-cyclictest-")
            .tempdir()
            .map_err(|source| BenchError::Syscall {
                call: "mkdtemp",
                source,
            })?;
        let json = dir.path().join("cyclictest.json");
        let args = self.args(options, &cpus, may_lock_memory, &json)?;
        CYCLICTEST.run(NAME, &args)?;
        let bytes = std::fs::read(&json).map_err(|e| {
            BenchError::Command(format!(
                "cyclictest wrote no --json file {}: {e}",
                json.display()
            ))
        })?;
        let (mut values, histograms) = parse_run(&bytes)?;
        let locked = s.policy.is_real_time() || may_lock_memory;
        values.insert(MEMORY_LOCKED.into(), f64::from(u8::from(locked)));
        Ok(Measurement { values, histograms })
    }
}

/// The values and histograms of one run from cyclictest's `--json` file.
pub fn parse_run(bytes: &[u8]) -> Result<(BTreeMap<String, f64>, Vec<RunHistogram>), BenchError> {
    let parsed = read_json(bytes).map_err(|e| cyclictest_error(&e))?;
    if let Some(code) = parsed.return_code.filter(|&c| c != 0) {
        return Err(BenchError::Command(format!(
            "cyclictest reported return code {code} in its --json file"
        )));
    }
    run_values(&parsed).map_err(|e| BenchError::Command(format!("cyclictest's histograms: {e}")))
}

/// An error of the parser with its cause, on one line.
fn cyclictest_error(e: &(dyn std::error::Error + 'static)) -> BenchError {
    let mut text = format!("cannot read cyclictest's --json file: {e}");
    if let Some(source) = e.source() {
        text = format!("{text}: {source}");
    }
    BenchError::Command(text)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;
    use vernier_model::options::ALL_CPUS;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/../formats/tests/fixtures/cyclictest/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap()
    }

    #[test]
    fn options_become_cyclictests_arguments() {
        let args = |o: &[(&str, &str)], cpus: &[usize], lock: bool| {
            let options = resolve_options(&Cyclictest.info(), o).unwrap();
            Cyclictest
                .args(&options, cpus, lock, std::path::Path::new("/t/c.json"))
                .unwrap()
                .join(" ")
        };
        assert_eq!(
            args(&[], &[0, 1], false),
            "--interval=200 --duration=5 --affinity=0-1 --threads=2 --priority=99 --mlockall \
             --histogram=1000 --quiet --json=/t/c.json"
        );
        assert_eq!(
            args(
                &[
                    ("interval", "1ms"),
                    ("duration", "2"),
                    ("policy", "rr"),
                    ("priority", "80"),
                    ("dma_latency", "off"),
                    ("histogram", "400"),
                ],
                &[1],
                false
            ),
            "--interval=1000 --duration=2 --affinity=1 --threads=1 --policy=rr --priority=80 \
             --mlockall --default-system --histogram=400 --quiet --json=/t/c.json"
        );
        assert_eq!(
            args(&[("policy", "other")], &[0, 1, 3], false),
            "--interval=200 --duration=5 --affinity=0-1,3 --threads=3 --policy=other \
             --histogram=1000 --quiet --json=/t/c.json"
        );
        assert!(args(&[("policy", "other")], &[0], true).contains(" --mlockall "));
        // The command line the JSON carries gives back the options.
        let line = format!("cyclictest {}", args(&[("cpus", ALL_CPUS)], &[0, 1], false));
        let parsed = vernier_formats::cyclictest::command_line_options(&line);
        assert_eq!(
            Options(parsed).label(),
            "affinity=0-1:duration=5:histogram=1000:interval=200:mlockall=yes:priority=99:\
             threads=2"
        );
    }

    #[test]
    fn a_fraction_of_a_second_is_refused() {
        let options = resolve_options(&Cyclictest.info(), &[("duration", "0.5")]).unwrap();
        let e = Cyclictest.check_options(&options).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "invalid options: duration=0.5: cyclictest's -D takes whole seconds; give 1, \
                 2, ..."
            ),
            "{e}"
        );
    }

    #[test]
    fn a_json_file_becomes_latency_values_and_histograms() {
        let (values, histograms) = parse_run(&fixture("2.4-h400.json")).unwrap();
        let (metric, secondary) = metrics();
        assert_eq!((metric.name.as_str(), metric.unit.as_str()), ("p99", "us"));
        assert!(values.contains_key(&metric.name));
        assert!(secondary.iter().all(|m| m.name != "missed"));
        assert_eq!(values["samples"], 9984.0 + 9868.0);
        assert_eq!(
            histograms.iter().map(|h| h.cpu).collect::<Vec<_>>(),
            [Some(0), Some(1)]
        );
        assert!(histograms.iter().all(|h| h.quantity == "latency"));
        let e = parse_run(&fixture("2.4-no-h.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot read cyclictest's --json file: thread \"0\""),
            "{e}"
        );
        let e = parse_run(b"{").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "cannot read cyclictest's --json file: not a valid cyclictest --json file: EOF"
            ),
            "{e}"
        );
        let failed = String::from_utf8(fixture("2.4-h400.json"))
            .unwrap()
            .replace("\"return_code\": 0", "\"return_code\": 1");
        let e = parse_run(failed.as_bytes()).unwrap_err().to_string();
        assert_eq!(e, "cyclictest reported return code 1 in its --json file");
    }

    #[test]
    fn the_machine_check_asks_for_a_real_time_priority_whatever_the_policy() {
        let unprivileged = MachineLimits {
            cpus: vec![0, 1],
            rtprio: Some(0),
            memlock_bytes: Some(8 << 20),
            ..MachineLimits::default()
        };
        let options = resolve_options(&Cyclictest.info(), &[("policy", "other")]).unwrap();
        let e = Cyclictest
            .check_machine(&options, &unprivileged)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("policy=other: real-time priority 1 is not permitted here")
                && e.contains("cyclictest needs a real-time priority to start"),
            "{e}"
        );
        let privileged = MachineLimits {
            rtprio: None,
            memlock_bytes: None,
            ..unprivileged
        };
        assert!(Cyclictest.check_machine(&options, &privileged).is_ok());
    }
}
