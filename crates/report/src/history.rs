//! The output formats of `vernier history` (docs/history.md): per configuration and machine,
//! the session medians over time with the change points marked, as plain columns for the
//! terminal or GitHub-flavoured Markdown. The history itself is `vernier_analysis::history`;
//! the JSON format is its [`HistoryReport`]'s own `Serialize`.

use std::fmt::Write as _;

use vernier_analysis::{HistoryReport, HistorySeries, Step};
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

fn ratio_ci(step: &Step) -> String {
    match (step.ratio_ci_low, step.ratio_ci_high) {
        (Some(lo), Some(hi)) => format!("[{lo:.3}, {hi:.3}]"),
        _ => "[no interval]".to_string(),
    }
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
        "{} x{:.3} {} {} (p {}, {} -> {} sessions)",
        step.direction.as_str(),
        step.ratio,
        ratio_ci(step),
        step.verdict,
        p_text(step.p_value),
        step.before_sessions,
        step.after_sessions
    )
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
    for s in report.series.iter().filter(|s| s.ends_in_regression()) {
        if let Some(step) = s.steps.last() {
            lines.push(format!(
                "newest change is a regression beyond the threshold: {} on {}: {}",
                s.label(),
                s.host,
                step_text(step)
            ));
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
        for step in &s.steps {
            for w in step.warnings.iter() {
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
        for step in &s.steps {
            for w in step.warnings.iter() {
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
