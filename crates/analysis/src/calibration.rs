//! The session-to-session noise of a machine, from the short A/A sessions of `vernier
//! calibrate`: per configuration and environment, how much the sessions' medians differ beyond
//! what their runs explain (a one-way random-effects estimate on log values,
//! [`vernier_stats::between_session_variance`]). `compare` widens the interval of one session a
//! side by it (docs/compare.md, "Sessions").

use std::collections::BTreeMap;
use std::fmt;

use uuid::Uuid;
use vernier_model::text::plural;
use vernier_model::{Calibration, ConfigKey, StoredSession};
use vernier_stats::{between_session_variance, SessionMedian};

use crate::compare::Key;
use crate::AnalysisError;

/// What a calibration's sessions give: a [`Calibration`] of every configuration with measured
/// runs in at least two sessions of one environment, and a note on each one left out.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationEstimate {
    pub calibrations: Vec<Calibration>,
    pub notes: Vec<CalibrationNote>,
}

/// Why a configuration, or one session of it, is left out of a calibration.
#[derive(Debug, Clone, PartialEq)]
pub enum CalibrationNote {
    /// A session's values of the configuration are not all positive: they have no logarithm.
    NotPositive {
        configuration: String,
        session: Uuid,
    },
    /// The configuration was measured in fewer than two sessions of an environment: sessions of
    /// one calibration differ in environment when something changed the system between them
    /// (a sysctl, the kernel command line, ...).
    TooFewSessions {
        configuration: String,
        sessions: usize,
        fingerprint: String,
    },
}

impl fmt::Display for CalibrationNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalibrationNote::NotPositive {
                configuration,
                session,
            } => write!(
                f,
                "{configuration}: session {session} left out, its values are not all positive"
            ),
            CalibrationNote::TooFewSessions {
                configuration,
                sessions,
                fingerprint,
            } => write!(
                f,
                "{configuration}: measured in {} of environment {fingerprint}, \
                 two are needed (the environment changed during the calibration; `vernier env \
                 diff` shows how)",
                plural(*sessions, "session")
            ),
        }
    }
}

/// One configuration in one environment, over the calibration's sessions.
struct Group {
    fingerprint: String,
    config: ConfigKey,
    metric: String,
    medians: Vec<SessionMedian>,
    runs: u32,
    session_ids: Vec<Uuid>,
}

/// The calibration of `sessions` (those of one `vernier calibrate`), created at
/// `created_at_ns`: per environment fingerprint and configuration, ordered by them.
pub fn estimate_calibration(
    created_at_ns: i64,
    sessions: &[StoredSession],
) -> Result<CalibrationEstimate, AnalysisError> {
    let mut groups: BTreeMap<(String, Key), Group> = BTreeMap::new();
    let mut notes = Vec::new();
    for session in sessions {
        for config in &session.configurations {
            let r = &config.record;
            let values = config.values();
            if values.is_empty() {
                continue;
            }
            let config_key = ConfigKey::new(&r.benchmark, &r.options);
            let configuration = config_key.to_string();
            if values.iter().any(|v| !(*v > 0.0 && v.is_finite())) {
                notes.push(CalibrationNote::NotPositive {
                    configuration,
                    session: session.info.id,
                });
                continue;
            }
            let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
            let median = SessionMedian::of(&logs).map_err(|source| AnalysisError::Stats {
                configuration,
                source,
            })?;
            let key = (
                session.info.fingerprint.clone(),
                (config_key.clone(), r.metric.name.clone()),
            );
            let g = groups.entry(key).or_insert_with(|| Group {
                fingerprint: session.info.fingerprint.clone(),
                config: config_key,
                metric: r.metric.name.clone(),
                medians: Vec::new(),
                runs: 0,
                session_ids: Vec::new(),
            });
            g.medians.push(median);
            g.runs += logs.len() as u32;
            g.session_ids.push(session.info.id);
        }
    }
    let mut calibrations = Vec::new();
    for g in groups.into_values() {
        if g.medians.len() < 2 {
            notes.push(CalibrationNote::TooFewSessions {
                configuration: g.config.to_string(),
                sessions: g.medians.len(),
                fingerprint: g.fingerprint,
            });
            continue;
        }
        let b = between_session_variance(&[&g.medians]).map_err(|source| AnalysisError::Stats {
            configuration: g.config.to_string(),
            source,
        })?;
        calibrations.push(Calibration {
            id: Uuid::new_v4(),
            created_at_ns,
            fingerprint: g.fingerprint,
            benchmark: g.config.benchmark,
            options: g.config.options,
            metric: g.metric,
            sessions: g.medians.len() as u32,
            runs: g.runs,
            session_sd: b.mean_square.sqrt(),
            within_sd: b.within.sqrt(),
            between_sd: b.variance.sqrt(),
            df: b.df,
            session_ids: g.session_ids,
        });
    }
    Ok(CalibrationEstimate {
        calibrations,
        notes,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use vernier_testkit::stored_session;

    fn session_in(fingerprint: &str, values: &[f64]) -> StoredSession {
        let mut s = stored_session(0, values);
        s.info.fingerprint = fingerprint.to_string();
        s
    }

    #[test]
    fn identical_sessions_have_no_noise_between_them() {
        let sessions: Vec<StoredSession> = (0..3)
            .map(|_| session_in("a", &[1.0, 1.1, 1.2, 1.0]))
            .collect();
        let estimate = estimate_calibration(7, &sessions).unwrap();
        assert!(estimate.notes.is_empty(), "{:?}", estimate.notes);
        let [c] = estimate.calibrations.as_slice() else {
            panic!("{:?}", estimate.calibrations)
        };
        assert_eq!(
            (c.benchmark.as_str(), c.metric.as_str()),
            ("command", "time")
        );
        assert_eq!((c.created_at_ns, c.sessions, c.runs, c.df), (7, 3, 12, 2.0));
        assert_eq!((c.session_sd, c.between_sd), (0.0, 0.0));
        // Maritz-Jarrett standard error of the median of ln(1, 1.1, 1.2, 1), from scipy.
        assert!(
            (c.within_sd - 0.053_811_193_488_605_23).abs() < 1e-9,
            "{c:?}"
        );
        let ids: Vec<Uuid> = sessions.iter().map(|s| s.info.id).collect();
        assert_eq!(c.session_ids, ids);
    }

    #[test]
    fn sessions_that_differ_show_noise_beyond_their_runs() {
        let sessions = [
            session_in("a", &[1.0, 1.01, 0.99, 1.0]),
            session_in("a", &[1.2, 1.21, 1.19, 1.2]),
            session_in("a", &[0.8, 0.81, 0.79, 0.8]),
        ];
        let estimate = estimate_calibration(0, &sessions).unwrap();
        let c = &estimate.calibrations[0];
        assert!(c.between_sd > 0.1 && c.between_sd < c.session_sd, "{c:?}");
        let squares = c.within_sd.powi(2) + c.between_sd.powi(2);
        assert!((squares - c.session_sd.powi(2)).abs() < 1e-12, "{c:?}");
    }

    #[test]
    fn left_out_sessions_and_configurations_are_noted() {
        let sessions = [
            session_in("a", &[1.0, 1.1]),
            session_in("a", &[1.0, -1.0]),
            session_in("b", &[1.0, 1.1]),
        ];
        let estimate = estimate_calibration(0, &sessions).unwrap();
        assert!(estimate.calibrations.is_empty());
        let notes: Vec<String> = estimate.notes.iter().map(ToString::to_string).collect();
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert_eq!(
            notes[0],
            format!(
                "command: session {} left out, its values are not all positive",
                sessions[1].info.id
            )
        );
        assert!(
            notes[1].starts_with("command: measured in 1 session of environment a, two"),
            "{notes:?}"
        );
        assert!(notes[2].contains("of environment b"), "{notes:?}");
    }
}
