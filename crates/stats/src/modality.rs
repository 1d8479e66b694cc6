//! Multimodality warning: the bimodality coefficient.

use crate::error::{check, StatsError};
use crate::summary::mean;

/// Fewest values for the bimodality coefficient: its sample skewness and kurtosis are too
/// variable below about 10 values to separate one mode from two (Pfister et al. 2013). `show`
/// and `compare` warn from here on, and the stopping rule does not declare convergence before.
pub const MIN_RUNS_MODALITY: usize = 10;

/// Value of the bimodality coefficient of a uniform distribution; larger values suggest a
/// bimodal (or very skewed) distribution (SAS Institute, *SAS/STAT User's Guide*, 1990).
pub const BIMODALITY_THRESHOLD: f64 = 5.0 / 9.0;

/// Moment summary behind the bimodality coefficient.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bimodality {
    /// Bias-corrected sample skewness G1 (`scipy.stats.skew(x, bias=False)`).
    pub skewness: f64,
    /// Bias-corrected sample excess kurtosis G2 (`scipy.stats.kurtosis(x, bias=False)`).
    pub excess_kurtosis: f64,
    /// `(G1^2 + 1) / (G2 + 3 (n-1)^2 / ((n-2)(n-3)))`.
    pub coefficient: f64,
}

impl Bimodality {
    /// Whether the coefficient exceeds 5/9.
    pub fn suggests_bimodality(&self) -> bool {
        self.coefficient > BIMODALITY_THRESHOLD
    }
}

/// Bimodality coefficient (Pfister, Schwarz, Janczyk, Dale & Freeman, "Good things peak in
/// pairs", Frontiers in Psychology 4:700, 2013, eq. 3) with the bias-corrected moments of
/// Joanes & Gill (1998): `G1 = sqrt(n(n-1))/(n-2) m3/m2^1.5` and
/// `G2 = (n-1)/((n-2)(n-3)) ((n+1)(m4/m2^2 - 3) + 6)`. Needs 4 values; constant data are
/// [`StatsError::Degenerate`].
pub fn bimodality(xs: &[f64]) -> Result<Bimodality, StatsError> {
    check(xs, 4)?;
    let n = xs.len() as f64;
    let m = mean(xs)?;
    let (mut m2, mut m3, mut m4) = (0.0, 0.0, 0.0);
    for x in xs {
        let d = x - m;
        let d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    m2 /= n;
    m3 /= n;
    m4 /= n;
    // Relative to the data's magnitude: rounding leaves a tiny m2 for constant input.
    let scale = xs.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    if m2 <= (scale * f64::EPSILON).powi(2) * n {
        return Err(StatsError::Degenerate {
            what: "all values are equal",
        });
    }
    let g1 = m3 / m2.powf(1.5);
    let g2 = m4 / (m2 * m2) - 3.0;
    let skewness = (n * (n - 1.0)).sqrt() / (n - 2.0) * g1;
    let excess_kurtosis = (n - 1.0) / ((n - 2.0) * (n - 3.0)) * ((n + 1.0) * g2 + 6.0);
    let coefficient = (skewness * skewness + 1.0)
        / (excess_kurtosis + 3.0 * (n - 1.0) * (n - 1.0) / ((n - 2.0) * (n - 3.0)));
    Ok(Bimodality {
        skewness,
        excess_kurtosis,
        coefficient,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_clusters_are_bimodal() {
        let mut xs = vec![10.0; 20];
        xs.extend(vec![20.0; 20]);
        for (i, x) in xs.iter_mut().enumerate() {
            *x += (i % 5) as f64 * 0.1;
        }
        let b = bimodality(&xs).unwrap();
        assert!(b.suggests_bimodality(), "{b:?}");
    }

    #[test]
    fn normal_shape_is_not() {
        // Normal quantiles at (i + 0.5) / n: the coefficient of a normal distribution is 1/3.
        let xs: Vec<f64> = (0..200)
            .map(|i| crate::normal_quantile((f64::from(i) + 0.5) / 200.0).unwrap())
            .collect();
        let b = bimodality(&xs).unwrap();
        assert!(!b.suggests_bimodality(), "{b:?}");
        assert!((b.coefficient - 1.0 / 3.0).abs() < 0.05, "{b:?}");
    }

    #[test]
    fn constant_is_degenerate() {
        assert!(matches!(
            bimodality(&[0.1; 5]),
            Err(StatsError::Degenerate { .. })
        ));
    }
}
