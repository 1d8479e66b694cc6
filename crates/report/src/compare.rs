//! The output formats of `vernier compare` (docs/compare.md): an aligned table for the
//! terminal, GitHub-flavoured Markdown for mailing lists and issues, and CSV with the JSON field
//! names as header. The comparison itself is `vernier_analysis::compare`; this module only
//! presents its [`CompareReport`] (the JSON format is the report's own `Serialize`).

use std::fmt::Write as _;

use serde::Serialize;
use vernier_analysis::{change_text, CompareReport, Comparison, NoiseSource, Verdict, Warning};
use vernier_model::{level_percent, Severity, StoredSession};

use crate::format::{pct, sig};
use crate::markup::Align::{self, Left as L, Right as R};
use crate::markup::{Markdown, Markup};
use crate::table::columns;

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".to_string())
}

fn ratio_text(v: f64) -> String {
    format!("{v:.3}")
}

/// A p-value as `compare` prints it: three decimals, `<0.001` below.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

fn ci_text(c: &Comparison) -> String {
    match (c.ratio_ci_low, c.ratio_ci_high) {
        (Some(lo), Some(hi)) => format!("[{}, {}]", ratio_text(lo), ratio_text(hi)),
        _ => "-".to_string(),
    }
}

/// Minimum detectable change as a percentage.
fn mdc_text(c: &Comparison) -> String {
    opt(c.mdc, pct)
}

/// The column headers; the interval's names the comparison's confidence level.
fn headers(level: f64) -> [String; 9] {
    [
        "configuration".to_string(),
        "base median".to_string(),
        "new median".to_string(),
        "ratio".to_string(),
        format!("{} CI", level_percent(level)),
        "MDC".to_string(),
        "p".to_string(),
        "p adj".to_string(),
        "verdict".to_string(),
    ]
}

fn row(c: &Comparison) -> [String; 9] {
    [
        c.label(),
        format!("{} {}", sig(c.base_median, 4), c.unit),
        format!("{} {}", sig(c.new_median, 4), c.unit),
        ratio_text(c.ratio),
        ci_text(c),
        mdc_text(c),
        p_text(c.p_value),
        p_text(c.p_adjusted),
        c.verdict.to_string(),
    ]
}

/// An unmatched configuration's label, with the metric when it is a secondary one.
fn unmatched_label(u: &vernier_analysis::Unmatched) -> String {
    if u.primary {
        u.label()
    } else {
        format!("{} {}", u.label(), u.metric)
    }
}

/// A row of a secondary metric: the configuration's label with the metric's name.
fn secondary_row(c: &Comparison) -> [String; 9] {
    let mut cells = row(c);
    cells[0] = format!("{} {}", c.label(), c.metric);
    cells
}

fn summary_lines(report: &CompareReport) -> Vec<String> {
    let s = &report.summary;
    let mut lines = vec![format!(
        "{} compared (threshold {:.1}%): {} faster, {} slower, {} equivalent, {} inconclusive",
        s.compared,
        report.threshold * 100.0,
        s.faster,
        s.slower,
        s.equivalent,
        s.inconclusive
    )];
    if let Some(g) = s.geomean_ratio {
        lines.push(format!(
            "geometric mean of ratios NEW/BASE over {}: {} {} CI [{}, {}]",
            s.geomean_of,
            ratio_text(g),
            level_percent(report.level),
            opt(s.geomean_ci_low, ratio_text),
            opt(s.geomean_ci_high, ratio_text)
        ));
    }
    lines.extend(s.warnings.iter().map(|w| format!("note: {w}")));
    lines
}

/// Why a comparison is inconclusive (or withheld), in words: the warning that decided it, or
/// what its interval does against the threshold band. `None` for a conclusive verdict.
pub fn inconclusive_reason(c: &Comparison, threshold: f64) -> Option<String> {
    if c.verdict != Verdict::Inconclusive {
        return None;
    }
    let decisive = c.warnings.iter().find(|w| {
        matches!(
            w,
            Warning::VerdictWithheld { .. }
                | Warning::TooFewRunsForRatio { .. }
                | Warning::ZeroWidthInterval { .. }
                | Warning::WithinThreshold { .. }
                | Warning::Rounded { limits: true, .. }
        )
    });
    Some(match (decisive, c.ratio_ci_low, c.ratio_ci_high) {
        (Some(w), _, _) => w.to_string(),
        (None, Some(_), Some(_)) => format!(
            "the interval {} reaches across a boundary of the {} band of no practical change: \
             the change may be smaller or larger than that",
            c.change_interval_text(),
            pct(threshold)
        ),
        (None, _, _) => "no interval of the ratio".to_string(),
    })
}

/// The changes that count, largest first: the faster and slower verdicts and the withheld
/// ones (their size and interval are known, their runs were contaminated), by the size of the
/// change on the log scale (a halving as large as a doubling). Primary metrics only.
pub fn ranked(report: &CompareReport) -> Vec<&Comparison> {
    let mut out: Vec<&Comparison> = report
        .comparisons
        .iter()
        .filter(|c| {
            matches!(c.verdict, Verdict::Faster | Verdict::Slower) || c.withheld().is_some()
        })
        .collect();
    let size = |c: &Comparison| c.ratio.ln().abs();
    out.sort_by(|a, b| size(b).total_cmp(&size(a)));
    out
}

/// The ranked changes as aligned lines (`slower  pipe:mode=cross-cpu  +19.0%  [+17.7%,
/// +20.0%]`), a withheld one with the verdict it would have had; empty without any.
fn ranked_lines(report: &CompareReport) -> Vec<String> {
    let rows: Vec<[String; 4]> = ranked(report)
        .into_iter()
        .map(|c| {
            let word = match c.withheld() {
                Some(v) => format!("withheld ({v})"),
                None => c.verdict.to_string(),
            };
            [
                word,
                c.label(),
                change_text(c.ratio),
                c.change_interval_text(),
            ]
        })
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    columns(
        &["verdict", "configuration", "change", "interval"],
        &rows,
        &[0, 1],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

/// Aligned columns, then warnings, unmatched configurations and the summary.
pub fn table(report: &CompareReport) -> String {
    let rows: Vec<[String; 9]> = report.comparisons.iter().map(row).collect();
    let mut out = String::new();
    if !rows.is_empty() {
        let headers = headers(report.level);
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str(&columns(&headers, &rows, &[0, headers.len() - 1]));
    }
    let warned: Vec<&Comparison> = report
        .comparisons
        .iter()
        .filter(|c| !c.warnings.is_empty())
        .collect();
    if !warned.is_empty() {
        out.push_str("\nwarnings:\n");
        for c in warned {
            for w in &c.warnings {
                let _ = writeln!(out, "  {}: {w}", c.label());
            }
        }
    }
    if !report.secondary.is_empty() {
        out.push_str("\nother metrics of these configurations (not in the summary):\n");
        let rows: Vec<[String; 9]> = report.secondary.iter().map(secondary_row).collect();
        let headers = headers(report.level);
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str(&columns(&headers, &rows, &[0, headers.len() - 1]));
    }
    if !report.unmatched.is_empty() {
        out.push_str("\nunmatched:\n");
        for u in &report.unmatched {
            let _ = writeln!(out, "  {} ({}): {}", unmatched_label(u), u.side, u.reason);
        }
    }
    out.push('\n');
    for l in summary_lines(report) {
        out.push_str(&l);
        out.push('\n');
    }
    let ranked = ranked_lines(report);
    if !ranked.is_empty() {
        out.push_str("\nchanges, largest first (NEW against BASE):\n");
        for l in ranked {
            out.push_str("  ");
            out.push_str(l.trim_end());
            out.push('\n');
        }
    }
    out
}

/// The validity findings (warnings and worse) stored with the sessions of one side (`side` is
/// `BASE` or `NEW`), each once; empty when there are none. Follows the table.
pub fn side_findings(side: &str, sessions: &[StoredSession]) -> String {
    let mut seen = Vec::new();
    let mut out = String::new();
    for f in sessions.iter().flat_map(|s| &s.info.findings) {
        if f.severity >= Severity::Warning && !seen.contains(&&f.id) {
            seen.push(&f.id);
            let _ = writeln!(out, "  {:<8} {}: {}", f.severity, f.title, f.detail);
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("\nvalidity findings of {side}:\n{out}")
    }
}

/// The alignment of compare's columns: the configuration and the verdict left, numbers right.
const COLUMNS: [Align; 9] = [L, R, R, R, R, R, R, R, L];

/// A GitHub-flavoured Markdown table with the summary as a list, for mailing lists and issues.
pub fn markdown(report: &CompareReport) -> String {
    markup(report, &Markdown)
}

/// The report in markup `m`: a table of the comparisons, one of the secondary metrics, then
/// warnings, unmatched configurations and the summary as a list.
pub fn markup(report: &CompareReport, m: &impl Markup) -> String {
    let headers = headers(report.level);
    let mut out = String::new();
    if !report.comparisons.is_empty() {
        let rows: Vec<[String; 9]> = report.comparisons.iter().map(row).collect();
        out.push_str(&m.table(&headers, &COLUMNS, &rows));
        out.push('\n');
    }
    if !report.secondary.is_empty() {
        out.push_str("Other metrics of these configurations (not in the summary):\n\n");
        let rows: Vec<[String; 9]> = report.secondary.iter().map(secondary_row).collect();
        out.push_str(&m.table(&headers, &COLUMNS, &rows));
        out.push('\n');
    }
    for c in &report.comparisons {
        for w in &c.warnings {
            let text = format!(
                "warning: {}: {}",
                m.code(&c.label()),
                m.escape(&w.to_string())
            );
            out.push_str(&m.item(&text));
        }
    }
    for u in &report.unmatched {
        let text = format!(
            "unmatched: {} ({}): {}",
            m.code(&unmatched_label(u)),
            u.side,
            u.reason
        );
        out.push_str(&m.item(&text));
    }
    for l in summary_lines(report) {
        out.push_str(&m.item(&l));
    }
    let ranked = ranked(report);
    if !ranked.is_empty() {
        let _ = writeln!(out, "\nChanges, largest first (NEW against BASE):\n");
        for c in ranked {
            let word = match c.withheld() {
                Some(v) => format!("withheld ({v})"),
                None => c.verdict.to_string(),
            };
            let _ = writeln!(
                out,
                "1. {} {} {} {}",
                m.code(&c.label()),
                change_text(c.ratio),
                c.change_interval_text(),
                word
            );
        }
    }
    out
}

/// A number at full precision as Rust prints it (the shortest decimal that reads back as the
/// same double, never with an exponent), where the `csv` crate would print `13.0` for 13.
fn display<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn display_opt<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

/// One CSV row of a comparison: the JSON field names, in the order of docs/compare.md.
#[derive(Serialize)]
struct CsvRow<'a> {
    benchmark: &'a str,
    options: String,
    metric: &'a str,
    unit: &'a str,
    base_n: usize,
    new_n: usize,
    #[serde(serialize_with = "display")]
    base_median: f64,
    #[serde(serialize_with = "display")]
    new_median: f64,
    #[serde(serialize_with = "display")]
    ratio: f64,
    #[serde(serialize_with = "display_opt")]
    ratio_ci_low: Option<f64>,
    #[serde(serialize_with = "display_opt")]
    ratio_ci_high: Option<f64>,
    #[serde(serialize_with = "display")]
    p_value: f64,
    #[serde(serialize_with = "display")]
    p_adjusted: f64,
    #[serde(serialize_with = "display_opt")]
    welch_ci_low: Option<f64>,
    #[serde(serialize_with = "display_opt")]
    welch_ci_high: Option<f64>,
    verdict: String,
    /// Joined by "; ".
    warnings: String,
    #[serde(serialize_with = "display_opt")]
    runs_ci_low: Option<f64>,
    #[serde(serialize_with = "display_opt")]
    runs_ci_high: Option<f64>,
    base_sessions: usize,
    new_sessions: usize,
    noise_source: Option<&'static str>,
    #[serde(serialize_with = "display_opt")]
    session_noise: Option<f64>,
    #[serde(serialize_with = "display_opt")]
    mdc: Option<f64>,
    #[serde(serialize_with = "display")]
    runs_ratio: f64,
    #[serde(serialize_with = "display_opt")]
    ratio_df: Option<f64>,
    #[serde(serialize_with = "display_opt")]
    resolution: Option<f64>,
}

impl<'a> CsvRow<'a> {
    /// The header, also written when there is no row.
    const HEADER: [&'static str; 27] = [
        "benchmark",
        "options",
        "metric",
        "unit",
        "base_n",
        "new_n",
        "base_median",
        "new_median",
        "ratio",
        "ratio_ci_low",
        "ratio_ci_high",
        "p_value",
        "p_adjusted",
        "welch_ci_low",
        "welch_ci_high",
        "verdict",
        "warnings",
        "runs_ci_low",
        "runs_ci_high",
        "base_sessions",
        "new_sessions",
        "noise_source",
        "session_noise",
        "mdc",
        "runs_ratio",
        "ratio_df",
        "resolution",
    ];

    fn new(c: &'a Comparison) -> Self {
        CsvRow {
            benchmark: &c.benchmark,
            options: c.options.label(),
            metric: &c.metric,
            unit: &c.unit,
            base_n: c.base_n,
            new_n: c.new_n,
            base_median: c.base_median,
            new_median: c.new_median,
            ratio: c.ratio,
            ratio_ci_low: c.ratio_ci_low,
            ratio_ci_high: c.ratio_ci_high,
            p_value: c.p_value,
            p_adjusted: c.p_adjusted,
            welch_ci_low: c.welch_ci_low,
            welch_ci_high: c.welch_ci_high,
            verdict: c.verdict.to_string(),
            warnings: c.warnings.joined("; "),
            runs_ci_low: c.runs_ci_low,
            runs_ci_high: c.runs_ci_high,
            base_sessions: c.base_sessions,
            new_sessions: c.new_sessions,
            noise_source: c.noise_source.map(NoiseSource::as_str),
            session_noise: c.session_noise,
            mdc: c.mdc,
            runs_ratio: c.runs_ratio,
            ratio_df: c.ratio_df,
            resolution: c.resolution,
        }
    }
}

/// One row per comparison with the JSON field names as header; numbers at full precision,
/// absent values empty, warnings joined by "; ". Quoting is RFC 4180's (the `csv` crate).
pub fn csv(report: &CompareReport) -> Result<String, csv::Error> {
    let mut out = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    out.write_record(CsvRow::HEADER)?;
    for c in report.comparisons.iter().chain(&report.secondary) {
        out.serialize(CsvRow::new(c))?;
    }
    let bytes = out
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    // Every field is a Rust string, so the bytes are UTF-8.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_are_short() {
        assert_eq!(p_text(0.0001), "<0.001");
        assert_eq!(p_text(0.04567), "0.046");
    }
}
