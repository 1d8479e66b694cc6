//! `vernier export`: sessions with their environment, configurations and every run, as the
//! versioned JSON document of docs/export-format.md, or as CSV with one row per run
//! (`vernier_formats::export::writer`). Sessions are loaded one at a time while the output is
//! written.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_formats::export::writer;
use vernier_store::Load;

use crate::cli::{ExportArgs, ExportFormat};
use crate::db;

pub fn export(args: ExportArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let ids = if args.selectors.is_empty() {
        store.session_headers()?.into_iter().map(|s| s.id).collect()
    } else {
        db::select_all(store.as_ref(), &args.selectors)?
    };
    // CSV has one row of measurements per run; the JSON document holds everything.
    let all = |id| store.load_session(id, Load::ALL);
    let measurements = |id| store.load_session(id, Load::MEASUREMENTS);
    crate::out::stream_output(args.output.as_deref(), |out| {
        match args.format {
            ExportFormat::Json => writer::json(out, &ids, all, |sha| store.kernel_config(sha))?,
            ExportFormat::Csv => writer::csv(out, &ids, measurements)?,
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
