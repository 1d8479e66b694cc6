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
//!
//! `dist` other than `values` draws each run's value at random instead, reproducibly: measured
//! run `i` of `seed` always reports the same value (its own ChaCha8 stream, whatever process
//! runs it). `lognormal`: `exp(sigma z)`, median 1; `bimodal`: a share `share` of runs around
//! 1.0 and the rest around 1.1, each mode lognormal with `sigma`. With `slow` > 0 that share of
//! runs is 3 times slower (a value 3 times larger). [`distribution_median`] gives the true
//! median, for measuring the coverage of intervals (bench/coverage.sh).

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{ContinuousCDF, Normal};
use vernier_model::{
    BenchmarkInfo, MetricInfo, OptionDefault, OptionKind, OptionSpec, OptionValue, Options,
};

use crate::opts::{choice, choice_spec, float, uint, uint_spec};
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

/// The distributions of `dist`.
const DISTS: &[&str] = &["values", "lognormal", "bimodal"];
/// Where the modes of `bimodal` lie.
const MODES: [f64; 2] = [1.0, 1.1];
/// How much slower a `slow` run is.
const SLOW_FACTOR: f64 = 3.0;

fn real_spec(name: &'static str, default: f64, max: f64, help: &'static str) -> OptionSpec {
    OptionSpec::new(
        name,
        OptionKind::Float { min: 0.0, max },
        OptionDefault::Value(OptionValue::Float(default)),
    )
    .help(help)
}

/// A random distribution of run values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    /// Share of runs in the mode at 1.0 (1 for one mode, lognormal).
    pub share: f64,
    pub sigma: f64,
    pub slow: f64,
}

impl Distribution {
    /// The distribution that `options` (resolved) select; `None` for scripted values.
    pub fn from_options(options: &Options) -> Result<Option<Distribution>, BenchError> {
        let info = Mock.info();
        let share = match choice(&info, options, "dist")? {
            0 => return Ok(None),
            1 => 1.0,
            _ => float(&info, options, "share")?,
        };
        Ok(Some(Distribution {
            share,
            sigma: float(&info, options, "sigma")?,
            slow: float(&info, options, "slow")?,
        }))
    }

    /// Inverse-transform sampling from three uniform numbers: which mode, whether slow, and
    /// the normal deviate (statrs' inverse normal CDF).
    fn value(&self, u_mode: f64, u_slow: f64, u_z: f64) -> f64 {
        let mode = if u_mode < self.share {
            MODES[0]
        } else {
            MODES[1]
        };
        let z = Normal::standard().inverse_cdf(u_z);
        let slow = if u_slow < self.slow { SLOW_FACTOR } else { 1.0 };
        mode * (self.sigma * z).exp() * slow
    }

    /// The value of measured run `index` (or of warmup `index`) of `seed`.
    pub fn draw(&self, seed: u64, index: u32, warmup: bool) -> f64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(u64::from(index) | if warmup { 1 << 63 } else { 0 });
        // 53 random bits, offset by half a step so that 0 and 1 never occur.
        let mut uniform = || ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (a, b, c) = (uniform(), uniform(), uniform());
        self.value(a, b, c)
    }

    /// P(value <= x).
    pub fn cdf(&self, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        let normal = Normal::standard();
        let lognormal = |median: f64| {
            if self.sigma == 0.0 {
                f64::from(u8::from(x >= median))
            } else {
                normal.cdf((x / median).ln() / self.sigma)
            }
        };
        let mode =
            |m: f64| (1.0 - self.slow) * lognormal(m) + self.slow * lognormal(m * SLOW_FACTOR);
        self.share * mode(MODES[0]) + (1.0 - self.share) * mode(MODES[1])
    }
}

/// The true median of the distribution that `options` select (bisection on its CDF to within
/// 1e-12); `None` for scripted values.
pub fn distribution_median(options: &Options) -> Result<Option<f64>, BenchError> {
    let Some(d) = Distribution::from_options(options)? else {
        return Ok(None);
    };
    let (mut lo, mut hi) = (1e-9, 1e3);
    while hi - lo > 1e-12 {
        let mid = (lo + hi) / 2.0;
        if d.cdf(mid) < 0.5 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some((lo + hi) / 2.0))
}

impl Benchmark for Mock {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            "mock",
            "1",
            "reports scripted values (for testing vernier itself)",
            MetricInfo::lower("value", "s"),
        )
        .with_options(vec![
            OptionSpec::new(
                "values",
                OptionKind::Text,
                OptionDefault::Value(OptionValue::Text("1".into())),
            )
            .unit("s")
            .help("values reported by successive measured runs, separated by '/'"),
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
            OptionSpec::new(
                "sleep",
                OptionKind::Float {
                    min: 0.0,
                    max: 3600.0,
                },
                OptionDefault::Value(OptionValue::Float(0.0)),
            )
            .unit("s")
            .help("seconds every run sleeps before it reports"),
            choice_spec(
                "dist",
                DISTS,
                "where values come from: the scripted 'values', or drawn at random \
                     (lognormal around 1, bimodal around 1.0 and 1.1)",
            ),
            real_spec(
                "sigma",
                0.02,
                10.0,
                "log-scale spread of a random distribution",
            ),
            real_spec(
                "share",
                0.5,
                1.0,
                "bimodal: share of runs in the mode at 1.0",
            ),
            real_spec(
                "slow",
                0.0,
                1.0,
                "share of random runs that are 3 times slower",
            ),
            uint_spec("seed", 0, 0, u64::MAX, "", "seed of the random values"),
        ])
        .hidden()
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
        if let Some(d) = Distribution::from_options(options)? {
            let seed = uint(&info, options, "seed")?;
            return Ok(Measurement::single(
                "value",
                d.draw(seed, ctx.index, ctx.warmup),
            ));
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
        Mock.run(
            &options,
            &RunContext {
                warmup,
                index,
                ..RunContext::default()
            },
        )
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
        assert!(info.is_hidden());
        assert_eq!(info.version(), "1");
        assert_eq!(info.metric().name, "value");
        let options = resolve_options(&info, &[]).unwrap();
        assert_eq!(options.text("values"), "1");
        assert_eq!(options.uint("fail_at"), 0);
        let m = Mock.run(&options, &RunContext::default()).unwrap();
        assert_eq!(m.values["value"], 1.0);
    }

    fn options(pairs: &[(&str, &str)]) -> Options {
        resolve_options(&Mock.info(), pairs).unwrap()
    }

    #[test]
    fn random_values_are_reproducible_per_seed_and_index() {
        let o = options(&[("dist", "lognormal"), ("sigma", "0.1"), ("seed", "3")]);
        let ctx = |index| RunContext {
            index,
            ..RunContext::default()
        };
        let a: Vec<f64> = (0..5)
            .map(|i| Mock.run(&o, &ctx(i)).unwrap().values["value"])
            .collect();
        let b: Vec<f64> = (0..5)
            .map(|i| Mock.run(&o, &ctx(i)).unwrap().values["value"])
            .collect();
        assert_eq!(a, b);
        assert!(a.windows(2).all(|w| w[0] != w[1]), "{a:?}");
        let other = options(&[("dist", "lognormal"), ("sigma", "0.1"), ("seed", "4")]);
        assert_ne!(Mock.run(&other, &ctx(0)).unwrap().values["value"], a[0]);
    }

    #[test]
    fn random_values_follow_their_distribution() {
        // 4000 draws: the share below the true median is 1/2 within 4 standard deviations
        // (0.032), and the bimodal draws fall near their modes.
        for pairs in [
            vec![("dist", "lognormal"), ("sigma", "0.1"), ("slow", "0.02")],
            vec![("dist", "bimodal"), ("sigma", "0.01"), ("share", "0.65")],
        ] {
            let o = options(&pairs);
            let d = Distribution::from_options(&o).unwrap().unwrap();
            let m = distribution_median(&o).unwrap().unwrap();
            let below = (0..4000).filter(|&i| d.draw(11, i, false) <= m).count();
            assert!(
                (below as f64 / 4000.0 - 0.5).abs() < 0.032,
                "{pairs:?}: {below}"
            );
        }
    }

    #[test]
    fn true_medians_of_the_distributions() {
        let m = |pairs: &[(&str, &str)]| distribution_median(&options(pairs)).unwrap();
        assert_eq!(m(&[]), None);
        assert!((m(&[("dist", "lognormal")]).unwrap() - 1.0).abs() < 1e-9);
        // Symmetric on the log scale: halfway between the modes, sqrt(1.1).
        let b = m(&[("dist", "bimodal"), ("sigma", "0.01")]).unwrap();
        assert!((b - 1.1f64.sqrt()).abs() < 1e-9, "{b}");
        // 2% of runs 3x slower move the median up: Phi^-1(0.5 / 0.98) sigma on the log scale.
        let slow = m(&[("dist", "lognormal"), ("sigma", "0.1"), ("slow", "0.02")]).unwrap();
        let expected = (0.1 * Normal::standard().inverse_cdf(0.5 / 0.98)).exp();
        assert!((slow - expected).abs() < 1e-6, "{slow} vs {expected}");
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
