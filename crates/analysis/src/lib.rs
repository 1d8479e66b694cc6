//! What stored results mean: the summary of each configuration with its validity rules
//! (contamination, outliers, drift, multimodality; [`summary`]) and the comparison of two result
//! sets (`vernier compare`). Pure functions of stored sessions, without I/O; `vernier-report`
//! presents what this crate computes.
//!
//! Each configuration (benchmark and options) found on both sides is compared on the log
//! scale, as PRODUCT.md's principles of accuracy prescribe: the ratio NEW/BASE is the
//! exponentiated Hodges-Lehmann shift of the log values with its distribution-free interval,
//! the p-value is Mann-Whitney's, Welch's t interval on logs is a parametric companion, and
//! Benjamini-Hochberg adjusts the p-values across all comparisons. The verdict comes from the
//! interval of the ratio against a practical threshold ([`verdict`]; the rule and its
//! justification are in docs/compare.md). With several sessions the session is the
//! replication unit of that interval (Student's t on the session medians, pooled with a stored
//! calibration); with one session a side it is the runs' interval widened by the
//! session-to-session noise of a calibration or, without one, of a stated default
//! (`session_noise`).
//!
//! [`environment::diff`] says how two environments differ, [`monitors`] summarizes what the
//! monitors recorded, and [`monitors_why`] says which monitor keys moved with a configuration's
//! slow runs.
//!
//! [`history()`] follows each configuration over time on each machine: the series of session
//! medians, its change points and each step measured as compare measures two result sets.

pub mod bisect;
mod calibration;
mod calls;
mod compare;
pub mod environment;
pub mod history;
mod latency;
pub mod monitors;
pub mod monitors_compare;
pub mod monitors_why;
pub mod profile;
mod session_noise;
pub mod summary;
pub mod warnings;

pub use calibration::{estimate_calibration, CalibrationEstimate, CalibrationNote};
pub use calls::{call_distribution, CallDistribution, CallRow};
pub use compare::{
    change_text, compare, compare_calibrated, min_runs_for_verdict, verdict, CompareReport,
    CompareSettings, Comparison, Side, Summary, Unmatched, Verdict, DEFAULT_THRESHOLD,
};
pub use history::{
    history, BaselineKind, Change, ConfigFilter, Cumulative, Direction, Drift, Episode,
    EpisodeSource, HistoryPoint, HistoryReport, HistorySeries, HistorySettings, Step,
};
pub use latency::{
    latency_summary, worst_case, IntervalMax, LatencySummary, Percentile, ThreadLatency, WorstCase,
};
pub use session_noise::{predicted_mdc, NoiseSource, DEFAULT_SESSION_NOISE, MDC_POWER};
pub use summary::{
    summarize, summarize_pooled, summarize_session, summarize_with, ConfigSummary, MetricSummary,
};
pub use warnings::{Warning, Warnings};

/// Why a comparison could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnalysisError {
    /// A ratio needs positive values: the logarithm of zero or a negative number is undefined.
    #[error(
        "{configuration} ({side}): value {value} of run {run} is not positive; a ratio \
         NEW/BASE needs positive values on both sides (the logarithm of zero or of a negative \
         number is undefined)"
    )]
    NotPositive {
        configuration: String,
        side: Side,
        /// Position of the value among the side's measured runs, from 0.
        run: usize,
        value: f64,
    },
    /// A statistic failed on data that passed the checks above (for example a non-finite
    /// value).
    #[error("{configuration}: {source}")]
    Stats {
        configuration: String,
        source: vernier_stats::StatsError,
    },
    #[error("threshold must be a fraction in (0, 1), got {0}")]
    Threshold(f64),
}
