//! `vernier compare BASE NEW`: the comparison of two result sets (docs/compare.md).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use vernier_analysis::{CompareSettings, DEFAULT_THRESHOLD};
use vernier_model::StoredSession;
use vernier_model::CONFIDENCE_LEVEL as LEVEL;
use vernier_report::compare::{csv, markdown, side_findings, table};
use vernier_store::{Load, Store};

use crate::cli::{CompareArgs, CompareFormat};
use crate::db;
use crate::out::{out, printable_lines};

pub fn compare(args: CompareArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let base = load_selected(&store, &args.base).context("BASE")?;
    let new = load_selected(&store, &args.new).context("NEW")?;
    let settings = CompareSettings {
        threshold: args.threshold.unwrap_or(DEFAULT_THRESHOLD),
        level: LEVEL,
    };
    // The stored session-to-session noise of the environments involved (`vernier calibrate`).
    let fingerprints: Vec<String> = base
        .iter()
        .chain(&new)
        .map(|s| s.info.fingerprint.clone())
        .collect();
    let calibrations = store
        .calibrations(&fingerprints)
        .context("cannot read the calibrations")?;
    let report = vernier_analysis::compare_calibrated(&base, &new, &settings, &calibrations)?;
    let text = match args.format {
        CompareFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
        CompareFormat::Table => table(&report),
        CompareFormat::Markdown => markdown(&report),
        CompareFormat::Csv => csv(&report)?,
    };
    match args.format {
        // Data formats escape in their own way (JSON strings, CSV quoting).
        CompareFormat::Json | CompareFormat::Csv => out!("{text}"),
        CompareFormat::Markdown => out!("{}", printable_lines(&text)),
        CompareFormat::Table => {
            let findings = side_findings("BASE", &base) + &side_findings("NEW", &new);
            out!("{}", printable_lines(&(text + &findings)));
        }
    }
    if args.fail_on_regression && report.has_regression() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn load_selected(store: &impl Store, selector: &str) -> Result<Vec<StoredSession>> {
    db::select(store, selector)?
        .into_iter()
        .map(|id| {
            store
                .load_session(id, Load::MEASUREMENTS)
                .with_context(|| format!("cannot load session {id}"))
        })
        .collect()
}
