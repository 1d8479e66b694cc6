//! Where measurement writes its records: the narrow, write-only seam between the engine, which
//! produces sessions, configurations and runs, and a store, which keeps them.
//!
//! The trait lives here, in plain data, because both sides can see it here without seeing each
//! other: the engine records through it without depending on a database, and a store (the
//! `Store` trait of `vernier-store` extends it) implements it without depending on the engine.
//! A test double implements six methods.
//!
//! The engine calls the methods in this order: [`Recorder::begin_session`], then
//! [`Recorder::add_configuration`] for every configuration of the plan, then, configuration by
//! configuration or interleaved, [`Recorder::add_run`] for every run and
//! [`Recorder::finish_configuration`] when one stops (an interruption finishes every open
//! configuration with [`StopReason::Interrupted`]), and last [`Recorder::finish_session`].
//! [`Recorder::add_finding`] comes between them when something threatens the session's
//! validity while it runs (a value its setup set was changed by something else).
//! After an error it calls only `finish_session`, once, with [`SessionStatus::Failed`].

use uuid::Uuid;

use crate::finding::Finding;
use crate::profile::ProfileRecord;
use crate::record::{ConfigurationRecord, RunRecord, SessionInfo, SessionStatus, StopReason};

/// Keeps what a session records, as it happens. Each method should make its record durable
/// before it returns, so that a crash loses at most the run in progress.
pub trait Recorder {
    /// Why a record could not be kept.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Records a new session (status `running`).
    fn begin_session(&mut self, session: &SessionInfo) -> Result<(), Self::Error>;
    /// Records a configuration of a session before its first run.
    fn add_configuration(
        &mut self,
        session: Uuid,
        configuration: &ConfigurationRecord,
    ) -> Result<(), Self::Error>;
    /// Records one finished run (warmup or measured).
    fn add_run(&mut self, configuration: Uuid, run: &RunRecord) -> Result<(), Self::Error>;
    /// Records one profiled run of a configuration (`--profile`), after its timed runs and
    /// before [`Recorder::finish_configuration`].
    fn add_profile(
        &mut self,
        configuration: Uuid,
        profile: &ProfileRecord,
    ) -> Result<(), Self::Error>;
    /// Records why a configuration stopped.
    fn finish_configuration(
        &mut self,
        configuration: Uuid,
        reason: StopReason,
        converged: bool,
        error: Option<&str>,
    ) -> Result<(), Self::Error>;
    /// Adds a finding to those the session began with (`SessionInfo::findings`).
    fn add_finding(&mut self, session: Uuid, finding: &Finding) -> Result<(), Self::Error>;
    /// Records the end of a session.
    fn finish_session(
        &mut self,
        session: Uuid,
        status: SessionStatus,
        ended_at_ns: i64,
    ) -> Result<(), Self::Error>;
}
