//! `vernier compare BASE NEW`: the comparison of two result sets (docs/compare.md).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use uuid::Uuid;
use vernier_analysis::{
    CompareReport, CompareSettings, Comparison, NoiseSource, DEFAULT_THRESHOLD, LEVEL,
};
use vernier_model::StoredSession;
use vernier_report::format::sig;
use vernier_store::Store;

use crate::cli::{CompareArgs, CompareFormat};
use crate::db;
use crate::out::{out, printable_lines};

pub fn compare(args: CompareArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let base = load_selected(&store, &args.base).context("BASE")?;
    let new = load_selected(&store, &args.new).context("NEW")?;
    let settings = CompareSettings {
        threshold: args.threshold.unwrap_or(DEFAULT_THRESHOLD),
        level: LEVEL,
    };
    // The stored session-to-session noise of the environments involved (`vernier calibrate`).
    let fingerprints: Vec<String> = base
        .iter()
        .chain(&new)
        .map(|s| s.info.fingerprint.clone())
        .collect();
    let calibrations = store
        .calibrations(&fingerprints)
        .context("cannot read the calibrations")?;
    let report = vernier_analysis::compare_calibrated(&base, &new, &settings, &calibrations)?;
    let text = match args.format {
        CompareFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
        CompareFormat::Table => table(&report),
        CompareFormat::Markdown => markdown(&report),
        CompareFormat::Csv => csv(&report),
    };
    match args.format {
        // Data formats escape in their own way (JSON strings, CSV quoting).
        CompareFormat::Json | CompareFormat::Csv => out!("{text}"),
        CompareFormat::Markdown => out!("{}", printable_lines(&text)),
        CompareFormat::Table => {
            let findings = findings_text("BASE", &base) + &findings_text("NEW", &new);
            out!("{}", printable_lines(&(text + &findings)));
        }
    }
    if args.fail_on_regression && report.has_regression() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The sessions a selector names (the grammar of [`Store::select`]): tags
/// `key=value[,key=value...]` select every session carrying all of them, oldest first; a session
/// id, prefix, `latest` or `latest~N` one session.
pub fn resolve_selector(store: &impl Store, selector: &str) -> Result<Vec<Uuid>> {
    Ok(store.select(selector)?)
}

/// The one session a selector names, for commands that show one (`show`, `env`): tags that
/// select several sessions are an error listing how many.
pub fn resolve_one(store: &impl Store, selector: &str) -> Result<Uuid> {
    match resolve_selector(store, selector)?.as_slice() {
        [id] => Ok(*id),
        ids => bail!(
            "'{}' matches {} sessions; give one session's id (see `vernier sessions '{}'`) or \
             more tags",
            crate::out::printable(selector),
            ids.len(),
            crate::out::printable(selector)
        ),
    }
}

fn load_selected(store: &impl Store, selector: &str) -> Result<Vec<StoredSession>> {
    resolve_selector(store, selector)?
        .into_iter()
        .map(|id| {
            store
                .load_session(id)
                .with_context(|| format!("cannot load session {id}"))
        })
        .collect()
}

/// The validity findings (warnings and worse) stored with the sessions of one side.
fn findings_text(side: &str, sessions: &[StoredSession]) -> String {
    let mut seen = Vec::new();
    let mut out = String::new();
    for f in sessions.iter().flat_map(|s| &s.info.findings) {
        if f.severity >= vernier_model::Severity::Warning && !seen.contains(&&f.id) {
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

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".to_string())
}

fn ratio_text(v: f64) -> String {
    format!("{v:.3}")
}

fn p_text(p: f64) -> String {
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
    opt(c.mdc, |m| format!("{:.1}%", m * 100.0))
}

const HEADERS: [&str; 9] = [
    "configuration",
    "base median",
    "new median",
    "ratio",
    "95% CI",
    "MDC",
    "p",
    "p adj",
    "verdict",
];

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
            "geometric mean of ratios NEW/BASE over {}: {} {:.0}% CI [{}, {}]",
            s.geomean_of,
            ratio_text(g),
            report.level * 100.0,
            opt(s.geomean_ci_low, ratio_text),
            opt(s.geomean_ci_high, ratio_text)
        ));
    }
    lines.extend(s.warnings.iter().map(|w| format!("note: {w}")));
    lines
}

/// Plain aligned columns, then warnings, unmatched configurations and the summary.
pub fn table(report: &CompareReport) -> String {
    let rows: Vec<[String; 9]> = report.comparisons.iter().map(row).collect();
    let mut widths = HEADERS.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            // The configuration is left-aligned, the numbers right-aligned.
            if i == 0 || i == HEADERS.len() - 1 {
                let _ = write!(text, "{cell:<w$}");
            } else {
                let _ = write!(text, "{cell:>w$}");
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    if !rows.is_empty() {
        line(&mut out, &HEADERS.map(String::from));
        for r in &rows {
            line(&mut out, r);
        }
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
    if !report.unmatched.is_empty() {
        out.push_str("\nunmatched:\n");
        for u in &report.unmatched {
            let _ = writeln!(out, "  {} ({}): {}", u.label(), u.side, u.reason);
        }
    }
    out.push('\n');
    for l in summary_lines(report) {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|")
}

/// A GitHub-flavoured Markdown table with the summary as a list, for mailing lists and issues.
pub fn markdown(report: &CompareReport) -> String {
    let mut out = String::new();
    if !report.comparisons.is_empty() {
        let _ = writeln!(out, "| {} |", HEADERS.join(" | "));
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---|");
        for c in &report.comparisons {
            let cells: Vec<String> = row(c).iter().map(|s| md_escape(s)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
    }
    for c in &report.comparisons {
        for w in &c.warnings {
            let _ = writeln!(out, "- warning: `{}`: {}", c.label(), md_escape(w));
        }
    }
    for u in &report.unmatched {
        let _ = writeln!(
            out,
            "- unmatched: `{}` ({}): {}",
            u.label(),
            u.side,
            u.reason
        );
    }
    for l in summary_lines(report) {
        let _ = writeln!(out, "- {l}");
    }
    out
}

/// RFC 4180 quoting: fields with a comma, quote or line break are quoted, quotes doubled.
/// One CSV record: the quoted fields joined by commas, with its line end.
pub fn push_csv_row(out: &mut String, fields: &[String]) {
    let cells: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
    out.push_str(&cells.join(","));
    out.push('\n');
}

pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// One row per comparison with the JSON field names as header; numbers at full precision,
/// absent values empty, warnings joined by "; ".
pub fn csv(report: &CompareReport) -> String {
    let mut out = String::from(
        "benchmark,options,metric,unit,base_n,new_n,base_median,new_median,ratio,ratio_ci_low,\
         ratio_ci_high,p_value,p_adjusted,welch_ci_low,welch_ci_high,verdict,warnings,\
         runs_ci_low,runs_ci_high,base_sessions,new_sessions,noise_source,session_noise,mdc\n",
    );
    for c in &report.comparisons {
        let fields = [
            c.benchmark.clone(),
            c.options.label(),
            c.metric.clone(),
            c.unit.clone(),
            c.base_n.to_string(),
            c.new_n.to_string(),
            c.base_median.to_string(),
            c.new_median.to_string(),
            c.ratio.to_string(),
            num(c.ratio_ci_low),
            num(c.ratio_ci_high),
            c.p_value.to_string(),
            c.p_adjusted.to_string(),
            num(c.welch_ci_low),
            num(c.welch_ci_high),
            c.verdict.to_string(),
            c.warnings.join("; "),
            num(c.runs_ci_low),
            num(c.runs_ci_high),
            c.base_sessions.to_string(),
            c.new_sessions.to_string(),
            c.noise_source
                .map(|s| match s {
                    NoiseSource::Sessions => "sessions",
                    NoiseSource::Calibration => "calibration",
                })
                .unwrap_or_default()
                .to_string(),
            num(c.session_noise),
            num(c.mdc),
        ];
        push_csv_row(&mut out, &fields);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn p_values_are_short() {
        assert_eq!(p_text(0.0001), "<0.001");
        assert_eq!(p_text(0.04567), "0.046");
    }
}
