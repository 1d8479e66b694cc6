//! Matching configurations of two result sets, comparing each and summarizing the suite.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};
use vernier_model::{Options, StoredSession};
use vernier_report::summary::{contaminated, distribution_checks};
use vernier_stats::{
    benjamini_hochberg, geomean_ratio_ci, hodges_lehmann, mann_whitney_u, median, median_ci,
    welch_t_test,
};

use crate::AnalysisError;

/// Confidence level of every interval of a comparison.
pub const LEVEL: f64 = 0.95;
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
            level: LEVEL,
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
    /// Anything else: too few runs, too wide an interval, or a change that may or may not
    /// exceed the threshold.
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
    /// NEW/BASE: the exponentiated Hodges-Lehmann shift of the log values; the ratio of the
    /// medians when the samples are too small for an interval.
    pub ratio: f64,
    /// Interval of the ratio (Hodges-Lehmann / Moses); absent when the samples are too small.
    pub ratio_ci_low: Option<f64>,
    pub ratio_ci_high: Option<f64>,
    /// Two-sided Mann-Whitney U p-value.
    pub p_value: f64,
    /// Benjamini-Hochberg adjusted p-value across all comparisons of this report.
    pub p_adjusted: f64,
    /// Welch's t interval of the difference of mean logs, exponentiated: a ratio of
    /// geometric means. Absent below 2 runs a side or when both sides are constant.
    pub welch_ci_low: Option<f64>,
    pub welch_ci_high: Option<f64>,
    pub verdict: Verdict,
    pub warnings: Vec<String>,
}

impl Comparison {
    /// `benchmark:opt=value:...`.
    pub fn label(&self) -> String {
        label(&self.benchmark, &self.options)
    }
}

/// A configuration present on one side only (or without measured runs on one side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unmatched {
    /// The side that has it.
    pub side: Side,
    pub benchmark: String,
    pub options: Options,
    pub metric: String,
    pub reason: String,
}

impl Unmatched {
    pub fn label(&self) -> String {
        label(&self.benchmark, &self.options)
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
    pub warnings: Vec<String>,
}

/// The result of [`compare`]: the JSON document of `vernier compare --format json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    pub threshold: f64,
    pub level: f64,
    pub comparisons: Vec<Comparison>,
    pub unmatched: Vec<Unmatched>,
    pub summary: Summary,
}

impl CompareReport {
    /// Whether any comparison found NEW slower (for `--fail-on-regression`).
    pub fn has_regression(&self) -> bool {
        self.summary.slower > 0
    }
}

fn label(benchmark: &str, options: &Options) -> String {
    if options.0.is_empty() {
        benchmark.to_string()
    } else {
        format!("{benchmark}:{}", options.label())
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
    benchmark: String,
    options: Options,
    metric: String,
    unit: String,
    higher_is_better: bool,
    versions: BTreeSet<String>,
    /// Measured values, session by session in run order.
    values: Vec<f64>,
    fingerprints: BTreeSet<String>,
    /// Stop reasons of the pooled configurations that did not converge.
    not_converged: BTreeSet<String>,
    unfinished: usize,
    measured_runs: usize,
    contaminated_runs: usize,
}

/// Identity of a configuration across sessions: benchmark, options (serialized with sorted
/// keys, so equal options give equal text) and metric name.
type Key = (String, String, String);

fn key_of(benchmark: &str, options: &Options, metric: &str) -> Key {
    // Options are a map of numbers and strings: serializing them cannot fail; the label is a
    // faithful fallback all the same.
    let opts = serde_json::to_string(options).unwrap_or_else(|_| options.label());
    (benchmark.to_string(), opts, metric.to_string())
}

/// Groups the configurations of `sessions`, in order of first appearance.
fn group(sessions: &[StoredSession]) -> (Vec<Key>, HashMap<Key, Group>) {
    let mut order = Vec::new();
    let mut groups: HashMap<Key, Group> = HashMap::new();
    for session in sessions {
        let cpus = session.info.environment.online_cpus.unwrap_or(1);
        for config in &session.configurations {
            let r = &config.record;
            let key = key_of(&r.benchmark, &r.options, &r.metric.name);
            let g = groups.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                Group {
                    benchmark: r.benchmark.clone(),
                    options: r.options.clone(),
                    metric: r.metric.name.clone(),
                    unit: r.metric.unit.clone(),
                    higher_is_better: r.metric.higher_is_better,
                    versions: BTreeSet::new(),
                    values: Vec::new(),
                    fingerprints: BTreeSet::new(),
                    not_converged: BTreeSet::new(),
                    unfinished: 0,
                    measured_runs: 0,
                    contaminated_runs: 0,
                }
            });
            g.versions.insert(r.benchmark_version.clone());
            let values = config.values();
            if !values.is_empty() {
                g.fingerprints.insert(session.info.fingerprint.clone());
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
            }
        }
    }
    (order, groups)
}

/// Warnings about one side's runs, each prefixed with the side.
fn side_warnings(side: Side, g: &Group) -> Vec<String> {
    let mut w = Vec::new();
    if !g.not_converged.is_empty() {
        let reasons: Vec<&str> = g.not_converged.iter().map(String::as_str).collect();
        w.push(format!(
            "{side}: not converged (stopped: {})",
            reasons.join(", ")
        ));
    }
    if g.unfinished > 0 {
        w.push(format!("{side}: unfinished (a session ended abnormally)"));
    }
    for text in distribution_checks(&g.values).warnings {
        w.push(format!("{side}: {text}"));
    }
    if g.contaminated_runs > 0 {
        w.push(format!(
            "{side}: {} of {} runs contaminated by other CPU activity",
            g.contaminated_runs, g.measured_runs
        ));
    }
    if g.fingerprints.len() > 1 {
        let list: Vec<&str> = g.fingerprints.iter().map(String::as_str).collect();
        w.push(format!(
            "{side}: runs come from {} different environments (fingerprints {})",
            list.len(),
            list.join(", ")
        ));
    }
    if g.versions.len() > 1 {
        let list: Vec<&str> = g.versions.iter().map(String::as_str).collect();
        w.push(format!(
            "{side}: benchmark versions differ ({})",
            list.join(", ")
        ));
    }
    w
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
                    configuration: label(&g.benchmark, &g.options),
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
) -> Result<Comparison, AnalysisError> {
    let configuration = label(&base.benchmark, &base.options);
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
    let ratio_ci = hl.ci.map(|ci| (ci.low.exp(), ci.high.exp()));
    let ratio = if ratio_ci.is_some() {
        hl.shift.exp()
    } else {
        new_median / base_median
    };
    let p_value = mann_whitney_u(&lb, &ln).map_err(stats)?.p;
    // Fewer than 2 runs a side, or two constant samples: no Welch interval, which is no error.
    let welch = welch_t_test(&ln, &lb, settings.level)
        .ok()
        .map(|w| (w.ci.low.exp(), w.ci.high.exp()));
    let verdict = verdict(ratio_ci, settings.threshold, base.higher_is_better);

    let mut warnings = Vec::new();
    if ratio_ci.is_none() {
        warnings.push(format!(
            "too few runs for a {:.0}% CI of the ratio (base {}, new {}; at least 4 a side are \
             needed): ratio of the medians, verdict inconclusive",
            settings.level * 100.0,
            base.values.len(),
            new.values.len()
        ));
    }
    if let (Verdict::Inconclusive, Some((low, high))) = (verdict, ratio_ci) {
        if low > 1.0 || high < 1.0 {
            warnings.push(format!(
                "the ratio differs from 1 (CI excludes 1) but may be within the {:.1}% threshold",
                settings.threshold * 100.0
            ));
        }
    }
    if base.unit != new.unit || base.higher_is_better != new.higher_is_better {
        warnings.push(format!(
            "the metric differs: base in {} ({}), new in {} ({})",
            base.unit,
            direction(base.higher_is_better),
            new.unit,
            direction(new.higher_is_better)
        ));
    }
    if base.versions != new.versions {
        let b: Vec<&str> = base.versions.iter().map(String::as_str).collect();
        let n: Vec<&str> = new.versions.iter().map(String::as_str).collect();
        warnings.push(format!(
            "benchmark version differs: base {}, new {}",
            b.join(", "),
            n.join(", ")
        ));
    }
    warnings.extend(side_warnings(Side::Base, base));
    warnings.extend(side_warnings(Side::New, new));

    Ok(Comparison {
        benchmark: base.benchmark.clone(),
        options: base.options.clone(),
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
        p_value,
        p_adjusted: p_value,
        welch_ci_low: welch.map(|c| c.0),
        welch_ci_high: welch.map(|c| c.1),
        verdict,
        warnings,
    })
}

fn direction(higher_is_better: bool) -> &'static str {
    if higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    }
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
    if !(settings.threshold > 0.0 && settings.threshold < 1.0) {
        return Err(AnalysisError::Threshold(settings.threshold));
    }
    let (base_order, base_groups) = group(base);
    let (new_order, new_groups) = group(new);
    let mut comparisons = Vec::new();
    let mut unmatched = Vec::new();
    let missing = |side: Side, g: &Group, reason: String| Unmatched {
        side,
        benchmark: g.benchmark.clone(),
        options: g.options.clone(),
        metric: g.metric.clone(),
        reason,
    };
    for key in &base_order {
        let Some(b) = base_groups.get(key) else {
            continue;
        };
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
            Some(n) => comparisons.push(compare_one(b, n, settings)?),
        }
    }
    for key in &new_order {
        if base_groups.contains_key(key) {
            continue;
        }
        if let Some(n) = new_groups.get(key) {
            unmatched.push(missing(Side::New, n, "not in base".to_string()));
        }
    }

    if !comparisons.is_empty() {
        let ps: Vec<f64> = comparisons.iter().map(|c| c.p_value).collect();
        let adjusted = benjamini_hochberg(&ps).map_err(|source| AnalysisError::Stats {
            configuration: "all comparisons".to_string(),
            source,
        })?;
        for (c, p) in comparisons.iter_mut().zip(adjusted) {
            c.p_adjusted = p;
        }
    }
    let summary = summarize(&comparisons, settings.level);
    Ok(CompareReport {
        threshold: settings.threshold,
        level: settings.level,
        comparisons,
        unmatched,
        summary,
    })
}

/// Verdict counts and the geometric mean of the ratios with its fixed-suite interval.
///
/// The standard error of each log-ratio is derived from the width of its interval,
/// `se = (ln high - ln low) / (2 z)` with `z` the `(1 + level)/2` normal quantile: the
/// Hodges-Lehmann interval is asymptotically normal with that half-width (Hollander & Wolfe,
/// sec. 4.3). [`geomean_ratio_ci`] then combines them as independent estimates.
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
        warnings: Vec::new(),
    };
    let directions: BTreeSet<bool> = comparisons.iter().map(|c| c.higher_is_better).collect();
    if directions.len() > 1 {
        summary.warnings.push(
            "metrics of opposite directions (times and rates): no geometric mean of their ratios"
                .to_string(),
        );
        return summary;
    }
    let z = Normal::standard().inverse_cdf(0.5 + level / 2.0);
    let (mut logs, mut ses) = (Vec::new(), Vec::new());
    for c in comparisons {
        if let (Some(low), Some(high)) = (c.ratio_ci_low, c.ratio_ci_high) {
            logs.push(c.ratio.ln());
            ses.push((high.ln() - low.ln()) / (2.0 * z));
        }
    }
    let without = comparisons.len() - logs.len();
    if without > 0 {
        summary.warnings.push(format!(
            "{without} comparison(s) without an interval are left out of the geometric mean"
        ));
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
    use std::collections::BTreeMap;
    use uuid::Uuid;
    use vernier_model::{
        ConfigurationRecord, Environment, MetricInfo, OptionValue, RunRecord, Rusage, SessionInfo,
        SessionStatus, Settings, StopReason, StoredConfiguration,
    };

    fn run(index: u32, value: f64) -> RunRecord {
        RunRecord {
            id: Uuid::new_v4(),
            index,
            warmup: false,
            round: 0,
            preceding_executions: index,
            started_at_ns: 0,
            ended_at_ns: 1_000_000,
            values: BTreeMap::from([("time".to_string(), value)]),
            rusage: Rusage::default(),
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            monitors: None,
            setup_steps: Vec::new(),
        }
    }

    fn config(name: &str, values: &[f64], higher_is_better: bool) -> StoredConfiguration {
        let mut options = Options::default();
        options
            .0
            .insert("n".to_string(), OptionValue::Text(name.to_string()));
        StoredConfiguration {
            record: ConfigurationRecord {
                id: Uuid::new_v4(),
                position: 0,
                benchmark: "bench".into(),
                benchmark_version: "1".into(),
                options,
                metric: MetricInfo {
                    name: "time".into(),
                    unit: "s".into(),
                    higher_is_better,
                },
                stop_reason: Some(StopReason::Converged),
                converged: true,
                error: None,
            },
            runs: values
                .iter()
                .enumerate()
                .map(|(i, v)| run(i as u32, *v))
                .collect(),
        }
    }

    fn session(fingerprint: &str, configurations: Vec<StoredConfiguration>) -> StoredSession {
        StoredSession {
            info: SessionInfo {
                id: Uuid::new_v4(),
                started_at_ns: 0,
                ended_at_ns: Some(1),
                status: SessionStatus::Completed,
                suite: None,
                specs: Vec::new(),
                tags: BTreeMap::new(),
                note: None,
                settings: Settings::default(),
                vernier_version: "0".into(),
                environment: Environment::default(),
                fingerprint: fingerprint.into(),
                findings: Vec::new(),
                setup: Vec::new(),
                monitors: Vec::new(),
            },
            configurations,
        }
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
    fn equal_samples_are_equivalent() {
        let c = one(&[3.0; 8], &[3.0; 8]);
        assert_eq!(c.ratio, 1.0);
        assert_eq!((c.ratio_ci_low, c.ratio_ci_high), (Some(1.0), Some(1.0)));
        assert_eq!(c.p_value, 1.0);
        assert_eq!(c.welch_ci_low, None);
        assert_eq!(c.verdict, Verdict::Equivalent);
    }

    #[test]
    fn tiny_samples_work_without_interval() {
        let c = one(&[2.0], &[3.0]);
        assert_eq!(c.ratio, 1.5);
        assert_eq!(c.ratio_ci_low, None);
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert_eq!(c.p_value, 1.0);
        assert!(c.warnings[0].contains("too few runs"), "{:?}", c.warnings);
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
        assert!(r.comparisons[0]
            .warnings
            .iter()
            .any(|w| w.starts_with("base: runs come from 2 different environments")));
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
            level: LEVEL,
        };
        assert!(compare(&[], &[], &settings).is_err());
    }
}
