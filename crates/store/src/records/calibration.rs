//! Calibrations (session-to-session noise, `vernier calibrate`) in the store: the
//! `calibrations` table of migration 0004 (docs/schema.md).

use uuid::Uuid;
use vernier_model::Calibration;

use super::codec::{corrupt, from_json, parse_uuid, to_json};
use super::Engine;
use crate::sql::{args, Row};
use crate::StoreError;

const COLUMNS: &str = "id, created_at_ns, fingerprint, benchmark, options, metric, sessions, \
     runs, session_sd, within_sd, between_sd, df, session_ids";

/// [`crate::Store::add_calibrations`].
pub(crate) fn add_calibrations(
    store: &mut impl Engine,
    calibrations: &[Calibration],
) -> Result<(), StoreError> {
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
    store.write(|tx| {
        for c in calibrations {
            // A BTreeMap serializes with its keys sorted, so equal options give equal text.
            let options = to_json!("options", &c.options)?;
            let ids = to_json!("session ids", &c.session_ids)?;
            tx.execute(
                &format!(
                    "INSERT INTO calibrations ({COLUMNS}) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
                ),
                args![
                    &c.id.to_string(),
                    c.created_at_ns,
                    &c.fingerprint,
                    &c.benchmark,
                    &options,
                    &c.metric,
                    c.sessions,
                    c.runs,
                    c.session_sd,
                    c.within_sd,
                    c.between_sd,
                    c.df,
                    &ids
                ],
            )?;
        }
        Ok(())
    })
}

/// [`crate::Store::calibrations`].
pub(crate) fn calibrations(
    store: &impl Engine,
    fingerprints: &[String],
) -> Result<Vec<Calibration>, StoreError> {
    store.read(|tx| {
        let sql = format!(
            "SELECT {COLUMNS} FROM calibrations WHERE fingerprint = $1 \
             ORDER BY benchmark, options, metric, created_at_ns, rowid"
        );
        let mut out = Vec::new();
        let mut seen: Vec<&String> = Vec::new();
        for fingerprint in fingerprints {
            if seen.contains(&fingerprint) {
                continue;
            }
            seen.push(fingerprint);
            for row in tx.query(&sql, args![fingerprint])? {
                out.push(CalibrationRow::from_row(&row)?.decode()?);
            }
        }
        Ok(out)
    })
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
    fn from_row(r: &Row) -> Result<Self, StoreError> {
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
