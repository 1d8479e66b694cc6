//! Drift of a series of runs: Spearman rank correlation of the values against their index.

use crate::distribution::t_sf;
use crate::error::{check, StatsError};
use crate::rank::average_ranks;

/// Spearman's rank correlation with its two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spearman {
    /// In `[-1, 1]`; positive when values grow with the run index.
    pub rho: f64,
    pub p: f64,
}

/// Spearman correlation (Spearman 1904) of `xs` against `0, 1, ..., n-1`: the Pearson
/// correlation of the average ranks. The p-value uses `t = rho sqrt((n-2) / (1 - rho^2))` with
/// `n - 2` degrees of freedom (Kendall & Stuart, vol. 2, sec. 31.19), as
/// `scipy.stats.spearmanr(range(n), xs)` does. Needs 3 values; constant `xs` is
/// [`StatsError::Degenerate`] (SciPy returns NaN).
pub fn spearman_drift(xs: &[f64]) -> Result<Spearman, StatsError> {
    check(xs, 3)?;
    let (ranks, _) = average_ranks(xs);
    let n = xs.len() as f64;
    // The index ranks are 1..=n without ties: mean (n+1)/2.
    let centre = (n + 1.0) / 2.0;
    let mut sxy = 0.0;
    let mut sxx = 0.0;
    let mut syy = 0.0;
    for (i, r) in ranks.iter().enumerate() {
        let dx = (i + 1) as f64 - centre;
        let dy = r - centre;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if syy == 0.0 {
        return Err(StatsError::Degenerate {
            what: "all values are equal",
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
    fn monotone_series_has_rho_one() {
        let r = spearman_drift(&[1.0, 2.0, 5.0, 9.0]).unwrap();
        assert_eq!(r.rho, 1.0);
        assert_eq!(r.p, 0.0);
        let r = spearman_drift(&[9.0, 5.0, 2.0, 1.0]).unwrap();
        assert_eq!(r.rho, -1.0);
    }

    #[test]
    fn known_answer() {
        // scipy.stats.spearmanr(range(5), [2, 1, 4, 3, 5]) -> rho 0.8, p 0.10408803866182788
        let r = spearman_drift(&[2.0, 1.0, 4.0, 3.0, 5.0]).unwrap();
        assert!((r.rho - 0.8).abs() < 1e-12);
        assert!((r.p - 0.104_088_038_661_827_88).abs() < 1e-9, "{}", r.p);
    }

    #[test]
    fn constant_is_degenerate() {
        assert!(matches!(
            spearman_drift(&[1.0, 1.0, 1.0]),
            Err(StatsError::Degenerate { .. })
        ));
    }
}
