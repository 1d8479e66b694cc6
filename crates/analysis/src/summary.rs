//! The summary of a configuration: location, precision, spread and warnings. This is also the
//! JSON document of `vernier show --format json` (see docs/json.md), so its field names are a
//! contract.

use serde::Serialize;
use vernier_model::histogram::RUN_CONDITIONS;
use vernier_model::{
    ConfigKey, OptionValue, Options, RunRecord, StoppingRule, StoredConfiguration, StoredSession,
    CONFIDENCE_LEVEL,
};
use vernier_stats::{
    bimodality, mad, mean_ci, median, median_ci, median_cs, median_cs_min_n, quantile, sorted,
    spearman_drift, TukeyClass, TukeyFences,
};

use crate::warnings::{Warning, Warnings};

/// Rows of the distribution of per-call times: about as many as the kbench write-up's graph.
const CALL_ROWS: usize = 20;

/// Summary of one configuration's measured runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSummary {
    pub benchmark: String,
    pub benchmark_version: String,
    pub options: Options,
    /// The load profiles that ran during every measured run (`--load`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<String>,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Number of measured runs.
    pub n: usize,
    pub warmup_runs: usize,
    pub median: Option<f64>,
    /// Confidence level of the intervals (the session's, 0.95 unless recorded otherwise).
    pub level: f64,
    /// Distribution-free interval of the median at `level` of the session's stopping rule
    /// (`ci_method`); absent below 8 runs (confidence sequence) or 6 (fixed-n).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Which interval `ci_low` and `ci_high` are: `confidence-sequence` or `fixed-n`.
    pub ci_method: String,
    /// What that interval means, in words.
    pub ci_meaning: String,
    pub mean: Option<f64>,
    /// Student-t CI of the mean at `level`; absent below 2 runs.
    pub mean_ci_low: Option<f64>,
    pub mean_ci_high: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    /// Median absolute deviation (unscaled).
    pub mad: Option<f64>,
    pub stop_reason: Option<String>,
    pub converged: bool,
    pub error: Option<String>,
    /// Runs whose foreign CPU time exceeds the tolerance (see [`contaminated`]).
    pub contaminated_runs: usize,
    /// Runs measured while a value their session's setup set had been changed by something
    /// else (`RunRecord::setup_changed`).
    pub setup_changed_runs: usize,
    /// Runs outside Tukey's inner fences (see [`distribution_checks`]); classified, never
    /// removed from the statistics.
    pub outlier_runs: usize,
    /// In JSON `warnings` (texts) and `warning_codes`.
    #[serde(flatten)]
    pub warnings: Warnings,
    /// The measured values in run order.
    pub values: Vec<f64>,
    /// CPU time the loads used during each measured run, in run order (runs without a
    /// record of it left out); empty without loads.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub load_cpu_ns: Vec<i64>,
    /// The secondary metrics of the configuration (latency's max, p99.9, ...), each over the
    /// measured runs that reported it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secondary: Vec<MetricSummary>,
    /// The latency distributions per measurement thread, when the runs carry latency
    /// histograms and they were loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<crate::latency::LatencySummary>,
    /// The distribution of per-call times (the `syscall` benchmark), when the runs carry
    /// histograms of calls and they were loaded; drawn by `show --histogram` (not in JSON,
    /// whose per-run metrics already hold its figures).
    #[serde(skip)]
    pub calls: Option<crate::calls::CallDistribution>,
    /// The monitor keys that moved with the slow runs, and what sets the outlier runs apart
    /// (docs/why.md), when the runs' monitor data were loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_runs: Option<crate::monitors_why::SlowRuns>,
}

/// A secondary metric over a configuration's measured runs: its median with the same interval
/// as the primary metric's, and its range.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSummary {
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Measured runs that reported it (a high quantile is left out of runs too short for it).
    pub n: usize,
    pub median: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl ConfigSummary {
    /// `benchmark:opt=value:...`, and the loads when there are any.
    pub fn label(&self) -> String {
        ConfigKey::loaded(&self.benchmark, &self.options, &self.loads).to_string()
    }

    /// Relative half-width of the median's CI.
    pub fn relative_half_width(&self) -> Option<f64> {
        match (self.median, self.ci_low, self.ci_high) {
            (Some(m), Some(lo), Some(hi)) if m != 0.0 => Some((hi - lo) / 2.0 / m.abs()),
            _ => None,
        }
    }
}

/// Whether other work ran on the machine during `run`. /proc/stat counts in ticks, so each of
/// the two readings around a run can be off by up to one tick per CPU; anything within that
/// tolerance, plus 5% of one CPU over the run, is treated as noise.
pub fn contaminated(run: &RunRecord, online_cpus: u32) -> bool {
    let tick_ns = 1e9 / vernier_model::record::USER_HZ as f64;
    let tolerance_ns = 2.0 * tick_ns * f64::from(online_cpus.max(1));
    let wall_ns = (run.ended_at_ns - run.started_at_ns) as f64;
    run.foreign_cpu_ns as f64 > tolerance_ns + 0.05 * wall_ns
}

/// Fewest runs for which outliers are classified: below 4 the quartiles are the data.
pub const MIN_RUNS_OUTLIERS: usize = 4;
/// Fewest runs for the drift test: with fewer, only extreme trends reach significance.
pub const MIN_RUNS_DRIFT: usize = 8;
/// Significance level of the drift test. Strict, because a warning is printed for every
/// configuration and a 5% level would cry wolf on one configuration in twenty.
pub const DRIFT_P: f64 = 0.01;
/// Fewest runs for the bimodality coefficient (`vernier_stats::MIN_RUNS_MODALITY`, which the
/// stopping rule also waits for before it declares convergence).
pub use vernier_stats::MIN_RUNS_MODALITY;

/// What [`distribution_checks`] finds in a series of measured values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DistributionChecks {
    /// Values outside Tukey's inner fences (1.5 IQR beyond the quartiles).
    pub outliers: usize,
    /// Of those, values outside the outer fences (3 IQR).
    pub severe_outliers: usize,
    /// Spearman's rho of value against run index and its p-value, when the series trends
    /// significantly (p < [`DRIFT_P`]).
    pub drift: Option<(f64, f64)>,
    /// The bimodality coefficient, when it exceeds [`BIMODALITY_THRESHOLD`].
    pub bimodality: Option<f64>,
    /// One per finding, for the `warnings` of a summary or a comparison.
    pub warnings: Vec<Warning>,
}

/// Outliers (Tukey fences; Tukey, *Exploratory Data Analysis*, 1977), drift (Spearman rank
/// correlation of value against run index) and multimodality (bimodality coefficient, SAS
/// definition; Pfister et al., Front. Psychol. 2013) of `values` in run order. Each check
/// needs a minimum number of runs (the `MIN_RUNS_*` constants) and is skipped below it.
/// Outliers are counted, never removed: the statistics stay those of all runs.
pub fn distribution_checks(values: &[f64]) -> DistributionChecks {
    let mut checks = DistributionChecks::default();
    let n = values.len();
    if n >= MIN_RUNS_OUTLIERS {
        // Tukey's classes only: `classify_outliers` would add modified z-scores, three more
        // sorts of the values, that no check here reads.
        if let Ok(fences) = TukeyFences::of(values) {
            for class in values.iter().map(|&x| fences.classify(x)) {
                checks.outliers += usize::from(class.is_outlier());
                checks.severe_outliers += usize::from(matches!(
                    class,
                    TukeyClass::LowSevere | TukeyClass::HighSevere
                ));
            }
        }
    }
    if checks.outliers > 0 {
        checks.warnings.push(Warning::Outliers {
            outliers: checks.outliers,
            severe: checks.severe_outliers,
            n,
        });
    }
    if n >= MIN_RUNS_DRIFT {
        // A constant series is Degenerate: no trend, nothing to say.
        if let Ok(s) = spearman_drift(values) {
            if s.p < DRIFT_P {
                checks.drift = Some((s.rho, s.p));
                checks.warnings.push(Warning::Drift { rho: s.rho, p: s.p });
            }
        }
    }
    if n >= MIN_RUNS_MODALITY {
        if let Ok(b) = bimodality(values) {
            if b.suggests_bimodality() {
                checks.bimodality = Some(b.coefficient);
                checks.warnings.push(Warning::Multimodal {
                    coefficient: b.coefficient,
                });
            }
        }
    }
    checks
}

/// Summarizes one configuration of a session recorded without a stopping rule (fixed-n
/// interval). `online_cpus` sets the tolerance of the contamination signal.
pub fn summarize(config: &StoredConfiguration, online_cpus: u32) -> ConfigSummary {
    summarize_with(
        config,
        online_cpus,
        StoppingRule::legacy(),
        CONFIDENCE_LEVEL,
    )
}

/// Summarizes one configuration whose runs the stopping rule `rule` chose: the interval of the
/// median is that rule's, the one valid where it stopped, at confidence `level` (the session's,
/// [`vernier_model::Settings::confidence_level`]).
pub fn summarize_with(
    config: &StoredConfiguration,
    online_cpus: u32,
    rule: StoppingRule,
    level: f64,
) -> ConfigSummary {
    let record = &config.record;
    // Every metric's values and the run conditions' from one pass over the runs; the
    // conditions are counted from their columns: a run holds each metric once.
    let names: Vec<&str> = record
        .metrics()
        .map(|m| m.name.as_str())
        .chain(RUN_CONDITIONS.iter().map(|c| c.value))
        .collect();
    let mut columns = config.metric_columns(&names).into_iter();
    let values = columns.next().unwrap_or_default();
    let secondary_values: Vec<Vec<f64>> = columns
        .by_ref()
        .take(record.secondary_metrics.len())
        .collect();
    let condition_values: Vec<Vec<f64>> = columns.collect();
    // The order statistics below from one sorted copy: each sorts what it is given, which for a
    // sorted slice is one pass (a session of 1,000,000 runs sorted 100,000 values ten times a
    // configuration). The mean and the checks of run order take `values` as they are.
    let ordered = sorted(&values);
    let measured: Vec<&RunRecord> = config.runs.iter().filter(|r| !r.warmup).collect();
    let q = |p: f64| quantile(&ordered, p).ok();
    let (median_ci, min_n) = match rule {
        StoppingRule::ConfidenceSequence => (
            median_cs(&ordered, level).ok().flatten(),
            median_cs_min_n(level).unwrap_or(8),
        ),
        StoppingRule::FixedN => (median_ci(&ordered, level).ok().flatten(), 6),
    };
    let (mean, mean_ci) = match mean_ci(&values, level) {
        Ok((m, ci)) => (Some(m), ci),
        Err(_) => (None, None),
    };
    let contaminated_runs = measured
        .iter()
        .filter(|r| contaminated(r, online_cpus))
        .count();
    let mut warnings = Warnings::default();
    if values.len() < min_n {
        warnings.push(Warning::FewRuns {
            n: values.len(),
            min_n,
            level,
        });
    }
    match record.stop_reason {
        Some(vernier_model::StopReason::Unreachable) if !record.converged => {
            warnings.push(Warning::Unreachable);
        }
        Some(r) if !record.converged => {
            warnings.push(Warning::NotConverged {
                reasons: vec![r.to_string()],
            });
        }
        None => warnings.push(Warning::Unfinished { several: false }),
        _ => {}
    }
    if contaminated_runs > 0 {
        warnings.push(Warning::Contaminated {
            runs: contaminated_runs,
            of: measured.len(),
        });
    }
    let setup_changed_runs = measured
        .iter()
        .filter(|r| !r.setup_changed.is_empty())
        .count();
    if setup_changed_runs > 0 {
        warnings.push(Warning::SetupChanged {
            runs: setup_changed_runs,
            of: measured.len(),
        });
    }
    for (condition, column) in RUN_CONDITIONS.iter().zip(&condition_values) {
        let off_on_purpose = condition.off_by.is_some_and(|(option, value)| {
            matches!(record.options.get(option), Some(OptionValue::Text(v)) if v == value)
        });
        let runs = column.iter().filter(|v| **v == 0.0).count();
        if runs > 0 && !off_on_purpose {
            warnings.push(Warning::ConditionNotMet {
                missing: condition.missing,
                runs,
                of: measured.len(),
            });
        }
    }
    let checks = distribution_checks(&values);
    warnings.extend(checks.warnings);
    let secondary = record
        .secondary_metrics
        .iter()
        .zip(&secondary_values)
        .map(|(m, values)| {
            // Order statistics only: sorted once, as the primary metric's values are.
            let values = sorted(values);
            let ci = match rule {
                StoppingRule::ConfidenceSequence => median_cs(&values, level).ok().flatten(),
                StoppingRule::FixedN => vernier_stats::median_ci(&values, level).ok().flatten(),
            };
            MetricSummary {
                metric: m.name.clone(),
                unit: m.unit.clone(),
                higher_is_better: m.higher_is_better,
                n: values.len(),
                median: median(&values).ok(),
                ci_low: ci.map(|c| c.low),
                ci_high: ci.map(|c| c.high),
                min: quantile(&values, 0.0).ok(),
                max: quantile(&values, 1.0).ok(),
            }
        })
        .collect();
    ConfigSummary {
        benchmark: record.benchmark.clone(),
        benchmark_version: record.benchmark_version.clone(),
        options: record.options.clone(),
        loads: record.loads.clone(),
        metric: record.metric.name.clone(),
        unit: record.metric.unit.clone(),
        higher_is_better: record.metric.higher_is_better,
        n: values.len(),
        warmup_runs: config.runs.iter().filter(|r| r.warmup).count(),
        median: median(&ordered).ok(),
        level,
        ci_low: median_ci.map(|c| c.low),
        ci_high: median_ci.map(|c| c.high),
        ci_method: rule.as_str().to_string(),
        ci_meaning: rule.interval_meaning(level),
        mean,
        mean_ci_low: mean_ci.map(|c| c.low),
        mean_ci_high: mean_ci.map(|c| c.high),
        min: q(0.0),
        max: q(1.0),
        p90: q(0.90),
        p95: q(0.95),
        p99: q(0.99),
        mad: mad(&ordered).ok(),
        stop_reason: record.stop_reason.map(|r| r.to_string()),
        converged: record.converged,
        error: record.error.clone(),
        contaminated_runs,
        setup_changed_runs,
        outlier_runs: checks.outliers,
        warnings,
        values,
        load_cpu_ns: measured.iter().filter_map(|r| r.load_cpu_ns).collect(),
        secondary,
        latency: crate::latency::latency_summary(config, vernier_model::histogram::LATENCY),
        calls: crate::calls::call_distribution(config, CALL_ROWS),
        slow_runs: crate::monitors_why::slow_runs(config),
    }
}

/// Summaries of every configuration of a session, in plan order.
pub fn summarize_session(session: &StoredSession) -> Vec<ConfigSummary> {
    let cpus = session.info.environment.online_cpus.unwrap_or(1);
    session
        .configurations
        .iter()
        .map(|c| {
            summarize_with(
                c,
                cpus,
                session.info.settings.stopping_rule,
                session.info.settings.confidence_level,
            )
        })
        .collect()
}

/// Summaries of several sessions pooled, one per configuration (benchmark, options and loads) in
/// the order the configurations first appear: the measured runs of a configuration in every
/// session form one sample, as `compare` pools the sessions a tag selects. The stopping rule,
/// confidence level and CPU count are the first session's. One session gives
/// [`summarize_session`]'s summaries.
pub fn summarize_pooled(sessions: &[StoredSession]) -> Vec<ConfigSummary> {
    let Some(first) = sessions.first() else {
        return Vec::new();
    };
    if sessions.len() == 1 {
        return summarize_session(first);
    }
    let mut pooled: Vec<StoredConfiguration> = Vec::new();
    for session in sessions {
        for c in &session.configurations {
            let key = |x: &StoredConfiguration| (x.record.key(), x.record.metric.name.clone());
            match pooled.iter_mut().find(|p| key(p) == key(c)) {
                Some(p) => p.runs.extend(c.runs.iter().cloned()),
                None => pooled.push(c.clone()),
            }
        }
    }
    let cpus = first.info.environment.online_cpus.unwrap_or(1);
    pooled
        .iter()
        .map(|c| {
            summarize_with(
                c,
                cpus,
                first.info.settings.stopping_rule,
                first.info.settings.confidence_level,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use uuid::Uuid;
    use vernier_model::{ConfigurationRecord, MetricInfo, Rusage, StopReason};

    fn run(index: u32, warmup: bool, value: f64, foreign_cpu_ns: i64) -> RunRecord {
        RunRecord {
            id: Uuid::nil(),
            index,
            warmup,
            round: 0,
            preceding_executions: index,
            started_at_ns: 0,
            ended_at_ns: 1_000_000_000,
            values: BTreeMap::from([("runtime".to_string(), value)]).into(),
            rusage: Rusage::default(),
            foreign_cpu_ns,
            controller_cpu_ns: 0,
            load_cpu_ns: None,
            histograms: Vec::new(),
            monitors: None,
            setup_steps: Vec::new(),
            setup_changed: Vec::new(),
        }
    }

    fn config(runs: Vec<RunRecord>, reason: StopReason) -> StoredConfiguration {
        StoredConfiguration {
            record: ConfigurationRecord {
                id: Uuid::nil(),
                position: 0,
                benchmark: "hackbench".into(),
                benchmark_version: "1".into(),
                options: Options::default(),
                metric: MetricInfo {
                    name: "runtime".into(),
                    unit: "s".into(),
                    higher_is_better: false,
                },
                secondary_metrics: Vec::new(),
                loads: Vec::new(),
                stop_reason: Some(reason),
                converged: reason == StopReason::Converged,
                error: None,
            },
            runs,
            profiles: Vec::new(),
        }
    }

    #[test]
    fn summary_of_known_values() {
        let mut runs = vec![run(0, true, 99.0, 0)];
        for (i, v) in [5.0, 1.0, 4.0, 2.0, 3.0, 6.0].iter().enumerate() {
            runs.push(run(i as u32, false, *v, 0));
        }
        let s = summarize(&config(runs, StopReason::Converged), 2);
        assert_eq!(s.n, 6);
        assert_eq!(s.warmup_runs, 1);
        assert_eq!(s.median, Some(3.5));
        assert_eq!((s.ci_low, s.ci_high), (Some(1.0), Some(6.0)));
        assert_eq!((s.min, s.max), (Some(1.0), Some(6.0)));
        assert_eq!(s.mad, Some(1.5));
        assert_eq!(s.values, vec![5.0, 1.0, 4.0, 2.0, 3.0, 6.0]);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn warns_on_few_runs_non_convergence_and_contamination() {
        // Tolerance for 2 CPUs over 1 s: 2 ticks * 2 CPUs = 40 ms, plus 50 ms.
        let runs = vec![
            run(0, false, 1.0, 89_000_000),
            run(1, false, 1.0, 91_000_000),
        ];
        let s = summarize(&config(runs, StopReason::MaxTime), 2);
        assert_eq!(s.contaminated_runs, 1);
        assert_eq!(s.ci_low, None);
        assert_eq!(s.warnings.len(), 3, "{:?}", s.warnings);
        assert!(s.warnings[1]
            .to_string()
            .contains("not converged (stopped: max-time)"));
    }

    #[test]
    fn warns_on_runs_without_their_conditions_unless_turned_off_on_purpose() {
        let values = [1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.0, 1.02];
        let conditions = |i: usize| {
            // Run 2 without locked memory, runs 3 and 5 without the PM QoS request.
            let locked = if i == 2 { 0.0 } else { 1.0 };
            let held = if i == 3 || i == 5 { 0.0 } else { 1.0 };
            [("memory_locked", locked), ("dma_latency_held", held)]
        };
        let runs: Vec<RunRecord> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut r = run(i as u32, false, *v, 0);
                r.values
                    .extend(conditions(i).map(|(k, v)| (k.to_string(), v)));
                r
            })
            .collect();
        let mut c = config(runs, StopReason::Converged);
        let codes = |c: &StoredConfiguration| -> Vec<String> {
            summarize(c, 2)
                .warnings
                .iter()
                .filter(|w| w.code() == "condition-not-met")
                .map(ToString::to_string)
                .collect()
        };
        let warned = codes(&c);
        assert_eq!(warned.len(), 2, "{warned:?}");
        assert!(warned[0].starts_with("1 of 8 runs measured without locked memory"));
        assert!(warned[1].starts_with("2 of 8 runs measured without /dev/cpu_dma_latency"));
        c.record
            .options
            .0
            .insert("dma_latency".into(), OptionValue::Text("off".into()));
        let warned = codes(&c);
        assert_eq!(warned.len(), 1, "dma_latency=off asked for it: {warned:?}");
        assert!(warned[0].contains("locked memory"));
    }

    #[test]
    fn outliers_are_counted_and_kept() {
        let values = [10.0, 10.2, 9.9, 10.1, 9.8, 10.0, 30.0];
        let mut runs = Vec::new();
        for (i, v) in values.iter().enumerate() {
            runs.push(run(i as u32, false, *v, 0));
        }
        let s = summarize(&config(runs, StopReason::Converged), 2);
        assert_eq!(s.outlier_runs, 1);
        assert_eq!(s.n, 7);
        assert_eq!(s.max, Some(30.0));
        assert!(
            s.warnings
                .iter()
                .any(|w| w.to_string().contains("1 of 7 runs are outliers (1 severe")),
            "{:?}",
            s.warnings
        );
    }

    #[test]
    fn drift_is_reported_with_its_direction() {
        let up: Vec<f64> = (0..12).map(|i| 1.0 + f64::from(i) * 0.01).collect();
        let c = distribution_checks(&up);
        let (rho, p) = c.drift.unwrap();
        assert_eq!(rho, 1.0);
        assert!(p < DRIFT_P);
        assert!(
            c.warnings
                .iter()
                .any(|w| w.to_string().contains("trend upward")),
            "{c:?}"
        );
        let down: Vec<f64> = up.iter().rev().copied().collect();
        assert!(distribution_checks(&down).warnings[0]
            .to_string()
            .contains("downward"));
        // Too short a series is not tested.
        assert_eq!(distribution_checks(&up[..7]).drift, None);
    }

    #[test]
    fn two_clusters_are_flagged_multimodal() {
        // Alternating, so there is no trend; two tight clusters far apart.
        let values: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 1.0 } else { 2.0 } + f64::from(i % 3) * 0.001)
            .collect();
        let c = distribution_checks(&values);
        assert!(c.bimodality.is_some(), "{c:?}");
        assert_eq!(c.drift, None);
        assert_eq!(c.outliers, 0);
        assert!(c
            .warnings
            .iter()
            .any(|w| w.to_string().contains("multimodal")));
    }

    #[test]
    fn the_session_rule_chooses_the_interval() {
        let runs: Vec<RunRecord> = (1..=20).map(|i| run(i, false, f64::from(i), 0)).collect();
        let c = config(runs, StopReason::Converged);
        let fixed = summarize(&c, 2);
        assert_eq!((fixed.ci_low, fixed.ci_high), (Some(6.0), Some(15.0)));
        assert_eq!(fixed.ci_method, "fixed-n");
        let cs = summarize_with(&c, 2, StoppingRule::ConfidenceSequence, CONFIDENCE_LEVEL);
        assert_eq!((cs.ci_low, cs.ci_high), (Some(4.0), Some(17.0)));
        assert_eq!(cs.ci_method, "confidence-sequence");
        assert!(cs.ci_meaning.contains("anytime-valid"), "{}", cs.ci_meaning);
        let few = summarize_with(
            &config(vec![run(0, false, 1.0, 0); 7], StopReason::MaxTime),
            2,
            StoppingRule::ConfidenceSequence,
            CONFIDENCE_LEVEL,
        );
        assert_eq!(few.ci_low, None);
        let futile = summarize_with(
            &config(vec![run(0, false, 1.0, 0); 12], StopReason::Unreachable),
            2,
            StoppingRule::ConfidenceSequence,
            CONFIDENCE_LEVEL,
        );
        assert!(
            futile.warnings[0]
                .to_string()
                .contains("unreachable: the target was out of reach"),
            "{:?}",
            futile.warnings
        );
        assert!(
            few.warnings[0]
                .to_string()
                .contains("at least 8 are needed"),
            "{:?}",
            few.warnings
        );
    }

    #[test]
    fn quiet_series_has_no_warnings() {
        let values = [5.0, 5.1, 4.9, 5.05, 4.95, 5.02, 4.98, 5.08, 4.92, 5.03];
        assert_eq!(distribution_checks(&values), DistributionChecks::default());
        assert_eq!(distribution_checks(&[]), DistributionChecks::default());
        assert_eq!(
            distribution_checks(&[1.0; 12]),
            DistributionChecks::default()
        );
    }
}
