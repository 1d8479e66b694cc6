//! Matching configurations of two result sets, comparing each and summarizing the suite.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use crate::summary::{contaminated, distribution_checks};
use serde::Serialize;
use vernier_model::{Calibration, ConfigKey, Options, StoredSession, CONFIDENCE_LEVEL};
use vernier_stats::hodges_lehmann::enough_arrangements;
use vernier_stats::{
    benjamini_hochberg, geomean_ratio_ci, hodges_lehmann, mann_whitney_u, median, median_ci,
    normal_quantile, resolution, welch_t_test,
};

use crate::session_noise::{
    self, rounding_margin, CalibrationTable, NoiseSource, RunsInterval, SessionValues,
};
use crate::warnings::{Warning, Warnings};
use crate::AnalysisError;

/// Default practical threshold: changes within 2% either way count as equivalent.
pub const DEFAULT_THRESHOLD: f64 = 0.02;

/// How to compare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareSettings {
    /// Relative change below which a difference does not matter (0.02 = 2%): the band of
    /// equivalence is `[1/(1+t), 1+t]`, symmetric on the log scale.
    pub threshold: f64,
    /// Confidence level of the intervals.
    pub level: f64,
}

impl Default for CompareSettings {
    fn default() -> Self {
        CompareSettings {
            threshold: DEFAULT_THRESHOLD,
            level: CONFIDENCE_LEVEL,
        }
    }
}

/// One side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Base,
    New,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Base => "base",
            Side::New => "new",
        })
    }
}

/// What a comparison concludes about NEW against BASE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Better by more than the threshold (shorter time, higher rate), with 95% confidence.
    Faster,
    /// Worse by more than the threshold, with 95% confidence.
    Slower,
    /// The whole interval of the ratio lies within the threshold band.
    Equivalent,
    /// Anything else: too few runs for an interval, an interval of zero width (ties), runs
    /// contaminated by other CPU activity, too wide an interval, or a change that may or may
    /// not exceed the threshold. A warning says which.
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Equivalent => "equivalent",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The comparison of one configuration found on both sides. Field names are the JSON
/// contract of `vernier compare --format json` (docs/compare.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub benchmark: String,
    pub options: Options,
    /// The load profiles both sides ran under (`--load`), canonical specs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<String>,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Measured runs pooled from every session of each side.
    pub base_n: usize,
    pub new_n: usize,
    pub base_median: f64,
    pub new_median: f64,
    /// Distribution-free CI of each median; absent below 6 runs.
    pub base_ci_low: Option<f64>,
    pub base_ci_high: Option<f64>,
    pub new_ci_low: Option<f64>,
    pub new_ci_high: Option<f64>,
    /// NEW/BASE, the estimate `ratio_ci` is built around: with one session a side the
    /// exponentiated Hodges-Lehmann shift of the log values (`runs_ratio`), with three sessions
    /// or more in all the ratio of the geometric means of the session medians; the ratio of
    /// the medians when the samples are too small for an interval.
    pub ratio: f64,
    /// Interval of the ratio the verdict uses (docs/compare.md): with several sessions
    /// Student's t interval on the session medians, with one session a side the runs'
    /// interval (`runs_ci_*`) widened by the session-to-session noise (`noise_source`); each
    /// end moved out by what rounding can move the ratio (`resolution`). Absent when the
    /// samples are too small or when ties shrink the interval to zero width.
    pub ratio_ci_low: Option<f64>,
    pub ratio_ci_high: Option<f64>,
    /// Degrees of freedom of the t quantile of `ratio_ci` (of its wider half); absent when the
    /// normal quantile was used (a known session noise) or there is no interval.
    pub ratio_df: Option<f64>,
    /// The exponentiated Hodges-Lehmann shift of the log values of all runs pooled.
    pub runs_ratio: f64,
    /// Interval of the ratio from the runs alone (Hodges-Lehmann / Moses): the within-session
    /// part of the uncertainty.
    pub runs_ci_low: Option<f64>,
    pub runs_ci_high: Option<f64>,
    /// Sessions with measured runs of this configuration on each side.
    pub base_sessions: usize,
    pub new_sessions: usize,
    /// Where the between-session part of the interval comes from (`sessions`, `pooled`,
    /// `calibration` or `default`); absent without an interval.
    pub noise_source: Option<NoiseSource>,
    /// Standard deviation of the between-session part of ln(NEW/BASE) in the interval.
    pub session_noise: Option<f64>,
    /// Minimum detectable change: the smallest relative change (0.05 = 5%) this comparison
    /// reports as faster or slower with 80% probability (in the median over repetitions).
    pub mdc: Option<f64>,
    /// The rounding step of the values relative to the smallest one, when ties show that they
    /// are rounded; `ratio_ci` then accounts for it.
    pub resolution: Option<f64>,
    /// Two-sided Mann-Whitney U p-value.
    pub p_value: f64,
    /// Benjamini-Hochberg adjusted p-value across all comparisons of this report.
    pub p_adjusted: f64,
    /// Welch's t interval of the difference of mean logs, exponentiated: a ratio of
    /// geometric means. Absent below 2 runs a side or when both sides are constant.
    pub welch_ci_low: Option<f64>,
    pub welch_ci_high: Option<f64>,
    pub verdict: Verdict,
    /// In JSON `warnings` (texts) and `warning_codes`.
    #[serde(flatten)]
    pub warnings: Warnings,
}

impl Comparison {
    /// The configuration's identity, whose `Display` is its label.
    pub fn key(&self) -> ConfigKey {
        ConfigKey::loaded(&self.benchmark, &self.options, &self.loads)
    }

    /// `benchmark:opt=value:...`, and the loads when there are any.
    pub fn label(&self) -> String {
        self.key().to_string()
    }
}

impl Comparison {
    /// The verdict this comparison would have had, when it was withheld because runs were
    /// contaminated (the verdict itself is then inconclusive).
    pub fn withheld(&self) -> Option<Verdict> {
        self.warnings.iter().find_map(|w| match w {
            Warning::VerdictWithheld { verdict, .. } => Some(*verdict),
            _ => None,
        })
    }

    /// The verdict's name where verdicts are shown apart: `faster`, `slower`, `equivalent`,
    /// `inconclusive`, or `withheld` for an inconclusive verdict that would have been another
    /// but for contaminated runs.
    pub fn verdict_word(&self) -> &'static str {
        if self.withheld().is_some() {
            "withheld"
        } else {
            self.verdict.as_str()
        }
    }

    /// The interval of the ratio as changes in percent (`[+17.7%, +20.0%]`), or `-`.
    pub fn change_interval_text(&self) -> String {
        match (self.ratio_ci_low, self.ratio_ci_high) {
            (Some(lo), Some(hi)) => format!("[{}, {}]", change_text(lo), change_text(hi)),
            _ => "-".to_string(),
        }
    }
}

/// A ratio NEW/BASE as a signed change in percent with one decimal: 1.19 is `+19.0%`, 0.9
/// `-10.0%`. The sign says which way the metric moved; the verdict says whether that is
/// better (a rate) or worse (a time). The one text of a change wherever one is shown
/// (`compare`, the site, the forest plot).
pub fn change_text(ratio: f64) -> String {
    if !ratio.is_finite() {
        return ratio.to_string();
    }
    let p = (ratio - 1.0) * 100.0;
    // -0.04 would round to "-0.0": no sign for what rounds to no change.
    if format!("{:.1}", p.abs()) == "0.0" {
        "0.0%".to_string()
    } else {
        format!("{p:+.1}%")
    }
}

/// A configuration present on one side only (or without measured runs on one side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unmatched {
    /// The side that has it.
    pub side: Side,
    pub benchmark: String,
    pub options: Options,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<String>,
    pub metric: String,
    /// Whether `metric` is the configuration's primary metric (or one of its secondary ones).
    pub primary: bool,
    pub reason: String,
}

impl Unmatched {
    pub fn label(&self) -> String {
        ConfigKey::loaded(&self.benchmark, &self.options, &self.loads).to_string()
    }
}

/// Counts of verdicts and the geometric mean of the ratios.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub compared: usize,
    pub faster: usize,
    pub slower: usize,
    pub equivalent: usize,
    pub inconclusive: usize,
    /// Geometric mean of the ratios NEW/BASE of the comparisons that have an interval, with
    /// the fixed-suite interval (docs/compare.md). Absent when no comparison has an interval
    /// or when metrics of opposite directions are mixed (their ratios do not average).
    pub geomean_ratio: Option<f64>,
    pub geomean_ci_low: Option<f64>,
    pub geomean_ci_high: Option<f64>,
    /// How many comparisons the geometric mean covers.
    pub geomean_of: usize,
    /// In JSON `warnings` (texts) and `warning_codes`.
    #[serde(flatten)]
    pub warnings: Warnings,
}

/// The result of [`compare`]: the JSON document of `vernier compare --format json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    pub threshold: f64,
    pub level: f64,
    pub comparisons: Vec<Comparison>,
    /// Comparisons of the secondary metrics of the matched configurations (latency's max,
    /// p99.9, ...): the same statistics, their p-values adjusted among themselves, and left out
    /// of the summary, whose verdict counts and geometric mean are about primary metrics.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secondary: Vec<Comparison>,
    pub unmatched: Vec<Unmatched>,
    pub summary: Summary,
    /// The differential profiles of the configurations profiled on both sides (`run
    /// --profile`): where the time went ([`crate::profile::compare_profiles`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<crate::profile::ProfileComparison>,
    /// The monitor counters per unit of work of the compared configurations that have monitor
    /// data on both sides ([`crate::monitors_compare::monitor_differences`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub monitors: Vec<crate::monitors_compare::MonitorDifferences>,
}

impl CompareReport {
    /// Whether any comparison found NEW slower (for `--fail-on-regression`).
    pub fn has_regression(&self) -> bool {
        self.summary.slower > 0
    }
}

/// The verdict from the interval `[low, high]` of the ratio NEW/BASE (`None`: no interval),
/// the threshold `t` and the metric's direction.
///
/// - equivalent: the interval lies within `[1/(1+t), 1+t]`;
/// - slower or faster: the interval lies entirely beyond the band on one side (so it also
///   excludes 1): the change exceeds the threshold with the interval's confidence;
/// - inconclusive: no interval, or an interval that overlaps a boundary of the band.
///
/// A ratio above 1 means NEW is larger: slower for a time, faster for a rate.
pub fn verdict(ci: Option<(f64, f64)>, threshold: f64, higher_is_better: bool) -> Verdict {
    let Some((low, high)) = ci else {
        return Verdict::Inconclusive;
    };
    let upper = 1.0 + threshold;
    let lower = 1.0 / upper;
    if low >= lower && high <= upper {
        Verdict::Equivalent
    } else if low > upper {
        if higher_is_better {
            Verdict::Faster
        } else {
            Verdict::Slower
        }
    } else if high < lower {
        if higher_is_better {
            Verdict::Slower
        } else {
            Verdict::Faster
        }
    } else {
        Verdict::Inconclusive
    }
}

/// The runs of one configuration pooled over the sessions of one side.
#[derive(Debug)]
struct Group {
    /// What matches it with the other side.
    key: Key,
    /// Whether `metric` is its configurations' primary metric.
    primary: bool,
    metric: String,
    unit: String,
    higher_is_better: bool,
    versions: BTreeSet<String>,
    /// Measured values, session by session in run order.
    values: Vec<f64>,
    /// The same values per session.
    sessions: Vec<SessionValues>,
    fingerprints: BTreeSet<String>,
    /// Stop reasons of the pooled configurations that did not converge.
    not_converged: BTreeSet<String>,
    unfinished: usize,
    measured_runs: usize,
    contaminated_runs: usize,
    setup_changed_runs: usize,
}

/// Identity of a configuration's metric across sessions: the configuration (its loads included:
/// it matches only configurations under the same loads, and no calibration, which is measured
/// without loads) and the metric's name.
pub(crate) type Key = (ConfigKey, String);

/// Groups the configurations of `sessions`, in order of first appearance.
fn group(sessions: &[StoredSession]) -> (Vec<Key>, HashMap<Key, Group>) {
    let mut order = Vec::new();
    let mut groups: HashMap<Key, Group> = HashMap::new();
    for session in sessions {
        let cpus = session.info.environment.online_cpus.unwrap_or(1);
        for (config, metric) in session
            .configurations
            .iter()
            .flat_map(|c| c.record.metrics().map(move |m| (c, m)))
        {
            let r = &config.record;
            let key = (r.key(), metric.name.clone());
            let g = groups.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                Group {
                    key,
                    primary: metric.name == r.metric.name,
                    metric: metric.name.clone(),
                    unit: metric.unit.clone(),
                    higher_is_better: metric.higher_is_better,
                    versions: BTreeSet::new(),
                    values: Vec::new(),
                    sessions: Vec::new(),
                    fingerprints: BTreeSet::new(),
                    not_converged: BTreeSet::new(),
                    unfinished: 0,
                    measured_runs: 0,
                    contaminated_runs: 0,
                    setup_changed_runs: 0,
                }
            });
            g.versions.insert(r.benchmark_version.clone());
            let values = config.metric_values(&metric.name);
            if !values.is_empty() {
                g.fingerprints.insert(session.info.fingerprint.clone());
                g.sessions.push(SessionValues {
                    fingerprint: session.info.fingerprint.clone(),
                    values: values.clone(),
                });
            }
            g.values.extend(values);
            match r.stop_reason {
                None => g.unfinished += 1,
                Some(reason) if !r.converged => {
                    g.not_converged.insert(reason.to_string());
                }
                Some(_) => {}
            }
            for run in config.runs.iter().filter(|r| !r.warmup) {
                g.measured_runs += 1;
                if contaminated(run, cpus) {
                    g.contaminated_runs += 1;
                }
                if !run.setup_changed.is_empty() {
                    g.setup_changed_runs += 1;
                }
            }
        }
    }
    (order, groups)
}

/// Warnings about one side's runs, each about that side.
fn side_warnings(side: Side, g: &Group) -> Vec<Warning> {
    let mut w = Vec::new();
    if !g.not_converged.is_empty() {
        w.push(Warning::NotConverged {
            reasons: g.not_converged.iter().cloned().collect(),
        });
    }
    if g.unfinished > 0 {
        w.push(Warning::Unfinished { several: true });
    }
    w.extend(distribution_checks(&g.values).warnings);
    if g.contaminated_runs > 0 {
        w.push(Warning::Contaminated {
            runs: g.contaminated_runs,
            of: g.measured_runs,
        });
    }
    if g.setup_changed_runs > 0 {
        w.push(Warning::SetupChanged {
            runs: g.setup_changed_runs,
            of: g.measured_runs,
        });
    }
    if g.fingerprints.len() > 1 {
        w.push(Warning::MixedEnvironments {
            fingerprints: g.fingerprints.iter().cloned().collect(),
        });
    }
    if g.versions.len() > 1 {
        w.push(Warning::MixedVersions {
            versions: g.versions.iter().cloned().collect(),
        });
    }
    w.into_iter().map(|w| w.on(side)).collect()
}

fn positive_logs(side: Side, g: &Group) -> Result<Vec<f64>, AnalysisError> {
    g.values
        .iter()
        .enumerate()
        .map(|(run, &value)| {
            if value > 0.0 {
                Ok(value.ln())
            } else {
                Err(AnalysisError::NotPositive {
                    configuration: g.key.0.to_string(),
                    side,
                    run,
                    value,
                })
            }
        })
        .collect()
}

/// Everything of a comparison but the adjusted p-value.
fn compare_one(
    base: &Group,
    new: &Group,
    settings: &CompareSettings,
    calibrations: &CalibrationTable,
) -> Result<Comparison, AnalysisError> {
    let configuration = base.key.0.to_string();
    let stats = |source| AnalysisError::Stats {
        configuration: configuration.clone(),
        source,
    };
    let lb = positive_logs(Side::Base, base)?;
    let ln = positive_logs(Side::New, new)?;
    let base_median = median(&base.values).map_err(stats)?;
    let new_median = median(&new.values).map_err(stats)?;
    let base_ci = median_ci(&base.values, settings.level).map_err(stats)?;
    let new_ci = median_ci(&new.values, settings.level).map_err(stats)?;
    // The shift of the new logs relative to the base logs is ln(NEW/BASE).
    let hl = hodges_lehmann(&lb, &ln, settings.level).map_err(stats)?;
    let mut warnings = Warnings::default();
    let runs_ci = match hl.ci {
        None => {
            warnings.push(Warning::TooFewRunsForRatio {
                level: settings.level,
                base_n: base.values.len(),
                new_n: new.values.len(),
                note: min_runs_note(settings.level),
            });
            None
        }
        // A point interval claims certainty that tied values cannot give: the ties (timer
        // resolution, rounding, constant runs) hide the spread that the interval measures.
        Some(ci) if ci.low == ci.high => {
            warnings.push(Warning::ZeroWidthInterval {
                level: settings.level,
            });
            None
        }
        Some(ci) => Some((ci.low.exp(), ci.high.exp())),
    };
    // Values rounded to a grid (ties): how far rounding can move the ratio.
    let pooled: Vec<f64> = base.values.iter().chain(&new.values).copied().collect();
    let step = resolution(&pooled).map_err(stats)?;
    let smallest = pooled.iter().copied().fold(f64::INFINITY, f64::min);
    let margin = step.map_or(0.0, |g| rounding_margin(g, smallest));
    if let Some(g) = step {
        warnings.push(Warning::Rounded {
            step: g / smallest,
            limits: margin.is_infinite(),
        });
    }
    // The interval the verdict uses (docs/compare.md), when the runs have one.
    let interval = match hl.ci.filter(|_| runs_ci.is_some() && margin.is_finite()) {
        None => None,
        Some(ci) => {
            let runs = RunsInterval {
                shift: hl.shift,
                low: ci.low,
                high: ci.high,
            };
            let interval = session_noise::ratio_interval(
                &base.sessions,
                &new.sessions,
                &base.key,
                calibrations,
                runs,
                settings.level,
                settings.threshold,
                margin,
            )
            .map_err(stats)?;
            if interval.is_none() {
                // Every session median of a side equal: the sessions show no spread.
                warnings.push(Warning::ZeroWidthInterval {
                    level: settings.level,
                });
            }
            interval
        }
    };
    let ratio = match (interval, hl.ci) {
        (Some(i), _) => i.estimate.exp(),
        (None, Some(_)) => hl.shift.exp(),
        (None, None) => new_median / base_median,
    };
    let ratio_ci = interval.map(|i| (i.low, i.high));
    let p_value = mann_whitney_u(&lb, &ln).map_err(stats)?.p;
    // Fewer than 2 runs a side, or two constant samples: no Welch interval, which is no error.
    let welch = welch_t_test(&ln, &lb, settings.level)
        .ok()
        .map(|w| (w.ci.low.exp(), w.ci.high.exp()));
    let mut verdict = verdict(ratio_ci, settings.threshold, base.higher_is_better);
    let mut withheld = false;
    if verdict != Verdict::Inconclusive {
        let contaminated = contaminated_sides(base, new);
        if !contaminated.is_empty() {
            warnings.push(Warning::VerdictWithheld {
                verdict,
                contaminated,
            });
            verdict = Verdict::Inconclusive;
            withheld = true;
        }
    }

    if let (Verdict::Inconclusive, Some((low, high)), false) = (verdict, ratio_ci, withheld) {
        if low > 1.0 || high < 1.0 {
            warnings.push(Warning::WithinThreshold {
                threshold: settings.threshold,
            });
        }
    }
    if base.unit != new.unit || base.higher_is_better != new.higher_is_better {
        warnings.push(Warning::MetricDiffers {
            base_unit: base.unit.clone(),
            base_higher_is_better: base.higher_is_better,
            new_unit: new.unit.clone(),
            new_higher_is_better: new.higher_is_better,
        });
    }
    if base.versions != new.versions {
        warnings.push(Warning::VersionDiffers {
            base: base.versions.iter().cloned().collect(),
            new: new.versions.iter().cloned().collect(),
        });
    }
    warnings.extend(side_warnings(Side::Base, base));
    warnings.extend(side_warnings(Side::New, new));

    Ok(Comparison {
        benchmark: base.key.0.benchmark.clone(),
        options: base.key.0.options.clone(),
        loads: base.key.0.loads.clone(),
        metric: base.metric.clone(),
        unit: base.unit.clone(),
        higher_is_better: base.higher_is_better,
        base_n: base.values.len(),
        new_n: new.values.len(),
        base_median,
        new_median,
        base_ci_low: base_ci.map(|c| c.low),
        base_ci_high: base_ci.map(|c| c.high),
        new_ci_low: new_ci.map(|c| c.low),
        new_ci_high: new_ci.map(|c| c.high),
        ratio,
        ratio_ci_low: ratio_ci.map(|c| c.0),
        ratio_ci_high: ratio_ci.map(|c| c.1),
        ratio_df: interval.map(|i| i.df).filter(|df| df.is_finite()),
        runs_ratio: hl.shift.exp(),
        runs_ci_low: runs_ci.map(|c| c.0),
        runs_ci_high: runs_ci.map(|c| c.1),
        base_sessions: base.sessions.len(),
        new_sessions: new.sessions.len(),
        noise_source: interval.map(|i| i.source),
        session_noise: interval.map(|i| i.session_noise),
        mdc: interval.map(|i| i.mdc).filter(|m| m.is_finite()),
        resolution: step.map(|g| g / smallest),
        p_value,
        p_adjusted: p_value,
        welch_ci_low: welch.map(|c| c.0),
        welch_ci_high: welch.map(|c| c.1),
        verdict,
        warnings,
    })
}

/// The fewest runs a side (as many on each) with which a comparison at `level` can give a
/// verdict: below them the ratio has no interval ([`Warning::TooFewRunsForRatio`]) and every
/// verdict is inconclusive; 4 at 95% (C(8, 4) = 70 ways to split the runs, where 40 are
/// needed; 3 against 3 has 20). Ties can need more.
pub fn min_runs_for_verdict(level: f64) -> usize {
    (1..=10_000)
        .find(|&n| enough_arrangements(n, n, level))
        .unwrap_or(10_000)
}

/// What a Hodges-Lehmann interval needs at `level`: enough ways to split the pooled runs
/// between the sides (`vernier_stats::hodges_lehmann::enough_arrangements`), with the
/// smallest such sizes for 1 to 4 runs on one side.
fn min_runs_note(level: f64) -> String {
    let smallest: Vec<String> = (1..=4)
        .rev()
        .filter_map(|m| {
            (m..=10_000)
                .find(|&n| enough_arrangements(m, n, level))
                .map(|n| format!("{m} vs {n}"))
        })
        .collect();
    let (last, rest) = smallest.split_last().map_or(("", &[][..]), |(l, r)| (l, r));
    format!(
        "an interval needs at least {:.0} ways to split the runs between the sides, \
         C(m + n, m): at least {} or {last}; ties can need more",
        (2.0 / (1.0 - level)).ceil(),
        rest.join(", ")
    )
}

/// The sides whose runs are contaminated by other CPU activity beyond the tolerance that
/// `vernier show` applies ([`crate::summary::contaminated`]), with their contaminated and
/// measured runs: a verdict on them cannot stand, since the interval describes the runs, and
/// those runs measured the benchmark together with someone else's work.
fn contaminated_sides(base: &Group, new: &Group) -> Vec<(Side, usize, usize)> {
    [(Side::Base, base), (Side::New, new)]
        .into_iter()
        .filter(|(_, g)| g.contaminated_runs > 0)
        .map(|(side, g)| (side, g.contaminated_runs, g.measured_runs))
        .collect()
}

/// Compares the configurations of `new` against those of `base`.
///
/// Configurations are matched by benchmark, options and metric; when a side holds several
/// sessions, the measured runs of a configuration are pooled across them. A configuration on
/// one side only, or without measured runs on a side, is listed in `unmatched`. Values must be
/// positive (see [`AnalysisError::NotPositive`]).
pub fn compare(
    base: &[StoredSession],
    new: &[StoredSession],
    settings: &CompareSettings,
) -> Result<CompareReport, AnalysisError> {
    compare_calibrated(base, new, settings, &[])
}

/// [`compare`] with the stored calibrations of session-to-session noise: a configuration with
/// one session a side gets its interval widened by the calibration of its environments
/// (docs/compare.md, "Sessions"); calibrations of other environments or configurations are
/// ignored.
pub fn compare_calibrated(
    base: &[StoredSession],
    new: &[StoredSession],
    settings: &CompareSettings,
    calibrations: &[Calibration],
) -> Result<CompareReport, AnalysisError> {
    let table = CalibrationTable::new(calibrations);
    let mut uncalibrated = BTreeSet::new();
    let mut uncalibrated_count = 0;
    if !(settings.threshold > 0.0 && settings.threshold < 1.0) {
        return Err(AnalysisError::Threshold(settings.threshold));
    }
    let (base_order, base_groups) = group(base);
    let (new_order, new_groups) = group(new);
    let mut comparisons = Vec::new();
    let mut secondary = Vec::new();
    let mut unmatched = Vec::new();
    let missing = |side: Side, g: &Group, reason: String| Unmatched {
        side,
        benchmark: g.key.0.benchmark.clone(),
        options: g.key.0.options.clone(),
        loads: g.key.0.loads.clone(),
        metric: g.metric.clone(),
        primary: g.primary,
        reason,
    };
    for key in &base_order {
        let Some(b) = base_groups.get(key) else {
            continue;
        };
        if !b.primary {
            // A secondary metric is compared where both sides have values, and otherwise
            // left out: its configuration is listed as unmatched by its primary metric, and a
            // high quantile that a side's runs were too short for has no values there.
            if let Some(n) = new_groups.get(key) {
                if !b.values.is_empty() && !n.values.is_empty() {
                    match compare_one(b, n, settings, &table) {
                        Ok(c) => secondary.push(c),
                        // Counts such as missed periods are often 0: no ratio, said so.
                        Err(AnalysisError::NotPositive { side, .. }) => unmatched.push(missing(
                            side,
                            b,
                            "values of 0 or less: no ratio".to_string(),
                        )),
                        Err(e) => return Err(e),
                    }
                }
            }
            continue;
        }
        match new_groups.get(key) {
            None => unmatched.push(missing(Side::Base, b, "not in new".to_string())),
            Some(n) if b.values.is_empty() || n.values.is_empty() => {
                let reason = match (b.values.is_empty(), n.values.is_empty()) {
                    (true, true) => "no measured runs on either side",
                    (true, false) => "no measured runs in base",
                    _ => "no measured runs in new",
                };
                let (side, g) = if b.values.is_empty() && !n.values.is_empty() {
                    (Side::New, n)
                } else {
                    (Side::Base, b)
                };
                unmatched.push(missing(side, g, reason.to_string()));
            }
            Some(n) => {
                let c = compare_one(b, n, settings, &table)?;
                if c.noise_source == Some(NoiseSource::Default) {
                    uncalibrated_count += 1;
                    uncalibrated.extend(b.fingerprints.iter().chain(&n.fingerprints).cloned());
                }
                comparisons.push(c);
            }
        }
    }
    for key in &new_order {
        if base_groups.contains_key(key) {
            continue;
        }
        if let Some(n) = new_groups.get(key).filter(|n| n.primary) {
            unmatched.push(missing(Side::New, n, "not in base".to_string()));
        }
    }

    adjust_p_values(&mut comparisons)?;
    adjust_p_values(&mut secondary)?;
    let mut summary = summarize(&comparisons, settings.level);
    if uncalibrated_count > 0 {
        summary.warnings.push(Warning::NoCalibration {
            environments: uncalibrated.iter().cloned().collect(),
            configurations: uncalibrated_count,
        });
    }
    for (side, sessions) in [(Side::Base, base), (Side::New, new)] {
        for (hostname, machine_ids) in crate::history::machines_named_alike(sessions) {
            summary.warnings.push(
                Warning::MachinesNamedAlike {
                    hostname,
                    machine_ids,
                }
                .on(side),
            );
        }
    }
    Ok(CompareReport {
        threshold: settings.threshold,
        level: settings.level,
        comparisons,
        secondary,
        unmatched,
        summary,
        profiles: Vec::new(),
        monitors: Vec::new(),
    })
}

/// Sets each comparison's `p_adjusted` to its Benjamini-Hochberg adjustment among them.
fn adjust_p_values(comparisons: &mut [Comparison]) -> Result<(), AnalysisError> {
    if comparisons.is_empty() {
        return Ok(());
    }
    let ps: Vec<f64> = comparisons.iter().map(|c| c.p_value).collect();
    let adjusted = benjamini_hochberg(&ps).map_err(|source| AnalysisError::Stats {
        configuration: "all comparisons".to_string(),
        source,
    })?;
    for (c, p) in comparisons.iter_mut().zip(adjusted) {
        c.p_adjusted = p;
    }
    Ok(())
}

/// Verdict counts and the geometric mean of the ratios with its fixed-suite interval.
///
/// The standard error of each log-ratio is derived from the width of its interval,
/// `se = (ln high - ln low) / (2 z)` with `z` the `(1 + level)/2` normal quantile. Why this
/// holds: the Hodges-Lehmann estimate is asymptotically normal with standard deviation
/// `tau / sqrt(N)`, `tau = 1 / (sqrt(12 lambda (1 - lambda)) integral f^2)` (`lambda = m / N`),
/// and Lehmann ("Nonparametric confidence intervals for a shift parameter", Ann. Math.
/// Statist. 34, 1963) showed that the length of the distribution-free (Moses) interval
/// satisfies `sqrt(N) L -> 2 z tau` in probability; so `L / (2 z)` estimates the standard error
/// consistently without estimating the density `f` (Hollander & Wolfe, 3rd ed., sec. 4.3).
/// In small samples the exact interval covers at least `level`, so the estimate errs on the
/// wide side. Comparisons without an interval (too few runs, or a point interval from ties,
/// which would enter with `se = 0`) are left out. [`geomean_ratio_ci`] then combines the
/// estimates as independent.
fn summarize(comparisons: &[Comparison], level: f64) -> Summary {
    let count = |v: Verdict| comparisons.iter().filter(|c| c.verdict == v).count();
    let mut summary = Summary {
        compared: comparisons.len(),
        faster: count(Verdict::Faster),
        slower: count(Verdict::Slower),
        equivalent: count(Verdict::Equivalent),
        inconclusive: count(Verdict::Inconclusive),
        geomean_ratio: None,
        geomean_ci_low: None,
        geomean_ci_high: None,
        geomean_of: 0,
        warnings: Warnings::default(),
    };
    let directions: BTreeSet<bool> = comparisons.iter().map(|c| c.higher_is_better).collect();
    if directions.len() > 1 {
        summary.warnings.push(Warning::OppositeDirections);
        return summary;
    }
    // The level is checked by the caller's settings; a quantile of a level outside (0, 1)
    // leaves the geometric mean out.
    let Ok(z) = normal_quantile(0.5 + level / 2.0) else {
        return summary;
    };
    let (mut logs, mut ses) = (Vec::new(), Vec::new());
    for c in comparisons {
        if let (Some(low), Some(high)) = (c.ratio_ci_low, c.ratio_ci_high) {
            logs.push(c.ratio.ln());
            ses.push((high.ln() - low.ln()) / (2.0 * z));
        }
    }
    let without = comparisons.len() - logs.len();
    if without > 0 {
        summary
            .warnings
            .push(Warning::LeftOutOfGeomean { count: without });
    }
    if let Ok(g) = geomean_ratio_ci(&logs, &ses, level) {
        summary.geomean_ratio = Some(g.geomean);
        summary.geomean_ci_low = Some(g.ci.low);
        summary.geomean_ci_high = Some(g.ci.high);
        summary.geomean_of = logs.len();
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_needs_four_runs_a_side_at_95_percent() {
        assert_eq!(min_runs_for_verdict(0.95), 4);
        assert_eq!(min_runs_for_verdict(0.99), 5);
    }

    #[test]
    fn changes_are_signed_percentages() {
        assert_eq!(change_text(1.19), "+19.0%");
        assert_eq!(change_text(0.9), "-10.0%");
        assert_eq!(change_text(0.99996), "0.0%");
        assert_eq!(change_text(1.0004), "0.0%");
    }
    use rand_chacha::rand_core::{RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeMap;
    use vernier_model::{Environment, MetricInfo, OptionValue, StopReason, StoredConfiguration};

    /// A configuration of `bench` named by its option `n`, converged, whose runs took `values`
    /// (testkit's builders).
    fn config(name: &str, values: &[f64], higher_is_better: bool) -> StoredConfiguration {
        let options = Options(BTreeMap::from([(
            "n".to_string(),
            OptionValue::Text(name.to_string()),
        )]));
        let mut config = vernier_testkit::configuration("bench", options, ("time", "s"));
        config.record.metric.higher_is_better = higher_is_better;
        config.record.stop_reason = Some(StopReason::Converged);
        config.record.converged = true;
        config.runs = values
            .iter()
            .zip(0u32..)
            .map(|(v, i)| vernier_testkit::run(i, 0, 1_000_000, ("time", *v)))
            .collect();
        config
    }

    /// A session in the environment of `fingerprint` (otherwise unrecorded) of
    /// `configurations`.
    fn session(fingerprint: &str, configurations: Vec<StoredConfiguration>) -> StoredSession {
        let mut session = vernier_testkit::stored_session(0, &[]);
        session.info.fingerprint = fingerprint.into();
        session.info.environment = Environment::default();
        session.configurations = configurations;
        session
    }

    fn one(base: &[f64], new: &[f64]) -> Comparison {
        let b = [session("f", vec![config("a", base, false)])];
        let n = [session("f", vec![config("a", new, false)])];
        let mut r = compare(&b, &n, &CompareSettings::default()).unwrap();
        assert_eq!(r.comparisons.len(), 1);
        r.comparisons.remove(0)
    }

    #[test]
    fn verdict_rule() {
        let t = 0.02;
        assert_eq!(verdict(None, t, false), Verdict::Inconclusive);
        assert_eq!(verdict(Some((0.99, 1.01)), t, false), Verdict::Equivalent);
        assert_eq!(
            verdict(Some((1.0 / 1.02, 1.02)), t, false),
            Verdict::Equivalent
        );
        assert_eq!(verdict(Some((1.03, 1.10)), t, false), Verdict::Slower);
        assert_eq!(verdict(Some((1.03, 1.10)), t, true), Verdict::Faster);
        assert_eq!(verdict(Some((0.90, 0.97)), t, false), Verdict::Faster);
        assert_eq!(verdict(Some((0.90, 0.97)), t, true), Verdict::Slower);
        // Excludes 1 but reaches into the band; straddles 1 and the band's edge.
        assert_eq!(verdict(Some((1.01, 1.05)), t, false), Verdict::Inconclusive);
        assert_eq!(verdict(Some((0.95, 1.05)), t, false), Verdict::Inconclusive);
    }

    #[test]
    fn doubled_times_are_slower_with_exact_ratio() {
        let base = [1.3, 1.0, 1.6, 1.2, 1.7, 1.1, 1.5, 1.4];
        let new: Vec<f64> = base.iter().map(|v| v * 2.0).collect();
        let c = one(&base, &new);
        assert!((c.ratio - 2.0).abs() < 1e-12, "{c:?}");
        assert!(c.ratio_ci_low.unwrap() > 1.02);
        assert!(c.ratio_ci_low.unwrap() <= 2.0 && 2.0 <= c.ratio_ci_high.unwrap());
        assert_eq!(c.verdict, Verdict::Slower);
        // scipy.stats.mannwhitneyu(base, new) for fully separated 8 vs 8: exact p = 2/C(16,8)
        assert!((c.p_value - 2.0 / 12870.0).abs() < 1e-15, "{}", c.p_value);
        assert_eq!(c.p_adjusted, c.p_value);
        // Welch on logs of a pure scale change: the interval covers 2 exactly.
        assert!(c.welch_ci_low.unwrap() < 2.0 && c.welch_ci_high.unwrap() > 2.0);
        assert_eq!((c.base_n, c.new_n), (8, 8));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn a_side_pooling_machines_named_alike_says_so() {
        let on = |host: &str, id: &str| {
            let mut s = session("f", vec![config("a", &[1.0, 1.1, 1.2, 1.3, 1.4], false)]);
            s.info.environment.hostname = Some(host.into());
            s.info.environment.machine_id = Some(id.into());
            s
        };
        let base = [on("lab1", "aaaaaaaa11"), on("lab1", "bbbbbbbb22")];
        let new = [on("lab1", "aaaaaaaa11"), on("lab2", "bbbbbbbb22")];
        let r = compare(&base, &new, &CompareSettings::default()).unwrap();
        let alike: Vec<String> = r
            .summary
            .warnings
            .iter()
            .filter(|w| w.code() == "machines-named-alike")
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            alike,
            [
                "base: 2 machines named lab1 are pooled (machine ids aaaaaaaa, bbbbbbbb); \
              host=MACHINE-ID selects one"
            ]
        );
    }

    #[test]
    fn equal_samples_have_no_interval() {
        // Eight equal runs a side: the Moses interval is the point [1, 1], which is no
        // interval.
        let c = one(&[3.0; 8], &[3.0; 8]);
        assert_eq!(c.ratio, 1.0);
        assert_eq!((c.ratio_ci_low, c.ratio_ci_high), (None, None));
        assert_eq!(c.p_value, 1.0);
        assert_eq!(c.welch_ci_low, None);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!(
            c.warnings[0].to_string().contains("zero width"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn few_equal_runs_are_inconclusive() {
        // [2.0] vs [2.0] once gave the interval [1, 1] and "equivalent"; so did 2 and 3 equal
        // runs a side.
        for n in 1..=3 {
            let c = one(&vec![2.0; n], &vec![2.0; n]);
            assert_eq!(c.ratio, 1.0);
            assert_eq!((c.ratio_ci_low, c.ratio_ci_high), (None, None), "{n}");
            assert_eq!(c.verdict, Verdict::Inconclusive, "{n}");
            assert!(
                c.warnings[0].to_string().starts_with("too few runs")
                    && c.warnings[0]
                        .to_string()
                        .contains("at least 4 vs 4, 3 vs 5, 2 vs 8 or 1 vs 39;"),
                "{:?}",
                c.warnings
            );
        }
    }

    #[test]
    fn constant_sides_that_differ_are_inconclusive() {
        // [1.0] * 12 vs [1.25] * 12: once the Welch interval [1.25, 1.25] from a rounding-tiny
        // variance, and the point interval [1.25, 1.25] of the ratio.
        let c = one(&[1.0; 12], &[1.25; 12]);
        assert_eq!(c.ratio, 1.25);
        assert_eq!((c.welch_ci_low, c.welch_ci_high), (None, None));
        assert_eq!((c.ratio_ci_low, c.ratio_ci_high), (None, None));
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!(
            c.warnings[0].to_string().contains("zero width"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn one_run_against_forty_has_an_exact_interval() {
        // C(41, 1) = 41 >= 40 ways: the exact interval [D(1), D(40)] covers with 1 - 2/41.
        let new: Vec<f64> = (0..40).map(|i| 2.0 + f64::from(i) * 0.01).collect();
        let c = one(&[1.0], &new);
        let (low, high) = (c.runs_ci_low.unwrap(), c.runs_ci_high.unwrap());
        assert_eq!((low, high), (new[0], new[39]));
        // The verdict's interval adds the default session noise of two sessions to it.
        assert_eq!(c.noise_source, Some(NoiseSource::Default));
        assert!(c.ratio_ci_low.unwrap() < low && c.ratio_ci_high.unwrap() > high);
        assert_eq!(c.verdict, Verdict::Slower);
        // One run against 38: 39 ways, no interval.
        let c = one(&[1.0], &new[..38]);
        assert_eq!(c.ratio_ci_low, None);
        assert_eq!(c.verdict, Verdict::Inconclusive);
    }

    /// Verdicts of `pairs` A/A comparisons of `runs` runs a side: the same lognormal times
    /// (sigma 2%) on both sides, rounded to a 5% grid, from a seeded generator.
    fn rounded_aa(pairs: usize, runs: usize, seed: u64) -> (HashMap<Verdict, usize>, usize) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut draw = || {
            let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let v = (0.02 * normal_quantile(u).unwrap()).exp();
            (v / 0.05).round() * 0.05
        };
        let mut verdicts = HashMap::new();
        let mut all_tied = 0;
        for _ in 0..pairs {
            let base: Vec<f64> = (0..runs).map(|_| draw()).collect();
            let new: Vec<f64> = (0..runs).map(|_| draw()).collect();
            if base.iter().chain(&new).all(|&v| v == base[0]) {
                all_tied += 1;
            }
            *verdicts.entry(one(&base, &new).verdict).or_insert(0) += 1;
        }
        (verdicts, all_tied)
    }

    #[test]
    fn rounded_aa_with_three_runs_is_never_equivalent_or_faster() {
        // Rounded to 5% with 3 runs a side, 237 of 1000 A/A pairs once came out equivalent and
        // 2 faster. 3 vs 3 has C(6, 3) = 20 < 40 ways to split the runs: no interval at 95%,
        // whatever the ties.
        let (verdicts, all_tied) = rounded_aa(1000, 3, 237);
        // About 0.79^6 of the pairs are six equal values: the case that gave [1, 1].
        assert!(all_tied > 150, "{all_tied}");
        assert_eq!(
            verdicts.get(&Verdict::Inconclusive),
            Some(&1000),
            "{verdicts:?}"
        );
    }

    #[test]
    fn rounded_aa_with_ten_runs_is_never_equivalent() {
        // With 10 runs a side there are intervals, but on a 5% grid one that is not a point
        // spans at least one step (ln 1.05 = 0.049), wider than the 2% band on both sides of 1
        // (2 ln 1.02 = 0.040), and a point is no interval: never "equivalent".
        let (verdicts, all_tied) = rounded_aa(1000, 10, 10);
        assert!(all_tied > 0, "the grid must produce point intervals too");
        assert_eq!(verdicts.get(&Verdict::Equivalent), None, "{verdicts:?}");
        let false_verdicts = verdicts.get(&Verdict::Faster).unwrap_or(&0)
            + verdicts.get(&Verdict::Slower).unwrap_or(&0);
        // Each one-sided claim errs at most 2.5% of the time when its interval is valid.
        assert!(false_verdicts <= 50, "{verdicts:?}");
    }

    #[test]
    fn rounded_values_widen_the_interval_by_what_rounding_can_move_the_ratio() {
        // Twelve runs a side on a grid of 0.05 (ties), new about 10% slower: an interval whose
        // ends are differences of grid values covered the unrounded ratio in 88-93% of cases.
        let base = [
            1.00, 1.05, 1.05, 1.10, 1.00, 1.05, 1.10, 1.05, 1.00, 1.05, 1.05, 1.10,
        ];
        let new: Vec<f64> = base.iter().map(|v| v + 0.10).collect();
        let c = one(&base, &new);
        assert!(
            (c.resolution.unwrap() - 0.05).abs() < 1e-9,
            "{:?}",
            c.resolution
        );
        assert!(
            c.warnings.iter().any(|w| w.code() == "rounded"),
            "{:?}",
            c.warnings
        );
        // Each value within 0.025 of what was measured: each end moves out by -ln(1 - 0.025).
        let margin = -(-0.025f64).ln_1p();
        let runs = session_noise::RunsInterval {
            shift: c.runs_ratio.ln(),
            low: c.runs_ci_low.unwrap().ln(),
            high: c.runs_ci_high.unwrap().ln(),
        };
        let sessions = |values: &[f64]| {
            vec![SessionValues {
                fingerprint: "f".into(),
                values: values.to_vec(),
            }]
        };
        let key = (
            ConfigKey::new("bench", &Options::default()),
            "time".to_string(),
        );
        let unmoved = session_noise::ratio_interval(
            &sessions(&base),
            &sessions(&new),
            &key,
            &CalibrationTable::default(),
            runs,
            0.95,
            DEFAULT_THRESHOLD,
            0.0,
        )
        .unwrap()
        .unwrap();
        assert!((unmoved.low.ln() - c.ratio_ci_low.unwrap().ln() - margin).abs() < 1e-12);
        assert!((c.ratio_ci_high.unwrap().ln() - unmoved.high.ln() - margin).abs() < 1e-12);
        // Values that do not tie are taken as measured.
        let c = one(
            &[1.0, 1.01, 1.03, 1.02, 1.04, 1.05, 1.06, 1.07],
            &[2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7],
        );
        assert_eq!(c.resolution, None);
        // A grid whose half step reaches the smallest value leaves no interval.
        let c = one(
            &[1.0, 3.0, 3.0, 5.0, 3.0, 1.0, 3.0, 5.0],
            &[3.0, 5.0, 5.0, 7.0, 5.0, 3.0, 5.0, 7.0],
        );
        assert_eq!(c.ratio_ci_low, None);
        assert!(c
            .warnings
            .iter()
            .any(|w| w.to_string().contains("too coarse")));
    }

    /// `runs` of `config` from `from` on: other work used a whole second of CPU during each
    /// (1 ms) run, far beyond the tolerance of `show`.
    fn contaminate(mut config: StoredConfiguration, from: usize) -> StoredConfiguration {
        for run in &mut config.runs[from..] {
            run.foreign_cpu_ns = 1_000_000_000;
        }
        config
    }

    #[test]
    fn contaminated_runs_withhold_the_verdict() {
        let base = [1.3, 1.0, 1.6, 1.2, 1.7, 1.1, 1.5, 1.4];
        let new: Vec<f64> = base.iter().map(|v| v * 2.0).collect();
        // Six of eight new runs contaminated: the interval still says "slower", the verdict
        // may not.
        let b = [session("f", vec![config("a", &base, false)])];
        let n = [session("f", vec![contaminate(config("a", &new, false), 2)])];
        let r = compare(&b, &n, &CompareSettings::default()).unwrap();
        let c = &r.comparisons[0];
        assert!(c.ratio_ci_low.unwrap() > 1.02);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!(
            c.warnings.iter().any(|w| w
                .to_string()
                .starts_with("verdict slower withheld: new: 6 of 8 runs")),
            "{:?}",
            c.warnings
        );
        assert!(!c
            .warnings
            .iter()
            .any(|w| w.to_string().contains("may be within")));
        assert!(!r.has_regression());
        // The rule is the one of `show`: a run within its tolerance changes nothing.
        let mut slightly = config("a", &new, false);
        for run in &mut slightly.runs {
            assert!(!contaminated(run, 1));
            run.foreign_cpu_ns = 10_000_000; // one tick of 10 ms, within the tolerance
            assert!(!contaminated(run, 1));
        }
        let n = [session("f", vec![slightly])];
        let r = compare(&b, &n, &CompareSettings::default()).unwrap();
        assert_eq!(r.comparisons[0].verdict, Verdict::Slower);
        // An inconclusive verdict stays what it is, without a second reason.
        let b = [session(
            "f",
            vec![contaminate(config("a", &base, false), 0)],
        )];
        let n = [session("f", vec![config("a", &base, false)])];
        let r = compare(&b, &n, &CompareSettings::default()).unwrap();
        assert_eq!(r.comparisons[0].verdict, Verdict::Inconclusive);
        assert!(!r.comparisons[0]
            .warnings
            .iter()
            .any(|w| w.to_string().contains("withheld")));
    }

    #[test]
    fn outlier_rule_is_tukeys_fences() {
        // 35 among 1..=20 lies beyond Tukey's upper fence (Q3 16 + 1.5 IQR 10 = 31) while its
        // modified z-score is 0.6745 * 24 / 5 = 3.24 < 3.5: counted, as docs/json.md says.
        let mut values: Vec<f64> = (1..=20).map(f64::from).collect();
        values.push(35.0);
        assert_eq!(distribution_checks(&values).outliers, 1);
        let z = vernier_stats::modified_z_scores(&values).unwrap().unwrap();
        assert!(z
            .iter()
            .all(|m| m.abs() < vernier_stats::MODIFIED_Z_THRESHOLD));
        // Seven equal runs and one other: MAD is zero (no z-score), the IQR too, and the
        // other run is an outlier by the fences.
        let values = [5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 6.0];
        assert_eq!(vernier_stats::modified_z_scores(&values).unwrap(), None);
        assert_eq!(distribution_checks(&values).outliers, 1);
    }

    #[test]
    fn point_intervals_stay_out_of_the_geometric_mean() {
        let base = [1.3, 1.0, 1.6, 1.2, 1.7, 1.1, 1.5, 1.4];
        let double: Vec<f64> = base.iter().map(|v| v * 2.0).collect();
        let b = [session(
            "f",
            vec![config("a", &base, false), config("b", &[3.0; 8], false)],
        )];
        let n = [session(
            "f",
            vec![config("a", &double, false), config("b", &[3.0; 8], false)],
        )];
        let r = compare(&b, &n, &CompareSettings::default()).unwrap();
        // A point interval would enter with a standard error of 0.
        assert_eq!(r.summary.geomean_of, 1);
        assert!((r.summary.geomean_ratio.unwrap() - 2.0).abs() < 1e-12);
        assert!(r.summary.warnings[0]
            .to_string()
            .starts_with("1 comparison without an interval is left out"));
    }

    #[test]
    fn tiny_samples_work_without_interval() {
        let c = one(&[2.0], &[3.0]);
        assert_eq!(c.ratio, 1.5);
        assert_eq!(c.ratio_ci_low, None);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert_eq!(c.p_value, 1.0);
        assert!(
            c.warnings[0].to_string().contains("too few runs"),
            "{:?}",
            c.warnings
        );
        let c = one(&[2.0, 4.0], &[3.0, 5.0]);
        assert_eq!(c.ratio, 4.0 / 3.0);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!(c.welch_ci_low.is_some());
    }

    #[test]
    fn non_positive_values_are_rejected() {
        let b = [session("f", vec![config("a", &[1.0, 2.0], false)])];
        let n = [session("f", vec![config("a", &[1.0, 0.0], false)])];
        let err = compare(&b, &n, &CompareSettings::default()).unwrap_err();
        assert_eq!(
            err,
            AnalysisError::NotPositive {
                configuration: "bench:n=a".into(),
                side: Side::New,
                run: 1,
                value: 0.0
            }
        );
        assert!(err.to_string().contains("not positive"));
    }

    #[test]
    fn unmatched_are_listed_and_pooling_counts_runs() {
        let b = [
            session("f1", vec![config("a", &[1.0, 1.1, 1.2, 1.3], false)]),
            session(
                "f2",
                vec![
                    config("a", &[1.0, 1.1, 1.2, 1.3], false),
                    config("only-base", &[1.0], false),
                ],
            ),
        ];
        let n = [session(
            "f1",
            vec![
                config("a", &[1.0, 1.1, 1.2, 1.3], false),
                config("only-new", &[1.0], false),
            ],
        )];
        let r = compare(&b, &n, &CompareSettings::default()).unwrap();
        assert_eq!(r.comparisons.len(), 1);
        assert_eq!(r.comparisons[0].base_n, 8);
        assert_eq!(r.comparisons[0].new_n, 4);
        assert!(r.comparisons[0].warnings.iter().any(|w| w
            .to_string()
            .starts_with("base: runs come from 2 different environments")));
        assert_eq!(r.unmatched.len(), 2);
        assert_eq!(r.unmatched[0].side, Side::Base);
        assert_eq!(r.unmatched[0].label(), "bench:n=only-base");
        assert_eq!(r.unmatched[1].side, Side::New);
    }

    #[test]
    fn summary_counts_and_geomean() {
        let base = [1.3, 1.0, 1.6, 1.2, 1.7, 1.1, 1.5, 1.4];
        let double: Vec<f64> = base.iter().map(|v| v * 2.0).collect();
        let half: Vec<f64> = base.iter().map(|v| v * 0.5).collect();
        let b = [session(
            "f",
            vec![config("a", &base, false), config("b", &base, false)],
        )];
        let n = [session(
            "f",
            vec![config("a", &double, false), config("b", &half, false)],
        )];
        let r = compare(&b, &n, &CompareSettings::default()).unwrap();
        assert_eq!((r.summary.slower, r.summary.faster), (1, 1));
        assert!(r.has_regression());
        // Ratios 2 and 1/2: geometric mean 1, symmetric interval on the log scale.
        let g = r.summary.geomean_ratio.unwrap();
        assert!((g - 1.0).abs() < 1e-12, "{g}");
        let (lo, hi) = (
            r.summary.geomean_ci_low.unwrap(),
            r.summary.geomean_ci_high.unwrap(),
        );
        assert!(lo < 1.0 && hi > 1.0);
        // By hand: se_i from each interval's width, combined as sqrt(sum se^2)/k.
        let z = 1.959_963_984_540_054;
        let se: Vec<f64> = r
            .comparisons
            .iter()
            .map(|c| (c.ratio_ci_high.unwrap().ln() - c.ratio_ci_low.unwrap().ln()) / (2.0 * z))
            .collect();
        let half_width = z * (se[0] * se[0] + se[1] * se[1]).sqrt() / 2.0;
        assert!((hi.ln() - half_width).abs() < 1e-9);
        // BH over two p-values that are equal: adjusted equals raw.
        assert_eq!(r.comparisons[0].p_adjusted, r.comparisons[0].p_value);
    }

    #[test]
    fn higher_is_better_flips_the_verdict() {
        let base = [1.3, 1.0, 1.6, 1.2, 1.7, 1.1, 1.5, 1.4];
        let double: Vec<f64> = base.iter().map(|v| v * 2.0).collect();
        let b = [session("f", vec![config("a", &base, true)])];
        let n = [session("f", vec![config("a", &double, true)])];
        let r = compare(&b, &n, &CompareSettings::default()).unwrap();
        assert_eq!(r.comparisons[0].verdict, Verdict::Faster);
        assert!(!r.has_regression());
    }

    #[test]
    fn threshold_is_checked() {
        let settings = CompareSettings {
            threshold: 0.0,
            level: CONFIDENCE_LEVEL,
        };
        assert!(compare(&[], &[], &settings).is_err());
    }

    /// A latency-like configuration: primary `time` plus the secondary `max` (twice the
    /// primary) and `missed` (0 in every run).
    fn with_secondary(values: &[f64], loads: &[&str]) -> StoredConfiguration {
        let mut c = config("lat", values, false);
        c.record.secondary_metrics = vec![
            MetricInfo {
                name: "max".into(),
                unit: "s".into(),
                higher_is_better: false,
            },
            MetricInfo {
                name: "missed".into(),
                unit: "count".into(),
                higher_is_better: false,
            },
        ];
        c.record.loads = loads.iter().map(|l| l.to_string()).collect();
        for r in &mut c.runs {
            let v = r.values["time"];
            r.values.insert("max", 2.0 * v);
            r.values.insert("missed", 0.0);
        }
        c
    }

    #[test]
    fn secondary_metrics_are_compared_apart_from_the_summary() {
        let base: Vec<f64> = (0..12).map(|i| 1.0 + 0.001 * i as f64).collect();
        let new: Vec<f64> = base.iter().map(|v| v * 1.5).collect();
        let report = compare(
            &[session("f", vec![with_secondary(&base, &[])])],
            &[session("f", vec![with_secondary(&new, &[])])],
            &CompareSettings::default(),
        )
        .unwrap();
        assert_eq!(report.comparisons.len(), 1);
        assert_eq!(report.comparisons[0].metric, "time");
        assert_eq!(report.summary.compared, 1);
        assert_eq!(report.secondary.len(), 1);
        let max = &report.secondary[0];
        assert_eq!(max.metric, "max");
        assert_eq!(max.verdict, Verdict::Slower);
        assert!((max.ratio - 1.5).abs() < 1e-9, "{}", max.ratio);
        // Missed periods are 0 on both sides: no ratio, and said so.
        assert_eq!(report.unmatched.len(), 1);
        assert_eq!(report.unmatched[0].metric, "missed");
        assert_eq!(report.unmatched[0].reason, "values of 0 or less: no ratio");
    }

    #[test]
    fn configurations_under_other_loads_do_not_match() {
        let values: Vec<f64> = (0..12).map(|i| 1.0 + 0.001 * i as f64).collect();
        let report = compare(
            &[session("f", vec![with_secondary(&values, &["cpu"])])],
            &[session("f", vec![with_secondary(&values, &["io"])])],
            &CompareSettings::default(),
        )
        .unwrap();
        assert!(report.comparisons.is_empty() && report.secondary.is_empty());
        let labels: Vec<String> = report.unmatched.iter().map(|u| u.label()).collect();
        assert_eq!(labels, ["bench:n=lat [load cpu]", "bench:n=lat [load io]"]);
        let same = compare(
            &[session("f", vec![with_secondary(&values, &["cpu", "io"])])],
            &[session("f", vec![with_secondary(&values, &["cpu", "io"])])],
            &CompareSettings::default(),
        )
        .unwrap();
        assert_eq!(same.comparisons.len(), 1);
        assert_eq!(same.comparisons[0].label(), "bench:n=lat [load cpu + io]");
    }

    #[test]
    fn one_run_a_side_has_a_ratio_but_no_interval() {
        let report = compare(
            &[session("f", vec![with_secondary(&[1.0], &[])])],
            &[session("f", vec![with_secondary(&[1.2], &[])])],
            &CompareSettings::default(),
        )
        .unwrap();
        let c = &report.comparisons[0];
        assert!((c.ratio - 1.2).abs() < 1e-12);
        assert_eq!((c.ratio_ci_low, c.ratio_ci_high), (None, None));
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!(c
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::TooFewRunsForRatio { .. })));
    }
}
