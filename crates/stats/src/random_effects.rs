//! Session-to-session noise: the between-session variance component of a one-way
//! random-effects model, and intervals widened by it.
//!
//! The model (one configuration, log scale): run `j` of session `i` of group `g` is
//! `y = mu_g + b_i + e_ij`, with a session effect `b_i ~ (0, tau^2)` shared by every run of the
//! session and run noise `e_ij` within it. A session is summarized by its median `m_i` and the
//! squared standard error `v_i` of that median ([`median_se`]), so `Var(m_i) = tau^2 + v_i`.
//! An interval computed from the runs of one session per side sees only the `v` part; whole
//! sessions shifting (`tau`) is invisible to it. [`between_session_variance`] estimates `tau^2`
//! from several sessions with the ANOVA (method of moments) estimator of a variance component
//! (Searle, Casella & McCulloch, *Variance Components*, 1992, sec. 3.5; with equal weights it
//! is the DerSimonian & Laird 1986 estimator): the mean square of the session medians around
//! their group means, minus the mean within-session part, truncated at zero. Its degrees of
//! freedom are those of that mean square, `sessions - groups`.
//!
//! [`widen`] adds such a variance to an interval computed from the runs, with Satterthwaite's
//! (1946) degrees of freedom for the sum of a well-determined part (the runs) and an estimated
//! one; `crate::power` says which change such an interval can report.

use crate::distribution::{beta_cdf, normal_quantile, t_quantile};
use crate::error::{check, check_level, StatsError};
use crate::summary::{median, sorted};

/// Standard error of the sample median by Maritz & Jarrett ("A note on estimating the variance
/// of the sample median", JASA 73(361), 1978): the `m`-th order statistic, `m = floor(n/2 +
/// 1/2)`, has the distribution of the `m`-th of `n` uniforms, Beta(m, n - m + 1), mapped
/// through the quantile function, which is estimated by the empirical one. Its moments are then
/// weighted sums of the order statistics, `W_i = I(i/n) - I((i-1)/n)` with `I` the
/// Beta(m, n - m + 1) distribution function, and `se^2 = sum W_i x(i)^2 - (sum W_i x(i))^2`.
///
/// It is distribution-free and suits skewed timing data. It replaces the McKean-Schrader
/// estimator (1984), whose order statistics for `n = 10` are the extremes: in
/// `scripts/median_se_bias.py` (20,000 samples each) McKean-Schrader's variance at `n = 10` was
/// 2.78 times the true variance of the median for normal data and 3.83 times with 10% of the
/// values shifted up, against 1.40 and 1.45 times for this one (both 1.2-1.3 at `n = 20`), and
/// the between-session variance left after subtracting it was truncated to zero far too often
/// (docs/compare.md). One value gives 0.
pub fn median_se(xs: &[f64]) -> Result<f64, StatsError> {
    check(xs, 1)?;
    let n = xs.len();
    let m = n.div_ceil(2).max(1);
    // floor(n/2 + 1/2) is ceil(n/2) for every n >= 1.
    debug_assert_eq!(m, ((n as f64) / 2.0 + 0.5).floor() as usize);
    let s = sorted(xs);
    if n == 1 {
        return Ok(0.0);
    }
    let (a, b) = (m as f64, (n - m + 1) as f64);
    // Centred on x(m) so that the two sums do not cancel for values far from zero.
    let center = s[m - 1];
    let (mut first, mut second) = (0.0, 0.0);
    let mut below = 0.0;
    for (i, x) in s.iter().enumerate() {
        let upto = beta_cdf((i + 1) as f64 / n as f64, a, b)?;
        let w = upto - below;
        below = upto;
        let d = x - center;
        first += w * d;
        second += w * d * d;
    }
    Ok((second - first * first).max(0.0).sqrt())
}

/// One session of a configuration, summarized: the median of its (log) values and the squared
/// standard error of that median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionMedian {
    pub median: f64,
    pub within_variance: f64,
}

impl SessionMedian {
    /// The median of `xs` and its Maritz-Jarrett variance ([`median_se`] squared).
    pub fn of(xs: &[f64]) -> Result<Self, StatsError> {
        let se = median_se(xs)?;
        Ok(SessionMedian {
            median: median(xs)?,
            within_variance: se * se,
        })
    }
}

/// The result of [`between_session_variance`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BetweenSession {
    /// Sessions over all groups.
    pub sessions: usize,
    /// Mean square of the session medians around their group means (the sample variance of
    /// the medians for one group): estimates `tau^2 + mean v`.
    pub mean_square: f64,
    /// Mean within-session variance of the session medians, `mean v_i`.
    pub within: f64,
    /// The between-session variance `tau^2 = max(0, mean_square - within)`.
    pub variance: f64,
    /// Degrees of freedom of `mean_square`: sessions minus groups.
    pub df: f64,
}

/// The between-session variance of the session medians of `groups` (one group per result set
/// that shares a true value, e.g. the base and the new side of a comparison), by the ANOVA
/// estimator described in the module documentation. Needs more sessions than groups, and at
/// least one session in each group.
pub fn between_session_variance(groups: &[&[SessionMedian]]) -> Result<BetweenSession, StatsError> {
    let sessions: usize = groups.iter().map(|g| g.len()).sum();
    if groups.iter().any(|g| g.is_empty()) || sessions <= groups.len() {
        return Err(StatsError::TooFew {
            needed: groups.len() + 1,
            got: sessions,
        });
    }
    let all: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.iter().flat_map(|s| [s.median, s.within_variance]))
        .collect();
    check(&all, 1)?;
    if let Some(s) = groups
        .iter()
        .flat_map(|g| g.iter())
        .find(|s| s.within_variance < 0.0)
    {
        return Err(StatsError::OutOfRange {
            what: "within-session variance",
            range: "[0, inf)",
            value: s.within_variance,
        });
    }
    let mut squares = 0.0;
    let mut within = 0.0;
    for g in groups {
        let mean = g.iter().map(|s| s.median).sum::<f64>() / g.len() as f64;
        squares += g.iter().map(|s| (s.median - mean).powi(2)).sum::<f64>();
        within += g.iter().map(|s| s.within_variance).sum::<f64>();
    }
    let df = (sessions - groups.len()) as f64;
    let mean_square = squares / df;
    let within = within / sessions as f64;
    Ok(BetweenSession {
        sessions,
        mean_square,
        within,
        variance: (mean_square - within).max(0.0),
        df,
    })
}

/// An estimated variance with the variance of its estimate (its sampling variance), the
/// ingredient of Satterthwaite's degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Component {
    pub variance: f64,
    /// `Var(variance estimate)`: 0 for a variance taken as known.
    pub sampling_variance: f64,
}

impl Component {
    /// A variance taken as known.
    pub fn known(variance: f64) -> Self {
        Component {
            variance,
            sampling_variance: 0.0,
        }
    }

    /// A variance estimated with `df` degrees of freedom (a scaled chi-square):
    /// `Var = 2 variance^2 / df`.
    pub fn with_df(variance: f64, df: f64) -> Self {
        Component {
            variance,
            sampling_variance: 2.0 * variance * variance / df,
        }
    }

    /// `scale (mean_square - within)`, the between-session part of an ANOVA estimate
    /// ([`between_session_variance`]) truncated at zero, `variance` being that value: its
    /// uncertainty is the mean square's, `Var = 2 scale^2 mean_square^2 / df` (the within part
    /// counts as known), whatever the truncation left. Satterthwaite's degrees of freedom from
    /// `variance^2 / df` instead, as before, made a between part that came out near zero
    /// look nearly certain, and the interval the runs' alone.
    pub fn from_mean_square(variance: f64, scale: f64, mean_square: f64, df: f64) -> Self {
        Component {
            variance,
            sampling_variance: 2.0 * (scale * mean_square).powi(2) / df,
        }
    }

    /// Satterthwaite's degrees of freedom of this estimate, `2 variance^2 / Var`; infinite
    /// when it is known.
    pub fn df(&self) -> f64 {
        if self.sampling_variance > 0.0 {
            2.0 * self.variance * self.variance / self.sampling_variance
        } else {
            f64::INFINITY
        }
    }
}

/// The sum of independent variance estimates, whose sampling variances add up; its
/// Satterthwaite (1946) degrees of freedom are `2 (sum v_i)^2 / sum Var(v_i)`
/// ([`Component::df`]).
pub fn satterthwaite(components: &[Component]) -> Result<Component, StatsError> {
    let mut sum = Component::known(0.0);
    for c in components {
        if !(c.variance.is_finite() && c.variance >= 0.0) {
            return Err(StatsError::OutOfRange {
                what: "variance",
                range: "[0, inf)",
                value: c.variance,
            });
        }
        if !(c.sampling_variance.is_finite() && c.sampling_variance >= 0.0) {
            return Err(StatsError::OutOfRange {
                what: "sampling variance of a variance",
                range: "[0, inf)",
                value: c.sampling_variance,
            });
        }
        sum.variance += c.variance;
        sum.sampling_variance += c.sampling_variance;
    }
    Ok(sum)
}

/// An interval widened by [`widen`], on the scale it was given in (logs for a ratio).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Widened {
    pub low: f64,
    pub high: f64,
    /// Standard errors of the lower and upper half: the half-width of the given interval
    /// divided by the normal quantile, combined with the added variance.
    pub se_low: f64,
    pub se_high: f64,
    /// Satterthwaite degrees of freedom of each half, and the t quantiles used.
    pub df_low: f64,
    pub df_high: f64,
    pub quantile_low: f64,
    pub quantile_high: f64,
}

/// `[low, high]`, a `level` interval around `center` from the runs (treated as a normal
/// interval: each half-width is `z` standard errors), widened by an independent variance
/// `extra`. Each half becomes `t_{df, (1+level)/2} sqrt(se_half^2 + extra.variance)` with
/// Satterthwaite's `df`, at least 1 (the runs' part counts as known). A known `extra` of 0
/// returns the interval unchanged; an estimated one, even of 0, widens it by the t quantile of its
/// uncertainty.
///
/// Two halves, because a distribution-free interval (Moses' for Hodges-Lehmann) need not be
/// symmetric around its estimate.
pub fn widen(
    center: f64,
    low: f64,
    high: f64,
    level: f64,
    extra: Component,
) -> Result<Widened, StatsError> {
    check(&[center, low, high], 3)?;
    check_level(level)?;
    if !(low <= center && center <= high) {
        return Err(StatsError::OutOfRange {
            what: "interval center",
            range: "[low, high]",
            value: center,
        });
    }
    let z = normal_quantile(0.5 + level / 2.0)?;
    let unchanged = extra.variance == 0.0 && extra.sampling_variance == 0.0;
    let half = |width: f64| -> Result<(f64, f64, f64, f64), StatsError> {
        let se_runs = width / z;
        if unchanged {
            return Ok((width, se_runs, f64::INFINITY, z));
        }
        let total = satterthwaite(&[Component::known(se_runs * se_runs), extra])?;
        // Satterthwaite's approximation (a scaled chi-square) means nothing below one degree
        // of freedom, the degrees of freedom of a single difference; it gets there when the
        // estimated part is uncertain and the runs' part small.
        let df = total.df().max(1.0);
        let q = t_quantile(0.5 + level / 2.0, df)?;
        let se = total.variance.sqrt();
        Ok((q * se, se, df, q))
    };
    let (w_low, se_low, df_low, quantile_low) = half(center - low)?;
    let (w_high, se_high, df_high, quantile_high) = half(high - center)?;
    // Unchanged bounds stay bit for bit what they were.
    let (low, high) = if unchanged {
        (low, high)
    } else {
        (center - w_low, center + w_high)
    };
    Ok(Widened {
        low,
        high,
        se_low,
        se_high,
        df_low,
        df_high,
        quantile_low,
        quantile_high,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn median_se_matches_maritz_jarrett_computed_with_scipy() {
        // Reference: numpy/scipy, W = beta.cdf(i/n, m, n-m+1) - beta.cdf((i-1)/n, m, n-m+1).
        let close = |got: f64, want: f64| (got - want).abs() < 1e-12 * want.max(1.0);
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        assert!(close(median_se(&xs).unwrap(), 2.14906508099787));
        let xs = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 7.0];
        assert!(close(median_se(&xs).unwrap(), 1.4809051938085172));
        assert!(close(median_se(&[1.0, 2.0]).unwrap(), 0.4330127018922193));
        assert_eq!(median_se(&[3.0]).unwrap(), 0.0);
        assert_eq!(median_se(&[4.0; 9]).unwrap(), 0.0);
        // Far from zero the sums do not cancel: shifting changes nothing.
        let shifted: Vec<f64> = (1..=20).map(|i| 1e9 + f64::from(i)).collect();
        assert!((median_se(&shifted).unwrap() - 2.14906508099787).abs() < 1e-6);
        assert!(median_se(&[]).is_err());
    }

    fn s(median: f64, within_variance: f64) -> SessionMedian {
        SessionMedian {
            median,
            within_variance,
        }
    }

    #[test]
    fn between_variance_by_hand() {
        // Medians 1, 2, 3: sample variance 1; mean within 0.25; tau^2 = 0.75 with 2 df.
        let g = [s(1.0, 0.2), s(2.0, 0.3), s(3.0, 0.25)];
        let b = between_session_variance(&[&g]).unwrap();
        assert_eq!(
            (b.mean_square, b.within, b.variance, b.df),
            (1.0, 0.25, 0.75, 2.0)
        );
        // Two groups: squares 0.5 + 2 over 4 - 2 = 2 df.
        let a = [s(0.0, 0.0), s(1.0, 0.0)];
        let c = [s(5.0, 0.0), s(7.0, 0.0)];
        let b = between_session_variance(&[&a, &c]).unwrap();
        assert_eq!((b.mean_square, b.df), (1.25, 2.0));
        // Within larger than the spread: truncated at zero.
        let g = [s(1.0, 4.0), s(1.1, 4.0)];
        assert_eq!(between_session_variance(&[&g]).unwrap().variance, 0.0);
        // One session per group leaves no degree of freedom.
        assert!(between_session_variance(&[&a[..1], &c[..1]]).is_err());
        assert!(between_session_variance(&[&[], &c]).is_err());
    }

    #[test]
    fn satterthwaite_by_hand() {
        let known = Component::known(1.0);
        let est = Component::with_df(3.0, 4.0);
        let c = satterthwaite(&[known, est]).unwrap();
        // (1 + 3)^2 / (9 / 4) = 64 / 9.
        assert_eq!(c.variance, 4.0);
        assert!((c.df() - 64.0 / 9.0).abs() < 1e-12);
        assert_eq!(satterthwaite(&[known]).unwrap().df(), f64::INFINITY);
        assert!(satterthwaite(&[Component {
            variance: 1.0,
            sampling_variance: -1.0
        }])
        .is_err());
    }

    #[test]
    fn a_between_part_truncated_at_zero_keeps_the_uncertainty_of_its_mean_square() {
        // Mean square 0.8 below a within part of 1 over 4 df: the between part is 0, but it
        // could as well have been 1; the old df, variance^2 / df, called it certain.
        let c = Component::from_mean_square(0.0, 2.0, 0.8, 4.0);
        assert_eq!(c.variance, 0.0);
        assert!((c.sampling_variance - 2.0 * 1.6 * 1.6 / 4.0).abs() < 1e-15);
        let total = satterthwaite(&[Component::known(0.5), c]).unwrap();
        // 2 * 0.5^2 / 1.28.
        assert!((total.df() - 0.5 / 1.28).abs() < 1e-12);
        // widen() takes at least one degree of freedom.
        let w = widen(0.0, -0.1, 0.1, 0.95, c).unwrap();
        assert!(w.low < -0.1 && w.high > 0.1, "{w:?}");
    }

    #[test]
    fn widen_without_extra_is_identity_and_with_extra_is_wider() {
        let none = Component::known(0.0);
        let w = widen(0.1, 0.05, 0.2, 0.95, none).unwrap();
        assert_eq!((w.low, w.high), (0.05, 0.2));
        let extra = Component::with_df(0.01, 4.0);
        let w = widen(0.1, 0.05, 0.2, 0.95, extra).unwrap();
        assert!(w.low < 0.05 && w.high > 0.2);
        assert!(
            w.df_low < w.df_high,
            "the narrower half is dominated by the estimate"
        );
        assert!(widen(0.3, 0.05, 0.2, 0.95, extra).is_err());
    }
}
