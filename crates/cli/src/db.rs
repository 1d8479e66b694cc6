//! Where the database is, opening it with context for the user, and the sessions a selector
//! names.

use std::path::Path;

use anyhow::{bail, Context, Result};
use uuid::Uuid;
use vernier_store::{Access, Location, Store};

/// `--db`/`VERNIER_DB`: an SQLite file or a `postgres://` (or `postgresql://`) URL; else the
/// file `$XDG_DATA_HOME/vernier/vernier.db` (`~/.local/share/...`).
pub fn location(explicit: Option<&Path>) -> Result<Location> {
    if let Some(p) = explicit {
        return parse(p);
    }
    let data = dirs::data_dir()
        .context("cannot find the data directory (set HOME or XDG_DATA_HOME, or give --db)")?;
    Ok(Location::File(data.join("vernier").join("vernier.db")))
}

/// A database named on the command line (`--db`, `VERNIER_DB`, `sync --to`, `merge`'s files,
/// `schedule --sync`): what looks like a URL of a scheme vernier does not support is refused
/// (`Location::parse`).
pub fn parse(value: &Path) -> Result<Location> {
    Ok(Location::parse(value)?)
}

/// Opens the database at `--db` for `access`: the one way every command opens it.
pub fn open(explicit: Option<&Path>, access: Access) -> Result<Box<dyn Store>> {
    Ok(vernier_app::database::open(&location(explicit)?, access)?)
}

/// Opens the database for recording, creating it (or, in PostgreSQL, its tables) if needed.
pub fn open_for_writing(explicit: Option<&Path>) -> Result<Box<dyn Store>> {
    open(explicit, Access::Create)
}

/// Opens an existing database to change what it holds (tags, notes, deletion): a missing file
/// is an error, never a new empty database.
pub fn open_existing_for_writing(explicit: Option<&Path>) -> Result<Box<dyn Store>> {
    open(explicit, Access::Write)
}

/// Opens an existing database for reading only: nothing is written to it or next to it
/// (`show`, `sessions`, `compare`, `env`, `export`).
pub fn open_for_reading(explicit: Option<&Path>) -> Result<Box<dyn Store>> {
    open(explicit, Access::Read)
}

/// Whether two locations name one database: files that are the same after resolving links (or
/// the same text), or the same PostgreSQL URL.
pub fn same_database(a: &Location, b: &Location) -> bool {
    match (a, b) {
        (Location::File(a), Location::File(b)) => match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        },
        _ => a == b,
    }
}

/// Checks where a command writes a copy of sessions as a new SQLite file (`sync --to`, `merge
/// -o`): a file's path (not ending in `/`) in a directory that exists. A copy is never put in a
/// directory made on the way, which a mistyped path or a network share not mounted would
/// otherwise get silently. `option` names the path in the message.
pub fn check_copy_target(option: &str, location: &Location) -> Result<()> {
    let Location::File(path) = location else {
        return Ok(());
    };
    let shown = crate::out::printable(&path.display().to_string()).into_owned();
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        bail!(
            "{option} {shown}: a directory's name (it ends with '/'); give the database file's \
             path, such as {shown}vernier.db"
        );
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            bail!(
                "{option} {shown}: the directory {} does not exist; create it first or give \
                 another path",
                crate::out::printable(&parent.display().to_string())
            );
        }
    }
    Ok(())
}

/// The sessions a selector names (the grammar of [`Store::select`]): tags
/// `key=value[,key=value...]` select every session carrying all of them, oldest first; a session
/// id, prefix, `latest` or `latest~N` one session.
pub fn select(store: &dyn Store, selector: &str) -> Result<Vec<Uuid>> {
    Ok(store.select(selector)?)
}

/// The sessions that any of `selectors` names, each once, in the order they are first named
/// (`export kernel=A kernel=B`, as `report` and `plot` join theirs).
pub fn select_all(store: &dyn Store, selectors: &[String]) -> Result<Vec<Uuid>> {
    let mut ids = Vec::new();
    for selector in selectors {
        for id in select(store, selector)? {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    Ok(ids)
}

/// The one session a selector names, for commands that show one (`show`, `env`): tags that
/// select several sessions are an error listing how many.
pub fn resolve_one(store: &dyn Store, selector: &str) -> Result<Uuid> {
    match select(store, selector)?.as_slice() {
        [id] => Ok(*id),
        ids => bail!(
            "'{}' matches {} sessions; give one session's id (see `vernier sessions '{}'`) or \
             more tags",
            crate::out::printable(selector),
            ids.len(),
            crate::out::printable(selector)
        ),
    }
}

/// The comparison `vernier compare BASE NEW` prints, with the stored calibrations, restricted
/// to one benchmark's configurations when `benchmark` is given (`plot forest`, `report`).
pub fn compare_report(
    store: &dyn Store,
    base: &str,
    new: &str,
    threshold: f64,
    benchmark: Option<&str>,
) -> Result<vernier_analysis::CompareReport> {
    Ok(compare_sides(store, base, new, threshold, benchmark)?.2)
}

/// The sessions of BASE and NEW (loaded with their measurements, `benchmark`'s configurations
/// only when given) and their comparison with the stored calibrations of their environments'
/// session-to-session noise (`vernier calibrate`).
pub fn compare_sides(
    store: &dyn Store,
    base: &str,
    new: &str,
    threshold: f64,
    benchmark: Option<&str>,
) -> Result<(
    Vec<vernier_model::StoredSession>,
    Vec<vernier_model::StoredSession>,
    vernier_analysis::CompareReport,
)> {
    let load = |selector: &str| -> Result<Vec<vernier_model::StoredSession>> {
        select(store, selector)?
            .into_iter()
            .map(|id| {
                store
                    .load_session(
                        id,
                        vernier_store::Load {
                            profiles: true,
                            // Monitor counters per unit of work beside the verdicts.
                            monitors: true,
                            ..vernier_store::Load::MEASUREMENTS
                        },
                    )
                    .with_context(|| format!("cannot load session {id}"))
            })
            .collect()
    };
    let mut base = load(base).context("BASE")?;
    let mut new = load(new).context("NEW")?;
    if let Some(b) = benchmark {
        for s in base.iter_mut().chain(new.iter_mut()) {
            s.configurations.retain(|c| c.record.benchmark == b);
        }
    }
    let report = compare_loaded(store, &base, &new, threshold)?;
    Ok((base, new, report))
}

/// The comparison of the loaded sessions `base` and `new`, with the stored calibrations of
/// their environments' session-to-session noise, and the differential profiles of the
/// configurations profiled on both sides (when loaded with their profiles).
pub fn compare_loaded(
    store: &dyn Store,
    base: &[vernier_model::StoredSession],
    new: &[vernier_model::StoredSession],
    threshold: f64,
) -> Result<vernier_analysis::CompareReport> {
    let settings = vernier_analysis::CompareSettings {
        threshold,
        level: vernier_model::CONFIDENCE_LEVEL,
    };
    let calibrations = calibrations_of(store, base.iter().chain(new))?;
    let mut report = vernier_analysis::compare_calibrated(base, new, &settings, &calibrations)?;
    report.profiles = vernier_analysis::profile::compare_profiles(base, new, report.level);
    let keys: Vec<_> = report.comparisons.iter().map(|c| c.key()).collect();
    report.monitors =
        vernier_analysis::monitors_compare::monitor_differences(base, new, &keys, report.level);
    Ok(report)
}

/// The stored calibrations of the machines (fingerprints) of `sessions`.
pub fn calibrations_of<'a>(
    store: &dyn Store,
    sessions: impl IntoIterator<Item = &'a vernier_model::StoredSession>,
) -> Result<Vec<vernier_model::Calibration>> {
    let fingerprints: Vec<String> = sessions
        .into_iter()
        .map(|s| s.info.fingerprint.clone())
        .collect();
    store
        .calibrations(&fingerprints)
        .context("cannot read the calibrations")
}
