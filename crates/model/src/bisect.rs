//! A bisection of `vernier bisect` as stored (the `bisections` table, docs/bisect.md): what
//! it searches and how. Its measurements are ordinary sessions tagged `bisect=ID` and
//! `commit=SHA`; this record holds what the sessions cannot say.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The tag key of a bisection's sessions: its id.
pub const BISECT_TAG: &str = "bisect";
/// The tag key of the commit a session measured.
pub const COMMIT_TAG: &str = "commit";

/// One bisection: the range of commits, how each is built and measured, what it may spend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bisection {
    pub id: Uuid,
    pub created_at_ns: i64,
    /// The repository bisected (the user's checkout, never changed).
    pub repo: String,
    /// The commits of the range in order: the good end first, the bad end last (the first-parent
    /// path `git rev-list --first-parent --reverse GOOD..BAD`, preceded by GOOD).
    pub commits: Vec<String>,
    /// The shell command that builds a commit in its work tree; none: nothing to build.
    pub build: Option<String>,
    /// The shell command run after a build to install and boot it (kernels).
    pub boot: Option<String>,
    /// What each session runs, as for `vernier run`.
    pub specs: Vec<String>,
    /// The metric followed; none: the configuration's primary metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// Settings of each session (`vernier run`'s flags).
    pub warmup: Option<u32>,
    pub min_runs: Option<u32>,
    pub max_runs: Option<u32>,
    pub max_time_s: Option<f64>,
    /// The relative change that counts; none: half the regression between the ends.
    pub threshold: Option<f64>,
    /// Sessions the bisection may run in all.
    pub budget_sessions: u32,
    /// Time it may take in all (sessions and builds), seconds.
    pub budget_s: Option<f64>,
    /// Sessions at one commit after which, still undecided, it is skipped.
    pub commit_sessions: u32,
    /// Commits whose build failed (skipped, as `git bisect skip`).
    pub unbuildable: Vec<String>,
    /// Seconds spent building and booting so far (the sessions' own time is theirs).
    pub build_s: f64,
}
