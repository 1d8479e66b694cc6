//! Progress of a session, sent to an observer (the CLI renders it).

use uuid::Uuid;
use vernier_model::{SessionStatus, StopReason};

use crate::stopping::Precision;

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    SessionStarted {
        session: Uuid,
        configurations: usize,
    },
    ConfigurationStarted {
        position: usize,
        label: String,
    },
    RunFinished {
        position: usize,
        label: String,
        warmup: bool,
        /// Index among the runs of its kind, from 0.
        index: u32,
        value: f64,
        unit: String,
        /// Precision of the measured runs so far.
        precision: Precision,
        target: f64,
        /// Estimated seconds left in the whole session.
        eta_s: f64,
    },
    ConfigurationFinished {
        position: usize,
        label: String,
        reason: StopReason,
        converged: bool,
        precision: Precision,
        unit: String,
        error: Option<String>,
    },
    SessionFinished {
        session: Uuid,
        status: SessionStatus,
    },
}
