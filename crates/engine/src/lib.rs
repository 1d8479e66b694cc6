//! Executes a plan of benchmark configurations with the rigour of a lab.
//!
//! The flow is: specs (`hackbench:groups=4,8:ipc=pipe`) are parsed and expanded into a
//! [`plan::Plan`] that is validated completely before anything runs; [`session::run_session`]
//! then executes every run of every configuration in a fresh child process through an
//! [`executor::Executor`], applies the [`stopping`] rule, hands every record to a
//! [`vernier_model::Recorder`] as it goes (a store implements it; the engine never sees a
//! database) and reports progress as [`event::Event`]s. The engine never prints: the CLI
//! renders the events.

pub mod child;
pub mod event;
pub mod executor;
pub mod interrupt;
pub mod placement;
pub mod plan;
pub mod profile;
pub mod session;
pub mod spec;
pub mod stopping;
pub mod suite;

pub use event::Event;
pub use executor::{Executor, ProcessExecutor, RunOutcome, RunTimeout};
pub use interrupt::{watch_signals, Interrupt, SignalEvent, ENDING_SIGNALS};
pub use plan::{build_plan, check_machine, Plan, PlanError, PlannedConfiguration};
pub use profile::{ProfileError, Profiler};
pub use session::{run_session, EngineError, NoHooks, RunHooks, SessionOptions, SessionOutcome};
