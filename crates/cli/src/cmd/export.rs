//! `vernier export`: sessions with their environment, configurations and every run, as the
//! versioned JSON document of docs/export-format.md, or as CSV with one row per run
//! (`vernier_formats::export::writer`). Sessions are loaded one at a time while the output is
//! written, and in the JSON document each configuration's runs page by page.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_formats::export::writer;
use vernier_model::RunRecord;
use vernier_store::{Load, StoreError};

use crate::cli::{ExportArgs, ExportFormat};
use crate::db;

/// How many runs of a configuration an export reads at once: some 2 MB of a run of one value,
/// more with monitor data.
const RUNS_PER_PAGE: usize = 5_000;

pub fn export(args: ExportArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let ids = if args.selectors.is_empty() {
        store.session_headers()?.into_iter().map(|s| s.id).collect()
    } else {
        db::select_all(store.as_ref(), &args.selectors)?
    };
    // CSV has one row of measurements per run; the JSON document holds everything, each
    // session's runs read page by page while they are written.
    let header = |id| {
        store.load_session(
            id,
            Load {
                profiles: true,
                ..Load::INFO
            },
        )
    };
    let runs = |session, configuration, each: &mut dyn FnMut(Vec<RunRecord>) -> bool| {
        store.for_each_run_page(
            session,
            configuration,
            Load::ALL,
            RUNS_PER_PAGE,
            &mut |page| match each(page) {
                true => Ok(()),
                // The writer reports its own error, not this one.
                false => Err(StoreError::Invalid("the output failed".to_string())),
            },
        )
    };
    let measurements = |id| store.load_session(id, Load::MEASUREMENTS);
    crate::out::stream_output(args.output.as_deref(), |out| {
        match args.format {
            ExportFormat::Json => {
                writer::json_in_pages(out, &ids, header, runs, |sha| store.kernel_config(sha))?
            }
            ExportFormat::Csv => writer::csv(out, &ids, measurements)?,
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
