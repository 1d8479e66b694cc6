//! Monitor data in the store: one `run_monitors` row per monitored run, with the series
//! and the summary as compact binary columns whose names are numbers into `monitor_names`
//! (schema version 5, docs/schema.md "Monitor data").
//!
//! With the default monitors a run records about 70 series of a few points each. As JSON
//! objects (`{"t_ns":…,"value":…}` per point, names spelled out in every run) and with the
//! summary stored a second time in a table of its own, that was about 24 KB per run, and every
//! read of a session parsed it. Here a point takes a few bytes (the time as a varint delta, an
//! integral value as a varint), each name is stored once per database, and the data is read only
//! when a command asks for it ([`crate::Load`]).
//!
//! Encoding (all integers LEB128 varints, signed ones zigzag-encoded first, as in Protocol
//! Buffers, https://protobuf.dev/programming-guides/encoding/#varints):
//! - `series`: a format byte (1), then per series: monitor, metric and unit (ids into
//!   `monitor_names`), kind (0 counter, 1 gauge), the number of points, and per point the
//!   signed change of `t_ns` since the previous point (the first since 0) and the value;
//! - `summary`: a format byte (1), then per key: its id into `monitor_names` and the value;
//! - a value: an integral double of magnitude at most 2^53 (not -0.0) as the varint
//!   `zigzag(v) << 1`; any other double as the byte 1 and its 8 bytes (IEEE 754 bits, little
//!   endian). Every double, NaN and -0.0 included, comes back bit for bit.

use std::collections::HashMap;

use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};

use super::codec::{corrupt, from_json, to_json};
use super::read::RunsOf;
use crate::sql::{args, Columns, Param, Sql};
use crate::StoreError;

/// The first byte of a `series` or `summary` blob: the encoding described in the module docs.
const FORMAT: u8 = 1;

/// The largest magnitude below which every integer is a double (2^53, IEEE 754 binary64).
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// The names of `monitor_names`, both ways, as one transaction sees them (or, kept by a
/// connection between its writes, as its committed writes saw them).
#[derive(Debug, Default)]
pub(crate) struct Names {
    ids: HashMap<String, i64>,
    names: HashMap<i64, String>,
    /// The names looked up or stored since [`Names::settle`], by a transaction that may still
    /// roll back.
    unsettled: Vec<String>,
}

impl Names {
    /// Every stored name: a few hundred short strings, read once per load or write.
    pub(crate) fn read(tx: &mut dyn Sql) -> Result<Self, StoreError> {
        let mut names = Names::default();
        for row in tx.query("SELECT id, name FROM monitor_names", &[])? {
            let (id, name): (i64, String) = (row.get(0)?, row.get(1)?);
            names.ids.insert(name.clone(), id);
            names.names.insert(id, name);
        }
        Ok(names)
    }

    /// The id of `name`, stored first if it is new. Call only inside a write transaction.
    /// Another writer may store the same name at once: the insertion then waits for it and
    /// does nothing, and the query finds its row.
    fn id(&mut self, tx: &mut dyn Sql, name: &str) -> Result<i64, StoreError> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        tx.execute(
            "INSERT INTO monitor_names (name) VALUES ($1) ON CONFLICT DO NOTHING",
            args![name],
        )?;
        let id: i64 = tx
            .query_one("SELECT id FROM monitor_names WHERE name = $1", args![name])?
            .get(0)?;
        self.ids.insert(name.to_string(), id);
        self.names.insert(id, name.to_string());
        self.unsettled.push(name.to_string());
        Ok(id)
    }

    /// Keeps the names stored so far: their transaction committed. Names are only ever added
    /// to `monitor_names`, so a committed name keeps its id, and a connection may go on using
    /// the names it has seen for its later writes instead of reading them all again; a name
    /// it lacks is looked up (or stored) as before, also when another writer stored it.
    pub(crate) fn settle(&mut self) {
        self.unsettled.clear();
    }

    /// Forgets the names looked up or stored since [`Names::settle`]: their transaction rolled
    /// back, and the id it gave a name may go to another one (SQLite reuses the largest rowid,
    /// https://www.sqlite.org/autoinc.html).
    pub(crate) fn forget_unsettled(&mut self) {
        for name in self.unsettled.drain(..) {
            if let Some(id) = self.ids.remove(&name) {
                self.names.remove(&id);
            }
        }
    }

    fn name(&self, id: u64) -> Result<&str, StoreError> {
        i64::try_from(id)
            .ok()
            .and_then(|id| self.names.get(&id))
            .map(String::as_str)
            .ok_or_else(|| corrupt(format!("monitor data: no monitor name has id {id}")))
    }
}

/// The columns of a monitor record after the run's, in the order of [`Encoded::params`].
const COLUMNS: [&str; 7] = [
    "sampler_priority",
    "sampler_cpu_ns",
    "rounds",
    "unsupported",
    "failures",
    "series",
    "summary",
];

/// A run's monitor data as its row stores it.
struct Encoded<'a> {
    data: &'a RunMonitorData,
    unsupported: String,
    failures: String,
    series: Vec<u8>,
    summary: Vec<u8>,
}

impl<'a> Encoded<'a> {
    /// Encodes `data`, storing the names it uses that `monitor_names` lacks.
    fn new(
        tx: &mut dyn Sql,
        names: &mut Names,
        data: &'a RunMonitorData,
    ) -> Result<Self, StoreError> {
        let series = encode_series(tx, names, &data.series)?;
        let mut summary = vec![FORMAT];
        for (key, value) in &data.summary {
            put_varint(&mut summary, unsigned(names.id(tx, key)?)?);
            put_value(&mut summary, *value);
        }
        Ok(Encoded {
            data,
            unsupported: to_json!("monitors.unsupported", &data.unsupported)?,
            failures: to_json!("monitors.failures", &data.failures)?,
            series,
            summary,
        })
    }

    /// The values of [`COLUMNS`].
    fn params(&self) -> [Param<'_>; 7] {
        [
            Param::from(&self.data.sampler_priority),
            Param::from(self.data.sampler_cpu_ns),
            Param::from(self.data.rounds),
            Param::from(&self.unsupported),
            Param::from(&self.failures),
            Param::from(&self.series),
            Param::from(&self.summary),
        ]
    }
}

/// Stores the monitor data of runs, each given with its run's key (their `runs` rows are
/// already inserted), in one [`Sql::insert_rows`].
pub(crate) fn insert_all<'a>(
    tx: &mut dyn Sql,
    names: &mut Names,
    runs: impl Iterator<Item = (i64, &'a RunMonitorData)>,
) -> Result<(), StoreError> {
    let encoded = runs
        .map(|(key, data)| Ok((key, Encoded::new(tx, names, data)?)))
        .collect::<Result<Vec<_>, StoreError>>()?;
    let mut params = Vec::with_capacity(encoded.len() * (COLUMNS.len() + 1));
    for (key, record) in &encoded {
        params.push(Param::Int(*key));
        params.extend(record.params());
    }
    let mut columns = vec!["run_key"];
    columns.extend(COLUMNS);
    tx.insert_rows("run_monitors", &columns, &params)
}

/// Stores the monitor data of the run named by `run` in `run_column` of `table`: the table
/// migration 0005 fills (whose runs were named by their text ids).
pub(crate) fn insert_into(
    tx: &mut dyn Sql,
    table: &str,
    run_column: &str,
    names: &mut Names,
    run: Param<'_>,
    data: &RunMonitorData,
) -> Result<(), StoreError> {
    let record = Encoded::new(tx, names, data)?;
    let mut params = vec![run];
    params.extend(record.params());
    // `table` is one of our own names, never input.
    tx.execute(
        &format!(
            "INSERT INTO {table} ({run_column}, {}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            COLUMNS.join(", ")
        ),
        &params,
    )?;
    Ok(())
}

fn encode_series(
    tx: &mut dyn Sql,
    names: &mut Names,
    series: &[MonitorSeries],
) -> Result<Vec<u8>, StoreError> {
    let points: usize = series.iter().map(|s| s.points.len()).sum();
    let mut out = Vec::with_capacity(1 + series.len() * 6 + points * 6);
    out.push(FORMAT);
    for s in series {
        for name in [&s.monitor, &s.metric, &s.unit] {
            put_varint(&mut out, unsigned(names.id(tx, name)?)?);
        }
        out.push(match s.kind {
            SeriesKind::Counter => 0,
            SeriesKind::Gauge => 1,
        });
        put_varint(&mut out, s.points.len() as u64);
        let mut previous = 0i64;
        for p in &s.points {
            put_varint(&mut out, zigzag(p.t_ns.wrapping_sub(previous)));
            previous = p.t_ns;
            put_value(&mut out, p.value);
        }
    }
    Ok(out)
}

/// The monitor data of every monitored run `selection` takes, by run id.
pub(crate) fn read_runs(
    tx: &mut dyn Sql,
    selection: &RunsOf<'_>,
) -> Result<HashMap<i64, RunMonitorData>, StoreError> {
    let names = Names::read(tx)?;
    let mut out = HashMap::new();
    let (tables, condition) = selection.below("m.run_key");
    tx.query_each(
        &format!(
            "SELECT m.run_key, m.sampler_priority, m.sampler_cpu_ns, m.rounds, m.unsupported, \
         m.failures, m.series, m.summary \
         FROM {tables} CROSS JOIN run_monitors m WHERE {condition}"
        ),
        &selection.params(),
        &mut |r| {
            let run: i64 = r.get(0)?;
            let data = RunMonitorData {
                sampler_priority: r.get(1)?,
                sampler_cpu_ns: r.get(2)?,
                rounds: r.get(3)?,
                unsupported: from_json!("monitors.unsupported", r.text(4)?)?,
                failures: from_json!("monitors.failures", r.text(5)?)?,
                series: decode_series(&names, r.blob(6)?)
                    .map_err(|e| corrupt(format!("monitor series of run key {run}: {e}")))?,
                summary: decode_summary(&names, r.blob(7)?)
                    .map_err(|e| corrupt(format!("monitor summary of run key {run}: {e}")))?,
            };
            out.insert(run, data);
            Ok(())
        },
    )?;
    Ok(out)
}

fn decode_series(names: &Names, blob: &[u8]) -> Result<Vec<MonitorSeries>, StoreError> {
    let mut r = Reader::new(blob)?;
    let mut series = Vec::new();
    while !r.done() {
        let monitor = names.name(r.varint()?)?.to_string();
        let metric = names.name(r.varint()?)?.to_string();
        let unit = names.name(r.varint()?)?.to_string();
        let kind = match r.byte()? {
            0 => SeriesKind::Counter,
            1 => SeriesKind::Gauge,
            other => return Err(corrupt(format!("series kind {other}"))),
        };
        let n = r.varint()?;
        // Each point takes at least 2 bytes: a count beyond that is damage, not a reason to
        // allocate.
        if n > (r.remaining() / 2) as u64 {
            return Err(corrupt(format!("{n} points in {} bytes", r.remaining())));
        }
        let mut points = Vec::with_capacity(n as usize);
        let mut t_ns = 0i64;
        for _ in 0..n {
            t_ns = t_ns.wrapping_add(unzigzag(r.varint()?));
            points.push(MonitorPoint {
                t_ns,
                value: r.value()?,
            });
        }
        series.push(MonitorSeries {
            monitor,
            metric,
            unit,
            kind,
            points,
        });
    }
    Ok(series)
}

fn decode_summary(
    names: &Names,
    blob: &[u8],
) -> Result<std::collections::BTreeMap<String, f64>, StoreError> {
    let mut r = Reader::new(blob)?;
    let mut summary = std::collections::BTreeMap::new();
    while !r.done() {
        let key = names.name(r.varint()?)?.to_string();
        summary.insert(key, r.value()?);
    }
    Ok(summary)
}

fn unsigned(id: i64) -> Result<u64, StoreError> {
    u64::try_from(id).map_err(|_| corrupt(format!("monitor name id {id} is negative")))
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_value(out: &mut Vec<u8>, v: f64) {
    let integral =
        v.fract() == 0.0 && v.abs() <= EXACT_INTEGERS && !(v == 0.0 && v.is_sign_negative());
    if integral {
        // Exact: |v| <= 2^53, so the cast loses nothing and the shift does not overflow.
        put_varint(out, zigzag(v as i64) << 1);
    } else {
        out.push(1);
        out.extend_from_slice(&v.to_bits().to_le_bytes());
    }
}

/// Reads a blob of the encoding in the module docs.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Checks the format byte.
    fn new(bytes: &'a [u8]) -> Result<Self, StoreError> {
        match bytes.first() {
            Some(&FORMAT) => Ok(Reader { bytes, at: 1 }),
            Some(other) => Err(corrupt(format!("unknown encoding {other}"))),
            None => Err(corrupt("empty")),
        }
    }

    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.at)
    }

    fn byte(&mut self) -> Result<u8, StoreError> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| corrupt("ends in the middle of a value"))?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, StoreError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("a varint longer than 10 bytes"))
    }

    fn value(&mut self) -> Result<f64, StoreError> {
        let u = self.varint()?;
        if u & 1 == 0 {
            return Ok(unzigzag(u >> 1) as f64);
        }
        if u != 1 {
            return Err(corrupt(format!("value tag {u}")));
        }
        let end = self.at + 8;
        let bytes: [u8; 8] = self
            .bytes
            .get(self.at..end)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| corrupt("ends in the middle of a value"))?;
        self.at = end;
        Ok(f64::from_bits(u64::from_le_bytes(bytes)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::sqlite::SqliteSql;
    use rusqlite::Connection;

    fn memory() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE monitor_names (id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
            .unwrap();
        conn
    }

    #[test]
    fn values_come_back_bit_for_bit() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            20_000_000.0,
            0.1,
            -3.5e-300,
            EXACT_INTEGERS,
            -EXACT_INTEGERS,
            EXACT_INTEGERS * 2.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut out = vec![FORMAT];
        for v in values {
            put_value(&mut out, v);
        }
        let mut r = Reader::new(&out).unwrap();
        for v in values {
            assert_eq!(r.value().unwrap().to_bits(), v.to_bits(), "{v}");
        }
        assert!(r.done());
        // Small integers take one byte.
        let mut small = Vec::new();
        put_value(&mut small, 7.0);
        assert_eq!(small.len(), 1);
    }

    #[test]
    fn zigzag_round_trips_the_extremes() {
        for v in [0, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
            let mut out = vec![FORMAT];
            put_varint(&mut out, zigzag(v));
            assert_eq!(unzigzag(Reader::new(&out).unwrap().varint().unwrap()), v);
        }
    }

    #[test]
    fn series_round_trip_with_names_stored_once() {
        let conn = memory();
        let mut names = Names::default();
        let series = vec![
            MonitorSeries {
                monitor: "stat".into(),
                metric: "ctxt".into(),
                unit: "count".into(),
                kind: SeriesKind::Counter,
                points: vec![
                    MonitorPoint {
                        t_ns: 575_515,
                        value: 0.0,
                    },
                    MonitorPoint {
                        t_ns: 16_750_840,
                        value: 2.0e7,
                    },
                    MonitorPoint {
                        t_ns: -5,
                        value: 0.25,
                    },
                ],
            },
            MonitorSeries {
                monitor: "pressure".into(),
                metric: "cpu.some_avg10".into(),
                unit: "pct".into(),
                kind: SeriesKind::Gauge,
                points: Vec::new(),
            },
        ];
        let blob = encode_series(&mut SqliteSql(&conn), &mut names, &series).unwrap();
        let again = encode_series(&mut SqliteSql(&conn), &mut names, &series).unwrap();
        assert_eq!(blob, again);
        let stored: i64 = conn
            .query_row("SELECT count(*) FROM monitor_names", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, 6);
        let names = Names::read(&mut SqliteSql(&conn)).unwrap();
        assert_eq!(decode_series(&names, &blob).unwrap(), series);
    }

    #[test]
    fn names_kept_between_writes_forget_what_a_rollback_took_back() {
        let mut conn = memory();
        let mut names = Names::default();
        let mut sql = SqliteSql(&conn);
        let first = names.id(&mut sql, "stat").unwrap();
        names.settle();
        let tx = conn.transaction().unwrap();
        let taken_back = names.id(&mut SqliteSql(&tx), "ctxt").unwrap();
        tx.rollback().unwrap();
        names.forget_unsettled();
        // SQLite gives the rolled-back id to the next name: the kept names must not map the
        // forgotten one to it.
        let other = names.id(&mut SqliteSql(&conn), "pressure").unwrap();
        assert_eq!(other, taken_back);
        assert_eq!(names.name(other as u64).unwrap(), "pressure");
        assert!(!names.ids.contains_key("ctxt"));
        // A name stored by another connection meanwhile is found, not stored again.
        conn.execute("INSERT INTO monitor_names (name) VALUES ('vmstat')", [])
            .unwrap();
        let vmstat = names.id(&mut SqliteSql(&conn), "vmstat").unwrap();
        assert_eq!(vmstat, conn.last_insert_rowid());
        names.settle();
        names.forget_unsettled();
        assert_eq!(names.id(&mut SqliteSql(&conn), "stat").unwrap(), first);
        assert_eq!(names.ids.len(), 3);
    }

    #[test]
    fn damage_is_an_error_not_a_panic() {
        let conn = memory();
        let mut names = Names::default();
        let series = vec![MonitorSeries {
            monitor: "m".into(),
            metric: "x".into(),
            unit: "count".into(),
            kind: SeriesKind::Gauge,
            points: vec![
                MonitorPoint {
                    t_ns: 1,
                    value: 0.5
                };
                3
            ],
        }];
        let blob = encode_series(&mut SqliteSql(&conn), &mut names, &series).unwrap();
        let names = Names::read(&mut SqliteSql(&conn)).unwrap();
        assert_eq!(decode_series(&names, &blob[..1]).unwrap(), Vec::new());
        for end in (0..blob.len()).filter(|&end| end != 1) {
            assert!(decode_series(&names, &blob[..end]).is_err(), "cut at {end}");
        }
        let mut unknown_name = blob.clone();
        unknown_name[1] = 99;
        assert!(decode_series(&names, &unknown_name).is_err());
        assert!(decode_summary(&names, &[2]).is_err());
        assert!(Reader::new(&[
            FORMAT, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
        ])
        .unwrap()
        .varint()
        .is_err());
    }
}
