//! A page per bisection (`vernier bisect`, docs/bisect.md): the range, how it ended (the first
//! bad commit with its effect and interval), the steps as `vernier bisect report --plot` draws
//! them (the level of each measured commit in commit order with its interval) and as tables,
//! each commit's sessions linked to their pages. The words are `bisect status`'s
//! (`vernier_report::bisect`), the figure `vernier_plot::bisection`.

use maud::{html, Markup, Render};
use vernier_analysis::bisect::BisectState;
use vernier_model::ShortId;
use vernier_plot::{Format, PlotError, Size};
use vernier_report::bisect::{outcome, percent, short};
use vernier_report::format::plural;

use super::nav;
use crate::html;
use crate::Site;

/// The path of bisection `st`'s page, relative to the root.
pub fn bisection_page(st: &BisectState) -> String {
    format!("bisect/{}.html", st.bisection.id)
}

/// The path of bisection `st`'s figure, relative to the root.
pub fn bisection_figure_path(st: &BisectState) -> String {
    format!("bisect/{}.svg", st.bisection.id)
}

/// The figure of bisection `i`: the levels by commit.
pub fn bisection_figure(site: &Site, i: usize) -> Result<Vec<u8>, PlotError> {
    vernier_plot::bisection(&site.input.bisections[i], Format::Svg, Size::default())
}

/// The page of bisection `i`.
pub fn bisection(site: &Site, i: usize) -> String {
    let st = &site.input.bisections[i];
    let b = &st.bisection;
    let root = "../";
    let hib = st.higher_is_better;
    let last = b.commits.len().saturating_sub(1);
    let unit = st.unit.as_deref().unwrap_or("");
    // A session links to its page when the site shows it.
    let session = |id: &uuid::Uuid| -> Markup {
        match site.input.sessions.iter().find(|s| s.info.id == *id) {
            Some(s) => html! { a href={ (root) (super::session_page(s)) } { (ShortId(*id)) } },
            None => html! { (ShortId(*id)) },
        }
    };
    let sessions_of = |index: usize| -> Markup {
        let ids = st
            .measured
            .iter()
            .find(|m| m.index == index)
            .map_or(&[][..], |m| m.sessions.as_slice());
        html! {
            @for (n, id) in ids.iter().enumerate() {
                @if n > 0 { " " }
                (session(id))
            }
        }
    };
    let commit = |index: usize| -> Markup {
        html! { code title=(st.commit(index)) { (short(st.commit(index))) } }
    };
    let steps: Vec<Vec<Markup>> = st
        .plan
        .steps
        .iter()
        .map(|s| {
            vec![
                s.index.render(),
                commit(s.index),
                s.sessions.render(),
                s.from_good
                    .as_ref()
                    .map_or("-".to_string(), |d| percent(d, hib))
                    .render(),
                s.call.as_str().render(),
                sessions_of(s.index),
            ]
        })
        .collect();
    let levels: Vec<Vec<Markup>> = st
        .levels
        .iter()
        .map(|l| {
            vec![
                l.index.render(),
                commit(l.index),
                l.sessions.render(),
                format!("{:.6}", l.level).render(),
                format!("[{:.6}, {:.6}]", l.low, l.high).render(),
                sessions_of(l.index),
            ]
        })
        .collect();
    let budget = match b.terms.budget_s {
        Some(s) => format!("{s:.0} s"),
        None => plural(b.terms.budget_sessions as usize, "session"),
    };
    let body = html! {
        p {
            "Bisection of " code { (b.repo) } ": " (plural(last, "commit")) " after "
            (commit(0)) " (good) up to " (commit(last)) " (bad)"
            @if let Some(c) = &st.configuration { ", measuring " code { (c) } }
            @if let Some(m) = &b.terms.metric { " (metric " (m) ")" }
            "."
        }
        ul.outcome {
            @for line in outcome(st) { li { (line) } }
        }
        p {
            @if let Some(r) = &st.plan.regression {
                "Regression between the ends: " strong { (percent(r, hib)) }
                " (threshold " (format!("{:.1}%", st.plan.threshold.unwrap_or(0.0) * 100.0)) "). "
            }
            "Spent " (plural(st.plan.spent, "session")) " ("
            (format!("{:.0}", st.session_s)) " s) and " (format!("{:.0}", b.build_s))
            " s of builds, of a budget of " (budget) "."
            @if !b.unbuildable.is_empty() {
                " Failed builds (skipped): "
                @for (n, c) in b.unbuildable.iter().enumerate() {
                    @if n > 0 { ", " }
                    code { (short(c)) }
                }
                "."
            }
        }
        @if !st.levels.is_empty() {
            h2 #levels { "Levels by commit" }
            (html::figure(
                &format!("{}.svg", b.id),
                "the level of each measured commit (the geometric mean of its session medians) \
                 in commit order with its 95% interval; the first bad commit marked with its \
                 effect",
                None,
            ))
            p.about {
                "Per measured commit the geometric mean of its session medians"
                @if !unit.is_empty() { " (" (unit) ")" }
                " with its 95% interval from the bisection's session noise, as "
                code { "vernier bisect report" } " prints them."
            }
            (html::table(
                &["commit", "hash", "sessions", "level", "95% interval", "session ids"],
                &levels,
                &[0, 2, 3, 4],
            ))
        }
        @if !steps.is_empty() {
            h2 #steps { "Steps" }
            p.about {
                "Each commit the rule visited: its sessions, its change against the good end \
                 with the interval, and the call (good, bad, partial, undecided or skipped)."
            }
            (html::table(
                &["commit", "hash", "sessions", "against the good end", "call", "session ids"],
                &steps,
                &[0, 2],
            ))
        }
    };
    let title = format!("Bisection {}", ShortId(b.id));
    html::page(root, &title, &nav(site), &body)
}
