//! Correction for many comparisons at once.

use crate::error::{check, StatsError};

/// Benjamini-Hochberg adjusted p-values (false discovery rate; Benjamini & Hochberg 1995),
/// in the order of the input: `p_adj(i) = min_{j >= i} min(1, p(j) m / j)` over the p-values
/// sorted ascending. Rejecting where `p_adj <= q` controls the FDR at `q` for independent or
/// positively dependent tests. Matches `scipy.stats.false_discovery_control(ps, method="bh")`.
pub fn benjamini_hochberg(ps: &[f64]) -> Result<Vec<f64>, StatsError> {
    check(ps, 1)?;
    if let Some(&value) = ps.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(StatsError::OutOfRange {
            what: "p-value",
            range: "[0, 1]",
            value,
        });
    }
    let m = ps.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
    let mut adjusted = vec![0.0; m];
    let mut running_min = 1.0f64;
    for (rank0, &i) in order.iter().enumerate().rev() {
        // p * (m / rank) as SciPy does: the factor is >= 1, so rounding never takes the
        // adjusted value below the raw one.
        let scaled = ps[i] * (m as f64 / (rank0 + 1) as f64);
        running_min = running_min.min(scaled);
        adjusted[i] = running_min;
    }
    Ok(adjusted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answer() {
        // scipy.stats.false_discovery_control([0.01, 0.04, 0.03, 0.2])
        //   == [0.04, 0.05333333, 0.05333333, 0.2]
        let adj = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.2]).unwrap();
        let want = [0.04, 0.16 / 3.0, 0.16 / 3.0, 0.2];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-15, "{adj:?}");
        }
    }

    #[test]
    fn rejects_invalid_p() {
        assert!(benjamini_hochberg(&[0.5, 1.5]).is_err());
        assert!(benjamini_hochberg(&[]).is_err());
    }
}
