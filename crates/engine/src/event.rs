//! Progress of a session, sent to an observer (the CLI renders it).

use uuid::Uuid;
use vernier_model::{ChangedSetting, SessionStatus, StopReason};

use crate::stopping::{Precision, SettingsWarning};

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
    /// A conflict of the settings (at plan time, `position` None) or one that a
    /// configuration's first run reveals; the bound that wins is named.
    Warning {
        position: Option<usize>,
        warning: SettingsWarning,
    },
    /// The configuration's work directory is being prepared, once per session, before its
    /// first run (`vernier_bench::Benchmark::prepare`: `compile` unpacks and configures a
    /// kernel tree); this may take minutes.
    Preparing {
        position: usize,
        label: String,
    },
    /// A measured run's setup (idle gate, cooldown) starts; it may wait.
    RunPreparing {
        position: usize,
        /// Index of the measured run about to start, from 0.
        index: u32,
    },
    /// A run's child starts (a measured run's setup is done): the run is in progress.
    RunStarted {
        position: usize,
        warmup: bool,
        /// Index among the runs of its kind, from 0.
        index: u32,
        /// Estimated seconds left in the whole session, this run included; `None` before
        /// the session's first run has ended (nothing to estimate from).
        eta_s: Option<f64>,
    },
    /// Values that the session's setup set were found changed by something else, `when`
    /// ("before" or "after") measured run `index` (from 0): said once per setting and value
    /// found; every run measured while they differ is marked.
    SetupChanged {
        position: usize,
        label: String,
        index: u32,
        when: String,
        changes: Vec<ChangedSetting>,
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
        /// Setup waits before this run, in seconds.
        waited_s: f64,
        /// Setup waits of the configuration so far, in seconds.
        waits_s: f64,
        /// Estimated seconds left in the whole session, setup waits included.
        eta_s: f64,
    },
    ConfigurationFinished {
        position: usize,
        label: String,
        reason: StopReason,
        converged: bool,
        /// When stopped as unreachable: the relative half-width the budget was projected to
        /// reach.
        reachable: Option<f64>,
        precision: Precision,
        /// The name of the primary metric whose runs `precision` describes (`p99` for
        /// latency: the median of the runs' p99).
        metric: String,
        unit: String,
        error: Option<String>,
    },
    SessionFinished {
        session: Uuid,
        status: SessionStatus,
    },
}
