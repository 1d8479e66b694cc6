//! The output formats of `vernier history` (docs/history.md): per configuration and machine,
//! the session medians over time with the change points marked, as plain columns for the
//! terminal or GitHub-flavoured Markdown. The history itself is `vernier_analysis::history`;
//! the JSON format is its [`HistoryReport`]'s own `Serialize`.

use std::fmt::Write as _;

use vernier_analysis::{
    BaselineKind, Change, Cumulative, Drift, Episode, HistoryReport, HistorySeries, Step, Verdict,
};
use vernier_model::{level_percent, ShortId};

use crate::format::sig;
use crate::markup::Align::{self, Left as L, Right as R};
use crate::markup::{Markdown, Markup};
use crate::table::columns;

/// How a time (Unix nanoseconds) is written; the binary passes local time.
pub type TimeFormat<'a> = &'a dyn Fn(i64) -> String;

fn direction(s: &HistorySeries) -> &'static str {
    if s.higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    }
}

fn title(s: &HistorySeries) -> String {
    let steps = match s.steps.len() {
        0 => "no change point".to_string(),
        1 => "1 change point".to_string(),
        n => format!("{n} change points"),
    };
    format!(
        "{} on {} ({}, {}, {}): {} session{}, {steps}",
        s.label(),
        s.host,
        s.metric,
        s.unit,
        direction(s),
        s.points.len(),
        if s.points.len() == 1 { "" } else { "s" }
    )
}

fn p_text(p: f64) -> String {
    if p.is_nan() {
        "-".to_string()
    } else if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// A step in words: `regression x1.100 [1.085, 1.116] slower (p <0.001, 12 -> 12 sessions)`.
pub fn step_text(step: &Step) -> String {
    format!(
        "{} (p {}, {} -> {} sessions)",
        change_text(&step.change),
        p_text(step.p_value),
        step.before_sessions,
        step.after_sessions
    )
}

/// A change in words: `regression x1.120 [1.100, 1.141] slower`.
fn change_text(c: &Change) -> String {
    let ci = match (c.ratio_ci_low, c.ratio_ci_high) {
        (Some(lo), Some(hi)) => format!("[{lo:.3}, {hi:.3}]"),
        _ => "[no interval]".to_string(),
    };
    format!(
        "{} x{:.3} {ci} {}",
        c.direction.as_str(),
        c.ratio,
        c.verdict
    )
}

/// `3f0c81aa..c81f2e07`: the first and last session of points `from..to`.
fn span(s: &HistorySeries, from: usize, to: usize) -> String {
    let first = ShortId(s.points[from].session).to_string();
    let last = ShortId(s.points[to - 1].session).to_string();
    if to - from == 1 {
        first
    } else {
        format!("{first}..{last}")
    }
}

/// An episode in words: `episode 3f0c81aa..c81f2e07 (4 sessions, then back): regression
/// x1.120 [1.100, 1.141] slower against the 30 sessions around it (p <0.001)`.
pub fn episode_text(s: &HistorySeries, e: &Episode) -> String {
    let n = e.to_index - e.from_index;
    format!(
        "episode {} ({n} sessions, then back): {} against the sessions around it (p {})",
        span(s, e.from_index, e.to_index),
        change_text(&e.change),
        p_text(e.p_value)
    )
}

/// A drift in words: `drift 3f0c81aa..c81f2e07 (20 sessions): regression x1.041 [1.030,
/// 1.052] slower in all, x1.0020 a session (Mann-Kendall p <0.001)`.
pub fn drift_text(s: &HistorySeries, d: &Drift) -> String {
    format!(
        "drift {} ({} sessions): {} x{:.3} [{:.3}, {:.3}] {} in all, x{:.4} a session \
         (Mann-Kendall p {})",
        span(s, d.from_index, d.to_index),
        d.to_index - d.from_index,
        d.direction.as_str(),
        d.total,
        d.total_ci_low,
        d.total_ci_high,
        d.verdict,
        d.per_session,
        p_text(d.p_value)
    )
}

/// The newest level against the baseline in words: `newest level (6 sessions) against the
/// first level (5 sessions): regression x1.077 [1.060, 1.094] slower`.
pub fn cumulative_text(c: &Cumulative) -> String {
    let baseline = match c.baseline {
        BaselineKind::Named => "the baseline",
        BaselineKind::FirstLevel => "the first level",
    };
    format!(
        "newest level ({} sessions) against {baseline} ({} sessions): {}",
        c.sessions,
        c.baseline_sessions,
        change_text(&c.change)
    )
}

/// What a series holds besides its steps: its episodes, drifts, and the newest level against
/// the baseline where it says more than the newest step (two or more steps, or a named
/// baseline).
pub fn change_lines(s: &HistorySeries) -> Vec<String> {
    let mut lines: Vec<String> = s.episodes.iter().map(|e| episode_text(s, e)).collect();
    lines.extend(s.drifts.iter().map(|d| drift_text(s, d)));
    if let Some(c) = &s.cumulative {
        if s.steps.len() >= 2 || c.baseline == BaselineKind::Named {
            lines.push(cumulative_text(c));
        }
    }
    lines
}

/// Why a series counts as worse now, and the change that says it; none when it does not.
fn worse_now(s: &HistorySeries) -> Option<(&'static str, String)> {
    if !s.ends_in_regression() {
        return None;
    }
    // The step or drift that made `ends_in_regression` true, else the cumulative change.
    let accepted = s.accepted_before();
    if let Some(step) = s
        .steps
        .last()
        .filter(|st| st.index >= accepted && st.change.verdict == Verdict::Slower)
    {
        return Some((
            "newest change is a regression beyond the threshold",
            step_text(step),
        ));
    }
    if let Some(d) = s.drifts.iter().find(|d| {
        d.from_index >= accepted && d.to_index == s.points.len() && d.verdict == Verdict::Slower
    }) {
        return Some((
            "drifts up to its newest session beyond the threshold",
            drift_text(s, d),
        ));
    }
    s.cumulative.as_ref().map(|c| {
        (
            "newest level is worse than its baseline beyond the threshold",
            cumulative_text(c),
        )
    })
}

/// The rows of a series: one per session, the change points in the last column.
fn rows(s: &HistorySeries, time: TimeFormat) -> Vec<[String; 7]> {
    s.points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let tags: Vec<String> = p.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let ci = match (p.ci_low, p.ci_high) {
                (Some(lo), Some(hi)) => format!("[{}, {}]", sig(lo, 4), sig(hi, 4)),
                _ => "-".to_string(),
            };
            let change = s
                .steps
                .iter()
                .find(|step| step.index == i)
                .map(step_text)
                .unwrap_or_default();
            [
                ShortId(p.session).to_string(),
                time(p.started_at_ns),
                tags.join(" "),
                p.n.to_string(),
                sig(p.median, 4),
                ci,
                change,
            ]
        })
        .collect()
}

fn headers(report: &HistoryReport) -> [String; 7] {
    [
        "session".to_string(),
        "started".to_string(),
        "tags".to_string(),
        "n".to_string(),
        "median".to_string(),
        format!("{} CI", level_percent(report.level)),
        "change".to_string(),
    ]
}

/// The closing lines: what was searched and which series end in a regression.
fn summary_lines(report: &HistoryReport) -> Vec<String> {
    let steps: usize = report.series.iter().map(|s| s.steps.len()).sum();
    let mut lines = vec![format!(
        "{} series, {steps} change point{} (split and merge, p < {}, windows of {}); steps \
         judged as compare does at threshold {}",
        report.series.len(),
        if steps == 1 { "" } else { "s" },
        report.max_pvalue,
        report.window,
        crate::format::pct(report.threshold)
    )];
    for s in &report.series {
        if let Some((why, change)) = worse_now(s) {
            lines.push(format!("{why}: {} on {}: {change}", s.label(), s.host));
        }
    }
    lines
}

/// Plain columns per series, a title line above each.
pub fn table(report: &HistoryReport, time: TimeFormat) -> String {
    let mut out = String::new();
    let headers = headers(report);
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    for s in &report.series {
        let _ = writeln!(out, "{}", title(s));
        out.push_str(&columns(&headers, &rows(s, time), &[0, 1, 2, 6]));
        for l in change_lines(s) {
            let _ = writeln!(out, "{l}");
        }
        for step in &s.steps {
            for w in step.change.warnings.iter() {
                let _ = writeln!(
                    out,
                    "warning: change at session {}: {w}",
                    ShortId(step.session)
                );
            }
        }
        out.push('\n');
    }
    for l in summary_lines(report) {
        let _ = writeln!(out, "{l}");
    }
    out
}

/// The alignment of history's columns: the counts and values right.
const COLUMNS: [Align; 7] = [L, L, L, R, R, R, L];

/// A GitHub-flavoured Markdown table per series, for mailing lists and issues.
pub fn markdown(report: &HistoryReport, time: TimeFormat) -> String {
    markup(report, time, &Markdown)
}

/// The report in markup `m`: per series its title and a table, the warnings of its steps as a
/// list; then the summary as a list.
pub fn markup(report: &HistoryReport, time: TimeFormat, m: &impl Markup) -> String {
    let headers = headers(report);
    let mut out = String::new();
    for s in &report.series {
        out.push_str(&m.strong(&m.escape(&title(s))));
        out.push_str("\n\n");
        out.push_str(&m.table(&headers, &COLUMNS, &rows(s, time)));
        out.push('\n');
        for l in change_lines(s) {
            out.push_str(&m.item(&m.escape(&l)));
        }
        for step in &s.steps {
            for w in step.change.warnings.iter() {
                let text = format!(
                    "warning: change at session {}: {}",
                    ShortId(step.session),
                    m.escape(&w.to_string())
                );
                out.push_str(&m.item(&text));
            }
        }
    }
    for l in summary_lines(report) {
        out.push_str(&m.item(&m.escape(&l)));
    }
    out
}
