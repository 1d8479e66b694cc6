//! The runs' histograms (table `run_histograms`, schema version 6): the exact facts of each
//! measurement thread's distribution in columns, its buckets in HdrHistogram's V2 + DEFLATE
//! encoding ([`vernier_model::histogram::encode`]). A thread's traced latency
//! (`latency:trace=US`, [`vernier_model::ThreadTrace`]) is a row of `run_traces` (schema
//! version 13) beside its histogram: JSON compressed with DEFLATE (RFC 1951, flate2).

use std::collections::HashMap;
use std::io::{Read, Write};

use vernier_model::histogram::{decode, encode};
use vernier_model::{RunHistogram, ThreadTrace};

use super::codec::{corrupt, parse_uuid};
use super::read::{Runs, RunsOf};
use crate::sql::{args, Columns, Sql};
use crate::StoreError;

/// A count or time as an INTEGER or BIGINT column (a signed 64-bit number).
fn column(what: &str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("histogram {what} {value} exceeds 2^63 - 1")))
}

/// One row of `run_histograms` (with its row of `run_traces`, if any) as stored: the facts in
/// their columns and the buckets encoded. A copy into another store passes these on as they
/// are ([`crate::RunsPage`]): both engines keep the same encoding (a BLOB in SQLite, a BYTEA in
/// PostgreSQL), and decoding and encoding a histogram again costs some 2 ms each way (its
/// whole array of counts, megabytes, is cleared and compressed), most of a latency session's
/// copy.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredHistogram {
    quantity: String,
    thread: u32,
    cpu: Option<u32>,
    count: i64,
    min_ns: i64,
    max_ns: i64,
    max_index: Option<i64>,
    sum_ns: i64,
    overflows: i64,
    missed: i64,
    buckets: Vec<u8>,
    trace: Option<StoredTrace>,
}

/// A row of `run_traces`: the traced latency, its count of events and the compressed trace.
#[derive(Debug, Clone, PartialEq)]
struct StoredTrace {
    latency_ns: i64,
    events: i64,
    trace: Vec<u8>,
}

/// The histograms of runs as stored, by run id ([`read_stored`]).
pub(crate) type StoredHistograms = HashMap<uuid::Uuid, Vec<StoredHistogram>>;

/// Checks and encodes the histograms of run `run_id` for [`insert_all`].
pub(crate) fn encode_all(
    run_id: &uuid::Uuid,
    histograms: &[RunHistogram],
) -> Result<Vec<StoredHistogram>, StoreError> {
    histograms
        .iter()
        .map(|h| {
            h.check()
                .map_err(|e| StoreError::Invalid(format!("run {run_id}: {h}: {e}")))?;
            let buckets = encode(&h.buckets).map_err(|e| StoreError::Invalid(e.to_string()))?;
            let trace = match &h.trace {
                Some(trace) => Some(StoredTrace {
                    latency_ns: column("traced latency", trace.latency_ns)?,
                    events: i64::try_from(trace.events.len()).unwrap_or(i64::MAX),
                    trace: encode_trace(trace)?,
                }),
                None => None,
            };
            Ok(StoredHistogram {
                quantity: h.quantity.clone(),
                thread: h.thread,
                cpu: h.cpu,
                count: column("count", h.count)?,
                min_ns: column("min", h.min_ns)?,
                max_ns: column("max", h.max_ns)?,
                max_index: h.max_index.map(|i| column("max index", i)).transpose()?,
                sum_ns: column("sum", h.sum_ns)?,
                overflows: column("overflows", h.overflows)?,
                missed: column("missed", h.missed)?,
                buckets,
                trace,
            })
        })
        .collect()
}

/// The columns of `run_histograms`, in the order [`insert_all`] gives their values.
const COLUMNS: [&str; 12] = [
    "run_key",
    "quantity",
    "thread",
    "cpu",
    "count",
    "min_ns",
    "max_ns",
    "max_index",
    "sum_ns",
    "overflows",
    "missed",
    "buckets",
];

/// Stores the histograms of runs, each given with its run's key, in one [`Sql::insert_rows`].
pub(crate) fn insert_all<'a>(
    tx: &mut dyn Sql,
    runs: impl Iterator<Item = (i64, &'a [StoredHistogram])>,
) -> Result<(), StoreError> {
    let mut params = Vec::new();
    for (run_key, rows) in runs {
        for h in rows {
            params.extend_from_slice(args![
                run_key,
                &h.quantity,
                h.thread,
                h.cpu,
                h.count,
                h.min_ns,
                h.max_ns,
                h.max_index,
                h.sum_ns,
                h.overflows,
                h.missed,
                &h.buckets,
            ]);
            if let Some(trace) = &h.trace {
                tx.execute(
                    "INSERT INTO run_traces (run_key, quantity, thread, latency_ns, events, trace) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                    args![
                        run_key,
                        &h.quantity,
                        h.thread,
                        trace.latency_ns,
                        trace.events,
                        &trace.trace,
                    ],
                )?;
            }
        }
    }
    if params.is_empty() {
        return Ok(());
    }
    tx.insert_rows("run_histograms", &COLUMNS, &params)
}

/// The histograms of every run `selection` takes as stored, by run id, in the order of their
/// quantity and thread: nothing decoded.
pub(crate) fn read_stored(
    tx: &mut dyn Sql,
    selection: &RunsOf<'_>,
) -> Result<StoredHistograms, StoreError> {
    let mut by_run: StoredHistograms = HashMap::new();
    tx.query_each(
        &format!(
            "SELECT r.key, h.quantity, h.thread, h.cpu, h.count, h.min_ns, h.max_ns, \
             h.max_index, h.sum_ns, h.overflows, h.missed, h.buckets, t.latency_ns, t.events, \
             t.trace, c.id, i.id FROM {} CROSS JOIN run_histograms h LEFT JOIN run_traces t \
             ON t.run_key = h.run_key AND t.quantity = h.quantity AND t.thread = h.thread \
             LEFT JOIN run_ids i ON i.run_key = h.run_key \
             WHERE h.run_key = r.key AND {} ORDER BY h.run_key, h.quantity, h.thread",
            selection.tables(),
            selection.condition()
        ),
        &selection.params(),
        &mut |r| {
            let trace = match r.get::<Option<Vec<u8>>>(14)? {
                Some(trace) => Some(StoredTrace {
                    latency_ns: r.get(12)?,
                    events: r.get(13)?,
                    trace,
                }),
                None => None,
            };
            let histogram = StoredHistogram {
                quantity: r.get(1)?,
                thread: r.get(2)?,
                cpu: r.get(3)?,
                count: r.get(4)?,
                min_ns: r.get(5)?,
                max_ns: r.get(6)?,
                max_index: r.get(7)?,
                sum_ns: r.get(8)?,
                overflows: r.get(9)?,
                missed: r.get(10)?,
                buckets: r.blob(11)?.to_vec(),
                trace,
            };
            let id = match r.get::<Option<uuid::Uuid>>(16)? {
                Some(id) => id,
                None => place_id(parse_uuid(r.text(15)?)?, r.get(0)?),
            };
            by_run.entry(id).or_default().push(histogram);
            Ok(())
        },
    )?;
    Ok(by_run)
}

/// The id that the place of the run of key `key` in configuration `configuration` gives.
fn place_id(configuration: uuid::Uuid, key: i64) -> uuid::Uuid {
    let (_, warmup, index) = super::key_place(key);
    vernier_model::RunPlace {
        configuration,
        warmup,
        index,
    }
    .derived_id()
}

/// A traced latency as stored: JSON, DEFLATE-compressed.
fn encode_trace(trace: &ThreadTrace) -> Result<Vec<u8>, StoreError> {
    let json = serde_json::to_vec(trace).map_err(|e| StoreError::Invalid(format!("trace: {e}")))?;
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(&json)
        .and_then(|_| encoder.finish())
        .map_err(|e| StoreError::Invalid(format!("trace: {e}")))
}

fn decode_trace(bytes: &[u8]) -> Result<ThreadTrace, String> {
    let mut json = Vec::new();
    flate2::read::DeflateDecoder::new(bytes)
        .read_to_end(&mut json)
        .map_err(|e| format!("trace cannot be inflated: {e}"))?;
    serde_json::from_slice(&json).map_err(|e| format!("trace: {e}"))
}

/// Reads the histograms of every run `selection` takes into those runs of `runs`, by quantity
/// and thread, whole or (`buckets` false) with their buckets empty, and their traces. The
/// runs' rows below them are read as ranges of their keys ([`RunsOf::below`]); in SQLite the
/// histograms without their buckets from the index that holds every other column
/// (`run_histogram_headers`): a row of `run_histograms` keeps its buckets (~1.5 KB) in an
/// overflow page, read whole with the row.
pub(crate) fn read_runs(
    tx: &mut dyn Sql,
    selection: &RunsOf<'_>,
    buckets: bool,
    runs: &mut Runs,
) -> Result<(), StoreError> {
    let (tables, condition) = selection.below("h.run_key");
    let params = selection.params();
    let blob = if buckets { "h.buckets" } else { "NULL" };
    let mut per_run = 0;
    tx.query_each(
        &format!(
            "SELECT h.run_key, h.quantity, h.thread, h.cpu, h.count, h.min_ns, h.max_ns, \
             h.max_index, h.sum_ns, h.overflows, h.missed, {blob} \
             FROM {tables} CROSS JOIN run_histograms h WHERE {condition}"
        ),
        &params,
        &mut |r| {
            let run_key: i64 = r.get(0)?;
            let unsigned = |i: usize| -> Result<u64, StoreError> {
                let v: i64 = r.get(i)?;
                u64::try_from(v)
                    .map_err(|_| corrupt(format!("negative histogram field in run key {run_key}")))
            };
            let histogram = RunHistogram {
                quantity: r.get(1)?,
                thread: r.get(2)?,
                cpu: r.get(3)?,
                count: unsigned(4)?,
                min_ns: unsigned(5)?,
                max_ns: unsigned(6)?,
                max_index: r
                    .get::<Option<i64>>(7)?
                    .map(|i| u64::try_from(i).unwrap_or_default()),
                sum_ns: unsigned(8)?,
                overflows: unsigned(9)?,
                missed: unsigned(10)?,
                buckets: match buckets {
                    true => decode(r.blob(11)?)
                        .map_err(|e| corrupt(format!("histogram of run key {run_key}: {e}")))?,
                    false => Vec::new(),
                },
                trace: None,
            };
            // In the order of quantity and thread: SQLite reads them so (the table's key), and
            // sorting the rows in the query would make it sort every run's in a temporary
            // B-tree (0.1 s of a session of 100,000 latency intervals).
            let histograms = &mut runs.get(run_key)?.histograms;
            // As many places as histograms (one per thread), as many as the run before had
            // when it had: a list grown by doubling would hold room for four, 54 MB unused of
            // 100,000 runs of two.
            if histograms.is_empty() {
                histograms.reserve_exact(per_run.max(1));
            } else {
                histograms.reserve_exact(1);
            }
            let place = (histogram.quantity.as_str(), histogram.thread);
            let at = histograms.partition_point(|h| (h.quantity.as_str(), h.thread) < place);
            histograms.insert(at, histogram);
            per_run = histograms.len();
            Ok(())
        },
    )?;
    // The few traced latencies, each with its histogram (a trace is written only with one).
    let (tables, condition) = selection.below("t.run_key");
    tx.query_each(
        &format!(
            "SELECT t.run_key, t.quantity, t.thread, t.trace \
             FROM {tables} CROSS JOIN run_traces t WHERE {condition}"
        ),
        &params,
        &mut |r| {
            let run_key: i64 = r.get(0)?;
            let (quantity, thread): (&str, u32) = (r.text(1)?, r.get(2)?);
            let trace = decode_trace(r.blob(3)?)
                .map_err(|e| corrupt(format!("trace of run key {run_key}: {e}")))?;
            if let Some(histogram) = runs
                .get(run_key)?
                .histograms
                .iter_mut()
                .find(|h| h.quantity == quantity && h.thread == thread)
            {
                histogram.trace = Some(Box::new(trace));
            }
            Ok(())
        },
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use vernier_model::TraceEvent;

    #[test]
    fn a_trace_round_trips_compressed() {
        let events: Vec<TraceEvent> = (0..500)
            .map(|i| TraceEvent {
                ts_ns: 1_000_000 + i * 1_000,
                cpu: 1,
                pid: 77,
                comm: "spin thread".into(),
                flags: "d.h..".into(),
                name: "local_timer_entry".into(),
                fields: "vector=236".into(),
            })
            .collect();
        let trace = ThreadTrace {
            threshold_ns: 1,
            latency_ns: 2,
            expiry_ns: 3,
            wake_ns: 5,
            tid: 50,
            absent_events: vec!["irq_vectors/local_timer_entry".into()],
            truncated: false,
            events,
        };
        let bytes = encode_trace(&trace).unwrap();
        let json = serde_json::to_vec(&trace).unwrap();
        assert!(
            bytes.len() < json.len() / 10,
            "{} of {}",
            bytes.len(),
            json.len()
        );
        assert_eq!(decode_trace(&bytes).unwrap(), trace);
        assert!(decode_trace(&bytes[..bytes.len() / 2]).is_err());
    }
}
