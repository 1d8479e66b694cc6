//! Rank correlation of two paired samples: Spearman's rho with ties, and its p-value.

use crate::distribution::t_sf;
use crate::error::{check, StatsError};
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
    if xs.len() != ys.len() {
        return Err(StatsError::LengthMismatch {
            what: "spearman",
            left: xs.len(),
            right: ys.len(),
        });
    }
    check(xs, 3)?;
    check(ys, 3)?;
    let (rx, _) = average_ranks(xs);
    let (ry, _) = average_ranks(ys);
    let n = xs.len() as f64;
    // Average ranks always sum to n (n + 1) / 2, ties or not.
    let centre = (n + 1.0) / 2.0;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        let (dx, dy) = (a - centre, b - centre);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return Err(StatsError::Degenerate {
            what: "all values of a sample are equal",
        });
    }
    let rho = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    let df = n - 2.0;
    let one_minus = (1.0 + rho) * (1.0 - rho);
    let p = if one_minus <= 0.0 {
        0.0
    } else {
        let t = rho * (df / one_minus).sqrt();
        (2.0 * t_sf(t.abs(), df)?).min(1.0)
    };
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
