//! Profiles on the site (docs/profiles.md): on each benchmark page a flame graph per profiled
//! configuration and session, on the compare page the functions whose share changed most and
//! the differential flame graph of each configuration profiled on both sides.

use maud::{html, Markup, Render};
use vernier_analysis::profile::ProfileComparison;
use vernier_model::{FoldedStacks, ProfileRecord, ShortId, StoredSession};
use vernier_plot::PlotError;

use crate::html;
use crate::{Comparison, File, Site};

/// The flame graph files of `sessions`: one per configuration with profiled runs.
pub fn flame_files(sessions: &[StoredSession]) -> Vec<(String, File)> {
    let mut files = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        for (c, config) in s.configurations.iter().enumerate() {
            if !config.profiles.is_empty() {
                files.push((
                    flame_path(s, config.record.position),
                    File::FlameFigure(i, c),
                ));
            }
        }
    }
    files
}

/// The differential flame graph files of comparison `c` (number `n`): one per profiled
/// configuration.
pub fn flame_diff_files(n: usize, c: &Comparison) -> Vec<(String, File)> {
    (0..c.report.profiles.len())
        .map(|i| (flame_diff_path(n, i), File::FlameDiffFigure(n, i)))
        .collect()
}

fn flame_path(s: &StoredSession, position: u32) -> String {
    format!("flame/{}-{position}.svg", s.info.id)
}

/// Comparison `n`'s differential flame graph of its `i`-th profiled configuration:
/// `flame/compare-I.svg` for the first comparison, `flame/compare-N-I.svg` for the others.
fn flame_diff_path(n: usize, i: usize) -> String {
    match n {
        0 => format!("flame/compare-{i}.svg"),
        _ => format!("flame/compare-{}-{i}.svg", n + 1),
    }
}

fn merged(profiles: &[&ProfileRecord]) -> FoldedStacks {
    FoldedStacks::merged(profiles.iter().map(|p| &p.stacks))
}

fn count_name(profiles: &[&ProfileRecord]) -> &'static str {
    match profiles.first().map(|p| p.event.as_str()) {
        Some(e) if e.starts_with("cpu-clock") => "ns of CPU time",
        Some(e) if e.starts_with("cycles") => "cycles",
        _ => "samples",
    }
}

/// The flame graph of configuration `c` of session `s` (indexes into the site's sessions).
pub fn flame_figure(site: &Site, s: usize, c: usize) -> Result<Vec<u8>, PlotError> {
    let session = &site.input.sessions[s];
    let config = &session.configurations[c];
    let profiles: Vec<&ProfileRecord> = config.profiles.iter().collect();
    let title = format!(
        "{}, session {}: {} profiled runs",
        config.record.key(),
        ShortId(session.info.id),
        profiles.len()
    );
    vernier_plot::flame_graph(&merged(&profiles), &title, count_name(&profiles), None)
}

/// The profiled runs of configuration `key` in the site's sessions among `ids`.
fn profiles_of<'a>(site: &'a Site, ids: &[uuid::Uuid], key: &str) -> Vec<&'a ProfileRecord> {
    site.input
        .sessions
        .iter()
        .filter(|s| ids.contains(&s.info.id))
        .flat_map(|s| &s.configurations)
        .filter(|c| c.record.key().to_string() == key)
        .flat_map(|c| &c.profiles)
        .collect()
}

/// The differential flame graph of comparison `n`'s `i`-th profiled configuration.
pub fn flame_diff_figure(site: &Site, n: usize, i: usize) -> Result<Vec<u8>, PlotError> {
    let Some(c) = site.input.comparisons.get(n) else {
        return Err(PlotError::Empty("no comparison".into()));
    };
    let Some(p) = c.report.profiles.get(i) else {
        return Err(PlotError::Empty("no such profile".into()));
    };
    let base = profiles_of(site, &c.base_sessions, &p.configuration);
    let new = profiles_of(site, &c.new_sessions, &p.configuration);
    let title = format!("{}: {} against {}", p.configuration, c.new, c.base);
    vernier_plot::differential_flame_graph(
        &merged(&base),
        &merged(&new),
        &title,
        count_name(&new),
        None,
    )
}

/// A flame graph on a page: inferno's SVG as an image, in which its script does not run (the
/// page holds only the site's own markup and its Content-Security-Policy allows no other
/// script), linked so that it opens on its own, where inferno's script searches and zooms.
fn flame(src: &str, caption: &str) -> Markup {
    html! {
        figure {
            a href=(src) { img src=(src) alt=(caption) loading="lazy"; }
            figcaption { (caption) " " a href=(src) { "Open it to search and zoom." } }
        }
    }
}

/// The flame graphs of benchmark `b`'s profiled configurations, one per session.
pub fn benchmark_section(site: &Site, b: usize) -> Markup {
    let name = &site.benchmarks[b].name;
    let mut figures = Vec::new();
    for s in &site.input.sessions {
        for config in s
            .configurations
            .iter()
            .filter(|c| &c.record.benchmark == name)
        {
            if config.profiles.is_empty() {
                continue;
            }
            let event = &config.profiles[0].event;
            let caption = format!(
                "{}, session {}: {} profiled runs ({event})",
                config.record.key(),
                ShortId(s.info.id),
                config.profiles.len()
            );
            figures.push(flame(
                &format!("../{}", flame_path(s, config.record.position)),
                &caption,
            ));
        }
    }
    let content = html! { @for f in &figures { (f) } };
    html::section(
        2,
        Some("profiles"),
        "Where the time goes",
        Some(html! {
            "Flame graphs of the profiled runs (" code { "run --profile" } "), never part of \
             the statistics: each box a function, its width its share of the samples, callers \
             below callees. Open one to search and zoom."
        }),
        &content,
    )
}

fn points(v: f64) -> String {
    format!("{v:+.1}")
}

/// The differential profiles of comparison `n`'s page.
pub fn compare_section(site: &Site, n: usize) -> Markup {
    let Some(c) = site.input.comparisons.get(n) else {
        return html! {};
    };
    let level = vernier_model::level_percent(c.report.level);
    let content = html! {
        @for (i, p) in c.report.profiles.iter().enumerate() {
            h3 { (html::label(&p.configuration)) }
            p { (sides(p)) }
            (html::table(
                &["", "function", "BASE", "NEW", "change (points)", &format!("{level} interval"), ""],
                &rows(p),
                &[2, 3, 4, 5],
            ))
            (flame(
                &flame_diff_path(n, i),
                "NEW's stacks, each frame coloured by how its share changed against BASE: red \
                 larger, blue smaller.",
            ))
        }
    };
    html::section(
        2,
        Some("profiles"),
        "Where the time went",
        Some(html! {
            "The functions whose share of the profiled runs' samples changed most, self (the \
             function running) and inclusive (it or what it called), NEW minus BASE in \
             percentage points, with a bootstrap interval over the profiled runs; a change only \
             where the interval excludes 0."
        }),
        &content,
    )
}

fn sides(p: &ProfileComparison) -> String {
    let overhead = |o: Option<f64>| {
        o.map(|o| format!(", {o:.2}x the timed runs' time"))
            .unwrap_or_default()
    };
    format!(
        "BASE {} profiled runs ({}{}), NEW {} ({}{})",
        p.base_runs,
        p.base_event,
        overhead(p.base_overhead),
        p.new_runs,
        p.new_event,
        overhead(p.new_overhead)
    )
}

fn rows(p: &ProfileComparison) -> Vec<Vec<Markup>> {
    let kinds = [
        ("self", &p.self_changes),
        ("inclusive", &p.inclusive_changes),
    ];
    kinds
        .iter()
        .flat_map(|(kind, changes)| {
            changes
                .iter()
                .take(vernier_report::profile::SHOWN)
                .map(move |f| {
                    vec![
                        kind.render(),
                        html! { code { (f.function) } },
                        format!("{:.1}%", f.base_share * 100.0).render(),
                        format!("{:.1}%", f.new_share * 100.0).render(),
                        points(f.change_points).render(),
                        format!("[{}, {}]", points(f.interval.0), points(f.interval.1)).render(),
                        if f.changed { "changed" } else { "" }.render(),
                    ]
                })
        })
        .collect()
}
