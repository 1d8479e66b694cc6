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

/// The columns that a narrow terminal loses first, in that order (indexes into [`headers`]):
/// the raw p-value (its adjusted one stays), the minimum detectable change, then the two
/// medians (the ratio and its interval say the change). The configuration, ratio, interval,
/// adjusted p-value and verdict always stay.
const SECONDARY_COLUMNS: [usize; 4] = [6, 5, 1, 2];

/// `rows` under `headers` as aligned columns no wider than `width` when it is known: the
/// secondary columns are left out one by one until the lines fit (a line longer than the
/// terminal wraps in the middle of its verdict), and the names of those left out are said
/// below the table.
fn fitted_columns(headers: &[String; 9], rows: &[[String; 9]], width: Option<usize>) -> String {
    let render = |dropped: &[usize]| {
        let (h, r) = kept_columns(headers, rows, 0, dropped);
        columns(&h, &r, &[0, h.len() - 1])
    };
    let fits = |text: &str, w: usize| text.lines().all(|l| l.chars().count() <= w);
    let full = render(&[]);
    let Some(w) = width else { return full };
    // Left out one by one in the table (a line per configuration reads best), then, when the
    // names alone are too long for that, with the names above their numbers, the medians back.
    let candidates = (0..=SECONDARY_COLUMNS.len())
        .map(|k| (false, k))
        .chain((2..=SECONDARY_COLUMNS.len()).map(|k| (true, k)));
    let mut text = full;
    let mut dropped: &[usize] = &[];
    for (stack, k) in candidates {
        dropped = &SECONDARY_COLUMNS[..k];
        text = if stack {
            stacked(headers, rows, dropped)
        } else {
            render(dropped)
        };
        if fits(&text, w) {
            break;
        }
    }
    if !dropped.is_empty() {
        let names: Vec<&str> = dropped.iter().map(|&i| headers[i].as_str()).collect();
        let _ = writeln!(
            text,
            "(narrowed to {w} columns, without: {})",
            names.join(", ")
        );
    }
    text
}

/// The headers and rows of the columns from `from` on, without those `dropped`.
fn kept_columns<'h>(
    headers: &'h [String; 9],
    rows: &[[String; 9]],
    from: usize,
    dropped: &[usize],
) -> (Vec<&'h str>, Vec<Vec<String>>) {
    let keep: Vec<usize> = (from..headers.len())
        .filter(|i| !dropped.contains(i))
        .collect();
    let h = keep.iter().map(|&i| headers[i].as_str()).collect();
    let r = rows
        .iter()
        .map(|row| keep.iter().map(|&i| row[i].clone()).collect())
        .collect();
    (h, r)
}

/// The rows without the columns `dropped`, each configuration's name on a line of its own above
/// its numbers: for names too long to share a line of a narrow terminal with them.
fn stacked(headers: &[String; 9], rows: &[[String; 9]], dropped: &[usize]) -> String {
    let (h, r) = kept_columns(headers, rows, 1, dropped);
    let numbers = columns(&h, &r, &[h.len() - 1]);
    let mut lines = numbers.lines();
    let mut out = format!("{}\n{}\n", headers[0], lines.next().unwrap_or_default());
    for (row, values) in rows.iter().zip(lines) {
        let _ = writeln!(out, "{}\n{values}", row[0]);
    }
    out
}

/// The warnings of the comparisons, each distinct text once, in the order first met: a text
/// that several configurations share (`base: not converged (stopped: max-time)`) is one line
/// with their count instead of one line each.
pub fn folded_warnings(comparisons: &[Comparison]) -> Vec<(Vec<String>, String)> {
    fold(
        comparisons
            .iter()
            .flat_map(|c| c.warnings.iter().map(|w| (c.label(), w.to_string()))),
    )
}

/// (configuration, text) pairs as each distinct text with the configurations that have it.
fn fold(pairs: impl IntoIterator<Item = (String, String)>) -> Vec<(Vec<String>, String)> {
    let mut folded: Vec<(Vec<String>, String)> = Vec::new();
    for (label, text) in pairs {
        match folded.iter_mut().find(|(_, t)| *t == text) {
            Some((labels, _)) => labels.push(label),
            None => folded.push((vec![label], text)),
        }
    }
    folded
}

/// Whom a folded warning is about: the configuration, or how many share it.
fn warned_configurations(labels: &[String]) -> String {
    match labels {
        [one] => one.clone(),
        _ => format!("{} configurations", labels.len()),
    }
}

/// Aligned columns that fit a terminal `width` columns wide when it is known (see
/// [`fitted_columns`]), then the warnings (each text once, with the count of configurations
/// that share it), unmatched configurations and the summary.
pub fn table(report: &CompareReport, width: Option<usize>) -> String {
    let rows: Vec<[String; 9]> = report.comparisons.iter().map(row).collect();
    let mut out = String::new();
    if !rows.is_empty() {
        out.push_str(&fitted_columns(&headers(report.level), &rows, width));
    }
    let warnings = folded_warnings(&report.comparisons);
    if !warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for (labels, text) in &warnings {
            let _ = writeln!(out, "  {}: {text}", warned_configurations(labels));
        }
    }
    if !report.secondary.is_empty() {
        out.push_str("\nother metrics of these configurations (not in the summary):\n");
        let rows: Vec<[String; 9]> = report.secondary.iter().map(secondary_row).collect();
        out.push_str(&fitted_columns(&headers(report.level), &rows, width));
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
    for (labels, w) in folded_warnings(&report.comparisons) {
        let whom = match labels.as_slice() {
            [one] => m.code(one),
            _ => warned_configurations(&labels),
        };
        let text = format!("warning: {whom}: {}", m.escape(&w));
        out.push_str(&m.item(&text));
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
    fn repeated_warnings_are_one_line_with_a_count() {
        let pair = |l: &str, t: &str| (l.to_string(), t.to_string());
        let folded = fold([
            pair("a", "not converged"),
            pair("a", "contaminated"),
            pair("b", "not converged"),
            pair("c", "not converged"),
        ]);
        assert_eq!(folded.len(), 2);
        assert_eq!(folded[0].0, ["a", "b", "c"]);
        assert_eq!(warned_configurations(&folded[0].0), "3 configurations");
        assert_eq!(warned_configurations(&folded[1].0), "a");
    }

    #[test]
    fn a_narrow_terminal_loses_the_secondary_columns_first() {
        let headers = headers(0.95);
        let row = [
            "hackbench:datasize=100:groups=10:ipc=socket".to_string(),
            "12.13 s".into(),
            "11.28 s".into(),
            "0.929".into(),
            "[0.643, 1.200]".into(),
            "63.4%".into(),
            "0.111".into(),
            "0.222".into(),
            "inconclusive".into(),
        ];
        let wide = fitted_columns(&headers, std::slice::from_ref(&row), None);
        assert!(
            wide.lines().next().unwrap().contains("base median"),
            "{wide}"
        );
        let narrow = fitted_columns(&headers, std::slice::from_ref(&row), Some(80));
        assert!(narrow.lines().all(|l| l.chars().count() <= 80), "{narrow}");
        let header = narrow.lines().take(2).collect::<Vec<_>>().join("\n");
        for kept in [
            "configuration",
            "base median",
            "ratio",
            "95% CI",
            "p adj",
            "verdict",
        ] {
            assert!(header.contains(kept), "{narrow}");
        }
        assert!(
            !header.contains("MDC") && !header.contains("  p  "),
            "{narrow}"
        );
        assert!(narrow.contains("inconclusive\n"), "{narrow}");
        assert!(narrow.contains("without: p, MDC"), "{narrow}");
    }

    #[test]
    fn p_values_are_short() {
        assert_eq!(p_text(0.0001), "<0.001");
        assert_eq!(p_text(0.04567), "0.046");
    }
}
