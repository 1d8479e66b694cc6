//! `vernier export`: sessions with their environment, configurations and every run, as the
//! versioned JSON document of docs/export-format.md, or as CSV with one row per run
//! (`vernier_report::export::writer`). Sessions are loaded one at a time while the output is
//! written.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_report::export::writer;
use vernier_store::Store;

use crate::cli::{ExportArgs, ExportFormat};
use crate::db;

pub fn export(args: ExportArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let ids = match &args.selector {
        Some(selector) => db::select(&store, selector)?,
        None => store.sessions()?.into_iter().map(|s| s.id).collect(),
    };
    let load = |id| store.load_session(id);
    crate::out::stream_output(args.output.as_deref(), |out| {
        match args.format {
            ExportFormat::Json => writer::json(out, &ids, load, |sha| store.kernel_config(sha))?,
            ExportFormat::Csv => writer::csv(out, &ids, load)?,
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
