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
use statrs::distribution::{ContinuousCDF, Normal};
use vernier_model::Calibration;
use vernier_stats::{
    between_session_variance, min_detectable_change, satterthwaite, widen, Component,
    SessionMedian, StatsError,
};

use crate::compare::{key_of, Key};

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

/// Stored calibrations by environment fingerprint and configuration.
#[derive(Debug, Default)]
pub(crate) struct CalibrationTable {
    by_key: HashMap<(String, Key), Calibration>,
}

impl CalibrationTable {
    /// The newest calibration of each fingerprint and configuration among `calibrations`.
    pub fn new(calibrations: &[Calibration]) -> Self {
        let mut by_key: HashMap<(String, Key), Calibration> = HashMap::new();
        for c in calibrations {
            let key = (
                c.fingerprint.clone(),
                key_of(&c.benchmark, &c.options, &c.metric),
            );
            match by_key.get(&key) {
                Some(old) if old.created_at_ns > c.created_at_ns => {}
                _ => {
                    by_key.insert(key, c.clone());
                }
            }
        }
        CalibrationTable { by_key }
    }

    fn get(&self, fingerprint: &str, key: &Key) -> Option<&Calibration> {
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
    let component = if cb.id == cn.id {
        // One estimate counted twice: its variance doubles, its degrees of freedom stay.
        Component {
            variance: 2.0 * cb.between_sd * cb.between_sd,
            df: cb.df,
        }
    } else {
        satterthwaite(&[
            Component {
                variance: cb.between_sd * cb.between_sd,
                df: cb.df,
            },
            Component {
                variance: cn.between_sd * cn.between_sd,
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
    let z = Normal::standard().inverse_cdf(0.5 + level / 2.0);
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
    fn newest_calibration_wins() {
        let mut old = cal("fa", 0.5, 4.0);
        old.created_at_ns = 0;
        let new = cal("fa", 0.01, 4.0);
        let table = CalibrationTable::new(&[new, old]);
        assert_eq!(table.get("fa", &key()).unwrap().between_sd, 0.01);
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
}
