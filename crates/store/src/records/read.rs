//! Reading: the session list, selectors resolved to ids, and whole sessions.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use uuid::Uuid;
use vernier_model::{
    MetricName, RunPlace, RunRecord, RunValues, Rusage, SessionInfo, StoredConfiguration,
    StoredSession,
};

use super::codec::{
    corrupt, from_json, parse_text, parse_uuid, ConfigurationRow, SessionRow,
    CONFIGURATION_COLUMNS, SESSION_COLUMNS, SESSION_HEADER_COLUMNS,
};
use super::profiles;
use super::{
    histograms, key_place, monitors, run_key, totals, Engine, RUNS_OF_CONFIGURATION,
    RUN_KEYS_PER_CONFIGURATION,
};
use crate::selector::{parse_selector, Selector};
use crate::sql::{args, Columns, Param, Sql};
use crate::{Histograms, Load, RunCursor, RunsPage, SessionHeader, SessionProgress, StoreError};

pub(crate) fn session_tags(
    tx: &mut dyn Sql,
    session: Option<&str>,
) -> Result<HashMap<String, BTreeMap<String, String>>, StoreError> {
    let rows = match session {
        Some(id) => tx.query(
            "SELECT session_id, key, value FROM session_tags WHERE session_id = $1",
            args![id],
        )?,
        None => tx.query("SELECT session_id, key, value FROM session_tags", &[])?,
    };
    let mut tags: HashMap<String, BTreeMap<String, String>> = HashMap::new();
    for row in rows {
        tags.entry(row.get(0)?)
            .or_default()
            .insert(row.get(1)?, row.get(2)?);
    }
    Ok(tags)
}

pub(crate) fn ensure_exists(
    tx: &mut dyn Sql,
    table: &'static str,
    what: &'static str,
    id: Uuid,
) -> Result<(), StoreError> {
    // `table` is one of our own names, never input.
    let sql = format!("SELECT 1 FROM {table} WHERE id = $1");
    match tx.query_opt(&sql, args![&id.to_string()])? {
        Some(_) => Ok(()),
        None => Err(StoreError::Unknown { what, id }),
    }
}

/// A session with what `load` asks for, read with `tx` (a read transaction, or the import's
/// write transaction).
pub(crate) fn load_session_in(
    tx: &mut dyn Sql,
    id: Uuid,
    load: Load,
) -> Result<StoredSession, StoreError> {
    load_session_runs_in(tx, id, load, None)
}

/// [`load_session_in`] with, when `only` is given, only the runs of the session in those
/// places: the queries of runs, values, histograms and monitor data name their keys (a few
/// hundred per query), so that the session's other runs are not read at all. Places that are
/// every key from one to another of one configuration (a part of an import compared with the
/// stored runs) are read as that range of each table instead, as a page is.
pub(crate) fn load_session_runs_in(
    tx: &mut dyn Sql,
    id: Uuid,
    load: Load,
    only: Option<&BTreeSet<RunPlace>>,
) -> Result<StoredSession, StoreError> {
    match only {
        None => load_selected(tx, id, load, Which::All),
        Some(places) => {
            // Distinct: one key per place.
            let keys = place_keys(tx, id, places.iter())?;
            let (first, last) = (keys.iter().min(), keys.iter().max());
            if let (Some(&first), Some(&last), false) = (first, last, load.profiles) {
                let one_range = usize::try_from(last - first).ok() == Some(keys.len() - 1);
                if one_range && first >> 32 == last >> 32 {
                    let which = Which::of_configuration(first >> 32, first - 1, last);
                    return load_selected(tx, id, load, which);
                }
            }
            load_selected(tx, id, load, Which::Listed(&keys))
        }
    }
}

/// The keys of session `id`'s runs in `places` (stored or not: a key that no run has selects
/// nothing), those of configurations it does not hold left out.
fn place_keys<'a>(
    tx: &mut dyn Sql,
    id: Uuid,
    places: impl Iterator<Item = &'a RunPlace>,
) -> Result<Vec<i64>, StoreError> {
    let mut configurations = HashMap::new();
    for row in tx.query(
        "SELECT id, key FROM configurations WHERE session_id = $1",
        args![&id.to_string()],
    )? {
        configurations.insert(parse_uuid(row.text(0)?)?, row.get::<i64>(1)?);
    }
    places
        .filter_map(|place| {
            let key = configurations.get(&place.configuration)?;
            Some(run_key(*key, place.warmup, place.index))
        })
        .collect()
}

/// Which runs of a session a read takes.
#[derive(Clone, Copy)]
pub(crate) enum Which<'a> {
    All,
    /// Those with these keys.
    Listed(&'a [i64]),
    /// Those whose keys are after the first and at most the second.
    Keys(i64, i64),
    /// Those of the configuration of this key whose keys are after the second and at most the
    /// third, which are keys of that configuration (see [`Which::of_configuration`]).
    OfConfiguration(i64, i64, i64),
}

impl Which<'_> {
    /// [`Which::OfConfiguration`], the range `(after, last]` cut to the keys of configuration
    /// `configuration` (its key): read as one range of each table, where [`Which::Keys`] looks
    /// each run's configuration up and each run's rows in the tables below it (an export of a
    /// configuration of 1,000,000 runs page by page did so for every run in five queries).
    fn of_configuration(configuration: i64, after: i64, last: i64) -> Self {
        let first = configuration.saturating_mul(RUN_KEYS_PER_CONFIGURATION);
        Which::OfConfiguration(
            configuration,
            after.max(first - 1),
            last.min(first.saturating_add(RUN_KEYS_PER_CONFIGURATION - 1)),
        )
    }
}

/// Session `id` with what `load` asks for and the runs `which` takes.
fn load_selected(
    tx: &mut dyn Sql,
    id: Uuid,
    load: Load,
    which: Which<'_>,
) -> Result<StoredSession, StoreError> {
    let key = id.to_string();
    let row = tx
        .query_opt(
            &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = $1"),
            args![&key],
        )?
        .ok_or(StoreError::Unknown {
            what: "session",
            id,
        })?;
    let row = SessionRow::from_row(&row)?;
    let tags = session_tags(tx, Some(&key))?
        .remove(&key)
        .unwrap_or_default();
    let info = row.decode(tags)?;

    let rows = tx.query(
        &format!(
            "SELECT {CONFIGURATION_COLUMNS} FROM configurations WHERE session_id = $1 \
             ORDER BY position"
        ),
        args![&key],
    )?;
    let mut configurations = Vec::new();
    let mut slots: HashMap<i64, usize> = HashMap::new();
    for row in rows {
        let (row_key, record) = ConfigurationRow::from_row(&row)?.decode()?;
        slots.insert(row_key, configurations.len());
        configurations.push(StoredConfiguration {
            record,
            runs: Vec::new(),
            profiles: Vec::new(),
        });
    }
    // A session's profiles come with it whole, with chosen runs, and with the first of its
    // pages of runs (`Which::Keys` from before the first key), so that reading a session page
    // by page reads each profile once.
    let first_page = matches!(which, Which::Keys(i64::MIN, _));
    let a_page = matches!(which, Which::Keys(..) | Which::OfConfiguration(..));
    if load.profiles && (first_page || !a_page) {
        for (key, profiles) in profiles::read_session(tx, &key)? {
            if let Some(&slot) = slots.get(&key) {
                configurations[slot].profiles = profiles;
            }
        }
    }
    if !load.runs {
        return Ok(StoredSession {
            info,
            configurations,
        });
    }

    // Each configuration's primary metric: one name shared by all of its runs.
    let primary: Vec<MetricName> = configurations
        .iter()
        .map(|c| MetricName::from(c.record.metric.name.as_str()))
        .collect();
    let mut keys = vec![0; configurations.len()];
    for (&key, &slot) in &slots {
        keys[slot] = key;
    }
    let configuration_ids: Vec<Uuid> = configurations.iter().map(|c| c.record.id).collect();
    let mut runs = Runs::new(keys.into_iter());
    for selection in &RunsOf::queries(&key, which) {
        let slot_facts = (&primary[..], &configuration_ids[..]);
        read_runs(tx, selection, load, &slots, slot_facts, &mut runs)?;
    }
    for (configuration, slot) in configurations.iter_mut().zip(runs.into_ordered()) {
        configuration.runs = slot;
    }
    Ok(StoredSession {
        info,
        configurations,
    })
}

/// How many run ids one query names when a read takes chosen runs: far below the parameter
/// limits of both engines (SQLite's 32,766, PostgreSQL's 65,535), and few enough that the
/// engines look each one up by its key.
const RUNS_PER_QUERY: usize = 500;

/// The runs of session `session` (its id as stored) that one query takes.
pub(crate) struct RunsOf<'a> {
    pub(crate) session: &'a str,
    pub(crate) which: Which<'a>,
}

impl<'a> RunsOf<'a> {
    /// The selections of one query each that together take the runs of `session` that
    /// `which` takes, at most [`RUNS_PER_QUERY`] ids a query.
    pub(crate) fn queries(session: &'a str, which: Which<'a>) -> Vec<RunsOf<'a>> {
        match which {
            Which::Listed(keys) => keys
                .chunks(RUNS_PER_QUERY)
                .map(|chunk| RunsOf {
                    session,
                    which: Which::Listed(chunk),
                })
                .collect(),
            which => vec![RunsOf { session, which }],
        }
    }

    /// The tables `runs r` and `configurations c` of a query of these runs, in the order
    /// SQLite must join them: a CROSS JOIN keeps its left table outer
    /// (https://www.sqlite.org/optoverview.html#crossjoin; PostgreSQL plans it as any inner
    /// join). A whole session is read from its configurations to their runs; chosen runs are
    /// looked up by their keys, rather than found among all of the
    /// session's runs, which SQLite would otherwise do for each query of 500 ids. Join
    /// further tables with CROSS JOIN after these, and [`RunsOf::condition`] in the WHERE.
    pub(crate) fn tables(&self) -> &'static str {
        match self.which {
            Which::All | Which::OfConfiguration(..) => "configurations c CROSS JOIN runs r",
            Which::Listed(_) | Which::Keys(..) => "runs r CROSS JOIN configurations c",
        }
    }

    /// The condition that joins [`RunsOf::tables`] and selects these runs, with
    /// [`RunsOf::params`].
    pub(crate) fn condition(&self) -> String {
        match self.which {
            Which::All => format!("{RUNS_OF_CONFIGURATION} AND c.session_id = $1"),
            Which::Keys(..) => "r.key > $2 AND r.key <= $3 AND c.key = r.configuration_key \
                 AND c.session_id = $1"
                .to_string(),
            Which::OfConfiguration(..) => {
                "c.key = $4 AND c.session_id = $1 AND r.key > $2 AND r.key <= $3".to_string()
            }
            Which::Listed(keys) => {
                let list: Vec<String> = (2..keys.len() + 2).map(|i| format!("${i}")).collect();
                format!(
                    "r.key IN ({}) AND c.key = r.configuration_key AND c.session_id = $1",
                    list.join(", ")
                )
            }
        }
    }

    /// The tables and the condition of a query of the rows of a table below these runs
    /// (values, histograms, monitor data), `run_key` naming its column of the run's key (say
    /// `v.run_key`): join that table after the tables with CROSS JOIN, with
    /// [`RunsOf::params`]. A whole session's rows are the ranges of its configurations' keys
    /// in that table's own key, read without walking the runs again (a session of a million
    /// runs of one value has none to find there); chosen runs' through the runs.
    pub(crate) fn below(&self, run_key: &str) -> (&'static str, String) {
        match self.which {
            Which::All => (
                "configurations c",
                format!(
                    "{run_key} >= c.key * 4294967296 AND {run_key} < (c.key + 1) * 4294967296 \
                     AND c.session_id = $1"
                ),
            ),
            Which::Listed(_) | Which::Keys(..) => (
                self.tables(),
                format!("{run_key} = r.key AND {}", self.condition()),
            ),
            Which::OfConfiguration(..) => (
                "configurations c",
                format!("c.key = $4 AND c.session_id = $1 AND {run_key} > $2 AND {run_key} <= $3"),
            ),
        }
    }

    /// The values of the parameters of [`RunsOf::condition`].
    pub(crate) fn params(&self) -> Vec<Param<'_>> {
        let mut params = vec![Param::Text(self.session)];
        match self.which {
            Which::All => {}
            Which::Listed(keys) => params.extend(keys.iter().map(|&key| Param::Int(key))),
            Which::Keys(after, last) => params.extend([Param::Int(after), Param::Int(last)]),
            Which::OfConfiguration(configuration, after, last) => params.extend([
                Param::Int(after),
                Param::Int(last),
                Param::Int(configuration),
            ]),
        }
        params
    }
}

/// Where a run goes in its configuration's execution order: start time, warmups first, index
/// (with the kind, the run's place and key, [`run_key`]).
fn run_order(run: &RunRecord) -> (i64, bool, u32) {
    (run.started_at_ns, !run.warmup, run.index)
}

/// The runs read so far, each moved once into its configuration's list (its slot). Nothing
/// else is kept per run: its key and its place in execution order follow from its fields.
pub(crate) struct Runs {
    slots: Vec<SlotRuns>,
    /// Where the run last joined to a record is (slot, position): the rows below the runs come
    /// by run key, as the runs did, so the next record is most often that run's or the next.
    last: Option<(usize, usize)>,
    /// Where each key is (slot, position), made when a record is to be joined to a run of a
    /// slot not in key order (runs chosen by their ids, say).
    by_key: Option<HashMap<i64, (usize, usize)>>,
    /// Metric names other than the primary ones, shared by the runs that report them.
    names: HashMap<String, MetricName>,
}

struct SlotRuns {
    /// The key of the slot's configuration.
    configuration_key: i64,
    runs: Vec<RunRecord>,
    /// Whether `runs` are in the order of their keys (kind, then index: [`key_place`]), so that
    /// a run is found by binary search.
    in_key_order: bool,
}

/// What orders the runs of one configuration as their keys do.
fn key_order(run: &RunRecord) -> (bool, u32) {
    (run.warmup, run.index)
}

impl Runs {
    /// Slots for the configurations of these keys, in this order.
    fn new(configuration_keys: impl Iterator<Item = i64>) -> Self {
        Runs {
            slots: configuration_keys
                .map(|configuration_key| SlotRuns {
                    configuration_key,
                    runs: Vec::new(),
                    in_key_order: true,
                })
                .collect(),
            last: None,
            by_key: None,
            names: HashMap::new(),
        }
    }

    fn push(&mut self, slot: usize, run: RunRecord) {
        let slot = &mut self.slots[slot];
        if slot
            .runs
            .last()
            .is_some_and(|last| key_order(last) >= key_order(&run))
        {
            slot.in_key_order = false;
        }
        slot.runs.push(run);
        self.by_key = None;
    }

    fn len(&self) -> usize {
        self.slots.iter().map(|s| s.runs.len()).sum()
    }

    /// The run of key `key`: the last one found or the one after it, else found by binary
    /// search in its slot, else (a slot out of key order) by a map of every key.
    pub(crate) fn get(&mut self, key: i64) -> Result<&mut RunRecord, StoreError> {
        let (configuration_key, warmup, index) = key_place(key);
        let wanted = (warmup, index);
        let near = self
            .last
            .filter(|&(slot, _)| self.slots[slot].configuration_key == configuration_key)
            .and_then(|(slot, at)| {
                let runs = &self.slots[slot].runs;
                (at..runs.len().min(at + 2))
                    .find(|&at| key_order(&runs[at]) == wanted)
                    .map(|at| (slot, at))
            });
        let found = match near {
            Some(found) => Some(found),
            None => self.find(key, configuration_key, wanted)?,
        };
        let (slot, at) = found
            .ok_or_else(|| corrupt(format!("a record of run key {key}, which is not read")))?;
        self.last = Some((slot, at));
        Ok(&mut self.slots[slot].runs[at])
    }

    /// Where the run of key `key` (of configuration `configuration_key`, kind and index
    /// `wanted`) is, not near the last one found.
    fn find(
        &mut self,
        key: i64,
        configuration_key: i64,
        wanted: (bool, u32),
    ) -> Result<Option<(usize, usize)>, StoreError> {
        let Some(slot) = self
            .slots
            .iter()
            .position(|s| s.configuration_key == configuration_key)
        else {
            return Ok(None);
        };
        if self.slots[slot].in_key_order {
            let runs = &self.slots[slot].runs;
            return Ok(runs
                .binary_search_by_key(&wanted, key_order)
                .ok()
                .map(|at| (slot, at)));
        }
        let slots = &self.slots;
        let by_key = match &mut self.by_key {
            Some(by_key) => by_key,
            None => {
                let mut by_key = HashMap::with_capacity(slots.iter().map(|s| s.runs.len()).sum());
                for (slot, runs) in slots.iter().enumerate() {
                    for (at, run) in runs.runs.iter().enumerate() {
                        let key = run_key(runs.configuration_key, run.warmup, run.index)?;
                        by_key.insert(key, (slot, at));
                    }
                }
                self.by_key.insert(by_key)
            }
        };
        Ok(by_key.get(&key).copied())
    }

    /// `metric` as a name shared with the other runs that report it.
    fn name(&mut self, metric: &str) -> MetricName {
        if let Some(name) = self.names.get(metric) {
            return name.clone();
        }
        let name = MetricName::from(metric);
        self.names.insert(metric.to_string(), name.clone());
        name
    }

    /// Each slot's runs in execution order. The rows come by key, each kind (measured,
    /// warmup) in the order of its indexes, so a slot is reordered, in place, only when it
    /// has both kinds or its times are not in the order of its indexes.
    fn into_ordered(self) -> impl Iterator<Item = Vec<RunRecord>> {
        self.slots.into_iter().map(|SlotRuns { mut runs, .. }| {
            if !runs.is_sorted_by_key(run_order) {
                let mut permutation: Vec<usize> = (0..runs.len()).collect();
                permutation.sort_unstable_by_key(|&at| run_order(&runs[at]));
                permute(&mut runs, &mut permutation);
            }
            runs
        })
    }
}

/// Reorders `items` so that position k holds what was at `permutation[k]`, by following each
/// cycle of the permutation with swaps (each item moves once; `permutation` is used up).
fn permute<T>(items: &mut [T], permutation: &mut [usize]) {
    for start in 0..items.len() {
        let mut at = start;
        while permutation[at] != at {
            let from = permutation[at];
            permutation[at] = at;
            if from == start {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

/// The columns of a run that [`read_runs`] decodes, in its order.
/// The key holds the run's place (its configuration's key, kind and index: [`key_place`]).
/// The stored columns of `runs` (schema version 16): the generated ones are computed here from
/// the same columns, where SQLite would compute them for every row it hands over (a session of
/// 1,000,000 runs spent a tenth of its read in them).
const RUN_COLUMNS: &str = "r.key, r.round, r.preceding_executions_stored, r.started_at_ns, \
     r.elapsed_ns, r.value, r.user_cpu_ns, r.system_cpu_ns, r.voluntary_cs, r.involuntary_cs, \
     r.max_rss_bytes, r.foreign_cpu_ns, r.controller_cpu_ns, r.load_cpu_ns, \
     r.setup_steps_stored, r.setup_changed_stored";

/// Reads the runs `selection` takes with what `load` asks for, each decoded from the row as the
/// engine reads it, and appends them to `runs` with their order and their configuration's slot
/// in `slots` (`primary` the name of each slot's primary metric, whose value is the run's
/// column `value`; `configuration_ids` each slot's configuration's id, from which a run's place
/// gives its id unless `run_ids` holds another).
fn read_runs(
    tx: &mut dyn Sql,
    selection: &RunsOf<'_>,
    load: Load,
    slots: &HashMap<i64, usize>,
    (primary, configuration_ids): (&[MetricName], &[Uuid]),
    runs: &mut Runs,
) -> Result<(), StoreError> {
    let (tables, condition) = (selection.tables(), selection.condition());
    let params = selection.params();
    let first = runs.len();
    tx.query_each(
        &format!("SELECT {RUN_COLUMNS} FROM {tables} WHERE {condition}"),
        &params,
        &mut |r| {
            let key: i64 = r.get(0)?;
            let (configuration_key, warmup, index) = key_place(key);
            let slot = slots
                .get(&configuration_key)
                .copied()
                .ok_or_else(|| corrupt(format!("run key {key} of unknown configuration")))?;
            let values = match r.get::<Option<f64>>(5)? {
                Some(value) => RunValues::one(primary[slot].clone(), value),
                None => RunValues::new(),
            };
            // Most runs have no setup steps (null): no parser for those.
            let setup_steps = match r.optional_text(14)? {
                None | Some("[]") => Vec::new(),
                Some(text) => from_json!("setup steps", text)?,
            };
            let setup_changed = match r.optional_text(15)? {
                None | Some("[]") => Vec::new(),
                Some(text) => from_json!("setup changed", text)?,
            };
            let started_at_ns: i64 = r.get(3)?;
            let ended_at_ns = started_at_ns
                .checked_add(r.get(4)?)
                .ok_or_else(|| corrupt(format!("run key {key} ends after the year 2262")))?;
            let place = RunPlace {
                configuration: configuration_ids[slot],
                warmup,
                index,
            };
            let run = RunRecord {
                // Another id, where there is one, comes from `run_ids` below.
                id: place.derived_id(),
                index,
                warmup,
                round: r.get(1)?,
                preceding_executions: r.get::<Option<u32>>(2)?.unwrap_or(index),
                started_at_ns,
                ended_at_ns,
                values,
                rusage: Rusage {
                    user_cpu_ns: r.get(6)?,
                    system_cpu_ns: r.get(7)?,
                    voluntary_cs: r.get(8)?,
                    involuntary_cs: r.get(9)?,
                    max_rss_bytes: r.get(10)?,
                },
                foreign_cpu_ns: r.get(11)?,
                controller_cpu_ns: r.get(12)?,
                load_cpu_ns: r.get(13)?,
                monitors: None,
                setup_steps,
                setup_changed,
                histograms: Vec::new(),
            };
            runs.push(slot, run);
            Ok(())
        },
    )?;
    if runs.len() == first {
        return Ok(());
    }
    // The ids that are not those the runs' places give (runs stored before schema version 16,
    // imported ones made otherwise): most sessions have none.
    let (tables, condition) = selection.below("i.run_key");
    tx.query_each(
        &format!("SELECT i.run_key, i.id FROM {tables} CROSS JOIN run_ids i WHERE {condition}"),
        &params,
        &mut |row| {
            runs.get(row.get(0)?)?.id = row.get(1)?;
            Ok(())
        },
    )?;
    // The other metrics than the primary one (a benchmark's secondary metrics). Rows of one
    // run that come together (SQLite reads them in the order of the table's key) are added to
    // it at once; rows that come apart are added part by part, to the same effect. The runs of
    // a configuration report the same metrics: the name of a run's n-th row is most often the
    // n-th of the run before, taken without a look-up.
    let mut pending: Option<i64> = None;
    let mut values: Vec<(MetricName, f64)> = Vec::new();
    let mut recent: Vec<MetricName> = Vec::new();
    let (tables, condition) = selection.below("v.run_key");
    tx.query_each(
        &format!(
            "SELECT v.run_key, v.metric, v.value FROM {tables} CROSS JOIN run_values v \
             WHERE {condition}"
        ),
        &params,
        &mut |row| {
            let key: i64 = row.get(0)?;
            if let Some(run) = pending.filter(|&run| run != key) {
                runs.get(run)?.values.extend(values.drain(..));
            }
            pending = Some(key);
            let value: f64 = row.get(2)?;
            let metric = row.text(1)?;
            let at = values.len();
            let name = match recent.get(at) {
                Some(name) if **name == *metric => name.clone(),
                _ => {
                    let name = runs.name(metric);
                    recent.truncate(at);
                    recent.push(name.clone());
                    name
                }
            };
            values.push((name, value));
            Ok(())
        },
    )?;
    if let Some(run) = pending {
        runs.get(run)?.values.extend(values.drain(..));
    }
    if load.histograms != Histograms::No {
        let buckets = load.histograms == Histograms::Whole;
        histograms::read_runs(tx, selection, buckets, runs)?;
    }
    if load.monitors {
        for (key, data) in monitors::read_runs(tx, selection)? {
            runs.get(key)?.monitors = Some(Box::new(data));
        }
    }
    Ok(())
}

pub(crate) fn sessions(store: &impl Engine) -> Result<Vec<SessionInfo>, StoreError> {
    every_session(store, SESSION_COLUMNS, SessionRow::decode)
}

pub(crate) fn session_headers(store: &impl Engine) -> Result<Vec<SessionHeader>, StoreError> {
    every_session(store, SESSION_HEADER_COLUMNS, SessionRow::decode_header)
}

/// Every session, oldest first: the `columns` of its row (read by [`SessionRow::from_row`])
/// with its tags, decoded by `decode`.
fn every_session<T>(
    store: &impl Engine,
    columns: &str,
    decode: impl Fn(SessionRow, BTreeMap<String, String>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    store.read(|tx| {
        let mut tags = session_tags(tx, None)?;
        let rows = tx.query(
            &format!("SELECT {columns} FROM sessions ORDER BY started_at_ns, rowid"),
            &[],
        )?;
        let mut sessions = Vec::new();
        for row in rows {
            let row = SessionRow::from_row(&row)?;
            let tags = tags.remove(&row.id).unwrap_or_default();
            sessions.push(decode(row, tags)?);
        }
        Ok(sessions)
    })
}

pub(crate) fn resolve(store: &impl Engine, selector: &str) -> Result<Uuid, StoreError> {
    let parsed = parse_selector(selector)?;
    let not_found = |detail: String| StoreError::NotFound {
        selector: selector.to_string(),
        detail,
    };
    store.read(|tx| match parsed.clone() {
        Selector::Latest(back) => {
            // Ties in start time (coarse clocks, imports) fall back to insertion order.
            let back = i64::try_from(back).unwrap_or(i64::MAX);
            let id = tx.query_opt(
                "SELECT id FROM sessions ORDER BY started_at_ns DESC, rowid DESC \
                 LIMIT 1 OFFSET $1",
                args![back],
            )?;
            match id {
                Some(row) => parse_uuid(&row.get::<String>(0)?),
                None => {
                    let count: i64 = tx.query_one("SELECT count(*) FROM sessions", &[])?.get(0)?;
                    Err(not_found(format!("the database holds {count} session(s)")))
                }
            }
        }
        Selector::Id(id) => {
            ensure_exists(tx, "sessions", "session", id)
                .map_err(|_| not_found("no session has this id".to_string()))?;
            Ok(id)
        }
        Selector::Prefix(digits) => {
            // The prefix holds only hex digits, so it has no LIKE wildcards.
            let rows = tx.query(
                "SELECT id FROM sessions WHERE replace(id, '-', '') LIKE $1",
                args![&format!("{digits}%")],
            )?;
            let ids = rows
                .iter()
                .map(|r| r.get::<String>(0))
                .collect::<Result<Vec<_>, _>>()?;
            match ids.as_slice() {
                [id] => parse_uuid(id),
                [] => Err(not_found(format!("no session id starts with {digits}"))),
                _ => Err(StoreError::Ambiguous {
                    selector: selector.to_string(),
                    count: ids.len(),
                }),
            }
        }
    })
}

/// What session `id` holds of what grows while it is recorded, read with `tx`: its
/// configurations with how each stopped, and the places of its runs, or only those among
/// `only`. Nothing for a session not stored.
pub(crate) fn session_progress_in(
    tx: &mut dyn Sql,
    id: Uuid,
    only: Option<&[RunPlace]>,
) -> Result<SessionProgress, StoreError> {
    let key = id.to_string();
    let mut progress = SessionProgress::default();
    let mut ids = HashMap::new();
    for row in tx.query(
        "SELECT id, stop_reason, key FROM configurations WHERE session_id = $1",
        args![&key],
    )? {
        let stop_reason: Option<String> = row.get(1)?;
        let configuration = parse_uuid(&row.get::<String>(0)?)?;
        ids.insert(row.get::<i64>(2)?, configuration);
        progress.configurations.insert(
            configuration,
            stop_reason
                .map(|text| parse_text("stop reason", &text))
                .transpose()?,
        );
    }
    let listed = match only {
        Some(places) => Some(place_keys(tx, id, places.iter())?),
        None => None,
    };
    let which = listed.as_deref().map_or(Which::All, Which::Listed);
    for selection in RunsOf::queries(&key, which) {
        tx.query_each(
            &format!(
                "SELECT r.key FROM {} WHERE {}",
                selection.tables(),
                selection.condition()
            ),
            &selection.params(),
            &mut |row| {
                let (configuration_key, warmup, index) = key_place(row.get(0)?);
                let configuration = *ids.get(&configuration_key).ok_or_else(|| {
                    corrupt(format!("run of unknown configuration {configuration_key}"))
                })?;
                progress.runs.insert(RunPlace {
                    configuration,
                    warmup,
                    index,
                });
                Ok(())
            },
        )?;
    }
    Ok(progress)
}

pub(crate) fn session_progress(
    store: &impl Engine,
    id: Uuid,
) -> Result<SessionProgress, StoreError> {
    store.read(|tx| session_progress_in(tx, id, None))
}

pub(crate) fn load_session(
    store: &impl Engine,
    id: Uuid,
    load: Load,
) -> Result<StoredSession, StoreError> {
    store.read(|tx| load_session_in(tx, id, load))
}

pub(crate) fn load_session_runs(
    store: &impl Engine,
    id: Uuid,
    load: Load,
    runs: &BTreeSet<RunPlace>,
) -> Result<StoredSession, StoreError> {
    store.read(|tx| load_session_runs_in(tx, id, load, Some(runs)))
}

/// [`crate::Store::load_session_page`].
pub(crate) fn load_session_page(
    store: &impl Engine,
    id: Uuid,
    load: Load,
    after: Option<RunCursor>,
    limit: usize,
) -> Result<(StoredSession, Option<RunCursor>), StoreError> {
    let after = after.map_or(i64::MIN, |c| c.0);
    let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
    store.read(|tx| {
        let (last, keys) = page_keys(tx, id, after, limit)?;
        let session = load_selected(tx, id, load, Which::Keys(after, last))?;
        let next = (keys == limit).then_some(RunCursor(last));
        Ok((session, next))
    })
}

/// The keys of a page of session `id`'s runs: its next at most `limit` runs after key `after`
/// in the order of their keys, found walking the runs from there (a range of the table's key,
/// in its order). Returns the last key of the page (`after` for none) and how many it holds.
fn page_keys(tx: &mut dyn Sql, id: Uuid, after: i64, limit: i64) -> Result<(i64, i64), StoreError> {
    let mut keys = 0i64;
    let mut last = after;
    tx.query_each(
        "SELECT r.key FROM runs r CROSS JOIN configurations c WHERE r.key > $2 \
         AND c.key = r.configuration_key AND c.session_id = $1 ORDER BY r.key LIMIT $3",
        args![&id.to_string(), after, limit],
        &mut |row| {
            keys += 1;
            last = row.get(0)?;
            Ok(())
        },
    )?;
    Ok((last, keys))
}

/// The largest index of a run ([`run_key`]).
const MAX_RUN_INDEX: u32 = (1 << 31) - 1;

/// The runs of one kind (measured runs or warmups) of a configuration still to hand on in
/// [`for_each_run_page`]: the keys after `after` up to `last`, and those read but not yet
/// handed on.
struct KindOfRuns {
    /// The key of the configuration.
    configuration_key: i64,
    after: i64,
    last: i64,
    read: VecDeque<RunRecord>,
}

impl KindOfRuns {
    /// Reads the next at most `limit` runs of this kind, in the order of their keys, if
    /// none is left of the previous ones.
    fn refill(
        &mut self,
        store: &impl Engine,
        session: Uuid,
        configuration: Uuid,
        load: Load,
        limit: i64,
    ) -> Result<(), StoreError> {
        if !self.read.is_empty() || self.after >= self.last {
            return Ok(());
        }
        let (after, last) = (self.after, self.last);
        let (end, runs) = store.read(|tx| {
            let mut end = after;
            tx.query_each(
                "SELECT key FROM runs WHERE key > $1 AND key <= $2 ORDER BY key LIMIT $3",
                args![after, last, limit],
                &mut |row| {
                    end = row.get(0)?;
                    Ok(())
                },
            )?;
            let which = Which::of_configuration(self.configuration_key, after, end);
            let session = load_selected(tx, session, load, which)?;
            Ok((end, runs_of(session, configuration)))
        })?;
        // Nothing left (runs deleted meanwhile): this kind is done.
        self.after = if end == after { last } else { end };
        self.read = runs.into();
        Ok(())
    }
}

/// The runs of configuration `configuration` in `session`, taken out of it.
fn runs_of(session: StoredSession, configuration: Uuid) -> Vec<RunRecord> {
    session
        .configurations
        .into_iter()
        .find(|c| c.record.id == configuration)
        .map(|c| c.runs)
        .unwrap_or_default()
}

/// [`crate::Store::for_each_run_page`]. Each kind of runs (measured, warmup) is a range of keys
/// in the order of their indexes ([`run_key`]); when each starts in time order, as vernier
/// records them, execution order is the merge of the two by start time, warmups first, index
/// (the order of [`Runs::into_ordered`]), read page by page from both ranges.
pub(crate) fn for_each_run_page(
    store: &impl Engine,
    session: Uuid,
    configuration: Uuid,
    load: Load,
    limit: usize,
    each: &mut dyn FnMut(Vec<RunRecord>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let limit = limit.max(1);
    let load = Load {
        profiles: false,
        ..load
    };
    // The keys of each kind stored now, and whether each kind starts in time order.
    let (mut kinds, in_order) = store.read(|tx| {
        let key: i64 = tx
            .query_opt(
                "SELECT key FROM configurations WHERE id = $1 AND session_id = $2",
                args![&configuration.to_string(), &session.to_string()],
            )?
            .ok_or(StoreError::Unknown {
                what: "configuration",
                id: configuration,
            })?
            .get(0)?;
        let mut kinds = Vec::new();
        let mut in_order = true;
        for warmup in [true, false] {
            let first = run_key(key, warmup, 0)?;
            let mut last = None;
            let mut previous = i64::MIN;
            tx.query_each(
                "SELECT key, started_at_ns FROM runs WHERE key >= $1 AND key <= $2 ORDER BY key",
                args![first, run_key(key, warmup, MAX_RUN_INDEX)?],
                &mut |row| {
                    let started: i64 = row.get(1)?;
                    in_order &= started >= previous;
                    previous = started;
                    last = Some(row.get::<i64>(0)?);
                    Ok(())
                },
            )?;
            if let Some(last) = last {
                kinds.push(KindOfRuns {
                    configuration_key: key,
                    after: first - 1,
                    last,
                    read: VecDeque::new(),
                });
            }
        }
        Ok((kinds, in_order))
    })?;
    if !in_order {
        let after = kinds.iter().map(|k| k.after).min();
        let last = kinds.iter().map(|k| k.last).max();
        let configuration_key = kinds.first().map(|k| k.configuration_key);
        if let (Some(key), Some(after), Some(last)) = (configuration_key, after, last) {
            let runs = store.read(|tx| {
                let which = Which::of_configuration(key, after, last);
                let whole = load_selected(tx, session, load, which)?;
                Ok(runs_of(whole, configuration))
            })?;
            each(runs)?;
        }
        return Ok(());
    }
    let per_read = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut page = Vec::with_capacity(limit);
    loop {
        for kind in &mut kinds {
            kind.refill(store, session, configuration, load, per_read)?;
        }
        let next = kinds
            .iter()
            .enumerate()
            .filter_map(|(at, kind)| {
                let run = kind.read.front()?;
                Some(((run.started_at_ns, !run.warmup, run.index), at))
            })
            .min();
        let Some(run) = next.and_then(|(_, at)| kinds[at].read.pop_front()) else {
            break;
        };
        page.push(run);
        if page.len() == limit {
            each(std::mem::replace(&mut page, Vec::with_capacity(limit)))?;
        }
    }
    if !page.is_empty() {
        each(page)?;
    }
    Ok(())
}

/// Session `id` with the runs `which` takes, as a copy into another store reads it
/// ([`crate::RunsPage`]): everything stored, the histograms as stored, not decoded.
fn load_copied(tx: &mut dyn Sql, id: Uuid, which: Which<'_>) -> Result<RunsPage, StoreError> {
    let load = Load {
        histograms: Histograms::No,
        ..Load::ALL
    };
    let session = load_selected(tx, id, load, which)?;
    let key = id.to_string();
    let mut histograms = histograms::StoredHistograms::new();
    for selection in RunsOf::queries(&key, which) {
        histograms.extend(histograms::read_stored(tx, &selection)?);
    }
    Ok(RunsPage {
        session,
        histograms,
        totals: totals::read_stored(tx, &key)?,
    })
}

/// [`crate::Store::histogram_totals`].
pub(crate) fn histogram_totals(
    store: &impl Engine,
    id: Uuid,
) -> Result<Vec<crate::HistogramTotal>, StoreError> {
    store.read(|tx| totals::read(tx, &id.to_string()))
}

/// [`crate::Store::copy_page`].
pub(crate) fn copy_page(
    store: &impl Engine,
    id: Uuid,
    after: Option<RunCursor>,
    limit: usize,
) -> Result<(RunsPage, Option<RunCursor>), StoreError> {
    let after = after.map_or(i64::MIN, |c| c.0);
    let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
    store.read(|tx| {
        let (last, keys) = page_keys(tx, id, after, limit)?;
        let page = load_copied(tx, id, Which::Keys(after, last))?;
        Ok((page, (keys == limit).then_some(RunCursor(last))))
    })
}

/// [`crate::Store::copy_runs`].
pub(crate) fn copy_runs(
    store: &impl Engine,
    id: Uuid,
    runs: &BTreeSet<RunPlace>,
) -> Result<RunsPage, StoreError> {
    store.read(|tx| {
        let keys = place_keys(tx, id, runs.iter())?;
        load_copied(tx, id, Which::Listed(&keys))
    })
}

pub(crate) fn kernel_config(
    store: &impl Engine,
    sha256: &str,
) -> Result<Option<String>, StoreError> {
    store.read(|tx| {
        tx.query_opt(
            "SELECT text FROM kernel_configs WHERE sha256 = $1",
            args![sha256],
        )?
        .map(|r| r.get(0))
        .transpose()
    })
}

pub(crate) fn find_sessions_by_tags(
    store: &impl Engine,
    tags: &[(String, String)],
) -> Result<Vec<Uuid>, StoreError> {
    // Duplicates would break nothing in the query, but the set keeps it short.
    let wanted: BTreeSet<&(String, String)> = tags.iter().collect();
    let mut sql = String::from("SELECT id FROM sessions");
    let mut bound: Vec<Param<'_>> = Vec::new();
    for (i, (key, value)) in wanted.iter().enumerate() {
        sql.push_str(if i == 0 { " WHERE " } else { " AND " });
        // Each term is an index lookup on session_tags (key, value, session_id).
        sql.push_str(&format!(
            "id IN (SELECT session_id FROM session_tags WHERE key = ${} AND value = ${})",
            2 * i + 1,
            2 * i + 2
        ));
        bound.push(Param::Text(key));
        bound.push(Param::Text(value));
    }
    sql.push_str(" ORDER BY started_at_ns, rowid");
    store.read(|tx| {
        tx.query(&sql, &bound)?
            .iter()
            .map(|r| parse_uuid(&r.get::<String>(0)?))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn permute_moves_each_item_to_its_place() {
        // Cycles of one, two and three items, and position k takes what was at permutation[k].
        let mut items = vec!['a', 'b', 'c', 'd', 'e', 'f'];
        let mut permutation = vec![0, 2, 1, 5, 3, 4];
        permute(&mut items, &mut permutation);
        assert_eq!(items, ['a', 'c', 'b', 'f', 'd', 'e']);
        let mut reversed: Vec<u32> = (0..7).collect();
        let mut permutation: Vec<usize> = (0..7).rev().collect();
        permute(&mut reversed, &mut permutation);
        assert_eq!(reversed, [6, 5, 4, 3, 2, 1, 0]);
    }
}
