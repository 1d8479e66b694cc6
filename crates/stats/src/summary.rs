//! Location and spread: quantiles, median, mean, standard deviation, MAD; the resolution that
//! ties reveal.

use crate::error::{check, check_sorted, StatsError};

/// Sorted copy of a sample, in `f64::total_cmp`'s order.
///
/// The order statistics (quantiles, the median, MAD, the intervals of the median, Tukey's
/// fences) do not depend on the order of the sample, and each sorts its own copy; a slice that
/// is sorted already is sorted again in one pass (the sort finds the run that spans it), so a
/// caller that takes several of them from one large sample sorts it once with this and passes
/// the copy.
pub fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    // Unstable gives the same slice: two values equal under `total_cmp` have the same bits.
    // It allocates no scratch space and is the faster of the two on random values.
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// Quantile `q` (0..=1) of a sorted slice by linear interpolation between order statistics:
/// numpy's default (`method="linear"`, Hyndman & Fan 1996 definition 7).
pub(crate) fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Quantile `q` in `[0, 1]` with numpy's default linear interpolation.
pub fn quantile(xs: &[f64], q: f64) -> Result<f64, StatsError> {
    check(xs, 1)?;
    if !(0.0..=1.0).contains(&q) {
        return Err(StatsError::OutOfRange {
            what: "quantile",
            range: "[0, 1]",
            value: q,
        });
    }
    Ok(quantile_sorted(&sorted(xs), q))
}

/// Values closer than this, relative to their size, are one value for [`resolution`]: the
/// round-off of arithmetic (0.75 against 0.7500000000000001), not a step of a grid.
const SAME_VALUE: f64 = 1e-9;

/// The step of the grid that `xs` are rounded to, as far as the values show it: when two or
/// more values are equal (ties, which values measured to full precision practically never
/// have), the smallest difference between two distinct values, which is a multiple of the
/// step (rounding to a timer's resolution, or to the digits a tool printed). Values within a
/// relative 1e-9 of each other count as equal. `None` without ties, or when every value is
/// equal (no difference to see a step in).
pub fn resolution(xs: &[f64]) -> Result<Option<f64>, StatsError> {
    check(xs, 1)?;
    let s = sorted(xs);
    let same = |a: f64, b: f64| b - a <= SAME_VALUE * a.abs().max(b.abs());
    let tied = s.windows(2).any(|w| same(w[0], w[1]));
    if !tied {
        return Ok(None);
    }
    Ok(s.windows(2)
        .filter(|w| !same(w[0], w[1]))
        .map(|w| w[1] - w[0])
        .min_by(f64::total_cmp))
}

/// Median: the 0.5 quantile, the mean of the two middle values for even n (`numpy.median`).
pub fn median(xs: &[f64]) -> Result<f64, StatsError> {
    quantile(xs, 0.5)
}

/// [`median`] of values sorted already (by `f64::total_cmp`, without NaN), which it does not
/// sort again.
pub fn median_sorted(sorted: &[f64]) -> Result<f64, StatsError> {
    check_sorted(sorted, 1)?;
    Ok(quantile_sorted(sorted, 0.5))
}

/// Arithmetic mean (`numpy.mean`).
pub fn mean(xs: &[f64]) -> Result<f64, StatsError> {
    check(xs, 1)?;
    Ok(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Sample standard deviation with divisor n - 1 (`numpy.std(x, ddof=1)`); needs 2 values.
pub fn std_dev(xs: &[f64]) -> Result<f64, StatsError> {
    check(xs, 2)?;
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Ok((ss / (xs.len() - 1) as f64).sqrt())
}

/// Median absolute deviation from the median, unscaled
/// (`scipy.stats.median_abs_deviation` with its default `scale=1.0`).
pub fn mad(xs: &[f64]) -> Result<f64, StatsError> {
    let m = median(xs)?;
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median(&dev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_is_the_smallest_step_when_values_tie() {
        assert_eq!(
            resolution(&[1.0, 1.05, 1.05, 1.15])
                .unwrap()
                .map(|r| (r * 1e6).round()),
            Some(50_000.0)
        );
        assert_eq!(resolution(&[1.0, 1.01, 1.3]).unwrap(), None);
        assert_eq!(resolution(&[2.0, 2.0]).unwrap(), None);
        // Round-off is no grid: 0.1 + 0.2 and 0.3 are one value, the step is 0.1.
        let r = resolution(&[0.1 + 0.2, 0.3, 0.4, 0.6]).unwrap().unwrap();
        assert!((r - 0.1).abs() < 1e-12, "{r}");
        assert_eq!(resolution(&[0.1 + 0.2, 0.3]).unwrap(), None);
        assert!(resolution(&[]).is_err());
    }

    #[test]
    fn quantile_matches_numpy_linear() {
        // numpy.quantile([1, 2, 3, 4], [0.25, 0.5, 0.9]) == [1.75, 2.5, 3.7]
        let xs = [4.0, 1.0, 3.0, 2.0];
        assert!((quantile(&xs, 0.25).unwrap() - 1.75).abs() < 1e-12);
        assert!((quantile(&xs, 0.5).unwrap() - 2.5).abs() < 1e-12);
        assert!((quantile(&xs, 0.9).unwrap() - 3.7).abs() < 1e-12);
    }

    #[test]
    fn mad_of_known_sample() {
        // scipy.stats.median_abs_deviation([1, 1, 2, 2, 4, 6, 9]) == 1.0
        assert_eq!(mad(&[1.0, 1.0, 2.0, 2.0, 4.0, 6.0, 9.0]).unwrap(), 1.0);
    }

    #[test]
    fn rejects_nan_and_empty() {
        assert!(matches!(median(&[]), Err(StatsError::TooFew { .. })));
        assert!(matches!(
            median(&[1.0, f64::NAN]),
            Err(StatsError::NotFinite { index: 1, .. })
        ));
        assert!(std_dev(&[1.0]).is_err());
    }
}
