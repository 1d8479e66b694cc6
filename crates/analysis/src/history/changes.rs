//! What a series holds besides its steps (docs/history.md): **episodes**, runs of sessions at
//! another level that came and went (a regression fixed a few nights later leaves no change
//! point, because binary segmentation averages it into one side of every split); **drifts**, a
//! level that creeps within a piece between change points; and the **cumulative** change of
//! the newest level against a baseline (a staircase of steps each below the threshold adds up).
//!
//! Each is measured as a step is, by compare's code ([`compare_calibrated`]), so its ratio,
//! interval and verdict mean what compare's mean; a drift's total is the Theil-Sen slope over
//! its piece with Sen's interval.

use serde::Serialize;
use uuid::Uuid;
use vernier_model::{Calibration, StoredSession};
use vernier_stats::{episodes, trend, EpisodeSettings, MIN_TREND_POINTS};

use super::{Direction, Gathered, HistorySettings};
use crate::compare::{compare_calibrated, verdict, Verdict};
use crate::session_noise::NoiseSource;
use crate::warnings::Warnings;
use crate::AnalysisError;

/// BEFORE against AFTER, measured as compare measures two result sets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Medians of the pooled runs of either side, compare's `base_median`, `new_median`.
    pub before_median: f64,
    pub after_median: f64,
    /// AFTER/BEFORE with its interval, compare's.
    pub ratio: f64,
    pub ratio_ci_low: Option<f64>,
    pub ratio_ci_high: Option<f64>,
    pub noise_source: Option<NoiseSource>,
    pub direction: Direction,
    pub verdict: Verdict,
    #[serde(flatten)]
    pub warnings: Warnings,
}

/// How an episode was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EpisodeSource {
    /// Two change points of opposite directions around a short piece whose neighbours agree.
    ChangePoints,
    /// The scan for short runs of sessions inside a piece ([`vernier_stats::episodes`]).
    Scan,
}

/// Sessions `from_index..to_index` of a series stood at another level than those around them
/// and it came back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Episode {
    pub from_index: usize,
    /// One past its last point.
    pub to_index: usize,
    pub first_session: Uuid,
    pub last_session: Uuid,
    /// The scan's Bonferroni-adjusted p-value, or the larger of the two change points'.
    pub p_value: f64,
    pub found_by: EpisodeSource,
    /// The episode (AFTER) against the sessions around it in its piece (BEFORE).
    #[serde(flatten)]
    pub change: Change,
}

/// The level of sessions `from_index..to_index` (a piece between change points) creeps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    pub from_index: usize,
    pub to_index: usize,
    /// Ratio per session (the Theil-Sen slope of the log medians).
    pub per_session: f64,
    /// Ratio of the last session's level to the first's along the slope, with Sen's interval.
    pub total: f64,
    pub total_ci_low: f64,
    pub total_ci_high: f64,
    /// The Mann-Kendall test of no trend.
    pub p_value: f64,
    pub direction: Direction,
    /// Compare's verdict of `total` with its interval at the threshold.
    pub verdict: Verdict,
}

/// Which sessions a cumulative change is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BaselineKind {
    /// The sessions `--baseline` selects.
    Named,
    /// The series' first level: its sessions before the first change point.
    FirstLevel,
}

/// The newest level (sessions since the last change point) against a baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cumulative {
    pub baseline: BaselineKind,
    pub baseline_sessions: usize,
    /// One past the baseline's newest point: what came before it is accepted.
    pub baseline_to_index: usize,
    /// The first point of the newest level.
    pub from_index: usize,
    pub sessions: usize,
    #[serde(flatten)]
    pub change: Change,
}

/// The pieces of a series of `len` points between its change points `cuts`.
pub(super) fn pieces(cuts: &[usize], len: usize) -> Vec<(usize, usize)> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(len);
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

/// BEFORE (points `before`) against AFTER (points `after`) of the series.
pub(super) fn measure(
    g: &Gathered,
    sessions: &[StoredSession],
    before: &[usize],
    after: &[usize],
    settings: &HistorySettings,
    calibrations: &[Calibration],
) -> Result<Change, AnalysisError> {
    let report = compare_calibrated(
        &g.sessions_at(sessions, before),
        &g.sessions_at(sessions, after),
        &settings.compare,
        calibrations,
    )?;
    let Some(c) = report.comparisons.into_iter().next() else {
        // Both sides hold measured runs of the same configuration, so compare matches them;
        // anything else is a bug worth seeing rather than a silent gap.
        return Err(AnalysisError::Stats {
            configuration: g.series.label(),
            source: vernier_stats::StatsError::Degenerate {
                what: "the sessions of two parts of a series did not match",
            },
        });
    };
    let mean = |idx: &[usize]| {
        idx.iter().map(|&i| g.series.points[i].median).sum::<f64>() / idx.len().max(1) as f64
    };
    let worse = if c.ratio == 1.0 {
        (mean(after) > mean(before)) != c.higher_is_better
    } else {
        (c.ratio > 1.0) != c.higher_is_better
    };
    Ok(Change {
        before_median: c.base_median,
        after_median: c.new_median,
        ratio: c.ratio,
        ratio_ci_low: c.ratio_ci_low,
        ratio_ci_high: c.ratio_ci_high,
        noise_source: c.noise_source,
        direction: if worse {
            Direction::Regression
        } else {
            Direction::Improvement
        },
        verdict: c.verdict,
        warnings: c.warnings,
    })
}

/// The log of the medians where all are positive (changes as ratios), else the medians.
fn scale(medians: &[f64]) -> Vec<f64> {
    if medians.iter().all(|&m| m > 0.0) {
        medians.iter().map(|m| m.ln()).collect()
    } else {
        medians.to_vec()
    }
}

/// The episodes of a series: pairs of opposite steps around a short piece whose neighbours
/// agree, and those the scan finds inside each piece. `steps_at` are the change points with
/// their directions and p-values.
pub(super) fn find_episodes(
    g: &Gathered,
    sessions: &[StoredSession],
    steps_at: &[(usize, Direction, f64)],
    settings: &HistorySettings,
    calibrations: &[Calibration],
) -> Result<Vec<Episode>, AnalysisError> {
    let len = g.series.points.len();
    let cuts: Vec<usize> = steps_at.iter().map(|s| s.0).collect();
    let parts = pieces(&cuts, len);
    let scan = EpisodeSettings {
        max_pvalue: settings.detection.max_pvalue,
        ..EpisodeSettings::default()
    };
    let medians: Vec<f64> = g.series.points.iter().map(|p| p.median).collect();
    let values = scale(&medians);
    let mut found: Vec<(usize, usize, f64, EpisodeSource, Vec<usize>)> = Vec::new();
    // A short piece between two steps of opposite directions, when the pieces on either side
    // stand at one level (the middle's shift from them is more than twice their difference).
    for k in 1..parts.len().saturating_sub(1) {
        let (from, to) = parts[k];
        let (before, after) = (parts[k - 1], parts[k + 1]);
        let opposite = steps_at[k - 1].1 != steps_at[k].1;
        if !opposite || to - from > scan.max_len {
            continue;
        }
        let level = |(a, b): (usize, usize)| values[a..b].iter().sum::<f64>() / (b - a) as f64;
        let (l0, l1, l2) = (level(before), level(parts[k]), level(after));
        if (l0 - l2).abs() * 2.0 < (l1 - (l0 + l2) / 2.0).abs() {
            let around: Vec<usize> = (before.0..before.1).chain(after.0..after.1).collect();
            let p = steps_at[k - 1].2.max(steps_at[k].2);
            found.push((from, to, p, EpisodeSource::ChangePoints, around));
        }
    }
    for &(from, to) in &parts {
        for e in episodes(&values[from..to], &scan).map_err(|source| AnalysisError::Stats {
            configuration: g.series.label(),
            source,
        })? {
            let (a, b) = (from + e.start, from + e.end);
            let taken: Vec<(usize, usize)> = found.iter().map(|f| (f.0, f.1)).collect();
            let around: Vec<usize> = (from..to)
                .filter(|&i| (i < a || i >= b) && !taken.iter().any(|&(x, y)| i >= x && i < y))
                .collect();
            found.push((a, b, e.p_value, EpisodeSource::Scan, around));
        }
    }
    found.sort_by_key(|f| f.0);
    let mut out = Vec::with_capacity(found.len());
    for (from, to, p_value, found_by, around) in found {
        let inside: Vec<usize> = (from..to).collect();
        let change = measure(g, sessions, &around, &inside, settings, calibrations)?;
        out.push(Episode {
            from_index: from,
            to_index: to,
            first_session: g.series.points[from].session,
            last_session: g.series.points[to - 1].session,
            p_value,
            found_by,
            change,
        });
    }
    Ok(out)
}

/// The drifts of a series, with the episodes' points left out: the span since the newest run
/// of steps in one direction began (a creeping level is often cut into several small steps,
/// each too small to judge), and each other piece between change points; each of at least
/// [`MIN_TREND_POINTS`] sessions whose log medians trend (Mann-Kendall p below the detector's
/// `max_pvalue`).
pub(super) fn find_drifts(
    g: &Gathered,
    steps_at: &[(usize, Direction, f64)],
    episodes: &[Episode],
    settings: &HistorySettings,
) -> Vec<Drift> {
    let medians: Vec<f64> = g.series.points.iter().map(|p| p.median).collect();
    if medians.iter().any(|&m| m <= 0.0) {
        return Vec::new();
    }
    let len = medians.len();
    let cuts: Vec<usize> = steps_at.iter().map(|s| s.0).collect();
    // The newest run of steps in one direction, and the piece before its first step.
    let mut spans = Vec::new();
    if let Some(&(_, newest, _)) = steps_at.last() {
        let run = steps_at.iter().rev().take_while(|s| s.1 == newest).count();
        if run >= 2 {
            let first = steps_at.len() - run;
            let from = if first == 0 { 0 } else { steps_at[first - 1].0 };
            spans.push((from, len));
        }
    }
    for (from, to) in pieces(&cuts, len) {
        if !spans.iter().any(|&(a, b)| from >= a && to <= b) {
            spans.push((from, to));
        }
    }
    let mut out = Vec::new();
    for (from, to) in spans {
        // The points outside episodes, with their positions: the slope is per session.
        let kept: Vec<usize> = (from..to)
            .filter(|&i| !episodes.iter().any(|e| i >= e.from_index && i < e.to_index))
            .collect();
        if kept.len() < MIN_TREND_POINTS {
            continue;
        }
        let logs: Vec<f64> = kept.iter().map(|&i| medians[i].ln()).collect();
        let Ok(t) = trend(&logs, settings.compare.level) else {
            continue;
        };
        if t.p_value >= settings.detection.max_pvalue {
            continue;
        }
        // Positions of the kept points are not evenly spaced where an episode was left out;
        // the slope per kept point times (kept - 1) spans the piece's kept sessions.
        let span = (kept.len() - 1) as f64;
        let (total, low, high) = (
            (t.slope * span).exp(),
            (t.slope_low * span).exp(),
            (t.slope_high * span).exp(),
        );
        let higher_is_better = g.series.higher_is_better;
        out.push(Drift {
            from_index: from,
            to_index: to,
            per_session: t.slope.exp(),
            total,
            total_ci_low: low,
            total_ci_high: high,
            p_value: t.p_value,
            direction: if (total > 1.0) != higher_is_better {
                Direction::Regression
            } else {
                Direction::Improvement
            },
            verdict: verdict(
                Some((low, high)),
                settings.compare.threshold,
                higher_is_better,
            ),
        });
    }
    out
}

/// The newest level against the baseline: the points of sessions in `named` when it is given,
/// else the first level. None when the series has no point of the baseline, or none at the
/// newest level outside it.
pub(super) fn find_cumulative(
    g: &Gathered,
    sessions: &[StoredSession],
    cuts: &[usize],
    named: Option<&[Uuid]>,
    settings: &HistorySettings,
    calibrations: &[Calibration],
) -> Result<Option<Cumulative>, AnalysisError> {
    let len = g.series.points.len();
    let from = cuts.last().copied().unwrap_or(0);
    let (kind, baseline): (BaselineKind, Vec<usize>) = match named {
        Some(ids) => (
            BaselineKind::Named,
            (0..len)
                .filter(|&i| ids.contains(&g.series.points[i].session))
                .collect(),
        ),
        None => (
            BaselineKind::FirstLevel,
            (0..cuts.first().copied().unwrap_or(0)).collect(),
        ),
    };
    let now: Vec<usize> = (from..len).filter(|i| !baseline.contains(i)).collect();
    if baseline.is_empty() || now.is_empty() {
        return Ok(None);
    }
    let change = measure(g, sessions, &baseline, &now, settings, calibrations)?;
    Ok(Some(Cumulative {
        baseline: kind,
        baseline_sessions: baseline.len(),
        baseline_to_index: baseline.last().map_or(0, |&i| i + 1),
        from_index: now[0],
        sessions: now.len(),
        change,
    }))
}
