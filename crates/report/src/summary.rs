//! The summary of a configuration: location, precision, spread and warnings. This is also the
//! JSON document of `vernier show --format json` (see docs/json.md), so its field names are a
//! contract.

use serde::Serialize;
use vernier_model::{Options, RunRecord, StoredConfiguration, StoredSession};
use vernier_stats::{mad, mean_ci, median, median_ci, quantile};

/// Confidence level of every interval shown.
pub const LEVEL: f64 = 0.95;

/// Summary of one configuration's measured runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSummary {
    pub benchmark: String,
    pub benchmark_version: String,
    pub options: Options,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Number of measured runs.
    pub n: usize,
    pub warmup_runs: usize,
    pub median: Option<f64>,
    /// Distribution-free 95% CI of the median; absent below 6 runs.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub mean: Option<f64>,
    /// Student-t 95% CI of the mean; absent below 2 runs.
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
    pub warnings: Vec<String>,
    /// The measured values in run order.
    pub values: Vec<f64>,
}

impl ConfigSummary {
    /// `benchmark:opt=value:...`.
    pub fn label(&self) -> String {
        if self.options.0.is_empty() {
            self.benchmark.clone()
        } else {
            format!("{}:{}", self.benchmark, self.options.label())
        }
    }

    /// Relative half-width of the median's CI.
    pub fn relative_half_width(&self) -> Option<f64> {
        match (self.median, self.ci_low, self.ci_high) {
            (Some(m), Some(lo), Some(hi)) if m != 0.0 => Some((hi - lo) / 2.0 / m.abs()),
            _ => None,
        }
    }
}

/// USER_HZ, the unit of /proc/stat: 100 on every Linux architecture vernier runs on.
const USER_HZ: f64 = 100.0;

/// Whether other work ran on the machine during `run`. /proc/stat counts in ticks, so each of
/// the two readings around a run can be off by up to one tick per CPU; anything within that
/// tolerance, plus 5% of one CPU over the run, is treated as noise.
pub fn contaminated(run: &RunRecord, online_cpus: u32) -> bool {
    let tick_ns = 1e9 / USER_HZ;
    let tolerance_ns = 2.0 * tick_ns * f64::from(online_cpus.max(1));
    let wall_ns = (run.ended_at_ns - run.started_at_ns) as f64;
    run.foreign_cpu_ns as f64 > tolerance_ns + 0.05 * wall_ns
}

/// Summarizes one configuration. `online_cpus` sets the tolerance of the contamination signal.
pub fn summarize(config: &StoredConfiguration, online_cpus: u32) -> ConfigSummary {
    let values = config.values();
    let measured: Vec<&RunRecord> = config.runs.iter().filter(|r| !r.warmup).collect();
    let q = |p: f64| quantile(&values, p).ok();
    let median_ci = median_ci(&values, LEVEL).ok().flatten();
    let (mean, mean_ci) = match mean_ci(&values, LEVEL) {
        Ok((m, ci)) => (Some(m), ci),
        Err(_) => (None, None),
    };
    let contaminated_runs = measured
        .iter()
        .filter(|r| contaminated(r, online_cpus))
        .count();
    let record = &config.record;
    let mut warnings = Vec::new();
    if values.len() < 6 {
        warnings.push(format!(
            "only {} measured runs: at least 6 are needed for a 95% CI of the median",
            values.len()
        ));
    }
    match record.stop_reason {
        Some(r) if !record.converged => {
            warnings.push(format!("not converged (stopped: {r})"));
        }
        None => warnings.push("unfinished (the session ended abnormally)".to_string()),
        _ => {}
    }
    if contaminated_runs > 0 {
        warnings.push(format!(
            "{contaminated_runs} of {} runs contaminated by other CPU activity",
            measured.len()
        ));
    }
    ConfigSummary {
        benchmark: record.benchmark.clone(),
        benchmark_version: record.benchmark_version.clone(),
        options: record.options.clone(),
        metric: record.metric.name.clone(),
        unit: record.metric.unit.clone(),
        higher_is_better: record.metric.higher_is_better,
        n: values.len(),
        warmup_runs: config.runs.iter().filter(|r| r.warmup).count(),
        median: median(&values).ok(),
        ci_low: median_ci.map(|c| c.low),
        ci_high: median_ci.map(|c| c.high),
        mean,
        mean_ci_low: mean_ci.map(|c| c.low),
        mean_ci_high: mean_ci.map(|c| c.high),
        min: q(0.0),
        max: q(1.0),
        p90: q(0.90),
        p95: q(0.95),
        p99: q(0.99),
        mad: mad(&values).ok(),
        stop_reason: record.stop_reason.map(|r| r.to_string()),
        converged: record.converged,
        error: record.error.clone(),
        contaminated_runs,
        warnings,
        values,
    }
}

/// Summaries of every configuration of a session, in plan order.
pub fn summarize_session(session: &StoredSession) -> Vec<ConfigSummary> {
    let cpus = session.info.environment.online_cpus.unwrap_or(1);
    session
        .configurations
        .iter()
        .map(|c| summarize(c, cpus))
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
            values: BTreeMap::from([("runtime".to_string(), value)]),
            rusage: Rusage::default(),
            foreign_cpu_ns,
            controller_cpu_ns: 0,
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
                stop_reason: Some(reason),
                converged: reason == StopReason::Converged,
                error: None,
            },
            runs,
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
        assert!(s.warnings[1].contains("not converged (stopped: max-time)"));
    }
}
