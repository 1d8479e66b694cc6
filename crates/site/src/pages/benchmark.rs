//! A benchmark's page (box plots, bars and lines, each with its numbers, and the monitors'
//! summaries of the configurations beside their results) and its figures.

use maud::{html, Markup, Render};
use vernier_analysis::monitors::{monitor_summaries, MonitorSummary};
use vernier_analysis::ConfigSummary;
use vernier_model::{ConfigKey, Options, StoredConfiguration};
use vernier_plot::{Format, PlotError, Series};
use vernier_report::format::plural;
use vernier_report::monitors::Scale;

use super::{configurations, metric_panels, nav, size};
use crate::html::{self, interval, num};
use crate::{session_name, Benchmark, Site};

/// The configurations of a benchmark's page named by what tells them apart: the options that
/// have the same value in every configuration of the page (and the loads, when every one ran
/// the same) are said once above the tables, and each configuration is named by the rest
/// (`groups=4`), so that a table's column is not the whole spec.
pub(super) struct PageLabels {
    benchmark: String,
    common: Options,
    /// The loads of every configuration, when they are the same in all.
    common_loads: Option<Vec<String>>,
}

impl PageLabels {
    pub(super) fn new<'a>(
        benchmark: &str,
        configs: impl Iterator<Item = (&'a Options, &'a [String])>,
    ) -> Self {
        let mut common: Option<Options> = None;
        let mut common_loads: Option<Option<Vec<String>>> = None;
        for (options, loads) in configs {
            common = Some(match common {
                None => options.clone(),
                Some(mut c) => {
                    c.0.retain(|k, v| options.0.get(k) == Some(v));
                    c
                }
            });
            common_loads = Some(match common_loads {
                None => Some(loads.to_vec()),
                Some(Some(l)) if l == loads => Some(l),
                Some(_) => None,
            });
        }
        PageLabels {
            benchmark: benchmark.to_string(),
            common: common.unwrap_or_default(),
            common_loads: common_loads.flatten(),
        }
    }

    /// The configuration's name on this page: the options (and loads) that are not common to
    /// every configuration (`groups=4`), or the benchmark's name when all are.
    pub(super) fn short(&self, options: &Options, loads: &[String]) -> String {
        let rest = Options(
            options
                .0
                .iter()
                .filter(|(k, _)| !self.common.0.contains_key(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        let loads = if self.common_loads.is_some() {
            &[]
        } else {
            loads
        };
        let label = ConfigKey::loaded(&self.benchmark, &rest, loads).to_string();
        match label.strip_prefix(&format!("{}:", self.benchmark)) {
            Some(options) => options.to_string(),
            None => label,
        }
    }

    /// The sentence that names what every configuration shares, or nothing.
    pub(super) fn about(&self) -> Markup {
        let options = !self.common.0.is_empty();
        let loads = self.common_loads.as_deref().unwrap_or(&[]);
        html! {
            @if options || !loads.is_empty() {
                p {
                    "Every configuration below has "
                    @if options { "options " (html::label(&self.common.label())) }
                    @if options && !loads.is_empty() { " and " }
                    @if !loads.is_empty() { "load " (loads.join(" + ")) }
                    "."
                }
            }
        }
    }
}

pub fn benchmark(site: &Site, b: usize) -> String {
    let bench = &site.benchmarks[b];
    let mut series = site.benchmark_series(b);
    // The tables list the configurations in the order the figures draw them: groups=1, 2, 4,
    // 10, whatever order they ran in; words as they ran (same-cpu before cross-cpu).
    let order = vernier_plot::ConfigOrder::of(
        series
            .iter()
            .flat_map(|s| &s.summaries)
            .map(|c| (&c.options, &c.loads[..])),
    );
    for s in &mut series {
        s.summaries
            .sort_by(|x, y| order.cmp((&x.options, &x.loads), (&y.options, &y.loads)));
    }
    let labels = PageLabels::new(
        &bench.name,
        series
            .iter()
            .flat_map(|s| &s.summaries)
            .map(|c| (&c.options, c.loads.as_slice())),
    );
    let short = |c: &ConfigSummary| labels.short(&c.options, &c.loads);
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let level = series
        .iter()
        .flat_map(|s| &s.summaries)
        .map(|c| c.level)
        .next()
        .unwrap_or(vernier_model::CONFIDENCE_LEVEL);
    let percent = vernier_model::level_percent(level);
    let ci = format!("{percent} CI of the median");

    let mut notes = html::WarningNotes::new("warning");
    let mut runs = Vec::new();
    for s in &series {
        for c in &s.summaries {
            runs.push(vec![
                s.name.render(),
                html::label(&short(c)),
                format!("{} ({})", c.metric, c.unit).render(),
                c.n.render(),
                num(c.median).render(),
                interval(c.ci_low, c.ci_high).render(),
                num(c.mean).render(),
                num(c.mad).render(),
                num(c.min).render(),
                num(c.max).render(),
                notes.cell_with_error(c.error.as_deref(), &c.warnings),
            ]);
        }
    }

    // A row per configuration and metric, in the order of their first appearance, a column
    // per series.
    let mut configs: Vec<&ConfigSummary> = Vec::new();
    for c in series.iter().flat_map(|s| &s.summaries) {
        if !configs
            .iter()
            .any(|x| x.label() == c.label() && x.metric == c.metric)
        {
            configs.push(c);
        }
    }
    let mut medians_head = vec!["configuration (metric)".to_string()];
    medians_head.extend(
        series
            .iter()
            .map(|s| format!("{}: median [{percent} CI]", s.name)),
    );
    let medians_head: Vec<&str> = medians_head.iter().map(String::as_str).collect();
    // The first row of each configuration is the target of the links from ranked changes.
    let mut anchored: Vec<String> = Vec::new();
    let medians: Vec<Vec<Markup>> = configs
        .iter()
        .map(|config| {
            let label = config.label();
            let id = (!anchored.contains(&label)).then(|| html::config_anchor(&label));
            anchored.push(label);
            let mut row = vec![html! {
                span id=[id] { (html::label(&short(config))) " (" (config.metric) ")" }
            }];
            for s in &series {
                let cell = s
                    .summaries
                    .iter()
                    .find(|c| c.label() == config.label() && c.metric == config.metric)
                    .map_or_else(
                        || "-".to_string(),
                        |c| format!("{} {}", num(c.median), interval(c.ci_low, c.ci_high)),
                    );
                row.push(cell.render());
            }
            row
        })
        .collect();

    let body = html! {
        p { "Series: " (names.join("; ")) "." }
        (labels.about())
        h2 { "Runs of each configuration" }
        @if bench.has_runs {
            (html::figure(
                &format!("{}-box.svg", bench.stem),
                &format!(
                    "{}: per configuration a box per series (quartiles, whiskers at 1.5 IQR), \
                     the median's interval as a thin bar right of the box, every run a dot",
                    bench.name
                ),
                None,
            ))
        } @else {
            p { "No configuration has measured runs." }
        }
        (html::table(
            &[
                "series",
                "configuration",
                "metric (unit)",
                "runs",
                "median",
                &ci,
                "mean",
                "MAD",
                "min",
                "max",
                "warnings",
            ],
            &runs,
            &[3, 4, 5, 6, 7, 8, 9],
        ))
        (notes.list())
        (secondary(&series, &short, &ci))
        (calls(bench, &series, &short))
        (monitor_summary(site, bench, &labels))
        (super::why::slow_runs_section(&series, &short))
        h2 { "Medians of all configurations" }
        @if bench.has_medians {
            (html::figure(
                &format!("{}-bars.svg", bench.stem),
                &format!(
                    "{}: per configuration a bar per series, its height the median and the \
                     whisker its interval",
                    bench.name
                ),
                None,
            ))
        }
        (html::table(&medians_head, &medians, &(1..medians_head.len()).collect::<Vec<_>>()))
        @for (o, option) in bench.swept.iter().enumerate() {
            h2 { "Against " (option) }
            (html::figure(
                &format!("{}-line-{o}.svg", bench.stem),
                &format!(
                    "{}: the median against {option}, a line per series and combination of \
                     the other options, the band its interval",
                    bench.name
                ),
                None,
            ))
            (html::table(
                &["series", "configuration", option, "median", &ci],
                &against(&series, option, &short),
                &[2, 3, 4],
            ))
        }
        (super::profiles::benchmark_section(site, b))
    };
    html::page("../", &bench.name, &nav(site), &body)
}

/// The secondary metrics of the configurations that have some (`command`'s user and system
/// time and maximum resident set, `latency`'s percentiles), as `show` summarizes them: per
/// series, configuration and metric the runs that reported it, the median with its interval,
/// the minimum and the maximum.
fn secondary(series: &[Series], short: &impl Fn(&ConfigSummary) -> String, ci: &str) -> Markup {
    let rows: Vec<Vec<Markup>> = series
        .iter()
        .flat_map(|s| s.summaries.iter().map(move |c| (s, c)))
        .flat_map(|(s, c)| c.secondary.iter().map(move |m| (s, c, m)))
        .map(|(s, c, m)| {
            vec![
                s.name.render(),
                html::label(&short(c)),
                format!("{} ({})", m.metric, m.unit).render(),
                m.n.render(),
                num(m.median).render(),
                interval(m.ci_low, m.ci_high).render(),
                num(m.min).render(),
                num(m.max).render(),
            ]
        })
        .collect();
    if rows.is_empty() {
        return html! {};
    }
    html! {
        h3 { "Secondary metrics" }
        (html::table(
            &["series", "configuration", "metric (unit)", "runs", "median", ci, "min", "max"],
            &rows,
            &[3, 4, 5, 6, 7],
        ))
    }
}

/// The per-call times of the configurations that recorded them (the `syscall` benchmark), as
/// `show --histogram` prints them: the figure of their distributions and CDFs, and per series
/// and configuration the calls, minimum, percentiles, MAD and maximum in nanoseconds.
fn calls(
    bench: &Benchmark,
    series: &[Series],
    short: &impl Fn(&ConfigSummary) -> String,
) -> Markup {
    if !bench.has_calls {
        return html! {};
    }
    let ns = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    let rows: Vec<Vec<Markup>> = series
        .iter()
        .flat_map(|s| s.summaries.iter().map(move |c| (s, c)))
        .filter_map(|(s, c)| {
            let d = c.calls.as_ref()?;
            Some(vec![
                s.name.render(),
                html::label(&short(c)),
                d.runs.render(),
                d.count.render(),
                d.min_ns.render(),
                ns(d.p50_ns).render(),
                ns(d.p90_ns).render(),
                ns(d.p95_ns).render(),
                ns(d.p99_ns).render(),
                ns(d.p99_9_ns).render(),
                ns(d.mad_ns).render(),
                d.max_ns.render(),
            ])
        })
        .collect();
    html! {
        h2 { "Per-call times" }
        (html::figure(
            &format!("{}-calls.svg", bench.stem),
            &format!(
                "{}: per configuration the share of calls at each time up to the p99 and \
                 their CDF, a line per series on one time axis",
                bench.name
            ),
            None,
        ))
        (html::table(
            &[
                "series", "configuration", "runs", "calls", "min (ns)", "p50", "p90", "p95",
                "p99", "p99.9", "MAD", "max (ns)",
            ],
            &rows,
            &[2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        ))
    }
}

pub fn calls_figure(site: &Site, b: usize) -> Result<Vec<u8>, PlotError> {
    let series = site.benchmark_series(b);
    let panels = vernier_plot::call_panels(&series);
    let title = title("per-call times", &site.benchmarks[b].name, &series);
    vernier_plot::calls(
        &panels,
        &title,
        Format::Svg,
        vernier_plot::calls_size(1200, panels.len()),
    )
}

/// The rows of the table beside the line against `option`: per series each configuration
/// that has the option, ordered by label and the option's value.
fn against(
    series: &[Series],
    option: &str,
    short: &impl Fn(&ConfigSummary) -> String,
) -> Vec<Vec<Markup>> {
    let mut rows = Vec::new();
    for s in series {
        let mut points: Vec<&ConfigSummary> = s
            .summaries
            .iter()
            .filter(|c| c.options.get(option).is_some())
            .collect();
        points.sort_by(|a, b| {
            let x = |c: &ConfigSummary| c.options.get(option).map(ToString::to_string);
            a.label().cmp(&b.label()).then(x(a).cmp(&x(b)))
        });
        for c in points {
            rows.push(vec![
                s.name.render(),
                html::label(&short(c)),
                c.options
                    .get(option)
                    .map(ToString::to_string)
                    .unwrap_or_default()
                    .render(),
                num(c.median).render(),
                interval(c.ci_low, c.ci_high).render(),
            ]);
        }
    }
    rows
}

/// The monitors beside a benchmark's results: per session and configuration the median over
/// its measured runs of the key monitors' run summaries (`vernier_analysis::monitors`, the
/// numbers of the monitors pages and `show --monitors`), and links to every key's series.
fn monitor_summary(site: &Site, bench: &Benchmark, labels: &PageLabels) -> Markup {
    let Some(monitors) = site
        .monitors
        .iter()
        .find(|m| site.benchmarks[m.benchmark].name == bench.name)
    else {
        return html! {};
    };
    let mut rows: Vec<(Markup, String, Vec<MonitorSummary>)> = Vec::new();
    for s in &site.input.sessions {
        let configs: Vec<&StoredConfiguration> = s
            .configurations
            .iter()
            .filter(|c| c.record.benchmark == bench.name)
            .collect();
        if configs.is_empty() {
            continue;
        }
        let link = html! {
            a href={ "../" (super::session_page(s)) } { (session_name(s)) }
        };
        for c in configs {
            let summaries = monitor_summaries(c);
            if summaries.is_empty() {
                continue;
            }
            let label = labels.short(&c.record.options, &c.record.loads);
            rows.push((link.clone(), label, summaries));
        }
    }
    // The key monitors that any of the rows recorded as other than zero, in their order of
    // importance: a column of zeros (no steal time on bare metal, no nice time) says nothing
    // and costs the table its fit.
    let keys: Vec<&str> = vernier_report::monitors::KEY_MONITORS
        .iter()
        .copied()
        .filter(|k| {
            rows.iter()
                .any(|(_, _, summaries)| summaries.iter().any(|x| x.key == *k && x.median != 0.0))
        })
        .collect();
    // Each column in one unit, chosen by its largest median, named in its heading.
    let scales: Vec<Scale> = keys
        .iter()
        .map(|k| {
            let of_key: Vec<&MonitorSummary> = rows
                .iter()
                .filter_map(|(_, _, summaries)| summaries.iter().find(|x| x.key == *k))
                .collect();
            let medians: Vec<f64> = of_key.iter().map(|x| x.median).collect();
            let (unit, kind) = of_key
                .first()
                .map(|x| (x.unit.as_str(), x.kind))
                .unwrap_or(("", vernier_model::monitor::SeriesKind::Gauge));
            Scale::of(unit, kind, &medians)
        })
        .collect();
    let headings: Vec<String> = keys
        .iter()
        .zip(&scales)
        .map(|(k, scale)| scale.heading(k))
        .collect();
    let mut head = vec!["session", "configuration"];
    head.extend(headings.iter().map(String::as_str));
    let cells: Vec<Vec<Markup>> = rows
        .iter()
        .map(|(link, label, summaries)| {
            let mut row = vec![link.clone(), html::label(label)];
            for (k, scale) in keys.iter().zip(&scales) {
                let median = summaries.iter().find(|x| x.key == *k).map(|x| x.median);
                row.push(
                    median
                        .map_or_else(|| "-".to_string(), |m| scale.format(m))
                        .render(),
                );
            }
            row
        })
        .collect();
    let content = html! {
        @if !keys.is_empty() {
            (html::table(&head, &cells, &(2..head.len()).collect::<Vec<_>>()))
        }
        p {
            a href={ "../monitors/" (bench.stem) "/" (monitors.shown) ".html" } {
                "Every monitor key during the runs"
            }
            ", a page per key ("
            (plural(monitors.keys.len(), "key")) ", "
            (monitors.keys.iter().filter(|k| k.constant.is_some()).count())
            " of them constant)."
        }
    };
    html::section(
        3,
        Some("monitors"),
        "Monitors during these runs",
        Some(html! {
            "Per configuration the median over its measured runs of each run's summary (a \
             counter's increase over the run, a gauge's time-weighted mean), as the monitors \
             pages and " code { "vernier show --monitors" } " give them; keys that are zero in \
             every row are left out. A process run under " code { "nice" } " spends its user \
             time as " code { "stat.nice" } ", not " code { "stat.user" } "."
        }),
        &content,
    )
}

fn title(what: &str, bench: &str, series: &[Series]) -> String {
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    format!("{bench} {what}: {}", names.join(" vs "))
}

pub fn box_figure(site: &Site, b: usize) -> Result<Vec<u8>, PlotError> {
    let series = site.benchmark_series(b);
    let size = size(
        metric_panels(&series),
        configurations(&series) * series.len(),
    );
    let title = title("runs", &site.benchmarks[b].name, &series);
    vernier_plot::box_plot(&series, &title, Format::Svg, size)
}

pub fn bars_figure(site: &Site, b: usize) -> Result<Vec<u8>, PlotError> {
    let series = site.benchmark_series(b);
    let size = size(
        metric_panels(&series),
        configurations(&series) * series.len() / 2,
    );
    let title = title("medians", &site.benchmarks[b].name, &series);
    vernier_plot::bars(&series, &title, Format::Svg, size)
}

pub fn line_figure(site: &Site, b: usize, o: usize) -> Result<Vec<u8>, PlotError> {
    let series = site.benchmark_series(b);
    let option = &site.benchmarks[b].swept[o];
    let title = title(
        &format!("against {option}"),
        &site.benchmarks[b].name,
        &series,
    );
    vernier_plot::line(
        &series,
        option,
        &title,
        Format::Svg,
        size(metric_panels(&series), 0),
    )
}
