//! Reading: the session list, selectors resolved to ids, and whole sessions.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use uuid::Uuid;
use vernier_model::{RunRecord, Rusage, SessionInfo, StoredConfiguration, StoredSession};

use super::codec::{
    corrupt, from_json, parse_text, parse_uuid, ConfigurationRow, SessionRow,
    CONFIGURATION_COLUMNS, SESSION_COLUMNS, SESSION_HEADER_COLUMNS,
};
use super::{histograms, monitors, Engine};
use crate::selector::{parse_selector, Selector};
use crate::sql::{args, Param, Sql};
use crate::{Load, SessionHeader, SessionProgress, StoreError};

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

/// [`load_session_in`] with, when `only` is given, only the runs of the session among `only`:
/// the queries of runs, values, histograms and monitor data name those ids (a few hundred per
/// query), so that the session's other runs are not read at all.
pub(crate) fn load_session_runs_in(
    tx: &mut dyn Sql,
    id: Uuid,
    load: Load,
    only: Option<&BTreeSet<Uuid>>,
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
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for row in rows {
        let (row_id, record) = ConfigurationRow::from_row(&row)?.decode()?;
        by_id.insert(row_id, configurations.len());
        configurations.push(StoredConfiguration {
            record,
            runs: Vec::new(),
        });
    }
    if !load.runs {
        return Ok(StoredSession {
            info,
            configurations,
        });
    }

    let only: Option<Vec<String>> = only.map(|ids| ids.iter().map(Uuid::to_string).collect());
    let mut runs = Vec::new();
    for selection in &RunsOf::queries(&key, only.as_deref()) {
        read_runs(tx, selection, load, &by_id, &mut runs)?;
    }
    // Execution order: by start time; a warmup and a measured run that started in the
    // same nanosecond (a coarse clock) keep warmup first, then index order, then the order of
    // insertion (`rowid`, a column of PostgreSQL's tables too: docs/schema.md). The runs of
    // one query come in this order already; a stable sort only merges those of several.
    runs.sort_by_key(|(order, _, _)| *order);
    for (_, slot, run) in runs {
        configurations[slot].runs.push(run);
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

/// The runs of session `session` (its id as stored) that a read takes: all of them, or those
/// among `only`.
pub(crate) struct RunsOf<'a> {
    pub(crate) session: &'a str,
    pub(crate) only: Option<&'a [String]>,
}

impl<'a> RunsOf<'a> {
    /// The selections of one query each that together take the runs of `session` among
    /// `only` (all of them without it), at most [`RUNS_PER_QUERY`] ids a query.
    pub(crate) fn queries(session: &'a str, only: Option<&'a [String]>) -> Vec<RunsOf<'a>> {
        match only {
            None => vec![RunsOf {
                session,
                only: None,
            }],
            Some(ids) => ids
                .chunks(RUNS_PER_QUERY)
                .map(|chunk| RunsOf {
                    session,
                    only: Some(chunk),
                })
                .collect(),
        }
    }

    /// The condition that selects these runs in a query of `runs r` joined to
    /// `configurations c`, with [`RunsOf::params`].
    pub(crate) fn condition(&self) -> String {
        match self.only {
            None => "c.session_id = $1".to_string(),
            Some(ids) => {
                let list: Vec<String> = (2..ids.len() + 2).map(|i| format!("${i}")).collect();
                format!("c.session_id = $1 AND r.id IN ({})", list.join(", "))
            }
        }
    }

    /// The values of the parameters of [`RunsOf::condition`].
    pub(crate) fn params(&self) -> Vec<Param<'_>> {
        std::iter::once(Param::Text(self.session))
            .chain(
                self.only
                    .unwrap_or_default()
                    .iter()
                    .map(|id| Param::Text(id)),
            )
            .collect()
    }
}

/// Where a run goes in its session's execution order (start time, warmups first, index,
/// insertion) and the configuration (its slot) it belongs to.
type RunOrder = (i64, bool, u32, i64);

/// Reads the runs `selection` takes with what `load` asks for, and appends them to `runs` with
/// their order and their configuration's slot in `by_id`.
fn read_runs(
    tx: &mut dyn Sql,
    selection: &RunsOf<'_>,
    load: Load,
    by_id: &HashMap<String, usize>,
    runs: &mut Vec<(RunOrder, usize, RunRecord)>,
) -> Result<(), StoreError> {
    let condition = selection.condition();
    let params = selection.params();
    let mut values: HashMap<String, BTreeMap<String, f64>> = HashMap::new();
    let rows = tx.query(
        &format!(
            "SELECT v.run_id, v.metric, v.value FROM run_values v \
             JOIN runs r ON r.id = v.run_id \
             JOIN configurations c ON c.id = r.configuration_id \
             WHERE {condition}"
        ),
        &params,
    )?;
    for row in rows {
        values
            .entry(row.get(0)?)
            .or_default()
            .insert(row.get(1)?, row.get(2)?);
    }

    let rows = tx.query(
        &format!(
            "SELECT r.id, r.configuration_id, r.idx, r.warmup, r.round, \
             r.preceding_executions, r.started_at_ns, r.ended_at_ns, r.user_cpu_ns, \
             r.system_cpu_ns, r.voluntary_cs, r.involuntary_cs, r.max_rss_bytes, \
             r.foreign_cpu_ns, r.controller_cpu_ns, r.setup_steps, r.load_cpu_ns, r.rowid, \
             r.setup_changed \
             FROM runs r JOIN configurations c ON c.id = r.configuration_id \
             WHERE {condition} \
             ORDER BY r.started_at_ns, r.warmup DESC, r.idx, r.rowid"
        ),
        &params,
    )?;
    let mut monitors = if load.monitors {
        monitors::read_runs(tx, selection)?
    } else {
        HashMap::new()
    };
    let mut histograms = if load.histograms {
        histograms::read_runs(tx, selection)?
    } else {
        HashMap::new()
    };
    for r in rows {
        let run_id: String = r.get(0)?;
        let configuration_id: String = r.get(1)?;
        let setup_steps: String = r.get(15)?;
        let setup_changed: String = r.get(18)?;
        let mut run = RunRecord {
            id: parse_uuid(&run_id)?,
            index: r.get(2)?,
            warmup: r.get(3)?,
            round: r.get(4)?,
            preceding_executions: r.get(5)?,
            started_at_ns: r.get(6)?,
            ended_at_ns: r.get(7)?,
            values: BTreeMap::new(),
            rusage: Rusage {
                user_cpu_ns: r.get(8)?,
                system_cpu_ns: r.get(9)?,
                voluntary_cs: r.get(10)?,
                involuntary_cs: r.get(11)?,
                max_rss_bytes: r.get(12)?,
            },
            foreign_cpu_ns: r.get(13)?,
            controller_cpu_ns: r.get(14)?,
            load_cpu_ns: r.get(16)?,
            monitors: None,
            setup_steps: Vec::new(),
            setup_changed: Vec::new(),
            histograms: Vec::new(),
        };
        run.histograms = histograms.remove(&run_id).unwrap_or_default();
        // Most runs have no setup steps: no parser for those.
        if setup_steps != "[]" {
            run.setup_steps = from_json!("setup steps", &setup_steps)?;
        }
        if setup_changed != "[]" {
            run.setup_changed = from_json!("setup changed", &setup_changed)?;
        }
        run.monitors = monitors.remove(&run_id);
        run.values = values.remove(&run_id).unwrap_or_default();
        let slot = by_id
            .get(&configuration_id)
            .copied()
            .ok_or_else(|| corrupt(format!("run {run_id} of unknown configuration")))?;
        let order = (run.started_at_ns, !run.warmup, run.index, r.get(17)?);
        runs.push((order, slot, run));
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
/// configurations with how each stopped, and its runs, or only those among `only`. Nothing for
/// a session not stored.
pub(crate) fn session_progress_in(
    tx: &mut dyn Sql,
    id: Uuid,
    only: Option<&[String]>,
) -> Result<SessionProgress, StoreError> {
    let key = id.to_string();
    let mut progress = SessionProgress::default();
    for row in tx.query(
        "SELECT id, stop_reason FROM configurations WHERE session_id = $1",
        args![&key],
    )? {
        let stop_reason: Option<String> = row.get(1)?;
        progress.configurations.insert(
            parse_uuid(&row.get::<String>(0)?)?,
            stop_reason
                .map(|text| parse_text("stop reason", &text))
                .transpose()?,
        );
    }
    for selection in RunsOf::queries(&key, only) {
        for row in tx.query(
            &format!(
                "SELECT r.id FROM runs r JOIN configurations c ON c.id = r.configuration_id \
                 WHERE {}",
                selection.condition()
            ),
            &selection.params(),
        )? {
            progress.runs.insert(parse_uuid(&row.get::<String>(0)?)?);
        }
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
    runs: &BTreeSet<Uuid>,
) -> Result<StoredSession, StoreError> {
    store.read(|tx| load_session_runs_in(tx, id, load, Some(runs)))
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
