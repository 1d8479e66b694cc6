//! The between-session part of a comparison's uncertainty (docs/compare.md, "Sessions").
//!
//! The runs of one session cannot show that the whole session sits higher or lower than the
//! next one would (a different page layout, another boot, a neighbour on the host). The
//! interval of the ratio from the runs (Hodges-Lehmann / Moses) is kept for the within-session
//! part and widened by the variance of the session effects of both sides
//! ([`vernier_stats::widen`]), estimated
//!
//! - from the sessions themselves when the sides together hold at least three sessions of the
//!   configuration: the session is the replication unit ([`vernier_stats::between_session_variance`]
//!   over the two sides' session log-medians, `sessions - 2` degrees of freedom);
//! - otherwise (one session a side) from the calibration `vernier calibrate` stored for the
//!   environment of each side (a side without one borrows the other side's);
//! - or not at all, when neither exists: the interval then covers the runs only, and the report
//!   says so.

use std::collections::HashMap;

use serde::Serialize;
use vernier_model::{Calibration, CONFIDENCE_LEVEL};
use vernier_stats::{
    between_session_variance, min_detectable_change, normal_quantile, satterthwaite, widen,
    Component, SessionMedian, StatsError,
};

use crate::compare::{key_of, Key, DEFAULT_THRESHOLD};

/// Power at which the minimum detectable change is stated.
pub const MDC_POWER: f64 = 0.8;

/// Where the between-session part of an interval comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NoiseSource {
    /// Estimated from the sessions of the two sides (at least three in all).
    Sessions,
    /// The stored calibration of the sides' environments.
    Calibration,
}

/// The measured values of one configuration in one session.
#[derive(Debug, Clone)]
pub(crate) struct SessionValues {
    pub fingerprint: String,
    pub values: Vec<f64>,
}

/// The stored calibrations of one environment fingerprint and configuration, pooled.
///
/// Each calibration estimates `tau^2 + mean v` by the mean square of its session medians around
/// their own mean, with `sessions - 1` degrees of freedom. Several calibrations of the same
/// environment (run at different times, say every night) are pooled like the groups of a
/// one-way layout (Searle, Casella & McCulloch, *Variance Components*, 1992, sec. 3.5): the
/// mean squares and the within parts weighted by their degrees of freedom, which add up. Each
/// calibration keeps its own mean, so noise on time scales longer than one calibration's span
/// is not seen: `vernier calibrate --spread` spaces the sessions of one calibration over time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PooledCalibration {
    /// Calibrations pooled.
    pub calibrations: usize,
    /// Pooled mean square of the session log-medians (`tau^2 + mean v`).
    pub mean_square: f64,
    /// Pooled within-session part, `mean v`.
    pub within: f64,
    /// Degrees of freedom of `mean_square`: the sum over the calibrations.
    pub df: f64,
}

impl PooledCalibration {
    /// The session-to-session variance `tau^2 = max(0, mean_square - within)`.
    pub fn between_variance(&self) -> f64 {
        (self.mean_square - self.within).max(0.0)
    }
}

/// Stored calibrations by environment fingerprint and configuration, pooled.
#[derive(Debug, Default)]
pub(crate) struct CalibrationTable {
    by_key: HashMap<(String, Key), PooledCalibration>,
}

impl CalibrationTable {
    /// Every calibration of each fingerprint and configuration among `calibrations`, pooled
    /// ([`PooledCalibration`]); a calibration without degrees of freedom adds nothing.
    pub fn new(calibrations: &[Calibration]) -> Self {
        let mut by_key: HashMap<(String, Key), PooledCalibration> = HashMap::new();
        for c in calibrations.iter().filter(|c| c.df > 0.0) {
            let key = (
                c.fingerprint.clone(),
                key_of(&c.benchmark, &c.options, &c.metric),
            );
            let p = by_key.entry(key).or_insert(PooledCalibration {
                calibrations: 0,
                mean_square: 0.0,
                within: 0.0,
                df: 0.0,
            });
            let df = p.df + c.df;
            p.mean_square = (p.mean_square * p.df + c.session_sd * c.session_sd * c.df) / df;
            p.within = (p.within * p.df + c.within_sd * c.within_sd * c.df) / df;
            p.df = df;
            p.calibrations += 1;
        }
        CalibrationTable { by_key }
    }

    fn get(&self, fingerprint: &str, key: &Key) -> Option<&PooledCalibration> {
        self.by_key.get(&(fingerprint.to_string(), key.clone()))
    }
}

/// The variance of the between-session part of `ln(NEW/BASE)`, with its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Between {
    pub source: NoiseSource,
    pub component: Component,
}

fn logs(values: &[f64]) -> Vec<f64> {
    values.iter().map(|v| v.ln()).collect()
}

fn medians(sessions: &[SessionValues]) -> Result<Vec<SessionMedian>, StatsError> {
    sessions
        .iter()
        .map(|s| SessionMedian::of(&logs(&s.values)))
        .collect()
}

/// The between-session variance of the log-ratio of `key` for these sides (each session with
/// at least one positive value), or `None` when nothing can estimate it.
pub(crate) fn between(
    base: &[SessionValues],
    new: &[SessionValues],
    key: &Key,
    table: &CalibrationTable,
) -> Result<Option<Between>, StatsError> {
    if base.is_empty() || new.is_empty() {
        return Ok(None);
    }
    if base.len() + new.len() >= 3 {
        let (b, n) = (medians(base)?, medians(new)?);
        let estimate = between_session_variance(&[&b, &n])?;
        // Each side's mean carries tau^2 / (its sessions).
        let factor = 1.0 / base.len() as f64 + 1.0 / new.len() as f64;
        return Ok(Some(Between {
            source: NoiseSource::Sessions,
            component: Component {
                variance: estimate.variance * factor,
                df: estimate.df,
            },
        }));
    }
    let (fb, fn_) = (&base[0].fingerprint, &new[0].fingerprint);
    let own_b = table.get(fb, key);
    let own_n = table.get(fn_, key);
    let (Some(cb), Some(cn)) = (own_b.or(own_n), own_n.or(own_b)) else {
        return Ok(None);
    };
    let component = if fb == fn_ || own_b.is_none() || own_n.is_none() {
        // One estimate counted twice: its variance doubles, its degrees of freedom stay.
        Component {
            variance: 2.0 * cb.between_variance(),
            df: cb.df,
        }
    } else {
        satterthwaite(&[
            Component {
                variance: cb.between_variance(),
                df: cb.df,
            },
            Component {
                variance: cn.between_variance(),
                df: cn.df,
            },
        ])?
    };
    Ok(Some(Between {
        source: NoiseSource::Calibration,
        component,
    }))
}

/// The ratio interval a verdict uses, with the minimum detectable change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RatioInterval {
    pub low: f64,
    pub high: f64,
    /// Smallest relative change reported as beyond the threshold with [`MDC_POWER`].
    pub mdc: f64,
}

/// The interval of `ln(NEW/BASE)` from the runs, `[low, high]` around `shift`, widened by
/// `between` (if any) and exponentiated, with its minimum detectable change.
pub(crate) fn ratio_interval(
    shift: f64,
    low: f64,
    high: f64,
    between: Option<Between>,
    level: f64,
    threshold: f64,
) -> Result<RatioInterval, StatsError> {
    let extra = between.map(|b| b.component).unwrap_or(Component {
        variance: 0.0,
        df: f64::INFINITY,
    });
    // The Hodges-Lehmann estimate lies inside Moses' interval; clamp against rounding.
    let center = shift.clamp(low, high);
    let w = widen(center, low, high, level, extra)?;
    let z = normal_quantile(0.5 + level / 2.0)?;
    // The wider half decides what can be detected in both directions.
    let (half, se) = if w.high - center >= center - w.low {
        (w.high - center, w.se_high.max((high - center) / z))
    } else {
        (center - w.low, w.se_low.max((center - low) / z))
    };
    Ok(RatioInterval {
        low: w.low.exp(),
        high: w.high.exp(),
        mdc: min_detectable_change(threshold, half, se, MDC_POWER)?,
    })
}

/// The minimum detectable change of a comparison of one session a side in the environment and
/// configuration of calibration `c`, at the default threshold and level: the runs' part from
/// the within-session variance of two session medians, widened by twice the between-session
/// variance. `vernier calibrate` shows it for each configuration it calibrated.
pub fn predicted_mdc(c: &Calibration) -> Option<f64> {
    let z = normal_quantile(0.5 + CONFIDENCE_LEVEL / 2.0).ok()?;
    let runs_half = z * (2.0 * c.within_sd * c.within_sd).sqrt();
    let extra = Component {
        variance: 2.0 * c.between_sd * c.between_sd,
        df: c.df,
    };
    let w = widen(0.0, -runs_half, runs_half, CONFIDENCE_LEVEL, extra).ok()?;
    min_detectable_change(DEFAULT_THRESHOLD, w.high, w.se_high, MDC_POWER).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use uuid::Uuid;
    use vernier_model::Options;

    fn key() -> Key {
        key_of("bench", &Options::default(), "time")
    }

    fn cal(fingerprint: &str, between_sd: f64, df: f64) -> Calibration {
        Calibration {
            id: Uuid::new_v4(),
            created_at_ns: 1,
            fingerprint: fingerprint.into(),
            benchmark: "bench".into(),
            options: Options::default(),
            metric: "time".into(),
            sessions: 5,
            runs: 50,
            session_sd: between_sd,
            within_sd: 0.0,
            between_sd,
            df,
            session_ids: Vec::new(),
        }
    }

    fn sv(fingerprint: &str, values: &[f64]) -> SessionValues {
        SessionValues {
            fingerprint: fingerprint.into(),
            values: values.to_vec(),
        }
    }

    #[test]
    fn one_session_a_side_uses_the_calibration_of_each_environment() {
        let b = [sv("fa", &[1.0, 1.1])];
        let n = [sv("fb", &[1.0, 1.1])];
        assert_eq!(
            between(&b, &n, &key(), &CalibrationTable::default()).unwrap(),
            None
        );
        // One environment calibrated: both sides borrow it, variance 2 tau^2, df unchanged.
        let table = CalibrationTable::new(&[cal("fa", 0.03, 4.0)]);
        let got = between(&b, &n, &key(), &table).unwrap().unwrap();
        assert_eq!(got.source, NoiseSource::Calibration);
        assert!((got.component.variance - 2.0 * 0.0009).abs() < 1e-15);
        assert_eq!(got.component.df, 4.0);
        // Both calibrated: tau_a^2 + tau_b^2 with Satterthwaite's df.
        let table = CalibrationTable::new(&[cal("fa", 0.03, 4.0), cal("fb", 0.04, 9.0)]);
        let got = between(&b, &n, &key(), &table).unwrap().unwrap();
        let (va, vb) = (0.0009, 0.0016);
        assert!((got.component.variance - (va + vb)).abs() < 1e-15);
        let df = (va + vb) * (va + vb) / (va * va / 4.0 + vb * vb / 9.0);
        assert!((got.component.df - df).abs() < 1e-9);
        // Another configuration's calibration does not apply.
        let mut other = cal("fa", 0.03, 4.0);
        other.metric = "rate".into();
        assert_eq!(
            between(&b, &n, &key(), &CalibrationTable::new(&[other])).unwrap(),
            None
        );
    }

    #[test]
    fn calibrations_of_an_environment_are_pooled_by_degrees_of_freedom() {
        // Session SDs 0.5 (4 df) and 0.1 (12 df), within SDs 0.1 and 0.05:
        // mean square (4 0.25 + 12 0.01) / 16 = 0.07, within (4 0.01 + 12 0.0025) / 16 = 0.004375.
        let mut first = cal("fa", 0.5, 4.0);
        first.within_sd = 0.1;
        let mut second = cal("fa", 0.1, 12.0);
        second.within_sd = 0.05;
        let table = CalibrationTable::new(&[first, second, cal("fb", 0.2, 4.0)]);
        let got = table.get("fa", &key()).unwrap();
        assert_eq!(got.calibrations, 2);
        assert_eq!(got.df, 16.0);
        assert!((got.mean_square - 0.07).abs() < 1e-15, "{got:?}");
        assert!((got.within - 0.004375).abs() < 1e-15, "{got:?}");
        assert!((got.between_variance() - 0.065625).abs() < 1e-15);
        // Sessions that agree better than their runs predict give no negative variance.
        let mut quiet = cal("fc", 0.01, 4.0);
        quiet.within_sd = 0.02;
        let table = CalibrationTable::new(&[quiet]);
        assert_eq!(table.get("fc", &key()).unwrap().between_variance(), 0.0);
    }

    #[test]
    fn several_sessions_estimate_their_own_noise() {
        // Session medians e^0, e^0.1 on base and e^0.2 alone on new, each session constant
        // (no within-session variance): squares 0.005 over 1 df, tau^2 = 0.005, and the
        // log-ratio's share is tau^2 (1/2 + 1/1).
        let e = |x: f64| x.exp();
        let b = [sv("f", &[e(0.0); 3]), sv("f", &[e(0.1); 3])];
        let n = [sv("f", &[e(0.2); 3])];
        let table = CalibrationTable::new(&[cal("f", 1.0, 4.0)]);
        let got = between(&b, &n, &key(), &table).unwrap().unwrap();
        assert_eq!(got.source, NoiseSource::Sessions);
        assert!((got.component.variance - 0.005 * 1.5).abs() < 1e-12);
        assert_eq!(got.component.df, 1.0);
    }

    #[test]
    fn interval_is_widened_and_mdc_grows_with_it() {
        let plain = ratio_interval(0.0, -0.01, 0.01, None, 0.95, 0.02).unwrap();
        assert!((plain.low - (-0.01f64).exp()).abs() < 1e-15);
        assert!((plain.high - 0.01f64.exp()).abs() < 1e-15);
        // No noise beyond the runs: ln(1.02) + 0.01 + z_0.8 * 0.01 / 1.96.
        let z = 1.959_963_984_540_054;
        let want = (1.02f64.ln() + 0.01 + 0.841_621_233_572_914_3 * 0.01 / z).exp_m1();
        assert!((plain.mdc - want).abs() < 1e-12);
        let between = Between {
            source: NoiseSource::Calibration,
            component: Component {
                variance: 0.0004,
                df: 4.0,
            },
        };
        let wide = ratio_interval(0.0, -0.01, 0.01, Some(between), 0.95, 0.02).unwrap();
        assert!(wide.low < plain.low && wide.high > plain.high);
        assert!(wide.mdc > plain.mdc);
    }

    #[test]
    fn predicted_mdc_grows_with_the_noise_between_sessions() {
        let mut c = Calibration {
            id: Uuid::nil(),
            created_at_ns: 0,
            fingerprint: "f".into(),
            benchmark: "b".into(),
            options: Options::default(),
            metric: "m".into(),
            sessions: 5,
            runs: 50,
            session_sd: 0.01,
            within_sd: 0.01,
            between_sd: 0.0,
            df: 4.0,
            session_ids: Vec::new(),
        };
        let quiet = predicted_mdc(&c).unwrap_or(f64::NAN);
        // No noise between sessions: ln(1.02) + z sqrt(2) 0.01 + z_0.8 sqrt(2) 0.01.
        let se = 2f64.sqrt() * 0.01;
        let want =
            (1.02f64.ln() + 1.959_963_984_540_054 * se + 0.841_621_233_572_914_3 * se).exp_m1();
        assert!((quiet - want).abs() < 1e-12, "{quiet} {want}");
        c.between_sd = 0.02;
        assert!(predicted_mdc(&c).unwrap_or(0.0) > quiet);
    }
}
