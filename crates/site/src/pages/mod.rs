//! The pages and figures of a [`Site`]: a module per page, with the figures it shows, each a
//! pure function of the site's analysed data. Pages are maud markup made with the pieces of
//! [`crate::html`]; figures are `vernier_plot`'s SVG.

mod answer;
mod benchmark;
mod bisect;
mod compare;
mod environment;
mod glossary;
mod history;
mod index;
mod latency;
mod monitors;
mod profiles;
mod session;
mod why;

use std::collections::BTreeSet;

use vernier_analysis::ConfigSummary;
use vernier_plot::{Series, Size};

use crate::Site;

pub use benchmark::{bars_figure, benchmark, box_figure, calls_figure, line_figure};
pub use bisect::{bisection, bisection_figure, bisection_figure_path, bisection_page};
pub use compare::{compare, forest_figure};
pub use environment::environment;
pub use glossary::glossary;
pub use history::{history, history_figure};
pub use index::index;
pub use latency::{latency, latency_figure, maxima_figure};
pub use monitors::{monitor_figure, monitors};
pub use profiles::{flame_diff_figure, flame_diff_files, flame_figure, flame_files};
pub use session::{session, session_csv, session_page, session_runs_csv};

/// The navigation of every page, relative to the root.
fn nav(site: &Site) -> Vec<(String, String)> {
    let mut nav = vec![("index.html".to_string(), "Sessions".to_string())];
    for b in &site.benchmarks {
        nav.push((format!("bench/{}.html", b.stem), b.name.clone()));
    }
    if !site.latency.is_empty() {
        nav.push(("latency.html".to_string(), "Latency".to_string()));
    }
    let several = site.input.comparisons.len() > 1;
    for (i, c) in site.input.comparisons.iter().enumerate() {
        let name = if several {
            format!("Compare {}", c.new)
        } else {
            "Compare".to_string()
        };
        nav.push((crate::compare_page(i), name));
    }
    if !site.histories.is_empty() || site.history.is_err() {
        nav.push(("history.html".to_string(), "History".to_string()));
    }
    nav.push(("environment.html".to_string(), "Environment".to_string()));
    nav.push(("glossary.html".to_string(), "Glossary".to_string()));
    nav
}

/// A figure's size: `panels` panels one above the other, `slots` marks side by side.
fn size(panels: usize, slots: usize) -> Size {
    Size {
        width: (300 + 36 * slots as u32).clamp(1200, 6000),
        height: (80 + 560 * panels as u32).clamp(700, 8000),
    }
}

/// Distinct (metric, unit) panels among `series`.
fn metric_panels(series: &[Series]) -> usize {
    series
        .iter()
        .flat_map(|s| &s.summaries)
        .map(|c| (&c.benchmark, &c.metric, &c.unit))
        .collect::<BTreeSet<_>>()
        .len()
        .max(1)
}

/// Distinct configurations among `series`.
fn configurations(series: &[Series]) -> usize {
    series
        .iter()
        .flat_map(|s| &s.summaries)
        .map(ConfigSummary::label)
        .collect::<BTreeSet<_>>()
        .len()
}
