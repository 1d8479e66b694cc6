//! `vernier note`: set or clear the note of stored sessions.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use vernier_model::check_user_text;

use crate::cli::NoteArgs;
use crate::db;
use crate::out::outln;

pub fn note(args: NoteArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    check_user_text("note", &args.text).map_err(anyhow::Error::msg)?;
    let note = Some(args.text.trim()).filter(|t| !t.is_empty());
    let mut store = db::open_existing_for_writing(db_arg)?;
    let ids = store.select(&args.selector)?;
    store.set_note(&ids, note)?;
    let done = if note.is_some() {
        "note set"
    } else {
        "note removed"
    };
    for id in ids {
        outln!("session {id}: {done}");
    }
    Ok(ExitCode::SUCCESS)
}
