//! `vernier tag`: set or remove tags of stored sessions.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use vernier_model::check_user_text;

use crate::cli::TagArgs;
use crate::db;
use crate::out::{outln, printable};

pub fn tag(args: TagArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    // Everything given is checked before the database is opened.
    for (key, value) in &args.tags {
        check_user_text("tag key", key).map_err(anyhow::Error::msg)?;
        check_user_text("tag value", value).map_err(anyhow::Error::msg)?;
        if args.remove.contains(key) {
            bail!("tag '{key}' is both set and removed");
        }
    }
    for (i, (key, _)) in args.tags.iter().enumerate() {
        if args.tags[..i].iter().any(|(k, _)| k == key) {
            bail!("tag '{key}' is given twice");
        }
    }
    for key in &args.remove {
        check_user_text("tag key", key).map_err(anyhow::Error::msg)?;
        if key.trim().is_empty() {
            bail!("--remove needs a tag key");
        }
    }
    let mut store = db::open_existing_for_writing(db_arg)?;
    let ids = store.select(&args.selector)?;
    store.update_tags(&ids, &args.tags, &args.remove)?;
    for session in store
        .session_headers()?
        .iter()
        .filter(|s| ids.contains(&s.id))
    {
        let tags: Vec<String> = session
            .tags
            .iter()
            .map(|(k, v)| format!("{}={}", printable(k), printable(v)))
            .collect();
        if tags.is_empty() {
            outln!("session {}: no tags", session.id);
        } else {
            outln!("session {}: {}", session.id, tags.join(" "));
        }
    }
    Ok(ExitCode::SUCCESS)
}
