//! The results website of `vernier report` (a static directory) and `vernier serve` (the same
//! files on request): an index of the sessions, a page per benchmark (box plots, bars, lines
//! against swept options, each with its numbers), latency histograms and interval maxima,
//! monitor series and summaries, comparisons, each configuration over time with its change
//! points (`vernier history`), the bisections (`vernier bisect`) and the environments with
//! their differences.
//!
//! A [`Site`] is a pure function of loaded sessions (and a comparison): it lists its files
//! ([`Site::paths`]) and renders any of them on its own ([`Site::render`]), so a server draws
//! only the page asked for. Every number comes from `vernier_analysis` (the code of `show` and
//! `compare`), every figure from `vernier_plot` (the code of `vernier plot`), files of the site
//! itself. Nothing refers outside the site: no CDN, font or script from elsewhere, so the
//! directory works from `file://`, copied or published. Pages are maud markup, in which every
//! string from the database is text that maud escapes ([`html`]); the figures are
//! `vernier_plot`'s SVG, which escapes its own text, the only markup of the site not made by
//! maud ([`Site::render`]).

mod html;
mod pages;

use std::collections::BTreeMap;

use uuid::Uuid;
use vernier_analysis::monitors::RecordedKey;
use vernier_analysis::{CompareReport, ConfigSummary, HistoryReport, HistorySettings};
use vernier_model::bisect::{BISECT_TAG, COMMIT_TAG};
use vernier_model::{OptionValue, StoredSession};
use vernier_plot::{PlotError, Series};

/// The file that marks a directory as a report, so that `vernier report -o DIR` may replace
/// it, and nothing else.
pub const MARKER: &str = ".vernier-report";

/// The first line of [`MARKER`]'s content.
pub const MARKER_TEXT: &str = "vernier report\n";

/// What a site shows.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// The sessions, oldest first, loaded with their runs, histograms and monitor data.
    pub sessions: Vec<StoredSession>,
    /// A tag key: one series per value of it (the sessions carrying it pooled, as a tag
    /// selector pools them in `plot` and `compare`); without it a series per session.
    pub group_by: Option<String>,
    /// Kernel configuration texts by SHA-256, for the environment differences.
    pub kernel_configs: BTreeMap<String, String>,
    /// The comparisons, each NEW against its BASE (`--compare BASE NEW [NEW...]`, or the
    /// values of one tag against the first one): a compare page each, and an answer each on
    /// the index, the first above the others.
    pub comparisons: Vec<Comparison>,
    /// The bisections of the database (`vernier bisect`), each with its measurements: a page
    /// each.
    pub bisections: Vec<vernier_analysis::bisect::BisectState>,
}

/// A comparison of two selections, as `vernier compare` computed it.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub base: String,
    pub new: String,
    pub report: CompareReport,
    /// The sessions of each side (for the environments' differences; those among the site's
    /// sessions are linked).
    pub base_sessions: Vec<Uuid>,
    pub new_sessions: Vec<Uuid>,
}

/// The comparisons a site makes when none is named: the values of one tag, the first against
/// each other. With `by` (`--by KEY`), the values of that tag among the sessions that carry it;
/// without, the selected sessions must all carry a tag whose value is not the same in all of
/// them, exactly one such tag (such as `kernel=A`, `kernel=B`, `kernel=C`). Returns the tag's
/// key and its values in the order of their oldest session (`sessions` is oldest first): the
/// first is BASE, every other a NEW compared against it. `None` when no tag splits the
/// sessions so, or the tag has a single value. The tags of a bisection's sessions (`bisect`,
/// and `commit` on sessions that carry `bisect`) split nothing on their own: the bisection's
/// page compares its commits.
pub fn automatic_comparisons(
    sessions: &[StoredSession],
    by: Option<&str>,
) -> Option<(String, Vec<String>)> {
    let values_of = |key: &str, all: bool| -> Option<Vec<String>> {
        let mut values: Vec<String> = Vec::new();
        for s in sessions {
            match s.info.tags.get(key) {
                Some(v) if !values.contains(v) => values.push(v.clone()),
                Some(_) => {}
                None if all => return None,
                None => {}
            }
        }
        (values.len() > 1).then_some(values)
    };
    if let Some(key) = by {
        return values_of(key, false).map(|values| (key.to_string(), values));
    }
    let first = sessions.first()?;
    let bisected = first.info.tags.contains_key(BISECT_TAG);
    let mut split = first
        .info
        .tags
        .keys()
        .filter(|key| *key != BISECT_TAG && !(bisected && *key == COMMIT_TAG))
        .filter_map(|key| values_of(key, true).map(|values| (key.clone(), values)));
    let found = split.next()?;
    if split.next().is_some() {
        return None;
    }
    Some(found)
}

/// The page of comparison `i`: `compare.html` for the first, `compare-2.html` for the second.
pub(crate) fn compare_page(i: usize) -> String {
    match i {
        0 => "compare.html".to_string(),
        _ => format!("compare-{}.html", i + 1),
    }
}

/// The forest figure of comparison `i`, beside its page.
pub(crate) fn forest_path(i: usize) -> String {
    match i {
        0 => "compare-forest.svg".to_string(),
        _ => format!("compare-{}-forest.svg", i + 1),
    }
}

/// Why a site (or one of its files) could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("nothing to report: no session selected")]
    Empty,
    #[error("figure {path}: {source}")]
    Figure { path: String, source: PlotError },
    #[error("download {path}: {reason}")]
    Download { path: String, reason: String },
}

/// A site's files: what each path is and the analysed data they share.
pub struct Site {
    input: Input,
    /// The series of every figure and table, in the order of their first session.
    series: Vec<Series>,
    /// The sessions (indices into `input.sessions`) of each series, in `series` order.
    members: Vec<Vec<usize>>,
    benchmarks: Vec<Benchmark>,
    /// Configuration labels with latency histograms, in first-seen order.
    latency: Vec<String>,
    /// Per benchmark with monitor data, its monitor keys over the runs of every session.
    monitors: Vec<BenchmarkMonitors>,
    /// Every configuration over time on each machine, as `vernier history` finds it with its
    /// defaults; the error's text when it cannot be computed (a value a ratio cannot use).
    history: Result<HistoryReport, String>,
    /// The series of `history` drawn: those with at least two sessions.
    histories: Vec<usize>,
    files: Vec<(String, File)>,
}

/// A benchmark's page: its name, file stem, which figures it has (a figure needs something to
/// draw: runs for the boxes, medians for the bars) and the swept numeric options with a median
/// to draw a line of.
struct Benchmark {
    name: String,
    stem: String,
    has_runs: bool,
    has_medians: bool,
    /// Whether a configuration recorded per-call times (the `syscall` benchmark).
    has_calls: bool,
    swept: Vec<String>,
}

/// The monitor keys of a benchmark's runs: a page per key that changed (its figure shared by
/// every session, so that a site's monitors grow with its benchmarks and keys, not with its
/// sessions).
struct BenchmarkMonitors {
    /// Index into `Site::benchmarks`.
    benchmark: usize,
    /// Every key that a measured run of the benchmark recorded, in any session, sorted.
    keys: Vec<RecordedKey>,
    /// The key a link to the benchmark's monitors opens: the first key monitor recorded that
    /// changed (context switches before CPU time), not the first by name, which is often a
    /// flat line; else the first that changed; else the first.
    shown: usize,
}

impl BenchmarkMonitors {
    /// The keys with a page: those that changed, or the one shown when none did.
    fn pages(&self) -> Vec<usize> {
        let drawn: Vec<usize> = (0..self.keys.len())
            .filter(|&k| self.keys[k].constant.is_none())
            .collect();
        if drawn.is_empty() {
            vec![self.shown]
        } else {
            drawn
        }
    }
}

/// What a path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum File {
    Marker,
    Css,
    Js,
    Favicon,
    Index,
    Benchmark(usize),
    BoxFigure(usize),
    BarsFigure(usize),
    CallsFigure(usize),
    /// Benchmark, swept option.
    LineFigure(usize, usize),
    Latency,
    LatencyFigure(usize),
    MaximaFigure(usize),
    /// Index into `Site::monitors`, key.
    Monitors(usize, usize),
    /// Index into `Site::monitors`, key.
    MonitorFigure(usize, usize),
    /// Index into `input.comparisons`.
    Compare(usize),
    /// Index into `input.comparisons`.
    ForestFigure(usize),
    Glossary,
    History,
    /// Index into `Site::histories`.
    HistoryFigure(usize),
    Environment,
    /// Index into `input.sessions`.
    Session(usize),
    /// Index into `input.sessions`: its runs as CSV.
    SessionCsv(usize),
    /// Index into `input.sessions`, position of the configuration in it: its flame graph.
    FlameFigure(usize, usize),
    /// Index into `input.comparisons`, index into its profiles: the differential flame graph.
    FlameDiffFigure(usize, usize),
    /// Index into `input.bisections`.
    Bisection(usize),
    /// Index into `input.bisections`: its levels by commit.
    BisectionFigure(usize),
}

impl Site {
    /// Analyses `input` and lists the site's files; nothing is drawn yet.
    pub fn new(input: Input) -> Result<Site, SiteError> {
        if input.sessions.is_empty() {
            return Err(SiteError::Empty);
        }
        let members = series_members(&input);
        let series = series(&input, &members);
        let mut benchmarks: Vec<Benchmark> = Vec::new();
        let mut latency: Vec<String> = Vec::new();
        for s in &series {
            for c in &s.summaries {
                if !benchmarks.iter().any(|b| b.name == c.benchmark) {
                    benchmarks.push(Benchmark {
                        name: c.benchmark.clone(),
                        stem: stem(benchmarks.len(), &c.benchmark),
                        has_runs: false,
                        has_medians: false,
                        has_calls: false,
                        swept: Vec::new(),
                    });
                }
                if c.latency.as_ref().is_some_and(|l| !l.threads.is_empty()) {
                    let label = c.label();
                    if !latency.contains(&label) {
                        latency.push(label);
                    }
                }
            }
        }
        for b in &mut benchmarks {
            let of = of_benchmark(&series, &b.name);
            let all = || of.iter().flat_map(|s| &s.summaries);
            b.has_runs = all().any(|c| !c.values.is_empty());
            b.has_medians = all().any(|c| c.median.is_some());
            b.has_calls = all().any(|c| c.calls.is_some());
            b.swept = vernier_plot::swept_options(&of)
                .into_iter()
                .filter(|o| {
                    all().any(|c| {
                        c.median.is_some()
                            && matches!(
                                c.options.get(o),
                                Some(OptionValue::UInt(_) | OptionValue::Float(_))
                            )
                    })
                })
                .collect();
        }
        let monitors: Vec<BenchmarkMonitors> = benchmarks
            .iter()
            .enumerate()
            .filter_map(|(b, bench)| {
                let keys = vernier_analysis::monitors::recorded_keys(
                    input
                        .sessions
                        .iter()
                        .flat_map(|s| &s.configurations)
                        .filter(|c| c.record.benchmark == bench.name),
                );
                let changed = |k: &&RecordedKey| k.constant.is_none();
                let shown = vernier_report::monitors::KEY_MONITORS
                    .iter()
                    .find_map(|m| keys.iter().position(|k| k.key == *m && changed(&k)))
                    .or_else(|| keys.iter().position(|k| changed(&k)))
                    .unwrap_or(0);
                (!keys.is_empty()).then_some(BenchmarkMonitors {
                    benchmark: b,
                    keys,
                    shown,
                })
            })
            .collect();

        let mut files = vec![
            (MARKER.to_string(), File::Marker),
            ("vernier.css".to_string(), File::Css),
            ("vernier.js".to_string(), File::Js),
            ("favicon.svg".to_string(), File::Favicon),
            ("index.html".to_string(), File::Index),
        ];
        for (i, b) in benchmarks.iter().enumerate() {
            files.push((format!("bench/{}.html", b.stem), File::Benchmark(i)));
            if b.has_runs {
                files.push((format!("bench/{}-box.svg", b.stem), File::BoxFigure(i)));
            }
            if b.has_medians {
                files.push((format!("bench/{}-bars.svg", b.stem), File::BarsFigure(i)));
            }
            if b.has_calls {
                files.push((format!("bench/{}-calls.svg", b.stem), File::CallsFigure(i)));
            }
            for o in 0..b.swept.len() {
                files.push((
                    format!("bench/{}-line-{o}.svg", b.stem),
                    File::LineFigure(i, o),
                ));
            }
        }
        if !latency.is_empty() {
            files.push(("latency.html".to_string(), File::Latency));
            for i in 0..latency.len() {
                files.push((format!("latency/{i}.svg"), File::LatencyFigure(i)));
            }
        }
        for (m, monitors) in monitors.iter().enumerate() {
            let stem = &benchmarks[monitors.benchmark].stem;
            // A key of one value in every run has neither page nor figure: every page of the
            // benchmark's monitors gives its value.
            for k in monitors.pages() {
                files.push((format!("monitors/{stem}/{k}.html"), File::Monitors(m, k)));
                if monitors.keys[k].constant.is_none() {
                    files.push((
                        format!("monitors/{stem}/{k}.svg"),
                        File::MonitorFigure(m, k),
                    ));
                }
            }
        }
        for (i, c) in input.comparisons.iter().enumerate() {
            files.push((compare_page(i), File::Compare(i)));
            if !c.report.comparisons.is_empty() {
                files.push((forest_path(i), File::ForestFigure(i)));
            }
            files.extend(pages::flame_diff_files(i, c));
        }
        files.extend(pages::flame_files(&input.sessions));
        let history =
            vernier_analysis::history(&input.sessions, &[], &HistorySettings::default(), &[])
                .map_err(|e| e.to_string());
        let histories: Vec<usize> = history.as_ref().map_or_else(
            |_| Vec::new(),
            |h| {
                (0..h.series.len())
                    .filter(|&i| h.series[i].points.len() >= 2)
                    .collect()
            },
        );
        if !histories.is_empty() || history.is_err() {
            files.push(("history.html".to_string(), File::History));
            for i in 0..histories.len() {
                files.push((format!("history/{i}.svg"), File::HistoryFigure(i)));
            }
        }
        for (i, st) in input.bisections.iter().enumerate() {
            files.push((pages::bisection_page(st), File::Bisection(i)));
            if !st.levels.is_empty() {
                files.push((pages::bisection_figure_path(st), File::BisectionFigure(i)));
            }
        }
        files.push(("environment.html".to_string(), File::Environment));
        files.push(("glossary.html".to_string(), File::Glossary));
        for (i, s) in input.sessions.iter().enumerate() {
            files.push((pages::session_page(s), File::Session(i)));
            files.push((pages::session_csv(s), File::SessionCsv(i)));
        }
        let mut site = Site {
            input,
            series,
            members: members.into_iter().map(|(_, m)| m).collect(),
            benchmarks,
            latency,
            monitors,
            history,
            histories,
            files,
        };
        // The interval maxima figures, after the latency figures.
        let at = site
            .files
            .iter()
            .rposition(|(_, f)| matches!(f, File::LatencyFigure(_)))
            .map_or(0, |i| i + 1);
        let maxima: Vec<(String, File)> = (0..site.latency.len())
            .filter(|&i| site.has_maxima(i))
            .map(|i| (format!("latency/{i}-maxima.svg"), File::MaximaFigure(i)))
            .collect();
        site.files.splice(at..at, maxima);
        Ok(site)
    }

    /// Every file of the site, by its path relative to the site's root (`/`-separated).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(p, _)| p.as_str())
    }

    /// The content of the file at `path`, `None` when the site has no such file. Pages are
    /// made by maud, figures are the SVG bytes of `vernier_plot` as they are: the one place
    /// where the site passes on markup it did not make.
    pub fn render(&self, path: &str) -> Option<Result<Vec<u8>, SiteError>> {
        let file = self.files.iter().find(|(p, _)| p == path)?.1;
        Some(self.render_file(path, file))
    }

    /// The media type of the file at `path`.
    pub fn content_type(path: &str) -> &'static str {
        match path.rsplit_once('.').map(|(_, e)| e) {
            Some("html") => "text/html; charset=utf-8",
            Some("css") => "text/css; charset=utf-8",
            Some("js") => "text/javascript; charset=utf-8",
            Some("svg") => "image/svg+xml",
            Some("csv") => "text/csv; charset=utf-8",
            _ => "text/plain; charset=utf-8",
        }
    }

    fn render_file(&self, path: &str, file: File) -> Result<Vec<u8>, SiteError> {
        let figure = |r: Result<Vec<u8>, PlotError>| {
            r.map_err(|source| SiteError::Figure {
                path: path.to_string(),
                source,
            })
        };
        Ok(match file {
            File::Marker => MARKER_TEXT.as_bytes().to_vec(),
            File::Css => html::CSS.as_bytes().to_vec(),
            File::Js => html::JS.as_bytes().to_vec(),
            File::Favicon => html::FAVICON.as_bytes().to_vec(),
            File::Index => pages::index(self).into_bytes(),
            File::Benchmark(b) => pages::benchmark(self, b).into_bytes(),
            File::BoxFigure(b) => figure(pages::box_figure(self, b))?,
            File::BarsFigure(b) => figure(pages::bars_figure(self, b))?,
            File::CallsFigure(b) => figure(pages::calls_figure(self, b))?,
            File::LineFigure(b, o) => figure(pages::line_figure(self, b, o))?,
            File::Latency => pages::latency(self).into_bytes(),
            File::LatencyFigure(i) => figure(pages::latency_figure(self, i))?,
            File::MaximaFigure(i) => figure(pages::maxima_figure(self, i))?,
            File::Monitors(m, k) => pages::monitors(self, m, k).into_bytes(),
            File::MonitorFigure(m, k) => figure(pages::monitor_figure(self, m, k))?,
            File::Compare(i) => pages::compare(self, i).into_bytes(),
            File::ForestFigure(i) => figure(pages::forest_figure(self, i))?,
            File::History => pages::history(self).into_bytes(),
            File::HistoryFigure(i) => figure(pages::history_figure(self, i))?,
            File::Environment => pages::environment(self).into_bytes(),
            File::Glossary => pages::glossary(self).into_bytes(),
            File::Session(i) => pages::session(self, i).into_bytes(),
            File::FlameFigure(s, c) => figure(pages::flame_figure(self, s, c))?,
            File::FlameDiffFigure(c, i) => figure(pages::flame_diff_figure(self, c, i))?,
            File::Bisection(i) => pages::bisection(self, i).into_bytes(),
            File::BisectionFigure(i) => figure(pages::bisection_figure(self, i))?,
            File::SessionCsv(i) => {
                pages::session_runs_csv(self, i).map_err(|reason| SiteError::Download {
                    path: path.to_string(),
                    reason,
                })?
            }
        })
    }

    /// Whether any series of latency configuration `i` has more than one interval maximum (a
    /// monitoring session, or several runs).
    fn has_maxima(&self, i: usize) -> bool {
        self.latency_of(i)
            .iter()
            .any(|(_, l)| l.interval_maxima.len() > 1)
    }

    /// The latency summaries of configuration label `latency[i]`, one per series that has it.
    fn latency_of(&self, i: usize) -> Vec<(String, vernier_analysis::LatencySummary)> {
        let label = &self.latency[i];
        self.series
            .iter()
            .flat_map(|s| {
                s.summaries
                    .iter()
                    .filter(|c| &c.label() == label)
                    .filter_map(|c| c.latency.clone())
                    .filter(|l| !l.threads.is_empty())
                    .map(|l| (s.name.clone(), l))
            })
            .collect()
    }

    /// The page of the benchmark named `name`, relative to the root.
    fn benchmark_page(&self, name: &str) -> Option<String> {
        self.benchmarks
            .iter()
            .find(|b| b.name == name)
            .map(|b| format!("bench/{}.html", b.stem))
    }

    /// The series restricted to benchmark `b`'s configurations.
    fn benchmark_series(&self, b: usize) -> Vec<Series> {
        of_benchmark(&self.series, &self.benchmarks[b].name)
    }
}

/// Every file of the site with its content, in [`Site::paths`] order.
pub fn build(input: Input) -> Result<Vec<(String, Vec<u8>)>, SiteError> {
    let site = Site::new(input)?;
    site.files
        .iter()
        .map(|(path, file)| Ok((path.clone(), site.render_file(path, *file)?)))
        .collect()
}

/// The series of `input` and their sessions (indices into `input.sessions`): one per
/// session, or one per value of the `group_by` tag (sessions without the tag form a series of
/// their own).
fn series_members(input: &Input) -> Vec<(String, Vec<usize>)> {
    let Some(key) = &input.group_by else {
        return input
            .sessions
            .iter()
            .enumerate()
            .map(|(i, s)| (session_name(s), vec![i]))
            .collect();
    };
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, s) in input.sessions.iter().enumerate() {
        let name = match s.info.tags.get(key) {
            Some(v) => format!("{key}={v}"),
            None => format!("no {key} tag"),
        };
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, members)) => members.push(i),
            None => groups.push((name, vec![i])),
        }
    }
    groups
}

/// The series of `input` ([`series_members`]), each summarized by `vernier_analysis` (a
/// series of several sessions pooled).
fn series(input: &Input, members: &[(String, Vec<usize>)]) -> Vec<Series> {
    members
        .iter()
        .map(|(name, members)| {
            let summaries = if let [one] = members.as_slice() {
                vernier_analysis::summarize_session(&input.sessions[*one])
            } else {
                let sessions: Vec<StoredSession> =
                    members.iter().map(|&i| input.sessions[i].clone()).collect();
                vernier_analysis::summarize_pooled(&sessions)
            };
            Series {
                name: name.clone(),
                summaries,
            }
        })
        .collect()
}

/// A session's name in legends: its short id and its tags.
fn session_name(s: &StoredSession) -> String {
    Series::session_name(&s.info)
}

/// `series` with only the configurations of `benchmark` (series without any left out).
fn of_benchmark(series: &[Series], benchmark: &str) -> Vec<Series> {
    series
        .iter()
        .filter_map(|s| {
            let summaries: Vec<ConfigSummary> = s
                .summaries
                .iter()
                .filter(|c| c.benchmark == benchmark)
                .cloned()
                .collect();
            (!summaries.is_empty()).then(|| Series {
                name: s.name.clone(),
                summaries,
            })
        })
        .collect()
}

/// A file stem for benchmark number `i` named `name`: its position keeps stems unique, and
/// only ASCII letters, digits, `-` and `_` of the name are kept, so no stored name can reach
/// outside the directory or need quoting in a URL.
fn stem(i: usize, name: &str) -> String {
    let clean: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(40)
        .collect();
    format!("{i}-{}", clean.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_keep_safe_characters_only() {
        assert_eq!(stem(3, "../Hack bench<x>"), "3-hackbenchx");
        assert_eq!(stem(0, ""), "0-");
    }
}
