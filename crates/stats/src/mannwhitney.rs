//! Mann-Whitney U (Wilcoxon rank-sum) test of two independent samples, two-sided, and the null
//! distribution of U that the Hodges-Lehmann interval also uses.
//!
//! Matches `scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method=...)` with its
//! default continuity correction (SciPy 1.17; Mann & Whitney 1947; Hollander & Wolfe,
//! *Nonparametric Statistical Methods*, 3rd ed., sec. 4.1).

use crate::distribution::normal_sf;

use crate::error::{check, StatsError};
use crate::rank::{average_ranks, tie_term};

/// How the p-value (and the Hodges-Lehmann interval) is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// SciPy's `method="auto"`: exact when one sample has at most 8 values and there are no
    /// ties, asymptotic otherwise (`scipy.stats._mannwhitneyu._mwu_choose_method`).
    Auto,
    /// The exact null distribution of U; requires no ties.
    Exact,
    /// The normal approximation with tie and continuity corrections.
    Asymptotic,
}

/// Result of [`mann_whitney_u`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample: the number of pairs `(x_i, y_j)` with `x_i > y_j`, ties counting
    /// one half (SciPy's `statistic`).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// The method actually used: [`Method::Exact`] or [`Method::Asymptotic`].
    pub method: Method,
}

/// Largest `m * n` for which the exact distribution is tabulated (16 bytes per entry).
const MAX_EXACT_CELLS: usize = 1_000_000;
/// Largest number of arrangements `C(m + n, m)` for which the exact integer counts stay well
/// inside `i128` (the in-place recurrence below needs twice the largest count).
const MAX_EXACT_TOTAL: f64 = 1e36;

/// Null distribution of U for sample sizes `m` and `n` without ties: every assignment of the
/// pooled ranks to the samples is equally likely, so `P(U = u)` is the number of arrangements
/// with `u` inversions over `C(m + n, m)`. The counts are the coefficients of the Gaussian
/// binomial coefficient `[m + n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)`
/// (Andrews, *The Theory of Partitions*, 1976, thm. 3.1), computed exactly in integers.
///
/// The table holds the cumulative counts, built once, so that every lookup of the CDF is a
/// single division (the interval's search and the p-value make many lookups).
#[derive(Debug, Clone)]
pub(crate) struct UDistribution {
    /// `cumulative[u]`: the number of arrangements with `U <= u`; the last entry is the total
    /// `C(m + n, m)`.
    cumulative: Vec<i128>,
}

impl UDistribution {
    /// `None` when the table would be too large (see the limits above).
    pub(crate) fn exact(m: usize, n: usize) -> Option<Self> {
        let (m, n) = (m.min(n), m.max(n));
        let cells = m.checked_mul(n)?;
        if cells > MAX_EXACT_CELLS {
            return None;
        }
        let approx_total: f64 = (1..=m).map(|i| (n + i) as f64 / i as f64).product();
        if approx_total > MAX_EXACT_TOTAL {
            return None;
        }
        let mut c = vec![0i128; cells + 1];
        c[0] = 1;
        for i in 1..=m {
            // Multiply by (1 - q^(n+i)): descending, so each term reads the old coefficient.
            let shift = n + i;
            for u in (shift..=cells).rev() {
                c[u] -= c[u - shift];
            }
            // Divide by (1 - q^i): a running sum with stride i (ascending reads new values).
            for u in i..=cells {
                c[u] += c[u - i];
            }
        }
        // Running sum in place: the counts become cumulative counts.
        for u in 1..=cells {
            c[u] += c[u - 1];
        }
        Some(UDistribution { cumulative: c })
    }

    /// Largest value of U (`m * n`).
    pub(crate) fn max_u(&self) -> usize {
        self.cumulative.len() - 1
    }

    /// The number of equally likely arrangements, `C(m + n, m)`.
    fn total(&self) -> i128 {
        self.cumulative[self.max_u()]
    }

    /// `P(U <= k)`.
    pub(crate) fn cdf(&self, k: usize) -> f64 {
        let k = k.min(self.max_u());
        self.cumulative[k] as f64 / self.total() as f64
    }

    /// `P(U >= k)`, summed from the nearer tail by symmetry (U and mn - U have the same law).
    pub(crate) fn sf(&self, k: usize) -> f64 {
        if k == 0 {
            return 1.0;
        }
        self.cdf(self.max_u().saturating_sub(k))
    }
}

/// What the rank computation of two samples yields.
pub(crate) struct RankSums {
    /// U of the first sample.
    pub u1: f64,
    /// `sum(t^3 - t)` over tie groups of the pooled sample.
    pub tie_term: f64,
    pub has_ties: bool,
}

pub(crate) fn rank_sums(x: &[f64], y: &[f64]) -> RankSums {
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, ties) = average_ranks(&pooled);
    let m = x.len() as f64;
    let r1: f64 = ranks[..x.len()].iter().sum();
    RankSums {
        u1: r1 - m * (m + 1.0) / 2.0,
        tie_term: tie_term(&ties),
        has_ties: !ties.is_empty(),
    }
}

/// Standard deviation of U under the null with the tie correction
/// `sqrt(mn/12 * ((N + 1) - sum(t^3 - t) / (N (N - 1))))` (Hollander & Wolfe eq. 4.13;
/// SciPy's `_get_mwu_z`).
pub(crate) fn u_sd(m: usize, n: usize, tie_term: f64) -> f64 {
    let (mf, nf) = (m as f64, n as f64);
    let big_n = mf + nf;
    let var = mf * nf / 12.0 * ((big_n + 1.0) - tie_term / (big_n * (big_n - 1.0)));
    var.max(0.0).sqrt()
}

/// Resolves [`Method::Auto`] like SciPy: asymptotic when both samples have more than 8 values
/// or there are ties, exact otherwise. Also falls back to asymptotic when the exact table would
/// be too large (a sample of at most 8 values against more than 125,000).
pub(crate) fn resolve(
    method: Method,
    m: usize,
    n: usize,
    has_ties: bool,
) -> Result<(Method, Option<UDistribution>), StatsError> {
    match method {
        Method::Asymptotic => Ok((Method::Asymptotic, None)),
        Method::Exact => {
            if has_ties {
                return Err(StatsError::Degenerate {
                    what: "the exact Mann-Whitney distribution assumes no ties",
                });
            }
            let dist = UDistribution::exact(m, n).ok_or(StatsError::Degenerate {
                what: "samples too large for the exact Mann-Whitney distribution",
            })?;
            Ok((Method::Exact, Some(dist)))
        }
        Method::Auto => {
            if (m > 8 && n > 8) || has_ties {
                return Ok((Method::Asymptotic, None));
            }
            match UDistribution::exact(m, n) {
                Some(dist) => Ok((Method::Exact, Some(dist))),
                None => Ok((Method::Asymptotic, None)),
            }
        }
    }
}

/// Two-sided Mann-Whitney U test with SciPy's automatic choice of method.
pub fn mann_whitney_u(x: &[f64], y: &[f64]) -> Result<MannWhitney, StatsError> {
    mann_whitney_u_with(x, y, Method::Auto)
}

/// Two-sided Mann-Whitney U test of `x` against `y`.
///
/// With `U = max(U1, mn - U1)`, the exact p-value is `2 P(U' >= U)` under the exact null
/// distribution; the asymptotic one is `2 (1 - Phi(z))`, `z = (U - mn/2 - 1/2) / sd` with the
/// tie-corrected `sd`; both are clipped to 1. When every value is tied the variance is zero and
/// `p = 1` (SciPy gives the same through `z = -inf`).
pub fn mann_whitney_u_with(
    x: &[f64],
    y: &[f64],
    method: Method,
) -> Result<MannWhitney, StatsError> {
    check(x, 1)?;
    check(y, 1)?;
    let (m, n) = (x.len(), y.len());
    let sums = rank_sums(x, y);
    let mn = (m * n) as f64;
    let u = sums.u1.max(mn - sums.u1);
    let (method, dist) = resolve(method, m, n, sums.has_ties)?;
    let p = match dist {
        // Without ties U1 is an integer, so the cast is exact.
        Some(dist) => 2.0 * dist.sf(u.round() as usize),
        None => {
            let sd = u_sd(m, n, sums.tie_term);
            if sd > 0.0 {
                let z = (u - mn / 2.0 - 0.5) / sd;
                2.0 * normal_sf(z)
            } else {
                1.0
            }
        }
    };
    Ok(MannWhitney {
        u: sums.u1,
        p: p.clamp(0.0, 1.0),
        method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_counts_of_small_table() {
        // m = 2, n = 3: U counts are 1,1,2,2,2,1,1 (total C(5,2) = 10).
        let d = UDistribution::exact(2, 3).unwrap();
        assert_eq!(d.cumulative, vec![1, 2, 4, 6, 8, 9, 10]);
        assert_eq!(d.total(), 10);
        assert!((d.cdf(1) - 0.2).abs() < 1e-15);
        assert!((d.sf(5) - 0.2).abs() < 1e-15);
        assert_eq!(d.sf(0), 1.0);
    }

    #[test]
    fn exact_total_is_binomial_coefficient() {
        let d = UDistribution::exact(8, 40).unwrap();
        // C(48, 8) = 377348994
        assert_eq!(d.total(), 377_348_994);
        // Every count is positive: the cumulative counts rise strictly.
        assert!(d.cumulative.windows(2).all(|w| w[1] > w[0]));
    }

    #[test]
    fn fully_separated_samples() {
        // scipy.stats.mannwhitneyu([1,2,3], [4,5,6]) -> U = 0, p = 0.1 (exact: 2 * 1/20)
        let r = mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(r.u, 0.0);
        assert!((r.p - 0.1).abs() < 1e-15);
        assert_eq!(r.method, Method::Exact);
    }

    #[test]
    fn all_tied_gives_p_one() {
        let r = mann_whitney_u(&[2.0; 10], &[2.0; 12]).unwrap();
        assert_eq!(r.method, Method::Asymptotic);
        assert_eq!(r.u, 60.0);
        assert_eq!(r.p, 1.0);
    }

    #[test]
    fn exact_refuses_ties() {
        assert!(mann_whitney_u_with(&[1.0, 2.0], &[2.0, 3.0], Method::Exact).is_err());
        // Auto falls back to the normal approximation instead.
        let r = mann_whitney_u(&[1.0, 2.0], &[2.0, 3.0]).unwrap();
        assert_eq!(r.method, Method::Asymptotic);
    }

    #[test]
    fn auto_uses_asymptotic_for_large_tables() {
        let x: Vec<f64> = (0..3).map(f64::from).collect();
        let y: Vec<f64> = (0..400_000).map(|i| f64::from(i) + 0.5).collect();
        let r = mann_whitney_u(&x, &y).unwrap();
        assert_eq!(r.method, Method::Asymptotic);
    }
}
