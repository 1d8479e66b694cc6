//! Why runs stand out: the monitor keys whose per-run summary moves with the run's value, and
//! for each outlier run the keys in which it differs most from the typical run
//! (docs/why.md).
//!
//! For every monitor key (`stat.user_ns`, `pressure.cpu_some_avg10`, ...) recorded by at least
//! [`MIN_RUNS_ASSOCIATION`] measured runs, Spearman's rho of the key against the run's
//! slowness (its value, negated for a metric of which more is better) over the runs, with the
//! p-value of its permutation distribution (`vernier_stats::spearman_permutation`, seeded, so
//! the same data give the same p-values): the t approximation of `scipy.stats.spearmanr` names
//! a key in 10% of sessions of 8 runs without any association (docs/why.md). From
//! [`T_APPROXIMATION_RUNS`] runs on, where the two agree, the t approximation is used: a
//! permutation p-value small enough to pass would draw every one of its pairings, which at
//! hundreds of runs and keys costs seconds. The p-values of all the keys of a configuration
//! are adjusted by Benjamini-Hochberg, which
//! keeps the expected share of false associations among those reported at 5% (Benjamini &
//! Hochberg, JRSS B 57, 1995; valid for positively dependent tests, Benjamini & Yekutieli,
//! Ann. Statist. 29, 2001, which monitor keys that count the same activity are). A key is an
//! *explanation* only when its adjusted p-value is below [`EXPLANATION_P`], and it is one in
//! the statistical sense only: the key and the run's value moved together. Whatever made the
//! runs slow may have raised the key (more context switches because the runs took longer), or
//! a third thing may have done both.

use std::collections::BTreeMap;

use serde::Serialize;
use vernier_model::monitor::SeriesKind;
use vernier_model::{RunRecord, StoredConfiguration};
use vernier_stats::{
    benjamini_hochberg, classify_outliers, mad, median, spearman, spearman_permutation_until,
    TukeyClass,
};

use crate::summary::MIN_RUNS_OUTLIERS;

/// Fewest runs (with the key and a value) for a key's association to be tested: with fewer,
/// only |rho| near 1 reaches significance, and after the adjustment over the keys not even
/// that (docs/why.md).
pub const MIN_RUNS_ASSOCIATION: usize = 8;
/// Adjusted p-value below which a key's association is called an explanation.
pub const EXPLANATION_P: f64 = 0.05;
/// Keys listed for each outlier run: the ones that differ most from the typical run.
pub const OUTLIER_KEYS: usize = 5;
/// Pairings in the smaller tail after which a key's p-value is settled (large): Besag and
/// Clifford's sequential stop, which spares drawing every pairing for the keys that are not
/// associated (most of them).
const SEQUENTIAL_TAIL: usize = 20;
/// Runs (with the key and a value) from which a key's p-value is the t approximation's
/// instead of the permutation distribution's: without any association the two named a key in
/// as many simulated sessions from 40 runs on (docs/why.md, "False positives").
pub const T_APPROXIMATION_RUNS: usize = 100;
/// Seed of the pairings drawn for the permutation p-values.
const PERMUTATION_SEED: u64 = 26;

/// Pairings drawn for each key's p-value: at least 9,999, and enough that the smallest
/// p-value, `2 / (resamples + 1)`, stays below 0.005 after Benjamini-Hochberg multiplies it by
/// the number of keys (so a strong association is not capped near the 5% line).
fn resamples(keys: usize) -> usize {
    (400 * keys).max(10_000) - 1
}

/// The association of one monitor key with the runs' slowness, in a configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Association {
    pub key: String,
    /// The key's unit as its monitor recorded it (`ns`, `count`, `pct`, ...).
    pub unit: String,
    pub kind: SeriesKind,
    /// Runs that recorded the key and a value: the pairs rho is computed over.
    pub runs: usize,
    /// Spearman's rho of the key against slowness: positive when the key was higher in slower
    /// runs.
    pub rho: f64,
    /// Two-sided p-value of rho from its permutation distribution.
    pub p_value: f64,
    /// Benjamini-Hochberg adjusted over every key tested in the configuration.
    pub p_adjusted: f64,
    /// Whether the adjusted p-value is below [`EXPLANATION_P`].
    pub explains: bool,
    /// The key's median in the slow outlier runs over its median in the other runs; absent
    /// without slow outlier runs or when the other runs' median is 0.
    pub slow_ratio: Option<f64>,
    /// The key's median over the slow outlier runs and over the others, in `unit`.
    pub slow_median: Option<f64>,
    pub typical_median: Option<f64>,
}

/// Which way an outlier run stands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutlierSide {
    Slow,
    Fast,
}

/// A key in which an outlier run differs from the typical run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyDeviation {
    pub key: String,
    pub unit: String,
    /// The key's summary in the outlier run.
    pub value: f64,
    /// The key's median over the runs inside the outlier fences (the typical run).
    pub typical: f64,
    /// `value / typical`.
    pub ratio: f64,
    /// `|value - typical|` in median absolute deviations of the typical runs' values: what
    /// ranks the keys, so that a key that never moves counts more than a noisy one at the same
    /// ratio. Absent when those runs all had the same value (the run then stands out by any
    /// difference, and ranks first).
    pub deviations: Option<f64>,
}

impl KeyDeviation {
    fn score(&self) -> f64 {
        self.deviations.unwrap_or(f64::INFINITY)
    }
}

/// A run outside the Tukey fences of its configuration's values (the outlier rule of
/// `show`'s summary) and the keys in which it differs most from the typical run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutlierRun {
    /// The run's index among the measured runs (`RunRecord::index`).
    pub run: u32,
    pub value: f64,
    pub side: OutlierSide,
    /// At most [`OUTLIER_KEYS`], the largest departures first (in deviations of the typical
    /// runs, then by `|ln ratio|`); keys whose typical value is 0 have no ratio and are left
    /// out.
    pub keys: Vec<KeyDeviation>,
}

/// What the monitors say about a configuration's slow runs. In `show --format json` as
/// `slow_runs` (docs/json.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlowRuns {
    /// Measured runs with a value and monitor summaries.
    pub runs: usize,
    /// Keys whose association was tested (recorded by enough runs, not constant).
    pub keys_tested: usize,
    /// Every key tested, explanations first, then by adjusted p-value and |rho|.
    pub associations: Vec<Association>,
    /// The measured runs flagged slow by the outlier rule, by index.
    pub slow_runs: Vec<u32>,
    /// Every outlier run, slow or fast, in run order.
    pub outlier_runs: Vec<OutlierRun>,
}

impl SlowRuns {
    /// The associations called explanations (adjusted p below [`EXPLANATION_P`]).
    pub fn explanations(&self) -> impl Iterator<Item = &Association> {
        self.associations.iter().filter(|a| a.explains)
    }
}

/// The measured runs with a value of the primary metric and monitor summaries, in run order.
fn monitored_runs(config: &StoredConfiguration) -> Vec<(&RunRecord, f64)> {
    let metric = &config.record.metric.name;
    config
        .runs
        .iter()
        .filter(|r| !r.warmup)
        .filter(|r| r.monitors.as_ref().is_some_and(|m| !m.summary.is_empty()))
        .filter_map(|r| Some((r, *r.values.get(metric)?)))
        .collect()
}

/// Each key's unit and kind, from the first series that recorded it.
fn units(runs: &[(&RunRecord, f64)]) -> BTreeMap<String, (String, SeriesKind)> {
    let mut units = BTreeMap::new();
    for s in runs
        .iter()
        .filter_map(|(r, _)| r.monitors.as_ref())
        .flat_map(|m| &m.series)
    {
        units
            .entry(s.key())
            .or_insert_with(|| (s.unit.clone(), s.kind));
    }
    units
}

/// The slow-run explanation of a configuration; `None` without monitor data on at least
/// [`MIN_RUNS_ASSOCIATION`] measured runs.
pub fn slow_runs(config: &StoredConfiguration) -> Option<SlowRuns> {
    let runs = monitored_runs(config);
    if runs.len() < MIN_RUNS_ASSOCIATION {
        return None;
    }
    let higher_is_better = config.record.metric.higher_is_better;
    // Slowness: larger is slower.
    let slowness = |v: f64| if higher_is_better { -v } else { v };
    let units = units(&runs);
    let values: Vec<f64> = runs.iter().map(|&(_, v)| v).collect();
    let classes: Vec<TukeyClass> = if values.len() >= MIN_RUNS_OUTLIERS {
        classify_outliers(&values)
            .map(|c| c.iter().map(|c| c.tukey).collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let side_of = |i: usize| -> Option<OutlierSide> {
        let class = classes.get(i).copied().filter(|c| c.is_outlier())?;
        let high = matches!(class, TukeyClass::HighMild | TukeyClass::HighSevere);
        Some(if high != higher_is_better {
            OutlierSide::Slow
        } else {
            OutlierSide::Fast
        })
    };
    let is_outlier: Vec<bool> = (0..runs.len()).map(|i| side_of(i).is_some()).collect();
    let is_slow: Vec<bool> = (0..runs.len())
        .map(|i| side_of(i) == Some(OutlierSide::Slow))
        .collect();

    // The values of each key, by position among `runs`.
    let mut by_key: BTreeMap<&str, Vec<(usize, f64)>> = BTreeMap::new();
    for (i, (r, _)) in runs.iter().enumerate() {
        if let Some(m) = &r.monitors {
            for (k, v) in &m.summary {
                if v.is_finite() {
                    by_key.entry(k).or_default().push((i, *v));
                }
            }
        }
    }
    let mut associations = Vec::new();
    let mut ps = Vec::new();
    // Keys that vary, on enough runs: those the adjustment counts.
    let candidates = by_key
        .values()
        .filter(|pairs| pairs.len() >= MIN_RUNS_ASSOCIATION)
        .filter(|pairs| pairs.iter().any(|&(_, v)| v != pairs[0].1))
        .count();
    let resamples = resamples(candidates);
    for (key, pairs) in &by_key {
        if pairs.len() < MIN_RUNS_ASSOCIATION {
            continue;
        }
        let xs: Vec<f64> = pairs.iter().map(|&(_, v)| v).collect();
        let ys: Vec<f64> = pairs.iter().map(|&(i, _)| slowness(values[i])).collect();
        // A constant key (or constant values) has no ranks: nothing to associate.
        let tested = if pairs.len() >= T_APPROXIMATION_RUNS {
            spearman(&xs, &ys)
        } else {
            spearman_permutation_until(&xs, &ys, resamples, SEQUENTIAL_TAIL, PERMUTATION_SEED)
        };
        let Ok(s) = tested else {
            continue;
        };
        let part = |slow: bool| -> Option<f64> {
            let v: Vec<f64> = pairs
                .iter()
                .filter(|&&(i, _)| is_slow[i] == slow && (slow || !is_outlier[i]))
                .map(|&(_, v)| v)
                .collect();
            median(&v).ok()
        };
        let (slow_median, typical_median) = match is_slow.iter().any(|&s| s) {
            true => (part(true), part(false)),
            false => (None, None),
        };
        let slow_ratio = match (slow_median, typical_median) {
            (Some(s), Some(t)) if t != 0.0 => Some(s / t),
            _ => None,
        };
        let (unit, kind) = units
            .get(*key)
            .cloned()
            .unwrap_or_else(|| (String::new(), SeriesKind::Gauge));
        ps.push(s.p);
        associations.push(Association {
            key: (*key).to_string(),
            unit,
            kind,
            runs: pairs.len(),
            rho: s.rho,
            p_value: s.p,
            p_adjusted: s.p,
            explains: false,
            slow_ratio,
            slow_median,
            typical_median,
        });
    }
    if let Ok(adjusted) = benjamini_hochberg(&ps) {
        for (a, p) in associations.iter_mut().zip(adjusted) {
            a.p_adjusted = p;
            a.explains = p < EXPLANATION_P;
        }
    }
    associations.sort_by(|a, b| {
        b.explains
            .cmp(&a.explains)
            .then(a.p_adjusted.total_cmp(&b.p_adjusted))
            .then(b.rho.abs().total_cmp(&a.rho.abs()))
            .then(a.key.cmp(&b.key))
    });

    let outlier_runs = (0..runs.len())
        .filter_map(|i| {
            let side = side_of(i)?;
            let (run, value) = runs[i];
            let mut keys: Vec<KeyDeviation> = by_key
                .iter()
                .filter_map(|(key, pairs)| {
                    let &(_, v) = pairs.iter().find(|&&(j, _)| j == i)?;
                    let inside: Vec<f64> = pairs
                        .iter()
                        .filter(|&&(j, _)| !is_outlier[j])
                        .map(|&(_, v)| v)
                        .collect();
                    let typical = median(&inside).ok().filter(|t| *t != 0.0)?;
                    let ratio = v / typical;
                    let spread = mad(&inside).ok()?;
                    let deviations = (spread > 0.0).then(|| (v - typical).abs() / spread);
                    // Departures in both directions count alike; a sign change (a gauge
                    // below zero) is no ratio to rank.
                    (ratio > 0.0 && ratio != 1.0).then(|| KeyDeviation {
                        key: (*key).to_string(),
                        unit: units.get(*key).map(|u| u.0.clone()).unwrap_or_default(),
                        value: v,
                        typical,
                        ratio,
                        deviations,
                    })
                })
                .collect();
            keys.sort_by(|a, b| {
                b.score()
                    .total_cmp(&a.score())
                    .then(b.ratio.ln().abs().total_cmp(&a.ratio.ln().abs()))
                    .then(a.key.cmp(&b.key))
            });
            keys.truncate(OUTLIER_KEYS);
            Some(OutlierRun {
                run: run.index,
                value,
                side,
                keys,
            })
        })
        .collect();
    Some(SlowRuns {
        runs: runs.len(),
        keys_tested: associations.len(),
        associations,
        slow_runs: (0..runs.len())
            .filter(|&i| is_slow[i])
            .map(|i| runs[i].0.index)
            .collect(),
        outlier_runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_testkit::monitored_configuration;
    use SeriesKind::{Counter, Gauge};

    /// Sixteen runs, runs 3, 9 and 14 slow (value 2 against about 1), their `stat.user_ns`
    /// high; `noise` a fixed unrelated sequence; `constant` the same in every run.
    fn loaded() -> StoredConfiguration {
        const SLOW: [usize; 3] = [3, 9, 14];
        let noise = [
            5., 3., 8., 1., 9., 2., 7., 4., 6., 5., 3., 8., 2., 9., 1., 7.,
        ];
        let runs: Vec<Vec<_>> = (0..16)
            .map(|i| {
                let user = if SLOW.contains(&i) {
                    4e8
                } else {
                    1e8 + i as f64
                };
                vec![
                    ("stat", "user_ns", Counter, user),
                    ("stat", "noise", Gauge, noise[i]),
                    ("stat", "constant", Gauge, 3.0),
                ]
            })
            .collect();
        let mut c = monitored_configuration(&runs);
        for (i, run) in c.runs.iter_mut().enumerate() {
            let v = if SLOW.contains(&i) {
                2.0
            } else {
                1.0 + i as f64 / 1000.0
            };
            run.values.insert("time", v);
        }
        c
    }

    #[test]
    fn the_key_that_moves_with_slow_runs_explains_them() {
        let why = slow_runs(&loaded()).unwrap();
        assert_eq!((why.runs, why.keys_tested), (16, 2));
        assert_eq!(why.slow_runs, [3, 9, 14]);
        let top = &why.associations[0];
        assert_eq!(top.key, "stat.user_ns");
        assert!(
            top.explains && top.rho > 0.9 && top.p_adjusted < 1e-3,
            "{top:?}"
        );
        let ratio = top.slow_ratio.unwrap();
        assert!((ratio - 4.0).abs() < 0.01, "{ratio}");
        let noise = &why.associations[1];
        assert_eq!(noise.key, "stat.noise");
        assert!(!noise.explains, "{noise:?}");
        assert_eq!(why.explanations().count(), 1);
        // Each slow run names the key it differs in most.
        let outliers: Vec<(u32, OutlierSide, &str)> = why
            .outlier_runs
            .iter()
            .map(|o| (o.run, o.side, o.keys[0].key.as_str()))
            .collect();
        assert_eq!(
            outliers,
            [3, 9, 14].map(|r| (r, OutlierSide::Slow, "stat.user_ns"))
        );
        assert!((why.outlier_runs[0].keys[0].ratio - 4.0).abs() < 0.01);
    }

    #[test]
    fn slow_is_low_for_a_rate() {
        let mut c = loaded();
        c.record.metric.higher_is_better = true;
        for run in &mut c.runs {
            let v = run.values.get("time").copied().unwrap();
            run.values.insert("time", 1.0 / v);
        }
        let why = slow_runs(&c).unwrap();
        assert_eq!(why.slow_runs, [3, 9, 14]);
        assert!(why.associations[0].rho > 0.9);
    }

    #[test]
    fn too_few_runs_or_no_monitors_say_nothing() {
        let mut c = loaded();
        c.runs.truncate(MIN_RUNS_ASSOCIATION - 1);
        assert!(slow_runs(&c).is_none());
        let mut c = loaded();
        for run in &mut c.runs {
            run.monitors = None;
        }
        assert!(slow_runs(&c).is_none());
    }
}
