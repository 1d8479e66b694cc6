//! Load profiles: background work that runs during every measured run, so that a benchmark (a
//! latency measurement above all) can be measured under a defined, repeatable load, as rteval
//! and the OSADL QA Farm measure latency under load (docs: RESEARCH.md 1.4 and 1.5).
//!
//! `--load cpu:duty=50,io` names the loads in the spec grammar of every vernier spec
//! (`vernier_model::spec`); [`LoadSet::parse`] checks them into a [`LoadPlan`] whose
//! [`LoadPlan::canonical`] specs (every option resolved) are stored with each configuration, so
//! that compare matches on them.
//!
//! Each load runs in a process of its own, a fresh `vernier __load SPEC` (the supervisor,
//! [`load_main`]), in its own process group, so that it shares nothing with the controller and
//! the measured child but the machine. Why processes and not threads of the controller: the
//! CPU the load used is then exact and separate (wait4(2)'s rusage of the supervisor, which
//! includes every descendant it reaped), the controller's own CPU accounting
//! (`controller_cpu_ns`) is not disturbed, and the whole load can be killed.
//!
//! The supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER, prctl(2)): processes a load
//! starts (a `command`'s program and what it forks, hackbench's workers) come back to it when
//! their parent dies, so they stay in its process tree whatever their process group, it reaps
//! them, and their CPU time reaches the controller's wait4. A load's program leads a process
//! group of its own, which the supervisor kills in one call from its SIGTERM handler, so that
//! the load stops using CPU at once; then it kills what is left of its tree, reaps it and
//! exits. It gets SIGTERM as its parent-death signal too, so a controller that dies takes its
//! loads with it. The controller kills the tree and the supervisor's group itself when the
//! supervisor does not end within a grace time.
//!
//! The loads, one file each, with their descriptions and registry, are in [`loads`]; the
//! checking of `--load` and the canonical specs in [`spec`]; what the in-process loads share
//! in `work`.

mod control;
pub mod loads;
pub mod spec;
mod supervisor;
mod work;

pub use control::{LoadUsage, RunningLoads};
pub use loads::registry;
pub use spec::{Load, LoadError, LoadPlan, LoadSet};
pub use supervisor::{load_main, HackbenchParams};
