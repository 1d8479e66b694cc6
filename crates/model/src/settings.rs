//! Execution settings of a session: warmup, the stopping rule's bounds and interleaving.

use serde::{Deserialize, Serialize};

/// How each configuration of a session is repeated. Stored with the session, so a result can
/// always be read together with the rule that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Warmup runs per configuration: executed in fresh processes, stored, never analysed.
    pub warmup: u32,
    /// Target relative half-width of the 95% CI of the median (0.02 = 2%).
    pub target: f64,
    pub min_runs: u32,
    pub max_runs: u32,
    /// Minimum measured time per configuration, in seconds.
    pub min_time_s: f64,
    /// Maximum time per configuration (warmups included), in seconds.
    pub max_time_s: f64,
    /// Run the configurations in randomized rounds instead of one after another.
    pub interleave: bool,
    /// Seed of the random generator that orders the rounds.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            warmup: 1,
            target: 0.02,
            min_runs: 6,
            max_runs: 100,
            min_time_s: 0.0,
            max_time_s: 60.0,
            interleave: false,
            seed: 0,
        }
    }
}
