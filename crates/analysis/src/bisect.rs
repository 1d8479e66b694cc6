//! The decision rule of `vernier bisect` (docs/bisect.md): which commit of a range made a
//! configuration slower, from sessions measured at some of its commits, under session noise.
//!
//! The commits of the range are positions `0..=n`: 0 the good end, `n` the bad end. Each
//! measured session of a commit is summarized by the median of its log values and the
//! Maritz-Jarrett variance of that median ([`SessionMedian`]), as `compare` summarizes a
//! session, and the session is the replication unit ([`crate::session_noise`]): run `j` of
//! session `i` at commit `c` is `mu_c + b_i + e_ij`. Every commit measured is a group of the
//! one-way layout, so the mean square of the session medians around their commits' means,
//! with `sessions - commits` degrees of freedom, estimates `tau^2 + mean v` from all the
//! sessions of the bisection at once, pooled with a stored calibration of the machine when one
//! exists (`vernier calibrate`; brought to the runs per session as `compare` does). The session
//! noise is a property of the machine, not of a commit, so the ends' and every step's sessions
//! sharpen every comparison; with `compare`'s two-sided layout alone, two sessions against one
//! would have one degree of freedom.
//!
//! At a commit `c`, the interval (Student's t on the pooled mean square) of its level against
//! the pooled sessions of each end, oriented so that the regression is positive:
//! - **bad**: `c` differs from the good end beyond the threshold (the interval of `c - good`
//!   lies above `ln(1 + t)`) and not from the bad end (that of `c - bad` does not lie below
//!   `-ln(1 + t)`);
//! - **good**: the reverse;
//! - **partial**: both rejected: `c` lies between the ends, beyond the threshold from each (a
//!   step that explains part of the regression; only possible with a threshold below half of
//!   it); the first bad commit is then at or before `c`;
//! - **undecided**: neither: more sessions at `c` and at the ends, up to a number per commit,
//!   after which `c` is skipped (as `git bisect skip`), or up to the budget.
//!
//! The threshold `t` is the size of change that counts: by default half the regression
//! measured between the ends, so that a commit is called by the end it is closer to. The
//! ends must first be apart: the interval of `bad - good` must lie beyond the threshold (with
//! the default, the regression measured to within half its size), else more sessions at the
//! ends.
//!
//! The state is a pure function of the measurements ([`plan`]): a bisection interrupted, or
//! resumed after a reboot, replays its calls from the stored sessions, with the noise estimate
//! of all of them. `examples/bisect_simulation.rs` measures how often this names the right
//! commit and what it costs, against `git bisect run` with one session a step.

use std::collections::BTreeSet;

use serde::Serialize;
use vernier_model::Calibration;
use vernier_stats::{
    between_session_variance, mean, normal_quantile, t_cdf, t_quantile, SessionMedian, StatsError,
};

use crate::session_noise::{PooledCalibration, DEFAULT_SESSION_NOISE};

/// How a bisection decides and what it may spend.
#[derive(Debug, Clone, PartialEq)]
pub struct BisectSettings {
    /// The relative change that counts (0.05 = 5%); `None`: half the regression measured
    /// between the ends.
    pub threshold: Option<f64>,
    /// Confidence level of each interval.
    pub level: f64,
    /// Whether a larger value is better (a rate), so that the regression is a fall.
    pub higher_is_better: bool,
    /// Sessions at each end before anything is decided.
    pub end_sessions: usize,
    /// Sessions at one commit after which, still undecided, it is skipped.
    pub commit_sessions: usize,
    /// Sessions the whole bisection may run, the ends' included.
    pub budget_sessions: usize,
}

impl Default for BisectSettings {
    fn default() -> Self {
        BisectSettings {
            threshold: None,
            level: 0.95,
            higher_is_better: false,
            end_sessions: 2,
            commit_sessions: 10,
            budget_sessions: 60,
        }
    }
}

/// Why a bisection's measurements cannot be judged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BisectError {
    #[error("a bisection needs a good and a bad end: at least 2 commits, got {0}")]
    TooFewCommits(usize),
    #[error("commit {index} of the range is outside it (0 to {last})")]
    OutOfRange { index: usize, last: usize },
    #[error("threshold must be a fraction in (0, 1), got {0}")]
    Threshold(f64),
    #[error("sessions must hold positive values: {0}")]
    Stats(#[from] StatsError),
}

/// The sessions measured at each commit of the range, and the commits that cannot be measured
/// (their build failed).
#[derive(Debug, Clone, Default)]
pub struct Measurements {
    /// Per commit (position in the range), its sessions.
    pub sessions: Vec<Vec<SessionMedian>>,
    /// Commits skipped for good: their build failed.
    pub unbuildable: BTreeSet<usize>,
    /// Measured runs per session (mean), to bring a calibration to the sessions' scale.
    pub runs_per_session: f64,
}

impl Measurements {
    /// An empty record of a range of `commits` commits (the ends included).
    pub fn new(commits: usize) -> Self {
        Measurements {
            sessions: vec![Vec::new(); commits],
            unbuildable: BTreeSet::new(),
            runs_per_session: 0.0,
        }
    }

    /// Adds the session of `values` (its measured runs, positive) at commit `index`.
    pub fn add_session(&mut self, index: usize, values: &[f64]) -> Result<(), BisectError> {
        let last = self.sessions.len().saturating_sub(1);
        let slot = self
            .sessions
            .get_mut(index)
            .ok_or(BisectError::OutOfRange { index, last })?;
        if let Some((index, value)) = values
            .iter()
            .enumerate()
            .find(|(_, v)| !(**v > 0.0 && v.is_finite()))
        {
            return Err(StatsError::NotPositive {
                index,
                value: *value,
            }
            .into());
        }
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        slot.push(SessionMedian::of(&logs)?);
        let total: usize = self.sessions.iter().map(Vec::len).sum();
        self.runs_per_session += (values.len() as f64 - self.runs_per_session) / total as f64;
        Ok(())
    }

    /// Sessions measured in all.
    pub fn spent(&self) -> usize {
        self.sessions.iter().map(Vec::len).sum()
    }
}

/// The session noise of a bisection: the pooled mean square of the session log-medians around
/// their commits' means and its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Noise {
    pub mean_square: f64,
    /// Infinite: the default session noise, taken as known.
    pub df: f64,
    /// Whether a calibration is pooled in.
    pub calibrated: bool,
}

/// An interval of a difference of log levels, oriented so that the regression is positive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Difference {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Difference {
    /// The interval as a ratio of values (the later commit over the earlier), in the metric's
    /// own direction: `(ratio, low, high)`.
    pub fn ratio(&self, higher_is_better: bool) -> (f64, f64, f64) {
        if higher_is_better {
            (
                (-self.estimate).exp(),
                (-self.high).exp(),
                (-self.low).exp(),
            )
        } else {
            (self.estimate.exp(), self.low.exp(), self.high.exp())
        }
    }
}

/// What a step concluded about its commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Call {
    Good,
    Bad,
    /// Between the ends, beyond the threshold from each.
    Partial,
    /// Within the noise: more sessions, or skipped.
    Undecided,
    /// Left out: undecided after the most sessions a commit may have, or its build failed.
    Skipped,
}

impl Call {
    pub fn as_str(self) -> &'static str {
        match self {
            Call::Good => "good",
            Call::Bad => "bad",
            Call::Partial => "partial",
            Call::Undecided => "undecided",
            Call::Skipped => "skipped",
        }
    }
}

/// One commit visited by the bisection, with the call it got.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub index: usize,
    pub sessions: usize,
    pub call: Call,
    /// Its level against the good end (absent without sessions).
    pub from_good: Option<Difference>,
    /// Its level against the bad end.
    pub from_bad: Option<Difference>,
    /// For a call of good, bad or partial: the probability that it is wrong ([`call_error`]).
    pub error: Option<f64>,
}

/// A measured commit's level: the geometric mean of its session medians, with its interval
/// from the bisection's pooled session noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CommitLevel {
    pub index: usize,
    pub sessions: usize,
    pub level: f64,
    pub low: f64,
    pub high: f64,
}

/// The levels of every measured commit of `m`, in commit order, at `level` confidence.
pub fn commit_levels(
    m: &Measurements,
    noise: &Noise,
    level: f64,
) -> Result<Vec<CommitLevel>, BisectError> {
    let p = 0.5 + level / 2.0;
    let q = if noise.df.is_finite() {
        t_quantile(p, noise.df)?
    } else {
        normal_quantile(p)?
    };
    let mut out = Vec::new();
    for (index, sessions) in m.sessions.iter().enumerate() {
        if sessions.is_empty() {
            continue;
        }
        let center = mean(&sessions.iter().map(|s| s.median).collect::<Vec<_>>())?;
        let half = q * (noise.mean_square / sessions.len() as f64).sqrt();
        out.push(CommitLevel {
            index,
            sessions: sessions.len(),
            level: center.exp(),
            low: (center - half).exp(),
            high: (center + half).exp(),
        });
    }
    Ok(out)
}

/// How a bisection ended, or that it goes on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum Outcome {
    /// Measure one more session at this commit.
    Measure { index: usize },
    /// The first bad commit, its effect against the last good one, and the share of the whole
    /// regression it explains.
    Found {
        first_bad: usize,
        last_good: usize,
        effect: Difference,
        /// `effect` over the regression between the ends (1: all of it).
        share: f64,
        /// The effect differs from the whole regression (another commit explains the rest).
        partial: bool,
    },
    /// The budget is spent: the first bad commit is in `(last_good, first_bad]`.
    BudgetSpent { last_good: usize, first_bad: usize },
    /// Every commit between the last good and the first bad one was skipped.
    Skipped { last_good: usize, first_bad: usize },
    /// The ends are not apart by the threshold in the direction of a regression (the budget
    /// spent trying).
    NoRegression,
}

/// The state of a bisection from its measurements: the steps so far, the regression between
/// the ends, and what to do next.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub steps: Vec<Step>,
    /// `bad - good`, oriented (positive for a regression); absent before both ends have
    /// sessions.
    pub regression: Option<Difference>,
    /// The threshold in effect (relative), once known.
    pub threshold: Option<f64>,
    pub noise: Option<Noise>,
    pub outcome: Outcome,
    pub spent: usize,
    /// With a first bad commit found: the probability that it is the right one, the product
    /// over the calls that led to it of one minus each call's error ([`call_error`]).
    pub confidence: Option<f64>,
}

/// The noise estimate of `m` (with the calibrations of the machine and configuration, pooled)
/// or `None` before any commit has two sessions or a calibration exists: then the default
/// session noise is taken as known.
pub fn noise(m: &Measurements, calibrations: &[Calibration]) -> Result<Noise, BisectError> {
    let groups: Vec<&[SessionMedian]> = m
        .sessions
        .iter()
        .filter(|s| !s.is_empty())
        .map(Vec::as_slice)
        .collect();
    let sessions: usize = groups.iter().map(|g| g.len()).sum();
    let (mut squares, mut df) = (0.0, 0.0);
    if sessions > groups.len() {
        let own = between_session_variance(&groups)?;
        squares += own.mean_square * own.df;
        df += own.df;
    }
    let calibration = PooledCalibration::of(calibrations);
    if let Some(c) = calibration {
        let runs = if m.runs_per_session > 0.0 {
            m.runs_per_session
        } else {
            c.runs_per_session
        };
        squares += c.mean_square_at(runs) * c.df;
        df += c.df;
    }
    if df > 0.0 {
        return Ok(Noise {
            mean_square: squares / df,
            df,
            calibrated: calibration.is_some(),
        });
    }
    // One session per commit and no calibration: the default session noise, as compare
    // assumes it, plus the sessions' own within part.
    let within: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.iter().map(|s| s.within_variance))
        .collect();
    let within = if within.is_empty() {
        0.0
    } else {
        mean(&within)?
    };
    Ok(Noise {
        mean_square: DEFAULT_SESSION_NOISE * DEFAULT_SESSION_NOISE + within,
        df: f64::INFINITY,
        calibrated: false,
    })
}

/// The oriented interval of `level(a) - level(b)` at `level` confidence.
fn difference(
    a: &[SessionMedian],
    b: &[SessionMedian],
    noise: &Noise,
    sign: f64,
    level: f64,
) -> Result<Option<Difference>, BisectError> {
    if a.is_empty() || b.is_empty() {
        return Ok(None);
    }
    let level_of = |s: &[SessionMedian]| mean(&s.iter().map(|m| m.median).collect::<Vec<_>>());
    let estimate = sign * (level_of(a)? - level_of(b)?);
    let se = (noise.mean_square * (1.0 / a.len() as f64 + 1.0 / b.len() as f64)).sqrt();
    let p = 0.5 + level / 2.0;
    let q = if noise.df.is_finite() {
        t_quantile(p, noise.df)?
    } else {
        normal_quantile(p)?
    };
    Ok(Some(Difference {
        estimate,
        low: estimate - q * se,
        high: estimate + q * se,
    }))
}

/// The call at a commit from its intervals against the ends and the threshold `h` (log).
fn call(from_good: &Difference, from_bad: &Difference, h: f64) -> Call {
    let rejects_good = from_good.low > h;
    let rejects_bad = from_bad.high < -h;
    match (rejects_good, rejects_bad) {
        (true, false) => Call::Bad,
        (false, true) => Call::Good,
        (true, true) => Call::Partial,
        (false, false) => Call::Undecided,
    }
}

/// The probability that a call is wrong, given its differences from the ends (with their
/// standard errors `se_good`, `se_bad` on `df` degrees of freedom) and the threshold `h`
/// (log): for bad (and partial, which moves the bad bound as bad does), that the commit's true
/// level lies within `h` of the good end after all, `P(T < (h - d_good) / se_good)`; for good,
/// that it lies within `h` of the bad end, `P(T > (-h - d_bad) / se_bad)`. The difference is
/// taken as Student's t about its estimate (a flat prior on the level: the fiducial reading of
/// the interval the call was made with). None for a call that decides nothing.
pub fn call_error(
    call: Call,
    from_good: &Difference,
    from_bad: &Difference,
    h: f64,
    se_good: f64,
    se_bad: f64,
    df: f64,
) -> Result<Option<f64>, BisectError> {
    let tail = |x: f64| -> Result<f64, BisectError> { Ok(t_cdf(x, df)?) };
    Ok(match call {
        Call::Bad | Call::Partial if se_good > 0.0 => {
            Some(tail((h - from_good.estimate) / se_good)?)
        }
        Call::Good if se_bad > 0.0 => Some(tail((from_bad.estimate + h) / se_bad)?),
        _ => None,
    })
}

/// The state of the bisection of `m` ([`Plan`]): a pure function of the measurements, the
/// calibrations of the machine and configuration, and the settings.
pub fn plan(
    m: &Measurements,
    calibrations: &[Calibration],
    settings: &BisectSettings,
) -> Result<Plan, BisectError> {
    let n = m.sessions.len();
    if n < 2 {
        return Err(BisectError::TooFewCommits(n));
    }
    if let Some(t) = settings.threshold {
        if !(t > 0.0 && t < 1.0) {
            return Err(BisectError::Threshold(t));
        }
    }
    let (good, bad) = (0, n - 1);
    let spent = m.spent();
    let sign = if settings.higher_is_better { -1.0 } else { 1.0 };
    let mut out = Plan {
        steps: Vec::new(),
        regression: None,
        threshold: settings.threshold,
        noise: None,
        outcome: Outcome::NoRegression,
        spent,
        confidence: None,
    };
    let ends = (m.sessions[good].len(), m.sessions[bad].len());
    let budget_left = spent < settings.budget_sessions;
    // The ends first, alternately, the good end on a tie.
    let fewer_end = if ends.1 < ends.0 { bad } else { good };
    if ends.0.min(ends.1) < settings.end_sessions.max(1) {
        if budget_left {
            out.outcome = Outcome::Measure { index: fewer_end };
        }
        return Ok(out);
    }
    let noise = noise(m, calibrations)?;
    out.noise = Some(noise);
    let Some(regression) = difference(
        &m.sessions[bad],
        &m.sessions[good],
        &noise,
        sign,
        settings.level,
    )?
    else {
        return Ok(out);
    };
    out.regression = Some(regression);
    let h = match settings.threshold {
        Some(t) => t.ln_1p(),
        None => regression.estimate / 2.0,
    };
    out.threshold = Some(h.exp_m1());
    if !(regression.estimate > 0.0 && regression.low > h) {
        if budget_left {
            out.outcome = Outcome::Measure { index: fewer_end };
        }
        return Ok(out);
    }
    let (mut lo, mut hi) = (good, bad);
    let mut skipped: BTreeSet<usize> = m.unbuildable.clone();
    loop {
        if hi - lo <= 1 {
            out.outcome = found(m, &noise, sign, settings.level, lo, hi, &regression)?;
            out.confidence = Some(
                out.steps
                    .iter()
                    .filter_map(|s| s.error)
                    .map(|e| 1.0 - e)
                    .product(),
            );
            return Ok(out);
        }
        let middle = (lo + hi) as f64 / 2.0;
        let Some(mid) = (lo + 1..hi)
            .filter(|c| !skipped.contains(c))
            .min_by(|a, b| {
                let (da, db) = ((*a as f64 - middle).abs(), (*b as f64 - middle).abs());
                da.total_cmp(&db).then(a.cmp(b))
            })
        else {
            out.outcome = Outcome::Skipped {
                last_good: lo,
                first_bad: hi,
            };
            return Ok(out);
        };
        let at = &m.sessions[mid];
        let from_good = difference(at, &m.sessions[good], &noise, sign, settings.level)?;
        let from_bad = difference(at, &m.sessions[bad], &noise, sign, settings.level)?;
        let c = match (&from_good, &from_bad) {
            (Some(g), Some(b)) => call(g, b, h),
            _ => Call::Undecided,
        };
        let c = if c == Call::Undecided && at.len() >= settings.commit_sessions {
            Call::Skipped
        } else {
            c
        };
        let error = match (&from_good, &from_bad) {
            (Some(g), Some(b)) => {
                let se = |other: usize| {
                    (noise.mean_square * (1.0 / at.len() as f64 + 1.0 / other as f64)).sqrt()
                };
                call_error(c, g, b, h, se(ends.0), se(ends.1), noise.df)?
            }
            _ => None,
        };
        out.steps.push(Step {
            index: mid,
            sessions: at.len(),
            call: c,
            from_good,
            from_bad,
            error,
        });
        match c {
            Call::Good => lo = mid,
            Call::Bad | Call::Partial => hi = mid,
            Call::Skipped => {
                skipped.insert(mid);
            }
            Call::Undecided => {
                if !budget_left {
                    out.outcome = Outcome::BudgetSpent {
                        last_good: lo,
                        first_bad: hi,
                    };
                    return Ok(out);
                }
                // More sessions where they narrow the intervals most: the commit itself
                // while it has no more than the ends, else the end with fewer.
                let index = if at.len() <= ends.0.min(ends.1) {
                    mid
                } else {
                    fewer_end
                };
                out.outcome = Outcome::Measure { index };
                return Ok(out);
            }
        }
    }
}

/// The answer once the last good and the first bad commit are adjacent (skipped commits
/// aside): the effect between them, and whether it is the whole regression.
fn found(
    m: &Measurements,
    noise: &Noise,
    sign: f64,
    level: f64,
    last_good: usize,
    first_bad: usize,
    regression: &Difference,
) -> Result<Outcome, BisectError> {
    let effect = difference(
        &m.sessions[first_bad],
        &m.sessions[last_good],
        noise,
        sign,
        level,
    )?
    .unwrap_or(*regression);
    let share = effect.estimate / regression.estimate;
    // Part of the regression lies elsewhere when the step is smaller than the whole with the
    // step's confidence. (Testing each commit against its own end instead flagged a step
    // whose last good commit had one low session.)
    let partial = effect.high < regression.estimate;
    Ok(Outcome::Found {
        first_bad,
        last_good,
        effect,
        share,
        partial,
    })
}

/// The sessions of one commit of the range.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitSessions {
    pub index: usize,
    pub commit: String,
    pub sessions: Vec<uuid::Uuid>,
    /// Each session's median of the configuration's primary metric.
    pub medians: Vec<f64>,
}

/// A bisection with its measurements and what the rule makes of them (`vernier bisect
/// status` and `report`, and the site's bisection pages, show it).
#[derive(Debug, Clone)]
pub struct BisectState {
    pub bisection: vernier_model::Bisection,
    pub plan: Plan,
    /// Commits with sessions, in commit order.
    pub measured: Vec<CommitSessions>,
    /// Their levels with intervals, once the noise is known.
    pub levels: Vec<CommitLevel>,
    /// The configuration measured (its label) and its metric's unit.
    pub configuration: Option<String>,
    pub unit: Option<String>,
    pub higher_is_better: bool,
    /// Seconds of sessions so far (their wall time), and of builds.
    pub session_s: f64,
}

impl BisectState {
    /// Whether the rule has nothing more to measure.
    pub fn finished(&self) -> bool {
        !matches!(self.plan.outcome, Outcome::Measure { .. })
    }

    /// The commit at position `index` of the range.
    pub fn commit(&self, index: usize) -> &str {
        self.bisection.commits.get(index).map_or("", String::as_str)
    }

    /// The levels as a series of `vernier history`'s figure: a point per measured commit in
    /// commit order (its level and interval, named by its position and short hash, its first
    /// session as the point's), and the first bad commit, once found, as the series' one step
    /// (its effect against the last good commit, with the effect's interval).
    pub fn series(&self) -> crate::HistorySeries {
        use crate::{Direction, HistoryPoint, Verdict, Warnings};
        let points: Vec<HistoryPoint> = self
            .levels
            .iter()
            .map(|l| {
                let at = self
                    .measured
                    .iter()
                    .find(|m| m.index == l.index)
                    .and_then(|m| m.sessions.first().copied())
                    .unwrap_or_default();
                let commit = self.commit(l.index);
                HistoryPoint {
                    session: at,
                    started_at_ns: l.index as i64,
                    tags: std::collections::BTreeMap::from([(
                        vernier_model::bisect::COMMIT_TAG.to_string(),
                        format!("{} {}", l.index, commit.get(..7).unwrap_or(commit)),
                    )]),
                    n: l.sessions,
                    median: l.level,
                    ci_low: Some(l.low),
                    ci_high: Some(l.high),
                }
            })
            .collect();
        let mut steps = Vec::new();
        if let Outcome::Found {
            first_bad,
            last_good,
            effect,
            ..
        } = &self.plan.outcome
        {
            if let Some(position) = self.levels.iter().position(|l| l.index == *first_bad) {
                let (ratio, lo, hi) = effect.ratio(self.higher_is_better);
                let level = |i: usize| {
                    self.levels
                        .iter()
                        .find(|l| l.index == i)
                        .map_or(0.0, |l| l.level)
                };
                steps.push(crate::history::Step {
                    index: position,
                    session: points[position].session,
                    started_at_ns: points[position].started_at_ns,
                    p_value: 0.0,
                    before_sessions: self
                        .levels
                        .get(position.saturating_sub(1))
                        .map_or(0, |l| l.sessions),
                    after_sessions: self.levels[position].sessions,
                    change: crate::history::Change {
                        before_median: level(*last_good),
                        after_median: level(*first_bad),
                        ratio,
                        ratio_ci_low: Some(lo),
                        ratio_ci_high: Some(hi),
                        noise_source: None,
                        direction: Direction::Regression,
                        verdict: Verdict::Slower,
                        warnings: Warnings::default(),
                    },
                });
            }
        }
        crate::HistorySeries {
            host: "bisect".to_string(),
            machine_id: None,
            benchmark: self.configuration.clone().unwrap_or_default(),
            options: Default::default(),
            loads: Vec::new(),
            metric: "level".to_string(),
            unit: self.unit.clone().unwrap_or_default(),
            higher_is_better: self.higher_is_better,
            points,
            steps,
            episodes: Vec::new(),
            drifts: Vec::new(),
            cumulative: None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A session of 10 runs at `level` with a spread of 0.5% around it.
    fn session(level: f64) -> Vec<f64> {
        (0..10)
            .map(|i| level * (1.0 + 0.001 * (f64::from(i) - 4.5)))
            .collect()
    }

    /// Drives [`plan`] to its end on a noiseless history `levels` (with a session offset
    /// cycling through `shifts`), returning the outcome and the sessions spent.
    fn drive(levels: &[f64], shifts: &[f64], settings: &BisectSettings) -> (Outcome, usize) {
        let mut m = Measurements::new(levels.len());
        let mut k = 0;
        loop {
            let p = plan(&m, &[], settings).unwrap();
            match p.outcome {
                Outcome::Measure { index } => {
                    let shift = shifts[k % shifts.len()];
                    k += 1;
                    m.add_session(index, &session(levels[index] * (1.0 + shift)))
                        .unwrap();
                }
                other => return (other, m.spent()),
            }
        }
    }

    fn step_history(commits: usize, first_bad: usize, step: f64) -> Vec<f64> {
        (0..commits)
            .map(|i| if i >= first_bad { 1.0 + step } else { 1.0 })
            .collect()
    }

    #[test]
    fn names_the_first_bad_commit_of_a_clear_step() {
        let shifts = [0.004, -0.003, 0.001, -0.002];
        for first_bad in [1, 17, 33, 64] {
            let levels = step_history(65, first_bad, 0.10);
            let (outcome, spent) = drive(&levels, &shifts, &BisectSettings::default());
            let Outcome::Found {
                first_bad: named,
                last_good,
                share,
                partial,
                ..
            } = outcome
            else {
                panic!("{outcome:?}");
            };
            assert_eq!((named, last_good), (first_bad, first_bad - 1));
            assert!((share - 1.0).abs() < 0.1, "{share}");
            assert!(!partial);
            assert!(spent <= 4 + 8, "{spent} sessions");
        }
    }

    #[test]
    fn a_rate_regresses_downwards() {
        let levels: Vec<f64> = step_history(33, 20, 0.10).iter().map(|v| 1.0 / v).collect();
        let settings = BisectSettings {
            higher_is_better: true,
            ..BisectSettings::default()
        };
        let (outcome, _) = drive(&levels, &[0.003, -0.003], &settings);
        assert!(
            matches!(outcome, Outcome::Found { first_bad: 20, .. }),
            "{outcome:?}"
        );
        // The same history read as a time is an improvement, not a regression.
        let (outcome, _) = drive(&levels, &[0.003, -0.003], &BisectSettings::default());
        assert_eq!(outcome, Outcome::NoRegression);
    }

    #[test]
    fn a_first_step_that_explains_part_is_reported_as_partial() {
        // +6% at 10, +4% more at 30: the first bad commit by the midpoint is 10, and it
        // explains 60% of the regression.
        let levels: Vec<f64> = (0..41)
            .map(|i| match i {
                0..10 => 1.0,
                10..30 => 1.06,
                _ => 1.06 * 1.04,
            })
            .collect();
        let (outcome, _) = drive(&levels, &[0.002, -0.002], &BisectSettings::default());
        let Outcome::Found {
            first_bad,
            share,
            partial,
            ..
        } = outcome
        else {
            panic!("{outcome:?}");
        };
        assert_eq!(first_bad, 10);
        assert!(partial);
        assert!((share - 0.6).abs() < 0.1, "{share}");
        // With a threshold of 2% both steps count: the commits between are partial, and the
        // first bad commit is the first step's.
        let settings = BisectSettings {
            threshold: Some(0.02),
            ..BisectSettings::default()
        };
        let (outcome, _) = drive(&levels, &[0.002, -0.002], &settings);
        assert!(
            matches!(outcome, Outcome::Found { first_bad: 10, .. }),
            "{outcome:?}"
        );
    }

    #[test]
    fn failed_builds_are_skipped_and_a_range_of_them_is_said() {
        let levels = step_history(17, 8, 0.10);
        let mut m = Measurements::new(17);
        m.unbuildable.extend([7, 8]);
        let settings = BisectSettings::default();
        loop {
            let p = plan(&m, &[], &settings).unwrap();
            let Outcome::Measure { index } = p.outcome else {
                assert_eq!(
                    p.outcome,
                    Outcome::Skipped {
                        last_good: 6,
                        first_bad: 9
                    }
                );
                assert!(p.steps.iter().all(|s| s.index != 7 && s.index != 8));
                break;
            };
            assert!(!m.unbuildable.contains(&index));
            m.add_session(index, &session(levels[index])).unwrap();
        }
    }

    #[test]
    fn noise_within_the_step_is_measured_again_and_the_budget_bounds_it() {
        // Session offsets of +-2% against a 5% step: single sessions cannot tell.
        let levels = step_history(33, 12, 0.05);
        let shifts = [0.02, -0.02, 0.0, 0.015, -0.015, 0.005];
        let settings = BisectSettings {
            budget_sessions: 12,
            ..BisectSettings::default()
        };
        let (outcome, spent) = drive(&levels, &shifts, &settings);
        assert_eq!(spent, 12);
        assert!(
            matches!(
                outcome,
                Outcome::NoRegression | Outcome::BudgetSpent { .. } | Outcome::Found { .. }
            ),
            "{outcome:?}"
        );
        // With the budget it needs it names the commit.
        let (outcome, spent) = drive(&levels, &shifts, &BisectSettings::default());
        assert!(
            matches!(outcome, Outcome::Found { first_bad: 12, .. }),
            "{outcome:?}"
        );
        assert!(spent > 12, "{spent}");
    }

    #[test]
    fn the_plan_replays_from_the_measurements() {
        let levels = step_history(33, 5, 0.10);
        let settings = BisectSettings::default();
        let mut m = Measurements::new(33);
        for _ in 0..6 {
            if let Outcome::Measure { index } = plan(&m, &[], &settings).unwrap().outcome {
                m.add_session(index, &session(levels[index])).unwrap();
            }
        }
        // The same measurements give the same plan: nothing else is kept.
        assert_eq!(
            plan(&m, &[], &settings).unwrap(),
            plan(&m.clone(), &[], &settings).unwrap()
        );
    }

    #[test]
    fn bad_input_is_refused() {
        let m = Measurements::new(1);
        assert_eq!(
            plan(&m, &[], &BisectSettings::default()),
            Err(BisectError::TooFewCommits(1))
        );
        let mut m = Measurements::new(3);
        assert!(m.add_session(3, &[1.0]).is_err());
        assert!(m.add_session(1, &[1.0, 0.0]).is_err());
        let settings = BisectSettings {
            threshold: Some(1.5),
            ..BisectSettings::default()
        };
        assert_eq!(plan(&m, &[], &settings), Err(BisectError::Threshold(1.5)));
    }

    #[test]
    fn a_call_is_wrong_with_the_tail_beyond_the_threshold() {
        let d = |estimate: f64| Difference {
            estimate,
            low: estimate - 0.05,
            high: estimate + 0.05,
        };
        // Bad 10% from the good end, threshold 5%, standard error 2%: P(Z < -2.5) (SciPy:
        // norm.cdf(-2.5), and t.cdf(-2.5, 5) on 5 degrees of freedom).
        let bad = call_error(
            Call::Bad,
            &d(0.10),
            &d(0.0),
            0.05,
            0.02,
            0.03,
            f64::INFINITY,
        )
        .unwrap()
        .unwrap();
        assert!((bad - 0.006_209_665_325_776_132).abs() < 1e-12, "{bad}");
        let bad5 = call_error(Call::Partial, &d(0.10), &d(0.0), 0.05, 0.02, 0.03, 5.0)
            .unwrap()
            .unwrap();
        assert!((bad5 - 0.027_245_049_671_188_13).abs() < 1e-9, "{bad5}");
        // Good: 10% below the bad end, by the bad end's standard error.
        let good = call_error(
            Call::Good,
            &d(0.0),
            &d(-0.10),
            0.05,
            0.03,
            0.02,
            f64::INFINITY,
        )
        .unwrap()
        .unwrap();
        assert!((good - bad).abs() < 1e-12, "{good}");
        for call in [Call::Undecided, Call::Skipped] {
            assert_eq!(
                call_error(call, &d(0.1), &d(0.0), 0.05, 0.02, 0.02, 5.0).unwrap(),
                None
            );
        }
    }

    #[test]
    fn the_confidence_is_the_product_of_the_calls_and_falls_with_the_noise() {
        let settings = BisectSettings::default();
        let confidence = |levels: &[f64], shifts: &[f64]| {
            let mut m = Measurements::new(levels.len());
            let mut k = 0;
            loop {
                let p = plan(&m, &[], &settings).unwrap();
                match p.outcome {
                    Outcome::Measure { index } => {
                        let shift = shifts[k % shifts.len()];
                        k += 1;
                        m.add_session(index, &session(levels[index] * (1.0 + shift)))
                            .unwrap();
                    }
                    Outcome::Found { .. } => {
                        let product: f64 = p
                            .steps
                            .iter()
                            .filter_map(|s| s.error)
                            .map(|e| 1.0 - e)
                            .product();
                        let decided = p
                            .steps
                            .iter()
                            .filter(|s| matches!(s.call, Call::Good | Call::Bad | Call::Partial))
                            .count();
                        assert_eq!(
                            p.steps.iter().filter(|s| s.error.is_some()).count(),
                            decided
                        );
                        let c = p.confidence.unwrap();
                        assert!((c - product).abs() < 1e-12);
                        return c;
                    }
                    other => panic!("{other:?}"),
                }
            }
        };
        let clear = confidence(&step_history(33, 12, 0.10), &[0.002, -0.002, 0.001]);
        let noisy = confidence(
            &step_history(33, 12, 0.05),
            &[0.02, -0.02, 0.0, 0.015, -0.015, 0.005],
        );
        assert!(clear > 0.99, "{clear}");
        assert!(noisy < clear && noisy > 0.0, "{noisy} against {clear}");
        // Nothing found, no confidence.
        let m = Measurements::new(5);
        assert_eq!(plan(&m, &[], &settings).unwrap().confidence, None);
    }
}
