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
    /// What `bisect start` asked for (stored with the other fields, not nested).
    #[serde(flatten)]
    pub terms: BisectTerms,
    /// Commits whose build failed (skipped, as `git bisect skip`).
    pub unbuildable: Vec<String>,
    /// Seconds spent building and booting so far (the sessions' own time is theirs).
    pub build_s: f64,
    /// With `--boot`: the kernel booted for a step, awaiting its check or checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_boot: Option<KernelBoot>,
    /// With `--boot`: every boot that did not bring up the kernel expected, with what was
    /// found; a commit with [`BOOT_ATTEMPTS`] of them is skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boot_failures: Vec<BootFailure>,
}

/// How many boots of one commit's kernel may fail (a wrong kernel came up, the boot did not
/// happen, the boot command failed) before the commit is skipped, as one whose build failed.
pub const BOOT_ATTEMPTS: usize = 2;

impl Bisection {
    /// The boots of `commit` that failed so far.
    pub fn boot_failures_of(&self, commit: &str) -> usize {
        self.boot_failures
            .iter()
            .filter(|f| f.commit == commit)
            .count()
    }

    /// Commits skipped because their kernel failed to come up [`BOOT_ATTEMPTS`] times.
    pub fn unbootable(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for f in &self.boot_failures {
            if !out.contains(&f.commit.as_str())
                && self.boot_failures_of(&f.commit) >= BOOT_ATTEMPTS
            {
                out.push(&f.commit);
            }
        }
        out
    }
}

/// A kernel booted for a step (`--boot`, docs/bisect.md "Kernels"): stored before the boot
/// command runs, so that the `bisect resume` after the boot knows what it must find.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelBoot {
    /// The commit whose kernel was booted.
    pub commit: String,
    /// The release the running kernel must report (`uname -r`), as the build said it.
    pub release: String,
    /// The boot id (random(4)) when the boot command ran: a boot changes it.
    pub boot_id_before: String,
    /// The boot id of the boot found running the right kernel: the steps of this commit
    /// are measured while it runs. None: not checked yet.
    pub booted: Option<String>,
    /// Which attempt at booting this commit (1, 2, ...).
    pub attempt: usize,
}

/// A boot that did not bring up the kernel expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootFailure {
    pub commit: String,
    pub attempt: usize,
    /// What was found, in words: the release running, or that no boot happened.
    pub finding: String,
}

/// How a bisection builds and measures each commit and what it may spend: what `bisect start`
/// asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectTerms {
    /// The shell command that builds a commit in its work tree; none: nothing to build.
    pub build: Option<String>,
    /// The shell command run after a build to install and boot it (kernels).
    pub boot: Option<String>,
    /// With `boot`: the shell command that prints, in the built tree, the release its kernel
    /// reports (`uname -r`); none: `make -s kernelrelease`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_release: Option<String>,
    /// What each session runs, as for `vernier run`.
    pub specs: Vec<String>,
    /// The metric followed; none: the configuration's primary metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// Each session's limits, as `vernier run`'s flags set them.
    #[serde(flatten)]
    pub limits: SessionLimits,
    /// The relative change that counts; none: half the regression between the ends.
    pub threshold: Option<f64>,
    /// Sessions the bisection may run in all.
    pub budget_sessions: u32,
    /// Time it may take in all (sessions and builds), seconds.
    pub budget_s: Option<f64>,
    /// Sessions at one commit after which, still undecided, it is skipped.
    pub commit_sessions: u32,
}

/// How long one session measures: `vernier run`'s `--warmup`, `--min-runs`, `--max-runs` and
/// `--max-time`, for sessions that a command runs on the user's behalf (a bisection's steps,
/// `bisect judge`); none leaves the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionLimits {
    pub warmup: Option<u32>,
    pub min_runs: Option<u32>,
    pub max_runs: Option<u32>,
    pub max_time_s: Option<f64>,
}

impl SessionLimits {
    /// These limits as a settings layer over a session's defaults.
    pub fn layer(&self) -> crate::SettingsLayer {
        crate::SettingsLayer {
            warmup: self.warmup,
            min_runs: self.min_runs,
            max_runs: self.max_runs,
            max_time_s: self.max_time_s,
            ..crate::SettingsLayer::default()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A bisection as the store holds it (migration 0011): one flat JSON object, its terms and
    /// limits among the other fields.
    const STORED: &str = r#"{"id":"6f1c2a47-8d3e-4b5a-9c1d-2e3f4a5b6c7d","created_at_ns":5,
        "repo":"/src/app","commits":["a","b","c"],"build":"make","boot":null,
        "specs":["command:cmd=./app"],"metric":"user_time","warmup":1,"min_runs":null,
        "max_runs":10,"max_time_s":30.0,"threshold":0.05,"budget_sessions":40,"budget_s":null,
        "commit_sessions":6,"unbuildable":[],"build_s":1.5}"#;

    #[test]
    fn a_stored_bisection_reads_into_its_terms_and_writes_back_flat() {
        let b: Bisection = serde_json::from_str(STORED).unwrap();
        assert_eq!(b.terms.build.as_deref(), Some("make"));
        assert_eq!(b.terms.metric.as_deref(), Some("user_time"));
        assert_eq!(
            b.terms.limits,
            SessionLimits {
                warmup: Some(1),
                min_runs: None,
                max_runs: Some(10),
                max_time_s: Some(30.0),
            }
        );
        assert_eq!(
            (b.terms.threshold, b.terms.commit_sessions),
            (Some(0.05), 6)
        );
        let written: serde_json::Value = serde_json::to_value(&b).unwrap();
        let stored: serde_json::Value = serde_json::from_str(STORED).unwrap();
        assert_eq!(written, stored);
    }

    #[test]
    fn limits_become_a_settings_layer_leaving_the_rest() {
        let layer = SessionLimits {
            warmup: Some(0),
            min_runs: None,
            max_runs: Some(7),
            max_time_s: Some(12.0),
        }
        .layer();
        assert_eq!(
            (
                layer.warmup,
                layer.min_runs,
                layer.max_runs,
                layer.max_time_s
            ),
            (Some(0), None, Some(7), Some(12.0))
        );
        assert_eq!(layer.target, None);
        assert_eq!(layer.seed, None);
    }
}
