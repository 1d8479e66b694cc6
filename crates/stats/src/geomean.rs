//! Geometric means: of positive values, and of per-configuration ratios with a confidence
//! interval for a fixed suite of configurations.

use crate::distribution::normal_quantile;

use crate::error::{check, check_level, check_positive, StatsError};
use crate::interval::Interval;

/// Geometric mean `exp(mean(ln x))` of positive values (`scipy.stats.gmean`).
pub fn geometric_mean(xs: &[f64]) -> Result<f64, StatsError> {
    check(xs, 1)?;
    check_positive(xs)?;
    let mean_log = xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64;
    Ok(mean_log.exp())
}

/// Geometric mean of ratios with its interval, from the comparisons of one suite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeomeanRatio {
    /// `exp(mean l_i)`.
    pub geomean: f64,
    pub ci: Interval,
}

/// Geometric mean of `k` ratios given their logarithms `l_i` and the standard errors `se_i` of
/// those logarithms (for example from the Welch or Hodges-Lehmann comparison on log values).
///
/// The suite of configurations is fixed, not sampled, so the only uncertainty is that of each
/// estimate; with independent estimates `Var(mean l) = sum se_i^2 / k^2`, and the interval is
/// `exp(mean l -+ z sqrt(sum se_i^2) / k)` with `z` the `(1 + level) / 2` normal quantile: the
/// normal interval of a mean of independent estimates, taken on the log scale and mapped back.
/// Ratios are summarized by their geometric mean because it is the only mean consistent under
/// a change of reference (Fleming & Wallace, "How not to lie with statistics", CACM 1986).
pub fn geomean_ratio_ci(
    log_ratios: &[f64],
    std_errors: &[f64],
    level: f64,
) -> Result<GeomeanRatio, StatsError> {
    check(log_ratios, 1)?;
    check(std_errors, 1)?;
    check_level(level)?;
    if log_ratios.len() != std_errors.len() {
        return Err(StatsError::LengthMismatch {
            what: "log ratios and standard errors",
            left: log_ratios.len(),
            right: std_errors.len(),
        });
    }
    if let Some((index, &value)) = std_errors.iter().enumerate().find(|(_, s)| **s < 0.0) {
        return Err(StatsError::NotPositive { index, value });
    }
    let k = log_ratios.len() as f64;
    let mean_log = log_ratios.iter().sum::<f64>() / k;
    let half = normal_quantile(0.5 + level / 2.0)?
        * std_errors.iter().map(|s| s * s).sum::<f64>().sqrt()
        / k;
    Ok(GeomeanRatio {
        geomean: mean_log.exp(),
        ci: Interval {
            low: (mean_log - half).exp(),
            high: (mean_log + half).exp(),
            level,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometric_mean_known() {
        // scipy.stats.gmean([1, 4, 16]) == 4
        assert!((geometric_mean(&[1.0, 4.0, 16.0]).unwrap() - 4.0).abs() < 1e-12);
        assert!(matches!(
            geometric_mean(&[1.0, 0.0]),
            Err(StatsError::NotPositive { index: 1, .. })
        ));
    }

    #[test]
    fn ratio_interval() {
        let l = [2f64.ln(), 0.5f64.ln(), 1.0f64.ln()];
        let r = geomean_ratio_ci(&l, &[0.0, 0.0, 0.0], 0.95).unwrap();
        assert!((r.geomean - 1.0).abs() < 1e-12);
        assert!((r.ci.low - 1.0).abs() < 1e-12 && (r.ci.high - 1.0).abs() < 1e-12);
        // One ratio with se 0.1: exp(+-1.959964 * 0.1) around 1.
        let r = geomean_ratio_ci(&[0.0], &[0.1], 0.95).unwrap();
        assert!((r.ci.high - (0.195_996_398_454_005_4f64).exp()).abs() < 1e-9);
        assert!((r.ci.low * r.ci.high - 1.0).abs() < 1e-12);
    }

    #[test]
    fn ratio_interval_checks_lengths() {
        assert!(matches!(
            geomean_ratio_ci(&[0.0, 1.0], &[0.1], 0.95),
            Err(StatsError::LengthMismatch { .. })
        ));
        assert!(geomean_ratio_ci(&[0.0], &[-0.1], 0.95).is_err());
    }
}
