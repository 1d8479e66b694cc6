//! `mock` (hidden): a deterministic benchmark that reports scripted values, so that the
//! engine, the stopping rule, comparisons and reports can be tested exactly, without timing
//! (hyperfine's mock executor plays the same role).
//!
//! `values` holds numbers separated by '/': measured run `i` reports `values[i % len]`, a
//! warmup run the first value. `fail_at = n` (n > 0) makes measured run n (counting from 1)
//! fail.
//!
//! Two hooks exercise the executor: `stderr = n` writes n bytes to stderr before reporting
//! (more than a pipe holds, 64 KiB, must not block the run), `sleep = s` sleeps s seconds
//! before reporting (a run that exceeds the run timeout).

use vernier_model::{
    BenchmarkInfo, MetricInfo, OptionDefault, OptionKind, OptionSpec, OptionValue, Options,
};

use crate::opts::{float, uint, uint_spec};
use crate::{BenchError, Benchmark, Measurement, RunContext};

pub struct Mock;

/// Parses the scripted values: finite numbers separated by '/'.
pub(crate) fn parse_values(text: &str) -> Result<Vec<f64>, BenchError> {
    text.split('/')
        .map(|part| {
            let part = part.trim();
            part.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    BenchError::Options(format!(
                        "mock value '{part}' is not a number (values are numbers separated by '/')"
                    ))
                })
        })
        .collect()
}

impl Benchmark for Mock {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo {
            name: "mock",
            version: "1",
            description: "reports scripted values (for testing vernier itself)",
            metric: MetricInfo {
                name: "value".into(),
                unit: "s".into(),
                higher_is_better: false,
            },
            options: vec![
                OptionSpec {
                    name: "values",
                    kind: OptionKind::Text,
                    default: OptionDefault::Value(OptionValue::Text("1".into())),
                    unit: "s",
                    help: "values reported by successive measured runs, separated by '/'",
                },
                uint_spec(
                    "fail_at",
                    0,
                    0,
                    u64::MAX,
                    "",
                    "measured run (from 1) that fails; 0 means none",
                ),
                uint_spec(
                    "stderr",
                    0,
                    0,
                    1 << 30,
                    "bytes",
                    "bytes written to stderr by every run before it reports",
                ),
                OptionSpec {
                    name: "sleep",
                    kind: OptionKind::Float {
                        min: 0.0,
                        max: 3600.0,
                    },
                    default: OptionDefault::Value(OptionValue::Float(0.0)),
                    unit: "s",
                    help: "seconds every run sleeps before it reports",
                },
            ],
            hidden: true,
        }
    }

    fn run(&self, options: &Options, ctx: &RunContext) -> Result<Measurement, BenchError> {
        let info = self.info();
        let values = parse_values(options.text("values"))?;
        let fail_at = uint(&info, options, "fail_at")?;
        let stderr_bytes = uint(&info, options, "stderr")?;
        let sleep_s = float(&info, options, "sleep")?;
        if stderr_bytes > 0 {
            use std::io::Write;
            let line = [b'x'; 1024];
            let mut stderr = std::io::stderr().lock();
            let mut left = stderr_bytes as usize;
            while left > 0 {
                let n = left.min(line.len());
                stderr
                    .write_all(&line[..n])
                    .map_err(|source| BenchError::Syscall {
                        call: "write",
                        source,
                    })?;
                left -= n;
            }
        }
        if sleep_s > 0.0 {
            std::thread::sleep(std::time::Duration::from_secs_f64(sleep_s));
        }
        if !ctx.warmup && fail_at != 0 && u64::from(ctx.index) + 1 == fail_at {
            return Err(BenchError::Worker(format!(
                "scripted failure of measured run {fail_at}"
            )));
        }
        let i = if ctx.warmup {
            0
        } else {
            ctx.index as usize % values.len()
        };
        let value = values
            .get(i)
            .copied()
            .ok_or_else(|| BenchError::Options("no mock values".into()))?;
        Ok(Measurement::single("value", value))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::opts::resolve_options;

    fn run(values: &str, fail_at: &str, warmup: bool, index: u32) -> Result<f64, BenchError> {
        let options =
            resolve_options(&Mock.info(), &[("values", values), ("fail_at", fail_at)]).unwrap();
        Mock.run(&options, &RunContext { warmup, index })
            .map(|m| m.values["value"])
    }

    #[test]
    fn reports_scripted_values_in_turn() {
        let got: Vec<f64> = (0..5)
            .map(|i| run("10/12/11", "0", false, i).unwrap())
            .collect();
        assert_eq!(got, vec![10.0, 12.0, 11.0, 10.0, 12.0]);
        assert_eq!(run("10/12/11", "0", true, 2).unwrap(), 10.0);
        assert_eq!(run(" 2.5 ", "0", false, 7).unwrap(), 2.5);
    }

    #[test]
    fn defaults_and_hidden() {
        let info = Mock.info();
        assert!(info.hidden);
        assert_eq!(info.version, "1");
        assert_eq!(info.metric.name, "value");
        let options = resolve_options(&info, &[]).unwrap();
        assert_eq!(options.text("values"), "1");
        assert_eq!(options.uint("fail_at"), 0);
        let m = Mock.run(&options, &RunContext::default()).unwrap();
        assert_eq!(m.values["value"], 1.0);
    }

    #[test]
    fn invalid_numbers_are_option_errors() {
        for bad in ["1/x", "1//2", "inf", "NaN/1"] {
            let err = run(bad, "0", false, 0).unwrap_err();
            assert!(matches!(err, BenchError::Options(_)), "{bad}: {err}");
        }
    }

    #[test]
    fn fails_at_the_scripted_measured_run_only() {
        assert!(run("1/2", "3", false, 0).is_ok());
        assert!(run("1/2", "3", false, 1).is_ok());
        let err = run("1/2", "3", false, 2).unwrap_err();
        assert!(err.to_string().contains("run 3"), "{err}");
        assert!(run("1/2", "3", false, 3).is_ok());
        assert!(run("1/2", "3", true, 2).is_ok(), "warmups never fail");
    }
}
