//! Outlier classification. Outliers are labelled for the report, never dropped.

use crate::error::{check, StatsError};
use crate::summary::{median, quantile_sorted, sorted};

/// Where a value lies relative to Tukey's fences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TukeyClass {
    /// Below `Q1 - 3 IQR`.
    LowSevere,
    /// Below `Q1 - 1.5 IQR`, not below `Q1 - 3 IQR`.
    LowMild,
    /// Within the inner fences.
    Inside,
    /// Above `Q3 + 1.5 IQR`, not above `Q3 + 3 IQR`.
    HighMild,
    /// Above `Q3 + 3 IQR`.
    HighSevere,
}

impl TukeyClass {
    pub fn is_outlier(self) -> bool {
        self != TukeyClass::Inside
    }
}

/// Tukey's fences (Tukey, *Exploratory Data Analysis*, 1977, ch. 2): inner at 1.5 IQR, outer
/// at 3 IQR beyond the quartiles; quartiles by numpy's linear interpolation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TukeyFences {
    pub low_severe: f64,
    pub low_mild: f64,
    pub high_mild: f64,
    pub high_severe: f64,
}

impl TukeyFences {
    pub fn of(xs: &[f64]) -> Result<Self, StatsError> {
        check(xs, 1)?;
        let s = sorted(xs);
        let q1 = quantile_sorted(&s, 0.25);
        let q3 = quantile_sorted(&s, 0.75);
        let iqr = q3 - q1;
        Ok(TukeyFences {
            low_severe: q1 - 3.0 * iqr,
            low_mild: q1 - 1.5 * iqr,
            high_mild: q3 + 1.5 * iqr,
            high_severe: q3 + 3.0 * iqr,
        })
    }

    /// Class of one value; a value exactly on a fence is on the inner side.
    pub fn classify(&self, x: f64) -> TukeyClass {
        if x < self.low_severe {
            TukeyClass::LowSevere
        } else if x < self.low_mild {
            TukeyClass::LowMild
        } else if x > self.high_severe {
            TukeyClass::HighSevere
        } else if x > self.high_mild {
            TukeyClass::HighMild
        } else {
            TukeyClass::Inside
        }
    }
}

/// Threshold of `|M_i|` above which Iglewicz & Hoaglin label a value an outlier.
pub const MODIFIED_Z_THRESHOLD: f64 = 3.5;

/// Modified z-scores `M_i = 0.6745 (x_i - median) / MAD` (Iglewicz & Hoaglin, *How to Detect
/// and Handle Outliers*, ASQC 1993, sec. 3.2; 0.6745 is the 0.75 normal quantile, which makes
/// MAD consistent with the standard deviation). `None` when MAD is zero (more than half of the
/// values are equal), where the score is undefined.
pub fn modified_z_scores(xs: &[f64]) -> Result<Option<Vec<f64>>, StatsError> {
    check(xs, 1)?;
    let med = median(xs)?;
    let mad = crate::summary::mad(xs)?;
    if mad == 0.0 {
        return Ok(None);
    }
    Ok(Some(xs.iter().map(|x| 0.6745 * (x - med) / mad).collect()))
}

/// Both classifications of one value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutlierClass {
    pub tukey: TukeyClass,
    /// Modified z-score; `None` when MAD is zero.
    pub modified_z: Option<f64>,
}

impl OutlierClass {
    /// `|M| > 3.5`; false when the score is undefined.
    pub fn is_modified_z_outlier(&self) -> bool {
        self.modified_z
            .is_some_and(|z| z.abs() > MODIFIED_Z_THRESHOLD)
    }
}

/// Classifies every value of `xs` (same order) by Tukey's fences and by modified z-score.
pub fn classify_outliers(xs: &[f64]) -> Result<Vec<OutlierClass>, StatsError> {
    let fences = TukeyFences::of(xs)?;
    let z = modified_z_scores(xs)?;
    Ok(xs
        .iter()
        .enumerate()
        .map(|(i, &x)| OutlierClass {
            tukey: fences.classify(x),
            modified_z: z.as_ref().map(|z| z[i]),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tukey_classes() {
        // Quartiles of 1..=8 (numpy linear): 2.75 and 6.25, IQR 3.5; fences -7.75, -2.5, 11.5, 16.75.
        let mut xs: Vec<f64> = (1..=8).map(f64::from).collect();
        xs.extend([12.0, 17.0, -3.0, -8.0, 11.5]);
        let f = TukeyFences::of(&xs[..8]).unwrap();
        assert_eq!(f.high_mild, 11.5);
        let classes: Vec<TukeyClass> = xs.iter().map(|&x| f.classify(x)).collect();
        assert!(classes[..8].iter().all(|c| *c == TukeyClass::Inside));
        assert_eq!(
            &classes[8..],
            &[
                TukeyClass::HighMild,
                TukeyClass::HighSevere,
                TukeyClass::LowMild,
                TukeyClass::LowSevere,
                TukeyClass::Inside
            ]
        );
    }

    #[test]
    fn modified_z_flags_far_value() {
        let xs = [10.0, 10.2, 9.9, 10.1, 9.8, 10.0, 30.0];
        let c = classify_outliers(&xs).unwrap();
        assert!(c[6].is_modified_z_outlier());
        assert!(c[..6].iter().all(|c| !c.is_modified_z_outlier()));
        assert_eq!(c[6].tukey, TukeyClass::HighSevere);
    }

    #[test]
    fn zero_mad_has_no_scores() {
        let c = classify_outliers(&[1.0, 1.0, 1.0, 5.0]).unwrap();
        assert!(c.iter().all(|c| c.modified_z.is_none()));
    }
}
