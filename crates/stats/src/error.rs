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
