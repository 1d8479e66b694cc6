//! Hodges-Lehmann estimate of the shift between two samples and its distribution-free
//! confidence interval (Hodges & Lehmann 1963; Moses' interval; Hollander & Wolfe,
//! *Nonparametric Statistical Methods*, 3rd ed., sec. 4.2-4.3). SciPy has no such function:
//! `scripts/gen_stats_fixtures.py` holds a reference implementation of the same formulas.

use statrs::distribution::ContinuousCDF;

use crate::error::{check, check_level, StatsError};
use crate::interval::Interval;
use crate::mannwhitney::{rank_sums, resolve, standard_normal, u_sd, Method};
use crate::summary::quantile_sorted;

/// Result of [`hodges_lehmann`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HodgesLehmann {
    /// Median of all `m n` differences `y_j - x_i`: how much larger `y` is than `x`.
    pub shift: f64,
    /// Interval for the shift; `None` when the samples are too small for the level (for
    /// example m = n = 3 at 95%).
    pub ci: Option<Interval>,
    /// How the interval's order statistic was found: [`Method::Exact`] or
    /// [`Method::Asymptotic`].
    pub method: Method,
}

/// Hodges-Lehmann shift of `y` relative to `x`, with the method chosen as in
/// [`crate::mann_whitney_u`].
pub fn hodges_lehmann(x: &[f64], y: &[f64], level: f64) -> Result<HodgesLehmann, StatsError> {
    hodges_lehmann_with(x, y, level, Method::Auto)
}

/// Hodges-Lehmann shift of `y` relative to `x` with its confidence interval.
///
/// With `D(1) <= ... <= D(mn)` the sorted differences `y_j - x_i`, the interval is
/// `[D(k), D(mn - k + 1)]`; it misses the true shift exactly when the Mann-Whitney count of the
/// shifted samples is `<= k - 1` or `>= mn - k + 1`, so its coverage is `1 - 2 P(U <= k - 1)`.
/// - exact: `k` is the largest integer with `P(U <= k - 1) <= (1 - level) / 2` under the null
///   distribution of U without ties;
/// - asymptotic: the same rule with U normal, mean `mn/2`, the tie-corrected standard deviation
///   `sd` of the Mann-Whitney test and a continuity correction, giving
///   `k = floor(mn/2 - z sd + 1/2)` (the integer nearest `mn/2 - z sd`, Hollander & Wolfe
///   eq. 4.41), `z` the `(1 + level) / 2` normal quantile.
///
/// `k < 1` means no interval at this level. Uses `O(m n)` memory for the differences.
pub fn hodges_lehmann_with(
    x: &[f64],
    y: &[f64],
    level: f64,
    method: Method,
) -> Result<HodgesLehmann, StatsError> {
    check(x, 1)?;
    check(y, 1)?;
    check_level(level)?;
    let (m, n) = (x.len(), y.len());
    let mut diffs: Vec<f64> = Vec::with_capacity(m * n);
    for &yj in y {
        for &xi in x {
            diffs.push(yj - xi);
        }
    }
    diffs.sort_by(f64::total_cmp);
    let shift = quantile_sorted(&diffs, 0.5);

    let sums = rank_sums(x, y);
    let (method, dist) = resolve(method, m, n, sums.has_ties)?;
    let mn = m * n;
    let alpha_half = (1.0 - level) / 2.0;
    // k may not exceed (mn + 1) / 2, where the interval shrinks to the median difference.
    let k_max = mn.div_ceil(2);
    let k = match dist {
        Some(dist) => {
            // Largest k with P(U <= k - 1) <= alpha/2; the relative slack absorbs rounding of
            // tail probabilities that equal alpha/2 exactly.
            let mut k = 0;
            while k < k_max && dist.cdf(k) <= alpha_half * (1.0 + 1e-12) {
                k += 1;
            }
            k
        }
        None => {
            let z = standard_normal().inverse_cdf(1.0 - alpha_half);
            let sd = u_sd(m, n, sums.tie_term);
            let k = (mn as f64 / 2.0 - z * sd + 0.5).floor();
            if k < 1.0 {
                0
            } else {
                (k as usize).min(k_max)
            }
        }
    };
    let ci = (k >= 1).then(|| Interval {
        low: diffs[k - 1],
        high: diffs[mn - k],
        level,
    });
    Ok(HodgesLehmann { shift, ci, method })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_of_translated_sample() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let y: Vec<f64> = x.iter().map(|v| v + 10.5).collect();
        let r = hodges_lehmann(&x, &y, 0.95).unwrap();
        assert_eq!(r.shift, 10.5);
        assert_eq!(r.method, Method::Exact);
        let ci = r.ci.unwrap();
        assert!(ci.low <= 10.5 && 10.5 <= ci.high);
    }

    #[test]
    fn exact_interval_of_five_by_five() {
        // m = n = 5: P(U <= 2) = 4/252 = 0.0159 <= 0.025 < P(U <= 3) = 7/252, so k = 3 and the
        // interval is [D(3), D(23)].
        let x = [0.0, 10.0, 20.0, 30.0, 40.0];
        let y = [1.0, 2.0, 3.0, 4.0, 5.0];
        let mut d: Vec<f64> = y
            .iter()
            .flat_map(|yj| x.iter().map(move |xi| yj - xi))
            .collect();
        d.sort_by(f64::total_cmp);
        let ci = hodges_lehmann(&x, &y, 0.95).unwrap().ci.unwrap();
        assert_eq!((ci.low, ci.high), (d[2], d[22]));
    }

    #[test]
    fn too_small_for_an_interval() {
        let r = hodges_lehmann(&[1.0, 2.0], &[3.0, 4.0], 0.95).unwrap();
        assert_eq!(r.shift, 2.0);
        assert_eq!(r.ci, None);
    }

    #[test]
    fn normal_and_exact_k_agree_closely() {
        let x: Vec<f64> = (0..20).map(|i| f64::from(i) * 1.1).collect();
        let y: Vec<f64> = (0..20).map(|i| f64::from(i) * 0.9 + 0.05).collect();
        let e = hodges_lehmann_with(&x, &y, 0.95, Method::Exact).unwrap();
        let a = hodges_lehmann_with(&x, &y, 0.95, Method::Asymptotic).unwrap();
        let (e, a) = (e.ci.unwrap(), a.ci.unwrap());
        let width = e.high - e.low;
        assert!((e.low - a.low).abs() <= 0.1 * width, "{e:?} {a:?}");
        assert!((e.high - a.high).abs() <= 0.1 * width, "{e:?} {a:?}");
    }

    #[test]
    fn all_equal_gives_point_interval() {
        let r = hodges_lehmann(&[3.0; 10], &[3.0; 10], 0.95).unwrap();
        assert_eq!(r.shift, 0.0);
        let ci = r.ci.unwrap();
        assert_eq!((ci.low, ci.high), (0.0, 0.0));
    }
}
