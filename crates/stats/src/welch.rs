//! Welch's unequal-variance t-test (Welch 1947; Satterthwaite 1946), two-sided, with the
//! confidence interval of the difference of means. Matches
//! `scipy.stats.ttest_ind(x, y, equal_var=False)` and its `confidence_interval(level)`.

use crate::distribution::{t_quantile, t_sf};
use crate::error::{check, check_level, StatsError};
use crate::interval::Interval;
use crate::summary::mean;

/// Result of [`welch_t_test`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// `(mean(x) - mean(y)) / sqrt(s_x^2/m + s_y^2/n)`.
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value, `2 P(T_df >= |t|)`.
    pub p: f64,
    /// `mean(x) - mean(y)`.
    pub difference: f64,
    /// Interval for the difference of means, `difference -+ t_{df,(1+level)/2} * se`.
    pub ci: Interval,
}

/// Sample variance; exactly zero for a constant sample. The mean of equal values can differ
/// from them by rounding (twelve copies of ln 1.25 average to a neighbouring double), which
/// would leave a variance of 1e-33 where there is none and turn two constant samples into a
/// point interval instead of the undefined statistic they give.
fn variance(xs: &[f64], m: f64) -> f64 {
    if xs.iter().all(|&x| x == xs[0]) {
        return 0.0;
    }
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Welch's t-test of `x` against `y` (each at least 2 values).
///
/// Returns [`StatsError::Degenerate`] when both samples have zero variance: the statistic is
/// then undefined (SciPy returns NaN).
pub fn welch_t_test(x: &[f64], y: &[f64], level: f64) -> Result<Welch, StatsError> {
    check(x, 2)?;
    check(y, 2)?;
    check_level(level)?;
    let (mx, my) = (mean(x)?, mean(y)?);
    let (m, n) = (x.len() as f64, y.len() as f64);
    let vx = variance(x, mx) / m;
    let vy = variance(y, my) / n;
    let se2 = vx + vy;
    if se2 <= 0.0 {
        return Err(StatsError::Degenerate {
            what: "both samples have zero variance",
        });
    }
    let se = se2.sqrt();
    let difference = mx - my;
    let t = difference / se;
    let df = se2 * se2 / (vx * vx / (m - 1.0) + vy * vy / (n - 1.0));
    let p = (2.0 * t_sf(t.abs(), df)?).min(1.0);
    let q = t_quantile(0.5 + level / 2.0, df)?;
    Ok(Welch {
        t,
        df,
        p,
        difference,
        ci: Interval {
            low: difference - q * se,
            high: difference + q * se,
            level,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answer() {
        // scipy.stats.ttest_ind([1,2,3,4], [2,4,6,8,10], equal_var=False):
        // t = -2.2514363231593695, df = 5.520787746170677, p = 0.06913359319239237
        let r = welch_t_test(&[1.0, 2.0, 3.0, 4.0], &[2.0, 4.0, 6.0, 8.0, 10.0], 0.95).unwrap();
        assert!((r.t - -2.251_436_323_159_369_5).abs() < 1e-12, "{}", r.t);
        assert_eq!(r.difference, -3.5);
        assert!(r.ci.low < -3.5 && r.ci.high > -3.5);
        assert!((r.df - 5.520_787_746_170_677).abs() < 1e-9, "{}", r.df);
        assert!((r.p - 0.069_133_593_192_392_37).abs() < 1e-9, "{}", r.p);
    }

    #[test]
    fn zero_variance_in_both_is_degenerate() {
        assert!(matches!(
            welch_t_test(&[1.0, 1.0], &[2.0, 2.0], 0.95),
            Err(StatsError::Degenerate { .. })
        ));
        // One constant sample is fine: df falls back to the other sample's n - 1.
        let r = welch_t_test(&[1.0, 1.0, 1.0], &[2.0, 3.0, 4.0], 0.95).unwrap();
        assert!((r.df - 2.0).abs() < 1e-12);
    }

    #[test]
    fn constant_samples_are_detected_exactly() {
        // The logs of [1.0] * 12 and [1.25] * 12: the mean of twelve copies of ln 1.25 is not
        // ln 1.25 itself, and the rounding once gave a variance of ~1e-33 and the interval
        // [ln 1.25, ln 1.25].
        let x = vec![1.25f64.ln(); 12];
        let y = vec![1.0f64.ln(); 12];
        let mean: f64 = x.iter().sum::<f64>() / 12.0;
        assert_ne!(mean, x[0], "the rounding this test is about");
        assert!(matches!(
            welch_t_test(&x, &y, 0.95),
            Err(StatsError::Degenerate { .. })
        ));
        // One constant side: its variance is exactly zero, so df is the other side's n - 1.
        let z: Vec<f64> = (0..12).map(|i| f64::from(i) * 0.01).collect();
        let r = welch_t_test(&x, &z, 0.95).unwrap();
        assert_eq!(r.df, 11.0);
    }

    #[test]
    fn needs_two_values_each() {
        assert!(matches!(
            welch_t_test(&[1.0], &[2.0, 3.0], 0.95),
            Err(StatsError::TooFew { .. })
        ));
    }
}
