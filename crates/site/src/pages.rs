//! The pages and figures of a [`Site`]: what each shows and from which analysis.

use std::collections::BTreeSet;
use std::fmt::Write;

use vernier_analysis::ConfigSummary;
use vernier_model::environment::{diff, kernel_config_diff};
use vernier_model::{Environment, StoredSession};
use vernier_plot::{Format, MonitorTrace, PlotError, Series, Size};

use crate::html::{self, esc, interval, num};
use crate::{session_name, short_id, Site};

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
        "<p>{} sessions, {} measured runs. Every statistic is computed as <code>vernier show</code> \
         and <code>vernier compare</code> compute it.</p>",
        sessions.len(),
        runs
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
    body.push_str(
        "<div class=\"scroll\"><table id=\"sessions\">\n<thead><tr><th>started</th><th>session</th>\
         <th>status</th><th>tags</th><th>kernel</th><th>fingerprint</th>\
         <th class=\"num\">configurations</th><th class=\"num\">runs</th><th>note</th>\
         <th>pages</th></tr></thead>\n<tbody>\n",
    );
    for (i, s) in sessions.iter().enumerate() {
        let tags: Vec<String> = s
            .info
            .tags
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
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
        let _ = writeln!(
            body,
            "<tr data-tags=\"{}\"><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>\
             <td>{links}</td></tr>",
            esc(&tags.join("\n")),
            esc(&html::utc(s.info.started_at_ns)),
            s.info.id,
            esc(&short_id(s)),
            esc(s.info.status.as_str()),
            esc(&tags.join(", ")),
            esc(s.info.environment.kernel_release.as_deref().unwrap_or("-")),
            esc(&s.info.fingerprint),
            s.configurations.len(),
            runs,
            esc(s.info.note.as_deref().unwrap_or("")),
        );
    }
    body.push_str("</tbody></table></div>\n");

    body.push_str("<h2>Benchmarks</h2>\n<ul>\n");
    for (b, bench) in site.benchmarks.iter().enumerate() {
        let series = site.benchmark_series(b);
        let _ = writeln!(
            body,
            "<li><a href=\"bench/{}.html\">{}</a>: {} configurations in {} series</li>",
            bench.stem,
            esc(&bench.name),
            configurations(&series),
            series.len()
        );
    }
    body.push_str("</ul>\n");
    if !site.latency.is_empty() {
        let _ = writeln!(
            body,
            "<h2>Latency</h2>\n<p><a href=\"latency.html\">Latency histograms</a> of {} \
             configurations.</p>",
            site.latency.len()
        );
    }
    if !site.monitors.is_empty() {
        body.push_str("<h2>Monitors</h2>\n<ul>\n");
        for (session, keys) in &site.monitors {
            let s = &site.input.sessions[*session];
            let _ = writeln!(
                body,
                "<li><a href=\"monitors/{}.html\">{}</a>: {} series</li>",
                s.info.id,
                esc(&session_name(s)),
                keys.len()
            );
        }
        body.push_str("</ul>\n");
    }
    if let Some(c) = &site.input.comparison {
        let _ = writeln!(
            body,
            "<h2>Compare</h2>\n<p><a href=\"compare.html\">{} against {}</a>: {} configurations \
             compared.</p>",
            esc(&c.new),
            esc(&c.base),
            c.report.comparisons.len()
        );
    }
    body.push_str(
        "<h2>Environment</h2>\n<p><a href=\"environment.html\">Each session's environment</a> \
         and how they differ.</p>\n",
    );
    html::page("", "vernier report", &nav(site), &body)
}

/// A benchmark's page: box plots, bars and lines, each with its numbers.
pub fn benchmark(site: &Site, b: usize) -> String {
    let bench = &site.benchmarks[b];
    let series = site.benchmark_series(b);
    let mut body = String::new();
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let _ = writeln!(body, "<p>Series: {}.</p>", esc(&names.join("; ")));

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
    let mut rows = Vec::new();
    for s in &series {
        for c in &s.summaries {
            rows.push(vec![
                s.name.clone(),
                c.label(),
                c.metric.clone(),
                c.unit.clone(),
                c.n.to_string(),
                num(c.median),
                interval(c.ci_low, c.ci_high),
                num(c.mean),
                num(c.mad),
                num(c.min),
                num(c.max),
                c.warnings.joined("; "),
            ]);
        }
    }
    let level = series
        .iter()
        .flat_map(|s| &s.summaries)
        .map(|c| c.level)
        .next()
        .unwrap_or(vernier_model::CONFIDENCE_LEVEL);
    let ci = format!("{} CI of the median", vernier_model::level_percent(level));
    body.push_str(&html::table(
        &[
            "series",
            "configuration",
            "metric",
            "unit",
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
        &[4, 5, 6, 7, 8, 9, 10],
    ));

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
    let labels: Vec<String> = series
        .iter()
        .flat_map(|s| s.summaries.iter().map(|c| (c.label(), c.metric.clone())))
        .fold(Vec::new(), |mut acc, x| {
            if !acc.contains(&x) {
                acc.push(x);
            }
            acc
        })
        .into_iter()
        .map(|(l, m)| format!("{l} ({m})"))
        .collect();
    let mut head = vec!["configuration".to_string()];
    head.extend(series.iter().map(|s| format!("{}: median {ci}", s.name)));
    let rows: Vec<Vec<String>> = labels
        .iter()
        .map(|label| {
            let mut row = vec![label.clone()];
            for s in &series {
                let cell = s
                    .summaries
                    .iter()
                    .find(|c| &format!("{} ({})", c.label(), c.metric) == label)
                    .map_or_else(
                        || "-".to_string(),
                        |c| format!("{} {}", num(c.median), interval(c.ci_low, c.ci_high)),
                    );
                row.push(cell);
            }
            row
        })
        .collect();
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let numeric: Vec<usize> = (1..head.len()).collect();
    body.push_str(&html::table(&head, &rows, &numeric));

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
                    s.name.clone(),
                    c.label(),
                    c.options
                        .get(option)
                        .map(ToString::to_string)
                        .unwrap_or_default(),
                    num(c.median),
                    interval(c.ci_low, c.ci_high),
                ]);
            }
        }
        body.push_str(&html::table(
            &["series", "configuration", option, "median", &ci],
            &rows,
            &[2, 3, 4],
        ));
    }
    let with_monitors: Vec<&(usize, Vec<String>)> = site
        .monitors
        .iter()
        .filter(|(i, _)| {
            site.input.sessions[*i]
                .configurations
                .iter()
                .any(|c| c.record.benchmark == bench.name)
        })
        .collect();
    if !with_monitors.is_empty() {
        body.push_str("<h2>Monitors</h2>\n<ul>\n");
        for (i, _) in with_monitors {
            let s = &site.input.sessions[*i];
            let _ = writeln!(
                body,
                "<li><a href=\"../monitors/{}.html\">{}</a></li>",
                s.info.id,
                esc(&session_name(s))
            );
        }
        body.push_str("</ul>\n");
    }
    html::page("../", &bench.name, &nav(site), &body)
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
         the OSADL QA Farm draws its latency plots.</p>\n",
    );
    for (i, label) in site.latency.iter().enumerate() {
        let _ = writeln!(body, "<h2>{}</h2>", esc(label));
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
                    t.missed.to_string(),
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
    body.push_str(&html::switch("monitor-figures", "Series", keys));
    body.push_str("<div id=\"monitor-figures\">\n");
    for (k, key) in keys.iter().enumerate() {
        body.push_str(&html::figure(
            &format!("{}/{k}.svg", s.info.id),
            &format!("{key} during each measured run, a panel per configuration"),
            Some(key),
        ));
    }
    body.push_str(
        "</div>\n<h2>Summaries per configuration</h2>\n<p>Per run, a counter's \
                   increase over the run or a gauge's time-weighted mean; here their median \
                   and range over the measured runs.</p>\n",
    );
    for c in &s.configurations {
        let summaries = vernier_report::monitors::monitor_summaries(c);
        if summaries.is_empty() {
            continue;
        }
        let label =
            vernier_analysis::label(&c.record.benchmark, &c.record.options, &c.record.loads);
        let _ = writeln!(body, "<h3>{}</h3>", esc(&label));
        let rows: Vec<Vec<String>> = summaries
            .iter()
            .map(|x| {
                vec![
                    x.key.clone(),
                    x.runs.to_string(),
                    num(Some(x.median)),
                    num(Some(x.min)),
                    num(Some(x.max)),
                ]
            })
            .collect();
        body.push_str(&html::table(
            &["key", "runs", "median", "min", "max"],
            &rows,
            &[1, 2, 3, 4],
        ));
    }
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
    let key = &keys[k];
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
    let _ = writeln!(
        body,
        "<p>{} compared: <span class=\"faster\">{} faster</span>, <span class=\"slower\">{} \
         slower</span>, {} equivalent, {} inconclusive. Geometric mean of {} ratios: {} {}.</p>",
        s.compared,
        s.faster,
        s.slower,
        s.equivalent,
        s.inconclusive,
        s.geomean_of,
        num(s.geomean_ratio),
        interval(s.geomean_ci_low, s.geomean_ci_high)
    );
    if !s.warnings.0.is_empty() {
        let _ = writeln!(
            body,
            "<p class=\"note\">{}</p>",
            esc(&s.warnings.joined("; "))
        );
    }
    let ci = format!("{} CI", vernier_model::level_percent(r.level));
    let rows: Vec<Vec<String>> = r
        .comparisons
        .iter()
        .chain(&r.secondary)
        .map(|x| {
            vec![
                x.label(),
                x.metric.clone(),
                x.base_n.to_string(),
                x.new_n.to_string(),
                num(Some(x.base_median)),
                num(Some(x.new_median)),
                num(Some(x.ratio)),
                interval(x.ratio_ci_low, x.ratio_ci_high),
                num(Some(x.p_adjusted)),
                x.verdict.as_str().to_string(),
                x.warnings.joined("; "),
            ]
        })
        .collect();
    body.push_str(&html::table(
        &[
            "configuration",
            "metric",
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
    if !r.unmatched.is_empty() {
        body.push_str("<h2>Not compared</h2>\n");
        let rows: Vec<Vec<String>> = r
            .unmatched
            .iter()
            .map(|u| {
                vec![
                    u.label(),
                    u.metric.clone(),
                    format!("{:?}", u.side),
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
        let _ = writeln!(body, "<h2>{} on {}</h2>", esc(&s.label()), esc(&s.host));
        body.push_str(&html::figure(
            &format!("history/{k}.svg"),
            &format!(
                "{} on {}: {} sessions, {} change point{}",
                s.label(),
                s.host,
                s.points.len(),
                s.steps.len(),
                if s.steps.len() == 1 { "" } else { "s" }
            ),
            None,
        ));
        if s.steps.is_empty() {
            body.push_str("<p>No change point.</p>\n");
            continue;
        }
        let rows: Vec<Vec<String>> = s
            .steps
            .iter()
            .map(|step| {
                let point = &s.points[step.index];
                let tags: Vec<String> =
                    point.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
                vec![
                    step.session.to_string().chars().take(8).collect(),
                    html::utc(step.started_at_ns),
                    tags.join(" "),
                    format!("{} -> {}", step.before_sessions, step.after_sessions),
                    num(Some(step.before_median)),
                    num(Some(step.after_median)),
                    num(Some(step.ratio)),
                    interval(step.ratio_ci_low, step.ratio_ci_high),
                    step.direction.as_str().to_string(),
                    step.verdict.as_str().to_string(),
                    step.warnings.joined("; "),
                ]
            })
            .collect();
        body.push_str(&html::table(
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

/// Each session's environment, and the differences of those that differ from the first.
pub fn environment(site: &Site) -> String {
    let sessions = &site.input.sessions;
    let mut body = String::new();
    let first = &sessions[0];
    let differing: Vec<&StoredSession> = sessions
        .iter()
        .skip(1)
        .filter(|s| s.info.fingerprint != first.info.fingerprint)
        .collect();
    body.push_str("<h2>Differences</h2>\n");
    if differing.is_empty() {
        body.push_str("<p>Every session ran in an environment of the same fingerprint.</p>\n");
    }
    for s in differing {
        let _ = writeln!(
            body,
            "<h3>{} against {}</h3>",
            esc(&session_name(s)),
            esc(&session_name(first))
        );
        let (a, b) = (&first.info.environment, &s.info.environment);
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".to_string());
        let rows: Vec<Vec<String>> = diff(a, b)
            .into_iter()
            .map(|d| vec![d.group.to_string(), d.field, shown(&d.a), shown(&d.b)])
            .collect();
        let (ha, hb) = (short_id(first), short_id(s));
        body.push_str(&html::table(&["group", "field", &ha, &hb], &rows, &[]));
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
                        body.push_str(&html::table(&["option", &ha, &hb], &rows, &[]));
                    }
                    _ => body.push_str(
                        "<p>The kernel configurations differ; their texts are not stored.</p>\n",
                    ),
                }
            }
        }
    }
    body.push_str("<h2>Sessions</h2>\n");
    for s in sessions {
        let _ = writeln!(
            body,
            "<h3 id=\"s-{}\">{}</h3>\n<p>fingerprint {}</p>",
            s.info.id,
            esc(&session_name(s)),
            esc(&s.info.fingerprint)
        );
        body.push_str(&html::table(
            &["field", "value"],
            &fields(&s.info.environment),
            &[],
        ));
    }
    html::page("", "Environment", &nav(site), &body)
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
