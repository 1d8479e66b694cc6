//! Hodges-Lehmann estimate of the shift between two samples and its distribution-free
//! confidence interval (Hodges & Lehmann 1963; Moses' interval; Hollander & Wolfe,
//! *Nonparametric Statistical Methods*, 3rd ed., sec. 4.2-4.3). SciPy has no such function:
//! `scripts/gen_stats_fixtures.py` holds a reference implementation of the same formulas.

use crate::distribution::normal_quantile;
use crate::error::{check, check_level, StatsError};
use crate::interval::Interval;
use crate::mannwhitney::{rank_sums, resolve, u_sd, Method};

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
/// Whatever the method, there is no interval when the samples have fewer than
/// `2 / (1 - level)` arrangements `C(m + n, m)` (40 at 95%: 1 vs 39, 2 vs 8, 3 vs 5, 4 vs 4 and
/// larger qualify). Every rank statistic is a function of which pooled ranks fall in `x`, and
/// under the null hypothesis each of the `C(m + n, m)` arrangements is equally likely (ties
/// only merge arrangements), so no two-sided rank test can reach a p-value below
/// `2 / C(m + n, m)`: with fewer arrangements the level cannot be reached, and an interval from
/// the normal approximation (which ties make narrower) would claim a confidence the data cannot
/// give (Lehmann, *Nonparametrics*, 1975, sec. 1.2 and 2.6).
///
/// The differences are never materialized: `D(k)` is found by [`kth_difference`] in
/// `O((m + n) log)` time and `O(m + n)` memory.
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
    let mn = m.checked_mul(n).ok_or(StatsError::Degenerate {
        what: "too many pairs of values for the Hodges-Lehmann estimate",
    })?;
    let diffs = Differences::new(x, y);
    // The median of the differences as numpy's linear interpolation defines it (the 0.5
    // quantile of `quantile_sorted`), computed from the two order statistics it needs.
    let h = (mn - 1) as f64 * 0.5;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    let d_lo = diffs.kth(lo + 1);
    let d_hi = if hi == lo { d_lo } else { diffs.kth(hi + 1) };
    let shift = d_lo + (h - lo as f64) * (d_hi - d_lo);

    let sums = rank_sums(x, y);
    let (method, dist) = resolve(method, m, n, sums.has_ties)?;
    let alpha_half = (1.0 - level) / 2.0;
    // k may not exceed (mn + 1) / 2, where the interval shrinks to the median difference.
    let k_max = mn.div_ceil(2);
    let k = if !enough_arrangements(m, n, level) {
        0
    } else {
        match dist {
            Some(dist) => {
                // Largest k with P(U <= k - 1) <= alpha/2: the number of u in 0..k_max whose
                // CDF stays at or below alpha/2 (the CDF rises, so they form a prefix). The
                // relative slack absorbs rounding of tail probabilities that equal alpha/2
                // exactly.
                let within = |u: usize| dist.cdf(u) <= alpha_half * (1.0 + 1e-12);
                partition_point(k_max, within)
            }
            None => {
                let z = normal_quantile(1.0 - alpha_half)?;
                let sd = u_sd(m, n, sums.tie_term);
                let k = (mn as f64 / 2.0 - z * sd + 0.5).floor();
                if k < 1.0 {
                    0
                } else {
                    (k as usize).min(k_max)
                }
            }
        }
    };
    let ci = (k >= 1).then(|| Interval {
        low: diffs.kth(k),
        high: diffs.kth(mn - k + 1),
        level,
    });
    Ok(HodgesLehmann { shift, ci, method })
}

/// Whether samples of `m` and `n` values have enough arrangements for a rank interval at
/// `level` (see [`hodges_lehmann_with`]): `C(m + n, m) >= 2 / (1 - level)`, i.e.
/// `P(U <= 0) = 1 / C(m + n, m) <= (1 - level) / 2`, with the same relative slack as the exact
/// search (1 vs 39 at 95% has exactly 2.5%).
pub fn enough_arrangements(m: usize, n: usize, level: f64) -> bool {
    let (m, n) = (m.min(n), m.max(n));
    let alpha_half = (1.0 - level) / 2.0;
    let need = 1.0 / (alpha_half * (1.0 + 1e-12));
    // C(m + n, m) = prod_{i=1..m} (n + i) / i, rising with i; stop as soon as it is enough.
    let mut arrangements = 1.0;
    for i in 1..=m {
        arrangements *= (n + i) as f64 / i as f64;
        if arrangements >= need {
            return true;
        }
    }
    arrangements >= need
}

/// The number of `u` in `0..len` for which `pred` holds, given that it holds on a prefix.
fn partition_point(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The `k`-th smallest (1-based) of the `m n` differences `y_j - x_i`, in `O(m + n)` memory.
///
/// Exposed for tests and benchmarks that check it against sorting all differences.
pub fn kth_difference(x: &[f64], y: &[f64], k: usize) -> Result<f64, StatsError> {
    check(x, 1)?;
    check(y, 1)?;
    let mn = x.len().saturating_mul(y.len());
    if k == 0 || k > mn {
        return Err(StatsError::OutOfRange {
            what: "rank of the difference",
            range: "1..=m n",
            value: k as f64,
        });
    }
    Ok(Differences::new(x, y).kth(k))
}

/// The differences `y_j - x_i` of two samples as an implicit sorted matrix: with `x` and `y`
/// sorted ascending, the computed difference `fl(y_j - x_i)` never decreases along `j` and never
/// increases along `i` (rounding to nearest is monotone), so the differences at most `t` form a
/// staircase that two pointers count in `O(m + n)` (Johnson & Mizoguchi, "Selecting the Kth
/// element in X + Y and X1 + X2 + ... + Xm", SIAM J. Comput. 7(2), 1978; Monahan, "Algorithm
/// 616: fast computation of the Hodges-Lehmann location estimator", ACM TOMS 10(3), 1984, uses
/// the same structure for the one-sample estimate).
///
/// Selection of `D(k)` narrows a bracket of values `(a, b]` with `count(a) < k <= count(b)`
/// until it holds at most `m + n` differences, which are then collected and selected directly.
/// Each step counts at one pivot: the value where the counts at `a` and `b` interpolate to `k`
/// (regula falsi on the empirical distribution, which is smooth for benchmark data), or, when
/// the previous step did not halve the number of differences in the bracket, the midpoint of
/// the bracket in the order of the doubles' bit patterns (IEEE 754 `totalOrder`). The
/// bisection alone ends after at most 64 steps (a bracket of one double holds only equal
/// differences), so the search is deterministic, needs no randomness, and ends after at most
/// 128 counting passes; the result is always one of the computed differences, bit for bit
/// what sorting all `m n` of them would give.
struct Differences {
    x: Vec<f64>,
    y: Vec<f64>,
}

impl Differences {
    /// Sorted copies of two non-empty, finite samples.
    fn new(x: &[f64], y: &[f64]) -> Self {
        let mut x = x.to_vec();
        let mut y = y.to_vec();
        x.sort_by(f64::total_cmp);
        y.sort_by(f64::total_cmp);
        Differences { x, y }
    }

    fn smallest(&self) -> f64 {
        self.y[0] - self.x[self.x.len() - 1]
    }

    fn largest(&self) -> f64 {
        self.y[self.y.len() - 1] - self.x[0]
    }

    /// The number of differences `<= t`.
    fn count_at_most(&self, t: f64) -> usize {
        let (x, y) = (&self.x, &self.y);
        let (m, n) = (x.len(), y.len());
        // Row i (x ascending) holds y_j - x_i, which shrinks as i grows: the number of
        // columns whose difference is <= t never decreases from one row to the next. One walk
        // along the staircase either moves right (y_j - x_i <= t) or closes row i with j
        // columns; written without a data-dependent branch, since the direction is as good as
        // random and mispredictions would dominate.
        let (mut i, mut j, mut count) = (0, 0, 0);
        while i < m && j < n {
            let right = y[j] - x[i] <= t;
            count += if right { 0 } else { j };
            j += usize::from(right);
            i += usize::from(!right);
        }
        // Once j reaches n, every remaining row has all n columns.
        count + (m - i) * j
    }

    /// The differences `d` with `a < d <= b` (`a = None`: no lower bound).
    fn between(&self, a: Option<f64>, b: f64) -> Vec<f64> {
        let (x, y) = (&self.x, &self.y);
        let mut out = Vec::new();
        let (mut ja, mut jb) = (0, 0);
        for &xi in x {
            if let Some(a) = a {
                while ja < y.len() && y[ja] - xi <= a {
                    ja += 1;
                }
            }
            while jb < y.len() && y[jb] - xi <= b {
                jb += 1;
            }
            out.extend(y[ja..jb].iter().map(|yj| yj - xi));
        }
        out
    }

    /// `D(k)`, the `k`-th smallest difference, `1 <= k <= m n`.
    fn kth(&self, k: usize) -> f64 {
        let budget = self.x.len() + self.y.len();
        // Invariant: count(a) = ca < k <= cb = count(b); a = None stands below every
        // difference.
        let (mut a, mut ca): (Option<f64>, usize) = (None, 0);
        let (mut b, mut cb) = (self.largest(), self.x.len() * self.y.len());
        let mut interpolate = true;
        loop {
            if cb - ca <= budget {
                let mut inside = self.between(a, b);
                let (_, kth, _) = inside.select_nth_unstable_by(k - ca - 1, f64::total_cmp);
                return *kth;
            }
            // Candidates are the doubles in (a, b]: keys low..=high.
            let low = a.map_or(order_key(self.smallest()), |a| order_key(a) + 1);
            let high = order_key(b);
            if low >= high {
                // Only b is left: every difference in the bracket equals b.
                return self.between(a, b)[0];
            }
            let before = cb - ca;
            let mut pivot = low + (high - 1 - low) / 2;
            if interpolate {
                let lo_value = a.unwrap_or_else(|| self.smallest());
                let share = (k - ca) as f64 / (cb - ca) as f64;
                let t = lo_value + (b - lo_value) * share;
                if t.is_finite() {
                    // The pivot must lie in [low, high - 1] so that either outcome shrinks
                    // the bracket.
                    pivot = order_key(t).clamp(low, high - 1);
                }
            }
            let t = from_order_key(pivot);
            let c = self.count_at_most(t);
            if c >= k {
                (b, cb) = (t, c);
            } else {
                (a, ca) = (Some(t), c);
            }
            interpolate = !interpolate || (cb - ca) * 2 <= before;
        }
    }
}

/// A key that orders doubles like `f64::total_cmp` (IEEE 754 totalOrder): the bit pattern,
/// with the magnitude bits of negative numbers flipped; widened so that midpoints never
/// overflow.
fn order_key(v: f64) -> i128 {
    let bits = v.to_bits() as i64;
    i128::from(bits ^ (((bits >> 63) as u64) >> 1) as i64)
}

/// The inverse of [`order_key`] for keys of doubles.
fn from_order_key(key: i128) -> f64 {
    // The search only forms keys between two doubles' keys, which fit in 64 bits.
    let bits = key as i64;
    f64::from_bits((bits ^ (((bits >> 63) as u64) >> 1) as i64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;

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

    /// The reference: every difference, sorted (what this module computed before selection).
    fn all_differences(x: &[f64], y: &[f64]) -> Vec<f64> {
        let mut d: Vec<f64> = y
            .iter()
            .flat_map(|yj| x.iter().map(move |xi| yj - xi))
            .collect();
        d.sort_by(f64::total_cmp);
        d
    }

    fn seeded(n: usize, rng: &mut ChaCha8Rng, grid: Option<f64>) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                // Spread over several binades and both signs, so that differences round.
                let v = (u - 0.3) * 1e3 * (1.0 + 7.0 * u * u);
                match grid {
                    Some(g) => (v / g).round() * g,
                    None => v,
                }
            })
            .collect()
    }

    #[test]
    fn selection_matches_sorting_every_difference() {
        let mut rng = ChaCha8Rng::seed_from_u64(616);
        for (m, n, grid) in [
            (1, 1, None),
            (1, 17, None),
            (13, 1, Some(50.0)),
            (7, 9, None),
            (40, 31, None),
            (40, 31, Some(100.0)),
            (64, 64, Some(0.1)),
            (150, 100, None),
        ] {
            let x = seeded(m, &mut rng, grid);
            let y = seeded(n, &mut rng, grid);
            let d = all_differences(&x, &y);
            // Every rank of the smaller tables; every 97th and the last of the larger ones.
            let step = if d.len() <= 5000 { 1 } else { 97 };
            for k in (1..=d.len()).step_by(step).chain([d.len()]) {
                let got = kth_difference(&x, &y, k).unwrap();
                assert_eq!(got.to_bits(), d[k - 1].to_bits(), "m {m} n {n} k {k}");
            }
        }
    }

    #[test]
    fn selection_handles_signed_zeros_and_extremes() {
        let x = [0.0, -0.0, 1e308, -1e308, 5e-324];
        let y = [-0.0, 0.0, 1e308, 2.5, -5e-324];
        let d = all_differences(&x, &y);
        for k in 1..=d.len() {
            // Infinite differences (1e308 - -1e308) take part like any other value; equal
            // values may differ only in the sign of zero, which no ratio or interval sees.
            assert_eq!(kth_difference(&x, &y, k).unwrap(), d[k - 1], "k {k}");
        }
        assert!(kth_difference(&x, &y, 0).is_err());
        assert!(kth_difference(&x, &y, 26).is_err());
    }

    #[test]
    fn estimate_and_interval_match_the_materialized_reference() {
        // The estimate as numpy's median of all differences, the interval as their order
        // statistics, for exact and asymptotic methods, with and without ties.
        let mut rng = ChaCha8Rng::seed_from_u64(1978);
        for (m, n, grid) in [
            (5, 8, None),
            (8, 30, None),
            (30, 8, Some(10.0)),
            (60, 45, None),
            (60, 45, Some(25.0)),
        ] {
            let x = seeded(m, &mut rng, grid);
            let y = seeded(n, &mut rng, grid);
            let d = all_differences(&x, &y);
            let r = hodges_lehmann(&x, &y, 0.95).unwrap();
            let median = crate::summary::quantile_sorted(&d, 0.5);
            assert_eq!(r.shift.to_bits(), median.to_bits(), "m {m} n {n}");
            let ci = r.ci.unwrap();
            let k = d.partition_point(|&v| v < ci.low) + 1;
            assert_eq!(
                ci.high,
                d[d.len() - k],
                "m {m} n {n}: symmetric order statistics"
            );
        }
    }

    #[test]
    fn large_samples_need_no_table_of_differences() {
        // 100,000 x 50,000 = 5e9 differences (40 GB if materialized). A shift of exactly 0.25
        // on a grid of 1/8: every difference is exact, and the estimate is the shift.
        let x: Vec<f64> = (0..100_000).map(|i| f64::from(i % 1000) / 8.0).collect();
        let y: Vec<f64> = (0..50_000)
            .map(|i| f64::from(i % 1000) / 8.0 + 0.25)
            .collect();
        let r = hodges_lehmann(&x, &y, 0.95).unwrap();
        assert_eq!(r.shift, 0.25);
        assert_eq!(r.method, Method::Asymptotic);
        let ci = r.ci.unwrap();
        assert!(ci.low <= 0.25 && 0.25 <= ci.high, "{ci:?}");
    }

    #[test]
    fn smallest_sizes_with_an_interval() {
        // At 95% an interval needs C(m + n, m) >= 40 arrangements, whatever the method: 1 vs 39
        // (exactly 2.5% in each tail), 2 vs 8, 3 vs 5, 4 vs 4; one fewer gives none. The exact
        // method (what Auto picks for these untied samples) then has one; the normal
        // approximation needs more (none at 1 vs 39).
        let sample = |n: usize, offset: f64| -> Vec<f64> {
            (0..n).map(|i| i as f64 * 1.37 + offset).collect()
        };
        for (m, n, has) in [
            (1, 39, true),
            (1, 38, false),
            (1, 40, true),
            (2, 8, true),
            (2, 7, false),
            (3, 5, true),
            (3, 4, false),
            (4, 4, true),
            (3, 3, false),
        ] {
            for method in [Method::Auto, Method::Exact, Method::Asymptotic] {
                let r = hodges_lehmann_with(&sample(m, 0.0), &sample(n, 0.5), 0.95, method);
                let ci = r.unwrap().ci;
                if !has {
                    assert_eq!(ci, None, "{m} vs {n} {method:?}");
                } else if method != Method::Asymptotic {
                    assert!(ci.is_some(), "{m} vs {n} {method:?}");
                }
            }
        }
        // 1 vs 40: the exact interval is [D(1), D(40)], coverage 1 - 2/41.
        let y = sample(40, 0.5);
        let r = hodges_lehmann(&[0.0], &y, 0.95).unwrap();
        assert_eq!(r.method, Method::Exact);
        let ci = r.ci.unwrap();
        assert_eq!((ci.low, ci.high), (y[0], y[39]));
    }

    #[test]
    fn ties_do_not_make_an_interval_below_the_minimum() {
        // 3 vs 3 with ties: the tie-corrected normal approximation alone would give k >= 1.
        for (x, y) in [
            ([1.0, 1.0, 1.05], [1.0, 1.05, 1.05]),
            ([2.0, 2.0, 2.0], [2.0, 2.0, 2.0]),
            ([1.0, 1.0, 1.0], [1.05, 1.05, 1.05]),
        ] {
            let r = hodges_lehmann(&x, &y, 0.95).unwrap();
            assert_eq!(r.method, Method::Asymptotic);
            assert_eq!(r.ci, None, "{x:?} {y:?}");
        }
        let r = hodges_lehmann(&[2.0], &[2.0], 0.95).unwrap();
        assert_eq!((r.shift, r.ci), (0.0, None));
        let r = hodges_lehmann(&[2.0, 2.0], &[2.0, 2.0], 0.95).unwrap();
        assert_eq!((r.shift, r.ci), (0.0, None));
    }

    #[test]
    fn all_equal_gives_point_interval() {
        let r = hodges_lehmann(&[3.0; 10], &[3.0; 10], 0.95).unwrap();
        assert_eq!(r.shift, 0.0);
        let ci = r.ci.unwrap();
        assert_eq!((ci.low, ci.high), (0.0, 0.0));
    }
}
