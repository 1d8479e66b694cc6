//! `vernier report [SELECTOR...] -o DIR`: the results website as a directory
//! (`vernier_site`). The site is written into a new directory beside DIR and renamed into
//! place only when every file is written, so an error leaves DIR as it was. DIR may be new,
//! empty, or a previous report (it holds `vernier_site::MARKER`), which is replaced; any other
//! directory is refused, so that a mistyped path never loses files.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use uuid::Uuid;
use vernier_site::{Comparison, Input, MARKER, MARKER_TEXT};
use vernier_store::{Load, Store};

use crate::cli::{ReportArgs, SiteArgs};
use crate::db;
use crate::out::{outln, printable};

pub fn report(args: ReportArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let target = &args.output;
    let place = check_target(target)?;
    let store = db::open_for_reading(db_arg)?;
    let input = site_input(store.as_ref(), &args.site)?;
    let files = vernier_site::build(input)?;
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
    write_site(&place, &files)?;
    outln!(
        "wrote {} files ({:.1} MB) to {}; open {}",
        files.len(),
        bytes as f64 / 1e6,
        printable(&target.display().to_string()),
        printable(&target.join("index.html").display().to_string())
    );
    Ok(ExitCode::SUCCESS)
}

/// What the site shows: the selected sessions (every session without a selector) with all
/// their data, the kernel configurations they refer to, and the comparison.
pub fn site_input(store: &dyn Store, args: &SiteArgs) -> Result<Input> {
    let mut ids: Vec<Uuid> = Vec::new();
    if args.selectors.is_empty() {
        ids = store
            .session_headers()
            .context("cannot list the sessions")?
            .into_iter()
            .map(|h| h.id)
            .collect();
        if ids.is_empty() {
            bail!("the database holds no session yet; record one with `vernier run`");
        }
    }
    for selector in &args.selectors {
        for id in db::select(store, selector)? {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let mut sessions = ids
        .iter()
        .map(|&id| {
            store
                .load_session(id, Load::ALL)
                .with_context(|| format!("cannot load session {id}"))
        })
        .collect::<Result<Vec<_>>>()?;
    sessions.sort_by_key(|s| (s.info.started_at_ns, s.info.id));
    let mut kernel_configs = BTreeMap::new();
    for sha in sessions
        .iter()
        .filter_map(|s| s.info.environment.kernel_config_sha256.as_ref())
    {
        if !kernel_configs.contains_key(sha) {
            if let Some(text) = store.kernel_config(sha)? {
                kernel_configs.insert(sha.clone(), text);
            }
        }
    }
    let threshold = args
        .threshold
        .unwrap_or(vernier_analysis::DEFAULT_THRESHOLD);
    let ids = |sessions: &[vernier_model::StoredSession]| -> Vec<Uuid> {
        sessions.iter().map(|s| s.info.id).collect()
    };
    let comparisons = match args.compare.as_deref() {
        // --compare BASE NEW [NEW...]: each NEW against BASE, as `vernier compare BASE NEW`.
        Some([base, news @ ..]) => news
            .iter()
            .map(|new| {
                let (b, n, report) = db::compare_sides(store, base, new, threshold, None)?;
                Ok(Comparison {
                    base: base.clone(),
                    new: new.clone(),
                    report,
                    base_sessions: ids(&b),
                    new_sessions: ids(&n),
                })
            })
            .collect::<Result<Vec<_>>>()?,
        // Without --compare, the values of the tag that splits the sessions (--by's, or the
        // only one that differs: kernel=A, B, C), each against the oldest session's value.
        _ => match vernier_site::automatic_comparisons(&sessions, args.by.as_deref()) {
            Some((key, values)) => {
                let side = |value: &str| -> Vec<vernier_model::StoredSession> {
                    sessions
                        .iter()
                        .filter(|s| s.info.tags.get(&key).map(String::as_str) == Some(value))
                        .cloned()
                        .collect()
                };
                let b = side(&values[0]);
                values[1..]
                    .iter()
                    .map(|new| {
                        let n = side(new);
                        Ok(Comparison {
                            report: db::compare_loaded(store, &b, &n, threshold)?,
                            base: format!("{key}={}", values[0]),
                            new: format!("{key}={new}"),
                            base_sessions: ids(&b),
                            new_sessions: ids(&n),
                        })
                    })
                    .collect::<Result<Vec<_>>>()?
            }
            None => Vec::new(),
        },
    };
    if let Some(key) = &args.by {
        if !sessions.iter().any(|s| s.info.tags.contains_key(key)) {
            bail!(
                "--by '{}': no selected session carries that tag; `vernier sessions` lists the tags",
                printable(key)
            );
        }
    }
    // Every bisection of the database, with its measurements as `vernier bisect status`
    // reads them.
    let bisections = store
        .bisections()
        .context("cannot read the bisections")?
        .into_iter()
        .map(|b| {
            let id = b.id;
            vernier_app::bisect::state(store, b)
                .with_context(|| format!("cannot read the sessions of bisection {id}"))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Input {
        sessions,
        bisections,
        group_by: args.by.clone(),
        kernel_configs,
        comparisons,
    })
}

/// Refuses a target that is not new, empty or a previous report, or that cannot be replaced
/// (the current directory or one that holds it, `/`). Returns where the site goes, resolved
/// (`.` as its full path), so that the staging directory lands beside it, not inside it.
fn check_target(target: &Path) -> Result<PathBuf> {
    let shown = || printable(&target.display().to_string()).into_owned();
    let place = match fs::symlink_metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = parent_of(target);
            if !parent.is_dir() {
                bail!(
                    "cannot write the report to {}: the directory {} does not exist",
                    shown(),
                    printable(&parent.display().to_string())
                );
            }
            let Some(name) = target.file_name() else {
                bail!(
                    "cannot write the report to {}: it names no directory",
                    shown()
                );
            };
            fs::canonicalize(&parent)
                .with_context(|| format!("cannot read {}", parent.display()))?
                .join(name)
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", shown())),
        Ok(meta) if !meta.is_dir() => bail!(
            "{} exists and is not a directory; give a new or empty directory, or a previous \
             report to replace",
            shown()
        ),
        Ok(_) => {
            let empty = fs::read_dir(target)
                .with_context(|| format!("cannot read {}", shown()))?
                .next()
                .is_none();
            if !empty {
                if let Some(why) = not_a_report(target) {
                    bail!(
                        "{} is a directory that is neither empty nor a previous vernier report \
                         ({why}); give a new or empty directory",
                        shown()
                    );
                }
            }
            fs::canonicalize(target).with_context(|| format!("cannot read {}", shown()))?
        }
    };
    // A report is replaced by moving the old directory aside and a new one into its place:
    // the current directory (or one that holds it) would leave the shell that runs vernier in
    // a removed directory, and `/` cannot be moved.
    if place.parent().is_none() {
        bail!(
            "cannot write the report to {}: / cannot be replaced",
            shown()
        );
    }
    let here = std::env::current_dir()
        .ok()
        .and_then(|d| fs::canonicalize(d).ok());
    if here.is_some_and(|here| here.starts_with(&place)) {
        bail!(
            "cannot write the report to {}: it is the current directory or holds it, and \
             replacing it would leave this shell in a removed directory; run `vernier report` \
             from outside it (such as `cd .. && vernier report -o NAME`)",
            shown()
        );
    }
    Ok(place)
}

/// Why the directory `dir` is not a previous report, or `None` when it is one: it holds
/// [`MARKER`] with [`MARKER_TEXT`]. At most that many bytes are read, from a regular file
/// only (a FIFO or a device by that name would block or never end).
fn not_a_report(dir: &Path) -> Option<String> {
    use std::io::Read as _;
    let path = dir.join(MARKER);
    match fs::symlink_metadata(&path) {
        Err(_) => return Some(format!("it has no {MARKER}")),
        Ok(meta) if !meta.is_file() => return Some(format!("its {MARKER} is not a regular file")),
        Ok(meta) if meta.len() == 0 => {
            return Some(format!(
                "its {MARKER} is empty, where a report's says {:?}",
                MARKER_TEXT
            ))
        }
        Ok(_) => {}
    }
    let mut text = Vec::new();
    let read = fs::File::open(&path)
        .and_then(|f| f.take(MARKER_TEXT.len() as u64 + 1).read_to_end(&mut text));
    match read {
        Err(e) => Some(format!("its {MARKER} cannot be read: {e}")),
        Ok(_) if text == MARKER_TEXT.as_bytes() => None,
        Ok(_) => Some(format!(
            "its {MARKER} does not say {:?}, as a report's does",
            MARKER_TEXT
        )),
    }
}

fn parent_of(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `files` into a new directory beside `target`, then renames it to `target`; a
/// previous report there is moved aside first and removed after. On an error before the
/// rename, the new directory is removed and `target` is untouched.
fn write_site(target: &Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    let parent = parent_of(target);
    let staging = Staging::create(&parent, "new")?;
    for (path, bytes) in files {
        let file = staging.0.join(path);
        if let Some(dir) = file.parent() {
            fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        fs::write(&file, bytes).with_context(|| format!("cannot write {}", file.display()))?;
    }
    let old = if target.exists() {
        let aside = Staging::name(&parent, "old");
        fs::rename(target, &aside)
            .map_err(|e| in_use(e, target))
            .with_context(|| format!("cannot move the previous report {}", target.display()))?;
        Some(aside)
    } else {
        None
    };
    if let Err(e) = fs::rename(&staging.0, target) {
        // Put the previous report back; the new one is removed when `staging` drops.
        if let Some(old) = &old {
            let _ = fs::rename(old, target);
        }
        return Err(in_use(e, target))
            .with_context(|| format!("cannot rename the report to {}", target.display()));
    }
    std::mem::forget(staging);
    if let Some(old) = old {
        fs::remove_dir_all(&old)
            .with_context(|| format!("cannot remove the previous report {}", old.display()))?;
    }
    Ok(())
}

/// A rename's EBUSY said in words: the kernel refuses to move a mount point or a directory
/// in use as another process's root (rename(2)).
fn in_use(e: std::io::Error, target: &Path) -> anyhow::Error {
    if e.raw_os_error() == Some(libc::EBUSY) {
        anyhow::anyhow!(
            "{} is in use (a mount point, or in use by another process), so it cannot be \
             replaced; give another directory",
            target.display()
        )
    } else {
        e.into()
    }
}

/// A directory beside the target that is removed with everything in it when dropped, unless
/// it was renamed into place (and forgotten).
struct Staging(PathBuf);

impl Staging {
    /// A name in `parent` no other report writer uses: the process id and the time.
    fn name(parent: &Path, what: &str) -> PathBuf {
        let ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        parent.join(format!(
            ".vernier-report-{what}-{}-{ns}",
            std::process::id()
        ))
    }

    /// Creates the directory, with the mode any new directory gets (the umask's).
    fn create(parent: &Path, what: &str) -> Result<Staging> {
        let path = Staging::name(parent, what);
        fs::create_dir(&path)
            .with_context(|| format!("cannot create a directory in {}", parent.display()))?;
        Ok(Staging(path))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
