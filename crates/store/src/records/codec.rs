//! Row codecs: how model values become column values and back. What is queried is a column;
//! what is only carried (settings, environment, specs, options) is JSON text, decoded here with
//! the one error ([`StoreError::Corrupt`]) that names the field.

use std::collections::BTreeMap;

use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, MetricInfo, SessionInfo, SessionStatus, Settings, StopReason,
    StoredSession,
};
use vernier_sys::process::ProcessIdentity;

use crate::sql::Row;
use crate::{CopyProgress, SessionHeader, StoreError};

/// The columns [`SessionRow::from_row`] reads, in its order.
pub(crate) const SESSION_COLUMNS: &str =
    "id, started_at_ns, ended_at_ns, status, suite, specs, note, \
     settings, vernier_version, fingerprint, environment, findings, setup, monitors, owner_pid, \
     owner_boot_id, owner_start_ticks, hostname, machine_id, copying_runs, \
     CASE WHEN copying_runs IS NULL THEN NULL ELSE (SELECT CAST(coalesce(sum(c.run_count), 0) \
     AS BIGINT) FROM configurations c WHERE c.session_id = sessions.id) END";

pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(what.to_string())
}

pub(crate) fn parse_uuid(text: &str) -> Result<Uuid, StoreError> {
    Uuid::parse_str(text).map_err(|e| corrupt(format!("id '{text}': {e}")))
}

/// Encodes a value as JSON text. A macro rather than a generic function, so this crate needs
/// no direct dependency on serde.
macro_rules! to_json {
    ($what:expr, $value:expr) => {
        serde_json::to_string($value)
            .map_err(|e| $crate::StoreError::Invalid(format!("{}: {e}", $what)))
    };
}
pub(crate) use to_json;

/// Decodes JSON text, naming the field when it is not what was stored.
macro_rules! from_json {
    ($what:expr, $text:expr) => {
        serde_json::from_str($text)
            .map_err(|e| $crate::StoreError::Corrupt(format!("{}: {e}", $what)))
    };
}
pub(crate) use from_json;

/// Settings as stored, completed with today's defaults for fields added after the session was
/// recorded (the environment does the same through `#[serde(default)]`).
pub(crate) fn decode_settings(text: &str) -> Result<Settings, StoreError> {
    let stored: serde_json::Value = from_json!("settings", text)?;
    let mut merged = serde_json::to_value(Settings::default()).map_err(corrupt)?;
    match (&mut merged, stored) {
        (serde_json::Value::Object(merged), serde_json::Value::Object(stored)) => {
            // An old session's interval is the fixed-n one, not today's default: serde's
            // field default says so when the field is absent.
            merged.remove("stopping_rule");
            merged.extend(stored);
        }
        _ => return Err(corrupt("settings: not a JSON object")),
    }
    serde_json::from_value(merged).map_err(|e| corrupt(format!("settings: {e}")))
}

pub(crate) fn parse_text<T: std::str::FromStr<Err = String>>(
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    text.parse().map_err(|e| corrupt(format!("{what}: {e}")))
}

/// [`SESSION_COLUMNS`] with empty text in place of the columns a [`SessionHeader`] does not
/// hold (settings, environment, findings, setup, monitors: kilobytes of JSON per session), so
/// [`SessionRow::from_row`] reads both and the list of sessions neither copies nor decodes them.
pub(crate) const SESSION_HEADER_COLUMNS: &str = "id, started_at_ns, ended_at_ns, status, suite, \
     specs, note, '', vernier_version, fingerprint, '', '', '', '', owner_pid, owner_boot_id, \
     owner_start_ticks, hostname, machine_id, copying_runs, \
     CASE WHEN copying_runs IS NULL THEN NULL ELSE (SELECT CAST(coalesce(sum(c.run_count), 0) \
     AS BIGINT) FROM configurations c WHERE c.session_id = sessions.id) END";

/// A session row, before its text is decoded.
pub(crate) struct SessionRow {
    pub(crate) id: String,
    started_at_ns: i64,
    ended_at_ns: Option<i64>,
    status: String,
    suite: Option<String>,
    specs: String,
    note: Option<String>,
    settings: String,
    vernier_version: String,
    fingerprint: String,
    environment: String,
    findings: String,
    setup: String,
    monitors: String,
    owner: Option<ProcessIdentity>,
    hostname: Option<String>,
    machine_id: Option<String>,
    /// While a copy stores it part by part: the runs stored so far and the source's.
    copying: Option<CopyProgress>,
}

impl SessionRow {
    /// Reads the columns of [`SESSION_COLUMNS`].
    pub(crate) fn from_row(row: &Row) -> Result<Self, StoreError> {
        Ok(SessionRow {
            id: row.get(0)?,
            started_at_ns: row.get(1)?,
            ended_at_ns: row.get(2)?,
            status: row.get(3)?,
            suite: row.get(4)?,
            specs: row.get(5)?,
            note: row.get(6)?,
            settings: row.get(7)?,
            vernier_version: row.get(8)?,
            fingerprint: row.get(9)?,
            environment: row.get(10)?,
            findings: row.get(11)?,
            setup: row.get(12)?,
            monitors: row.get(13)?,
            owner: row.get::<Option<i64>>(14)?.map(|pid| ProcessIdentity {
                // The column's CHECK keeps it positive; a pid is at most 2^22 (proc(5)).
                pid: u32::try_from(pid).unwrap_or(u32::MAX),
                boot_id: row.get(15).ok().flatten(),
                start_ticks: row
                    .get::<Option<i64>>(16)
                    .ok()
                    .flatten()
                    .and_then(|t| u64::try_from(t).ok()),
            }),
            hostname: row.get(17)?,
            machine_id: row.get(18)?,
            copying: match (row.get::<Option<i64>>(19)?, row.get::<Option<i64>>(20)?) {
                (Some(of), Some(runs)) => Some(CopyProgress {
                    runs: u64::try_from(runs).unwrap_or_default(),
                    of: u64::try_from(of).unwrap_or_default(),
                }),
                _ => None,
            },
        })
    }

    /// The status as stored, except that a `running` session whose recording process is gone
    /// (or unknown: recorded before schema version 3, or imported) is `abandoned`. A session
    /// recorded on another machine (its machine id known and not this machine's: a farm's
    /// central database, filled by `vernier sync`) stays `running`: no process of this
    /// machine records it, and nothing here can tell whether its own machine still does.
    fn status(&self) -> Result<SessionStatus, StoreError> {
        let stored = parse_text("session status", &self.status)?;
        let elsewhere = || vernier_sys::environment::is_another_machine(self.machine_id.as_deref());
        let alive = || self.owner.as_ref().is_some_and(ProcessIdentity::is_alive);
        Ok(match stored {
            SessionStatus::Running if !elsewhere() && !alive() => SessionStatus::Abandoned,
            other => other,
        })
    }

    /// The row of [`SESSION_HEADER_COLUMNS`] as a header.
    pub(crate) fn decode_header(
        self,
        tags: BTreeMap<String, String>,
    ) -> Result<SessionHeader, StoreError> {
        Ok(SessionHeader {
            status: self.status()?,
            id: parse_uuid(&self.id)?,
            started_at_ns: self.started_at_ns,
            ended_at_ns: self.ended_at_ns,
            suite: self.suite,
            specs: from_json!("specs", &self.specs)?,
            tags,
            note: self.note,
            fingerprint: self.fingerprint,
            hostname: self.hostname,
            machine_id: self.machine_id,
            owner: self.owner,
            copying: self.copying,
        })
    }

    pub(crate) fn decode(self, tags: BTreeMap<String, String>) -> Result<SessionInfo, StoreError> {
        Ok(SessionInfo {
            status: self.status()?,
            id: parse_uuid(&self.id)?,
            started_at_ns: self.started_at_ns,
            ended_at_ns: self.ended_at_ns,
            suite: self.suite,
            specs: from_json!("specs", &self.specs)?,
            tags,
            note: self.note,
            settings: decode_settings(&self.settings)?,
            vernier_version: self.vernier_version,
            environment: from_json!("environment", &self.environment)?,
            fingerprint: self.fingerprint,
            findings: from_json!("findings", &self.findings)?,
            setup: from_json!("setup", &self.setup)?,
            monitors: from_json!("monitors", &self.monitors)?,
        })
    }
}

/// The columns [`ConfigurationRow::from_row`] reads, in its order.
pub(crate) const CONFIGURATION_COLUMNS: &str = "key, id, position, benchmark, benchmark_version, \
     options, metric, unit, higher_is_better, stop_reason, converged, error, secondary_metrics, \
     loads";

/// A configuration row, before its text is decoded.
pub(crate) struct ConfigurationRow {
    key: i64,
    id: String,
    position: u32,
    benchmark: String,
    benchmark_version: String,
    options: String,
    metric: String,
    unit: String,
    higher_is_better: bool,
    stop_reason: Option<String>,
    converged: bool,
    error: Option<String>,
    secondary_metrics: String,
    loads: String,
}

impl ConfigurationRow {
    /// Reads the columns of [`CONFIGURATION_COLUMNS`].
    pub(crate) fn from_row(r: &Row) -> Result<Self, StoreError> {
        Ok(ConfigurationRow {
            key: r.get(0)?,
            id: r.get(1)?,
            position: r.get(2)?,
            benchmark: r.get(3)?,
            benchmark_version: r.get(4)?,
            options: r.get(5)?,
            metric: r.get(6)?,
            unit: r.get(7)?,
            higher_is_better: r.get(8)?,
            stop_reason: r.get(9)?,
            converged: r.get(10)?,
            error: r.get(11)?,
            secondary_metrics: r.get(12)?,
            loads: r.get(13)?,
        })
    }

    /// The configuration with its key in the database.
    pub(crate) fn decode(self) -> Result<(i64, ConfigurationRecord), StoreError> {
        let record = ConfigurationRecord {
            id: parse_uuid(&self.id)?,
            position: self.position,
            benchmark: self.benchmark,
            benchmark_version: self.benchmark_version,
            options: from_json!("options", &self.options)?,
            metric: MetricInfo {
                name: self.metric,
                unit: self.unit,
                higher_is_better: self.higher_is_better,
            },
            stop_reason: self
                .stop_reason
                .map(|s| parse_text::<StopReason>("stop reason", &s))
                .transpose()?,
            converged: self.converged,
            error: self.error,
            secondary_metrics: from_json!("secondary metrics", &self.secondary_metrics)?,
            loads: from_json!("loads", &self.loads)?,
        };
        Ok((self.key, record))
    }
}

/// `session` as the store keeps it: run values of -0.0 become 0.0 (see [`stored_value`]).
pub(crate) fn as_stored(session: &StoredSession) -> std::borrow::Cow<'_, StoredSession> {
    let negative_zero = |v: &f64| v.to_bits() == (-0.0f64).to_bits();
    let has = session
        .configurations
        .iter()
        .flat_map(|c| &c.runs)
        .any(|r| r.values.values().any(negative_zero));
    if !has {
        return std::borrow::Cow::Borrowed(session);
    }
    let mut copy = session.clone();
    for run in copy.configurations.iter_mut().flat_map(|c| &mut c.runs) {
        for v in run.values.values_mut() {
            *v = stored_value(*v);
        }
    }
    std::borrow::Cow::Owned(copy)
}

/// The value a stored run value reads back as: the same double, except -0.0 becomes 0.0.
/// SQLite keeps -0.0 as 0.0 (a REAL with an integral value is stored as an integer,
/// https://www.sqlite.org/datatype3.html#storage_classes_and_datatypes), so both engines store
/// it as 0.0 and a session reads back the same from either. Every other finite double
/// round-trips bit for bit (sqlite3_bind_double and sqlite3_column_double; PostgreSQL's
/// `double precision` in the binary protocol).
pub(crate) fn stored_value(v: f64) -> f64 {
    if v == 0.0 {
        0.0
    } else {
        v
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn settings_gain_defaults_for_missing_fields() {
        let settings = decode_settings(r#"{"warmup": 3, "target": 0.05}"#).unwrap();
        assert_eq!(settings.warmup, 3);
        assert_eq!(settings.target, 0.05);
        assert_eq!(settings.max_runs, Settings::default().max_runs);
        assert_eq!(settings.stopping_rule, vernier_model::StoppingRule::FixedN);
        assert!(matches!(
            decode_settings("[1]"),
            Err(StoreError::Corrupt(_))
        ));
        assert!(matches!(
            decode_settings(r#"{"warmup": "many"}"#),
            Err(StoreError::Corrupt(_))
        ));
    }
}
