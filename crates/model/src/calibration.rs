//! What `vernier calibrate` measures: the session-to-session noise of a configuration in one
//! environment, which `compare` adds to intervals computed from the runs of single sessions.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::options::Options;

/// The session-to-session noise of one configuration (benchmark, options, metric) in the
/// environment with `fingerprint`, estimated from `sessions` short sessions run one after the
/// other. Standard deviations are of natural logarithms of the metric, so 0.01 is about 1%.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub id: Uuid,
    pub created_at_ns: i64,
    pub fingerprint: String,
    pub benchmark: String,
    pub options: Options,
    pub metric: String,
    /// Sessions with measured runs the estimate comes from.
    pub sessions: u32,
    /// Measured runs over all of them.
    pub runs: u32,
    /// Standard deviation of the sessions' log-medians.
    pub session_sd: f64,
    /// Root mean square of the standard errors of those medians (Maritz-Jarrett): what the
    /// runs within a session explain of `session_sd`.
    pub within_sd: f64,
    /// The session-to-session noise: `sqrt(max(0, session_sd^2 - within_sd^2))`.
    pub between_sd: f64,
    /// Degrees of freedom of the estimate (sessions - 1).
    pub df: f64,
    /// The sessions measured.
    pub session_ids: Vec<Uuid>,
}
