//! `vernier plot KIND SELECTOR... -o FILE`: one figure of stored results as SVG or PNG
//! (`vernier_plot`), its statistics from `vernier_analysis` as `show` and `compare` print them.
//! Everything is checked and drawn before the file is touched, so bad input leaves no file.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use uuid::Uuid;
use vernier_model::StoredSession;
use vernier_plot::{Format, Series, Size};
use vernier_store::{Histograms, Load, Store};

use crate::cli::{PlotArgs, PlotKind};
use crate::db;
use crate::out::printable;

pub fn plot(args: PlotArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let format = Format::from_file_name(&args.output.to_string_lossy())?;
    // The size given is checked before the database is read; one made taller for many panels
    // when the figure is drawn.
    let given = Size {
        width: args.width,
        height: args.height.unwrap_or(Size::default().height),
    };
    given.check(format)?;
    let size = |panels: usize| figure_size(&args, panels);
    let store = db::open_for_reading(db_arg)?;
    let bytes = match args.kind {
        PlotKind::Flame | PlotKind::FlameDiff => flame(store.as_ref(), &args, format)?,
        PlotKind::Box => {
            let series = series(store.as_ref(), &args, Load::MEASUREMENTS)?;
            let title = args
                .title
                .clone()
                .unwrap_or_else(|| default_title("runs", &series));
            let size = size(vernier_plot::slot_panels(&series));
            vernier_plot::box_plot(&series, &title, format, size)?
        }
        PlotKind::Bars => {
            let series = series(store.as_ref(), &args, Load::MEASUREMENTS)?;
            let title = args
                .title
                .clone()
                .unwrap_or_else(|| default_title("medians", &series));
            let size = size(vernier_plot::slot_panels(&series));
            vernier_plot::bars(&series, &title, format, size)?
        }
        PlotKind::Latency => {
            let series = series(store.as_ref(), &args, Load::DISTRIBUTIONS)?;
            let panels = latency_panels(&series);
            if panels.is_empty() {
                bail!(
                    "no latency histograms in the selected sessions; `latency` draws those of the \
                     latency benchmark and of imported cyclictest results"
                );
            }
            let title = args.title.clone().unwrap_or_else(|| {
                default_title("latency per CPU", &series).replacen("latency latency", "latency", 1)
            });
            vernier_plot::latency(&panels, &title, format, size(1))?
        }
        PlotKind::Histogram => {
            let series = series(store.as_ref(), &args, Load::DISTRIBUTIONS)?;
            let panels = vernier_plot::call_panels(&series);
            if panels.is_empty() {
                let latency = latency_panels(&series);
                if latency.is_empty() {
                    bail!(
                        "no distribution in the selected sessions; `histogram` draws the per-call \
                         times of syscall and the latency histograms of latency and of imported \
                         cyclictest results"
                    );
                }
                let title = args.title.clone().unwrap_or_else(|| {
                    default_title("latency per CPU", &series).replacen(
                        "latency latency",
                        "latency",
                        1,
                    )
                });
                vernier_plot::latency(&latency, &title, format, size(1))?
            } else {
                let title = args
                    .title
                    .clone()
                    .unwrap_or_else(|| default_title("per-call times", &series));
                let size = size(2 * panels.len());
                vernier_plot::calls(&panels, &title, format, size)?
            }
        }
        PlotKind::History => history_figure(store.as_ref(), &args, format, &size)?,
        PlotKind::Line => {
            let series = series(store.as_ref(), &args, Load::MEASUREMENTS)?;
            let option = match &args.option {
                Some(o) => o.clone(),
                None => swept_option(&series)?,
            };
            let title = args
                .title
                .clone()
                .unwrap_or_else(|| default_title(&format!("against {option}"), &series));
            let size = size(vernier_plot::line_panels(&series, &option));
            vernier_plot::line(&series, &option, &title, format, size)?
        }
        PlotKind::Forest => {
            let Some([base, new]) = args.compare.as_deref() else {
                bail!("forest needs --compare BASE NEW");
            };
            if !args.selectors.is_empty() {
                bail!("forest takes its sessions from --compare BASE NEW, not from SELECTORs");
            }
            let threshold = args
                .threshold
                .unwrap_or(vernier_analysis::DEFAULT_THRESHOLD);
            let report = db::compare_report(
                store.as_ref(),
                base,
                new,
                threshold,
                args.benchmark.as_deref(),
            )?;
            let title = args.title.clone().unwrap_or_else(|| {
                format!("{} vs {}: ratio NEW/BASE", printable(new), printable(base))
            });
            vernier_plot::forest(&report, &title, format, size(1))?
        }
        PlotKind::Monitor => {
            let Some(key) = &args.key else {
                bail!("monitor needs --key, a series as `vernier show --monitors` lists them");
            };
            let load = Load {
                runs: true,
                monitors: true,
                histograms: Histograms::No,
                profiles: false,
            };
            let mut traces = Vec::new();
            for (name, sessions) in self::sessions(store.as_ref(), &args.selectors, load)? {
                for session in &sessions {
                    for c in &session.configurations {
                        if args
                            .benchmark
                            .as_ref()
                            .is_some_and(|b| &c.record.benchmark != b)
                        {
                            continue;
                        }
                        let label = vernier_analysis::summarize(c, 1).label();
                        if let Some(t) =
                            vernier_plot::MonitorTrace::of(format!("{name}: {label}"), c, key)
                        {
                            traces.push(t);
                        }
                    }
                }
            }
            if traces.is_empty() {
                bail!(
                    "no run of the selected sessions recorded the series '{}'; \
                     `vernier show --monitors` lists the recorded ones",
                    printable(key)
                );
            }
            let title = args
                .title
                .clone()
                .unwrap_or_else(|| format!("{} during the runs", printable(key)));
            vernier_plot::monitor(
                &traces,
                key,
                &title,
                format,
                size(vernier_plot::monitor_grid(traces.len()).1),
            )?
        }
    };
    crate::out::stream_output(Some(&args.output), |w| {
        Ok(std::io::Write::write_all(w, &bytes)?)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `flame SELECTOR`: the flame graph of a configuration's profiled runs; `flame BASE NEW` or
/// `flame-diff BASE NEW`: NEW's, coloured by the change of each frame's share against BASE.
fn flame(store: &dyn Store, args: &PlotArgs, format: Format) -> Result<Vec<u8>> {
    if format != Format::Svg {
        bail!("a flame graph is an interactive SVG: give -o NAME.svg");
    }
    let load = Load {
        profiles: true,
        ..Load::MEASUREMENTS
    };
    let sides = sessions(store, &args.selectors, load)?;
    let width = Some(args.width);
    match (args.kind, sides.as_slice()) {
        (PlotKind::Flame, [(name, sessions)]) => {
            let (label, profiles) = profiled(name, sessions, args.benchmark.as_deref())?;
            let stacks = vernier_model::FoldedStacks::merged(profiles.iter().map(|p| &p.stacks));
            let title = args.title.clone().unwrap_or_else(|| {
                format!(
                    "{label}: {} ({} profiled runs)",
                    printable(name),
                    profiles.len()
                )
            });
            Ok(vernier_plot::flame_graph(
                &stacks,
                &title,
                &count_name(&profiles),
                width,
            )?)
        }
        (_, [(base_name, base), (new_name, new)]) => {
            let (base_label, base) = profiled(base_name, base, args.benchmark.as_deref())?;
            let (new_label, new) = profiled(new_name, new, args.benchmark.as_deref())?;
            if base_label != new_label {
                bail!(
                    "BASE's profiles are of {base_label}, NEW's of {new_label}: a differential                      flame graph compares one configuration; choose it with --benchmark"
                );
            }
            let merged = |p: &[vernier_model::ProfileRecord]| {
                vernier_model::FoldedStacks::merged(p.iter().map(|p| &p.stacks))
            };
            let title = args.title.clone().unwrap_or_else(|| {
                format!(
                    "{new_label}: {} against {}",
                    printable(new_name),
                    printable(base_name)
                )
            });
            Ok(vernier_plot::differential_flame_graph(
                &merged(&base),
                &merged(&new),
                &title,
                &count_name(&new),
                width,
            )?)
        }
        (PlotKind::Flame, _) => {
            bail!("flame takes one SELECTOR (a flame graph) or two, BASE NEW (a differential one)")
        }
        _ => bail!("flame-diff takes two SELECTORs: BASE NEW"),
    }
}

/// The one configuration of `sessions` with profiled runs (of `benchmark` when given), as its
/// label and its profiles.
fn profiled(
    name: &str,
    sessions: &[StoredSession],
    benchmark: Option<&str>,
) -> Result<(String, Vec<vernier_model::ProfileRecord>)> {
    let mut found: Vec<(String, Vec<vernier_model::ProfileRecord>)> = Vec::new();
    for c in sessions.iter().flat_map(|s| &s.configurations) {
        if c.profiles.is_empty() || benchmark.is_some_and(|b| c.record.benchmark != b) {
            continue;
        }
        let label = printable(&c.record.key().to_string()).into_owned();
        match found.iter_mut().find(|(l, _)| *l == label) {
            Some((_, profiles)) => profiles.extend(c.profiles.iter().cloned()),
            None => found.push((label, c.profiles.clone())),
        }
    }
    match found.len() {
        0 => bail!(
            "{}: no profiled runs{}; record some with `vernier run --profile`",
            printable(name),
            benchmark
                .map(|b| format!(" of benchmark '{}'", printable(b)))
                .unwrap_or_default()
        ),
        1 => Ok(found.remove(0)),
        _ => {
            let labels: Vec<&str> = found.iter().map(|(l, _)| l.as_str()).collect();
            bail!(
                "{}: profiles of {} configurations ({}); choose one with --benchmark",
                printable(name),
                labels.len(),
                labels.join(", ")
            )
        }
    }
}

/// What a flame graph's widths count: the events' weights.
fn count_name(profiles: &[vernier_model::ProfileRecord]) -> String {
    if profiles.iter().all(|p| p.event.starts_with("cpu-clock")) {
        "ns of CPU time".into()
    } else if profiles.iter().all(|p| p.event.starts_with("cycles")) {
        "cycles".into()
    } else {
        "samples".into()
    }
}

/// The figure's size for `panels` panels one above the other: `--height` when given (with a
/// warning when it leaves a panel less than its least readable height), else tall enough.
fn figure_size(args: &PlotArgs, panels: usize) -> Size {
    let Some(height) = args.height else {
        return Size::for_panels(args.width, panels);
    };
    let least = Size::least_height(panels);
    if height < least {
        eprintln!(
            "warning: --height {height} leaves less than {} pixels to each of {panels} \
             panel(s), so their labels may overlap; give at least --height {least} or leave it out",
            vernier_plot::MIN_PANEL_HEIGHT
        );
    }
    Size {
        width: args.width,
        height,
    }
}

/// The sessions of each selector, loaded with `load`, with the selector's series name.
fn sessions(
    store: &dyn Store,
    selectors: &[String],
    load: Load,
) -> Result<Vec<(String, Vec<StoredSession>)>> {
    if selectors.is_empty() {
        bail!("give at least one SELECTOR (a session id, `latest` or tags KEY=VALUE)");
    }
    selectors
        .iter()
        .map(|selector| {
            let ids = db::select(store, selector)?;
            let sessions = ids
                .iter()
                .map(|&id| {
                    store
                        .load_session(id, load)
                        .with_context(|| format!("cannot load session {id}"))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok((series_name(selector, &ids, &sessions), sessions))
        })
        .collect()
}

/// A tag selector names its series; a session by id or position is named by its short id and
/// its tags.
fn series_name(selector: &str, ids: &[Uuid], sessions: &[StoredSession]) -> String {
    if selector.contains('=') || ids.len() != 1 {
        return selector.to_string();
    }
    Series::session_name(&sessions[0].info)
}

/// One series per selector: the summaries of its sessions pooled, restricted to `--benchmark`.
fn series(store: &dyn Store, args: &PlotArgs, load: Load) -> Result<Vec<Series>> {
    let mut all = Vec::new();
    for (name, sessions) in sessions(store, &args.selectors, load)? {
        let mut summaries = vernier_analysis::summarize_pooled(&sessions);
        if let Some(b) = &args.benchmark {
            summaries.retain(|c| &c.benchmark == b);
        }
        all.push(Series { name, summaries });
    }
    if let Some(b) = &args.benchmark {
        if all.iter().all(|s| s.summaries.is_empty()) {
            bail!(
                "no configuration of benchmark '{}' in the selected sessions",
                printable(b)
            );
        }
    }
    Ok(all)
}

/// Per series and configuration with latency histograms, its panel: its name and summary.
fn latency_panels(series: &[Series]) -> Vec<(String, vernier_analysis::LatencySummary)> {
    let mut panels = Vec::new();
    for s in series {
        for c in &s.summaries {
            if let Some(latency) = &c.latency {
                panels.push((format!("{}: {}", s.name, c.label()), latency.clone()));
            }
        }
    }
    panels
}

/// The history of the one configuration of the selected sessions (of `--benchmark`), as
/// `vernier history` computes it with its defaults: the sessions of every selector together.
fn history_figure(
    store: &dyn Store,
    args: &PlotArgs,
    format: Format,
    size: &dyn Fn(usize) -> Size,
) -> Result<Vec<u8>> {
    let mut sessions: Vec<StoredSession> = Vec::new();
    for (_, selected) in self::sessions(store, &args.selectors, Load::MEASUREMENTS)? {
        for s in selected {
            if !sessions.iter().any(|x| x.info.id == s.info.id) {
                sessions.push(s);
            }
        }
    }
    let calibrations = crate::db::calibrations_of(store, &sessions)?;
    let settings = vernier_analysis::HistorySettings::default();
    let report = vernier_analysis::history(&sessions, &[], &settings, &calibrations)?;
    let series: Vec<&vernier_analysis::HistorySeries> = report
        .series
        .iter()
        .filter(|s| args.benchmark.as_ref().is_none_or(|b| &s.benchmark == b))
        .collect();
    let one = match series.as_slice() {
        [one] => *one,
        [] => bail!(
            "no configuration of the selected sessions has a history{}; `vernier history` \
             lists them",
            args.benchmark
                .as_ref()
                .map(|b| format!(" in benchmark '{}'", printable(b)))
                .unwrap_or_default()
        ),
        more => bail!(
            "the selected sessions have {} histories ({}); select the sessions of one \
             configuration, or one benchmark with --benchmark",
            more.len(),
            more.iter()
                .take(5)
                .map(|s| format!("{} on {}", printable(&s.label()), printable(&s.host)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("{} on {}: session medians over time", one.label(), one.host));
    let size = Size {
        width: size(1)
            .width
            .max((400 + 24 * one.points.len() as u32).min(6000)),
        height: size(1).height,
    };
    Ok(vernier_plot::history(one, &title, format, size)?)
}

/// The one numeric option whose value differs between configurations of a benchmark.
fn swept_option(series: &[Series]) -> Result<String> {
    let swept = vernier_plot::swept_options(series);
    match swept.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("no numeric option takes several values in the selected sessions; a line needs a sweep such as hackbench:groups=1,2,4,8"),
        more => bail!(
            "several options are swept ({}); name the x axis with --option",
            more.join(", ")
        ),
    }
}

/// `what of benchmark[, benchmark...]: series, series`.
fn default_title(what: &str, series: &[Series]) -> String {
    let mut benchmarks: Vec<&str> = Vec::new();
    for c in series.iter().flat_map(|s| &s.summaries) {
        if !benchmarks.contains(&c.benchmark.as_str()) {
            benchmarks.push(&c.benchmark);
        }
    }
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    format!("{} {what}: {}", benchmarks.join(", "), names.join(" vs "))
}
