//! Execution settings of a session: warmup, the stopping rule's bounds and interleaving.

use serde::{Deserialize, Serialize};

use crate::profile::{ProfileScope, ProfileSettings};

/// The confidence level of every interval vernier computes: the stopping rule's, the summaries'
/// and the comparisons'. Stored with each session ([`Settings::confidence_level`]); sessions
/// recorded before it was stored read as this level, the only one vernier has used.
pub const CONFIDENCE_LEVEL: f64 = 0.95;

/// A confidence level as people write it in headers and sentences: 0.95 is "95%", 0.975 is
/// "97.5%".
pub fn level_percent(level: f64) -> String {
    let pct = format!("{:.1}", level * 100.0);
    format!("{}%", pct.strip_suffix(".0").unwrap_or(&pct))
}

fn default_confidence_level() -> f64 {
    CONFIDENCE_LEVEL
}

/// How each configuration of a session is repeated. Stored with the session, so a result can
/// always be read together with the rule that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Warmup runs per configuration: executed in fresh processes, stored, never analysed.
    pub warmup: u32,
    /// Target relative half-width of the 95% interval of the median (0.02 = 2%).
    pub target: f64,
    pub min_runs: u32,
    pub max_runs: u32,
    /// Minimum measured time per configuration, in seconds.
    pub min_time_s: f64,
    /// Maximum time per configuration (warmups included), in seconds.
    pub max_time_s: f64,
    /// Run the configurations in randomized rounds instead of one after another.
    pub interleave: bool,
    /// Seed of the random generator that orders the rounds.
    pub seed: u64,
    /// Which interval of the median the stopping rule uses, and so what the stored result's
    /// interval means. Sessions recorded before this was stored used the fixed-n interval.
    #[serde(default = "StoppingRule::legacy")]
    pub stopping_rule: StoppingRule,
    /// Confidence level of the intervals of this session ([`CONFIDENCE_LEVEL`] when it was
    /// recorded; absent in older sessions, which read as 0.95).
    #[serde(default = "default_confidence_level")]
    pub confidence_level: f64,
    /// The profiled runs after each configuration's timed runs (`--profile`); off in sessions
    /// recorded before profiles existed.
    #[serde(default, skip_serializing_if = "ProfileSettings::is_off")]
    pub profile: ProfileSettings,
}

/// The interval of the median that decides when to stop (docs/statistics.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StoppingRule {
    /// Anytime-valid 95% confidence sequence (Howard and Ramdas 2022), with a stop for
    /// futility: valid at whatever run count the rule stops.
    ConfidenceSequence,
    /// The fixed-n 95% order-statistic interval, checked after every run: optional stopping,
    /// its coverage falls below 95% (kept to measure that, and to read old sessions).
    FixedN,
}

impl StoppingRule {
    /// The rule of sessions stored without one.
    pub fn legacy() -> Self {
        StoppingRule::FixedN
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StoppingRule::ConfidenceSequence => "confidence-sequence",
            StoppingRule::FixedN => "fixed-n",
        }
    }

    /// What the interval of the median at confidence `level` means under this rule, for
    /// people.
    pub fn interval_meaning(self, level: f64) -> String {
        let level = level_percent(level);
        match self {
            StoppingRule::ConfidenceSequence => format!(
                "anytime-valid {level} confidence sequence for the median (Howard and Ramdas 2022)"
            ),
            StoppingRule::FixedN => format!(
                "fixed-n {level} order-statistic CI of the median, checked after every run \
                 (optional stopping: coverage can fall below {level})"
            ),
        }
    }
}

impl std::str::FromStr for StoppingRule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "confidence-sequence" => Ok(StoppingRule::ConfidenceSequence),
            "fixed-n" => Ok(StoppingRule::FixedN),
            other => Err(format!(
                "unknown stopping rule '{other}'; valid: confidence-sequence, fixed-n"
            )),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            warmup: 1,
            target: 0.02,
            min_runs: 6,
            max_runs: 100,
            min_time_s: 0.0,
            max_time_s: 60.0,
            interleave: false,
            seed: 0,
            stopping_rule: StoppingRule::ConfidenceSequence,
            confidence_level: CONFIDENCE_LEVEL,
            profile: ProfileSettings::default(),
        }
    }
}

/// One layer of settings: the values that a suite (its `[settings]` table) or a command's flags
/// set, `None` for what the layer leaves to the one below. A session's settings are the
/// defaults, then its suite's layer, then its flags' (`vernier_app`, which layers them in one
/// place). Read from a suite file under the flags' names; the stopping rule is a hidden flag
/// and no key of a suite.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SettingsLayer {
    pub warmup: Option<u32>,
    /// A fraction, 0.02 for 2%.
    pub target: Option<f64>,
    pub min_runs: Option<u32>,
    pub max_runs: Option<u32>,
    #[serde(rename = "min-time")]
    pub min_time_s: Option<f64>,
    #[serde(rename = "max-time")]
    pub max_time_s: Option<f64>,
    /// The limit of one run; not a [`Settings`] field: the executor's.
    #[serde(rename = "run-timeout")]
    pub run_timeout_s: Option<f64>,
    pub interleave: Option<bool>,
    pub seed: Option<u64>,
    #[serde(skip)]
    pub stopping_rule: Option<StoppingRule>,
    /// Profiled runs per configuration (`--profile[=N]`; 0: none).
    pub profile: Option<u32>,
    pub profile_scope: Option<ProfileScope>,
    pub profile_frequency: Option<u32>,
}

impl SettingsLayer {
    /// `settings` with what this layer sets in place of their values.
    pub fn apply(&self, settings: &mut Settings) {
        settings.warmup = self.warmup.unwrap_or(settings.warmup);
        settings.target = self.target.unwrap_or(settings.target);
        settings.min_runs = self.min_runs.unwrap_or(settings.min_runs);
        settings.max_runs = self.max_runs.unwrap_or(settings.max_runs);
        settings.min_time_s = self.min_time_s.unwrap_or(settings.min_time_s);
        settings.max_time_s = self.max_time_s.unwrap_or(settings.max_time_s);
        settings.interleave = self.interleave.unwrap_or(settings.interleave);
        settings.seed = self.seed.unwrap_or(settings.seed);
        settings.stopping_rule = self.stopping_rule.unwrap_or(settings.stopping_rule);
        settings.profile.runs = self.profile.unwrap_or(settings.profile.runs);
        settings.profile.scope = self.profile_scope.unwrap_or(settings.profile.scope);
        settings.profile.frequency_hz = self
            .profile_frequency
            .unwrap_or(settings.profile.frequency_hz);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stopping_rule_defaults_to_the_sequence_and_reads_old_settings_as_fixed_n() {
        assert_eq!(
            Settings::default().stopping_rule,
            StoppingRule::ConfidenceSequence
        );
        let json = serde_json::to_value(Settings::default()).unwrap();
        assert_eq!(json["stopping_rule"], "confidence-sequence");
        let mut old = json.as_object().unwrap().clone();
        old.remove("stopping_rule");
        let read: Settings = serde_json::from_value(serde_json::Value::Object(old)).unwrap();
        assert_eq!(read.stopping_rule, StoppingRule::FixedN);
        for r in [StoppingRule::ConfidenceSequence, StoppingRule::FixedN] {
            assert_eq!(r.as_str().parse::<StoppingRule>(), Ok(r));
        }
        assert!("sprt".parse::<StoppingRule>().is_err());
    }

    #[test]
    fn a_layer_replaces_only_what_it_sets() {
        let mut settings = Settings::default();
        SettingsLayer {
            warmup: Some(0),
            max_time_s: Some(5.0),
            interleave: Some(true),
            stopping_rule: Some(StoppingRule::FixedN),
            run_timeout_s: Some(9.0),
            ..SettingsLayer::default()
        }
        .apply(&mut settings);
        let want = Settings {
            warmup: 0,
            max_time_s: 5.0,
            interleave: true,
            stopping_rule: StoppingRule::FixedN,
            ..Settings::default()
        };
        assert_eq!(settings, want);
        SettingsLayer::default().apply(&mut settings);
        assert_eq!(settings, want);
    }

    #[test]
    fn levels_read_as_percentages() {
        assert_eq!(level_percent(CONFIDENCE_LEVEL), "95%");
        assert_eq!(level_percent(0.9), "90%");
        assert_eq!(level_percent(0.975), "97.5%");
    }
}
