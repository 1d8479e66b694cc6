//! What a benchmark child applies to itself before it measures: the part of `--setup` that
//! belongs to one process (`rt`, `pin`) rather than to the machine. Setup plans it, the engine
//! sends it to every child in the run request, and the child applies it with
//! `vernier_sys::sched::apply_child_setup`.

use serde::{Deserialize, Serialize};

/// Real-time priority and CPU pinning of a benchmark child.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildSetup {
    /// SCHED_FIFO with this priority.
    pub rt_priority: Option<i32>,
    /// Restrict the child to these CPUs.
    pub cpus: Option<Vec<usize>>,
    /// The session's ftrace instance (a directory of tracefs), when a configuration traces
    /// its worst latencies (`latency:trace=US`): the child arms it, marks and stops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_instance: Option<std::path::PathBuf>,
}
