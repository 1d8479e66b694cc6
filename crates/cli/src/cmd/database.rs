//! `vernier db migrate`: brings the database's schema to this vernier's version, explicitly.
//! A PostgreSQL database shared by a farm is never migrated as a side effect of a run or a
//! sync, which would lock every machine not yet upgraded out of it (docs/farm.md, "Upgrading
//! a farm").

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::DbCommand;
use crate::db;
use crate::out::outln;

pub fn database(command: DbCommand, db_arg: Option<&Path>) -> Result<ExitCode> {
    match command {
        DbCommand::Migrate => migrate(db_arg),
    }
}

fn migrate(db_arg: Option<&Path>) -> Result<ExitCode> {
    let location = db::location(db_arg)?;
    let before = vernier_store::migrate(&location)
        .map_err(|e| anyhow::Error::new(e).context(format!("cannot migrate {location}")))?;
    let now = vernier_store::SCHEMA_VERSION;
    match before {
        Some(0) => outln!("{location}: created vernier's tables at schema version {now}"),
        Some(v) if v == now => outln!("{location}: already at schema version {now}"),
        Some(v) => outln!("{location}: migrated from schema version {v} to {now}"),
        None => outln!("{location}: at schema version {now}"),
    }
    Ok(ExitCode::SUCCESS)
}
