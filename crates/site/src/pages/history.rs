//! Every configuration over time on each machine with its change points, as `vernier history`
//! reports them (docs/history.md).

use maud::{html, Markup, Render};
use vernier_analysis::HistorySeries;
use vernier_model::ShortId;
use vernier_plot::{Format, PlotError, Size};
use vernier_report::format::plural;
use vernier_report::units;

use super::nav;
use crate::html::{self, interval, num};
use crate::Site;

pub fn history(site: &Site) -> String {
    let report = match &site.history {
        Ok(r) => r,
        Err(e) => {
            let body = html! { p.note { "The history cannot be computed: " (e) } };
            return html::page("", "History", &nav(site), &body);
        }
    };
    let ci = format!("ratio {} CI", vernier_model::level_percent(report.level));
    let body = html! {
        p {
            "Each configuration on each machine: the median of every session, oldest first, \
             with its interval, and the change points found in that series (split and merge, \
             p < " (report.max_pvalue) ", windows of " (report.window) " sessions). Each step \
             is measured as " code { "vernier compare" } " measures the sessions on either \
             side, at threshold " (vernier_report::format::pct(report.threshold)) "."
        }
        @for (k, &i) in site.histories.iter().enumerate() {
            @let s = &report.series[i];
            h2 { (html::label(&s.label())) " on " (s.host) }
            (html::figure(
                &format!("history/{k}.svg"),
                &format!(
                    "{} on {}: {}, {}",
                    s.label(),
                    s.host,
                    plural(s.points.len(), "session"),
                    plural(s.steps.len(), "change point")
                ),
                None,
            ))
            @if s.steps.is_empty() {
                p { "No change point." }
            } @else {
                (steps(s, k, &ci))
            }
            (changes(s))
        }
    };
    html::page("", "History", &nav(site), &body)
}

/// What series `s` holds besides its steps, as `vernier history` prints it: its episodes
/// (regressions that came and went), drifts, and its newest level against the baseline where
/// that says more than its newest step (docs/history.md).
fn changes(s: &HistorySeries) -> Markup {
    let lines = vernier_report::history::change_lines(s);
    html! {
        @if !lines.is_empty() {
            ul.changes {
                @for l in &lines { li { (l) } }
            }
        }
    }
}

/// The table of the change points of series `s` (the `k`-th drawn), with its warnings.
fn steps(s: &HistorySeries, k: usize, ci: &str) -> Markup {
    let mut notes = html::WarningNotes::new(&format!("warning-{k}"));
    let rows: Vec<Vec<Markup>> = s
        .steps
        .iter()
        .map(|step| {
            let point = &s.points[step.index];
            let tags: Vec<String> = point.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
            vec![
                ShortId(step.session).to_string().render(),
                units::utc_named(step.started_at_ns).render(),
                tags.join(" ").render(),
                format!("{} -> {}", step.before_sessions, step.after_sessions).render(),
                num(Some(step.change.before_median)).render(),
                num(Some(step.change.after_median)).render(),
                num(Some(step.change.ratio)).render(),
                interval(step.change.ratio_ci_low, step.change.ratio_ci_high).render(),
                step.change.direction.as_str().render(),
                step.change.verdict.as_str().render(),
                notes.cell(&step.change.warnings),
            ]
        })
        .collect();
    html! {
        (html::table(
            &[
                "first session at the new level",
                "started",
                "tags",
                "sessions",
                "median before",
                "median after",
                "ratio after/before",
                ci,
                "direction",
                "verdict",
                "warnings",
            ],
            &rows,
            &[4, 5, 6, 7],
        ))
        (notes.list())
    }
}

pub fn history_figure(site: &Site, k: usize) -> Result<Vec<u8>, PlotError> {
    let Ok(report) = &site.history else {
        return Err(PlotError::Empty("no history".into()));
    };
    let s = &report.series[site.histories[k]];
    let size = Size {
        width: (400 + 24 * s.points.len() as u32).clamp(1200, 6000),
        height: 700,
    };
    vernier_plot::history(
        s,
        &format!("{} on {}: session medians over time", s.label(), s.host),
        Format::Svg,
        size,
    )
}
