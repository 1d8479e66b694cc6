//! The stopping rule (PRODUCT.md, "Principles of accuracy"; docs/statistics.md): estimate the
//! median and stop when its 95% interval is narrow enough relative to the median, within the
//! bounds of runs and time.
//!
//! The interval is an anytime-valid confidence sequence (Howard and Ramdas, Bernoulli 2022;
//! `vernier_stats::confidence_sequence`): it covers the median at every run count at once, so
//! it stays valid at whatever run the rule stops, which a fixed-n interval checked after every
//! run does not (optional stopping). The old fixed-n rule stays selectable
//! ([`StoppingRule::FixedN`]) to measure that difference.
//!
//! Precedence of the bounds, first match wins after every measured run:
//! 1. converged: the interval meets the target, once `min_runs` and `min_time` are done and
//!    (confidence sequence) the multimodality check can judge ([`modality_settled`]);
//! 2. `max_runs` reached;
//! 3. `max_time`: the next run (with its setup waits) would end past the time limit; this
//!    wins over `min_runs` and `min_time`, so the time limit is a bound;
//! 4. `min_runs` or `min_time` not done yet: continue;
//! 5. unreachable (confidence sequence only): the target is out of reach within the runs and
//!    time left, projected from the spread so far;
//! 6. otherwise continue.

use vernier_model::{Settings, StopReason, StoppingRule};
use vernier_stats::{
    bimodality, median_ci, median_cs_min_n, median_cs_sorted, median_sorted,
    projected_median_cs_sorted, Interval, MIN_RUNS_MODALITY,
};

/// A configuration's measured values as the rule reads them: in the order measured (the
/// bimodality coefficient sums them in that order) and sorted (the median, the interval and
/// the projections are order statistics, asked several times after every run). A session keeps
/// one per configuration and adds each run's value in its place ([`Values::push`]), so that
/// the decisions after a run cost no sort: sorting every value again for each of them took a
/// fifth of the controller's CPU time by the 2,000th run of a short command.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Values {
    in_order: Vec<f64>,
    sorted: Vec<f64>,
}

impl Values {
    /// The values of `in_order`, sorted once.
    pub fn from_slice(in_order: &[f64]) -> Self {
        let mut sorted = in_order.to_vec();
        sorted.sort_by(f64::total_cmp);
        Values {
            in_order: in_order.to_vec(),
            sorted,
        }
    }

    /// Adds the value of the next run, after the equal ones (in `f64::total_cmp`'s order, the
    /// order of a sort).
    pub fn push(&mut self, value: f64) {
        let at = self.sorted.partition_point(|v| v.total_cmp(&value).is_le());
        self.sorted.insert(at, value);
        self.in_order.push(value);
    }

    pub fn len(&self) -> usize {
        self.in_order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.in_order.is_empty()
    }

    /// The median, `None` without values (or with one that is not finite).
    fn median(&self) -> Option<f64> {
        median_sorted(&self.sorted).ok()
    }

    /// The precision reached so far.
    pub fn precision(&self, settings: &Settings) -> Precision {
        let median = self.median();
        let ci = self.interval(settings);
        Precision {
            n: self.len(),
            median,
            ci,
            relative_half_width: relative(median, ci),
        }
    }

    /// The interval of the median that the session's rule reports, at the session's
    /// confidence level ([`Settings::confidence_level`], stored with it).
    pub fn interval(&self, settings: &Settings) -> Option<Interval> {
        let level = settings.confidence_level;
        match settings.stopping_rule {
            StoppingRule::ConfidenceSequence => {
                median_cs_sorted(&self.sorted, level).ok().flatten()
            }
            StoppingRule::FixedN => median_ci(&self.in_order, level).ok().flatten(),
        }
    }
}

/// How much wider than the target the projected precision at the end of the budget must be
/// before a configuration is declared unreachable: the projection comes from few runs, and a
/// wrong "unreachable" costs the result its convergence. 1.5 in half-width is about 2.25 in
/// runs.
pub const UNREACHABLE_MARGIN: f64 = 1.5;

/// Fewest measured runs before a configuration can stop as unreachable: the projection from
/// fewer is too rough.
pub const MIN_RUNS_PROJECTION: usize = 10;

/// Fewest measured runs before a configuration whose values may have two modes can stop as
/// unreachable, so that `show`'s multimodality check (bimodality coefficient above 5/9) has the
/// runs it needs: it flagged 42-56% of bimodal sessions that stopped at 10-13 runs, and 98-99%
/// of those that stopped at 20 or more (bench/coverage.sh).
pub const MIN_RUNS_SUSPECTED_MODES: usize = 20;

/// A bimodality coefficient above this, below [`MIN_RUNS_SUSPECTED_MODES`] runs, delays the
/// unreachable stop and convergence: lower than `show`'s threshold (5/9), because the
/// coefficient of two modes is biased low in small samples.
pub const SUSPECTED_MODES: f64 = 0.45;

/// Whether the values may have two modes: a bimodality coefficient above [`SUSPECTED_MODES`]
/// (constant values have none).
fn modes_suspected(values: &[f64]) -> bool {
    bimodality(values).is_ok_and(|b| b.coefficient > SUSPECTED_MODES)
}

/// Whether the multimodality check has had its say, so that a narrow interval may be declared
/// converged: at least [`MIN_RUNS_MODALITY`] runs (from which `show` and `compare` judge), and
/// below [`MIN_RUNS_SUSPECTED_MODES`] no suspicion of two modes.
///
/// Why: on a 50/50 mixture of two modes the median lies between them, and an interval narrow
/// enough to converge lies within one mode; the confidence sequence makes that rare (it covers
/// at every run count at once), but when it happened the session converged on the wrong mode
/// without a warning, 5 of 12 such sessions after 8 runs, before the check could speak
/// (bench/coverage.sh). With this rule a session converges on one mode only when its first
/// 10 runs all fell into it, or when the runs outside it are too few to raise the coefficient
/// (docs/statistics.md, "Two modes").
pub fn modality_settled(values: &[f64]) -> bool {
    values.len() >= MIN_RUNS_MODALITY
        && (values.len() >= MIN_RUNS_SUSPECTED_MODES || !modes_suspected(values))
}

/// The precision reached so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    pub n: usize,
    pub median: Option<f64>,
    pub ci: Option<Interval>,
    /// Half-width of the interval relative to the median; `None` while n is too small for one.
    pub relative_half_width: Option<f64>,
}

fn relative(median: Option<f64>, ci: Option<Interval>) -> Option<f64> {
    match (median, ci) {
        (Some(m), Some(ci)) if m != 0.0 => Some(ci.relative_half_width(m)),
        (Some(_), Some(ci)) if ci.high == ci.low => Some(0.0),
        (Some(_), Some(_)) => Some(f64::INFINITY),
        _ => None,
    }
}

/// Fewest runs for which the session's rule gives an interval at all (at 95%: 8 for the
/// sequence, 6 fixed-n).
pub fn min_runs_for_interval(settings: &Settings) -> u32 {
    match settings.stopping_rule {
        StoppingRule::ConfidenceSequence => {
            median_cs_min_n(settings.confidence_level).map_or(8, |n| n as u32)
        }
        StoppingRule::FixedN => 6,
    }
}

/// How long a configuration has taken so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Elapsed {
    /// Wall time of the measured runs, in seconds (what `min_time` counts).
    pub measured_s: f64,
    /// Setup waits before the measured runs (idle gate, cooldown), in seconds.
    pub waits_s: f64,
    /// Everything the configuration cost: warmups, measured runs and waits, in seconds (what
    /// `max_time` bounds).
    pub total_s: f64,
    /// Cost of the next measured run, waits included: the mean over the measured runs so far
    /// (over all runs before the first measured one).
    pub mean_run_s: f64,
}

impl Values {
    /// Whether to run again. `None` means continue.
    pub fn decide(&self, elapsed: Elapsed, settings: &Settings) -> Option<StopReason> {
        let n = self.len() as u32;
        let floors_done = n >= settings.min_runs && elapsed.measured_s >= settings.min_time_s;
        let p = self.precision(settings);
        let precise = p.relative_half_width.is_some_and(|w| w <= settings.target);
        let settled = match settings.stopping_rule {
            StoppingRule::ConfidenceSequence => modality_settled(&self.in_order),
            StoppingRule::FixedN => true,
        };
        if precise && floors_done && settled {
            return Some(StopReason::Converged);
        }
        if n >= settings.max_runs {
            return Some(StopReason::MaxRuns);
        }
        if out_of_time(elapsed, settings) {
            return Some(StopReason::MaxTime);
        }
        if !floors_done {
            return None;
        }
        if settings.stopping_rule == StoppingRule::ConfidenceSequence {
            if let Some(reachable) = self.reachable_precision(elapsed, settings) {
                if reachable > settings.target * UNREACHABLE_MARGIN {
                    return Some(StopReason::Unreachable);
                }
            }
        }
        None
    }
}

/// Whether the next run, warmup or measured, would end past the time limit: checked before
/// every run so that `max_time` holds as a bound, warmups included.
pub fn out_of_time(elapsed: Elapsed, settings: &Settings) -> bool {
    elapsed.total_s + elapsed.mean_run_s > settings.max_time_s
}

/// The most measured runs the budget allows: `max_runs`, and the runs that fit in the time
/// left at the cost of a run so far.
pub fn budget_runs(n: usize, elapsed: Elapsed, settings: &Settings) -> usize {
    let by_runs = settings.max_runs as usize;
    let left_s = (settings.max_time_s - elapsed.total_s).max(0.0);
    let by_time = if elapsed.mean_run_s > 0.0 {
        n.saturating_add(
            (left_s / elapsed.mean_run_s)
                .floor()
                .min(f64::from(u32::MAX)) as usize,
        )
    } else {
        by_runs
    };
    by_runs.min(by_time).max(n)
}

impl Values {
    /// The relative half-width the confidence sequence is projected to reach at the end of the
    /// budget ([`budget_runs`]), from the spread of the values so far; `None` before
    /// [`MIN_RUNS_PROJECTION`] runs or when no interval is projected.
    pub fn reachable_precision(&self, elapsed: Elapsed, settings: &Settings) -> Option<f64> {
        if self.len() < MIN_RUNS_PROJECTION {
            return None;
        }
        if self.len() < MIN_RUNS_SUSPECTED_MODES && modes_suspected(&self.in_order) {
            return None;
        }
        let budget = budget_runs(self.len(), elapsed, settings);
        let projected = projected_median_cs_sorted(&self.sorted, settings.confidence_level, budget)
            .ok()
            .flatten()?;
        relative(self.median(), Some(projected))
    }
}

/// Projected measured runs until the target is met (at most the budget): the smallest count
/// at which the sequence's interval, projected from the spread so far, meets the target.
fn runs_to_target(values: &Values, budget: usize, settings: &Settings) -> usize {
    let n = values.len();
    if n < 2 {
        return budget;
    }
    let m = values.median();
    if settings.stopping_rule == StoppingRule::FixedN {
        // The old rule's own estimate: the interval narrows as 1/sqrt(n).
        return match values.precision(settings).relative_half_width {
            Some(w) if w.is_finite() && w > settings.target => {
                ((n as f64 * (w / settings.target).powi(2)).ceil() as usize).min(budget)
            }
            Some(_) => n,
            None => budget.min(n.max(6)),
        };
    }
    let meets = |k: usize| {
        let ci = projected_median_cs_sorted(&values.sorted, settings.confidence_level, k)
            .ok()
            .flatten();
        relative(m, ci).is_some_and(|w| w <= settings.target)
    };
    if !meets(budget) {
        return budget;
    }
    // The projected width shrinks with the count: bisect for the first count that meets it.
    let (mut lo, mut hi) = (n, budget);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    hi
}

impl Values {
    /// Estimated further measured runs of a configuration: until the target is met (projected),
    /// at least until `min_runs` and `min_time` are done, never past the budget; none once the
    /// rule would stop.
    pub fn estimated_remaining_runs(&self, elapsed: Elapsed, settings: &Settings) -> u32 {
        if self.decide(elapsed, settings).is_some() {
            return 0;
        }
        let n = self.len();
        let budget = budget_runs(n, elapsed, settings);
        let mut needed = runs_to_target(self, budget, settings);
        needed = needed.max(settings.min_runs as usize);
        if settings.stopping_rule == StoppingRule::ConfidenceSequence {
            // Convergence waits for the multimodality check (modality_settled).
            needed = needed.max(MIN_RUNS_MODALITY);
            if modes_suspected(&self.in_order) {
                needed = needed.max(MIN_RUNS_SUSPECTED_MODES);
            }
        }
        let per_run = if n > 0 {
            elapsed.measured_s / n as f64
        } else {
            0.0
        };
        if elapsed.measured_s < settings.min_time_s && per_run > 0.0 {
            let more = ((settings.min_time_s - elapsed.measured_s) / per_run).ceil() as usize;
            needed = needed.max(n + more);
        }
        needed.min(budget).saturating_sub(n) as u32
    }
}

/// A conflict between the bounds of a session: which bound wins, and why. Shown as the session
/// goes (never stored: the stop reason of each configuration records what happened).
#[derive(Debug, Clone, PartialEq)]
pub enum SettingsWarning {
    /// `--max-runs` below the runs the interval of the median needs.
    MaxRunsBelowInterval { max_runs: u32, needed: u32 },
    /// `--max-runs` enough for an interval but below the runs the multimodality check needs
    /// before a configuration may converge ([`modality_settled`]).
    MaxRunsBelowModality { max_runs: u32, needed: u32 },
    /// `--min-time` at 90% or more of `--max-time`.
    MinTimeNearMaxTime { min_time_s: f64, max_time_s: f64 },
    /// `--min-runs` at the cost of a run so far does not fit in `--max-time`.
    MinRunsExceedMaxTime {
        min_runs: u32,
        mean_run_s: f64,
        needed_s: f64,
        max_time_s: f64,
        budget: usize,
    },
    /// `--min-time` of measured runs does not fit in `--max-time` with the waits so far.
    MinTimeDoesNotFit {
        min_time_s: f64,
        max_time_s: f64,
        waits_s: f64,
    },
}

impl std::fmt::Display for SettingsWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsWarning::MaxRunsBelowInterval { max_runs, needed } => write!(
                f,
                "--max-runs {max_runs} is below the {needed} runs that the interval of the \
                 median needs: no configuration can converge"
            ),
            SettingsWarning::MaxRunsBelowModality { max_runs, needed } => write!(
                f,
                "--max-runs {max_runs} is below the {needed} runs that the multimodality check \
                 needs before a configuration may converge: no configuration can converge"
            ),
            SettingsWarning::MinTimeNearMaxTime {
                min_time_s,
                max_time_s,
            } => write!(
                f,
                "--min-time {min_time_s} s is close to --max-time {max_time_s} s: warmups and \
                 setup waits count against --max-time, which wins, so --min-time may not be \
                 reached"
            ),
            SettingsWarning::MinRunsExceedMaxTime {
                min_runs,
                mean_run_s,
                needed_s,
                max_time_s,
                budget,
            } => write!(
                f,
                "--min-runs {min_runs} at {mean_run_s:.3} s a run (setup waits included) needs \
                 about {needed_s:.0} s, more than --max-time {max_time_s} s allows: --max-time \
                 wins, about {budget} runs"
            ),
            SettingsWarning::MinTimeDoesNotFit {
                min_time_s,
                max_time_s,
                waits_s,
            } => write!(
                f,
                "--min-time {min_time_s} s of measured runs does not fit in --max-time \
                 {max_time_s} s with warmups and setup waits ({waits_s:.1} s of waits so far): \
                 --max-time wins"
            ),
        }
    }
}

/// Conflicts between the settings that are known before anything runs.
pub fn plan_warnings(settings: &Settings) -> Vec<SettingsWarning> {
    let mut warnings = Vec::new();
    let needed = min_runs_for_interval(settings);
    if settings.max_runs < needed {
        warnings.push(SettingsWarning::MaxRunsBelowInterval {
            max_runs: settings.max_runs,
            needed,
        });
    } else if settings.stopping_rule == StoppingRule::ConfidenceSequence
        && (settings.max_runs as usize) < MIN_RUNS_MODALITY
    {
        warnings.push(SettingsWarning::MaxRunsBelowModality {
            max_runs: settings.max_runs,
            needed: MIN_RUNS_MODALITY as u32,
        });
    }
    if settings.min_time_s > 0.0 && settings.min_time_s >= settings.max_time_s * 0.9 {
        warnings.push(SettingsWarning::MinTimeNearMaxTime {
            min_time_s: settings.min_time_s,
            max_time_s: settings.max_time_s,
        });
    }
    warnings
}

/// Conflicts that the first measured run reveals: `min_runs` or `min_time` that cannot fit in
/// `max_time` at the cost of a run so far. `max_time` wins; the warning says so.
pub fn run_warnings(n: usize, elapsed: Elapsed, settings: &Settings) -> Vec<SettingsWarning> {
    let mut warnings = Vec::new();
    if n == 0 || elapsed.mean_run_s <= 0.0 {
        return warnings;
    }
    let budget = budget_runs(n, elapsed, settings);
    if (settings.min_runs as usize) > budget && settings.max_runs as usize > budget {
        warnings.push(SettingsWarning::MinRunsExceedMaxTime {
            min_runs: settings.min_runs,
            mean_run_s: elapsed.mean_run_s,
            needed_s: elapsed.total_s
                + elapsed.mean_run_s * (settings.min_runs as usize - n) as f64,
            max_time_s: settings.max_time_s,
            budget,
        });
    }
    if settings.min_time_s > 0.0 && elapsed.measured_s > 0.0 {
        // Measured time grows by the run's own share of its cost.
        let share = elapsed.measured_s / (elapsed.measured_s + elapsed.waits_s);
        let reachable =
            elapsed.measured_s + (settings.max_time_s - elapsed.total_s).max(0.0) * share;
        if reachable < settings.min_time_s {
            warnings.push(SettingsWarning::MinTimeDoesNotFit {
                min_time_s: settings.min_time_s,
                max_time_s: settings.max_time_s,
                waits_s: elapsed.waits_s,
            });
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(values: &[f64], elapsed: Elapsed, settings: &Settings) -> Option<StopReason> {
        Values::from_slice(values).decide(elapsed, settings)
    }

    fn precision(values: &[f64], settings: &Settings) -> Precision {
        Values::from_slice(values).precision(settings)
    }

    fn reachable_precision(values: &[f64], elapsed: Elapsed, settings: &Settings) -> Option<f64> {
        Values::from_slice(values).reachable_precision(elapsed, settings)
    }

    fn estimated_remaining_runs(values: &[f64], elapsed: Elapsed, settings: &Settings) -> u32 {
        Values::from_slice(values).estimated_remaining_runs(elapsed, settings)
    }

    fn settings() -> Settings {
        Settings {
            target: 0.02,
            min_runs: 6,
            max_runs: 10,
            min_time_s: 0.0,
            max_time_s: 100.0,
            stopping_rule: StoppingRule::FixedN,
            ..Settings::default()
        }
    }

    fn cs() -> Settings {
        Settings {
            stopping_rule: StoppingRule::ConfidenceSequence,
            max_runs: 100,
            ..settings()
        }
    }

    fn elapsed(n: usize) -> Elapsed {
        Elapsed {
            measured_s: n as f64,
            waits_s: 0.0,
            total_s: n as f64 + 1.0,
            mean_run_s: 1.0,
        }
    }

    #[test]
    fn continues_below_min_runs_even_when_identical() {
        let v = [1.0; 5];
        assert_eq!(decide(&v, elapsed(5), &settings()), None);
    }

    #[test]
    fn converges_when_ci_is_narrow() {
        // n = 6: CI = [min, max] = [99, 101]; half-width 1 / median 100 = 1% <= 2%.
        let v = [100.0, 99.0, 101.0, 100.0, 100.5, 99.5];
        assert_eq!(
            decide(&v, elapsed(6), &settings()),
            Some(StopReason::Converged)
        );
        let p = precision(&v, &settings());
        assert_eq!(p.ci.map(|c| (c.low, c.high)), Some((99.0, 101.0)));
        assert!((p.relative_half_width.unwrap() - 0.01).abs() < 1e-12);
    }

    #[test]
    fn the_sequence_needs_eight_runs_and_is_wider() {
        let v = [100.0, 99.0, 101.0, 100.0, 100.5, 99.5];
        assert_eq!(decide(&v, elapsed(6), &cs()), None, "no interval at n = 6");
        assert_eq!(precision(&v, &cs()).ci, None);
        assert_eq!(min_runs_for_interval(&cs()), 8);
        let v8 = [100.0, 99.0, 101.0, 100.0, 100.5, 99.5, 100.2, 99.8];
        let p = precision(&v8, &cs());
        assert_eq!(p.ci.map(|c| (c.low, c.high)), Some((99.0, 101.0)));
        // Narrow enough at 8 runs, but the multimodality check judges from 10.
        assert_eq!(decide(&v8, elapsed(8), &cs()), None);
        let v10 = [
            100.0, 99.0, 101.0, 100.0, 100.5, 99.5, 100.2, 99.8, 100.1, 99.9,
        ];
        assert_eq!(
            decide(&v10, elapsed(10), &cs()),
            Some(StopReason::Converged)
        );
    }

    #[test]
    fn a_suspected_second_mode_delays_convergence_until_the_check_can_see_it() {
        // Eleven runs around 1.0 and one at 1.1: the sequence's interval [x(2), x(11)] lies in
        // the first mode and is narrow, but the bimodality coefficient is far above 0.45.
        let mut v: Vec<f64> = (0..11).map(|i| 1.0 + f64::from(i) * 0.001).collect();
        v.push(1.1);
        assert!(precision(&v, &cs()).relative_half_width.unwrap() < 0.02);
        assert!(!modality_settled(&v));
        assert_eq!(decide(&v, elapsed(12), &cs()), None);
        // From 20 runs on the rule converges as before: show's warning can now flag it.
        let mut twenty: Vec<f64> = (0..19).map(|i| 1.0 + f64::from(i) * 0.0005).collect();
        twenty.push(1.1);
        assert!(modality_settled(&twenty));
        assert_eq!(
            decide(&twenty, elapsed(20), &cs()),
            Some(StopReason::Converged)
        );
        // The old fixed-n rule keeps its behaviour, to be measured against.
        let v6 = [100.0, 99.0, 101.0, 100.0, 100.5, 99.5];
        assert_eq!(
            decide(&v6, elapsed(6), &settings()),
            Some(StopReason::Converged)
        );
    }

    #[test]
    fn fifty_fifty_modes_no_longer_converge_on_one_of_them() {
        // `vernier run 'mock:dist=bimodal:sigma=0.01:share=0.5:seed=444'` converged after 8
        // runs with [0.9945, 1.019] while the true median is 1.0488.
        let dist = vernier_bench::mock::Distribution {
            share: 0.5,
            sigma: 0.01,
            slow: 0.0,
        };
        let truth = {
            // The median by bisection on the mixture's distribution function.
            let (mut lo, mut hi) = (0.9, 1.2);
            for _ in 0..100 {
                let mid = (lo + hi) / 2.0;
                if dist.cdf(mid) < 0.5 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        assert!((truth - 1.0488).abs() < 1e-3, "{truth}");
        let s = Settings::default();
        let mut values = Vec::new();
        let reason = loop {
            values.push(dist.draw(444, values.len() as u32, false));
            let n = values.len();
            if let Some(reason) = decide(&values, elapsed(n), &s) {
                break reason;
            }
        };
        let ci = precision(&values, &s).ci.unwrap();
        if reason == StopReason::Converged {
            assert!(
                ci.low <= truth && truth <= ci.high,
                "{ci:?} after {}",
                values.len()
            );
        }
        assert!(values.len() >= 10, "{} runs", values.len());
    }

    #[test]
    fn the_interval_has_the_sessions_level() {
        let v: Vec<f64> = (0..40)
            .map(|i| 100.0 + f64::from((i * 17) % 40) / 10.0)
            .collect();
        let at = |level| {
            let s = Settings {
                confidence_level: level,
                ..cs()
            };
            precision(&v, &s).relative_half_width.unwrap()
        };
        assert!(at(0.90) <= at(0.95) && at(0.95) <= at(0.99) && at(0.90) < at(0.99));
        assert_eq!(at(0.95), precision(&v, &cs()).relative_half_width.unwrap());
    }

    #[test]
    fn wide_ci_continues_then_hits_max_runs() {
        // [90, 110] around 100: 10% > 2%.
        let v = [100.0, 90.0, 110.0, 100.0, 95.0, 105.0];
        assert_eq!(decide(&v, elapsed(6), &settings()), None);
        let ten = [
            100.0, 90.0, 110.0, 100.0, 95.0, 105.0, 90.0, 110.0, 91.0, 109.0,
        ];
        assert_eq!(
            decide(&ten, elapsed(10), &settings()),
            Some(StopReason::MaxRuns)
        );
    }

    #[test]
    fn min_time_delays_convergence_and_max_time_bounds() {
        let v = [100.0; 6];
        let s = Settings {
            min_time_s: 10.0,
            ..settings()
        };
        assert_eq!(decide(&v, elapsed(6), &s), None);
        // 7 s spent + 1 s expected next run > 7.5 s, although min-time is not done.
        let s = Settings {
            max_time_s: 7.5,
            min_time_s: 7.0,
            ..s
        };
        assert_eq!(decide(&v, elapsed(6), &s), Some(StopReason::MaxTime));
    }

    #[test]
    fn max_time_wins_over_min_runs() {
        let s = Settings {
            min_runs: 100,
            max_runs: 200,
            max_time_s: 10.0,
            ..settings()
        };
        // 3 runs of 3 s: the 4th would end at 12 s > 10 s, although min-runs wants 100.
        let e = Elapsed {
            measured_s: 9.0,
            waits_s: 0.0,
            total_s: 9.0,
            mean_run_s: 3.0,
        };
        assert_eq!(decide(&[1.0, 2.0, 3.0], e, &s), Some(StopReason::MaxTime));
        let w = run_warnings(3, e, &s);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].to_string().contains("--max-time wins, about 3 runs"),
            "{w:?}"
        );
    }

    #[test]
    fn setup_waits_count_against_max_time() {
        let s = Settings {
            max_time_s: 100.0,
            ..cs()
        };
        // Runs of 0.1 s, each after a 60 s idle-gate wait: the next run would end at 120.2 s.
        let e = Elapsed {
            measured_s: 0.1,
            waits_s: 60.0,
            total_s: 60.2,
            mean_run_s: 60.1,
        };
        assert_eq!(decide(&[1.0], e, &s), Some(StopReason::MaxTime));
        assert_eq!(budget_runs(1, e, &s), 1);
    }

    #[test]
    fn unreachable_when_the_budget_cannot_reach_the_target() {
        // Values spread evenly over 80..124 with a budget of 100 runs: the projected interval
        // at 100 runs is about +-7%, beyond 1.5 times the 2% target.
        let noisy: Vec<f64> = (0..24)
            .map(|i| 80.0 + f64::from(i * 5 % 12) * 4.0)
            .collect();
        let s = cs();
        assert_eq!(
            decide(&noisy, elapsed(24), &s),
            Some(StopReason::Unreachable)
        );
        let reach = reachable_precision(&noisy, elapsed(24), &s).unwrap();
        assert!(reach > 0.05 && reach < 0.1, "{reach}");
        // The same spread with a 5% target is within the margin: continue.
        let loose = Settings {
            target: 0.05,
            ..s.clone()
        };
        assert_eq!(decide(&noisy, elapsed(24), &loose), None);
        // Too few runs to project: continue.
        assert_eq!(decide(&noisy[..9], elapsed(9), &s), None);
        // The fixed-n rule never stops for futility.
        let fixed = Settings {
            stopping_rule: StoppingRule::FixedN,
            ..s
        };
        assert_eq!(decide(&noisy, elapsed(24), &fixed), None);
    }

    #[test]
    fn two_modes_delay_the_unreachable_stop_until_show_can_flag_them() {
        // Alternating clusters around 1.0 and 1.1: out of reach at a 2% target, but with a
        // bimodality coefficient above the suspicion level the rule waits for 20 runs.
        let modes: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 1.0 } else { 1.1 } + f64::from(i % 5) * 0.002)
            .collect();
        let s = cs();
        assert!(bimodality(&modes[..12]).unwrap().coefficient > SUSPECTED_MODES);
        assert_eq!(decide(&modes[..12], elapsed(12), &s), None);
        assert_eq!(
            decide(&modes, elapsed(20), &s),
            Some(StopReason::Unreachable)
        );
    }

    #[test]
    fn remaining_runs_follow_the_projection_and_the_budget() {
        let s = cs();
        // Tight values: the target is already met, nothing remains.
        assert_eq!(estimated_remaining_runs(&[100.0; 10], elapsed(10), &s), 0);
        // Met at 8 runs, but convergence waits for the multimodality check's 10.
        assert_eq!(estimated_remaining_runs(&[100.0; 8], elapsed(8), &s), 2);
        // No spread: 10 runs.
        assert_eq!(estimated_remaining_runs(&[1.0, 1.0], elapsed(2), &s), 8);
        // Spread of +-4%: projected to need more runs, within the budget.
        let v: Vec<f64> = (0..8).map(|i| 96.0 + f64::from(i) * 8.0 / 7.0).collect();
        let left = estimated_remaining_runs(&v, elapsed(8), &s);
        assert!(left > 0 && left <= 92, "{left}");
        // The time budget caps it: 5 s left at 1 s a run.
        let short = Settings {
            max_time_s: 14.0,
            ..s
        };
        assert!(estimated_remaining_runs(&v, elapsed(8), &short) <= 5);
    }

    #[test]
    fn values_kept_sorted_run_by_run_decide_as_values_sorted_at_once() {
        // Ties, a negative zero, and a spread wide enough to stop as unreachable.
        let measured: Vec<f64> = (0..60_u32)
            .map(|i| match i % 7 {
                0 => 100.0,
                1 => -0.0,
                2 => 0.0,
                _ => 100.0 + f64::from((i * 37) % 23) * if i % 2 == 0 { 1.0 } else { -3.0 },
            })
            .collect();
        let s = cs();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut kept = Values::default();
        for (n, &value) in measured.iter().enumerate() {
            kept.push(value);
            let whole = Values::from_slice(&measured[..=n]);
            assert_eq!(
                bits(&kept.sorted),
                bits(&whole.sorted),
                "after {} values",
                n + 1
            );
            let e = elapsed(n + 1);
            assert_eq!(kept.decide(e, &s), decide(&measured[..=n], e, &s));
            assert_eq!(kept.precision(&s), precision(&measured[..=n], &s));
            assert_eq!(
                kept.estimated_remaining_runs(e, &s),
                estimated_remaining_runs(&measured[..=n], e, &s)
            );
        }
        assert_eq!(bits(&kept.sorted[..2]), bits(&[-0.0, -0.0]));
        assert_eq!(kept.in_order, measured);
    }

    #[test]
    fn plan_warnings_name_the_conflict() {
        assert!(plan_warnings(&Settings::default()).is_empty());
        let w = plan_warnings(&Settings {
            max_runs: 6,
            ..Settings::default()
        });
        assert!(
            w[0].to_string()
                .contains("--max-runs 6 is below the 8 runs"),
            "{w:?}"
        );
        let w = plan_warnings(&Settings {
            max_runs: 9,
            ..Settings::default()
        });
        assert!(
            w[0].to_string()
                .contains("--max-runs 9 is below the 10 runs that the multimodality check"),
            "{w:?}"
        );
        let w = plan_warnings(&Settings {
            min_time_s: 60.0,
            max_time_s: 60.0,
            ..Settings::default()
        });
        assert!(
            w[0].to_string()
                .contains("--min-time 60 s is close to --max-time 60 s"),
            "{w:?}"
        );
    }
}
