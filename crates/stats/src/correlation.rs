//! Rank correlation of two paired samples: Spearman's rho with ties, and its p-value from the
//! t approximation ([`spearman`]) or from the permutation distribution
//! ([`spearman_permutation`]).

use crate::distribution::t_sf;
use crate::error::{check, StatsError};
use crate::random::SeededRng;
use crate::rank::average_ranks;

/// Spearman's rank correlation with its two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spearman {
    /// In `[-1, 1]`; positive when the second sample grows with the first.
    pub rho: f64,
    pub p: f64,
}

/// Spearman's rank correlation (Spearman 1904) of the pairs `(xs[i], ys[i])`: the Pearson
/// correlation of their average ranks, so tied values share the mean of their ranks and the
/// coefficient stays exact with ties (the `1 - 6 sum d^2 / (n^3 - n)` shortcut does not).
///
/// The two-sided p-value is the t approximation `t = rho sqrt((n-2) / (1 - rho^2))` with
/// `n - 2` degrees of freedom (Kendall & Stuart, *The Advanced Theory of Statistics*, vol. 2,
/// sec. 31.19), which is what `scipy.stats.spearmanr(xs, ys)` returns by default, ties
/// included. It approximates the permutation distribution of rho; docs/why.md measures how
/// far, at the numbers of runs a configuration has.
///
/// Needs 3 pairs; a constant sample has no ranks to correlate and is
/// [`StatsError::Degenerate`] (SciPy returns NaN).
pub fn spearman(xs: &[f64], ys: &[f64]) -> Result<Spearman, StatsError> {
    let ranks = Ranked::of(xs, ys)?;
    let rho = ranks.rho(&ranks.y);
    let df = xs.len() as f64 - 2.0;
    let one_minus = (1.0 + rho) * (1.0 - rho);
    let p = if one_minus <= 0.0 {
        0.0
    } else {
        let t = rho * (df / one_minus).sqrt();
        (2.0 * t_sf(t.abs(), df)?).min(1.0)
    };
    Ok(Spearman { rho, p })
}

/// The centred average ranks of two paired samples, and the norm that makes their products
/// a correlation.
struct Ranked {
    x: Vec<f64>,
    y: Vec<f64>,
    norm: f64,
}

impl Ranked {
    fn of(xs: &[f64], ys: &[f64]) -> Result<Self, StatsError> {
        if xs.len() != ys.len() {
            return Err(StatsError::LengthMismatch {
                what: "spearman",
                left: xs.len(),
                right: ys.len(),
            });
        }
        check(xs, 3)?;
        check(ys, 3)?;
        // Average ranks always sum to n (n + 1) / 2, ties or not.
        let centre = (xs.len() as f64 + 1.0) / 2.0;
        let centred =
            |v: &[f64]| -> Vec<f64> { average_ranks(v).0.iter().map(|r| r - centre).collect() };
        let (x, y) = (centred(xs), centred(ys));
        let sxx: f64 = x.iter().map(|d| d * d).sum();
        let syy: f64 = y.iter().map(|d| d * d).sum();
        if sxx == 0.0 || syy == 0.0 {
            return Err(StatsError::Degenerate {
                what: "all values of a sample are equal",
            });
        }
        Ok(Ranked {
            x,
            y,
            norm: (sxx * syy).sqrt(),
        })
    }

    /// Rho of the x ranks against `y`, a permutation of the y ranks.
    fn rho(&self, y: &[f64]) -> f64 {
        let sxy: f64 = self.x.iter().zip(y).map(|(a, b)| a * b).sum();
        (sxy / self.norm).clamp(-1.0, 1.0)
    }
}

/// Spearman's rho with the two-sided p-value of its permutation distribution: the pairs are
/// re-paired at random (under no association every pairing is equally likely, ties and all),
/// and the p-value is twice the smaller tail share of rho at or beyond the one observed,
/// capped at 1, as `scipy.stats.permutation_test(..., permutation_type="pairings")` defines
/// it. Exact, by enumerating every pairing, when `n!` is at most `resamples`; otherwise from
/// `resamples` pairings drawn by the seeded stream `seed`, `(count + 1) / (resamples + 1)`
/// per tail (Phipson & Smyth, "Permutation p-values should never be zero", Stat. Appl.
/// Genet. Mol. Biol. 9, 2010), which never falls below the exact p-value's distribution.
/// Unlike the t approximation this p-value is valid at any `n` and with any ties.
pub fn spearman_permutation(
    xs: &[f64],
    ys: &[f64],
    resamples: usize,
    seed: u64,
) -> Result<Spearman, StatsError> {
    spearman_permutation_until(xs, ys, resamples, usize::MAX, seed)
}

/// [`spearman_permutation`] that stops drawing once the smaller tail has counted `tail`
/// pairings: the p-value is then `2 tail / drawn` (capped at 1), Besag and Clifford's
/// sequential Monte Carlo p-value ("Sequential Monte Carlo p-values", Biometrika 78, 1991),
/// which is valid as it stands and differs from the full run's only where the p-value is
/// large. A key with no association stops after a few dozen pairings; only the small p-values
/// cost all `resamples`. Enumeration (`n!` at most `resamples`) does not stop early.
pub fn spearman_permutation_until(
    xs: &[f64],
    ys: &[f64],
    resamples: usize,
    tail: usize,
    seed: u64,
) -> Result<Spearman, StatsError> {
    let ranks = Ranked::of(xs, ys)?;
    let rho = ranks.rho(&ranks.y);
    // Rounding of the sums: equal pairings must compare equal (SciPy's relative 1e-14).
    let gamma = (rho * 1e-14).abs();
    let (mut at_least, mut at_most) = (0usize, 0usize);
    let n = xs.len();
    let exact = (1..=n)
        .try_fold(1usize, |f, k| f.checked_mul(k))
        .filter(|&total| total <= resamples);
    let (total, adjustment) = match exact {
        Some(total) => {
            // Heap's algorithm: every permutation of the y ranks once.
            let mut y = ranks.y.clone();
            let mut c = vec![0usize; n];
            let mut count = |r: f64| {
                at_least += usize::from(r >= rho - gamma);
                at_most += usize::from(r <= rho + gamma);
            };
            count(ranks.rho(&y));
            let mut i = 1;
            while i < n {
                if c[i] < i {
                    let j = if i % 2 == 0 { 0 } else { c[i] };
                    y.swap(j, i);
                    count(ranks.rho(&y));
                    c[i] += 1;
                    i = 1;
                } else {
                    c[i] = 0;
                    i += 1;
                }
            }
            (total, 0)
        }
        None => {
            let mut rng = SeededRng::new(seed);
            let mut y = ranks.y.clone();
            for drawn in 1..=resamples {
                rng.shuffle(&mut y);
                let r = ranks.rho(&y);
                at_least += usize::from(r >= rho - gamma);
                at_most += usize::from(r <= rho + gamma);
                if at_least.min(at_most) >= tail {
                    let p = (2.0 * tail as f64 / drawn as f64).min(1.0);
                    return Ok(Spearman { rho, p });
                }
            }
            (resamples, 1)
        }
    };
    let tail = |k: usize| (k + adjustment) as f64 / (total + adjustment) as f64;
    let p = (2.0 * tail(at_least).min(tail(at_most))).min(1.0);
    Ok(Spearman { rho, p })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotone_pairs_have_rho_one() {
        let r = spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 50.0, 90.0]).unwrap();
        assert_eq!((r.rho, r.p), (1.0, 0.0));
        let r = spearman(&[1.0, 2.0, 3.0, 4.0], &[9.0, 5.0, 2.0, 1.0]).unwrap();
        assert_eq!(r.rho, -1.0);
    }

    #[test]
    fn ties_share_their_ranks() {
        // scipy.stats.spearmanr([1, 2, 2, 3, 4], [1, 3, 2, 2, 5]) -> rho 0.7631578947368421,
        // p 0.13333911953180624 (ranks [1, 2.5, 2.5, 4, 5] and [1, 4, 2.5, 2.5, 5])
        let r = spearman(&[1.0, 2.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 2.0, 5.0]).unwrap();
        assert!((r.rho - 0.763_157_894_736_842_1).abs() < 1e-12, "{}", r.rho);
        assert!((r.p - 0.133_339_119_531_806_24).abs() < 1e-9, "{}", r.p);
    }

    #[test]
    fn permutation_p_of_a_perfect_order() {
        // Of the 4! = 24 pairings one has rho 1 and one rho -1: p = 2 min(1/24, 24/24).
        let r = spearman_permutation(&[1.0, 2.0, 3.0, 4.0], &[1.0, 2.0, 3.0, 5.0], 24, 0).unwrap();
        assert_eq!(r.rho, 1.0);
        assert!((r.p - 2.0 / 24.0).abs() < 1e-15, "{}", r.p);
        // Drawn: never 0, at least 2 / (resamples + 1).
        let r = spearman_permutation(&[1.0, 2.0, 3.0, 4.0], &[1.0, 2.0, 3.0, 5.0], 23, 7).unwrap();
        assert!(r.p >= 2.0 / 24.0 && r.p < 0.3, "{}", r.p);
    }

    #[test]
    fn a_sequential_p_value_stops_early_only_when_large() {
        let x: Vec<f64> = (0..20).map(f64::from).collect();
        let unrelated = [
            5., 3., 8., 1., 9., 2., 7., 4., 6., 0., 13., 18., 11., 16., 10., 19., 12., 15., 14.,
            17.,
        ];
        let full = spearman_permutation(&x, &unrelated, 9_999, 3).unwrap();
        let quick = spearman_permutation_until(&x, &unrelated, 9_999, 20, 3).unwrap();
        assert!(full.p < 0.01, "{full:?}");
        // A strong association counts fewer than 20 in its smaller tail: the same p-value.
        assert_eq!(quick, full);
        let noise = [
            5., 3., 8., 1., 9., 2., 7., 4., 6., 0., 13., 18., 11., 16., 10., 19., 12., 15., 14.,
            17.,
        ]
        .map(|v: f64| (v * 7.0) % 20.0);
        let full = spearman_permutation(&x, &noise, 9_999, 3).unwrap();
        let quick = spearman_permutation_until(&x, &noise, 9_999, 20, 3).unwrap();
        assert!(
            full.p > 0.2 && (quick.p - full.p).abs() < 0.25,
            "{full:?} {quick:?}"
        );
    }

    #[test]
    fn refuses_what_has_no_ranks() {
        assert!(matches!(
            spearman(&[1.0, 2.0, 3.0], &[4.0, 4.0, 4.0]),
            Err(StatsError::Degenerate { .. })
        ));
        assert!(matches!(
            spearman(&[1.0, 2.0, 3.0], &[4.0, 4.0]),
            Err(StatsError::LengthMismatch { .. })
        ));
        assert!(matches!(
            spearman(&[1.0, 2.0], &[4.0, 5.0]),
            Err(StatsError::TooFew { .. })
        ));
    }
}
