//! A benchmark's monitors, a page per key that changed: the key's series during the runs of
//! every configuration (a panel each), a line per series of the site standing for its runs
//! (its median run), and per configuration and series the key's summary over the runs. The
//! figure is shared by every session of the site, so that the monitors of a farm of a thousand
//! sessions are a few files per key, not a figure per session and key; the other keys are
//! links, so the page shows one figure with or without the script.

use maud::{html, Markup, Render};
use vernier_analysis::monitors::{key_summary, median_run, MonitorSummary, RecordedKey};
use vernier_model::monitor::SeriesKind;
use vernier_model::{Options, StoredConfiguration};
use vernier_plot::{Format, MonitorTrace, PlotError};
use vernier_report::format::plural;
use vernier_report::monitors::Scale;

use super::benchmark::PageLabels;
use super::nav;
use crate::html;
use crate::Site;

/// The configurations of benchmark monitors `m` in the order of the figures (the order of
/// [`vernier_plot::ConfigOrder`]): per configuration its label and, per series of the site,
/// the configurations of the series' sessions that ran it.
struct Configurations<'a> {
    configs: Vec<(String, &'a Options, &'a [String])>,
    /// Per configuration, per series (in `Site::series` order): the stored configurations.
    of: Vec<Vec<Vec<&'a StoredConfiguration>>>,
}

fn configurations(site: &Site, m: usize) -> Configurations<'_> {
    let bench = &site.benchmarks[site.monitors[m].benchmark].name;
    let mut configs: Vec<(String, &Options, &[String])> = Vec::new();
    for s in &site.input.sessions {
        for c in s
            .configurations
            .iter()
            .filter(|c| &c.record.benchmark == bench)
        {
            let label = c.record.key().to_string();
            if !configs.iter().any(|(l, _, _)| *l == label) {
                configs.push((label, &c.record.options, &c.record.loads));
            }
        }
    }
    let order = vernier_plot::ConfigOrder::of(configs.iter().map(|c| (c.1, c.2)));
    configs.sort_by(|a, b| order.cmp((a.1, a.2), (b.1, b.2)));
    let of = configs
        .iter()
        .map(|(label, _, _)| {
            site.members
                .iter()
                .map(|members| {
                    members
                        .iter()
                        .flat_map(|&i| &site.input.sessions[i].configurations)
                        .filter(|c| c.record.key().to_string() == *label)
                        .collect()
                })
                .collect()
        })
        .collect();
    Configurations { configs, of }
}

pub fn monitors(site: &Site, m: usize, k: usize) -> String {
    let monitors = &site.monitors[m];
    let bench = &site.benchmarks[monitors.benchmark];
    let key = &monitors.keys[k];
    let pages = monitors.pages();
    let flat: Vec<&RecordedKey> = monitors
        .keys
        .iter()
        .filter(|k| k.constant.is_some())
        .collect();
    let configs = configurations(site, m);
    let labels = PageLabels::new(
        &bench.name,
        configs.configs.iter().map(|(_, o, l)| (*o, *l)),
    );
    let body = html! {
        p {
            "The monitors during the measured runs of "
            a href={ "../../bench/" (bench.stem) ".html" } { (bench.name) }
            ", in every session of the site: one key at a time, each on its own page. \
             Per session, " code { "vernier show --monitors SESSION" } " lists every key and "
            code { "vernier plot monitor SESSION --key KEY" } " draws every run."
        }
        p.keys {
            "Keys that changed: "
            @for (n, &other) in pages.iter().enumerate() {
                @if n > 0 { ", " }
                @if other == k {
                    strong { (html::label(&monitors.keys[other].key)) }
                } @else {
                    a href={ (other) ".html" } { (html::label(&monitors.keys[other].key)) }
                }
            }
            "."
        }
        @if !flat.is_empty() {
            details {
                summary {
                    (plural(flat.len(), "key")) " had one value in every sample of every run \
                     and "
                    (if flat.len() == 1 { "is" } else { "are" })
                    " not drawn"
                }
                ul {
                    @for f in &flat {
                        li { (html::label(&f.key)) " " (flat_text(f)) "." }
                    }
                }
            }
        }
        h2 { (html::label(&key.key)) }
        @if key.constant.is_none() {
            (html::figure(
                &format!("{k}.svg"),
                &format!(
                    "{} during the runs of {}: a panel per configuration, a line per series \
                     (its median run by the key's summary)",
                    key.key, bench.name
                ),
                None,
            ))
        } @else {
            p { (html::label(&key.key)) " " (flat_text(key)) ": a flat line, not drawn." }
        }
        (html::section(
            2,
            Some("summary"),
            "Per configuration",
            Some(html! {
                "Per run, a counter's increase over the run or a gauge's time-weighted mean; \
                 here their median and range over the measured runs of each series, as "
                code { "vernier show --monitors" } " prints them for a session."
            }),
            &html! {
                (labels.about())
                (summary_table(site, &configs, &labels, &key.key))
            },
        ))
    };
    html::page(
        "../../",
        &format!("Monitors of {}: {}", bench.name, key.key),
        &nav(site),
        &body,
    )
}

/// What a key of one value over every run was. A flat line in every panel says no more than
/// its value, and such keys (a counter of swap-ins that never rose) are often most of a
/// benchmark's keys.
fn flat_text(key: &RecordedKey) -> String {
    let value = key.constant.unwrap_or_default();
    let runs = plural(key.runs, "measured run");
    if key.kind == SeriesKind::Counter && value == 0.0 {
        format!("did not rise in any of the {runs} that recorded it, in any configuration")
    } else {
        let scale = Scale::of_constant(key);
        let value = format!("{} {}", scale.format(value), scale.unit);
        format!(
            "was {} in every sample of the {runs} that recorded it, in every configuration",
            value.trim_end()
        )
    }
}

/// A row per configuration: per series the key's median, minimum and maximum over its runs
/// and how many runs recorded it, all in one unit (chosen by the largest median).
fn summary_table(site: &Site, configs: &Configurations, labels: &PageLabels, key: &str) -> Markup {
    let summaries: Vec<Vec<Option<MonitorSummary>>> = configs
        .of
        .iter()
        .map(|per_series| {
            per_series
                .iter()
                .map(|c| key_summary(c.iter().copied(), key))
                .collect()
        })
        .collect();
    let all: Vec<&MonitorSummary> = summaries.iter().flatten().flatten().collect();
    let Some(first) = all.first() else {
        return html! { p { "No run stored a summary of " (key) "." } };
    };
    let medians: Vec<f64> = all.iter().map(|x| x.median).collect();
    let scale = Scale::of(&first.unit, first.kind, &medians);
    let names: Vec<String> = site
        .series
        .iter()
        .enumerate()
        .filter(|(i, _)| summaries.iter().any(|row| row[*i].is_some()))
        .map(|(_, s)| s.name.clone())
        .collect();
    let shown: Vec<usize> = (0..site.series.len())
        .filter(|&i| summaries.iter().any(|row| row[i].is_some()))
        .collect();
    let in_unit = |h: &str| {
        if scale.unit.is_empty() {
            h.to_string()
        } else {
            format!("{h} ({})", scale.unit)
        }
    };
    let mut head = vec!["configuration".to_string()];
    if shown.len() > 1 {
        head.push("series".to_string());
    }
    head.push("runs".to_string());
    head.extend(["median", "min", "max"].map(in_unit));
    let mut rows: Vec<Vec<Markup>> = Vec::new();
    for ((_, options, loads), row) in configs.configs.iter().zip(&summaries) {
        for (n, &i) in shown.iter().enumerate() {
            let mut cells = vec![html::label(&labels.short(options, loads))];
            if shown.len() > 1 {
                cells.push(html::label(&names[n]));
            }
            match &row[i] {
                Some(x) => cells.extend([
                    x.runs.render(),
                    scale.format(x.median).render(),
                    scale.format(x.min).render(),
                    scale.format(x.max).render(),
                ]),
                None => cells.extend((0..4).map(|_| "-".render())),
            }
            rows.push(cells);
        }
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let numeric: Vec<usize> = (head.len() - 4..head.len()).collect();
    html::table(&head, &rows, &numeric)
}

pub fn monitor_figure(site: &Site, m: usize, k: usize) -> Result<Vec<u8>, PlotError> {
    let monitors = &site.monitors[m];
    let bench = &site.benchmarks[monitors.benchmark];
    let key = &monitors.keys[k];
    let configs = configurations(site, m);
    let labels = PageLabels::new(
        &bench.name,
        configs.configs.iter().map(|(_, o, l)| (*o, *l)),
    );
    let traces: Vec<MonitorTrace> = configs
        .configs
        .iter()
        .zip(&configs.of)
        .filter_map(|((_, options, loads), per_series)| {
            let lines: Vec<(String, Vec<(f64, f64)>)> = site
                .series
                .iter()
                .zip(per_series)
                .filter_map(|(s, c)| {
                    let (_, series) = median_run(c.iter().copied(), &key.key)?;
                    let runs = key_summary(c.iter().copied(), &key.key).map_or(0, |x| x.runs);
                    let points = series
                        .points
                        .iter()
                        .map(|p| (p.t_ns as f64 / 1e9, p.value))
                        .collect();
                    let name = if runs > 1 {
                        format!("{} (median run of {runs})", s.name)
                    } else {
                        s.name.clone()
                    };
                    Some((name, points))
                })
                .collect();
            let unit = key.unit.clone();
            (!lines.is_empty()).then(|| MonitorTrace {
                name: labels.short(options, loads),
                // The figure draws an even subset of many series, each line thinned
                // (`vernier_plot`'s display limits): its bytes are bounded whatever the
                // number of sessions.
                runs: lines,
                unit,
                counter: key.kind == SeriesKind::Counter,
                lines_are: "series",
            })
        })
        .collect();
    vernier_plot::monitor(
        &traces,
        &key.key,
        &format!("{} during the runs of {}", key.key, bench.name),
        Format::Svg,
        vernier_plot::monitor_size(1200, traces.len()),
    )
}
