//! Drift of a series of runs: Spearman rank correlation of the values against their index.

use crate::correlation::{spearman, Spearman};
use crate::error::{check, StatsError};

/// Spearman correlation (Spearman 1904) of `xs` against `0, 1, ..., n-1`: [`spearman`] of
/// the run index and the values, as `scipy.stats.spearmanr(range(n), xs)`. Needs 3 values;
/// constant `xs` is [`StatsError::Degenerate`] (SciPy returns NaN).
pub fn spearman_drift(xs: &[f64]) -> Result<Spearman, StatsError> {
    check(xs, 3)?;
    let index: Vec<f64> = (0..xs.len()).map(|i| i as f64).collect();
    spearman(&index, xs)
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
