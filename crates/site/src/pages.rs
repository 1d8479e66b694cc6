//! The pages and figures of a [`Site`]: what each shows and from which analysis.

use std::collections::BTreeSet;
use std::fmt::Write;

use vernier_analysis::environment::{diff, kernel_config_diff};
use vernier_analysis::monitors::{monitor_summaries, MonitorSummary, RecordedKey};
use vernier_analysis::{ConfigSummary, Warning};
use vernier_model::monitor::SeriesKind;
use vernier_model::{Environment, Options, StoredConfiguration, StoredSession};
use vernier_plot::{Format, MonitorTrace, PlotError, Series, Size};
use vernier_report::format::{describe_session, plural};
use vernier_report::monitors::Scale;

use crate::html::{self, esc, interval, num};
use crate::{session_name, short_id, Benchmark, Site};

/// The navigation of every page, relative to the root.
fn nav(site: &Site) -> Vec<(String, String)> {
    let mut nav = vec![("index.html".to_string(), "Sessions".to_string())];
    for b in &site.benchmarks {
        nav.push((format!("bench/{}.html", b.stem), b.name.clone()));
    }
    if !site.latency.is_empty() {
        nav.push(("latency.html".to_string(), "Latency".to_string()));
    }
    if site.input.comparison.is_some() {
        nav.push(("compare.html".to_string(), "Compare".to_string()));
    }
    if !site.histories.is_empty() || site.history.is_err() {
        nav.push(("history.html".to_string(), "History".to_string()));
    }
    nav.push(("environment.html".to_string(), "Environment".to_string()));
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

fn configurations(series: &[Series]) -> usize {
    series
        .iter()
        .flat_map(|s| &s.summaries)
        .map(ConfigSummary::label)
        .collect::<BTreeSet<_>>()
        .len()
}

/// The index: sessions with a tag filter, and links to every page.
pub fn index(site: &Site) -> String {
    let sessions = &site.input.sessions;
    let mut body = String::new();
    let runs: usize = sessions
        .iter()
        .flat_map(|s| &s.configurations)
        .map(|c| c.runs.iter().filter(|r| !r.warmup).count())
        .sum();
    let _ = writeln!(
        body,
        "<p>{}, {}. Every statistic is computed as <code>vernier show</code> \
         and <code>vernier compare</code> compute it.</p>",
        plural(sessions.len(), "session"),
        plural(runs, "measured run")
    );
    let tags: BTreeSet<String> = sessions
        .iter()
        .flat_map(|s| s.info.tags.iter().map(|(k, v)| format!("{k}={v}")))
        .collect();
    body.push_str("<h2>Sessions</h2>\n");
    if !tags.is_empty() {
        body.push_str(
            "<p><label>Filter by tag <select id=\"tag-filter\"><option value=\"\">all sessions\
             </option>",
        );
        for t in &tags {
            let _ = write!(body, "<option value=\"{}\">{}</option>", esc(t), esc(t));
        }
        body.push_str("</select></label> <span id=\"shown\"></span></p>\n");
    }
    // The columns a reader scans at 1300 px: a minute is enough to tell sessions apart (the
    // second and the full id and fingerprint are their tooltips), tags wrap between tags.
    body.push_str(
        "<div class=\"scroll\"><table id=\"sessions\">\n<thead><tr><th>started (UTC)</th>\
         <th>session</th><th>status</th><th>ran</th><th>tags</th><th>kernel</th><th>fingerprint</th>\
         <th class=\"num\">configs</th><th class=\"num\">runs</th><th>note</th>\
         <th>pages</th></tr></thead>\n<tbody>\n",
    );
    for (i, s) in sessions.iter().enumerate() {
        let tags: Vec<String> = s
            .info
            .tags
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let tag_cells: Vec<String> = tags
            .iter()
            .map(|t| format!("<span class=\"tag\">{}</span>", esc(t)))
            .collect();
        let runs: usize = s
            .configurations
            .iter()
            .map(|c| c.runs.iter().filter(|r| !r.warmup).count())
            .sum();
        let mut links = format!(
            "<a href=\"environment.html#s-{}\">environment</a>",
            s.info.id
        );
        if let Some(m) = site.monitors.iter().position(|(x, _)| *x == i) {
            let _ = write!(
                links,
                " <a href=\"monitors/{}.html\">monitors</a>",
                site.input.sessions[site.monitors[m].0].info.id
            );
        }
        let fingerprint: String = s.info.fingerprint.chars().take(8).collect();
        let _ = writeln!(
            body,
            "<tr data-tags=\"{}\"><td class=\"when\" title=\"{}\">{}</td>\
             <td class=\"id\" title=\"{}\">{}</td><td class=\"word\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td>\
             <td class=\"text\">{}</td><td class=\"id\" title=\"{}\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"text\">{}</td>\
             <td class=\"word\">{links}</td></tr>",
            esc(&tags.join("\n")),
            esc(&html::utc(s.info.started_at_ns)),
            esc(&html::utc_minute(s.info.started_at_ns)),
            s.info.id,
            esc(&short_id(s)),
            esc(s.info.status.as_str()),
            // What it ran, as `vernier sessions` says it; specs wrap at their separators.
            html::label(&describe_session(s.info.suite.as_deref(), &s.info.specs)),
            tag_cells.join(" "),
            html::label(s.info.environment.kernel_release.as_deref().unwrap_or("-")),
            esc(&s.info.fingerprint),
            esc(&fingerprint),
            s.configurations.len(),
            runs,
            esc(s.info.note.as_deref().unwrap_or("")),
        );
    }
    body.push_str("</tbody></table></div>\n");

    let mut list = String::new();
    for (b, bench) in site.benchmarks.iter().enumerate() {
        let series = site.benchmark_series(b);
        let _ = writeln!(
            list,
            "<li><a href=\"bench/{}.html\">{}</a>: {} in {} series</li>",
            bench.stem,
            esc(&bench.name),
            plural(configurations(&series), "configuration"),
            series.len()
        );
    }
    if !list.is_empty() {
        body.push_str(&html::section(
            2,
            None,
            "Benchmarks",
            "",
            &format!("<ul>\n{list}</ul>\n"),
        ));
    }
    if !site.latency.is_empty() {
        let _ = writeln!(
            body,
            "<h2>Latency</h2>\n<p><a href=\"latency.html\">Latency histograms</a> of {}.</p>",
            plural(site.latency.len(), "configuration")
        );
    }
    if !site.monitors.is_empty() {
        body.push_str("<h2>Monitors</h2>\n<ul>\n");
        for (session, keys) in &site.monitors {
            let s = &site.input.sessions[*session];
            let _ = writeln!(
                body,
                "<li><a href=\"monitors/{}.html\">{}</a>: {} series, {} of them constant</li>",
                s.info.id,
                esc(&session_name(s)),
                keys.len(),
                keys.iter().filter(|k| k.constant.is_some()).count()
            );
        }
        body.push_str("</ul>\n");
    }
    if let Some(c) = &site.input.comparison {
        let _ = writeln!(
            body,
            "<h2>Compare</h2>\n<p><a href=\"compare.html\">{} against {}</a>: {} \
             compared.</p>",
            esc(&c.new),
            esc(&c.base),
            plural(c.report.comparisons.len(), "configuration")
        );
    }
    body.push_str(
        "<h2>Environment</h2>\n<p><a href=\"environment.html\">Each session's environment</a> \
         and how they differ.</p>\n",
    );
    html::page("", "vernier report", &nav(site), &body)
}

/// The configurations of a benchmark's page named by what tells them apart: the options that
/// have the same value in every configuration of the page (and the loads, when every one ran
/// the same) are said once above the tables, and each configuration is named by the rest
/// (`groups=4`), so that a table's column is not the whole spec.
struct PageLabels {
    benchmark: String,
    common: Options,
    /// The loads of every configuration, when they are the same in all.
    common_loads: Option<Vec<String>>,
}

impl PageLabels {
    fn new<'a>(
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
    fn short(&self, options: &Options, loads: &[String]) -> String {
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
        let label = vernier_analysis::label(&self.benchmark, &rest, loads);
        match label.strip_prefix(&format!("{}:", self.benchmark)) {
            Some(options) => options.to_string(),
            None => label,
        }
    }

    /// The sentence that names what every configuration shares, or nothing.
    fn about(&self) -> String {
        let loads = self.common_loads.as_deref().unwrap_or(&[]);
        if self.common.0.is_empty() && loads.is_empty() {
            return String::new();
        }
        let mut parts = Vec::new();
        if !self.common.0.is_empty() {
            parts.push(format!("options {}", html::label(&self.common.label())));
        }
        if !loads.is_empty() {
            parts.push(format!("load {}", esc(&loads.join(" + "))));
        }
        format!(
            "<p>Every configuration below has {}.</p>\n",
            parts.join(" and ")
        )
    }
}

/// A benchmark's page: box plots, bars and lines, each with its numbers, and the monitors'
/// summaries of the configurations beside their results.
pub fn benchmark(site: &Site, b: usize) -> String {
    let bench = &site.benchmarks[b];
    let series = site.benchmark_series(b);
    let labels = PageLabels::new(
        &bench.name,
        series
            .iter()
            .flat_map(|s| &s.summaries)
            .map(|c| (&c.options, c.loads.as_slice())),
    );
    let short = |c: &ConfigSummary| labels.short(&c.options, &c.loads);
    let mut body = String::new();
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let _ = writeln!(body, "<p>Series: {}.</p>", esc(&names.join("; ")));
    body.push_str(&labels.about());

    body.push_str("<h2>Runs of each configuration</h2>\n");
    if !bench.has_runs {
        body.push_str("<p>No configuration has measured runs.</p>\n");
    }
    body.push_str(&html::figure_if(
        bench.has_runs,
        &format!("{}-box.svg", bench.stem),
        &format!(
            "{}: per configuration a box per series (quartiles, whiskers at 1.5 IQR), the \
             median's interval as a dark bar, every run a dot",
            bench.name
        ),
        None,
    ));
    let mut notes = html::WarningNotes::new("warning");
    let mut rows = Vec::new();
    for s in &series {
        for c in &s.summaries {
            rows.push(vec![
                esc(&s.name),
                html::label(&short(c)),
                esc(&format!("{} ({})", c.metric, c.unit)),
                c.n.to_string(),
                esc(&num(c.median)),
                esc(&interval(c.ci_low, c.ci_high)),
                esc(&num(c.mean)),
                esc(&num(c.mad)),
                esc(&num(c.min)),
                esc(&num(c.max)),
                notes.cell_with_error(c.error.as_deref(), &c.warnings),
            ]);
        }
    }
    let level = series
        .iter()
        .flat_map(|s| &s.summaries)
        .map(|c| c.level)
        .next()
        .unwrap_or(vernier_model::CONFIDENCE_LEVEL);
    let percent = vernier_model::level_percent(level);
    let ci = format!("{percent} CI of the median");
    body.push_str(&html::table_of_markup(
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
        &rows,
        &[3, 4, 5, 6, 7, 8, 9],
    ));
    body.push_str(&notes.list());
    body.push_str(&monitor_summary(site, bench, &labels));

    body.push_str("<h2>Medians of all configurations</h2>\n");
    body.push_str(&html::figure_if(
        bench.has_medians,
        &format!("{}-bars.svg", bench.stem),
        &format!(
            "{}: per configuration a bar per series, its height the median and the whisker its \
             interval",
            bench.name
        ),
        None,
    ));
    // A row per configuration and metric, in the order of their first appearance.
    let mut configs: Vec<&ConfigSummary> = Vec::new();
    for c in series.iter().flat_map(|s| &s.summaries) {
        if !configs
            .iter()
            .any(|x| x.label() == c.label() && x.metric == c.metric)
        {
            configs.push(c);
        }
    }
    let mut head = vec!["configuration (metric)".to_string()];
    head.extend(
        series
            .iter()
            .map(|s| format!("{}: median [{percent} CI]", s.name)),
    );
    let rows: Vec<Vec<String>> = configs
        .iter()
        .map(|config| {
            let mut row = vec![format!(
                "{} ({})",
                html::label(&short(config)),
                esc(&config.metric)
            )];
            for s in &series {
                let cell = s
                    .summaries
                    .iter()
                    .find(|c| c.label() == config.label() && c.metric == config.metric)
                    .map_or_else(
                        || "-".to_string(),
                        |c| format!("{} {}", num(c.median), interval(c.ci_low, c.ci_high)),
                    );
                row.push(esc(&cell));
            }
            row
        })
        .collect();
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let numeric: Vec<usize> = (1..head.len()).collect();
    body.push_str(&html::table_of_markup(&head, &rows, &numeric));

    for (o, option) in bench.swept.iter().enumerate() {
        let _ = writeln!(body, "<h2>Against {}</h2>", esc(option));
        body.push_str(&html::figure(
            &format!("{}-line-{o}.svg", bench.stem),
            &format!(
                "{}: the median against {option}, a line per series and combination of the \
                 other options, the band its interval",
                bench.name
            ),
            None,
        ));
        let mut rows = Vec::new();
        for s in &series {
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
                    esc(&s.name),
                    html::label(&short(c)),
                    esc(&c
                        .options
                        .get(option)
                        .map(ToString::to_string)
                        .unwrap_or_default()),
                    esc(&num(c.median)),
                    esc(&interval(c.ci_low, c.ci_high)),
                ]);
            }
        }
        body.push_str(&html::table_of_markup(
            &["series", "configuration", option, "median", &ci],
            &rows,
            &[2, 3, 4],
        ));
    }
    html::page("../", &bench.name, &nav(site), &body)
}

/// The monitors beside a benchmark's results: per session and configuration the median over
/// its measured runs of the key monitors' run summaries (`vernier_report::monitors`, the
/// numbers of the monitors pages and `show --monitors`), and links to every key's series.
fn monitor_summary(site: &Site, bench: &Benchmark, labels: &PageLabels) -> String {
    let mut links = Vec::new();
    let mut rows: Vec<(String, String, Vec<MonitorSummary>)> = Vec::new();
    for (i, _) in &site.monitors {
        let s = &site.input.sessions[*i];
        let configs: Vec<&StoredConfiguration> = s
            .configurations
            .iter()
            .filter(|c| c.record.benchmark == bench.name)
            .collect();
        if configs.is_empty() {
            continue;
        }
        let link = format!(
            "<a href=\"../monitors/{}.html\">{}</a>",
            s.info.id,
            esc(&session_name(s))
        );
        for c in configs {
            let summaries = monitor_summaries(c);
            if summaries.is_empty() {
                continue;
            }
            let label = labels.short(&c.record.options, &c.record.loads);
            rows.push((link.clone(), label, summaries));
        }
        links.push(link);
    }
    if links.is_empty() {
        return String::new();
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
    let mut content = String::new();
    if !keys.is_empty() {
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
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|(link, label, summaries)| {
                let mut row = vec![link.clone(), html::label(label)];
                for (k, scale) in keys.iter().zip(&scales) {
                    let median = summaries.iter().find(|x| x.key == *k).map(|x| x.median);
                    row.push(esc(
                        &median.map_or_else(|| "-".to_string(), |m| scale.format(m))
                    ));
                }
                row
            })
            .collect();
        let numeric: Vec<usize> = (2..head.len()).collect();
        content.push_str(&html::table_of_markup(&head, &cells, &numeric));
    }
    let _ = writeln!(
        content,
        "<p>Every monitor key as a series during each run: {}.</p>",
        links.join(", ")
    );
    html::section(
        3,
        Some("monitors"),
        "Monitors during these runs",
        "Per configuration the median over its measured runs of each run's summary (a \
         counter's increase over the run, a gauge's time-weighted mean), as the monitors pages \
         and <code>vernier show --monitors</code> give them; keys that are zero in every row \
         are left out. A process run under <code>nice</code> spends its user time as \
         <code>stat.nice</code>, not <code>stat.user</code>.",
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

/// Latency: per configuration the per-CPU histograms of each series, the interval maxima of
/// monitoring sessions, and the numbers of `show`.
pub fn latency(site: &Site) -> String {
    let mut body = String::from(
        "<p>Per CPU the histogram of every measured run merged, in 1 us bins with a \
         logarithmic count axis (an empty bin drawn at 0.8), the worst case in the legend, as \
         the OSADL QA Farm draws its latency plots. When a few samples lie far beyond the \
         p99.99 (or p99.9, p99 with fewer samples), the latency axis ends near it and they \
         are a bar of their own at its right. \
         Interval maxima are drawn against the time since each series' first interval.</p>\n",
    );
    for (i, label) in site.latency.iter().enumerate() {
        let _ = writeln!(body, "<h2>{}</h2>", html::label(label));
        body.push_str(&html::figure(
            &format!("latency/{i}.svg"),
            &format!("{label}: latency per CPU"),
            None,
        ));
        let mut rows = Vec::new();
        let all = site.latency_of(i);
        for (name, l) in &all {
            for t in &l.threads {
                rows.push(vec![
                    name.clone(),
                    t.label(),
                    t.samples.to_string(),
                    num(Some(t.min_us)),
                    num(t.p50.value()),
                    num(t.p99.value()),
                    num(t.p99_9.value()),
                    num(t.p99_99.value()),
                    num(Some(t.max_us)),
                    // Unknown (`-`) where the source does not count missed periods.
                    t.missed.map_or_else(|| "-".to_string(), |m| m.to_string()),
                ]);
            }
        }
        body.push_str(&html::table(
            &[
                "series",
                "CPU",
                "samples",
                "min (us)",
                "p50 (us)",
                "p99 (us)",
                "p99.9 (us)",
                "p99.99 (us)",
                "max (us)",
                "missed",
            ],
            &rows,
            &[2, 3, 4, 5, 6, 7, 8, 9],
        ));
        if site.has_maxima(i) {
            body.push_str(&html::figure(
                &format!("latency/{i}-maxima.svg"),
                &format!("{label}: the maximum of each interval (measured run)"),
                None,
            ));
            let rows: Vec<Vec<String>> = all
                .iter()
                .map(|(name, l)| {
                    vec![
                        name.clone(),
                        l.interval_maxima.len().to_string(),
                        num(l.max_of_maxima_us),
                    ]
                })
                .collect();
            body.push_str(&html::table(
                &["series", "intervals", "maximum of the maxima (us)"],
                &rows,
                &[1, 2],
            ));
        }
    }
    html::page("", "Latency", &nav(site), &body)
}

pub fn latency_figure(site: &Site, i: usize) -> Result<Vec<u8>, PlotError> {
    let panels = site.latency_of(i);
    let size = Size {
        width: 1200,
        height: (80 + 480 * panels.len() as u32).clamp(600, 8000),
    };
    vernier_plot::latency(
        &panels,
        &format!("{}: latency per CPU", site.latency[i]),
        Format::Svg,
        size,
    )
}

pub fn maxima_figure(site: &Site, i: usize) -> Result<Vec<u8>, PlotError> {
    vernier_plot::maxima(
        &site.latency_of(i),
        &format!("{}: interval maxima", site.latency[i]),
        Format::Svg,
        Size::default(),
    )
}

/// A session's monitors: one series at a time (a switch), and per configuration the summaries
/// of every key over its measured runs.
pub fn monitors(site: &Site, m: usize) -> String {
    let (session, keys) = &site.monitors[m];
    let s = &site.input.sessions[*session];
    let mut body = format!(
        "<p>Session {} started {}.</p>\n<h2>Series during the runs</h2>\n",
        esc(&s.info.id.to_string()),
        esc(&html::utc(s.info.started_at_ns))
    );
    // The series shown first: the first key monitor the session recorded (context switches
    // before CPU time), not the first key by name, which is often a flat line; else the first
    // key that is drawn.
    let drawn = |x: &&RecordedKey| x.constant.is_none();
    let shown = vernier_report::monitors::KEY_MONITORS
        .iter()
        .find_map(|k| keys.iter().position(|x| x.key == *k && drawn(&x)))
        .or_else(|| keys.iter().position(|x| drawn(&x)))
        .unwrap_or(0);
    let names: Vec<String> = keys.iter().map(|k| k.key.clone()).collect();
    body.push_str(&html::switch("monitor-figures", "Series", &names, shown));
    body.push_str("<div id=\"monitor-figures\">\n");
    for (k, key) in keys.iter().enumerate() {
        let Some(value) = key.constant else {
            body.push_str(&html::figure(
                &format!("{}/{k}.svg", s.info.id),
                &format!(
                    "{} during each measured run, a panel per configuration",
                    key.key
                ),
                Some(&key.key),
            ));
            continue;
        };
        // A flat line in every panel says no more than its value, and such keys (a counter
        // of swap-ins that never rose) are often most of a session's keys.
        let runs = plural(key.runs, "measured run");
        let what = if key.kind == SeriesKind::Counter && value == 0.0 {
            format!("did not rise in any of the {runs} that recorded it, in any configuration")
        } else {
            let scale = Scale::of_constant(key);
            let value = format!("{} {}", scale.format(value), scale.unit);
            format!(
                "was {} in every sample of the {runs} that recorded it, in every configuration",
                value.trim_end()
            )
        };
        let _ = writeln!(
            body,
            "<p data-key=\"{}\">{} {}: a flat line, not drawn.</p>",
            esc(&key.key),
            html::label(&key.key),
            esc(&what)
        );
    }
    body.push_str("</div>\n");
    let mut summaries_html = String::new();
    for c in &s.configurations {
        let summaries = monitor_summaries(c);
        if summaries.is_empty() {
            continue;
        }
        let label =
            vernier_analysis::label(&c.record.benchmark, &c.record.options, &c.record.loads);
        let _ = writeln!(summaries_html, "<h3>{}</h3>", html::label(&label));
        let rows: Vec<Vec<String>> = summaries
            .iter()
            .map(|x| {
                let scale = Scale::of_summary(x);
                vec![
                    html::label(&x.key),
                    esc(&scale.unit),
                    x.runs.to_string(),
                    esc(&scale.format(x.median)),
                    esc(&scale.format(x.min)),
                    esc(&scale.format(x.max)),
                ]
            })
            .collect();
        summaries_html.push_str(&html::table_of_markup(
            &["key", "unit", "runs", "median", "min", "max"],
            &rows,
            &[2, 3, 4, 5],
        ));
    }
    body.push_str(&html::section(
        2,
        None,
        "Summaries per configuration",
        "Per run, a counter's increase over the run or a gauge's time-weighted mean; here \
         their median and range over the measured runs.",
        &summaries_html,
    ));
    html::page(
        "../",
        &format!("Monitors of {}", session_name(s)),
        &nav(site),
        &body,
    )
}

pub fn monitor_figure(site: &Site, m: usize, k: usize) -> Result<Vec<u8>, PlotError> {
    let (session, keys) = &site.monitors[m];
    let s = &site.input.sessions[*session];
    let key = &keys[k].key;
    let traces: Vec<MonitorTrace> = s
        .configurations
        .iter()
        .filter_map(|c| {
            let label =
                vernier_analysis::label(&c.record.benchmark, &c.record.options, &c.record.loads);
            MonitorTrace::of(label, c, key)
        })
        .collect();
    let size = Size {
        width: 1200,
        height: (80 + 320 * traces.len() as u32).clamp(500, 8000),
    };
    vernier_plot::monitor(
        &traces,
        key,
        &format!("{key} during the runs of {}", short_id(s)),
        Format::Svg,
        size,
    )
}

/// The comparison: forest plot, summary and the table of `compare`.
pub fn compare(site: &Site) -> String {
    let Some(c) = &site.input.comparison else {
        return String::new();
    };
    let r = &c.report;
    let mut body = format!(
        "<p>BASE {}, NEW {}; threshold {}, {} intervals, as <code>vernier compare</code> \
         reports it.</p>\n",
        esc(&c.base),
        esc(&c.new),
        esc(&vernier_report::format::pct(r.threshold)),
        esc(&vernier_model::level_percent(r.level))
    );
    if r.comparisons.is_empty() {
        body.push_str("<p>No configuration is on both sides of the comparison.</p>\n");
    }
    body.push_str(&html::figure_if(
        !r.comparisons.is_empty(),
        "compare-forest.svg",
        "the ratio NEW/BASE of each configuration with its interval, coloured by verdict; the \
         geometric mean last",
        None,
    ));
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
    let _ = writeln!(
        body,
        "<p>{} compared: <span class=\"faster\">{} faster</span>, <span class=\"slower\">{} \
         slower</span>, {} equivalent, {} inconclusive.{}</p>",
        s.compared,
        s.faster,
        s.slower,
        s.equivalent,
        s.inconclusive,
        esc(&geomean)
    );
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
    if !notes.is_empty() {
        let _ = writeln!(body, "<p class=\"note\">{}</p>", esc(&notes.join("; ")));
    }
    let ci = format!("{} CI", vernier_model::level_percent(r.level));
    let mut notes = html::WarningNotes::new("warning");
    let rows: Vec<Vec<String>> = r
        .comparisons
        .iter()
        .chain(&r.secondary)
        .map(|x| {
            vec![
                html::label(&x.label()),
                // The medians are in the metric's unit, as `compare` prints them.
                esc(&format!("{} ({})", x.metric, x.unit)),
                x.base_n.to_string(),
                x.new_n.to_string(),
                esc(&num(Some(x.base_median))),
                esc(&num(Some(x.new_median))),
                esc(&num(Some(x.ratio))),
                esc(&interval(x.ratio_ci_low, x.ratio_ci_high)),
                esc(&num(Some(x.p_adjusted))),
                esc(x.verdict.as_str()),
                notes.cell(&x.warnings),
            ]
        })
        .collect();
    body.push_str(&html::table_of_markup(
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
    ));
    body.push_str(&notes.list());
    if !r.unmatched.is_empty() {
        body.push_str("<h2>Not compared</h2>\n");
        let rows: Vec<Vec<String>> = r
            .unmatched
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
            .collect();
        body.push_str(&html::table(
            &["configuration", "metric", "only in", "reason"],
            &rows,
            &[],
        ));
    }
    html::page("", "Compare", &nav(site), &body)
}

pub fn forest_figure(site: &Site) -> Result<Vec<u8>, PlotError> {
    let Some(c) = &site.input.comparison else {
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

/// Every configuration over time on each machine with its change points, as `vernier history`
/// reports them (docs/history.md).
pub fn history(site: &Site) -> String {
    let report = match &site.history {
        Ok(r) => r,
        Err(e) => {
            let body = format!(
                "<p class=\"note\">The history cannot be computed: {}</p>\n",
                esc(e)
            );
            return html::page("", "History", &nav(site), &body);
        }
    };
    let mut body = format!(
        "<p>Each configuration on each machine: the median of every session, oldest first, \
         with its interval, and the change points found in that series (split and merge, \
         p &lt; {}, windows of {} sessions). Each step is measured as <code>vernier \
         compare</code> measures the sessions on either side, at threshold {}.</p>\n",
        report.max_pvalue,
        report.window,
        esc(&vernier_report::format::pct(report.threshold))
    );
    let ci = format!("ratio {} CI", vernier_model::level_percent(report.level));
    for (k, &i) in site.histories.iter().enumerate() {
        let s = &report.series[i];
        let _ = writeln!(
            body,
            "<h2>{} on {}</h2>",
            html::label(&s.label()),
            esc(&s.host)
        );
        body.push_str(&html::figure(
            &format!("history/{k}.svg"),
            &format!(
                "{} on {}: {}, {}",
                s.label(),
                s.host,
                plural(s.points.len(), "session"),
                plural(s.steps.len(), "change point")
            ),
            None,
        ));
        if s.steps.is_empty() {
            body.push_str("<p>No change point.</p>\n");
            continue;
        }
        let mut notes = html::WarningNotes::new(&format!("warning-{k}"));
        let rows: Vec<Vec<String>> = s
            .steps
            .iter()
            .map(|step| {
                let point = &s.points[step.index];
                let tags: Vec<String> =
                    point.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
                vec![
                    esc(&step.session.to_string().chars().take(8).collect::<String>()),
                    esc(&html::utc(step.started_at_ns)),
                    esc(&tags.join(" ")),
                    esc(&format!(
                        "{} -> {}",
                        step.before_sessions, step.after_sessions
                    )),
                    esc(&num(Some(step.before_median))),
                    esc(&num(Some(step.after_median))),
                    esc(&num(Some(step.ratio))),
                    esc(&interval(step.ratio_ci_low, step.ratio_ci_high)),
                    esc(step.direction.as_str()),
                    esc(step.verdict.as_str()),
                    notes.cell(&step.warnings),
                ]
            })
            .collect();
        body.push_str(&html::table_of_markup(
            &[
                "first session at the new level",
                "started",
                "tags",
                "sessions",
                "median before",
                "median after",
                "ratio after/before",
                &ci,
                "direction",
                "verdict",
                "warnings",
            ],
            &rows,
            &[4, 5, 6, 7],
        ));
        body.push_str(&notes.list());
    }
    html::page("", "History", &nav(site), &body)
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

/// Sessions grouped by their whole environment (every field, not only those the fingerprint
/// covers), in the order each environment first appears.
fn environments(sessions: &[StoredSession]) -> Vec<(&Environment, Vec<&StoredSession>)> {
    let mut groups: Vec<(&Environment, Vec<&StoredSession>)> = Vec::new();
    for s in sessions {
        match groups.iter_mut().find(|(e, _)| **e == s.info.environment) {
            Some((_, members)) => members.push(s),
            None => groups.push((&s.info.environment, vec![s])),
        }
    }
    groups
}

/// The sessions of one environment, each linked to by the index as `#s-ID`.
fn session_list(sessions: &[&StoredSession]) -> String {
    let names: Vec<String> = sessions
        .iter()
        .map(|s| {
            format!(
                "<span id=\"s-{}\">{}</span>",
                s.info.id,
                esc(&session_name(s))
            )
        })
        .collect();
    names.join(", ")
}

/// Each distinct environment once, naming the sessions that ran in it, and how each differs
/// from the first.
pub fn environment(site: &Site) -> String {
    let groups = environments(&site.input.sessions);
    let mut body = String::new();
    // Differences are against the first environment that recorded anything: an imported
    // session (cyclictest's histogram output) may have recorded none, and against nothing every
    // field would be a difference.
    let reference = groups.iter().position(|(e, _)| recorded(e)).unwrap_or(0);
    let first = groups[reference].0;
    body.push_str("<h2>Differences</h2>\n");
    if groups.len() == 1 {
        body.push_str("<p>Every session ran in the same environment.</p>\n");
    }
    for (i, (e, members)) in groups.iter().enumerate() {
        if i == reference {
            continue;
        }
        let r = reference + 1;
        let (ha, hb) = (format!("environment {r}"), format!("environment {}", i + 1));
        let names: Vec<String> = members.iter().map(|s| esc(&session_name(s))).collect();
        let _ = writeln!(
            body,
            "<h3>Environment {n} against environment {r}</h3>",
            n = i + 1
        );
        if !recorded(e) {
            // One line, not a row per field that the other environment has.
            let note = common_note(members)
                .map(|note| format!(" ({})", esc(note)))
                .unwrap_or_default();
            let _ = writeln!(
                body,
                "<p>{} {} recorded no environment{note}: nothing to compare.</p>",
                if members.len() == 1 {
                    "Session"
                } else {
                    "Sessions"
                },
                names.join(", "),
            );
            continue;
        }
        let _ = writeln!(
            body,
            "<p>{} of environment {n}: {}; environment {r} is <a href=\"#env-{r}\">under \
             Environments</a>.</p>",
            if members.len() == 1 {
                "The session"
            } else {
                "The sessions"
            },
            names.join(", "),
            n = i + 1,
        );
        let (a, b) = (first, *e);
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".to_string());
        let compared = diff(a, b);
        if let Some(line) = compared.not_compared(&ha, &hb) {
            // The side that recorded fewer fields is partial; its sessions' note says why
            // (imported from cyclictest --json).
            let partial = match (compared.only_a, compared.only_b) {
                (_, 0) => Some((&hb, members.as_slice())),
                (0, _) => Some((&ha, groups[reference].1.as_slice())),
                _ => None,
            };
            let why = partial
                .map(|(side, sessions)| match common_note(sessions) {
                    Some(note) => format!(" ({side} is partial; its note: {})", esc(note)),
                    None => format!(" ({side} is partial)"),
                })
                .unwrap_or_default();
            let _ = writeln!(body, "<p>{}{why}.</p>", esc(&line));
        }
        let rows: Vec<Vec<String>> = compared
            .differences
            .into_iter()
            .map(|d| vec![d.group.to_string(), d.field, shown(&d.a), shown(&d.b)])
            .collect();
        if rows.is_empty() {
            body.push_str(
                "<p>No field that <code>vernier env diff</code> compares differs; \
                 the fields of both are under Environments.</p>\n",
            );
        } else {
            body.push_str(&html::text_table(&["group", "field", &ha, &hb], &rows));
        }
        if let (Some(ca), Some(cb)) = (&a.kernel_config_sha256, &b.kernel_config_sha256) {
            if ca != cb {
                match (
                    site.input.kernel_configs.get(ca),
                    site.input.kernel_configs.get(cb),
                ) {
                    (Some(ta), Some(tb)) => {
                        let rows: Vec<Vec<String>> = kernel_config_diff(ta, tb)
                            .into_iter()
                            .map(|c| {
                                let unset = "is not set".to_string();
                                vec![
                                    c.option,
                                    c.a.unwrap_or_else(|| unset.clone()),
                                    c.b.unwrap_or(unset),
                                ]
                            })
                            .collect();
                        body.push_str("<p>Kernel configuration:</p>\n");
                        body.push_str(&html::text_table(&["option", &ha, &hb], &rows));
                    }
                    _ => body.push_str(
                        "<p>The kernel configurations differ; their texts are not stored.</p>\n",
                    ),
                }
            }
        }
    }
    body.push_str("<h2>Environments</h2>\n");
    for (i, (e, members)) in groups.iter().enumerate() {
        let _ = writeln!(
            body,
            "<h3 id=\"env-{n}\">Environment {n}</h3>\n<p>Fingerprint {}; {}: {}.</p>",
            esc(&members[0].info.fingerprint),
            if members.len() == 1 {
                "session"
            } else {
                "sessions"
            },
            session_list(members),
            n = i + 1,
        );
        if recorded(e) {
            body.push_str(&html::text_table(&["field", "value"], &fields(e)));
        } else {
            body.push_str("<p>No field recorded.</p>\n");
        }
    }
    html::page("", "Environment", &nav(site), &body)
}

/// The note that every one of `sessions` has, if they share one (imported from cyclictest
/// --json).
fn common_note<'a>(sessions: &[&'a StoredSession]) -> Option<&'a str> {
    let notes: BTreeSet<Option<&str>> = sessions.iter().map(|s| s.info.note.as_deref()).collect();
    match notes.first() {
        Some(Some(note)) if notes.len() == 1 => Some(note),
        _ => None,
    }
}

/// Whether any field of `e` was recorded: a session imported from a file that says nothing
/// of its machine has none.
fn recorded(e: &Environment) -> bool {
    *e != Environment::default()
}

/// The environment's fields as `show` lists them: `name` or `name.key` and the value.
fn fields(e: &Environment) -> Vec<Vec<String>> {
    let plain = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut rows = Vec::new();
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(e) {
        for (name, v) in fields {
            match v {
                serde_json::Value::Null => {}
                serde_json::Value::Object(map) => {
                    for (k, v) in map {
                        rows.push(vec![format!("{name}.{k}"), plain(&v)]);
                    }
                }
                other => rows.push(vec![name, plain(&other)]),
            }
        }
    }
    rows
}
