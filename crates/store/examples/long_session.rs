#![allow(clippy::print_stderr)] // an example is a program that says what went wrong
//! Grows a recorded session to a long one, for measuring what a year of `vernier monitor
//! latency` costs (bench/long-session.sh): `long_session DB RUNS [running]` appends copies of
//! the runs of the latest session of DB (each with a new id, later in time, with its values,
//! histograms and monitor data) until it holds RUNS runs, 10,000 runs a transaction, written
//! as a sync writes them ([`vernier_store::Import::add_page`]: the histograms as stored, not
//! encoded again). With `running` the session is
//! left `running`, owned by no live process, as a monitor's session is on the central
//! database of a farm.
//!
//! Record the session first, a few intervals of the real monitor:
//! `vernier --db DB monitor latency --interval 1s --for 3s`.
//!
//! `long_session sync FROM TO` copies FROM to TO (a file or a PostgreSQL URL) as `vernier sync`
//! does ([`vernier_store::copy_sessions`]) and prints the seconds it took: the store's share of
//! a sync, without the command's start.

use std::process::ExitCode;

use vernier_store::{SqliteStore, Store};

/// Runs stored per transaction.
const RUNS_PER_COMMIT: usize = 10_000;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [sync, from, to] = args.as_slice() {
        if sync == "sync" {
            return match copy(from, to) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("long_session: sync {from} {to}: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    }
    let (db, runs, running) = match args.as_slice() {
        [db, runs] => (db, runs, false),
        [db, runs, flag] if flag == "running" => (db, runs, true),
        _ => {
            eprintln!("usage: long_session DB RUNS [running] | long_session sync FROM TO");
            return ExitCode::from(2);
        }
    };
    let Ok(runs) = runs.parse::<usize>() else {
        eprintln!("long_session: RUNS must be a count of runs, got '{runs}'");
        return ExitCode::from(2);
    };
    match grow(db, runs, running) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("long_session: {db}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn copy(from: &str, to: &str) -> Result<(), vernier_store::StoreError> {
    use vernier_store::{Access, Location};
    let source = vernier_store::open(&Location::parse(std::path::Path::new(from))?, Access::Read)?;
    let mut target =
        vernier_store::open(&Location::parse(std::path::Path::new(to))?, Access::Create)?;
    let start = std::time::Instant::now();
    let report = vernier_store::copy_sessions(source.as_ref(), target.as_mut(), |_| {})?;
    #[allow(clippy::print_stdout)] // what it measured
    {
        println!(
            "{:.3} s: {} copied ({} runs), {} extended (+{} runs), {} present, {} running",
            start.elapsed().as_secs_f64(),
            report.copied,
            report.runs,
            report.extended,
            report.added_runs,
            report.present,
            report.running
        );
    }
    Ok(())
}

fn grow(db: &str, target: usize, running: bool) -> Result<(), vernier_store::StoreError> {
    let mut store = SqliteStore::open(std::path::Path::new(db))?;
    let id = store.resolve("latest")?;
    // The recorded runs as a copy reads them: their histograms as stored, so that a copy of a
    // run costs no decoding and encoding of its histograms (some 2 ms each way).
    let (template, _) = store.copy_page(id, None, usize::MAX)?;
    let runs = || template.session.configurations.iter().flat_map(|c| &c.runs);
    let mut held: usize = runs().count();
    let first = runs().map(|r| r.started_at_ns).min().unwrap_or(0);
    let last = runs().map(|r| r.ended_at_ns).max().unwrap_or(0);
    let span = (last - first).max(1);
    // Each recorded run's histograms, decoded once, and how many copies of it the session
    // holds: the kept merged histograms of the grown session are their sums (each copy's
    // histograms pass through as stored, which a store does not merge).
    let recorded: std::collections::BTreeSet<uuid::Uuid> = runs().map(|r| r.id).collect();
    let places = template
        .session
        .configurations
        .iter()
        .flat_map(|c| c.runs.iter().map(|r| r.place(c.record.id)))
        .collect();
    let decoded = store.load_session_runs(id, vernier_store::Load::DISTRIBUTIONS, &places)?;
    let mut copies: std::collections::HashMap<uuid::Uuid, u64> =
        recorded.iter().map(|&r| (r, 1)).collect();
    let mut round: i64 = 0;
    while held < target {
        let mut import = store.importer(RUNS_PER_COMMIT)?;
        let mut in_part = 0;
        while in_part < RUNS_PER_COMMIT && held < target {
            round += 1;
            let mut part = template.clone();
            let mut kept = 0;
            for config in &mut part.session.configurations {
                config.profiles.clear();
                config.runs.truncate(target - held - kept);
                kept += config.runs.len();
                for run in &config.runs {
                    *copies.entry(run.id).or_default() += 1;
                }
            }
            let mut index = held;
            part.change_runs(|run| {
                run.id = uuid::Builder::from_random_bytes(
                    (run.id.as_u128() ^ (round as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                        .to_le_bytes(),
                )
                .into_uuid();
                run.started_at_ns += round * span;
                run.ended_at_ns += round * span;
                run.index = u32::try_from(index).unwrap_or(u32::MAX);
                index += 1;
            });
            import.add_page(&part)?;
            held += kept;
            in_part += kept;
        }
        import.commit()?;
    }
    let mut import = store.importer(0)?;
    import.put_histogram_totals(&totals(&decoded, &copies))?;
    import.commit()?;
    let status = if running { "running" } else { "completed" };
    let raw = rusqlite::Connection::open(db)?;
    raw.execute(
        "UPDATE sessions SET status = ?1, owner_pid = NULL, \
         ended_at_ns = CASE WHEN ?1 = 'running' THEN NULL ELSE ended_at_ns END WHERE id = ?2",
        rusqlite::params![status, id.to_string()],
    )?;
    Ok(())
}

/// A total being summed: runs, samples, and the samples of each bucket.
type Merged = (u64, u64, std::collections::BTreeMap<u64, u64>);

/// The merged histograms of the measured runs of `recorded` (decoded), each run counted as
/// often as `copies` says.
fn totals(
    recorded: &vernier_model::StoredSession,
    copies: &std::collections::HashMap<uuid::Uuid, u64>,
) -> Vec<vernier_store::HistogramTotal> {
    use std::collections::BTreeMap;
    let mut totals = Vec::new();
    for c in &recorded.configurations {
        // (quantity, thread) -> (runs, samples, bucket -> samples)
        let mut merged: BTreeMap<(String, u32), Merged> = BTreeMap::new();
        for run in c.runs.iter().filter(|r| !r.warmup) {
            let times = copies.get(&run.id).copied().unwrap_or(0);
            for h in &run.histograms {
                let total = merged.entry((h.quantity.clone(), h.thread)).or_default();
                total.0 += times;
                total.1 += times * h.count;
                for &(value, n) in &h.buckets {
                    *total.2.entry(value).or_default() += times * n;
                }
            }
        }
        for ((quantity, thread), (runs, count, buckets)) in merged {
            totals.push(vernier_store::HistogramTotal {
                configuration: c.record.id,
                quantity,
                thread,
                runs,
                count,
                buckets: buckets.into_iter().collect(),
            });
        }
    }
    totals
}
