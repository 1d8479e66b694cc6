//! `vernier merge A.db B.db... (-o NEW.db | --into EXISTING.db)`: the sessions of databases
//! from several machines in one database.
//!
//! Every session keeps its ids (session, configurations, runs), so nothing is renumbered and
//! nothing is stored twice: a session found in several inputs (a machine that also synced to
//! another) is stored once, and one id with two different contents is refused, naming the
//! first difference. All inputs go in one transaction: the output gets every session or none.
//! `-o` writes a new file, built beside it under a temporary name and moved into place when
//! complete, so an existing file is never overwritten and a failed merge leaves no file;
//! `--into` adds to an existing vernier database.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use vernier_model::text::plural;
use vernier_model::SessionStatus;

use crate::cli::MergeArgs;
use crate::db;
use crate::out::outln;

pub fn merge(args: MergeArgs) -> Result<ExitCode> {
    let (output, new) = match (&args.output, &args.into) {
        (Some(path), None) => (path, true),
        (None, Some(path)) => (path, false),
        _ => bail!("give the merged database as -o NEW.db (a new file) or --into EXISTING.db"),
    };
    let output_location = db::parse(output)?;
    if new {
        db::check_copy_target("-o", &output_location)?;
    }
    if new && output.exists() {
        bail!(
            "{} exists; merge into it with --into {}, or give -o a new file",
            output.display(),
            output.display()
        );
    }
    for input in &args.inputs {
        if db::same_database(&db::parse(input)?, &output_location) {
            bail!(
                "{} is both an input and the output; give the output another name",
                input.display()
            );
        }
    }
    let inputs = args
        .inputs
        .iter()
        .map(|path| db::open_for_reading(Some(path)))
        .collect::<Result<Vec<_>>>()?;

    let partial = new.then(|| PartialFile::beside(output));
    let write_to = partial
        .as_ref()
        .map_or(output.as_path(), |p| p.path.as_path());
    let mut store = if new {
        db::open_for_writing(Some(write_to))?
    } else {
        db::open_existing_for_writing(Some(write_to))?
    };
    let mut lines = Vec::new();
    let mut import = store.importer(0)?;
    for (path, input) in args.inputs.iter().zip(&inputs) {
        let before = import.report();
        let mut running = 0;
        for header in input.session_headers()? {
            if header.status == SessionStatus::Running {
                running += 1;
                continue;
            }
            vernier_store::copy_session(input.as_ref(), import.as_mut(), header.id)
                .with_context(|| format!("cannot merge {}", path.display()))?;
        }
        let after = import.report();
        lines.push(format!(
            "{}: {} merged, {} already present, {} still running (not merged)",
            path.display(),
            plural(after.imported - before.imported, "session"),
            after.skipped - before.skipped,
            running
        ));
    }
    let report = import.commit()?;
    drop(store);
    if let Some(partial) = partial {
        partial.publish(output)?;
    }
    for line in lines {
        outln!("{line}");
    }
    outln!(
        "{}: {} added",
        output.display(),
        plural(report.imported, "session")
    );
    Ok(ExitCode::SUCCESS)
}

/// A database being built under a temporary name beside its final path, removed (with SQLite's
/// `-wal` and `-shm` files) unless [`PartialFile::publish`] moved it into place.
struct PartialFile {
    path: PathBuf,
    published: bool,
}

impl PartialFile {
    fn beside(output: &Path) -> Self {
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = output.with_file_name(format!(".{name}.merging-{}", std::process::id()));
        PartialFile {
            path,
            published: false,
        }
    }

    /// Gives the complete file its final name. A hard link, not a rename: it fails when the
    /// name was taken meanwhile, so no file is ever overwritten.
    fn publish(mut self, output: &Path) -> Result<()> {
        std::fs::hard_link(&self.path, output)
            .with_context(|| format!("cannot create {}", output.display()))?;
        self.published = true;
        std::fs::remove_file(&self.path)
            .with_context(|| format!("cannot remove {}", self.path.display()))
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if self.published {
            return;
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = self.path.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(name));
        }
    }
}
