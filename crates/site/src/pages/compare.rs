//! The comparison: forest plot, summary and the table of `compare`.

use maud::{html, Markup, Render};
use vernier_analysis::{CompareReport, Warning};
use vernier_plot::{Format, PlotError, Size};

use super::glossary::word;
use super::{answer, nav};
use crate::html::{self, interval, num};
use crate::Site;

/// The page of comparison `i`.
pub fn compare(site: &Site, i: usize) -> String {
    let Some(c) = site.input.comparisons.get(i) else {
        return String::new();
    };
    let r = &c.report;
    let s = &r.summary;
    let opposite = s.warnings.0.contains(&Warning::OppositeDirections);
    let geomean = match s.geomean_ratio {
        Some(g) => format!(
            " Geometric mean of the {} {} with an interval: {} {}.",
            s.geomean_of,
            if s.geomean_of == 1 { "ratio" } else { "ratios" },
            num(Some(g)),
            interval(s.geomean_ci_low, s.geomean_ci_high)
        ),
        None if s.compared == 0 => String::new(),
        // Said once, as the sentence about the geometric mean, not again as a note.
        None if opposite => format!(" No geometric mean: {}.", Warning::OppositeDirections),
        None => " No geometric mean: no configuration has a ratio with an interval (an interval \
                  needs enough runs on both sides and runs that are not all tied)."
            .to_string(),
    };
    let notes: Vec<String> = s
        .warnings
        .0
        .iter()
        .filter(|w| match w {
            Warning::OppositeDirections => !opposite,
            Warning::LeftOutOfGeomean { .. } => s.geomean_ratio.is_some(),
            _ => true,
        })
        .map(ToString::to_string)
        .collect();
    let ci = format!("{} CI", vernier_model::level_percent(r.level));
    let mut warnings = html::WarningNotes::new("warning");
    let rows = rows(r, &mut warnings);
    let body = html! {
        p {
            "BASE " (c.base) ", NEW " (c.new) "; threshold "
            (vernier_report::format::pct(r.threshold)) ", "
            (vernier_model::level_percent(r.level)) " intervals, as "
            code { "vernier compare " (c.base) " " (c.new) } " reports it."
        }
        @if r.comparisons.is_empty() {
            p { "No configuration is on both sides of the comparison." }
        } @else {
            (answer::answer(site, i, ""))
            (html::figure(
                &crate::forest_path(i),
                "the ratio NEW/BASE of each configuration with its interval, coloured by \
                 verdict; the geometric mean last",
                None,
            ))
        }
        @if !geomean.is_empty() {
            p { (geomean.trim_start()) }
        }
        @if !notes.is_empty() {
            p.note { (notes.join("; ")) }
        }
        (super::profiles::compare_section(site, i))
        h2 #comparison { "Every configuration" }
        (html::table(
            &[
                "configuration",
                "metric (unit)",
                "BASE runs",
                "NEW runs",
                "BASE median",
                "NEW median",
                "ratio NEW/BASE",
                &ci,
                "p (adjusted)",
                "verdict",
                "warnings",
            ],
            &rows,
            &[2, 3, 4, 5, 6, 7, 8],
        ))
        (warnings.list())
        @if !r.unmatched.is_empty() {
            h2 #not-compared { "Not compared" }
            (html::table(
                &["configuration", "metric", "only in", "reason"],
                &unmatched_rows(r),
                &[],
            ))
        }
    };
    let title = if site.input.comparisons.len() > 1 {
        format!("Compare {} against {}", c.new, c.base)
    } else {
        "Compare".to_string()
    };
    html::page("", &title, &nav(site), &body)
}

/// A row per comparison, the secondary metrics' last, as `compare` prints them.
fn rows(r: &CompareReport, warnings: &mut html::WarningNotes) -> Vec<Vec<Markup>> {
    r.comparisons
        .iter()
        .chain(&r.secondary)
        .map(|x| {
            vec![
                html::label(&x.label()),
                // The medians are in the metric's unit, as `compare` prints them.
                format!("{} ({})", x.metric, x.unit).render(),
                x.base_n.render(),
                x.new_n.render(),
                num(Some(x.base_median)).render(),
                num(Some(x.new_median)).render(),
                num(Some(x.ratio)).render(),
                interval(x.ratio_ci_low, x.ratio_ci_high).render(),
                vernier_report::compare::p_text(x.p_adjusted).render(),
                word("", x.verdict_word(), x.verdict_word()),
                warnings.cell(&x.warnings),
            ]
        })
        .collect()
}

/// A row per configuration found on one side only, with the side and why.
fn unmatched_rows(r: &CompareReport) -> Vec<Vec<String>> {
    r.unmatched
        .iter()
        .map(|u| {
            vec![
                u.label(),
                u.metric.clone(),
                // BASE and NEW, as the page names the sides everywhere.
                u.side.to_string().to_uppercase(),
                u.reason.clone(),
            ]
        })
        .collect()
}

/// The forest figure of comparison `i`.
pub fn forest_figure(site: &Site, i: usize) -> Result<Vec<u8>, PlotError> {
    let Some(c) = site.input.comparisons.get(i) else {
        return Err(PlotError::Empty("no comparison".into()));
    };
    let size = Size {
        width: 1200,
        height: (160 + 44 * c.report.comparisons.len() as u32).clamp(400, 8000),
    };
    vernier_plot::forest(
        &c.report,
        &format!("{} vs {}: ratio NEW/BASE", c.new, c.base),
        Format::Svg,
        size,
    )
}
