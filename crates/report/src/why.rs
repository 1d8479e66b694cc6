//! Why runs stand out, in words: the monitor keys associated with a configuration's slow runs
//! and what sets each outlier run apart ([`vernier_analysis::monitors_why`]; docs/why.md). The
//! words say association, never cause.

use std::fmt::Write as _;

use vernier_analysis::monitors_compare::{KeyDifference, MonitorDifferences, Per, DIFFERS_P};
use vernier_analysis::monitors_why::{Association, OutlierSide, SlowRuns, EXPLANATION_P};
use vernier_analysis::CompareReport;
use vernier_model::level_percent;
use vernier_model::monitor::SeriesKind;

use crate::compare::p_text;
use crate::markup::Markup;
use crate::monitors::Scale;

/// Explanations shown per configuration in `show`; JSON carries all.
pub const SHOWN: usize = 3;

/// `stat.user_ns x3.1, rho 0.82, adjusted p 0.002` (the ratio only with slow outlier runs).
pub fn association_text(a: &Association) -> String {
    let ratio = a
        .slow_ratio
        .map(|r| format!(" x{}", ratio_text(r)))
        .unwrap_or_default();
    format!(
        "{}{ratio}, rho {:.2}, adjusted p {}",
        a.key,
        a.rho,
        p_text(a.p_adjusted)
    )
}

/// A ratio with two significant digits (`3.1`, `0.42`, `12`).
fn ratio_text(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}")
    } else if r >= 1.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

fn runs_text(runs: &[u32]) -> String {
    let list: Vec<String> = runs.iter().map(u32::to_string).collect();
    list.join(", ")
}

/// The lines `show` prints for a configuration: the strongest few explanations of its slow
/// runs and the keys each outlier run differs in most; empty when there is nothing to say
/// (no explanation and no outlier run).
pub fn slow_runs_text(why: &SlowRuns) -> String {
    let mut text = String::new();
    let explanations: Vec<&Association> = why.explanations().take(SHOWN).collect();
    if explanations.is_empty() && why.outlier_runs.is_empty() {
        return text;
    }
    if explanations.is_empty() {
        let _ = writeln!(
            text,
            "  slow runs: no monitor key is associated with the runs' values ({} keys over {} \
             runs, none with adjusted p below {EXPLANATION_P})",
            why.keys_tested, why.runs
        );
    } else {
        let list: Vec<String> = explanations.iter().map(|a| association_text(a)).collect();
        let more = why.explanations().count() - explanations.len();
        let more = if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        };
        let _ = writeln!(text, "  slow runs: {}{more}", list.join("; "));
        let _ = writeln!(
            text,
            "    (associations over {} runs: these keys moved with the runs' slowness, which \
             does not say what caused what)",
            why.runs
        );
    }
    if !why.slow_runs.is_empty() {
        let _ = writeln!(text, "  slow outlier runs: {}", runs_text(&why.slow_runs));
    }
    for o in &why.outlier_runs {
        let side = match o.side {
            OutlierSide::Slow => "slow",
            OutlierSide::Fast => "fast",
        };
        let keys: Vec<String> = o
            .keys
            .iter()
            .take(SHOWN)
            .map(|k| {
                let scale = Scale::of(&k.unit, SeriesKind::Gauge, &[k.value, k.typical]);
                let unit = if scale.unit.is_empty() {
                    String::new()
                } else {
                    format!(" {}", scale.unit)
                };
                format!(
                    "{} {}{unit} against {}{unit} (x{})",
                    k.key,
                    scale.format(k.value),
                    scale.format(k.typical),
                    ratio_text(k.ratio)
                )
            })
            .collect();
        if keys.is_empty() {
            continue;
        }
        let _ = writeln!(text, "  run {} ({side}): {}", o.run, keys.join("; "));
    }
    text
}

/// One differing counter: `stat.ctxt 2.00 -> 4.01 per operation (+2.01 [+1.98, +2.05]),
/// adjusted p <0.001`.
fn difference_text(d: &MonitorDifferences, k: &KeyDifference) -> String {
    let scale = Scale::of(
        &k.unit,
        SeriesKind::Gauge,
        &[k.base_median, k.new_median, k.difference],
    );
    let unit = if scale.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", scale.unit)
    };
    let signed = |v: f64| {
        let t = scale.format(v);
        if v > 0.0 {
            format!("+{t}")
        } else {
            t
        }
    };
    let ci = match (k.ci_low, k.ci_high) {
        (Some(lo), Some(hi)) => format!(" [{}, {}]", signed(lo), signed(hi)),
        _ => String::new(),
    };
    let per = match d.per {
        Per::Operation => "per operation",
        Per::Run => "per run",
    };
    format!(
        "{} {} -> {}{unit} {per} ({}{ci}), adjusted p {}",
        k.key,
        scale.format(k.base_median),
        scale.format(k.new_median),
        signed(k.difference),
        p_text(k.p_adjusted)
    )
}

fn differences_intro(report: &CompareReport) -> String {
    format!(
        "Monitor counters that differ, NEW against BASE (Hodges-Lehmann difference with its {} \
         interval, adjusted p below {DIFFERS_P}): what moved with the change, not necessarily \
         its cause",
        level_percent(report.level)
    )
}

/// Per configuration with a differing counter: its label, its verdict and the counters.
fn differing(report: &CompareReport) -> Vec<(String, Vec<String>)> {
    report
        .monitors
        .iter()
        .filter_map(|d| {
            let lines: Vec<String> = d.differing().map(|k| difference_text(d, k)).collect();
            if lines.is_empty() {
                return None;
            }
            let verdict = report
                .comparisons
                .iter()
                .find(|c| c.label() == d.configuration)
                .map(|c| format!(" ({})", c.verdict_word()))
                .unwrap_or_default();
            let per_run = if d.per == Per::Run {
                "; per run: the runs do not report their operations"
            } else {
                ""
            };
            Some((format!("{}{verdict}{per_run}", d.configuration), lines))
        })
        .collect()
}

/// The counters that differ, as plain lines for the terminal ("" when none differs).
pub fn monitor_differences_text(report: &CompareReport) -> String {
    let groups = differing(report);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{}\n", differences_intro(report));
    for (heading, lines) in groups {
        let _ = writeln!(out, "{heading}");
        for l in lines {
            let _ = writeln!(out, "  {l}");
        }
    }
    out
}

/// The counters that differ, as a Markdown section ("" when none differs).
pub fn monitor_differences_markup(m: &impl Markup, report: &CompareReport) -> String {
    let groups = differing(report);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{}\n\n", m.escape(&differences_intro(report)));
    for (heading, lines) in groups {
        let _ = writeln!(out, "{}", m.item(&m.escape(&heading)));
        for l in lines {
            let _ = writeln!(out, "  {}", m.item(&m.escape(&l)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_analysis::monitors_why::{KeyDeviation, OutlierRun};

    fn association(key: &str, explains: bool) -> Association {
        Association {
            key: key.into(),
            unit: "ns".into(),
            kind: SeriesKind::Counter,
            runs: 20,
            rho: 0.823,
            p_value: 0.0001,
            p_adjusted: if explains { 0.002 } else { 0.3 },
            explains,
            slow_ratio: Some(3.12),
            slow_median: Some(3.12e8),
            typical_median: Some(1e8),
        }
    }

    #[test]
    fn the_strongest_explanations_and_the_outlier_runs() {
        let why = SlowRuns {
            runs: 20,
            keys_tested: 2,
            associations: vec![association("stat.steal_ns", true), association("x", false)],
            slow_runs: vec![4, 17],
            outlier_runs: vec![OutlierRun {
                run: 4,
                value: 2.0,
                side: OutlierSide::Slow,
                keys: vec![KeyDeviation {
                    key: "stat.steal_ns".into(),
                    unit: "ns".into(),
                    value: 3e8,
                    typical: 1e8,
                    ratio: 3.0,
                    deviations: Some(40.0),
                }],
            }],
        };
        let text = slow_runs_text(&why);
        assert!(
            text.contains("slow runs: stat.steal_ns x3.1, rho 0.82, adjusted p 0.002\n"),
            "{text}"
        );
        assert!(text.contains("does not say what caused what"), "{text}");
        assert!(text.contains("slow outlier runs: 4, 17"), "{text}");
        assert!(
            text.contains("run 4 (slow): stat.steal_ns 300.0 ms against 100.0 ms (x3.0)"),
            "{text}"
        );
        let quiet = SlowRuns {
            associations: vec![association("x", false)],
            slow_runs: vec![],
            outlier_runs: vec![],
            ..why
        };
        assert_eq!(slow_runs_text(&quiet), "");
    }
}
