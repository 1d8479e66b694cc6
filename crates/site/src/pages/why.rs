//! The section of a benchmark's page that says which monitor keys moved with each
//! configuration's slow runs (docs/why.md), beside the runs.

use maud::{html, Markup, Render};
use vernier_analysis::ConfigSummary;
use vernier_plot::Series;
use vernier_report::why::{association_text, SHOWN};

use crate::html;

/// A row per series and configuration whose runs have an explanation or slow outlier runs;
/// nothing when none has.
pub(super) fn slow_runs_section(
    series: &[Series],
    short: &impl Fn(&ConfigSummary) -> String,
) -> Markup {
    let mut rows = Vec::new();
    for s in series {
        for c in &s.summaries {
            let Some(why) = &c.slow_runs else { continue };
            let explanations: Vec<String> = why
                .explanations()
                .take(SHOWN)
                .map(association_text)
                .collect();
            if explanations.is_empty() && why.slow_runs.is_empty() {
                continue;
            }
            let slow: Vec<String> = why.slow_runs.iter().map(u32::to_string).collect();
            rows.push(vec![
                s.name.render(),
                html::label(&short(c)),
                if explanations.is_empty() {
                    "none (no key with adjusted p below 0.05)".render()
                } else {
                    explanations.join("; ").render()
                },
                if slow.is_empty() {
                    "-".render()
                } else {
                    slow.join(", ").render()
                },
            ]);
        }
    }
    let content = html! {
        @if !rows.is_empty() {
            (html::table(
                &["series", "configuration", "associated monitor keys", "slow outlier runs"],
                &rows,
                &[],
            ))
        }
    };
    html::section(
        3,
        Some("slow-runs"),
        "Slow runs and the monitors",
        Some(html! {
            "Monitor keys whose per-run summary moved with the runs' slowness (Spearman's rho \
             over the runs, permutation p-value adjusted over the keys by Benjamini-Hochberg, \
             shown below 0.05), with the key's median in the slow outlier runs over the \
             others'. An association, not a cause: " code { "vernier show" } " lists what \
             each outlier run differs in, and docs/why.md says how it is computed."
        }),
        &content,
    )
}
