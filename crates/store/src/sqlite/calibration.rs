//! Calibrations (session-to-session noise, `vernier calibrate`) in the SQLite store: the
//! `calibrations` table of migration 0004 (docs/schema.md).

use rusqlite::{params, Row};
use uuid::Uuid;
use vernier_model::Calibration;

use super::codec::{corrupt, from_json, parse_uuid, to_json};
use super::SqliteStore;
use crate::StoreError;

const COLUMNS: &str = "id, created_at_ns, fingerprint, benchmark, options, metric, sessions, \
     runs, session_sd, within_sd, between_sd, df, session_ids";

impl SqliteStore {
    /// Stores the calibrations of one `vernier calibrate` in one transaction: all or none.
    pub fn add_calibrations(&mut self, calibrations: &[Calibration]) -> Result<(), StoreError> {
        for c in calibrations {
            let numbers = [c.session_sd, c.within_sd, c.between_sd, c.df];
            if numbers.iter().any(|v| !v.is_finite() || *v < 0.0) || c.df == 0.0 {
                return Err(StoreError::Invalid(format!(
                    "calibration of {}: standard deviations must be finite and non-negative \
                     and df positive",
                    c.benchmark
                )));
            }
        }
        self.write(|tx| {
            let mut stmt = tx.prepare(&format!(
                "INSERT INTO calibrations ({COLUMNS}) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
            ))?;
            for c in calibrations {
                // A BTreeMap serializes with its keys sorted, so equal options give equal text.
                let options = to_json!("options", &c.options)?;
                let ids = to_json!("session ids", &c.session_ids)?;
                stmt.execute(params![
                    c.id.to_string(),
                    c.created_at_ns,
                    c.fingerprint,
                    c.benchmark,
                    options,
                    c.metric,
                    c.sessions,
                    c.runs,
                    c.session_sd,
                    c.within_sd,
                    c.between_sd,
                    c.df,
                    ids
                ])?;
            }
            Ok(())
        })
    }

    /// Every calibration of the environments with these fingerprints (compare pools those of
    /// one configuration), ordered by fingerprint, benchmark, options, metric and age.
    pub fn calibrations(&self, fingerprints: &[String]) -> Result<Vec<Calibration>, StoreError> {
        self.read(|tx| {
            let mut stmt = tx.prepare(&format!(
                "SELECT {COLUMNS} FROM calibrations WHERE fingerprint = ?1 \
                 ORDER BY benchmark, options, metric, created_at_ns, rowid"
            ))?;
            let mut out = Vec::new();
            let mut seen: Vec<&String> = Vec::new();
            for fingerprint in fingerprints {
                if seen.contains(&fingerprint) {
                    continue;
                }
                seen.push(fingerprint);
                let rows = stmt.query_map([fingerprint], CalibrationRow::from_row)?;
                for row in rows {
                    out.push(row?.decode()?);
                }
            }
            Ok(out)
        })
    }
}

struct CalibrationRow {
    id: String,
    created_at_ns: i64,
    fingerprint: String,
    benchmark: String,
    options: String,
    metric: String,
    sessions: u32,
    runs: u32,
    session_sd: f64,
    within_sd: f64,
    between_sd: f64,
    df: f64,
    session_ids: String,
}

impl CalibrationRow {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(CalibrationRow {
            id: r.get(0)?,
            created_at_ns: r.get(1)?,
            fingerprint: r.get(2)?,
            benchmark: r.get(3)?,
            options: r.get(4)?,
            metric: r.get(5)?,
            sessions: r.get(6)?,
            runs: r.get(7)?,
            session_sd: r.get(8)?,
            within_sd: r.get(9)?,
            between_sd: r.get(10)?,
            df: r.get(11)?,
            session_ids: r.get(12)?,
        })
    }

    fn decode(self) -> Result<Calibration, StoreError> {
        let ids: Vec<String> = from_json!("calibration session ids", &self.session_ids)?;
        Ok(Calibration {
            id: parse_uuid(&self.id)?,
            created_at_ns: self.created_at_ns,
            fingerprint: self.fingerprint,
            benchmark: self.benchmark,
            options: from_json!("calibration options", &self.options)?,
            metric: self.metric,
            sessions: self.sessions,
            runs: self.runs,
            session_sd: self.session_sd,
            within_sd: self.within_sd,
            between_sd: self.between_sd,
            df: self.df,
            session_ids: ids
                .iter()
                .map(|id| parse_uuid(id))
                .collect::<Result<Vec<Uuid>, _>>()
                .map_err(|e| corrupt(format!("calibration {}: {e}", self.id)))?,
        })
    }
}
