//! The application layer: what vernier's commands that measure do, as functions of typed
//! requests. A [`SessionRequest`] (specs or a suite, the command line's settings, monitors,
//! setup, loads, tags, a note, what to do on a busy machine and what a signal means) is run by
//! [`run_session`]: checked, measured through the engine, stored, the system restored on every
//! way out. `monitor` builds its request with [`monitor::monitoring_session`]; `calibrate`
//! runs several through [`calibrate::calibrate`].
//!
//! Where things are: `request.rs` holds the request and the one place where settings are
//! layered (defaults < suite < flags); `session.rs` runs it; `hooks.rs` is what runs around
//! every measured run (per-run setup steps, loads); `signals.rs` what a signal does; `host.rs`
//! the host's setup records and lock; `busy.rs` `--if-busy`; `config.rs` the user's
//! configuration directory; `database.rs` opening the database.
//!
//! Nothing here prints: progress and notices go to an [`Observer`], the signal thread's
//! notices to the reporter given to [`Signals::new`], and the results come back as values
//! ([`SessionEnd`], [`calibrate::CalibrationEnd`]) for the binary to show.

pub mod bisect;
pub mod busy;
pub mod calibrate;
pub mod config;
pub mod database;
mod error;
mod hooks;
pub mod host;
pub mod monitor;
mod request;
mod session;
pub mod signals;

pub use busy::{BusyPolicy, IfBusy};
pub use error::AppError;
pub use request::{
    default_time_limit_s, layered_settings, resolve_specs, SessionRequest, TimeLimit,
    DEFAULT_SUITE, TIME_LIMIT_MARGIN_S,
};
pub use session::{run_session, Ending, Notice, Observer, RanSession, SessionEnd};
pub use signals::{exit_status_after, OnSignal, SignalNotice, Signals};

/// The version stored with every session.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
