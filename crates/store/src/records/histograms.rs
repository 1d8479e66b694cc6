//! The runs' histograms (table `run_histograms`, schema version 6): the exact facts of each
//! measurement thread's distribution in columns, its buckets in HdrHistogram's V2 + DEFLATE
//! encoding ([`vernier_model::histogram::encode`]).

use std::collections::HashMap;

use vernier_model::histogram::{decode, encode};
use vernier_model::RunHistogram;

use super::codec::corrupt;
use super::read::RunsOf;
use crate::sql::{args, Sql};
use crate::StoreError;

/// A count or time as an INTEGER or BIGINT column (a signed 64-bit number).
fn column(what: &str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value)
        .map_err(|_| StoreError::Invalid(format!("histogram {what} {value} exceeds 2^63 - 1")))
}

/// The histograms of a run as their rows store them: each checked, with its buckets encoded.
pub(crate) struct Encoded<'a> {
    rows: Vec<(&'a RunHistogram, Vec<u8>)>,
}

/// Checks and encodes the histograms of run `run_id` for [`insert_all`].
pub(crate) fn encode_all<'a>(
    run_id: &uuid::Uuid,
    histograms: &'a [RunHistogram],
) -> Result<Encoded<'a>, StoreError> {
    let rows = histograms
        .iter()
        .map(|h| {
            h.check()
                .map_err(|e| StoreError::Invalid(format!("run {run_id}: {h}: {e}")))?;
            let buckets = encode(&h.buckets).map_err(|e| StoreError::Invalid(e.to_string()))?;
            Ok((h, buckets))
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(Encoded { rows })
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
pub(crate) fn insert_all<'a, 'h: 'a>(
    tx: &mut dyn Sql,
    runs: impl Iterator<Item = (i64, &'a Encoded<'h>)>,
) -> Result<(), StoreError> {
    let mut params = Vec::new();
    for (run_key, encoded) in runs {
        for (h, buckets) in &encoded.rows {
            params.extend_from_slice(args![
                run_key,
                &h.quantity,
                h.thread,
                h.cpu,
                column("count", h.count)?,
                column("min", h.min_ns)?,
                column("max", h.max_ns)?,
                h.max_index.map(|i| column("max index", i)).transpose()?,
                column("sum", h.sum_ns)?,
                column("overflows", h.overflows)?,
                column("missed", h.missed)?,
                buckets,
            ]);
        }
    }
    if params.is_empty() {
        return Ok(());
    }
    tx.insert_rows("run_histograms", &COLUMNS, &params)
}

/// The histograms of every run `selection` takes: run key -> its histograms by quantity and
/// thread.
pub(crate) fn read_runs(
    tx: &mut dyn Sql,
    selection: &RunsOf<'_>,
) -> Result<HashMap<i64, Vec<RunHistogram>>, StoreError> {
    let rows = tx.query(
        &format!(
            "SELECT h.run_key, h.quantity, h.thread, h.cpu, h.count, h.min_ns, h.max_ns, \
         h.max_index, h.sum_ns, h.overflows, h.missed, h.buckets \
         FROM {} CROSS JOIN run_histograms h WHERE h.run_key = r.key AND {} \
         ORDER BY h.run_key, h.quantity, h.thread",
            selection.tables(),
            selection.condition()
        ),
        &selection.params(),
    )?;
    let mut by_run: HashMap<i64, Vec<RunHistogram>> = HashMap::new();
    for r in rows {
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
            buckets: decode(r.blob(11)?)
                .map_err(|e| corrupt(format!("histogram of run key {run_key}: {e}")))?,
        };
        by_run.entry(run_key).or_default().push(histogram);
    }
    Ok(by_run)
}
