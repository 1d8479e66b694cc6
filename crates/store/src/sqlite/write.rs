//! Writing: recording a session as it runs (imports in `import.rs`), and
//! managing stored ones (tags, notes, deletion). Every change runs in
//! [`SqliteStore::write`]'s transaction.

use std::collections::BTreeSet;

use rusqlite::params;
use uuid::Uuid;
use vernier_model::{ConfigurationRecord, RunRecord, SessionInfo, SessionStatus, StopReason};
use vernier_sys::process::ProcessIdentity;

use super::codec::{stored_value, to_json};
use super::read::ensure_exists;
use super::SqliteStore;
use super::{histograms, monitors};
use crate::{DeleteReport, StoreError};

impl SqliteStore {
    /// Inserts a session row with its tags; `owner` is the process recording it (none for an
    /// import: no process here records it).
    pub(super) fn insert_session(
        &mut self,
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
        self.write(|tx| {
            tx.execute(
                "INSERT INTO sessions (id, started_at_ns, ended_at_ns, status, suite, specs, \
                 note, settings, vernier_version, fingerprint, environment, findings, setup, \
                 monitors, owner_pid, owner_boot_id, owner_start_ticks, hostname, machine_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
                 ?17, ?18, ?19)",
                params![
                    id,
                    session.started_at_ns,
                    session.ended_at_ns,
                    session.status.as_str(),
                    session.suite,
                    specs,
                    session.note,
                    settings,
                    session.vernier_version,
                    session.fingerprint,
                    environment,
                    findings,
                    setup,
                    monitors,
                    owner.map(|o| o.pid),
                    owner.and_then(|o| o.boot_id.as_deref()),
                    owner
                        .and_then(|o| o.start_ticks)
                        .and_then(|t| i64::try_from(t).ok()),
                    session.environment.hostname,
                    session.environment.machine_id,
                ],
            )?;
            let mut stmt = tx
                .prepare("INSERT INTO session_tags (session_id, key, value) VALUES (?1, ?2, ?3)")?;
            for (key, value) in &session.tags {
                stmt.execute(params![id, key, value])?;
            }
            Ok(())
        })
    }
}

pub(super) fn begin_session(
    store: &mut SqliteStore,
    session: &SessionInfo,
) -> Result<(), StoreError> {
    // This process records the session: while it lives, the session is `running`.
    let owner = ProcessIdentity::current();
    store.insert_session(session, Some(&owner))
}

pub(super) fn add_configuration(
    store: &mut SqliteStore,
    session: Uuid,
    configuration: &ConfigurationRecord,
) -> Result<(), StoreError> {
    // A BTreeMap serializes with its keys sorted, so equal options give equal text.
    let options = to_json!("options", &configuration.options)?;
    let secondary_metrics = to_json!("secondary metrics", &configuration.secondary_metrics)?;
    let loads = to_json!("loads", &configuration.loads)?;
    store.write(|tx| {
        ensure_exists(tx, "sessions", "session", session)?;
        tx.execute(
            "INSERT INTO configurations (id, session_id, position, benchmark, \
             benchmark_version, options, metric, unit, higher_is_better, stop_reason, \
             converged, error, secondary_metrics, loads) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                configuration.id.to_string(),
                session.to_string(),
                configuration.position,
                configuration.benchmark,
                configuration.benchmark_version,
                options,
                configuration.metric.name,
                configuration.metric.unit,
                configuration.metric.higher_is_better,
                configuration.stop_reason.map(StopReason::as_str),
                configuration.converged,
                configuration.error,
                secondary_metrics,
                loads,
            ],
        )?;
        Ok(())
    })
}

pub(super) fn add_run(
    store: &mut SqliteStore,
    configuration: Uuid,
    run: &RunRecord,
) -> Result<(), StoreError> {
    // SQLite stores a NaN as NULL (https://www.sqlite.org/floatingpoint.html), which would
    // silently turn a broken measurement into a missing one.
    if let Some((metric, _)) = run.values.iter().find(|(_, v)| v.is_nan()) {
        return Err(StoreError::Invalid(format!(
            "run {}: metric '{metric}' is NaN",
            run.id
        )));
    }
    let id = run.id.to_string();
    let setup_steps = to_json!("setup steps", &run.setup_steps)?;
    store.write(|tx| {
        ensure_exists(tx, "configurations", "configuration", configuration)?;
        // Cached statements: an import adds a million runs in one go.
        tx.prepare_cached(
            "INSERT INTO runs (id, configuration_id, idx, warmup, round, \
             preceding_executions, started_at_ns, ended_at_ns, user_cpu_ns, system_cpu_ns, \
             voluntary_cs, involuntary_cs, max_rss_bytes, foreign_cpu_ns, controller_cpu_ns, \
             setup_steps, load_cpu_ns) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        )?
        .execute(params![
            id,
            configuration.to_string(),
            run.index,
            run.warmup,
            run.round,
            run.preceding_executions,
            run.started_at_ns,
            run.ended_at_ns,
            run.rusage.user_cpu_ns,
            run.rusage.system_cpu_ns,
            run.rusage.voluntary_cs,
            run.rusage.involuntary_cs,
            run.rusage.max_rss_bytes,
            run.foreign_cpu_ns,
            run.controller_cpu_ns,
            setup_steps,
            run.load_cpu_ns,
        ])?;
        histograms::insert(tx, &id, &run.histograms)?;
        if let Some(data) = &run.monitors {
            monitors::insert(tx, &mut monitors::Names::read(tx)?, &id, data)?;
        }
        let mut stmt = tx
            .prepare_cached("INSERT INTO run_values (run_id, metric, value) VALUES (?1, ?2, ?3)")?;
        for (metric, value) in &run.values {
            stmt.execute(params![id, metric, stored_value(*value)])?;
        }
        Ok(())
    })
}

pub(super) fn finish_configuration(
    store: &mut SqliteStore,
    configuration: Uuid,
    reason: StopReason,
    converged: bool,
    error: Option<&str>,
) -> Result<(), StoreError> {
    store.write(|tx| {
        let changed = tx.execute(
            "UPDATE configurations SET stop_reason = ?2, converged = ?3, error = ?4 \
             WHERE id = ?1",
            params![configuration.to_string(), reason.as_str(), converged, error],
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

pub(super) fn finish_session(
    store: &mut SqliteStore,
    session: Uuid,
    status: SessionStatus,
    ended_at_ns: i64,
) -> Result<(), StoreError> {
    store.write(|tx| {
        let changed = tx.execute(
            "UPDATE sessions SET status = ?2, ended_at_ns = ?3 WHERE id = ?1",
            params![session.to_string(), status.as_str(), ended_at_ns],
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

pub(super) fn put_kernel_config(
    store: &mut SqliteStore,
    sha256: &str,
    text: &str,
) -> Result<(), StoreError> {
    store.write(|tx| {
        tx.execute(
            "INSERT OR IGNORE INTO kernel_configs (sha256, text) VALUES (?1, ?2)",
            params![sha256, text],
        )?;
        Ok(())
    })
}

pub(super) fn delete_session(store: &mut SqliteStore, id: Uuid) -> Result<(), StoreError> {
    store.write(|tx| {
        // Configurations, runs, values and tags go by ON DELETE CASCADE.
        let changed = tx.execute("DELETE FROM sessions WHERE id = ?1", [id.to_string()])?;
        if changed == 0 {
            return Err(StoreError::Unknown {
                what: "session",
                id,
            });
        }
        Ok(())
    })
}

/// Managing stored sessions: tags, notes and deletion. Each call is one transaction, so a
/// selector that names several sessions changes all of them or none.
impl SqliteStore {
    /// Sets the tags `set` (replacing a value under the same key) and removes the keys `remove`
    /// on every session of `ids`. Removing a key a session does not carry is not an error.
    pub fn update_tags(
        &mut self,
        ids: &[Uuid],
        set: &[(String, String)],
        remove: &[String],
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            for id in ids {
                ensure_exists(tx, "sessions", "session", *id)?;
                let id = id.to_string();
                for key in remove {
                    tx.execute(
                        "DELETE FROM session_tags WHERE session_id = ?1 AND key = ?2",
                        params![id, key],
                    )?;
                }
                for (key, value) in set {
                    tx.execute(
                        "INSERT INTO session_tags (session_id, key, value) VALUES (?1, ?2, ?3) \
                         ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                        params![id, key, value],
                    )?;
                }
            }
            Ok(())
        })
    }

    /// Replaces the note of every session of `ids`; `None` removes it.
    pub fn set_note(&mut self, ids: &[Uuid], note: Option<&str>) -> Result<(), StoreError> {
        self.write(|tx| {
            for id in ids {
                let changed = tx.execute(
                    "UPDATE sessions SET note = ?2 WHERE id = ?1",
                    params![id.to_string(), note],
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

    /// Deletes the sessions `ids` with their configurations, runs, values, monitor records and
    /// tags (by ON DELETE CASCADE), and the kernel configuration texts they referred to that no
    /// remaining session refers to, in one transaction. Texts that no deleted session referred
    /// to are left alone: a `vernier run` stores its text just before it records its session.
    pub fn delete_sessions(&mut self, ids: &[Uuid]) -> Result<DeleteReport, StoreError> {
        self.write(|tx| {
            let mut report = DeleteReport::default();
            let mut shas = BTreeSet::new();
            let count = |sql: &str, id: &str| -> Result<usize, StoreError> {
                let n: i64 = tx.query_row(sql, [id], |r| r.get(0))?;
                Ok(usize::try_from(n).unwrap_or(0))
            };
            for id in ids {
                ensure_exists(tx, "sessions", "session", *id)?;
                let id = id.to_string();
                report.configurations += count(
                    "SELECT count(*) FROM configurations WHERE session_id = ?1",
                    &id,
                )?;
                report.runs += count(
                    "SELECT count(*) FROM runs JOIN configurations c ON c.id = configuration_id \
                     WHERE c.session_id = ?1",
                    &id,
                )?;
                report.monitor_records += count(
                    "SELECT count(*) FROM run_monitors m JOIN runs r ON r.id = m.run_id \
                     JOIN configurations c ON c.id = r.configuration_id WHERE c.session_id = ?1",
                    &id,
                )?;
                let sha: Option<String> = tx.query_row(
                    "SELECT json_extract(environment, '$.kernel_config_sha256') FROM sessions \
                     WHERE id = ?1",
                    [&id],
                    |r| r.get(0),
                )?;
                shas.extend(sha);
                report.sessions += tx.execute("DELETE FROM sessions WHERE id = ?1", [&id])?;
            }
            for sha in &shas {
                report.kernel_configs += tx.execute(
                    "DELETE FROM kernel_configs WHERE sha256 = ?1 AND NOT EXISTS (SELECT 1 \
                     FROM sessions WHERE json_extract(environment, '$.kernel_config_sha256') = ?1)",
                    [sha],
                )?;
            }
            Ok(report)
        })
    }
}

impl SqliteStore {
    /// Ends a session that this process cannot finish the ordinary way (it is about to exit at
    /// once, on a repeated Ctrl-C): a session still `running` gets `status` and its end time,
    /// and its configurations that have not stopped stop as interrupted. Returns whether the
    /// session was still running.
    pub fn end_running_session(
        &mut self,
        session: Uuid,
        status: SessionStatus,
        ended_at_ns: i64,
    ) -> Result<bool, StoreError> {
        let id = session.to_string();
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE sessions SET status = ?2, ended_at_ns = ?3 \
                 WHERE id = ?1 AND status = 'running'",
                params![id, status.as_str(), ended_at_ns],
            )?;
            if changed > 0 {
                tx.execute(
                    "UPDATE configurations SET stop_reason = ?2 \
                     WHERE session_id = ?1 AND stop_reason IS NULL",
                    params![id, StopReason::Interrupted.as_str()],
                )?;
            }
            Ok(changed > 0)
        })
    }
}
