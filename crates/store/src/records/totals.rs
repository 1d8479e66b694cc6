//! The kept summaries of long sessions (table `histogram_totals`, schema version 15): for each
//! configuration, quantity and measurement thread, the buckets of the histograms of all its
//! measured runs merged, with how many runs and samples they hold. A latency monitor records a
//! run every few minutes for months; `show` reads the merged buckets here (one row per thread)
//! instead of decoding every run's (some 2 ms each: an hour at 100,000 runs of 2 threads).
//!
//! The totals change in the transaction that stores the runs: a run recorded or imported with
//! its histograms is merged in ([`add`]); a copy, which passes the runs' histograms through as
//! stored without decoding them, carries the source's totals instead ([`read_stored`],
//! [`replace`]). A reader checks them against the runs' histogram columns (the same runs and
//! samples) before it uses them, and reads every run's buckets where they differ (a copy in
//! progress, a database written by a vernier before version 15 and not migrated since).

use std::collections::BTreeMap;

use uuid::Uuid;
use vernier_model::histogram::{decode, encode, Recording};
use vernier_model::RunRecord;

use super::codec::corrupt;
use crate::sql::{args, Columns, Sql};
use crate::StoreError;

/// The kept total of one thread of a configuration, decoded: what `show` merges with the
/// runs' histogram columns ([`crate::Store::histogram_totals`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistogramTotal {
    /// The configuration's id.
    pub configuration: Uuid,
    pub quantity: String,
    pub thread: u32,
    /// Measured runs merged (those with a histogram of this thread).
    pub runs: u64,
    /// Their samples, overflows included: the sum of the runs' `count`.
    pub count: u64,
    /// The merged buckets, as [`vernier_model::RunHistogram::buckets`].
    pub buckets: Vec<(u64, u64)>,
}

/// A row of `histogram_totals` as stored, the buckets encoded: what a copy carries
/// ([`crate::RunsPage`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredTotal {
    configuration: Uuid,
    quantity: String,
    thread: u32,
    runs: i64,
    count: i64,
    buckets: Vec<u8>,
}

impl StoredTotal {
    /// `total` as stored.
    pub(crate) fn encode(total: &HistogramTotal) -> Result<Self, StoreError> {
        let column = |what: &str, v: u64| {
            i64::try_from(v).map_err(|_| {
                StoreError::Invalid(format!("kept histogram {what} {v} exceeds 2^63 - 1"))
            })
        };
        Ok(StoredTotal {
            configuration: total.configuration,
            quantity: total.quantity.clone(),
            thread: total.thread,
            runs: column("runs", total.runs)?,
            count: column("count", total.count)?,
            buckets: encode(&total.buckets).map_err(|e| StoreError::Invalid(e.to_string()))?,
        })
    }
}

/// One total being merged: the counts over the whole range (allocated once, about 3.8 MB, so
/// that adding a run's buckets is a few array increments each), its runs and samples.
struct Merging {
    counts: Recording,
    runs: i64,
    count: i64,
}

impl Merging {
    fn new() -> Self {
        Merging {
            counts: Recording::new(),
            runs: 0,
            count: 0,
        }
    }

    fn add_buckets(&mut self, buckets: &[(u64, u64)]) {
        for &(value, n) in buckets {
            self.counts.record_n(value, n);
        }
    }

    fn add_run(&mut self, count: u64, buckets: &[(u64, u64)]) {
        self.runs += 1;
        self.count = self
            .count
            .saturating_add(i64::try_from(count).unwrap_or(i64::MAX));
        self.add_buckets(buckets);
    }

    fn buckets(&self) -> Result<Vec<u8>, StoreError> {
        encode(&self.counts.finish("", 0, None).buckets)
            .map_err(|e| StoreError::Invalid(e.to_string()))
    }

    /// Stores the total of `quantity` and `thread` of a configuration in place of its own.
    fn store(
        &self,
        tx: &mut dyn Sql,
        configuration_key: i64,
        quantity: &str,
        thread: u32,
    ) -> Result<(), StoreError> {
        tx.execute(
            UPSERT,
            args![
                configuration_key,
                quantity,
                thread,
                self.runs,
                self.count,
                &self.buckets()?
            ],
        )?;
        Ok(())
    }
}

/// The statement that stores a total in place of the one stored.
const UPSERT: &str = "INSERT INTO histogram_totals \
     (configuration_key, quantity, thread, runs, count, buckets) VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT (configuration_key, quantity, thread) DO UPDATE SET runs = excluded.runs, \
     count = excluded.count, buckets = excluded.buckets";

/// Merges the histograms of the measured runs among `runs` (of the configuration of key
/// `configuration_key`) into its totals, in the transaction that stores them. Runs without
/// histograms of their own (a copy passes them through as stored) add nothing: the copy
/// carries the source's totals ([`replace`]).
pub(crate) fn add(
    tx: &mut dyn Sql,
    configuration_key: i64,
    runs: &[RunRecord],
) -> Result<(), StoreError> {
    let mut merging: BTreeMap<(&str, u32), Merging> = BTreeMap::new();
    for h in runs
        .iter()
        .filter(|r| !r.warmup)
        .flat_map(|r| &r.histograms)
    {
        merging
            .entry((h.quantity.as_str(), h.thread))
            .or_insert_with(Merging::new)
            .add_run(h.count, &h.buckets);
    }
    for ((quantity, thread), mut total) in merging {
        if let Some(row) = tx.query_opt(
            "SELECT runs, count, buckets FROM histogram_totals \
             WHERE configuration_key = $1 AND quantity = $2 AND thread = $3",
            args![configuration_key, quantity, thread],
        )? {
            total.runs += row.get::<i64>(0)?;
            total.count = total.count.saturating_add(row.get::<i64>(1)?);
            total.add_buckets(&decode(row.blob(2)?).map_err(|e| {
                corrupt(format!(
                    "kept histogram of configuration key {configuration_key}: {e}"
                ))
            })?);
        }
        total.store(tx, configuration_key, quantity, thread)?;
    }
    Ok(())
}

/// The totals of every configuration of session `session` (its id as stored), as stored.
pub(crate) fn read_stored(tx: &mut dyn Sql, session: &str) -> Result<Vec<StoredTotal>, StoreError> {
    let mut totals = Vec::new();
    tx.query_each(
        "SELECT c.id, t.quantity, t.thread, t.runs, t.count, t.buckets \
         FROM configurations c CROSS JOIN histogram_totals t \
         WHERE c.session_id = $1 AND t.configuration_key = c.key \
         ORDER BY c.position, t.quantity, t.thread",
        args![session],
        &mut |r| {
            let id: String = r.get(0)?;
            totals.push(StoredTotal {
                configuration: Uuid::parse_str(&id)
                    .map_err(|e| corrupt(format!("configuration id '{id}': {e}")))?,
                quantity: r.get(1)?,
                thread: r.get(2)?,
                runs: r.get(3)?,
                count: r.get(4)?,
                buckets: r.blob(5)?.to_vec(),
            });
            Ok(())
        },
    )?;
    Ok(totals)
}

/// [`read_stored`], decoded.
pub(crate) fn read(tx: &mut dyn Sql, session: &str) -> Result<Vec<HistogramTotal>, StoreError> {
    read_stored(tx, session)?
        .into_iter()
        .map(|t| {
            let unsigned = |what: &str, v: i64| {
                u64::try_from(v).map_err(|_| {
                    corrupt(format!(
                        "kept histogram of configuration {}: negative {what}",
                        t.configuration
                    ))
                })
            };
            Ok(HistogramTotal {
                configuration: t.configuration,
                runs: unsigned("runs", t.runs)?,
                count: unsigned("count", t.count)?,
                buckets: decode(&t.buckets).map_err(|e| {
                    corrupt(format!(
                        "kept histogram of configuration {}: {e}",
                        t.configuration
                    ))
                })?,
                quantity: t.quantity,
                thread: t.thread,
            })
        })
        .collect()
}

/// Stores `totals` (a source's, read with the runs a copy stores) in place of the target's of
/// the same configurations, in the copy's transaction. A configuration the target lacks is
/// left out.
pub(crate) fn replace(tx: &mut dyn Sql, totals: &[StoredTotal]) -> Result<(), StoreError> {
    for t in totals {
        let Some(row) = tx.query_opt(
            "SELECT key FROM configurations WHERE id = $1",
            args![&t.configuration.to_string()],
        )?
        else {
            continue;
        };
        let key: i64 = row.get(0)?;
        tx.execute(
            UPSERT,
            args![key, &t.quantity, t.thread, t.runs, t.count, &t.buckets],
        )?;
    }
    Ok(())
}

/// Computes the totals of every configuration from its measured runs' histograms, one
/// configuration at a time: what migration 15 does for the sessions stored before it.
pub(crate) fn rebuild(tx: &mut dyn Sql) -> Result<(), StoreError> {
    let mut keys = Vec::new();
    tx.query_each(
        "SELECT key FROM configurations ORDER BY key",
        &[],
        &mut |r| {
            keys.push(r.get::<i64>(0)?);
            Ok(())
        },
    )?;
    for key in keys {
        let mut merging: BTreeMap<(String, u32), Merging> = BTreeMap::new();
        // The measured runs of the configuration are the first half of its range of keys
        // (`warmup * 2^31`, docs/schema.md).
        tx.query_each(
            "SELECT h.quantity, h.thread, h.count, h.buckets FROM run_histograms h \
             WHERE h.run_key >= $1 * 4294967296 AND h.run_key < $1 * 4294967296 + 2147483648 \
             ORDER BY h.run_key",
            args![key],
            &mut |r| {
                let count: i64 = r.get(2)?;
                let buckets = decode(r.blob(3)?)
                    .map_err(|e| corrupt(format!("histogram of configuration key {key}: {e}")))?;
                merging
                    .entry((r.get(0)?, r.get(1)?))
                    .or_insert_with(Merging::new)
                    .add_run(u64::try_from(count).unwrap_or_default(), &buckets);
                Ok(())
            },
        )?;
        for ((quantity, thread), total) in merging {
            total.store(tx, key, &quantity, thread)?;
        }
    }
    Ok(())
}
