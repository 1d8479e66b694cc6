//! Terminal tables: the one table renderer (comfy-table) and the tables of summaries.

use comfy_table::presets::{NOTHING, UTF8_FULL_CONDENSED};
use comfy_table::{CellAlignment, ContentArrangement, Table};

use crate::format::{pct, sig};
use vernier_analysis::ConfigSummary;
use vernier_model::{level_percent, CONFIDENCE_LEVEL};

fn opt(v: Option<f64>) -> String {
    v.map(|v| sig(v, 4)).unwrap_or_else(|| "-".to_string())
}

fn interval(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(lo), Some(hi)) => format!("[{}, {}]", sig(lo, 4), sig(hi, 4)),
        _ => "-".to_string(),
    }
}

/// How a bordered table fits a terminal `width` columns wide (`None` when stdout is not a
/// terminal): wrapped to the width when it is known, unwrapped otherwise. A width of 0 is what
/// a serial console or `script` reports for a terminal whose size nobody set: unknown, not a
/// table of one-character columns.
fn arrangement(width: Option<u16>) -> ContentArrangement {
    match width {
        Some(w) if w > 0 => ContentArrangement::Dynamic,
        _ => ContentArrangement::Disabled,
    }
}

fn new_table(header: &[&str]) -> Table {
    let mut table = Table::new();
    let fit = arrangement(table.width());
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(fit)
        .set_header(header.to_vec());
    for i in 1..header.len() {
        if let Some(col) = table.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// Plain columns two spaces apart, without borders or margins, for output that is read and
/// pasted (compare, calibrate): the columns listed in `left` are left-aligned, the others (the
/// numbers) right-aligned.
pub fn columns<R: AsRef<[String]>>(headers: &[&str], rows: &[R], left: &[usize]) -> String {
    let mut table = Table::new();
    table.load_preset(NOTHING).set_header(headers.to_vec());
    for r in rows {
        table.add_row(r.as_ref().to_vec());
    }
    let last = headers.len().saturating_sub(1);
    for (i, column) in table.column_iter_mut().enumerate() {
        // No margin at the line's start or end; two spaces between columns.
        column.set_padding((u16::from(i > 0), u16::from(i < last)));
        if !left.contains(&i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table.trim_fmt() + "\n"
}

/// The direction of a metric as a short hint.
fn direction(s: &ConfigSummary) -> &'static str {
    if s.higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    }
}

/// The CPU time the loads used per measured run: its median and range in milliseconds.
fn load_cpu(per_run_ns: &[i64]) -> String {
    let ms: Vec<f64> = per_run_ns.iter().map(|&ns| ns as f64 / 1e6).collect();
    let (Ok(median), Ok(min), Ok(max)) = (
        vernier_stats::median(&ms),
        vernier_stats::quantile(&ms, 0.0),
        vernier_stats::quantile(&ms, 1.0),
    ) else {
        return "-".into();
    };
    format!(
        "median {} ms (min {}, max {})",
        sig(median, 3),
        sig(min, 3),
        sig(max, 3)
    )
}

/// The compact table printed at the end of `vernier run`.
pub fn run_summary_table(summaries: &[ConfigSummary], width: Option<u16>) -> String {
    // One session's configurations share its level.
    let level = summaries.first().map_or(CONFIDENCE_LEVEL, |s| s.level);
    let ci = format!("{} CI", level_percent(level));
    // Each run gives one value of the metric (latency: its p99); the table shows their median.
    let mut table = new_table(&[
        "configuration",
        "n",
        "metric",
        "median of runs",
        &ci,
        "±",
        "unit",
        "stop",
    ]);
    if let Some(w) = width {
        table.set_width(w);
    }
    for s in summaries {
        table.add_row(vec![
            s.label(),
            s.n.to_string(),
            s.metric.clone(),
            opt(s.median),
            interval(s.ci_low, s.ci_high),
            s.relative_half_width()
                .map(pct)
                .unwrap_or_else(|| "-".into()),
            s.unit.clone(),
            s.stop_reason.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    table.to_string()
}

/// The detailed per-configuration view of `vernier show`: one block per configuration, headed
/// by its label (the options given, defaults left out) and, when `every_option`, a line with all
/// of its options (`show -v`).
pub fn show_text(summaries: &[ConfigSummary], width: Option<u16>, every_option: bool) -> String {
    let mut out = String::new();
    for s in summaries {
        out.push_str(&format!(
            "{}  ({} {}, {}; benchmark version {})\n",
            s.label(),
            s.metric,
            s.unit,
            direction(s),
            s.benchmark_version
        ));
        if every_option {
            out.push_str(&format!(
                "options: {}\n",
                vernier_model::ConfigKey::loaded(&s.benchmark, &s.options, &s.loads).full_label()
            ));
        }
        let mut table = new_table(&["statistic", "value"]);
        if let Some(w) = width {
            table.set_width(w);
        }
        let level = level_percent(s.level);
        let median_ci = format!("median {level} CI");
        let mean_ci = format!("mean {level} CI (t)");
        let rows: Vec<(&str, String)> = vec![
            ("runs (warmup)", format!("{} ({})", s.n, s.warmup_runs)),
            ("median", opt(s.median)),
            (&median_ci, interval(s.ci_low, s.ci_high)),
            ("CI method", s.ci_meaning.clone()),
            (
                "CI half-width",
                s.relative_half_width()
                    .map(pct)
                    .unwrap_or_else(|| "-".into()),
            ),
            ("mean", opt(s.mean)),
            (&mean_ci, interval(s.mean_ci_low, s.mean_ci_high)),
            ("min", opt(s.min)),
            ("max", opt(s.max)),
            ("p90", opt(s.p90)),
            ("p95", opt(s.p95)),
            ("p99", opt(s.p99)),
            ("MAD", opt(s.mad)),
            (
                "stop reason",
                s.stop_reason.clone().unwrap_or_else(|| "-".into()),
            ),
        ];
        for (name, value) in rows {
            table.add_row(vec![name.to_string(), value]);
        }
        if !s.loads.is_empty() {
            table.add_row(vec![
                "load CPU per run".to_string(),
                load_cpu(&s.load_cpu_ns),
            ]);
        }
        out.push_str(&table.to_string());
        out.push('\n');
        if !s.secondary.is_empty() {
            let ci = format!("median {level} CI");
            let mut table = new_table(&["other metric", "runs", "median", &ci, "min", "max"]);
            if let Some(w) = width {
                table.set_width(w);
            }
            for m in &s.secondary {
                let with_unit = |v: Option<f64>| match v {
                    Some(_) => format!("{} {}", opt(v), m.unit),
                    None => "-".into(),
                };
                table.add_row(vec![
                    m.metric.clone(),
                    m.n.to_string(),
                    with_unit(m.median),
                    interval(m.ci_low, m.ci_high),
                    with_unit(m.min),
                    with_unit(m.max),
                ]);
            }
            out.push_str(&table.to_string());
            out.push('\n');
        }
        if let Some(e) = &s.error {
            out.push_str(&format!("  error: {e}\n"));
        }
        for w in &s.warnings {
            out.push_str(&format!("  warning: {w}\n"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_of_width_zero_is_of_unknown_width() {
        let dynamic = |w| matches!(arrangement(w), ContentArrangement::Dynamic);
        assert!(!dynamic(Some(0)));
        assert!(!dynamic(None));
        assert!(dynamic(Some(80)));
    }
}
