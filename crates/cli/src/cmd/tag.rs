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
    // A tag to remove that none of the sessions carries is a mistake (a typo, the wrong
    // sessions), refused with nothing changed, as `git tag -d` refuses a tag that does not
    // exist; one that only some of them carry is said on the lines of the others.
    let before: Vec<_> = store
        .session_headers()?
        .into_iter()
        .filter(|s| ids.contains(&s.id))
        .collect();
    for key in &args.remove {
        if !before.iter().any(|s| s.tags.contains_key(key)) {
            bail!(
                "no tag '{}' to remove: {}; nothing was changed (`vernier sessions '{}'` lists \
                 their tags)",
                printable(key),
                match before.len() {
                    1 => "the selected session has none of that key".to_string(),
                    n => format!("none of the {n} selected sessions has one of that key"),
                },
                printable(&args.selector)
            );
        }
    }
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
        let absent: Vec<String> = args
            .remove
            .iter()
            .filter(|key| {
                before
                    .iter()
                    .any(|s| s.id == session.id && !s.tags.contains_key(*key))
            })
            .map(|key| format!("'{}'", printable(key)))
            .collect();
        let absent = if absent.is_empty() {
            String::new()
        } else {
            format!(" (it had no tag {} to remove)", absent.join(", "))
        };
        if tags.is_empty() {
            outln!("session {}: no tags{absent}", session.id);
        } else {
            outln!("session {}: {}{absent}", session.id, tags.join(" "));
        }
    }
    Ok(ExitCode::SUCCESS)
}
