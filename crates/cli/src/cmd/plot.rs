//! `vernier plot KIND SELECTOR... -o FILE`: one figure of stored results as SVG or PNG
//! (`vernier_plot`), its statistics from `vernier_analysis` as `show` and `compare` print them.
//! Everything is checked and drawn before the file is touched, so bad input leaves no file.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use uuid::Uuid;
use vernier_model::StoredSession;
use vernier_plot::{Format, Series, Size};
use vernier_store::{Load, Store};

use crate::cli::{PlotArgs, PlotKind};
use crate::db;
use crate::out::printable;

pub fn plot(args: PlotArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let format = Format::from_file_name(&args.output.to_string_lossy())?;
    let size = Size {
        width: args.width,
        height: args.height,
    };
    let store = db::open_for_reading(db_arg)?;
    let bytes = match args.kind {
        PlotKind::Box => {
            let series = series(&store, &args, Load::MEASUREMENTS)?;
            let title = args
                .title
                .clone()
                .unwrap_or_else(|| default_title("runs", &series));
            vernier_plot::box_plot(&series, &title, format, size)?
        }
    };
    crate::out::stream_output(Some(&args.output), |w| {
        Ok(std::io::Write::write_all(w, &bytes)?)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The sessions of each selector, loaded with `load`, with the selector's series name.
fn sessions(
    store: &impl Store,
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
    let short: String = ids[0].to_string().chars().take(8).collect();
    let tags: Vec<String> = sessions[0]
        .info
        .tags
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if tags.is_empty() {
        short
    } else {
        format!("{short} {}", tags.join(","))
    }
}

/// One series per selector: the summaries of its sessions pooled, restricted to `--benchmark`.
fn series(store: &impl Store, args: &PlotArgs, load: Load) -> Result<Vec<Series>> {
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
