//! The interval of a comparison's ratio and its uncertainty between sessions (docs/compare.md,
//! "Sessions and session-to-session noise").
//!
//! Whole sessions shift (a different page layout, another boot, a neighbour on the host): the
//! runs of one session cannot show that it sits higher or lower than the next one would. Run
//! `j` of session `i` is modelled on the log scale as `mu + b_i + e_ij`, `b_i ~ (0, tau^2)`,
//! and the interval of `ln(NEW/BASE)` the verdict uses is built by the layout:
//!
//! - **several sessions** (the sides together hold at least three): the session is the
//!   replication unit. The estimate is the difference of the mean session log-medians, its
//!   variance the pooled mean square of the session medians (which holds `tau^2` and the
//!   medians' own noise, whatever their ratio) times `1/k_base + 1/k_new`, with
//!   `k_base + k_new - 2` degrees of freedom: Student's t interval on the session medians.
//!   A stored calibration of the sides' environments (`vernier calibrate`) adds its mean
//!   square and its degrees of freedom (`NoiseSource::Pooled`), so that three sessions that
//!   happen to agree do not hide what the calibration measured. The mean square and the
//!   within part were once subtracted and the difference truncated at zero, which left the
//!   runs' interval whenever it came out at zero and covered 81-87% with 1 vs 2 sessions
//!   (bench/session-coverage.sh);
//! - **one session a side**: the runs' interval (Hodges-Lehmann / Moses) for the part within
//!   sessions, widened by the variance of two session effects ([`vernier_stats::widen`]):
//!   from the calibrations of the sides' environments, with Satterthwaite's degrees of freedom
//!   from the uncertainty of their mean squares (`NoiseSource::Calibration`), or, without a
//!   calibration, [`DEFAULT_SESSION_NOISE`] taken as known (`NoiseSource::Default`) rather than
//!   none, which gave 51% false verdicts at a session noise of 3%.
//!
//! Values rounded to a coarse grid (ties) move each end of the interval out by the most that
//! rounding can move the ratio ([`rounding_margin`]).

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use vernier_model::{Calibration, ConfigKey, CONFIDENCE_LEVEL};
use vernier_stats::{
    between_session_variance, mean, min_detectable_change, normal_quantile, satterthwaite,
    t_quantile, widen, Component, SessionMedian, StatsError,
};

use crate::compare::{Key, DEFAULT_THRESHOLD};

/// Power at which the minimum detectable change is stated.
pub const MDC_POWER: f64 = 0.8;

/// The session-to-session noise (standard deviation of a session's log effect, 0.05 is about
/// 5%) assumed for one session a side when no calibration of either environment exists
/// (docs/compare.md says why this value): a verdict between two sessions that assumed none
/// was wrong in 51% of A/A comparisons at a session noise of 3% (bench/session-coverage.sh);
/// with this it is wrong in at most 3% up to a session noise of 5%, within the 5% the verdicts
/// promise without a calibration.
pub const DEFAULT_SESSION_NOISE: f64 = 0.05;

/// Where the between-session part of an interval comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NoiseSource {
    /// The sessions of the two sides (at least three in all) and nothing else.
    Sessions,
    /// The sessions of the two sides pooled with the stored calibration of their environments.
    Pooled,
    /// One session a side: the stored calibration of the sides' environments.
    Calibration,
    /// One session a side without a calibration: [`DEFAULT_SESSION_NOISE`].
    Default,
}

impl NoiseSource {
    /// The name in the JSON and CSV forms.
    pub fn as_str(self) -> &'static str {
        match self {
            NoiseSource::Sessions => "sessions",
            NoiseSource::Pooled => "pooled",
            NoiseSource::Calibration => "calibration",
            NoiseSource::Default => "default",
        }
    }
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
    /// Measured runs per calibration session, weighted like the mean squares.
    pub runs_per_session: f64,
}

impl PooledCalibration {
    const EMPTY: PooledCalibration = PooledCalibration {
        calibrations: 0,
        mean_square: 0.0,
        within: 0.0,
        df: 0.0,
        runs_per_session: 0.0,
    };

    /// Every calibration among `calibrations` with degrees of freedom, pooled as one (the
    /// caller chose those of one environment and configuration); `None` when none has any.
    pub fn of(calibrations: &[Calibration]) -> Option<Self> {
        let mut pooled = PooledCalibration::EMPTY;
        for c in calibrations.iter().filter(|c| c.df > 0.0) {
            pooled.add(c);
        }
        (pooled.calibrations > 0).then_some(pooled)
    }

    /// Pools calibration `c` (with positive degrees of freedom) into this one.
    fn add(&mut self, c: &Calibration) {
        let df = self.df + c.df;
        let runs = f64::from(c.runs) / f64::from(c.sessions.max(1));
        self.mean_square = (self.mean_square * self.df + c.session_sd * c.session_sd * c.df) / df;
        self.within = (self.within * self.df + c.within_sd * c.within_sd * c.df) / df;
        self.runs_per_session = (self.runs_per_session * self.df + runs * c.df) / df;
        self.df = df;
        self.calibrations += 1;
    }

    /// The session-to-session variance `tau^2 = max(0, mean_square - within)`.
    pub fn between_variance(&self) -> f64 {
        (self.mean_square - self.within).max(0.0)
    }

    /// `tau^2` as a [`Component`] of the variance of a log-ratio, counted `scale` times, with
    /// the uncertainty of the mean square it comes from ([`Component::from_mean_square`]).
    fn component(&self, scale: f64) -> Component {
        Component::from_mean_square(
            scale * self.between_variance(),
            scale,
            self.mean_square,
            self.df,
        )
    }

    /// The mean square this calibration's sessions would have had with `runs` runs each, the
    /// scale of the session medians of a comparison: the within part of a median's variance
    /// falls as one over the runs (`v(n) ~ 1/n`), `tau^2` stays. Never below the mean square
    /// scaled as if it were all within part, so that an estimate of `tau^2` below zero cannot
    /// make it negative.
    pub(crate) fn mean_square_at(&self, runs: f64) -> f64 {
        let ratio = self.runs_per_session / runs;
        let shifted = self.mean_square - self.within + self.within * ratio;
        shifted.max(self.mean_square * ratio.min(1.0))
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
                (ConfigKey::new(&c.benchmark, &c.options), c.metric.clone()),
            );
            by_key.entry(key).or_insert(PooledCalibration::EMPTY).add(c);
        }
        CalibrationTable { by_key }
    }

    fn get(&self, fingerprint: &str, key: &Key) -> Option<&PooledCalibration> {
        self.by_key.get(&(fingerprint.to_string(), key.clone()))
    }
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

/// The runs' interval of `ln(NEW/BASE)`: the Hodges-Lehmann shift inside Moses' interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RunsInterval {
    pub shift: f64,
    pub low: f64,
    pub high: f64,
}

/// The interval of the ratio a verdict uses, with what it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RatioInterval {
    /// The estimate of `ln(NEW/BASE)` the interval is built around.
    pub estimate: f64,
    /// The interval of the ratio NEW/BASE.
    pub low: f64,
    pub high: f64,
    /// Degrees of freedom of the t quantile (of its wider half); infinite: the normal's.
    pub df: f64,
    pub source: NoiseSource,
    /// Standard deviation of the between-session part of `ln(NEW/BASE)`.
    pub session_noise: f64,
    /// Smallest relative change reported as beyond the threshold with [`MDC_POWER`].
    pub mdc: f64,
}

/// How far each end of an interval moves out for values rounded to a grid of `step`: each
/// value lies within half a step of what was measured, so its logarithm within
/// `-ln(1 - step / (2 smallest))` (the most for the smallest value), and the interval grows by
/// twice that, one rounding step. The worst case of a difference of two values is twice as
/// much, but their rounding errors partly cancel: measured (bench/session-coverage.sh, table
/// `ties`), the runs' interval covered the true ratio in 87-93% of cases on a grid of 2-5%,
/// moved out by this in 98.7-100%, by the worst case in 99.7-100%. Infinite when half a step
/// reaches the smallest value.
pub(crate) fn rounding_margin(step: f64, smallest: f64) -> f64 {
    let half = step / (2.0 * smallest);
    if half >= 1.0 {
        f64::INFINITY
    } else {
        -(-half).ln_1p()
    }
}

/// The interval of `ln(NEW/BASE)` for these sides (docs/compare.md): the sessions' t interval
/// when the sides hold three sessions or more, else the runs' interval widened by the
/// session noise of a calibration or the default; each end moved out by `margin` (rounding,
/// [`rounding_margin`]). `None` when the sessions leave it without width (every session median
/// of a side equal).
#[allow(clippy::too_many_arguments)]
pub(crate) fn ratio_interval(
    base: &[SessionValues],
    new: &[SessionValues],
    key: &Key,
    table: &CalibrationTable,
    runs: RunsInterval,
    level: f64,
    threshold: f64,
    margin: f64,
) -> Result<Option<RatioInterval>, StatsError> {
    if base.is_empty() || new.is_empty() {
        return Ok(None);
    }
    // A verdict needs the interval beyond ln(1 + threshold) + margin.
    let effective_threshold = ((1.0 + threshold).ln() + margin).exp_m1();
    let mdc = |se: f64, df: f64| {
        if effective_threshold < 1.0 {
            min_detectable_change(effective_threshold, se, df.max(1.0), level, MDC_POWER)
        } else {
            Ok(f64::INFINITY)
        }
    };
    if base.len() + new.len() >= 3 {
        let (b, n) = (medians(base)?, medians(new)?);
        let own = between_session_variance(&[&b, &n])?;
        let runs_per_session = base
            .iter()
            .chain(new)
            .map(|s| s.values.len() as f64)
            .sum::<f64>()
            / (base.len() + new.len()) as f64;
        // Every calibration of the sides' environments, each once.
        let fingerprints: BTreeSet<&str> = base
            .iter()
            .chain(new)
            .map(|s| s.fingerprint.as_str())
            .collect();
        let calibrations: Vec<&PooledCalibration> = fingerprints
            .iter()
            .filter_map(|f| table.get(f, key))
            .collect();
        let (mut squares, mut df) = (own.mean_square * own.df, own.df);
        for c in &calibrations {
            squares += c.mean_square_at(runs_per_session) * c.df;
            df += c.df;
        }
        let mean_square = squares / df;
        let factor = 1.0 / base.len() as f64 + 1.0 / new.len() as f64;
        let se = (mean_square * factor).sqrt();
        if se == 0.0 {
            return Ok(None);
        }
        let median_of = |s: &[SessionMedian]| -> Result<f64, StatsError> {
            mean(&s.iter().map(|m| m.median).collect::<Vec<_>>())
        };
        let estimate = median_of(&n)? - median_of(&b)?;
        let half = t_quantile(0.5 + level / 2.0, df)? * se + margin;
        return Ok(Some(RatioInterval {
            estimate,
            low: (estimate - half).exp(),
            high: (estimate + half).exp(),
            df,
            source: if calibrations.is_empty() {
                NoiseSource::Sessions
            } else {
                NoiseSource::Pooled
            },
            session_noise: ((mean_square - own.within).max(0.0) * factor).sqrt(),
            mdc: mdc(se, df)?,
        }));
    }
    let (fb, fn_) = (&base[0].fingerprint, &new[0].fingerprint);
    let own_b = table.get(fb, key);
    let own_n = table.get(fn_, key);
    let (source, between) = match (own_b.or(own_n), own_n.or(own_b)) {
        (Some(cb), Some(cn)) if fb != fn_ && own_b.is_some() && own_n.is_some() => (
            NoiseSource::Calibration,
            satterthwaite(&[cb.component(1.0), cn.component(1.0)])?,
        ),
        // One calibration counted for both sides: its variance twice, its uncertainty too.
        (Some(c), _) => (NoiseSource::Calibration, c.component(2.0)),
        _ => (
            NoiseSource::Default,
            Component::known(2.0 * DEFAULT_SESSION_NOISE * DEFAULT_SESSION_NOISE),
        ),
    };
    // The Hodges-Lehmann estimate lies inside Moses' interval; clamp against rounding.
    let center = runs.shift.clamp(runs.low, runs.high);
    let w = widen(center, runs.low, runs.high, level, between)?;
    // The wider half decides what can be detected in both directions.
    let (se, df) = if w.high - center >= center - w.low {
        (w.se_high, w.df_high)
    } else {
        (w.se_low, w.df_low)
    };
    Ok(Some(RatioInterval {
        estimate: center,
        low: (w.low - margin).exp(),
        high: (w.high + margin).exp(),
        df,
        source,
        session_noise: between.variance.sqrt(),
        mdc: mdc(se, df)?,
    }))
}

/// The minimum detectable change of a comparison of one session a side in the environment and
/// configuration of calibration `c`, at the default threshold and level: the runs' part from
/// the within-session variance of two session medians, widened by twice the between-session
/// variance with the uncertainty of the calibration's mean square, as [`ratio_interval`] does.
/// `vernier calibrate` shows it for each configuration it calibrated.
pub fn predicted_mdc(c: &Calibration) -> Option<f64> {
    let z = normal_quantile(0.5 + CONFIDENCE_LEVEL / 2.0).ok()?;
    let runs_half = z * (2.0 * c.within_sd * c.within_sd).sqrt();
    let pooled = PooledCalibration {
        calibrations: 1,
        mean_square: c.session_sd * c.session_sd,
        within: c.within_sd * c.within_sd,
        df: c.df,
        runs_per_session: f64::from(c.runs) / f64::from(c.sessions.max(1)),
    };
    if pooled.df.is_nan() || pooled.df <= 0.0 {
        return None;
    }
    let w = widen(
        0.0,
        -runs_half,
        runs_half,
        CONFIDENCE_LEVEL,
        pooled.component(2.0),
    )
    .ok()?;
    min_detectable_change(
        DEFAULT_THRESHOLD,
        w.se_high,
        w.df_high.max(1.0),
        CONFIDENCE_LEVEL,
        MDC_POWER,
    )
    .ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use uuid::Uuid;
    use vernier_model::Options;

    fn key() -> Key {
        (
            ConfigKey::new("bench", &Options::default()),
            "time".to_string(),
        )
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

    const RUNS: RunsInterval = RunsInterval {
        shift: 0.0,
        low: -0.01,
        high: 0.01,
    };

    fn interval(
        b: &[SessionValues],
        n: &[SessionValues],
        table: &CalibrationTable,
    ) -> RatioInterval {
        ratio_interval(b, n, &key(), table, RUNS, 0.95, 0.02, 0.0)
            .unwrap()
            .unwrap()
    }

    #[test]
    fn one_session_a_side_uses_the_calibration_of_each_environment_or_the_default() {
        let b = [sv("fa", &[1.0, 1.1])];
        let n = [sv("fb", &[1.0, 1.1])];
        // Neither calibrated: the default session noise, taken as known.
        let got = interval(&b, &n, &CalibrationTable::default());
        assert_eq!(got.source, NoiseSource::Default);
        assert!((got.session_noise - DEFAULT_SESSION_NOISE * 2f64.sqrt()).abs() < 1e-15);
        assert_eq!(got.df, f64::INFINITY);
        // One environment calibrated: both sides borrow it, variance 2 tau^2.
        let table = CalibrationTable::new(&[cal("fa", 0.03, 4.0)]);
        let got = interval(&b, &n, &table);
        assert_eq!(got.source, NoiseSource::Calibration);
        assert!((got.session_noise.powi(2) - 2.0 * 0.0009).abs() < 1e-15);
        // Both calibrated: tau_a^2 + tau_b^2.
        let table = CalibrationTable::new(&[cal("fa", 0.03, 4.0), cal("fb", 0.04, 9.0)]);
        let got = interval(&b, &n, &table);
        assert!((got.session_noise.powi(2) - (0.0009 + 0.0016)).abs() < 1e-15);
        // Satterthwaite's degrees of freedom of the wider half: the runs' part known, each
        // calibration's uncertainty that of its mean square (here all between part).
        let se2 = (0.01f64 / 1.959_963_984_540_054).powi(2);
        let total = se2 + 0.0009 + 0.0016;
        let sampling = 2.0 * 0.0009f64.powi(2) / 4.0 + 2.0 * 0.0016f64.powi(2) / 9.0;
        assert!(
            (got.df - 2.0 * total * total / sampling).abs() < 1e-9,
            "{}",
            got.df
        );
        // Another configuration's calibration does not apply.
        let mut other = cal("fa", 0.03, 4.0);
        other.metric = "rate".into();
        let got = interval(&b, &n, &CalibrationTable::new(&[other]));
        assert_eq!(got.source, NoiseSource::Default);
    }

    #[test]
    fn calibrations_of_an_environment_are_pooled_by_degrees_of_freedom() {
        // Session SDs 0.5 (4 df) and 0.1 (12 df), within SDs 0.1 and 0.05:
        // mean square (4 0.25 + 12 0.01) / 16 = 0.07, within (4 0.01 + 12 0.0025) / 16 = 0.004375.
        let mut first = cal("fa", 0.5, 4.0);
        first.within_sd = 0.1;
        let mut second = cal("fa", 0.1, 12.0);
        second.within_sd = 0.05;
        second.runs = 100;
        let table = CalibrationTable::new(&[first, second, cal("fb", 0.2, 4.0)]);
        let got = table.get("fa", &key()).unwrap();
        assert_eq!(got.calibrations, 2);
        assert_eq!(got.df, 16.0);
        assert!((got.mean_square - 0.07).abs() < 1e-15, "{got:?}");
        assert!((got.within - 0.004375).abs() < 1e-15, "{got:?}");
        assert!((got.between_variance() - 0.065625).abs() < 1e-15);
        // 10 and 20 runs a session, weighted 4 and 12.
        assert!((got.runs_per_session - 17.5).abs() < 1e-12);
        // Sessions that agree better than their runs predict give no negative variance.
        let mut quiet = cal("fc", 0.01, 4.0);
        quiet.within_sd = 0.02;
        let table = CalibrationTable::new(&[quiet]);
        assert_eq!(table.get("fc", &key()).unwrap().between_variance(), 0.0);
    }

    #[test]
    fn a_calibrations_mean_square_follows_the_runs_of_the_sessions_compared() {
        let p = PooledCalibration {
            calibrations: 1,
            mean_square: 0.05,
            within: 0.01,
            df: 4.0,
            runs_per_session: 10.0,
        };
        // Same runs: unchanged. Twice the runs: the within part halves.
        assert_eq!(p.mean_square_at(10.0), 0.05);
        assert!((p.mean_square_at(20.0) - 0.045).abs() < 1e-15);
        // A calibration whose within part exceeded its mean square never turns negative.
        let q = PooledCalibration {
            mean_square: 0.005,
            ..p
        };
        assert!((q.mean_square_at(40.0) - 0.005 / 4.0).abs() < 1e-15);
    }

    #[test]
    fn several_sessions_are_the_replication_unit() {
        // Session log-medians 0 and 0.1 on base, 0.2 alone on new, each session constant:
        // estimate 0.2 - 0.05 = 0.15; mean square 0.005 over 1 df; se^2 = 0.005 (1/2 + 1).
        let e = |x: f64| x.exp();
        let b = [sv("f", &[e(0.0); 3]), sv("f", &[e(0.1); 3])];
        let n = [sv("f", &[e(0.2); 3])];
        let got = interval(&b, &n, &CalibrationTable::default());
        assert_eq!(got.source, NoiseSource::Sessions);
        assert!((got.estimate - 0.15).abs() < 1e-12);
        assert_eq!(got.df, 1.0);
        let half = 12.706_204_736_174_7 * (0.005f64 * 1.5).sqrt();
        assert!((got.high.ln() - (0.15 + half)).abs() < 1e-9, "{got:?}");
        assert!((got.low.ln() - (0.15 - half)).abs() < 1e-9, "{got:?}");
        assert!((got.session_noise.powi(2) - 0.005 * 1.5).abs() < 1e-12);
        // Every median of each side equal: no width, no interval.
        let same = [sv("f", &[e(0.0); 3]), sv("f", &[e(0.0); 3])];
        let none = ratio_interval(
            &same,
            &n,
            &key(),
            &CalibrationTable::default(),
            RUNS,
            0.95,
            0.02,
            0.0,
        );
        assert_eq!(none.unwrap(), None);
    }

    #[test]
    fn a_calibration_pools_with_sessions_that_happen_to_agree() {
        // Three sessions a side that agree to 1e-4, and a calibration of this environment that
        // measured a session SD of 6.7% with 7 df (the case of the issue: the sessions' own
        // estimate near 0 made the interval the runs' alone).
        let e = |x: f64| x.exp();
        let b: Vec<SessionValues> = [0.0, 1e-4, -1e-4]
            .iter()
            .map(|x| sv("f", &[e(*x); 10]))
            .collect();
        let n: Vec<SessionValues> = [0.05, 0.0501, 0.0499]
            .iter()
            .map(|x| sv("f", &[e(*x); 10]))
            .collect();
        let own = interval(&b, &n, &CalibrationTable::default());
        let mut c = cal("f", 0.067, 7.0);
        c.runs = 10 * 5;
        let pooled = interval(&b, &n, &CalibrationTable::new(&[c]));
        assert_eq!(pooled.source, NoiseSource::Pooled);
        assert_eq!(pooled.df, 4.0 + 7.0);
        // Pooled mean square (4 * 1e-8 + 7 * 0.067^2) / 11, times 1/3 + 1/3.
        let se = ((4.0 * 1e-8 + 7.0 * 0.067f64.powi(2)) / 11.0 * (2.0 / 3.0)).sqrt();
        let half = t_quantile(0.975, 11.0).unwrap() * se;
        assert!((pooled.high.ln() - pooled.estimate - half).abs() < 1e-12);
        assert!(pooled.low < 1.0 && own.low > 1.04, "{own:?} {pooled:?}");
    }

    #[test]
    fn rounding_moves_the_ends_out_by_what_it_can_move_the_ratio() {
        // A step of 0.1 at a smallest value of 1: each value within 0.05, its log within
        // -ln(0.95); each end moves out by that, the interval by one step.
        let m = rounding_margin(0.1, 1.0);
        assert!((m + 0.95f64.ln()).abs() < 1e-15);
        assert_eq!(rounding_margin(2.0, 1.0), f64::INFINITY);
        let b = [sv("fa", &[1.0, 1.1])];
        let n = [sv("fb", &[1.0, 1.1])];
        let table = CalibrationTable::new(&[cal("fa", 0.0, 4.0)]);
        let plain = ratio_interval(&b, &n, &key(), &table, RUNS, 0.95, 0.02, 0.0)
            .unwrap()
            .unwrap();
        let moved = ratio_interval(&b, &n, &key(), &table, RUNS, 0.95, 0.02, m)
            .unwrap()
            .unwrap();
        assert!((moved.high.ln() - plain.high.ln() - m).abs() < 1e-15);
        assert!((plain.low.ln() - moved.low.ln() - m).abs() < 1e-15);
        assert!(moved.mdc > plain.mdc);
    }

    #[test]
    fn the_mdc_grows_with_the_session_noise() {
        let b = [sv("fa", &[1.0, 1.1])];
        let n = [sv("fb", &[1.0, 1.1])];
        let quiet = interval(&b, &n, &CalibrationTable::new(&[cal("fa", 0.001, 40.0)]));
        let noisy = interval(&b, &n, &CalibrationTable::new(&[cal("fa", 0.02, 40.0)]));
        assert!(noisy.mdc > quiet.mdc && noisy.high > quiet.high);
        // The default's MDC with the normal quantiles: ln(1.02) + (z_0.975 + z_0.8) se.
        let d = interval(&b, &n, &CalibrationTable::default());
        let se = ((0.01f64 / 1.959_963_984_540_054).powi(2) + 2.0 * 0.0025).sqrt();
        let want = (1.02f64.ln() + (1.959_963_984_540_054 + 0.841_621_233_572_914_3) * se).exp_m1();
        assert!((d.mdc - want).abs() < 1e-12, "{} {want}", d.mdc);
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
        // No noise between sessions, but an uncertain one: more than the known-zero figure
        // ln(1.02) + (z_0.975 + z_0.8) sqrt(2) 0.01.
        let known = (1.02f64.ln() + 2.801_585_218_112_968 * 2f64.sqrt() * 0.01).exp_m1();
        assert!(quiet > known, "{quiet} {known}");
        c.between_sd = 0.02;
        c.session_sd = (0.0004f64 + 0.0001).sqrt();
        assert!(predicted_mdc(&c).unwrap_or(0.0) > quiet);
    }
}
