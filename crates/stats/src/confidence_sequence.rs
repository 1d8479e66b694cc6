//! An anytime-valid confidence sequence for the median: a sequence of intervals, one per sample
//! size n, that all cover the population median at once with probability at least `level`.
//! Unlike a fixed-n interval, it stays valid when the sample size is chosen by looking at the
//! data, such as a stopping rule that stops as soon as the interval is narrow enough.
//!
//! Source: S. R. Howard and A. Ramdas, "Sequential estimation of quantiles with applications to
//! A/B-testing and best-arm identification", Bernoulli 28(3), 2022 (arXiv:1906.09712): their
//! confidence sequence for a fixed quantile, `[x(n p - g_n), x(n p + g_n + 1)]`, from any
//! boundary `g_n` that the Bernoulli walk `#{x_i <= q_p} - n p` crosses with probability at
//! most alpha at any time, here with the conjugate beta-binomial mixture boundary (Robbins'
//! method of mixtures; Howard, Ramdas, McAuliffe and Sekhon, "Time-uniform, nonparametric,
//! nonasymptotic confidence sequences", Ann. Statist. 49(2), 2021, sec. 3).
//!
//! For the median (p = 1/2) and a uniform Beta(1, 1) mixing distribution the mixture
//! martingale of the count `s = #{x_i <= m}` after `n` values is
//! `M_n(s) = integral of theta^s (1-theta)^(n-s) / 2^-n dtheta = 2^n / ((n+1) C(n, s))`.
//! Ville's inequality gives `P(exists n: M_n(s_n) >= 1/alpha) <= alpha`, so the counts with
//! `C(n, s) 2^-n > alpha / (n+1)` (binomial probability above alpha/(n+1)) form a region that
//! the true count leaves, at any time, with probability at most alpha. That region is
//! `[k, n-k]`; the median is then in `[x(k), x(n-k+1)]` (1-based order statistics).
//!
//! Ties and discrete data: writing `x_i = F^-1(u_i)` with uniform `u_i`, the count of
//! `x_i <= m` is at least, and the count of `x_i < m`, at most, the count of `u_i <= 1/2`,
//! a Binomial(n, 1/2) walk; the interval misses `m` only when that walk leaves the region, so
//! the guarantee holds for any distribution.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, DefaultHasher};

use statrs::function::factorial::ln_binomial;

use crate::error::{check, check_level, check_sorted, StatsError};
use crate::interval::Interval;
use crate::summary::{quantile_sorted, sorted};

/// The rank `k` (1-based) of the lower end of the confidence sequence after `n` values: the
/// sequence's interval is `[x(k), x(n-k+1)]`. `None` while `n` is too small for any finite
/// interval (n < 8 at 95%).
///
/// Remembered per `(n, level)` ([`RANKS`]): the stopping rule asks for the ranks of the same
/// few counts at every run, and each costs up to n/2 log-binomials.
pub fn median_cs_rank(n: usize, level: f64) -> Result<Option<usize>, StatsError> {
    check_level(level)?;
    let key = (level.to_bits(), n);
    // A poisoned lock only means a panic elsewhere while it was held: the map is still whole.
    let known = RANKS
        .lock()
        .map(|ranks| ranks.get(&key).copied())
        .unwrap_or(None);
    if let Some(rank) = known {
        return Ok(rank);
    }
    let rank = compute_rank(n, level);
    if let Ok(mut ranks) = RANKS.lock() {
        if ranks.len() >= RANKS_KEPT {
            ranks.clear();
        }
        ranks.insert(key, rank);
    }
    Ok(rank)
}

/// The ranks computed so far, by (level's bits, n). At most [`RANKS_KEPT`] entries: emptied
/// when full, so that a long session's projections (new counts at every run) keep it small.
type Ranks = HashMap<(u64, usize), Option<usize>, BuildHasherDefault<DefaultHasher>>;
static RANKS: std::sync::Mutex<Ranks> =
    std::sync::Mutex::new(HashMap::with_hasher(BuildHasherDefault::new()));

/// How many ranks [`RANKS`] holds at most (about 300 KiB).
const RANKS_KEPT: usize = 1 << 13;

/// [`median_cs_rank`] computed afresh; `level` is checked.
fn compute_rank(n: usize, level: f64) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let alpha = 1.0 - level;
    let n64 = n as u64;
    // ln of the acceptance threshold alpha / (n+1) on the binomial probability C(n,s) 2^-n.
    let threshold = alpha.ln() - ((n + 1) as f64).ln();
    let accepted =
        |s: usize| ln_binomial(n64, s as u64) - n as f64 * std::f64::consts::LN_2 > threshold;
    // The binomial probabilities rise up to n/2, so the region is the counts from the first
    // accepted one to its mirror image; k = 0 (no value below the region) leaves the
    // interval unbounded below. Rising, they are searched by bisection: a few log-binomials
    // where a scan from 0 took up to n/2 of them for every new n (the stopping rule asks for
    // a new n after every run).
    let (mut lo, mut hi) = (0, n / 2 + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if accepted(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    // None accepted (a level so high that no count is): as the scan's end.
    let k = lo.min(n / 2);
    if k == 0 {
        None
    } else {
        Some(k)
    }
}

/// Smallest sample size with a finite confidence-sequence interval at `level`.
pub fn median_cs_min_n(level: f64) -> Result<usize, StatsError> {
    check_level(level)?;
    let mut n = 1;
    while median_cs_rank(n, level)?.is_none() {
        n += 1;
    }
    Ok(n)
}

/// The confidence sequence's interval of the median of `xs` at the current sample size; valid
/// simultaneously for every sample size, so also at a data-dependent one. `None` below
/// [`median_cs_min_n`].
pub fn median_cs(xs: &[f64], level: f64) -> Result<Option<Interval>, StatsError> {
    check(xs, 1)?;
    median_cs_sorted(&sorted(xs), level)
}

/// [`median_cs`] of values sorted already (by `f64::total_cmp`, without NaN), which it
/// does not sort again.
pub fn median_cs_sorted(sorted: &[f64], level: f64) -> Result<Option<Interval>, StatsError> {
    check_sorted(sorted, 1)?;
    let n = sorted.len();
    let Some(k) = median_cs_rank(n, level)? else {
        return Ok(None);
    };
    Ok(Some(Interval {
        low: sorted[k - 1],
        high: sorted[n - k],
        level,
    }))
}

/// The interval that the confidence sequence would give after `n_future` values drawn from
/// the distribution that `xs` shows so far: the quantiles of `xs` at the sequence's rank
/// levels `k/n` and `(n-k+1)/n` (linear interpolation). A projection for planning (how many
/// runs a precision needs), not a confidence statement. `None` when `n_future` is too small
/// for an interval.
pub fn projected_median_cs(
    xs: &[f64],
    level: f64,
    n_future: usize,
) -> Result<Option<Interval>, StatsError> {
    check(xs, 2)?;
    projected_median_cs_sorted(&sorted(xs), level, n_future)
}

/// [`projected_median_cs`] of values sorted already (by `f64::total_cmp`, without NaN),
/// which it does not sort again.
pub fn projected_median_cs_sorted(
    s: &[f64],
    level: f64,
    n_future: usize,
) -> Result<Option<Interval>, StatsError> {
    check_sorted(s, 2)?;
    let Some(k) = median_cs_rank(n_future, level)? else {
        return Ok(None);
    };
    // Plotting positions of the k-th and (n-k+1)-th of n values, mapped onto the quantile
    // scale of the sorted sample (Hyndman and Fan definition 7: x(j) sits at (j-1)/(n-1)).
    let denominator = (n_future - 1).max(1) as f64;
    let q_low = (k - 1) as f64 / denominator;
    let q_high = (n_future - k) as f64 / denominator;
    Ok(Some(Interval {
        low: quantile_sorted(s, q_low.clamp(0.0, 1.0)),
        high: quantile_sorted(s, q_high.clamp(0.0, 1.0)),
        level,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::interval::median_ci;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The acceptance rule written out with exact binomial probabilities, for small n.
    fn rank_by_definition(n: usize, alpha: f64) -> usize {
        let total = 2f64.powi(n as i32);
        let mut c = 1.0; // C(n, 0)
        for s in 0..=n / 2 {
            if c / total > alpha / (n as f64 + 1.0) {
                return s;
            }
            c = c * (n - s) as f64 / (s + 1) as f64;
        }
        n / 2
    }

    #[test]
    fn ranks_match_the_definition() {
        for n in 1..=60 {
            let expected = rank_by_definition(n, 0.05);
            let got = median_cs_rank(n, 0.95).unwrap().unwrap_or(0);
            assert_eq!(got, expected, "n = {n}");
        }
    }

    /// The first accepted count found by scanning from 0, as the rank was computed before the
    /// bisection.
    fn rank_by_scan(n: usize, level: f64) -> Option<usize> {
        let alpha = 1.0 - level;
        let threshold = alpha.ln() - ((n + 1) as f64).ln();
        let accepted = |s: usize| {
            ln_binomial(n as u64, s as u64) - n as f64 * std::f64::consts::LN_2 > threshold
        };
        let k = (0..=n / 2).find(|&s| accepted(s)).unwrap_or(n / 2);
        (k != 0).then_some(k)
    }

    #[test]
    fn the_bisection_finds_the_rank_a_scan_finds() {
        for level in [0.8, 0.95, 0.99, 0.999_999] {
            let large = [10_000, 123_457, 1_000_000];
            for n in (1..=1_200).chain(large) {
                assert_eq!(
                    compute_rank(n, level),
                    rank_by_scan(n, level),
                    "n {n} level {level}"
                );
            }
        }
    }

    #[test]
    fn known_ranks_at_95() {
        // C(8,1)/256 = 0.03125 > 0.05/9 = 0.00556 while C(8,0)/256 = 0.0039 is not: k = 1.
        assert_eq!(median_cs_rank(7, 0.95).unwrap(), None);
        assert_eq!(median_cs_rank(8, 0.95).unwrap(), Some(1));
        assert_eq!(median_cs_min_n(0.95).unwrap(), 8);
        assert_eq!(median_cs_rank(20, 0.95).unwrap(), Some(4));
        assert_eq!(median_cs_rank(100, 0.95).unwrap(), Some(35));
        assert_eq!(median_cs_rank(0, 0.95).unwrap(), None);
        assert!(median_cs_rank(10, 1.0).is_err());
    }

    #[test]
    fn interval_uses_the_ranks() {
        let xs: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        let ci = median_cs(&xs, 0.95).unwrap().unwrap();
        assert_eq!((ci.low, ci.high), (4.0, 17.0));
        assert_eq!(median_cs(&xs[..7], 0.95).unwrap(), None);
        assert!(median_cs(&[1.0, f64::NAN], 0.95).is_err());
        assert!(median_cs(&[], 0.95).is_err());
    }

    #[test]
    fn the_sorted_forms_and_the_remembered_ranks_agree_with_the_plain_ones() {
        let xs: Vec<f64> = (0..57).map(|i| f64::from((i * 37) % 57) * 1.5).collect();
        let s = sorted(&xs);
        assert_eq!(
            median_cs(&xs, 0.95).unwrap(),
            median_cs_sorted(&s, 0.95).unwrap()
        );
        for n_future in [2, 8, 57, 300] {
            assert_eq!(
                projected_median_cs(&xs, 0.95, n_future).unwrap(),
                projected_median_cs_sorted(&s, 0.95, n_future).unwrap()
            );
        }
        // Asked twice: computed, then remembered.
        for n in 0..300 {
            for level in [0.9, 0.95, 0.99] {
                assert_eq!(median_cs_rank(n, level).unwrap(), compute_rank(n, level));
                assert_eq!(median_cs_rank(n, level).unwrap(), compute_rank(n, level));
            }
        }
        assert!(median_cs_sorted(&[1.0, f64::INFINITY], 0.95).is_err());
        assert!(projected_median_cs_sorted(&[1.0], 0.95, 10).is_err());
    }

    #[test]
    fn projection_on_the_same_size_is_the_interval() {
        let xs: Vec<f64> = (1..=40).map(|i| f64::from(i * i)).collect();
        let now = median_cs(&xs, 0.95).unwrap().unwrap();
        let projected = projected_median_cs(&xs, 0.95, 40).unwrap().unwrap();
        assert_eq!((now.low, now.high), (projected.low, projected.high));
        // More values narrow the projected interval; too few give none.
        let later = projected_median_cs(&xs, 0.95, 400).unwrap().unwrap();
        assert!(later.high - later.low < now.high - now.low);
        assert_eq!(projected_median_cs(&xs, 0.95, 5).unwrap(), None);
    }

    /// Coverage uniformly over time, the defining property: in simulated sequences of up to
    /// 300 values, the interval misses the true median at some n in at most alpha of them
    /// (plus Monte Carlo slack), where the fixed-n interval checked at every n misses far more
    /// often (optional stopping).
    #[test]
    fn misses_the_median_at_any_time_in_at_most_alpha_of_sequences() {
        let (paths, horizon) = (2000, 300);
        // Ranks per n of both intervals; 0 where there is none.
        let cs: Vec<usize> = (0..=horizon)
            .map(|n| median_cs_rank(n, 0.95).unwrap().unwrap_or(0))
            .collect();
        let fixed: Vec<usize> = (0..=horizon)
            .map(|n| {
                let xs: Vec<f64> = (0..n).map(|i| i as f64).collect();
                median_ci(&xs, 0.95)
                    .ok()
                    .flatten()
                    .map_or(0, |ci| ci.low as usize + 1)
            })
            .collect();
        // [x(k), x(n-k+1)] misses the median m when fewer than k values are <= m or more
        // than n-k are below it; for continuous data: below = count of values < m.
        let misses = |k: usize, n: usize, below: usize| k > 0 && (below < k || below > n - k);
        let mut rng = ChaCha8Rng::seed_from_u64(20221);
        let (mut cs_missed, mut fixed_missed) = (0, 0);
        for _ in 0..paths {
            // Fair coin flips: whether each value of a continuous sample is below its median.
            let (mut below, mut cs_miss, mut fixed_miss) = (0, false, false);
            for n in 1..=horizon {
                below += (rng.next_u32() & 1) as usize;
                cs_miss |= misses(cs[n], n, below);
                fixed_miss |= misses(fixed[n], n, below);
            }
            cs_missed += usize::from(cs_miss);
            fixed_missed += usize::from(fixed_miss);
        }
        let cs_rate = cs_missed as f64 / paths as f64;
        let fixed_rate = fixed_missed as f64 / paths as f64;
        // Binomial(2000, 0.05) has sd 0.0049: 0.06 is two sd above alpha.
        assert!(cs_rate <= 0.06, "confidence sequence missed in {cs_rate}");
        assert!(
            fixed_rate > 0.2,
            "fixed-n interval missed in only {fixed_rate}"
        );
    }

    fn config() -> Config {
        Config {
            rng_seed: RngSeed::Fixed(8),
            failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
            ..Config::default()
        }
    }

    proptest! {
        #![proptest_config(config())]

        /// The sequence pays for its validity at every n with a wider interval than the fixed-n
        /// one, never a narrower one.
        #[test]
        fn never_narrower_than_the_fixed_n_interval(n in 1usize..2000) {
            let cs = median_cs_rank(n, 0.95).unwrap().unwrap_or(0);
            // The fixed-n rank: the largest k with P(Binomial(n, 1/2) <= k - 1) <= 2.5%.
            let xs: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let fixed = median_ci(&xs, 0.95).unwrap().map_or(0, |ci| ci.low as usize + 1);
            prop_assert!(cs <= fixed, "n {n}: cs rank {cs} > fixed rank {fixed}");
        }

        /// The rank never decreases as values arrive, and grows less than n/2.
        #[test]
        fn rank_grows_with_n(n in 1usize..3000) {
            let a = median_cs_rank(n, 0.95).unwrap().unwrap_or(0);
            let b = median_cs_rank(n + 1, 0.95).unwrap().unwrap_or(0);
            prop_assert!(a <= b && b <= a + 1, "n {n}: {a} then {b}");
            prop_assert!(2 * a <= n);
        }

        /// The interval lies inside the data and contains the sample median.
        #[test]
        fn interval_contains_the_sample_median(
            xs in prop::collection::vec(-1e6f64..1e6, 1..300),
            level in 0.5f64..0.999,
        ) {
            if let Some(ci) = median_cs(&xs, level).unwrap() {
                let m = crate::median(&xs).unwrap();
                let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
                let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                prop_assert!(min <= ci.low && ci.low <= m && m <= ci.high && ci.high <= max);
            }
        }
    }
}
