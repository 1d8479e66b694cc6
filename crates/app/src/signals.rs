//! What the ending signals (SIGINT, SIGTERM, SIGHUP) do to a session. Ctrl-C, SIGTERM and
//! SIGHUP all end it alike. The first: the run in progress is killed, no new one starts, the
//! completed runs stay, the session is marked interrupted and the system restored on the
//! ordinary way out (`crate::session`). A repeated one leaves at once, for when that way is
//! stuck: the system is restored from the host's restore record, the session marked
//! interrupted (if the database lets it within [`LEAVING_LOCK_WAIT`]), the work directory
//! removed, and the process exits with 128 + the signal. Only SIGKILL leaves anything behind,
//! for `vernier system reset`.
//!
//! [`Signals`] is installed once per process and serves every session the process runs one
//! after another (`calibrate` runs several); outside a session a signal only requests the
//! interrupt, which the caller looks at. What a signal means to the command (the session was
//! interrupted, or that is how monitoring ends) is [`OnSignal`], part of the request.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use uuid::Uuid;
use vernier_engine::{Interrupt, SignalEvent};
use vernier_model::SessionStatus;
use vernier_setup::{RestoreRecord, SetupError};
use vernier_store::{Access, Location, StoreError};

use crate::AppError;

/// How long leaving at once (a repeated signal) waits for the database to mark the session
/// interrupted; if it stays locked, the session reads as abandoned once vernier has exited.
pub const LEAVING_LOCK_WAIT: Duration = Duration::from_secs(5);

/// What an ending signal means to the command that runs a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnSignal {
    /// `run`: the session was interrupted; the command exits with 128 + the signal's number.
    #[default]
    Interrupt,
    /// `monitor`: the signal is how monitoring ends; the command succeeds. The session is
    /// stored as interrupted all the same, since that is what happened to its last interval.
    End,
}

/// The exit status after an ending signal (Ctrl-C when none is known): 128 + its number, as a
/// shell reports death by that signal.
pub fn exit_status_after(signal: Option<i32>) -> u8 {
    let signal = signal.unwrap_or(libc::SIGINT);
    u8::try_from(128 + signal).unwrap_or(u8::MAX)
}

/// What the signal thread reports, for the binary to tell the user (from that thread: the
/// report must not block, or a next signal would wait for it).
#[derive(Debug)]
pub enum SignalNotice {
    /// The first ending signal. `in_session`: a session runs and will stop after ending the
    /// run in progress; otherwise the command sees the interrupt itself.
    First { signal: i32, in_session: bool },
    /// A repeated signal during a session: the system is restored and the process leaves at
    /// once.
    Leaving { signal: i32 },
    /// Leaving at once could not remove the session's work directory.
    CannotRemove {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Leaving at once could not restore the system from the record.
    CannotRestore { error: SetupError },
    /// Leaving at once could not mark the session interrupted.
    CannotMarkInterrupted { session: Uuid, error: StoreError },
}

/// What leaving at once needs to know of the session in progress.
#[derive(Debug, Clone)]
pub(crate) struct Leaving {
    /// The host's restore record, replayed when it is this session's.
    pub record: PathBuf,
    pub database: Location,
    pub session: Uuid,
    /// Work directories of benchmarks prepared once per session, removed.
    pub work_root: PathBuf,
}

type Report = Box<dyn FnMut(SignalNotice) + Send>;

/// The ending signals of this process, received by a thread of its own from
/// [`Signals::watch`] on, and the interrupt they request.
pub struct Signals {
    interrupt: Arc<Interrupt>,
    session: Arc<Mutex<Option<Leaving>>>,
    /// Until [`Signals::watch`] installs the watcher.
    report: Option<Report>,
}

impl Signals {
    /// Signals whose notices go to `report` once [`Signals::watch`] has been called; until
    /// then the signals keep their default action (they end the process, which has changed
    /// nothing yet).
    pub fn new(report: impl FnMut(SignalNotice) + Send + 'static) -> Self {
        Signals {
            interrupt: Arc::new(Interrupt::new()),
            session: Arc::new(Mutex::new(None)),
            report: Some(Box::new(report)),
        }
    }

    /// From now on, receives the ending signals instead of dying by them. A session calls it
    /// right before it may change anything; a command that waits between sessions calls it
    /// first, so that its waits end on Ctrl-C too. Later calls do nothing.
    pub fn watch(&mut self) -> Result<(), AppError> {
        let Some(mut report) = self.report.take() else {
            return Ok(());
        };
        let session = Arc::clone(&self.session);
        vernier_engine::watch_signals(Arc::clone(&self.interrupt), move |event| {
            let leaving = lock(&session).clone();
            match event {
                SignalEvent::First(signal) => report(SignalNotice::First {
                    signal,
                    in_session: leaving.is_some(),
                }),
                SignalEvent::Repeated(signal) => {
                    if let Some(leaving) = leaving {
                        report(SignalNotice::Leaving { signal });
                        leave_now(&leaving, signal, &mut report);
                    }
                }
            }
        })
        .map_err(AppError::SignalHandlers)
    }

    /// The interrupt the first signal requests: the engine stops at it, and a command that
    /// runs several sessions starts no further one.
    pub fn interrupt(&self) -> &Arc<Interrupt> {
        &self.interrupt
    }

    /// Marks `leaving`'s session as the one in progress until the returned guard drops.
    pub(crate) fn session(&self, leaving: Leaving) -> InSession<'_> {
        *lock(&self.session) = Some(leaving);
        InSession(self)
    }
}

/// A session in progress: a repeated signal leaves at once from it.
pub(crate) struct InSession<'a>(&'a Signals);

impl Drop for InSession<'_> {
    fn drop(&mut self) {
        *lock(&self.0.session) = None;
    }
}

/// The session in progress; a panic elsewhere while it was held leaves a value still valid.
fn lock(session: &Mutex<Option<Leaving>>) -> MutexGuard<'_, Option<Leaving>> {
    session.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Restores the system from the session's record, marks the session interrupted, removes its
/// work directory and exits with 128 + `signal`.
fn leave_now(leaving: &Leaving, signal: i32, report: &mut Report) -> ! {
    let Leaving {
        record,
        database,
        session,
        work_root,
    } = leaving;
    if work_root.exists() {
        if let Err(error) = std::fs::remove_dir_all(work_root) {
            report(SignalNotice::CannotRemove {
                path: work_root.clone(),
                error,
            });
        }
    }
    // Only this session's record: another live session's is not ours to undo, and one left
    // by a killed session is for `system reset` to replay.
    if is_ours(record, *session) {
        if let Err(error) = vernier_setup::restore_from_record(record) {
            report(SignalNotice::CannotRestore { error });
        }
    }
    let ended = vernier_store::open_with_lock_wait(database, Access::Write, LEAVING_LOCK_WAIT)
        .and_then(|mut s| {
            s.end_running_session(
                *session,
                SessionStatus::Interrupted,
                vernier_sys::clock::unix_now_ns(),
            )
        });
    if let Err(error) = ended {
        report(SignalNotice::CannotMarkInterrupted {
            session: *session,
            error,
        });
    }
    std::process::exit(i32::from(exit_status_after(Some(signal))))
}

/// Whether the restore record at `record` is `session`'s, written by this process.
fn is_ours(record: &Path, session: Uuid) -> bool {
    RestoreRecord::load(record)
        .ok()
        .flatten()
        .is_some_and(|r| r.session == Some(session.to_string()) && r.owner().is_current())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_status_is_128_and_the_signal() {
        assert_eq!(exit_status_after(Some(libc::SIGTERM)), 143);
        assert_eq!(exit_status_after(Some(libc::SIGHUP)), 129);
        assert_eq!(exit_status_after(None), 130);
    }

    #[test]
    fn a_session_is_in_progress_while_its_guard_lives() {
        let signals = Signals::new(|_| {});
        let leaving = Leaving {
            record: PathBuf::from("/nonexistent/setup.json"),
            database: Location::File(PathBuf::from("/nonexistent/v.db")),
            session: Uuid::new_v4(),
            work_root: PathBuf::from("/nonexistent/work"),
        };
        {
            let _in = signals.session(leaving.clone());
            assert_eq!(
                lock(&signals.session).as_ref().map(|l| l.session),
                Some(leaving.session)
            );
        }
        assert!(lock(&signals.session).is_none());
        assert!(!is_ours(&leaving.record, leaving.session));
    }
}
