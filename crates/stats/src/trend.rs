//! A monotone trend in a series: the Theil-Sen slope with Sen's interval, and the Mann-Kendall
//! test of the trend.
//!
//! Sources: Theil, "A rank-invariant method of linear and polynomial regression analysis"
//! (1950); Sen, "Estimates of the regression coefficient based on Kendall's tau", JASA 1968
//! (the interval); Mann, "Nonparametric tests against trend", Econometrica 1945, and Kendall,
//! "Rank Correlation Methods" (1975) for the variance of S with ties. The slope and its interval
//! are those of `scipy.stats.theilslopes(y, range(n), alpha)`, the p-value that of
//! `scipy.stats.kendalltau(range(n), y, method='asymptotic')`: both use the normal
//! approximation of S, without a continuity correction. The slope is the median of the
//! pairwise slopes, so up to 29% of the points may be wild before it moves (its breakdown
//! point): a single bad session cannot make a trend.

use crate::distribution::{normal_quantile, normal_sf};
use crate::error::{check, check_level, StatsError};

/// The trend of a series against its index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    /// Theil-Sen slope: change per step of the index.
    pub slope: f64,
    /// Sen's interval of the slope at the level asked.
    pub slope_low: f64,
    pub slope_high: f64,
    /// Two-sided p-value of the Mann-Kendall test (no trend).
    pub p_value: f64,
}

/// Fewest points for [`trend`]: the normal approximation of S is poor below about 8 (Kendall
/// 1975 tabulates exact values up to 10), and a trend of fewer sessions is a step.
pub const MIN_TREND_POINTS: usize = 8;

/// The Theil-Sen trend of `ys` against `0, 1, ..., n-1` with its interval at `level` and the
/// Mann-Kendall p-value. Needs [`MIN_TREND_POINTS`] finite values; a constant series has slope
/// 0 and p-value 1.
pub fn trend(ys: &[f64], level: f64) -> Result<Trend, StatsError> {
    check(ys, MIN_TREND_POINTS)?;
    check_level(level)?;
    let n = ys.len();
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            let dy = ys[j] - ys[i];
            slopes.push(dy / (j - i) as f64);
            s += match dy.partial_cmp(&0.0) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    slopes.sort_by(f64::total_cmp);
    let slope = crate::summary::median(&slopes)?;
    // Var(S) with ties among the values (the index has none): Kendall 1975, eq. 4.3.
    let tie_term: f64 = tie_groups(ys)
        .into_iter()
        .map(|t| {
            let t = t as f64;
            t * (t - 1.0) * (2.0 * t + 5.0)
        })
        .sum();
    let nf = n as f64;
    let var_s = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - tie_term) / 18.0;
    let p_value = if var_s > 0.0 && s != 0 {
        2.0 * normal_sf((s as f64).abs() / var_s.sqrt())
    } else {
        1.0
    };
    // Sen's interval: the order statistics of the slopes at (N -+ z * sigma) / 2, rounded as
    // NumPy rounds (half to even), as scipy.stats.theilslopes takes them.
    let z = normal_quantile((1.0 - level) / 2.0)?;
    let sigma = var_s.max(0.0).sqrt();
    let count = slopes.len() as f64;
    let last = slopes.len() - 1;
    let upper = (((count - z * sigma) / 2.0).round_ties_even().max(0.0) as usize).min(last);
    let lower = ((((count + z * sigma) / 2.0).round_ties_even() - 1.0).max(0.0) as usize).min(last);
    Ok(Trend {
        slope,
        slope_low: slopes[lower],
        slope_high: slopes[upper],
        p_value,
    })
}

/// Sizes of the groups of equal values with two or more members.
fn tie_groups(ys: &[f64]) -> Vec<usize> {
    let mut sorted = ys.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut groups = Vec::new();
    let mut run = 1;
    for w in sorted.windows(2) {
        if w[0] == w[1] {
            run += 1;
        } else {
            if run > 1 {
                groups.push(run);
            }
            run = 1;
        }
    }
    if run > 1 {
        groups.push(run);
    }
    groups
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn equals_scipy_without_ties() {
        // scipy.stats.theilslopes(y, range(10), alpha=0.95) -> 0.2, [0.15, 0.25];
        // scipy.stats.kendalltau(range(10), y, method='asymptotic').pvalue -> 0.000935026...
        let y = [1.0, 1.2, 0.9, 1.5, 1.7, 1.6, 2.1, 2.4, 2.2, 2.9];
        let t = trend(&y, 0.95).unwrap();
        assert!(close(t.slope, 0.2), "{t:?}");
        assert!(
            close(t.slope_low, 0.15) && close(t.slope_high, 0.25),
            "{t:?}"
        );
        assert!(
            (t.p_value - 0.000_935_026_352_639_627_7).abs() < 1e-12,
            "{t:?}"
        );
    }

    #[test]
    fn equals_scipy_with_ties() {
        // theilslopes -> 0.3875, [0.142857142857, 0.5]; kendalltau p -> 0.00502935599116
        let y = [3.0, 3.0, 2.0, 4.0, 4.0, 5.0, 3.0, 6.0, 6.0, 6.0, 7.0, 5.0];
        let t = trend(&y, 0.95).unwrap();
        assert!(close(t.slope, 0.3875), "{t:?}");
        assert!(
            close(t.slope_low, 1.0 / 7.0) && close(t.slope_high, 0.5),
            "{t:?}"
        );
        assert!(
            (t.p_value - 0.005_029_355_991_160_988_5).abs() < 1e-12,
            "{t:?}"
        );
    }

    #[test]
    fn one_wild_point_makes_no_trend() {
        let mut y = vec![1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0];
        y[9] = 5.0;
        let t = trend(&y, 0.95).unwrap();
        assert!(t.slope.abs() < 0.01, "{t:?}");
        assert!(t.p_value > 0.05, "{t:?}");
    }

    #[test]
    fn constant_and_short_series() {
        let t = trend(&[2.0; 9], 0.95).unwrap();
        assert_eq!((t.slope, t.p_value), (0.0, 1.0));
        assert!(trend(&[1.0; 7], 0.95).is_err());
    }
}
