//! Opening the database with its name in every error, and reading a session back as the
//! commands show it.

use uuid::Uuid;
use vernier_model::StoredSession;
use vernier_store::{Access, Histograms, Load, Location, Store, StoreError};

use crate::AppError;

/// Opens the database at `location` for `access`: the one way every command opens it. An
/// error that does not name the database gets its name.
pub fn open(location: &Location, access: Access) -> Result<Box<dyn Store>, AppError> {
    vernier_store::open(location, access).map_err(|e| naming(e, location))
}

/// A store error that names the database as it is; one that does not gets it as context.
fn naming(source: StoreError, location: &Location) -> AppError {
    if source.to_string().contains(&location.to_string()) {
        AppError::Store(source)
    } else {
        AppError::Database {
            location: location.clone(),
            source,
        }
    }
}

/// A session with what `load` asks for, and with the runs' monitor data as well when its runs
/// carry histograms: the worst case of a latency result is shown next to what its CPU did
/// (`vernier_analysis::worst_case`). [`load_for_show`] with the monitor data of at most
/// [`MONITORED_RUNS`] runs of each configuration.
pub fn load_for_display(
    store: &dyn Store,
    id: Uuid,
    load: Load,
) -> Result<StoredSession, AppError> {
    load_for_show(store, id, load, false).map(|shown| shown.session)
}

/// Of a configuration of more measured runs, the monitor data of this many are read for the
/// slow runs' explanation and the worst case's activity (docs/farm.md, "A year of latency"):
/// the worst latency's run and the 300 measured runs around it (or, without latency, the
/// latest). The monitor data of a run is a few KB, and the explanation tests every monitor key
/// with permutations of all the runs: 100,000 runs of a monitor's year would take gigabytes
/// and hours; 1,001 took 8 s of a 15 s `show`. The median of what a CPU usually did is as well
/// told by the day around the worst interval (at 5-minute intervals).
pub const MONITORED_RUNS: usize = 301;

/// A session as [`load_for_show`] read it.
#[derive(Debug, Clone)]
pub struct Shown {
    pub session: StoredSession,
    /// For each configuration (in order) whose monitor data was read for only some of its
    /// measured runs: the first and last of them (indexes among the measured runs, from 0)
    /// and how many measured runs it has.
    pub monitored: Vec<Option<(usize, usize, usize)>>,
}

/// A session with what `load` asks for, as `show` shows it:
///
/// - with `load.histograms` whole, each run's histograms are its exact facts (count, extremes,
///   sum, traces) without their buckets ([`Histograms::Headers`]), and the buckets of all the
///   measured runs of each thread come merged from the kept totals
///   (`Store::histogram_totals`), held by the first run with samples of that thread: what
///   merging every run's buckets gives, read from one row per thread (a monitor's session of
///   100,000 runs holds 200,000 histograms). Where the totals
///   do not hold exactly the runs and samples of the runs' histograms (a copy in progress, a
///   session of an older database), every run's buckets are read instead;
/// - the runs' monitor data, when `load.monitors` asks for it or the runs carry histograms:
///   of every run with `every_monitor`, else of at most [`MONITORED_RUNS`] measured runs of
///   each configuration.
pub fn load_for_show(
    store: &dyn Store,
    id: Uuid,
    load: Load,
    every_monitor: bool,
) -> Result<Shown, AppError> {
    let failed = |source| AppError::LoadSession { id, source };
    let read = |load| store.load_session(id, load).map_err(failed);
    let whole = load.runs && load.histograms == Histograms::Whole;
    let mut session = read(Load {
        histograms: match whole {
            true => Histograms::Headers,
            false => load.histograms,
        },
        monitors: false,
        ..load
    })?;
    let has_histograms = session
        .configurations
        .iter()
        .flat_map(|c| &c.runs)
        .any(|r| !r.histograms.is_empty());
    if whole && has_histograms {
        let totals = store.histogram_totals(id).map_err(failed)?;
        if !complete_from_totals(&mut session, &totals) {
            session = read(Load {
                monitors: false,
                ..load
            })?;
        }
    }
    let mut monitored = vec![None; session.configurations.len()];
    if load.runs && (load.monitors || has_histograms) {
        let mut places = std::collections::BTreeSet::new();
        for (c, window) in session.configurations.iter().zip(&mut monitored) {
            let measured: Vec<_> = c.runs.iter().filter(|r| !r.warmup).collect();
            let (first, last) = match every_monitor || measured.len() <= MONITORED_RUNS {
                true => (0, measured.len()),
                false => {
                    let first = monitored_window(c, measured.len());
                    *window = Some((first, first + MONITORED_RUNS - 1, measured.len()));
                    (first, first + MONITORED_RUNS)
                }
            };
            places.extend(measured[first..last].iter().map(|r| r.place(c.record.id)));
        }
        let with_monitors = store
            .load_session_runs(
                id,
                Load {
                    runs: true,
                    monitors: true,
                    ..Load::INFO
                },
                &places,
            )
            .map_err(failed)?;
        let mut data: std::collections::HashMap<Uuid, _> = with_monitors
            .configurations
            .into_iter()
            .flat_map(|c| c.runs)
            .filter_map(|r| Some((r.id, r.monitors?)))
            .collect();
        for run in session.configurations.iter_mut().flat_map(|c| &mut c.runs) {
            run.monitors = data.remove(&run.id);
        }
    }
    Ok(Shown { session, monitored })
}

/// The first of the [`MONITORED_RUNS`] measured runs of `config` (of `measured` measured runs,
/// more than that) whose monitor data is read: those around the run of its worst latency, or
/// the latest.
fn monitored_window(config: &vernier_model::StoredConfiguration, measured: usize) -> usize {
    let latest = measured - MONITORED_RUNS;
    let worst = vernier_analysis::latency_summary(config, vernier_model::histogram::LATENCY)
        .and_then(|s| s.worst)
        .map(|w| w.run);
    match worst {
        Some(run) => run.saturating_sub(MONITORED_RUNS / 2).min(latest),
        None => latest,
    }
}

/// Gives the runs' histograms of `session`, read without their buckets, the merged buckets of
/// `totals`: for each configuration, quantity and thread, the first measured run with samples
/// holds them all, the others none, which is what merging them gives (the analyses merge a
/// thread's histograms over the measured runs). Returns false, changing nothing, unless every
/// thread of every configuration has a total of exactly its measured runs and samples.
fn complete_from_totals(
    session: &mut StoredSession,
    totals: &[vernier_store::HistogramTotal],
) -> bool {
    use std::collections::BTreeMap;
    for c in &session.configurations {
        let mut seen: BTreeMap<(&str, u32), (u64, u64)> = BTreeMap::new();
        for h in c
            .runs
            .iter()
            .filter(|r| !r.warmup)
            .flat_map(|r| &r.histograms)
        {
            let entry = seen.entry((h.quantity.as_str(), h.thread)).or_default();
            entry.0 += 1;
            entry.1 += h.count;
        }
        let kept: BTreeMap<(&str, u32), (u64, u64)> = totals
            .iter()
            .filter(|t| t.configuration == c.record.id)
            .map(|t| ((t.quantity.as_str(), t.thread), (t.runs, t.count)))
            .collect();
        if seen != kept {
            return false;
        }
    }
    for c in &mut session.configurations {
        for t in totals.iter().filter(|t| t.configuration == c.record.id) {
            let holder = c
                .runs
                .iter_mut()
                .filter(|r| !r.warmup)
                .flat_map(|r| &mut r.histograms)
                .find(|h| h.quantity == t.quantity && h.thread == t.thread && h.count > 0);
            if let Some(h) = holder {
                h.buckets = t.buckets.clone();
            }
        }
    }
    true
}
