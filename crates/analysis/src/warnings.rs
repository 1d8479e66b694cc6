//! Every warning attached to a summary (`vernier show`) or a comparison (`vernier compare`): a
//! closed set, each with a stable code for the JSON documents (`warning_codes`) and its wording
//! here, in one place (hyperfine's `output/warnings.rs` is the model). The rules that raise
//! them are in [`crate::summary`] and the comparison.

use std::fmt;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use vernier_stats::BIMODALITY_THRESHOLD;

use vernier_model::text::plural;

use crate::{Side, Verdict};

/// What threatens the validity of a result.
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// Fewer measured runs than an interval of the median needs.
    FewRuns { n: usize, min_n: usize, level: f64 },
    /// The configuration stopped before its target (the stop reasons, `max-runs`, ...).
    NotConverged { reasons: Vec<String> },
    /// Stopped as unreachable: the target was out of reach within the budget.
    Unreachable,
    /// The session recording the runs ended abnormally; `several` when a side of a
    /// comparison pools several sessions.
    Unfinished { several: bool },
    /// Runs during which other work used noticeable CPU time (`crate::summary::contaminated`).
    Contaminated { runs: usize, of: usize },
    /// Runs measured while a value that their session's setup set had been changed by
    /// something else (`RunRecord::setup_changed`).
    SetupChanged { runs: usize, of: usize },
    /// Runs that measured without one of the conditions of their benchmark
    /// ([`vernier_model::histogram::RUN_CONDITIONS`]); `missing` says which and what it does.
    ConditionNotMet {
        missing: &'static str,
        runs: usize,
        of: usize,
    },
    /// Runs outside Tukey's fences, of which `severe` outside the outer ones; kept.
    Outliers {
        outliers: usize,
        severe: usize,
        n: usize,
    },
    /// Values trend with run order (Spearman's rho and its p-value).
    Drift { rho: f64, p: f64 },
    /// The bimodality coefficient suggests two modes.
    Multimodal { coefficient: f64 },
    /// Too few runs for an interval of the ratio; `note` says how many are needed.
    TooFewRunsForRatio {
        level: f64,
        base_n: usize,
        new_n: usize,
        note: String,
    },
    /// Ties leave the interval of the ratio without width.
    ZeroWidthInterval { level: f64 },
    /// A verdict withheld because runs were contaminated: (side, contaminated, measured).
    VerdictWithheld {
        verdict: Verdict,
        contaminated: Vec<(Side, usize, usize)>,
    },
    /// Ties show values rounded to a grid of `step` (relative to the smallest value); the
    /// interval's ends were moved out by what rounding can move the ratio, or, when `limits`,
    /// the grid is too coarse for any interval.
    Rounded { step: f64, limits: bool },
    /// The interval excludes 1 but reaches into the threshold's band.
    WithinThreshold { threshold: f64 },
    /// The two sides measure in different units or directions.
    MetricDiffers {
        base_unit: String,
        base_higher_is_better: bool,
        new_unit: String,
        new_higher_is_better: bool,
    },
    /// The two sides ran different versions of the benchmark.
    VersionDiffers { base: Vec<String>, new: Vec<String> },
    /// One side's runs come from several environment fingerprints.
    MixedEnvironments { fingerprints: Vec<String> },
    /// One side's runs come from several versions of the benchmark.
    MixedVersions { versions: Vec<String> },
    /// A warning about one side of a comparison.
    OnSide { side: Side, warning: Box<Warning> },
    /// No calibration of session-to-session noise for these environments: the default was
    /// assumed.
    NoCalibration {
        environments: Vec<String>,
        configurations: usize,
    },
    /// Sessions of several machines (machine-id(5)) that share one hostname are pooled: a
    /// `host=NAME` selector took them all.
    MachinesNamedAlike {
        hostname: String,
        machine_ids: Vec<String>,
    },
    /// Times and rates mixed: no geometric mean of their ratios.
    OppositeDirections,
    /// Comparisons without an interval, left out of the geometric mean.
    LeftOutOfGeomean { count: usize },
}

impl Warning {
    /// The stable code of the warning in the JSON documents (`warning_codes`); a warning on one
    /// side has the code of the warning.
    pub fn code(&self) -> &'static str {
        match self {
            Warning::FewRuns { .. } => "few-runs",
            Warning::NotConverged { .. } => "not-converged",
            Warning::Unreachable => "unreachable",
            Warning::Unfinished { .. } => "unfinished",
            Warning::Contaminated { .. } => "contaminated",
            Warning::SetupChanged { .. } => "setup-changed",
            Warning::ConditionNotMet { .. } => "condition-not-met",
            Warning::Outliers { .. } => "outliers",
            Warning::Drift { .. } => "drift",
            Warning::Multimodal { .. } => "multimodal",
            Warning::TooFewRunsForRatio { .. } => "too-few-runs-for-ratio",
            Warning::ZeroWidthInterval { .. } => "zero-width-interval",
            Warning::VerdictWithheld { .. } => "verdict-withheld",
            Warning::Rounded { .. } => "rounded",
            Warning::WithinThreshold { .. } => "within-threshold",
            Warning::MetricDiffers { .. } => "metric-differs",
            Warning::VersionDiffers { .. } => "version-differs",
            Warning::MixedEnvironments { .. } => "mixed-environments",
            Warning::MixedVersions { .. } => "mixed-versions",
            Warning::OnSide { warning, .. } => warning.code(),
            Warning::NoCalibration { .. } => "no-calibration",
            Warning::MachinesNamedAlike { .. } => "machines-named-alike",
            Warning::OppositeDirections => "opposite-directions",
            Warning::LeftOutOfGeomean { .. } => "left-out-of-geomean",
        }
    }

    /// This warning about `side`.
    pub fn on(self, side: Side) -> Warning {
        Warning::OnSide {
            side,
            warning: Box::new(self),
        }
    }
}

/// A fraction as a percentage with two significant digits at most (0.05 is 5%, 0.0125 1.2%).
fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p >= 10.0 {
        format!("{p:.0}%")
    } else if p >= 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

fn direction(higher_is_better: bool) -> &'static str {
    if higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::FewRuns { n, min_n, level } => write!(
                f,
                "only {n} measured runs: at least {min_n} are needed for a {:.0}% interval of \
                 the median",
                level * 100.0
            ),
            Warning::NotConverged { reasons } => {
                write!(f, "not converged (stopped: {})", reasons.join(", "))
            }
            Warning::Unreachable => f.write_str(
                "not converged (stopped: unreachable: the target was out of reach within the \
                 runs and time allowed, projected from the spread of the runs)",
            ),
            Warning::Unfinished { several: false } => {
                f.write_str("unfinished (the session ended abnormally)")
            }
            Warning::Unfinished { several: true } => {
                f.write_str("unfinished (a session ended abnormally)")
            }
            Warning::Contaminated { runs, of } => {
                write!(f, "{runs} of {of} runs contaminated by other CPU activity")
            }
            Warning::SetupChanged { runs, of } => write!(
                f,
                "{runs} of {of} runs measured while something else had changed a value the \
                 setup set (see the session's findings)"
            ),
            Warning::ConditionNotMet { missing, runs, of } => {
                write!(f, "{runs} of {of} runs measured without {missing}")
            }
            Warning::Outliers {
                outliers,
                severe,
                n,
            } => write!(
                f,
                "{outliers} of {n} runs are outliers ({severe} severe; Tukey fences), kept in \
                 the statistics"
            ),
            Warning::Drift { rho, p } => {
                let way = if *rho > 0.0 { "upward" } else { "downward" };
                let p = if *p < 1e-4 {
                    "p < 0.0001".to_string()
                } else {
                    format!("p = {p:.4}")
                };
                write!(
                    f,
                    "drift: values trend {way} with run order (Spearman rho {rho:.2}, {p})"
                )
            }
            Warning::Multimodal { coefficient } => write!(
                f,
                "possibly multimodal (bimodality coefficient {coefficient:.2} > \
                 {BIMODALITY_THRESHOLD:.3}): the median may fall between modes and its interval \
                 is not to be trusted; look at the histogram (show --histogram) before using \
                 this result"
            ),
            Warning::TooFewRunsForRatio {
                level,
                base_n,
                new_n,
                note,
            } => write!(
                f,
                "too few runs for a {:.0}% CI of the ratio (base {base_n}, new {new_n}; {note}): \
                 ratio of the medians, verdict inconclusive",
                level * 100.0
            ),
            Warning::ZeroWidthInterval { level } => write!(
                f,
                "the {:.0}% CI of the ratio has zero width: ties leave no spread to measure \
                 (timer resolution or rounding too coarse, or constant runs); no interval, \
                 verdict inconclusive",
                level * 100.0
            ),
            Warning::VerdictWithheld {
                verdict,
                contaminated,
            } => {
                let sides: Vec<String> = contaminated
                    .iter()
                    .map(|(side, runs, of)| format!("{side}: {runs} of {of} runs"))
                    .collect();
                write!(
                    f,
                    "verdict {verdict} withheld: {} contaminated by other CPU activity (the \
                     tolerance of `show`), so the interval does not describe this machine at \
                     rest; verdict inconclusive",
                    sides.join(", ")
                )
            }
            Warning::Rounded {
                step,
                limits: false,
            } => write!(
                f,
                "values are rounded (ties; a step of {} of the smallest value): each end of the \
                 interval is moved out by the most that rounding can move the ratio",
                percent(*step)
            ),
            Warning::Rounded { step, limits: true } => write!(
                f,
                "values are rounded to a step of {} of the smallest value (ties): too coarse \
                 for an interval of the ratio, verdict inconclusive",
                percent(*step)
            ),
            Warning::WithinThreshold { threshold } => write!(
                f,
                "the ratio differs from 1 (CI excludes 1) but may be within the {:.1}% threshold",
                threshold * 100.0
            ),
            Warning::MetricDiffers {
                base_unit,
                base_higher_is_better,
                new_unit,
                new_higher_is_better,
            } => write!(
                f,
                "the metric differs: base in {base_unit} ({}), new in {new_unit} ({})",
                direction(*base_higher_is_better),
                direction(*new_higher_is_better)
            ),
            Warning::VersionDiffers { base, new } => write!(
                f,
                "benchmark version differs: base {}, new {}",
                base.join(", "),
                new.join(", ")
            ),
            Warning::MixedEnvironments { fingerprints } => write!(
                f,
                "runs come from {} different environments (fingerprints {})",
                fingerprints.len(),
                fingerprints.join(", ")
            ),
            Warning::MixedVersions { versions } => {
                write!(f, "benchmark versions differ ({})", versions.join(", "))
            }
            Warning::OnSide { side, warning } => write!(f, "{side}: {warning}"),
            Warning::NoCalibration {
                environments,
                configurations,
            } => write!(
                f,
                "no calibration for environment {} ({} with one session a side): their intervals and verdicts assume a session-to-session noise \
                 of {} (docs/compare.md); vernier calibrate measures this machine's",
                environments.join(", "),
                plural(*configurations, "configuration"),
                percent(crate::session_noise::DEFAULT_SESSION_NOISE)
            ),
            Warning::MachinesNamedAlike {
                hostname,
                machine_ids,
            } => write!(
                f,
                "{} machines named {hostname} are pooled (machine ids {}); host=MACHINE-ID \
                 selects one",
                machine_ids.len(),
                machine_ids
                    .iter()
                    .map(|id| crate::history::short_machine_id(id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Warning::OppositeDirections => f.write_str(
                "metrics of opposite directions (times and rates): no geometric mean of their \
                 ratios",
            ),
            Warning::LeftOutOfGeomean { count } => write!(
                f,
                "{} without an interval {} left out of the geometric mean",
                plural(*count, "comparison"),
                if *count == 1 { "is" } else { "are" }
            ),
        }
    }
}

/// The warnings of a summary or a comparison. In JSON (with `#[serde(flatten)]`) they are two
/// fields: `warnings`, the texts, as documents before the codes had them, and
/// `warning_codes`, the codes in the same order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Warnings(pub Vec<Warning>);

impl Warnings {
    /// The texts joined by `separator` (CSV puts them in one field).
    pub fn joined(&self, separator: &str) -> String {
        let texts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        texts.join(separator)
    }
}

impl std::ops::Deref for Warnings {
    type Target = Vec<Warning>;

    fn deref(&self) -> &Vec<Warning> {
        &self.0
    }
}

impl std::ops::DerefMut for Warnings {
    fn deref_mut(&mut self) -> &mut Vec<Warning> {
        &mut self.0
    }
}

impl<'a> IntoIterator for &'a Warnings {
    type Item = &'a Warning;
    type IntoIter = std::slice::Iter<'a, Warning>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl Serialize for Warnings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let texts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        let codes: Vec<&str> = self.0.iter().map(Warning::code).collect();
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("warnings", &texts)?;
        map.serialize_entry("warning_codes", &codes)?;
        map.end()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn json_carries_texts_and_codes_side_by_side() {
        #[derive(Serialize)]
        struct Doc {
            n: u32,
            #[serde(flatten)]
            warnings: Warnings,
        }
        let doc = Doc {
            n: 1,
            warnings: Warnings(vec![
                Warning::Drift { rho: 1.0, p: 0.0 },
                Warning::Contaminated { runs: 2, of: 9 }.on(Side::New),
            ]),
        };
        let json = serde_json::to_value(&doc).unwrap();
        assert_eq!(json["warning_codes"][0], "drift");
        assert_eq!(json["warning_codes"][1], "contaminated");
        assert_eq!(
            json["warnings"][1],
            "new: 2 of 9 runs contaminated by other CPU activity"
        );
        assert_eq!(
            json["warnings"][0],
            "drift: values trend upward with run order (Spearman rho 1.00, p < 0.0001)"
        );
    }
}
