//! `vernier merge A.db B.db... (-o NEW.db | --into EXISTING.db)`: the sessions of databases
//! from several machines in one database.
//!
//! Every session keeps its ids (session, configurations, runs), so nothing is renumbered and
//! nothing is stored twice: a session found in several inputs (a machine that also synced to
//! another) is stored once, and one id with two different contents is refused, naming the
//! first difference, before anything is stored (`vernier_store::check_merge`). Sessions are
//! copied as `sync` copies them, part by part, a transaction per part
//! (`vernier_store::merge_sessions`): a merge stopped midway keeps what it stored, and the same
//! merge run again resumes it, storing each run once. `-o` writes a new file, built beside it
//! as `.NAME.merging` and moved into place when complete, so an existing file is never
//! overwritten; a merge stopped midway leaves that file for the same command to resume
//! (one that stored nothing leaves none). `--into` adds to an existing vernier database.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use vernier_model::text::plural;
use vernier_store::Store;

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
    let readers: Vec<&dyn Store> = inputs.iter().map(|input| input.as_ref()).collect();
    let merged = vernier_store::merge_sessions(&readers, store.as_mut(), |_, _| {});
    let reports = match merged {
        Ok(reports) => reports,
        Err(e) => {
            let kept = partial
                .as_ref()
                .is_some_and(|_| store.session_headers().is_ok_and(|held| !held.is_empty()));
            drop(store);
            let error = anyhow::Error::new(e).context("cannot merge");
            return Err(match (partial, kept) {
                (Some(partial), true) => {
                    let kept = partial.keep();
                    error.context(format!(
                        "the sessions merged so far are kept in {}; run the same merge again \
                         to resume it, or remove that file",
                        kept.display()
                    ))
                }
                _ => error,
            });
        }
    };
    drop(store);
    if let Some(partial) = partial {
        partial.publish(output)?;
    }
    let mut added = 0;
    for (path, report) in args.inputs.iter().zip(&reports) {
        added += report.copied + report.extended;
        outln!(
            "{}: {} merged, {} already present, {} still running (not merged)",
            path.display(),
            plural(report.copied + report.extended, "session"),
            report.present,
            report.running
        );
    }
    outln!("{}: {} added", output.display(), plural(added, "session"));
    Ok(ExitCode::SUCCESS)
}

/// A database being built under a temporary name beside its final path (the same for every
/// merge to that path, so that a merge run again finds what a stopped one stored), removed
/// (with SQLite's `-wal` and `-shm` files) unless [`PartialFile::publish`] moved it into place
/// or [`PartialFile::keep`] kept it.
struct PartialFile {
    path: PathBuf,
    /// Whether the file is no longer removed when dropped: published, or kept to be resumed.
    settled: bool,
}

impl PartialFile {
    fn beside(output: &Path) -> Self {
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = output.with_file_name(format!(".{name}.merging"));
        PartialFile {
            path,
            settled: false,
        }
    }

    /// Leaves the file in place (a merge stopped midway, resumed by the same merge again);
    /// returns its path.
    fn keep(mut self) -> PathBuf {
        self.settled = true;
        std::mem::take(&mut self.path)
    }

    /// Gives the complete file its final name. A hard link, not a rename: it fails when the
    /// name was taken meanwhile, so no file is ever overwritten.
    fn publish(mut self, output: &Path) -> Result<()> {
        std::fs::hard_link(&self.path, output)
            .with_context(|| format!("cannot create {}", output.display()))?;
        self.settled = true;
        std::fs::remove_file(&self.path)
            .with_context(|| format!("cannot remove {}", self.path.display()))
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = self.path.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(name));
        }
    }
}
