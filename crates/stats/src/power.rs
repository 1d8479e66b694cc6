//! The power of a verdict and the minimum detectable change.
//!
//! A verdict claims a change beyond the threshold when its interval `estimate -+ c se` (with
//! `c` the `(1 + level)/2` quantile of t with `df` degrees of freedom and `se` estimated with
//! those degrees of freedom) lies beyond `ln(1 + threshold)`. For a true log-ratio `d` the
//! statistic `(estimate - ln(1 + threshold)) / se` follows the noncentral t distribution with
//! `df` degrees of freedom and noncentrality `delta = (d - ln(1 + threshold)) / sigma`
//! (`sigma` the true standard error), so the verdict's power is `P(T'(df, delta) > c)`
//! (Johnson, Kotz and Balakrishnan, *Continuous Univariate Distributions*, vol. 2, ch. 31).
//! [`detectable_noncentrality`] solves it for the `delta` that reaches a power, and
//! [`min_detectable_change`] turns that into the relative change.
//!
//! With infinite degrees of freedom this is the usual `delta = c + z_power`. With few, `se` is
//! itself uncertain, and both the power and the estimate of `sigma` account for it: the
//! noncentral t integrates over the chi distribution of `se / sigma`, and the standard error
//! that the data give is scaled by `sqrt(df / median(chi2_df))`, so that the printed change is
//! the true one in the median (a chi-square is skewed: at one degree of freedom the estimated
//! standard error is below the true one 68% of the time).

use crate::distribution::{normal_cdf, normal_quantile, t_quantile};
use crate::error::{check, check_level, StatsError};

/// Degrees of freedom beyond which `se` counts as known (the chi distribution of `se / sigma`
/// has a standard deviation of `1 / sqrt(2 df)`, below 2.3e-4 here).
const KNOWN_DF: f64 = 1e7;

/// Panels of the Simpson rule over the chi distribution: its density is smooth in the grid's
/// variable and spans about 24 units, so the rule's error is near 1e-9.
const PANELS: usize = 1000;

/// Most steps of each phase of [`detectable_noncentrality`].
const MAX_STEPS: usize = 200;

/// The chi distribution with `df` degrees of freedom (the distribution of `sqrt(chi2_df)`) on
/// an even grid of `panels + 1` points of an integration variable `w`, with its step: each
/// point as `(v, density in w)`, scaled by a constant (the grid's own normalization removes
/// it). The grid spans the mode -+ 12 (clipped at 0). Below 2 degrees of freedom the density
/// in `v`, proportional to `v^(df-1) e^(-v^2/2)`, has a cusp or a pole at 0; there `v = w^(1/df)`,
/// whose density in `w` is `e^(-v^2/2) / df`, smooth, so that the rules keep their accuracy.
fn chi_grid(df: f64, panels: usize) -> (f64, Vec<(f64, f64)>) {
    let mode = (df - 1.0).max(0.0).sqrt();
    let (lo, hi) = ((mode - 12.0).max(0.0), mode + 12.0);
    if df < 2.0 {
        let h = hi.powf(df) / panels as f64;
        let points = (0..=panels)
            .map(|i| {
                let v = (h * i as f64).powf(1.0 / df);
                (v, (-v * v / 2.0).exp())
            })
            .collect();
        return (h, points);
    }
    let h = (hi - lo) / panels as f64;
    // ln density up to a constant, (df - 1) ln v - v^2 / 2, relative to the mode's.
    let log_at = |v: f64| {
        if v == 0.0 {
            f64::NEG_INFINITY
        } else {
            (df - 1.0) * v.ln() - v * v / 2.0
        }
    };
    let top = log_at(mode.max(lo));
    let points = (0..=panels)
        .map(|i| {
            let v = lo + h * i as f64;
            (v, (log_at(v) - top).exp())
        })
        .collect();
    (h, points)
}

/// The chi distribution as Simpson weights on [`chi_grid`], normalized by the same rule
/// applied to the density: `E[g(V)] = sum w_i g(v_i)`. Built once per degree of freedom and
/// reused for every noncentrality a search tries.
struct ChiWeights(Vec<(f64, f64)>);

impl ChiWeights {
    fn new(df: f64) -> Self {
        let (_, points) = chi_grid(df, PANELS);
        let mut weighted: Vec<(f64, f64)> = points
            .iter()
            .enumerate()
            .map(|(i, &(v, density))| {
                let w = if i == 0 || i == PANELS {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                (v, w * density)
            })
            // Points where the density has vanished add nothing.
            .filter(|p| p.1 > 1e-300)
            .collect();
        let mass: f64 = weighted.iter().map(|p| p.1).sum();
        for p in &mut weighted {
            p.1 /= mass;
        }
        ChiWeights(weighted)
    }

    /// `P(T'(df, delta) > critical)` (see [`noncentral_t_power`]).
    fn power(&self, df: f64, critical: f64, delta: f64) -> f64 {
        // T' = (Z + delta) / (V / sqrt(df)) with V ~ chi(df): P(Z > critical V / sqrt(df) - delta).
        let scale = critical / df.sqrt();
        self.0
            .iter()
            .map(|&(v, w)| w * normal_cdf(delta - scale * v))
            .sum()
    }
}

fn check_df(df: f64) -> Result<(), StatsError> {
    if df >= 1.0 {
        Ok(())
    } else {
        Err(StatsError::OutOfRange {
            what: "degrees of freedom",
            range: "[1, inf]",
            value: df,
        })
    }
}

/// `P(T'(df, delta) > critical)`: the power of a one-sided t test whose statistic has
/// noncentrality `delta`, for `df >= 1` degrees of freedom (infinite: the normal).
pub fn noncentral_t_power(df: f64, critical: f64, delta: f64) -> Result<f64, StatsError> {
    check(&[critical, delta], 2)?;
    check_df(df)?;
    if df >= KNOWN_DF {
        return Ok(normal_cdf(delta - critical));
    }
    Ok(ChiWeights::new(df).power(df, critical, delta))
}

/// The median of `chi2_df / df`, for `df >= 1` (1 when `df` is infinite), within 2e-5 of its
/// value (a planning figure: it scales the minimum detectable change).
pub fn chi_square_median_ratio(df: f64) -> Result<f64, StatsError> {
    check_df(df)?;
    if df >= KNOWN_DF {
        return Ok(1.0);
    }
    // The distribution function by the trapezoid rule on the grid; the median between the
    // two points where it passes 1/2, interpolated linearly in the grid's variable.
    // A finer grid than the power's: the trapezoid rule's error falls as the step squared.
    let (h, points) = chi_grid(df, 16 * PANELS);
    let mut cumulative = Vec::with_capacity(points.len());
    let mut sum = 0.0;
    cumulative.push(0.0);
    for pair in points.windows(2) {
        sum += h * (pair[0].1 + pair[1].1) / 2.0;
        cumulative.push(sum);
    }
    for (i, pair) in cumulative.windows(2).enumerate() {
        if pair[1] >= sum / 2.0 {
            let share = (sum / 2.0 - pair[0]) / (pair[1] - pair[0]);
            let v = if df < 2.0 {
                (h * (i as f64 + share)).powf(1.0 / df)
            } else {
                points[i].0 + share * h
            };
            return Ok(v * v / df);
        }
    }
    Err(StatsError::Degenerate {
        what: "the chi-square median was not found",
    })
}

/// The noncentrality `delta` at which the one-sided test at the interval's critical value
/// (`(1 + level)/2` quantile of t with `df` degrees of freedom) has power `power`, by regula
/// falsi (bounded to 200 steps) on [`noncentral_t_power`], which rises with `delta`.
pub fn detectable_noncentrality(df: f64, level: f64, power: f64) -> Result<f64, StatsError> {
    check_level(level)?;
    if !(power > 0.0 && power < 1.0) {
        return Err(StatsError::OutOfRange {
            what: "power",
            range: "(0, 1)",
            value: power,
        });
    }
    check_df(df)?;
    let critical = t_quantile(0.5 + level / 2.0, df)?;
    let z = normal_quantile(power)?;
    if df >= KNOWN_DF {
        return Ok(critical + z);
    }
    let weights = ChiWeights::new(df);
    let excess = |delta: f64| weights.power(df, critical, delta) - power;
    // A bracket around the normal approximation of the noncentral t (Abramowitz and Stegun
    // 26.7.10: delta = c (1 - 1/(4 df)) + z sqrt(1 + c^2 / (2 df))), widened until it holds
    // the root, then the Illinois variant of regula falsi (Dowell and Jarratt 1971).
    let guess = critical * (1.0 - 0.25 / df) + z * (1.0 + critical * critical / (2.0 * df)).sqrt();
    let mut step = 1.0 + guess.abs() / 4.0;
    let (mut lo, mut hi) = (guess - step, guess + step);
    let (mut f_lo, mut f_hi) = (excess(lo), excess(hi));
    let mut steps = 0;
    while f_lo > 0.0 || f_hi < 0.0 {
        step *= 2.0;
        if f_lo > 0.0 {
            lo -= step;
            f_lo = excess(lo);
        }
        if f_hi < 0.0 {
            hi += step;
            f_hi = excess(hi);
        }
        steps += 1;
        if steps > MAX_STEPS {
            return Err(StatsError::Degenerate {
                what: "the detectable noncentrality was not bracketed",
            });
        }
    }
    let mut side = 0;
    for _ in 0..MAX_STEPS {
        let mid = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
        if !(mid > lo && mid < hi) || hi - lo <= 1e-11 * hi.abs().max(1.0) {
            break;
        }
        let f_mid = excess(mid);
        if f_mid == 0.0 {
            return Ok(mid);
        }
        if f_mid < 0.0 {
            (lo, f_lo) = (mid, f_mid);
            if side == -1 {
                f_hi /= 2.0;
            }
            side = -1;
        } else {
            (hi, f_hi) = (mid, f_mid);
            if side == 1 {
                f_lo /= 2.0;
            }
            side = 1;
        }
    }
    Ok(lo + (hi - lo) * (-f_lo / (f_hi - f_lo)).clamp(0.0, 1.0))
}

/// The smallest relative change (0.05 = 5%) that a verdict at `level` reports as beyond
/// `threshold` with probability `power`, when its estimate has standard error `se` (on the log
/// scale) estimated with `df` degrees of freedom: `exp(ln(1 + threshold) + delta se k) - 1`,
/// `delta` from [`detectable_noncentrality`] and `k = 1 / sqrt(median(chi2_df / df))` the
/// factor that makes the estimated standard error right in the median (module documentation).
pub fn min_detectable_change(
    threshold: f64,
    se: f64,
    df: f64,
    level: f64,
    power: f64,
) -> Result<f64, StatsError> {
    check(&[threshold, se], 2)?;
    if !(0.0..1.0).contains(&threshold) || se < 0.0 {
        return Err(StatsError::OutOfRange {
            what: "threshold and standard error",
            range: "threshold in [0, 1), standard error non-negative",
            value: threshold.min(se),
        });
    }
    let delta = detectable_noncentrality(df, level, power)?;
    let median_unbiased = 1.0 / chi_square_median_ratio(df)?.sqrt();
    Ok(((1.0 + threshold).ln() + delta * se * median_unbiased).exp_m1())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn known_variance_is_the_normal_power_calculation() {
        // delta = z_0.975 + z_0.8 with infinite degrees of freedom.
        let d = detectable_noncentrality(f64::INFINITY, 0.95, 0.8).unwrap();
        assert!((d - (1.959_963_984_540_054 + 0.841_621_233_572_914_3)).abs() < 1e-12);
        let mdc = min_detectable_change(0.02, 0.01, f64::INFINITY, 0.95, 0.8).unwrap();
        assert!((mdc - (1.02f64.ln() + d * 0.01).exp_m1()).abs() < 1e-15);
    }

    #[test]
    fn few_degrees_of_freedom_need_more() {
        let at = |df: f64| detectable_noncentrality(df, 0.95, 0.8).unwrap();
        assert!(at(1.0) > at(2.0) && at(2.0) > at(10.0) && at(10.0) > at(f64::INFINITY));
        // SciPy's chi2.median(df) / df and the noncentralities from scipy.stats.nct (brentq on
        // nct.sf(t.ppf(0.975, df), df, delta) = 0.8).
        for (df, median, delta) in [
            (1.0, 0.454_936_423_120, 16.334_008_869_9),
            (1.5, 0.605_555_971_098, 7.829_040_965_7),
            (4.0, 0.839_173_495_008, 3.761_060_261_0),
            (100.0, 0.993_341_292_360, 2.828_850_666_6),
        ] {
            let m = chi_square_median_ratio(df).unwrap();
            assert!((m / median - 1.0).abs() < 2e-5, "df {df}: median {m}");
            let d = detectable_noncentrality(df, 0.95, 0.8).unwrap();
            assert!((d / delta - 1.0).abs() < 1e-5, "df {df}: delta {d}");
        }
        assert!(noncentral_t_power(0.5, 2.0, 1.0).is_err());
    }
}
