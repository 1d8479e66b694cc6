//! A session as a command asks for it: what to run, the settings of the command line, what to
//! measure beside it and what to do about a busy machine or a signal. Checked and layered by
//! [`crate::run_session`], which runs it.

use vernier_engine::suite::{find_suite, Suite};
use vernier_model::{Settings, SettingsLayer};

use crate::busy::BusyPolicy;
use crate::signals::OnSignal;
use crate::AppError;

/// The suite a session runs without specs or a suite.
pub const DEFAULT_SUITE: &str = "quick";

/// What a command asks a session to be. Lists left empty take the suite's, if any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionRequest {
    /// What to run: `BENCHMARK[:OPTION=VALUE,...]...` specs. Empty without a suite: the
    /// [`DEFAULT_SUITE`].
    pub specs: Vec<String>,
    /// A suite's name or file, instead of specs.
    pub suite: Option<String>,
    /// The command line's layer of settings, over the suite's, over the defaults.
    pub settings: SettingsLayer,
    /// `--monitor` lists; empty: the suite's, else the default monitors.
    pub monitors: Vec<String>,
    /// `--setup` lists; empty: the suite's.
    pub setup: Vec<String>,
    /// `--load` lists; empty: the suite's.
    pub loads: Vec<String>,
    /// Tags, each replacing the suite's tag of the same key; a key given twice is an error.
    pub tags: Vec<(String, String)>,
    pub note: Option<String>,
    pub busy: BusyPolicy,
    pub on_signal: OnSignal,
    /// How long the session may run before it is stopped (`run --time-limit`).
    pub time_limit: TimeLimit,
}

/// How long a session may run, from the start of its first run, before it is stopped as the
/// interrupt stops it, with a `time-limit` finding (`vernier run --time-limit`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum TimeLimit {
    /// From the session's budget ([`default_time_limit_s`]).
    FromBudget,
    /// This many seconds.
    Seconds(f64),
    /// None, the default: a session's own runs are bounded by their timeouts, and the budget
    /// cannot bound everything before them (compile's preparation builds a whole kernel, and a
    /// defconfig build on two CPUs takes longer than any fixed margin); a monitor runs until
    /// it is told to stop.
    #[default]
    Off,
}

/// The least margin of [`default_time_limit_s`] over a session's budget: room for what the
/// budget does not bound (the first run of a configuration, allowed 10 minutes before its
/// length is known; setup waits; a benchmark's preparation, such as compile's kernel tree).
pub const TIME_LIMIT_MARGIN_S: f64 = 1_800.0;

/// The time limit of a session of `configurations` configurations, each bounded by
/// `max_time_s` (`max-time`, warmups included): that budget twice over, and at least the
/// budget plus [`TIME_LIMIT_MARGIN_S`]. A session still running then is far beyond anything
/// its settings allow (a run that never ends, a setup wait that never does) and would
/// otherwise keep a scheduled machine for ever.
pub fn default_time_limit_s(configurations: usize, max_time_s: f64) -> f64 {
    let budget = configurations as f64 * max_time_s;
    budget + budget.max(TIME_LIMIT_MARGIN_S)
}

/// The suite and the specs that `specs` and `suite` name: a suite's specs, the specs given, or
/// with neither the default suite's.
pub fn resolve_specs(
    specs: &[String],
    suite: Option<&str>,
) -> Result<(Option<Suite>, Vec<String>), AppError> {
    let suite = match (suite, specs.is_empty()) {
        (Some(name), _) => Some(find_suite(name, crate::config::suite_dir().as_deref())?),
        (None, true) => Some(find_suite(DEFAULT_SUITE, None)?),
        (None, false) => None,
    };
    let specs = match &suite {
        Some(s) => s.specs.clone(),
        None => specs.to_vec(),
    };
    Ok((suite, specs))
}

/// A session's settings and the limit of one run (seconds): the defaults (with a random
/// seed), then the suite's layer, then the command line's. The one place where they are
/// layered.
pub fn layered_settings(
    suite: Option<&Suite>,
    flags: &SettingsLayer,
) -> Result<(Settings, Option<f64>), AppError> {
    let mut settings = Settings {
        seed: rand::random(),
        ..Settings::default()
    };
    let mut run_timeout_s = None;
    for layer in suite.map(|s| &s.settings).into_iter().chain([flags]) {
        layer.apply(&mut settings);
        run_timeout_s = layer.run_timeout_s.or(run_timeout_s);
    }
    if flags.seed.is_some() && !settings.interleave {
        return Err(AppError::SeedWithoutInterleave);
    }
    Ok((settings, run_timeout_s))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use vernier_engine::suite::{parse_suite, SuiteSource};

    fn suite(settings: &str) -> Suite {
        let text = format!("description = \"t\"\nspecs = [\"mock\"]\n[settings]\n{settings}\n");
        parse_suite("t", &text, SuiteSource::Builtin).unwrap()
    }

    #[test]
    fn the_default_time_limit_doubles_the_budget_with_half_an_hour_at_least() {
        // The quick suite: 4 configurations of at most 20 s.
        assert_eq!(default_time_limit_s(4, 20.0), 80.0 + 1_800.0);
        // 10 configurations of at most 10 minutes.
        assert_eq!(default_time_limit_s(10, 600.0), 12_000.0);
        assert_eq!(default_time_limit_s(0, 60.0), 1_800.0);
    }

    #[test]
    fn flags_win_over_the_suite_which_wins_over_the_defaults() {
        let suite = suite("warmup = 3\nmax-runs = 50\nrun-timeout = 9.0\ninterleave = true");
        let flags = SettingsLayer {
            max_runs: Some(20),
            interleave: Some(false),
            ..SettingsLayer::default()
        };
        let (settings, run_timeout) = layered_settings(Some(&suite), &flags).unwrap();
        assert_eq!(settings.warmup, 3);
        assert_eq!(settings.max_runs, 20);
        assert!(!settings.interleave);
        assert_eq!(settings.min_runs, Settings::default().min_runs);
        assert_eq!(run_timeout, Some(9.0));
        let flags = SettingsLayer {
            run_timeout_s: Some(2.0),
            ..SettingsLayer::default()
        };
        assert_eq!(layered_settings(Some(&suite), &flags).unwrap().1, Some(2.0));
        assert_eq!(layered_settings(None, &flags).unwrap().0.warmup, 1);
    }

    #[test]
    fn a_seed_needs_interleaving_from_a_flag_or_the_suite() {
        let seeded = SettingsLayer {
            seed: Some(7),
            ..SettingsLayer::default()
        };
        let error = layered_settings(None, &seeded).unwrap_err().to_string();
        assert!(error.starts_with("--seed sets the order"), "{error}");
        let interleaving = suite("interleave = true");
        let (settings, _) = layered_settings(Some(&interleaving), &seeded).unwrap();
        assert_eq!((settings.seed, settings.interleave), (7, true));
        let seeded_suite = suite("seed = 5");
        let (settings, _) =
            layered_settings(Some(&seeded_suite), &SettingsLayer::default()).unwrap();
        assert_eq!(settings.seed, 5);
    }
}
