/// Why a statistic could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("need at least {needed} values, got {got}")]
    TooFew { needed: usize, got: usize },
    #[error("value {value} at position {index} is not a finite number")]
    NotFinite { index: usize, value: f64 },
    #[error("{what} must be in {range}, got {value}")]
    OutOfRange {
        what: &'static str,
        range: &'static str,
        value: f64,
    },
    /// A value that must be strictly positive (a ratio, a time) is zero or negative.
    #[error("value {value} at position {index} is not positive")]
    NotPositive { index: usize, value: f64 },
    /// Two slices that pair up element by element have different lengths.
    #[error("{what}: lengths differ ({left} and {right})")]
    LengthMismatch {
        what: &'static str,
        left: usize,
        right: usize,
    },
    /// The data make the statistic undefined (zero variance, all values equal, ...).
    #[error("{what}")]
    Degenerate { what: &'static str },
}

/// Checks that `xs` has at least `needed` values and all are finite.
pub(crate) fn check(xs: &[f64], needed: usize) -> Result<(), StatsError> {
    if xs.len() < needed {
        return Err(StatsError::TooFew {
            needed,
            got: xs.len(),
        });
    }
    if let Some((index, &value)) = xs.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(StatsError::NotFinite { index, value });
    }
    Ok(())
}

/// [`check`] of a slice sorted by `f64::total_cmp`, in constant time: the values that are not
/// finite (infinities, NaN) sort to its ends, so its ends tell. The index of one is its place
/// in the sorted slice.
pub(crate) fn check_sorted(sorted: &[f64], needed: usize) -> Result<(), StatsError> {
    if sorted.len() < needed {
        return Err(StatsError::TooFew {
            needed,
            got: sorted.len(),
        });
    }
    debug_assert!(sorted.windows(2).all(|w| w[0].total_cmp(&w[1]).is_le()));
    let last = sorted.len().saturating_sub(1);
    for index in [0, last] {
        match sorted.get(index) {
            Some(&value) if !value.is_finite() => {
                return Err(StatsError::NotFinite { index, value })
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks that every value of an already finite-checked slice is strictly positive.
pub(crate) fn check_positive(xs: &[f64]) -> Result<(), StatsError> {
    if let Some((index, &value)) = xs.iter().enumerate().find(|(_, v)| **v <= 0.0) {
        return Err(StatsError::NotPositive { index, value });
    }
    Ok(())
}

pub(crate) fn check_level(level: f64) -> Result<(), StatsError> {
    if level > 0.0 && level < 1.0 {
        Ok(())
    } else {
        Err(StatsError::OutOfRange {
            what: "confidence level",
            range: "(0, 1)",
            value: level,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_positive_reports_first_offender() {
        assert_eq!(check_positive(&[1.0, 2.0]), Ok(()));
        assert_eq!(
            check_positive(&[1.0, 0.0, -1.0]),
            Err(StatsError::NotPositive {
                index: 1,
                value: 0.0
            })
        );
    }

    #[test]
    fn check_level_is_open_interval() {
        assert!(check_level(0.95).is_ok());
        assert!(check_level(0.0).is_err());
        assert!(check_level(1.0).is_err());
        assert!(check_level(f64::NAN).is_err());
    }
}
