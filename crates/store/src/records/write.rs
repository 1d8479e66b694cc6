//! Writing: recording a session as it runs (imports in `import.rs`), and
//! managing stored ones (tags, notes, deletion). Every change runs in
//! [`Engine::write`]'s transaction.

use std::borrow::Cow;
use std::collections::BTreeSet;

use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, Finding, RunRecord, SessionInfo, SessionStatus, StopReason,
};
use vernier_sys::process::ProcessIdentity;

use super::codec::{from_json, stored_value, to_json};
use super::read::ensure_exists;
use super::{histograms, monitors};
use super::{run_key, Engine, RUNS_OF_CONFIGURATION};
use crate::sql::{args, Columns, Param, Sql};
use crate::{DeleteReport, StoreError};

/// Inserts a session row with its tags; `owner` is the process recording it (none for an
/// import: no process here records it).
pub(crate) fn insert_session(
    store: &mut impl Engine,
    session: &SessionInfo,
    owner: Option<&ProcessIdentity>,
) -> Result<(), StoreError> {
    let specs = to_json!("specs", &session.specs)?;
    let settings = to_json!("settings", &session.settings)?;
    let environment = to_json!("environment", &session.environment)?;
    let findings = to_json!("findings", &session.findings)?;
    let setup = to_json!("setup", &session.setup)?;
    let monitors = to_json!("monitors", &session.monitors)?;
    let id = session.id.to_string();
    store.write(|tx| {
        tx.execute(
            "INSERT INTO sessions (id, started_at_ns, ended_at_ns, status, suite, specs, \
             note, settings, vernier_version, fingerprint, environment, findings, setup, \
             monitors, owner_pid, owner_boot_id, owner_start_ticks, hostname, machine_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
             $17, $18, $19)",
            args![
                &id,
                session.started_at_ns,
                session.ended_at_ns,
                session.status.as_str(),
                session.suite.as_ref(),
                &specs,
                session.note.as_ref(),
                &settings,
                &session.vernier_version,
                &session.fingerprint,
                &environment,
                &findings,
                &setup,
                &monitors,
                owner.map(|o| o.pid),
                owner.and_then(|o| o.boot_id.as_deref()),
                owner.and_then(start_ticks),
                session.environment.hostname.as_ref(),
                session.environment.machine_id.as_ref(),
            ],
        )?;
        for (key, value) in &session.tags {
            tx.execute(
                "INSERT INTO session_tags (session_id, key, value) VALUES ($1, $2, $3)",
                args![&id, key, value],
            )?;
        }
        Ok(())
    })
}

/// The start time of `owner` as the `owner_start_ticks` column keeps it (a signed 64-bit
/// integer; a value beyond it, which no kernel gives, is unknown).
fn start_ticks(owner: &ProcessIdentity) -> Option<i64> {
    owner.start_ticks.and_then(|t| i64::try_from(t).ok())
}

/// [`crate::Import::set_owner`]: the owner columns of a session still stored as `running`.
pub(crate) fn set_owner(
    store: &mut impl Engine,
    session: Uuid,
    owner: &ProcessIdentity,
) -> Result<(), StoreError> {
    let id = session.to_string();
    store.write(|tx| {
        tx.execute(
            "UPDATE sessions SET owner_pid = $2, owner_boot_id = $3, owner_start_ticks = $4 \
             WHERE id = $1 AND status = 'running'",
            args![&id, owner.pid, owner.boot_id.as_deref(), start_ticks(owner)],
        )?;
        Ok(())
    })
}

pub(crate) fn begin_session(
    store: &mut impl Engine,
    session: &SessionInfo,
) -> Result<(), StoreError> {
    // This process records the session: while it lives, the session is `running`.
    let owner = ProcessIdentity::current();
    insert_session(store, session, Some(&owner))
}

pub(crate) fn add_configuration(
    store: &mut impl Engine,
    session: Uuid,
    configuration: &ConfigurationRecord,
) -> Result<(), StoreError> {
    // A BTreeMap serializes with its keys sorted, so equal options give equal text.
    let options = to_json!("options", &configuration.options)?;
    let secondary_metrics = to_json!("secondary metrics", &configuration.secondary_metrics)?;
    let loads = to_json!("loads", &configuration.loads)?;
    let id = configuration.id.to_string();
    let session_id = session.to_string();
    store.write(|tx| {
        ensure_exists(tx, "sessions", "session", session)?;
        tx.execute(
            "INSERT INTO configurations (id, session_id, position, benchmark, \
             benchmark_version, options, metric, unit, higher_is_better, stop_reason, \
             converged, error, secondary_metrics, loads) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            args![
                &id,
                &session_id,
                configuration.position,
                &configuration.benchmark,
                &configuration.benchmark_version,
                &options,
                &configuration.metric.name,
                &configuration.metric.unit,
                configuration.metric.higher_is_better,
                configuration.stop_reason.map(StopReason::as_str),
                configuration.converged,
                configuration.error.as_ref(),
                &secondary_metrics,
                &loads,
            ],
        )?;
        Ok(())
    })
}

pub(crate) fn add_run(
    store: &mut impl Engine,
    configuration: Uuid,
    run: &RunRecord,
) -> Result<(), StoreError> {
    add_runs(
        store,
        configuration,
        std::slice::from_ref(run),
        &histograms::StoredHistograms::new(),
    )
}

/// How many runs [`add_runs`] stores at once: the parameters of this many runs are held
/// together (a vernier export may give a million runs of one configuration at once).
const RUNS_PER_PART: usize = 5_000;

/// The columns of `runs` that [`add_runs`] writes, in the order of its parameters: those
/// stored (docs/schema.md, version 16); the others are generated from them.
const RUN_COLUMNS: [&str; 16] = [
    "key",
    "round",
    "preceding_executions_stored",
    "started_at_ns",
    "elapsed_ns",
    "value",
    "user_cpu_ns",
    "system_cpu_ns",
    "voluntary_cs",
    "involuntary_cs",
    "max_rss_bytes",
    "foreign_cpu_ns",
    "controller_cpu_ns",
    "load_cpu_ns",
    "setup_steps_stored",
    "setup_changed_stored",
];

/// Stores `runs` of the configuration `configuration` in one transaction (the caller's, in an
/// import), each table's rows at once ([`Sql::insert_rows`]): each run's row with its primary
/// value, its other values, its histograms and its monitor data. A run without histograms of
/// its own takes those `stored` holds under its id, as another store keeps them (a copy).
pub(crate) fn add_runs(
    store: &mut impl Engine,
    configuration: Uuid,
    runs: &[RunRecord],
    stored: &histograms::StoredHistograms,
) -> Result<(), StoreError> {
    // SQLite stores a NaN as NULL (https://www.sqlite.org/floatingpoint.html), which would
    // silently turn a broken measurement into a missing one.
    for run in runs {
        if let Some((metric, _)) = run.values.iter().find(|(_, v)| v.is_nan()) {
            return Err(StoreError::Invalid(format!(
                "run {}: metric '{metric}' is NaN",
                run.id
            )));
        }
    }
    if runs.is_empty() {
        return Ok(());
    }
    let configuration_id = configuration.to_string();
    // Most runs have neither setup steps nor changed settings: no encoder for those.
    let texts = runs
        .iter()
        .map(|run| {
            let setup_steps = match run.setup_steps.is_empty() {
                true => None,
                false => Some(to_json!("setup steps", &run.setup_steps)?),
            };
            let setup_changed = match run.setup_changed.is_empty() {
                true => None,
                false => Some(to_json!("setup changed", &run.setup_changed)?),
            };
            Ok((setup_steps, setup_changed))
        })
        .collect::<Result<Vec<(Option<String>, Option<String>)>, StoreError>>()?;
    // The histograms' buckets encoded once, outside the transaction (which may run again);
    // those of a copy are already.
    let histograms = runs
        .iter()
        .map(
            |run| match (run.histograms.is_empty(), stored.get(&run.id)) {
                (true, Some(rows)) => Ok(Cow::Borrowed(rows.as_slice())),
                _ => histograms::encode_all(&run.id, &run.histograms).map(Cow::Owned),
            },
        )
        .collect::<Result<Vec<_>, StoreError>>()?;
    // The monitor names the connection's committed writes have seen (none inside an import,
    // whose transaction may still roll back), read in the transaction when there are none.
    let mut names = store.monitor_names().and_then(Option::take);
    let written = store.write(|tx| {
        // An attempt that rolled back (to be retried) may have stored names that are gone.
        if let Some(names) = names.as_mut() {
            names.forget_unsettled();
        }
        let row = tx
            .query_opt(
                "SELECT key, metric FROM configurations WHERE id = $1",
                args![&configuration_id],
            )?
            .ok_or(StoreError::Unknown {
                what: "configuration",
                id: configuration,
            })?;
        let configuration_key: i64 = row.get(0)?;
        let primary = row.text(1)?;
        if let Some(last) = runs.iter().map(|r| r.ended_at_ns).max() {
            // How far the configuration has been recorded (docs/schema.md, version 12), in the
            // transaction that stores its runs: what a sync compares.
            tx.execute(
                "UPDATE configurations SET run_count = run_count + $2, last_run_ended_ns = \
                 CASE WHEN last_run_ended_ns IS NULL OR last_run_ended_ns < $3 THEN $3 \
                 ELSE last_run_ended_ns END WHERE key = $1",
                args![
                    configuration_key,
                    i64::try_from(runs.len()).unwrap_or(i64::MAX),
                    last
                ],
            )?;
        }
        for ((runs, texts), histograms) in runs
            .chunks(RUNS_PER_PART)
            .zip(texts.chunks(RUNS_PER_PART))
            .zip(histograms.chunks(RUNS_PER_PART))
        {
            let place = (configuration, configuration_key);
            add_part(tx, place, primary, runs, texts, histograms, &mut names)?;
        }
        // The configuration's merged histograms, kept for `show` of a long session
        // (docs/schema.md, version 15), in the transaction that stores the runs.
        super::totals::add(tx, configuration_key, runs)
    });
    if written.is_ok() {
        if let (Some(mut names), Some(kept)) = (names, store.monitor_names()) {
            names.settle();
            *kept = Some(names);
        }
    }
    written
}

/// One part of [`add_runs`] inside its transaction: its runs' keys, then each table's
/// rows at once, in the order of the runs' keys (their places): each row of `runs` and of the
/// tables below it then goes after the previous one, where SQLite appends and fills its pages
/// instead of splitting them in the middle. A run's id is stored only when it is not the one
/// its place gives (`run_ids`, docs/schema.md, version 16): a run recorded or imported from
/// hyperfine or cyclictest writes no index at all.
fn add_part(
    tx: &mut dyn Sql,
    (configuration, configuration_key): (Uuid, i64),
    primary: &str,
    runs: &[RunRecord],
    texts: &[(Option<String>, Option<String>)],
    histograms: &[Cow<'_, [histograms::StoredHistogram]>],
    names: &mut Option<monitors::Names>,
) -> Result<(), StoreError> {
    // Each run's key is its place ([`run_key`]), known before the insert, so that the rows of
    // its values, histograms and monitor data name it without reading it back.
    let keys = runs
        .iter()
        .map(|run| run_key(configuration_key, run.warmup, run.index))
        .collect::<Result<Vec<i64>, StoreError>>()?;
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_unstable_by_key(|&at| keys[at]);
    let mut params = Vec::with_capacity(runs.len() * RUN_COLUMNS.len());
    let mut other_ids = Vec::new();
    for &at in &order {
        let (run, (setup_steps, setup_changed), key) = (&runs[at], &texts[at], &keys[at]);
        if run.id != run.place(configuration).derived_id() {
            other_ids.extend([Param::Int(*key), Param::from(&run.id)]);
        }
        // The primary metric's value is a column of the run; the others are rows of
        // run_values (docs/schema.md).
        let value = run.values.get(primary).copied().map(stored_value);
        let elapsed_ns = run
            .ended_at_ns
            .checked_sub(run.started_at_ns)
            .ok_or_else(|| {
                StoreError::Invalid(format!(
                    "run {}: it ends at {} ns, too far from its start at {} ns",
                    run.id, run.ended_at_ns, run.started_at_ns
                ))
            })?;
        // Stored only when it is not the run's index (most runs' is).
        let preceding = (run.preceding_executions != run.index).then_some(run.preceding_executions);
        params.extend_from_slice(args![
            *key,
            run.round,
            preceding,
            run.started_at_ns,
            elapsed_ns,
            value,
            run.rusage.user_cpu_ns,
            run.rusage.system_cpu_ns,
            run.rusage.voluntary_cs,
            run.rusage.involuntary_cs,
            run.rusage.max_rss_bytes,
            run.foreign_cpu_ns,
            run.controller_cpu_ns,
            run.load_cpu_ns,
            setup_steps.as_deref(),
            setup_changed.as_deref(),
        ]);
    }
    tx.insert_rows("runs", &RUN_COLUMNS, &params)?;
    tx.insert_rows("run_ids", &["run_key", "id"], &other_ids)?;
    let others: Vec<Param<'_>> = order
        .iter()
        .map(|&at| (&runs[at], &keys[at]))
        .flat_map(|(run, key)| {
            run.values
                .iter()
                .filter(|(metric, _)| *metric != primary)
                .flat_map(move |(metric, value)| {
                    [
                        Param::Int(*key),
                        Param::Text(metric),
                        Param::Real(stored_value(*value)),
                    ]
                })
        })
        .collect();
    tx.insert_rows("run_values", &["run_key", "metric", "value"], &others)?;
    histograms::insert_all(
        tx,
        order.iter().map(|&at| (keys[at], histograms[at].as_ref())),
    )?;
    if runs.iter().any(|r| r.monitors.is_some()) {
        let names = match names {
            Some(names) => names,
            None => names.insert(monitors::Names::read(tx)?),
        };
        let monitored = order
            .iter()
            .filter_map(|&at| Some((keys[at], runs[at].monitors.as_deref()?)));
        monitors::insert_all(tx, names, monitored)?;
    }
    Ok(())
}

pub(crate) fn finish_configuration(
    store: &mut impl Engine,
    configuration: Uuid,
    reason: StopReason,
    converged: bool,
    error: Option<&str>,
) -> Result<(), StoreError> {
    let id = configuration.to_string();
    store.write(|tx| {
        let changed = tx.execute(
            "UPDATE configurations SET stop_reason = $2, converged = $3, error = $4 \
             WHERE id = $1",
            args![&id, reason.as_str(), converged, error],
        )?;
        if changed == 0 {
            return Err(StoreError::Unknown {
                what: "configuration",
                id: configuration,
            });
        }
        Ok(())
    })
}

pub(crate) fn finish_session(
    store: &mut impl Engine,
    session: Uuid,
    status: SessionStatus,
    ended_at_ns: i64,
) -> Result<(), StoreError> {
    let id = session.to_string();
    store.write(|tx| {
        let changed = tx.execute(
            "UPDATE sessions SET status = $2, ended_at_ns = $3 WHERE id = $1",
            args![&id, status.as_str(), ended_at_ns],
        )?;
        if changed == 0 {
            return Err(StoreError::Unknown {
                what: "session",
                id: session,
            });
        }
        Ok(())
    })
}

/// [`vernier_model::Recorder::add_finding`]: the session's findings with `finding` after
/// them, read and written in one transaction.
pub(crate) fn add_finding(
    store: &mut impl Engine,
    session: Uuid,
    finding: &Finding,
) -> Result<(), StoreError> {
    let id = session.to_string();
    store.write(|tx| {
        let stored: String = tx
            .query_opt("SELECT findings FROM sessions WHERE id = $1", args![&id])?
            .ok_or(StoreError::Unknown {
                what: "session",
                id: session,
            })?
            .get(0)?;
        let mut findings: Vec<Finding> = from_json!("findings", &stored)?;
        findings.push(finding.clone());
        let findings = to_json!("findings", &findings)?;
        tx.execute(
            "UPDATE sessions SET findings = $2 WHERE id = $1",
            args![&id, &findings],
        )?;
        Ok(())
    })
}

pub(crate) fn put_kernel_config(
    store: &mut impl Engine,
    sha256: &str,
    text: &str,
) -> Result<(), StoreError> {
    store.write(|tx| {
        tx.execute(
            "INSERT INTO kernel_configs (sha256, text) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            args![sha256, text],
        )?;
        Ok(())
    })
}

pub(crate) fn delete_session(store: &mut impl Engine, id: Uuid) -> Result<(), StoreError> {
    let key = id.to_string();
    store.write(|tx| {
        // Configurations, runs, values and tags go by ON DELETE CASCADE.
        let changed = tx.execute("DELETE FROM sessions WHERE id = $1", args![&key])?;
        if changed == 0 {
            return Err(StoreError::Unknown {
                what: "session",
                id,
            });
        }
        Ok(())
    })
}

// Managing stored sessions: tags, notes and deletion. Each call is one transaction, so a
// selector that names several sessions changes all of them or none.

/// [`crate::Store::update_tags`].
pub(crate) fn update_tags(
    store: &mut impl Engine,
    ids: &[Uuid],
    set: &[(String, String)],
    remove: &[String],
) -> Result<(), StoreError> {
    store.write(|tx| {
        for id in ids {
            ensure_exists(tx, "sessions", "session", *id)?;
            let id = id.to_string();
            for key in remove {
                tx.execute(
                    "DELETE FROM session_tags WHERE session_id = $1 AND key = $2",
                    args![&id, key],
                )?;
            }
            for (key, value) in set {
                tx.execute(
                    "INSERT INTO session_tags (session_id, key, value) VALUES ($1, $2, $3) \
                     ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                    args![&id, key, value],
                )?;
            }
        }
        Ok(())
    })
}

/// [`crate::Store::set_note`].
pub(crate) fn set_note(
    store: &mut impl Engine,
    ids: &[Uuid],
    note: Option<&str>,
) -> Result<(), StoreError> {
    store.write(|tx| {
        for id in ids {
            let changed = tx.execute(
                "UPDATE sessions SET note = $2 WHERE id = $1",
                args![&id.to_string(), note],
            )?;
            if changed == 0 {
                return Err(StoreError::Unknown {
                    what: "session",
                    id: *id,
                });
            }
        }
        Ok(())
    })
}

/// [`crate::Store::delete_sessions`].
pub(crate) fn delete_sessions(
    store: &mut impl Engine,
    ids: &[Uuid],
) -> Result<DeleteReport, StoreError> {
    store.write(|tx| {
        let mut report = DeleteReport::default();
        let mut shas = BTreeSet::new();
        let sha_of_session = tx
            .dialect()
            .json_field("environment", "kernel_config_sha256");
        for id in ids {
            ensure_exists(tx, "sessions", "session", *id)?;
            let id = id.to_string();
            let mut count = |sql: &str| -> Result<usize, StoreError> {
                let n: i64 = tx.query_one(sql, args![&id])?.get(0)?;
                Ok(usize::try_from(n).unwrap_or(0))
            };
            report.configurations +=
                count("SELECT count(*) FROM configurations WHERE session_id = $1")?;
            report.runs += count(&format!(
                "SELECT count(*) FROM configurations c CROSS JOIN runs r \
                     WHERE c.session_id = $1 AND {RUNS_OF_CONFIGURATION}"
            ))?;
            report.monitor_records += count(&format!(
                "SELECT count(*) FROM configurations c CROSS JOIN runs r \
                 CROSS JOIN run_monitors m WHERE c.session_id = $1 AND {RUNS_OF_CONFIGURATION} \
                 AND m.run_key = r.key"
            ))?;
            let sha: Option<String> = tx
                .query_one(
                    &format!("SELECT {sha_of_session} FROM sessions WHERE id = $1"),
                    args![&id],
                )?
                .get(0)?;
            shas.extend(sha);
            report.sessions += tx.execute("DELETE FROM sessions WHERE id = $1", args![&id])?;
        }
        for sha in &shas {
            report.kernel_configs += tx.execute(
                &format!(
                    "DELETE FROM kernel_configs WHERE sha256 = $1 AND NOT EXISTS (SELECT 1 \
                     FROM sessions WHERE {sha_of_session} = $1)"
                ),
                args![sha],
            )?;
        }
        Ok(report)
    })
}

/// [`crate::Store::end_running_session`].
pub(crate) fn end_running_session(
    store: &mut impl Engine,
    session: Uuid,
    status: SessionStatus,
    ended_at_ns: i64,
) -> Result<bool, StoreError> {
    let id = session.to_string();
    store.write(|tx| {
        let changed = tx.execute(
            "UPDATE sessions SET status = $2, ended_at_ns = $3 \
             WHERE id = $1 AND status = 'running'",
            args![&id, status.as_str(), ended_at_ns],
        )?;
        if changed > 0 {
            tx.execute(
                "UPDATE configurations SET stop_reason = $2 \
                 WHERE session_id = $1 AND stop_reason IS NULL",
                args![&id, StopReason::Interrupted.as_str()],
            )?;
        }
        Ok(changed > 0)
    })
}
