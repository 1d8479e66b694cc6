//! The index: sessions with a tag filter, and links to every page.

use std::collections::BTreeSet;

use maud::{html, Markup};
use vernier_analysis::bisect::{BisectState, Outcome};
use vernier_model::{ShortId, StoredSession};
use vernier_report::bisect::short;
use vernier_report::format::{describe_session, plural, short_tag_value};
use vernier_report::units::{self, TimeForm, Zone};

use super::{answer, configurations, nav};
use crate::html;
use crate::Site;

pub fn index(site: &Site) -> String {
    let sessions = &site.input.sessions;
    let runs: usize = sessions.iter().map(measured_runs).sum();
    let tags: BTreeSet<String> = sessions
        .iter()
        .flat_map(|s| s.info.tags.iter().map(|(k, v)| format!("{k}={v}")))
        .collect();
    let comparisons = &site.input.comparisons;
    let several = comparisons.len() > 1;
    let body = html! {
        // The first comparison's answer on the first screen, the others after it, each under
        // a heading that names its two sides.
        @for (i, c) in comparisons.iter().enumerate() {
            @if answer::has_answer(&c.report) {
                @if several {
                    h2 id=(what_changed(i)) { "What changed: " (c.new) " against " (c.base) }
                } @else {
                    h2 #what-changed { "What changed" }
                }
                (answer::answer(site, i, ""))
                p { a href=(crate::compare_page(i)) { "The whole comparison" } ": every \
                    configuration with its medians, interval, MDC and warnings, and the forest \
                    plot." }
            }
        }
        p {
            (plural(sessions.len(), "session")) ", " (plural(runs, "measured run"))
            ". Every statistic is computed as " code { "vernier show" } " and "
            code { "vernier compare" } " compute it."
        }
        h2 #sessions-list { "Sessions" }
        @if !tags.is_empty() {
            p {
                label {
                    "Filter by tag "
                    select #tag-filter {
                        option value="" { "all sessions" }
                        @for t in &tags { option value=(t) { (t) } }
                    }
                }
                " " span #shown {}
            }
        }
        // The columns a reader scans at 1300 px: a minute is enough to tell sessions apart
        // (the second and the full id and fingerprint are their tooltips), tags wrap between
        // tags.
        div.scroll {
            table #sessions {
                thead {
                    tr {
                        th { "started (UTC)" } th { "session" } th { "status" } th { "ran" }
                        th { "tags" } th { "kernel" } th { "fingerprint" }
                        th.num { "configs" } th.num { "runs" } th { "note" } th { "pages" }
                    }
                }
                tbody {
                    @for s in sessions.iter() { (session_row(s)) }
                }
            }
        }
        @if !site.benchmarks.is_empty() {
            h2 { "Benchmarks" }
            ul {
                @for (b, bench) in site.benchmarks.iter().enumerate() {
                    @let series = site.benchmark_series(b);
                    li {
                        a href={ "bench/" (bench.stem) ".html" } { (bench.name) } ": "
                        (plural(configurations(&series), "configuration")) " in "
                        (series.len()) " series"
                    }
                }
            }
        }
        @if !site.latency.is_empty() {
            h2 { "Latency" }
            p {
                a href="latency.html" { "Latency histograms" } " of "
                (plural(site.latency.len(), "configuration")) "."
            }
        }
        @if !site.monitors.is_empty() {
            h2 { "Monitors" }
            ul {
                @for m in &site.monitors {
                    @let bench = &site.benchmarks[m.benchmark];
                    li {
                        a href={ "monitors/" (bench.stem) "/" (m.shown) ".html" } { (bench.name) }
                        ": " (plural(m.keys.len(), "key")) ", "
                        (m.keys.iter().filter(|k| k.constant.is_some()).count())
                        " of them constant"
                    }
                }
            }
        }
        @if !comparisons.is_empty() {
            h2 { "Compare" }
            ul {
                @for (i, c) in comparisons.iter().enumerate() {
                    li {
                        a href=(crate::compare_page(i)) { (c.new) " against " (c.base) } ": "
                        (plural(c.report.comparisons.len(), "configuration")) " compared."
                    }
                }
            }
        }
        @if !site.input.bisections.is_empty() {
            h2 { "Bisections" }
            ul {
                @for st in &site.input.bisections {
                    li { (bisection_line(st)) }
                }
            }
        }
        h2 { "Environment" }
        p {
            a href="environment.html" { "Each session's environment" } " and how they differ."
        }
    };
    html::page("", "vernier report", &nav(site), &body)
}

/// A bisection on the index: a link to its page, its range and how it stands.
fn bisection_line(st: &BisectState) -> Markup {
    let last = st.bisection.commits.len().saturating_sub(1);
    let stands = match &st.plan.outcome {
        Outcome::Found { first_bad, .. } => {
            format!("first bad commit {}", short(st.commit(*first_bad)))
        }
        Outcome::Measure { .. } => "in progress".to_string(),
        Outcome::BudgetSpent { .. } => "budget spent".to_string(),
        Outcome::Skipped { .. } => "every candidate skipped".to_string(),
        Outcome::NoRegression => "no regression".to_string(),
    };
    html! {
        a href=(super::bisection_page(st)) { "Bisection " (ShortId(st.bisection.id)) } ": "
        code { (st.bisection.repo) } ", " (plural(last, "commit")) " after "
        code { (short(st.commit(0))) } " up to " code { (short(st.commit(last))) } "; "
        (stands) "."
    }
}

/// The id of comparison `i`'s heading on the index: `what-changed`, `what-changed-2`, ...
fn what_changed(i: usize) -> String {
    match i {
        0 => "what-changed".to_string(),
        _ => format!("what-changed-{}", i + 1),
    }
}

fn measured_runs(s: &StoredSession) -> usize {
    s.configurations
        .iter()
        .map(|c| c.runs.iter().filter(|r| !r.warmup).count())
        .sum()
}

/// A session's row: its tags (one per line) are what the tag filter reads.
fn session_row(s: &StoredSession) -> Markup {
    let tags: Vec<String> = s
        .info
        .tags
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let fingerprint: String = s.info.fingerprint.chars().take(8).collect();
    html! {
        tr data-tags=(tags.join("\n")) {
            td.when title=(units::utc_named(s.info.started_at_ns)) {
                (units::time(s.info.started_at_ns, Zone::Utc, TimeForm::Minute))
            }
            td.id title=(s.info.id) {
                a href=(super::session_page(s)) { (ShortId(s.info.id)) }
            }
            td.word { (s.info.status.as_str()) }
            // What it ran, as `vernier sessions` says it; specs wrap at their separators.
            td.text { (html::label(&describe_session(s.info.suite.as_deref(), &s.info.specs))) }
            td.text {
                // An id or a commit hash short (a bisection's sessions carry both), the whole
                // tag its tooltip.
                @for (n, (k, v)) in s.info.tags.iter().enumerate() {
                    @if n > 0 { " " }
                    span.tag title={ (k) "=" (v) } { (k) "=" (short_tag_value(v)) }
                }
            }
            td.text {
                (html::label(s.info.environment.kernel_release.as_deref().unwrap_or("-")))
            }
            td.id title=(s.info.fingerprint) { (fingerprint) }
            td.num { (s.configurations.len()) }
            td.num { (measured_runs(s)) }
            td.text { (s.info.note.as_deref().unwrap_or("")) }
            td.word {
                a href={ "environment.html#s-" (s.info.id) } { "environment" }
            }
        }
    }
}
