//! The answer to "what changed between BASE and NEW": the verdict counts and the geometric
//! mean, the changes ranked by size as signed percentages with their intervals (each linking
//! to its benchmark's page), the configurations not decided with the reason in words, the
//! validity warnings beside the verdicts they touch, and how the two environments differ. It
//! opens the index and the compare page. Every number is the comparison's
//! (`vernier_analysis::compare_calibrated`), in the texts of `vernier compare`
//! (`vernier_report::compare`).

use maud::{html, Markup};
use vernier_analysis::environment::{diff, kernel_config_diff};
use vernier_analysis::{change_text, CompareReport, Comparison as Compared, Verdict};
use vernier_model::{Severity, StoredSession};
use vernier_report::compare::{inconclusive_reason, ranked};
use vernier_report::format::plural;

use super::glossary::word;
use crate::{Comparison, Site};

/// How many undecided configurations the answer lists before pointing to the compare page.
const UNDECIDED_SHOWN: usize = 8;
/// How many environment differences the answer lists before pointing to the environment page.
const DIFFERENCES_SHOWN: usize = 8;

/// The answer of comparison `i`, on a page whose way back to the root is `root`.
pub fn answer(site: &Site, i: usize, root: &str) -> Markup {
    let Some(c) = site.input.comparisons.get(i) else {
        return html! {};
    };
    let page = crate::compare_page(i);
    let r = &c.report;
    let s = &r.summary;
    let ranked = ranked(r);
    let undecided: Vec<&Compared> = r
        .comparisons
        .iter()
        .filter(|x| x.verdict == Verdict::Inconclusive && x.withheld().is_none())
        .collect();
    let withheld = r
        .comparisons
        .iter()
        .filter(|x| x.withheld().is_some())
        .count();
    // The first answer is `#answer`, the others `#answer-2`, ..., as their compare pages.
    let id = match i {
        0 => "answer".to_string(),
        _ => format!("answer-{}", i + 1),
    };
    html! {
        section.answer id=(id) {
            p.verdicts {
                strong { (c.new) } " against " strong { (c.base) } ": "
                (plural(s.compared, "configuration")) " compared, "
                span.slower { (s.slower) " " (word(root, "slower", "slower")) } ", "
                span.faster { (s.faster) " " (word(root, "faster", "faster")) } ", "
                (s.equivalent) " " (word(root, "equivalent", "equivalent")) ", "
                (s.inconclusive) " " (word(root, "inconclusive", "inconclusive"))
                @if withheld > 0 {
                    " (" (withheld) " of them " (word(root, "withheld", "withheld")) ")"
                }
                "."
                @if let Some(g) = s.geomean_ratio {
                    " " (word(root, "geomean", "Geometric mean")) " of " (s.geomean_of) ": "
                    strong { (change_text(g)) } " "
                    (percent_interval(s.geomean_ci_low, s.geomean_ci_high)) "."
                }
            }
            @if ranked.is_empty() {
                p { "No configuration changed by more than the "
                    (word(root, "threshold", "threshold")) " ("
                    (vernier_report::format::pct(r.threshold)) ") with a verdict." }
            } @else {
                // Largest first; the change, its interval and the verdict on one line, the
                // warnings that touch the verdict under it.
                ol.changes {
                    @for x in &ranked { (change_row(site, x, root, &page)) }
                }
            }
            @if !undecided.is_empty() {
                details.undecided {
                    summary {
                        (plural(undecided.len(), "configuration")) " "
                        (word(root, "inconclusive", "inconclusive")) ", and why"
                    }
                    ul {
                        @for x in undecided.iter().take(UNDECIDED_SHOWN) {
                            li {
                                (config_link(site, x, root)) " "
                                (change_text(x.ratio)) " " (x.change_interval_text()) ": "
                                (inconclusive_reason(x, r.threshold).unwrap_or_default())
                            }
                        }
                        @if undecided.len() > UNDECIDED_SHOWN {
                            li { "and " (undecided.len() - UNDECIDED_SHOWN) " more on the "
                                 a href={ (root) (page) } { "compare page" } "." }
                        }
                    }
                }
            }
            (findings(site, c, root, &page))
            (environments(site, c, root))
        }
    }
}

/// One ranked change: `pipe:mode=cross-cpu +19.0% [+17.7%, +20.0%] slower`, the
/// configuration linking to its benchmark's page, the verdict to the glossary; a withheld one
/// with the verdict it would have had and why it is withheld.
fn change_row(site: &Site, x: &Compared, root: &str, page: &str) -> Markup {
    let (id, text) = match x.withheld() {
        Some(v) => ("withheld", format!("withheld ({v})")),
        None => (x.verdict.as_str(), x.verdict.to_string()),
    };
    // Each code once (both sides may raise it), its texts together.
    let mut codes: Vec<(&str, Vec<String>)> = Vec::new();
    for w in &x.warnings {
        match codes.iter_mut().find(|(c, _)| *c == w.code()) {
            Some((_, texts)) => texts.push(w.to_string()),
            None => codes.push((w.code(), vec![w.to_string()])),
        }
    }
    html! {
        li.{ "is-" (x.verdict_word()) } {
            (config_link(site, x, root)) " "
            strong.change { (change_text(x.ratio)) } " "
            span.interval { (x.change_interval_text()) } " "
            (word(root, id, &text))
            // The warnings that touch this verdict, by their codes, each text its tooltip and
            // in full on the compare page.
            @if !codes.is_empty() {
                span.touching {
                    "warnings: "
                    @for (i, (code, texts)) in codes.iter().enumerate() {
                        @if i > 0 { ", " }
                        a href={ (root) (page) "#comparison" } title=(texts.join("; ")) { (code) }
                    }
                }
            }
        }
    }
}

/// A configuration's label linking to its benchmark's page (the runs behind its numbers).
fn config_link(site: &Site, x: &Compared, root: &str) -> Markup {
    let label = crate::html::label(&x.label());
    match site.benchmark_page(&x.benchmark) {
        Some(page) => html! {
            a.config href={ (root) (page) "#" (crate::html::config_anchor(&x.label())) } { (label) }
        },
        None => html! { span.config { (label) } },
    }
}

/// An interval of the ratio as changes in percent, or `-`.
fn percent_interval(low: Option<f64>, high: Option<f64>) -> String {
    match (low, high) {
        (Some(l), Some(h)) => format!("[{}, {}]", change_text(l), change_text(h)),
        _ => "-".to_string(),
    }
}

/// The sessions of the site among `ids`.
fn sessions<'a>(site: &'a Site, ids: &[uuid::Uuid]) -> Vec<&'a StoredSession> {
    site.input
        .sessions
        .iter()
        .filter(|s| ids.contains(&s.info.id))
        .collect()
}

/// The validity findings (warnings and worse) of each side's sessions, as `compare` prints
/// them under its table: they touch every verdict above.
fn findings(site: &Site, c: &Comparison, root: &str, page: &str) -> Markup {
    let of = |ids: &[uuid::Uuid]| {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for f in sessions(site, ids)
            .into_iter()
            .flat_map(|s| &s.info.findings)
        {
            if f.severity >= Severity::Warning && !seen.contains(&f.id.as_str()) {
                seen.push(&f.id);
                out.push(f);
            }
        }
        out
    };
    let sides = [
        ("BASE", &c.base, of(&c.base_sessions)),
        ("NEW", &c.new, of(&c.new_sessions)),
    ];
    if sides.iter().all(|(_, _, f)| f.is_empty()) {
        return html! {};
    }
    html! {
        div.findings {
            p { "Validity findings of the sessions, which touch every verdict above ("
                a href={ (root) (page) } { "compare" } "):" }
            ul {
                @for (side, name, list) in &sides {
                    @for f in list {
                        li.(f.severity.as_str()) {
                            (side) " " (name) ": " strong { (f.severity.as_str()) " " (f.title) }
                            ": " (f.detail)
                        }
                    }
                }
            }
        }
    }
}

/// How the environments of the two sides differ, in one short list: the first environment of
/// each side, the fields `vernier env diff` compares, and the kernel configuration's options
/// when both texts are stored.
fn environments(site: &Site, c: &Comparison, root: &str) -> Markup {
    let (base, new) = (
        sessions(site, &c.base_sessions),
        sessions(site, &c.new_sessions),
    );
    let (Some(a), Some(b)) = (base.first(), new.first()) else {
        return html! {};
    };
    let (ea, eb) = (&a.info.environment, &b.info.environment);
    let compared = diff(ea, eb);
    let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".to_string());
    let mut lines: Vec<String> = compared
        .differences
        .iter()
        .map(|d| format!("{} {}: {} → {}", d.group, d.field, shown(&d.a), shown(&d.b)))
        .collect();
    if let (Some(ca), Some(cb)) = (&ea.kernel_config_sha256, &eb.kernel_config_sha256) {
        if let (Some(ta), Some(tb)) = (
            site.input.kernel_configs.get(ca),
            site.input.kernel_configs.get(cb),
        ) {
            let changed = kernel_config_diff(ta, tb);
            if !changed.is_empty() {
                let names: Vec<&str> = changed.iter().take(4).map(|c| c.option.as_str()).collect();
                lines.insert(
                    0,
                    format!(
                        "kernel configuration: {} ({}{})",
                        plural(changed.len(), "option"),
                        names.join(", "),
                        if changed.len() > names.len() {
                            ", ..."
                        } else {
                            ""
                        }
                    ),
                );
            }
        }
    }
    let several = base.iter().any(|s| s.info.environment != *ea)
        || new.iter().any(|s| s.info.environment != *eb);
    html! {
        div.envdiff {
            @if lines.is_empty() {
                p { "The environments of BASE and NEW do not differ in any field that "
                    code { "vernier env diff" } " compares." }
            } @else {
                p {
                    "What differs between the environments of BASE and NEW"
                    @if several { " (the first environment of each side)" } ":"
                }
                ul {
                    @for l in lines.iter().take(DIFFERENCES_SHOWN) { li { (l) } }
                    @if lines.len() > DIFFERENCES_SHOWN {
                        li { "and " (lines.len() - DIFFERENCES_SHOWN) " more on the "
                             a href={ (root) "environment.html" } { "environment page" } "." }
                    }
                }
            }
        }
    }
}

/// Whether the report has anything to answer with: configurations on both sides.
pub fn has_answer(r: &CompareReport) -> bool {
    !r.comparisons.is_empty()
}
