//! Seeded nonparametric bootstrap of a one-sample statistic: percentile and BCa intervals
//! (Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13-14), as
//! `scipy.stats.bootstrap((x,), statistic, method="percentile" | "BCa")`.
//!
//! The resamples come from [`crate::random::SeededRng`] (ChaCha8, indices drawn by Lemire's
//! unbiased method), so a stored seed reproduces the same interval in any later version. The stream differs from NumPy's, so
//! intervals agree with SciPy's only within Monte Carlo error.

use crate::distribution::{normal_cdf, normal_quantile};

use crate::error::{check, check_level, StatsError};
use crate::interval::Interval;
use crate::random::SeededRng;
use crate::summary::{quantile_sorted, sorted};

/// Which bootstrap interval to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BootstrapMethod {
    /// Quantiles `alpha/2` and `1 - alpha/2` of the bootstrap distribution (Efron & Tibshirani
    /// sec. 13.3).
    Percentile,
    /// Bias-corrected and accelerated: quantiles shifted by the median bias `z0` and the
    /// acceleration `a` from the jackknife (Efron & Tibshirani sec. 14.3, eqs. 14.9-14.15).
    Bca,
}

/// A bootstrap interval and what it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    /// The statistic on the original sample.
    pub estimate: f64,
    pub interval: Interval,
    /// Standard deviation (divisor B - 1) of the bootstrap distribution.
    pub standard_error: f64,
}

/// The bootstrap distribution: `statistic` on `resamples` resamples (with replacement, size n)
/// of `xs`, in draw order. Deterministic for a given `seed`.
pub fn bootstrap_distribution<F>(
    xs: &[f64],
    statistic: F,
    resamples: usize,
    seed: u64,
) -> Result<Vec<f64>, StatsError>
where
    F: Fn(&[f64]) -> f64,
{
    check(xs, 2)?;
    check_resamples(resamples)?;
    let mut rng = SeededRng::new(seed);
    let mut buf = vec![0.0; xs.len()];
    let mut out = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in buf.iter_mut() {
            *slot = xs[rng.index(xs.len())];
        }
        out.push(statistic(&buf));
    }
    Ok(out)
}

fn check_resamples(resamples: usize) -> Result<(), StatsError> {
    if resamples < 2 {
        return Err(StatsError::OutOfRange {
            what: "number of bootstrap resamples",
            range: "[2, inf)",
            value: resamples as f64,
        });
    }
    Ok(())
}

/// Bootstrap confidence interval of `statistic` on `xs` (at least 2 values) from `resamples`
/// resamples drawn with `seed`. SciPy's default is 9999 resamples.
pub fn bootstrap_ci<F>(
    xs: &[f64],
    statistic: F,
    method: BootstrapMethod,
    level: f64,
    resamples: usize,
    seed: u64,
) -> Result<Bootstrap, StatsError>
where
    F: Fn(&[f64]) -> f64,
{
    check_level(level)?;
    let distribution = bootstrap_distribution(xs, &statistic, resamples, seed)?;
    bootstrap_interval(xs, statistic, &distribution, method, level)
}

/// The interval from a given bootstrap distribution (the deterministic half of
/// [`bootstrap_ci`]; SciPy's `bootstrap(..., n_resamples=0, bootstrap_result=...)`).
///
/// Percentile: `[q(alpha/2), q(1 - alpha/2)]`, `q` the linear-interpolation quantile of the
/// distribution. BCa: the quantiles at
/// `alpha_i = Phi(z0 + (z0 + z_i) / (1 - a (z0 + z_i)))`, `z_i = Phi^-1(alpha/2)` and its
/// negative, with `z0 = Phi^-1((#{t < t_hat} + #{t <= t_hat}) / 2B)` and
/// `a = sum d_i^3 / (6 (sum d_i^2)^1.5)`, `d_i` the jackknife deviations `mean(t_(.)) - t_(i)`.
/// [`StatsError::Degenerate`] when the statistic is not finite or BCa is undefined (all
/// jackknife values equal, or the estimate outside the bootstrap distribution).
pub fn bootstrap_interval<F>(
    xs: &[f64],
    statistic: F,
    distribution: &[f64],
    method: BootstrapMethod,
    level: f64,
) -> Result<Bootstrap, StatsError>
where
    F: Fn(&[f64]) -> f64,
{
    check(xs, 2)?;
    check_level(level)?;
    check_resamples(distribution.len())?;
    if distribution.iter().any(|t| !t.is_finite()) {
        return Err(StatsError::Degenerate {
            what: "the statistic is not finite on some bootstrap resample",
        });
    }
    let estimate = statistic(xs);
    if !estimate.is_finite() {
        return Err(StatsError::Degenerate {
            what: "the statistic is not finite on the sample",
        });
    }
    let b = distribution.len() as f64;
    let sorted_t = sorted(distribution);
    let alpha = (1.0 - level) / 2.0;
    let (q_low, q_high) = match method {
        BootstrapMethod::Percentile => (alpha, 1.0 - alpha),
        BootstrapMethod::Bca => bca_levels(xs, &statistic, &sorted_t, estimate, alpha)?,
    };
    let mean_t = distribution.iter().sum::<f64>() / b;
    let var_t = distribution
        .iter()
        .map(|t| (t - mean_t) * (t - mean_t))
        .sum::<f64>()
        / (b - 1.0);
    Ok(Bootstrap {
        estimate,
        interval: Interval {
            low: quantile_sorted(&sorted_t, q_low),
            high: quantile_sorted(&sorted_t, q_high),
            level,
        },
        standard_error: var_t.sqrt(),
    })
}

/// The BCa quantile levels `(alpha_1, alpha_2)`.
fn bca_levels<F>(
    xs: &[f64],
    statistic: &F,
    sorted_t: &[f64],
    estimate: f64,
    alpha: f64,
) -> Result<(f64, f64), StatsError>
where
    F: Fn(&[f64]) -> f64,
{
    let b = sorted_t.len() as f64;
    // Bias correction: the share of the distribution below the estimate, counting ties half
    // (SciPy's `_percentile_of_score`).
    let below = sorted_t.partition_point(|t| *t < estimate) as f64;
    let at_or_below = sorted_t.partition_point(|t| *t <= estimate) as f64;
    let z0 = normal_quantile((below + at_or_below) / (2.0 * b))?;

    // Acceleration from the jackknife (Efron & Tibshirani eq. 14.15).
    let n = xs.len();
    let mut leave_one_out = Vec::with_capacity(n - 1);
    let jack: Vec<f64> = (0..n)
        .map(|i| {
            leave_one_out.clear();
            leave_one_out.extend_from_slice(&xs[..i]);
            leave_one_out.extend_from_slice(&xs[i + 1..]);
            statistic(&leave_one_out)
        })
        .collect();
    let jack_mean = jack.iter().sum::<f64>() / n as f64;
    let (mut s2, mut s3) = (0.0, 0.0);
    for t in &jack {
        let d = jack_mean - t;
        s2 += d * d;
        s3 += d * d * d;
    }
    let a = s3 / (6.0 * s2.powf(1.5));

    let z_alpha = normal_quantile(alpha)?;
    let level_of = |z: f64| {
        let num = z0 + z;
        normal_cdf(z0 + num / (1.0 - a * num))
    };
    let (a1, a2) = (level_of(z_alpha), level_of(-z_alpha));
    let valid = |p: f64| (0.0..=1.0).contains(&p);
    if !(valid(a1) && valid(a2)) {
        return Err(StatsError::Degenerate {
            what: "the BCa interval is undefined for these data (constant jackknife or estimate outside the bootstrap distribution)",
        });
    }
    Ok((a1, a2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::mean as checked_mean;

    fn mean(xs: &[f64]) -> f64 {
        xs.iter().sum::<f64>() / xs.len() as f64
    }

    #[test]
    fn same_seed_same_result() {
        let xs = [1.0, 3.0, 2.0, 8.0, 5.0, 4.0, 9.0];
        let a = bootstrap_ci(&xs, mean, BootstrapMethod::Bca, 0.95, 500, 7).unwrap();
        let b = bootstrap_ci(&xs, mean, BootstrapMethod::Bca, 0.95, 500, 7).unwrap();
        assert_eq!(a, b);
        let c = bootstrap_ci(&xs, mean, BootstrapMethod::Bca, 0.95, 500, 8).unwrap();
        assert_ne!(a.interval, c.interval);
        assert_eq!(a.estimate, checked_mean(&xs).unwrap());
        let dist = bootstrap_distribution(&xs, mean, 500, 7).unwrap();
        assert_eq!(
            bootstrap_interval(&xs, mean, &dist, BootstrapMethod::Bca, 0.95).unwrap(),
            a
        );
    }

    #[test]
    fn percentile_of_given_distribution() {
        let dist: Vec<f64> = (0..=100).map(f64::from).collect();
        let r =
            bootstrap_interval(&[1.0, 2.0], mean, &dist, BootstrapMethod::Percentile, 0.9).unwrap();
        assert!((r.interval.low - 5.0).abs() < 1e-12);
        assert!((r.interval.high - 95.0).abs() < 1e-12);
    }

    #[test]
    fn bca_of_constant_data_is_degenerate() {
        let xs = [2.0; 6];
        assert!(matches!(
            bootstrap_ci(&xs, mean, BootstrapMethod::Bca, 0.95, 100, 1),
            Err(StatsError::Degenerate { .. })
        ));
        let p = bootstrap_ci(&xs, mean, BootstrapMethod::Percentile, 0.95, 100, 1).unwrap();
        assert_eq!((p.interval.low, p.interval.high), (2.0, 2.0));
    }
}
