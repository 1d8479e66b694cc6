//! `vernier history [SELECTOR|SPEC...]`: results over time per configuration and machine, with
//! their change points (docs/history.md).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use uuid::Uuid;
use vernier_analysis::{CompareSettings, ConfigFilter, HistorySettings, DEFAULT_THRESHOLD};
use vernier_engine::plan::configuration_options;
use vernier_engine::spec::{expand, parse_benchmark_spec};
use vernier_model::{BenchmarkInfo, OptionValue, StoredSession, CONFIDENCE_LEVEL};
use vernier_report::history::{markdown, table};
use vernier_stats::ChangePointSettings;
use vernier_store::{Load, Store};

use crate::cli::{HistoryArgs, HistoryFormat};
use crate::db;
use crate::out::{local_time, out, printable_lines};

pub fn history(args: HistoryArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    // The user's own benchmarks are SPECs too.
    let benchmarks = vernier_app::config::benchmark_infos(&args.args)?;
    let mut selectors = Vec::new();
    let mut filters = Vec::new();
    for arg in &args.args {
        match spec_name(arg, &benchmarks) {
            Some(info) => filters.push(filter(arg, info)?),
            None => selectors.push(arg.as_str()),
        }
    }
    let store = db::open_for_reading(db_arg)?;
    let baseline = match &args.baseline {
        Some(selector) => Some(db::select(store.as_ref(), selector)?),
        None => None,
    };
    let settings = HistorySettings {
        compare: CompareSettings {
            threshold: args.threshold.unwrap_or(DEFAULT_THRESHOLD),
            level: CONFIDENCE_LEVEL,
        },
        detection: ChangePointSettings {
            window_len: args.window as usize,
            max_pvalue: args.max_pvalue,
            min_magnitude: 0.0,
        },
        baseline,
    };
    let sessions = load(
        store.as_ref(),
        &selectors,
        settings.baseline.as_deref().unwrap_or_default(),
    )?;
    let calibrations = crate::db::calibrations_of(store.as_ref(), &sessions)?;
    let report = vernier_analysis::history(&sessions, &filters, &settings, &calibrations)?;
    if report.series.is_empty() && !filters.is_empty() {
        anyhow::bail!(
            "no configuration of the selected sessions matches {}; `vernier show` lists a \
             session's configurations",
            args.args
                .iter()
                .filter(|a| spec_name(a, &benchmarks).is_some())
                .map(|a| format!("'{a}'"))
                .collect::<Vec<_>>()
                .join(" or ")
        );
    }
    match args.format {
        HistoryFormat::Json => out!("{}\n", serde_json::to_string_pretty(&report)?),
        HistoryFormat::Table => out!("{}", printable_lines(&table(&report, &local_time))),
        HistoryFormat::Markdown => out!("{}", printable_lines(&markdown(&report, &local_time))),
    }
    if args.fail_on_regression && report.has_regression() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The benchmark an argument names when it is a SPEC: a spec whose name is a known benchmark.
/// Selectors never parse as one (`kernel=A` is no name; `latest` and session ids are no
/// benchmark).
fn spec_name<'a>(arg: &str, benchmarks: &'a [BenchmarkInfo]) -> Option<&'a BenchmarkInfo> {
    let name = arg.split(':').next().unwrap_or_default().trim();
    benchmarks.iter().find(|b| b.name() == name)
}

/// The configurations a SPEC names: its benchmark, and each option given with the values of
/// its list, parsed by the function `vernier run` plans with (so `interval=1ms` matches a
/// stored 1000).
pub(crate) fn filter(text: &str, info: &BenchmarkInfo) -> Result<ConfigFilter> {
    let spec = parse_benchmark_spec(text)?;
    let mut options: Vec<(String, Vec<OptionValue>)> = Vec::new();
    for combo in expand(&spec) {
        // Only the options given filter; the others match any value.
        let resolved = configuration_options(info, &combo, 0)?;
        for (name, _) in combo {
            let Some(value) = resolved.get(&name).cloned() else {
                continue;
            };
            match options.iter_mut().find(|(n, _)| *n == name) {
                Some((_, values)) if !values.contains(&value) => values.push(value),
                Some(_) => {}
                None => options.push((name, vec![value])),
            }
        }
    }
    Ok(ConfigFilter {
        benchmark: info.name().to_string(),
        options,
    })
}

/// The sessions the selectors name together (each once, oldest first), or every session; and
/// the baseline's, which the series need to be measured against.
fn load(store: &dyn Store, selectors: &[&str], baseline: &[Uuid]) -> Result<Vec<StoredSession>> {
    let mut ids: Vec<Uuid> = Vec::new();
    if selectors.is_empty() {
        ids = store.session_headers()?.iter().map(|s| s.id).collect();
    }
    for id in baseline {
        if !ids.contains(id) {
            ids.push(*id);
        }
    }
    for selector in selectors {
        for id in db::select(store, selector)? {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    if ids.is_empty() {
        anyhow::bail!("no sessions stored; `vernier run` or `vernier import` stores some");
    }
    ids.iter()
        .map(|&id| {
            store
                .load_session(id, Load::MEASUREMENTS)
                .with_context(|| format!("cannot load session {id}"))
        })
        .collect()
}
