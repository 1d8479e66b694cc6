//! `vernier calibrate [SPEC...]`: short A/A sessions of the same configurations, one after the
//! other in this process, to measure how much whole sessions differ on this machine beyond
//! what their runs explain. The estimate (`vernier_analysis::estimate_calibration`) is stored
//! with the environment fingerprint; `compare` widens the interval of one session a side by it
//! (docs/compare.md, "Sessions").

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use uuid::Uuid;
use vernier_analysis::{estimate_calibration, CalibrationNote};
use vernier_engine::Interrupt;
use vernier_model::{Calibration, SettingsLayer, StoredSession};
use vernier_store::{Access, Load, Location};

use crate::request::{resolve_specs, SessionRequest};
use crate::session::{run_session, Ending, Notice, Observer, SessionEnd};
use crate::signals::Signals;
use crate::{database, AppError};

/// Most sessions one calibration runs: beyond this the estimate no longer improves noticeably
/// (its relative standard error falls as 1/sqrt(2 (k - 1))) and a typo would run for days.
pub const MAX_SESSIONS: u32 = 1000;

/// What `vernier calibrate` asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CalibrationRequest {
    /// The configurations, as for a session; only a suite's specs count (calibration sets its
    /// own repetition).
    pub specs: Vec<String>,
    pub suite: Option<String>,
    /// Sessions to run, from 2 to [`MAX_SESSIONS`].
    pub sessions: u32,
    /// Measured runs per configuration and session, at least 2.
    pub runs: u32,
    pub warmup: u32,
    /// Seconds per configuration and session, warmups included.
    pub max_time_s: f64,
    /// Seconds over which the session starts are spread; `None`: back to back.
    pub spread_s: Option<f64>,
    /// `--setup` of every session.
    pub setup: Vec<String>,
}

/// How a calibration ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CalibrationEnd {
    Stored(StoredCalibration),
    /// A signal ended it: no calibration is stored; the finished sessions are, with `tag`.
    /// `in_session`: it interrupted a session, whose completed runs are stored.
    Interrupted {
        signal: Option<i32>,
        tag: String,
        in_session: bool,
    },
}

/// A calibration, stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCalibration {
    pub id: Uuid,
    /// The tag of its sessions, `calibration=ID`.
    pub tag: String,
    pub sessions: u32,
    pub calibrations: Vec<Calibration>,
    /// Configurations or sessions left out, and why.
    pub notes: Vec<CalibrationNote>,
    /// The sessions ran back to back (no spread): noise between sessions further apart is
    /// not seen.
    pub back_to_back: bool,
    pub location: Location,
}

/// Runs the sessions of `request` one after the other into the database at `database`,
/// then estimates and stores the calibration. Ctrl-C (or SIGTERM, SIGHUP) ends the session in
/// progress as it ends any session, and starts no further one.
pub fn calibrate(
    request: &CalibrationRequest,
    database: &Location,
    signals: &mut Signals,
    observer: &mut dyn Observer,
) -> Result<CalibrationEnd, AppError> {
    // Everything the user can get wrong is checked before anything runs: the calibration's
    // own bounds, then its first session as every session is checked.
    if !(2..=MAX_SESSIONS).contains(&request.sessions) {
        return Err(AppError::CalibrationSessions(request.sessions));
    }
    if request.runs < 2 {
        return Err(AppError::CalibrationRuns(request.runs));
    }
    let (_, specs) = resolve_specs(&request.specs, request.suite.as_deref())?;
    let id = Uuid::new_v4();
    crate::session::check(
        &session_request(request, &specs, id, 1),
        &mut Unobserved,
        &vernier_sys::Reads::new(),
    )?;
    // From here a signal ends the session in progress, or the wait for the next one.
    signals.watch()?;
    let tag = format!("calibration={id}");
    if let Sessions::Interrupted { in_session } =
        run_sessions(request, &specs, id, database, signals, observer)?
    {
        return Ok(CalibrationEnd::Interrupted {
            signal: signals.interrupt().signal(),
            tag,
            in_session,
        });
    }

    let mut store = database::open(database, Access::Create)?;
    let sessions: Vec<StoredSession> = store
        .find_sessions_by_tags(&[("calibration".to_string(), id.to_string())])?
        .into_iter()
        .map(|sid| {
            store
                .load_session(sid, Load::MEASUREMENTS)
                .map_err(|source| AppError::LoadSession { id: sid, source })
        })
        .collect::<Result<_, _>>()?;
    let created_at_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let estimate = estimate_calibration(created_at_ns, &sessions)?;
    if estimate.calibrations.is_empty() {
        return Err(AppError::NothingToCalibrate);
    }
    store
        .add_calibrations(&estimate.calibrations)
        .map_err(AppError::StoreCalibration)?;
    Ok(CalibrationEnd::Stored(StoredCalibration {
        id,
        tag,
        sessions: request.sessions,
        calibrations: estimate.calibrations,
        notes: estimate.notes,
        back_to_back: request.spread_s.is_none(),
        location: store.location().clone(),
    }))
}

/// Session `index` (from 1) of calibration `id`: the specs with the calibration's repetition
/// (no suite's settings, monitors or tags), the setup given, tagged with both.
fn session_request(
    request: &CalibrationRequest,
    specs: &[String],
    id: Uuid,
    index: u32,
) -> SessionRequest {
    SessionRequest {
        specs: specs.to_vec(),
        settings: SettingsLayer {
            warmup: Some(request.warmup),
            min_runs: Some(request.runs),
            max_runs: Some(request.runs),
            max_time_s: Some(request.max_time_s),
            ..SettingsLayer::default()
        },
        setup: request.setup.clone(),
        tags: vec![
            ("calibration".to_string(), id.to_string()),
            ("calibration-session".to_string(), index.to_string()),
        ],
        ..SessionRequest::default()
    }
}

/// How the calibration's sessions ended.
enum Sessions {
    /// Every one ran to its end.
    Done,
    /// A signal ended them; `in_session`: during a session, whose completed runs are stored.
    Interrupted { in_session: bool },
}

/// Runs the calibration's sessions, each at its start time.
fn run_sessions(
    request: &CalibrationRequest,
    specs: &[String],
    id: Uuid,
    database: &Location,
    signals: &mut Signals,
    observer: &mut dyn Observer,
) -> Result<Sessions, AppError> {
    let sessions = request.sessions;
    let started = Instant::now();
    for index in 1..=sessions {
        let start_at = session_start(request.spread_s, index, sessions);
        let wait = start_at.saturating_sub(started.elapsed());
        if !wait.is_zero() {
            observer.notice(&Notice::CalibrationWaits {
                index,
                sessions,
                wait,
            });
            if !wait_unless_interrupted(signals.interrupt(), wait) {
                return Ok(Sessions::Interrupted { in_session: false });
            }
        }
        observer.notice(&Notice::CalibrationSession { index, sessions });
        let session = session_request(request, specs, id, index);
        let failed = |detail: String| AppError::CalibrationSessionFailed { index, detail };
        match run_session(&session, database, signals, observer) {
            Ok(SessionEnd::Ran(ran)) => match ran.ending {
                Ending::Completed | Ending::Ended => {}
                Ending::Interrupted { .. } => {
                    return Ok(Sessions::Interrupted { in_session: true })
                }
                Ending::TimedOut { limit_s } => {
                    return Err(failed(format!(
                        "it ran past its time limit of {limit_s:.0} s"
                    )));
                }
                Ending::Failed { failures } => {
                    let list: Vec<String> = failures
                        .iter()
                        .map(|(label, error)| format!("{label}: {error}"))
                        .collect();
                    return Err(failed(list.join("; ")));
                }
            },
            Ok(SessionEnd::NotStarted { .. }) => {
                return Ok(Sessions::Interrupted { in_session: false })
            }
            Ok(SessionEnd::Skipped { reason, .. }) => {
                return Err(failed(format!("skipped: {reason}")))
            }
            Err(e) => {
                return Err(AppError::CalibrationSession {
                    index,
                    source: Box::new(e),
                })
            }
        }
        // A signal after the session's last run: it is complete, and no further one starts.
        if signals.interrupt().is_requested() {
            return Ok(Sessions::Interrupted { in_session: false });
        }
    }
    Ok(Sessions::Done)
}

/// The up-front check's progress: each session says its own notices when it runs.
struct Unobserved;

impl Observer for Unobserved {
    fn event(&mut self, _: &vernier_engine::Event) {}
    fn notice(&mut self, _: &Notice) {}
}

/// When session `i` (1-based) of `sessions` starts, after the first: spread evenly over
/// `spread` seconds (the last one starts at `spread`), or at once without a spread.
fn session_start(spread: Option<f64>, i: u32, sessions: u32) -> Duration {
    match spread {
        Some(s) if sessions > 1 => {
            Duration::from_secs_f64(s * f64::from(i - 1) / f64::from(sessions - 1))
        }
        _ => Duration::ZERO,
    }
}

/// Waits `wait`, or less when a signal asks to stop: true when the whole time passed.
fn wait_unless_interrupted(interrupt: &Interrupt, wait: Duration) -> bool {
    // Short steps keep Ctrl-C prompt; the wait is between sessions, never during a run.
    const STEP: Duration = Duration::from_millis(100);
    let until = Instant::now() + wait;
    loop {
        if interrupt.is_requested() {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(STEP));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_start_evenly_over_the_spread() {
        let at = |spread, i, n| session_start(spread, i, n).as_secs_f64();
        assert_eq!(at(None, 3, 5), 0.0);
        assert_eq!(at(Some(600.0), 1, 5), 0.0);
        assert_eq!(at(Some(600.0), 2, 5), 150.0);
        assert_eq!(at(Some(600.0), 5, 5), 600.0);
    }

    #[test]
    fn a_wait_ends_at_once_when_interrupted() {
        let interrupt = Interrupt::new();
        assert!(wait_unless_interrupted(&interrupt, Duration::ZERO));
        interrupt.request();
        assert!(!wait_unless_interrupted(
            &interrupt,
            Duration::from_secs(3600)
        ));
    }
}
