//! What measurement records: sessions, their configurations and every run.
//!
//! Timestamps are nanoseconds since the Unix epoch (`_ns`), durations nanoseconds, sizes bytes.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::benchmark::MetricInfo;
use crate::environment::Environment;
use crate::finding::Finding;
use crate::histogram::RunHistogram;
use crate::monitor::RunMonitorData;
use crate::options::Options;
use crate::settings::Settings;
use crate::values::RunValues;

/// The state of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionStatus {
    Running,
    Completed,
    Interrupted,
    Failed,
    /// Stored as `running`, but the process recording it is gone (killed, crashed, or the
    /// machine went down) and nothing will finish it. Derived when the session is read; the
    /// runs it recorded are complete.
    Abandoned,
    /// Never started: the machine was busy (`--if-busy`); the note says why. It has no
    /// configurations.
    Skipped,
}

/// Why the repetition of a configuration stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The CI of the median became narrow enough.
    Converged,
    MaxRuns,
    MaxTime,
    /// The target is out of reach within the runs and time left, projected from the spread so
    /// far: stopped early for futility.
    Unreachable,
    Interrupted,
    /// A run of the configuration failed; the error is stored with the configuration.
    Failed,
}

macro_rules! kebab_enum_text {
    ($ty:ty { $($variant:ident => $text:literal),* $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),* }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok(Self::$variant),)*
                    other => Err(format!("unknown value '{other}'")),
                }
            }
        }
    };
}

kebab_enum_text!(SessionStatus {
    Running => "running",
    Completed => "completed",
    Interrupted => "interrupted",
    Failed => "failed",
    Abandoned => "abandoned",
    Skipped => "skipped",
});

kebab_enum_text!(StopReason {
    Converged => "converged",
    MaxRuns => "max-runs",
    MaxTime => "max-time",
    Unreachable => "unreachable",
    Interrupted => "interrupted",
    Failed => "failed",
});

/// A session: one invocation of `vernier run`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub id: Uuid,
    pub started_at_ns: i64,
    pub ended_at_ns: Option<i64>,
    pub status: SessionStatus,
    /// The built-in suite that was run, if any.
    pub suite: Option<String>,
    /// The specs as given (or as the suite defines them).
    pub specs: Vec<String>,
    pub tags: BTreeMap<String, String>,
    pub note: Option<String>,
    pub settings: Settings,
    pub vernier_version: String,
    pub environment: Environment,
    /// Hash of the stable fields of the environment (see [`Environment::fingerprint`]).
    pub fingerprint: String,
    /// What `system check` found on the machine when the session started.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The setup plugins applied (`--setup`), as given.
    #[serde(default)]
    pub setup: Vec<String>,
    /// The monitors sampled during each measured run, as given or by default.
    #[serde(default)]
    pub monitors: Vec<String>,
}

/// Checks a tag key, tag value or note as given by a user: one line of printable text, of at
/// most [`crate::validate::MAX_TEXT_BYTES`].
/// Control characters (a newline, an ANSI escape) would break or rewrite every table and
/// terminal that shows the text later, so they are refused at input. `what` names the text in
/// the message ("tag value", "note").
pub fn check_user_text(what: &str, text: &str) -> Result<(), String> {
    let most = crate::validate::MAX_TEXT_BYTES;
    if text.len() > most {
        return Err(format!(
            "{what} is {} bytes long; {what}s are at most {most} bytes (1 MiB)",
            text.len()
        ));
    }
    match text.chars().find(|c| c.is_control()) {
        Some(c) => Err(format!(
            "{what} '{}' contains the control character {:?}; {what}s are one line of printable text",
            text.escape_debug(),
            c
        )),
        None => Ok(()),
    }
}

/// One configuration of a session: a benchmark with fully resolved options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigurationRecord {
    pub id: Uuid,
    /// Position in the plan, from 0.
    pub position: u32,
    pub benchmark: String,
    pub benchmark_version: String,
    pub options: Options,
    /// The primary metric: what the stopping rule watches and compare's verdict is about.
    pub metric: MetricInfo,
    /// Further metrics the runs report (for latency: max, p99.9, ...), shown and compared
    /// next to the primary one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secondary_metrics: Vec<MetricInfo>,
    /// The load profiles running during every measured run (`--load`), as canonical specs;
    /// part of what makes two configurations comparable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<String>,
    /// Set when the configuration has finished.
    pub stop_reason: Option<StopReason>,
    pub converged: bool,
    /// The error of a failed run, when `stop_reason` is `failed`.
    pub error: Option<String>,
}

/// Resource usage of a run's child process and its reaped descendants (wait4(2)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rusage {
    pub user_cpu_ns: i64,
    pub system_cpu_ns: i64,
    pub voluntary_cs: i64,
    pub involuntary_cs: i64,
    pub max_rss_bytes: i64,
}

impl Rusage {
    pub fn cpu_ns(&self) -> i64 {
        self.user_cpu_ns + self.system_cpu_ns
    }
}

/// USER_HZ: the clock ticks per second of /proc accounting (/proc/stat, /proc/PID/stat). The
/// kernel fixes it at 100 in its ABI on every architecture vernier runs on
/// (include/asm-generic/param.h), whatever CONFIG_HZ is; sysconf(_SC_CLK_TCK) returns it,
/// which `vernier_sys::clock` reads on the running machine and tests against this value.
/// Analysis uses it for data recorded on any machine.
pub const USER_HZ: u64 = 100;

/// One execution of a configuration in a fresh child process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: Uuid,
    /// Index among the runs of its kind: measured runs count 0, 1, 2, ...; warmups likewise.
    pub index: u32,
    pub warmup: bool,
    /// The round of an interleaved session (0 when not interleaved).
    pub round: u32,
    /// Executions of this configuration earlier in the session, warmups included.
    pub preceding_executions: u32,
    pub started_at_ns: i64,
    pub ended_at_ns: i64,
    /// The metric values the benchmark reported; the primary metric is always present.
    pub values: RunValues,
    /// The distributions of the run's samples, one per measurement thread, for benchmarks that
    /// take many samples per run (latency); their summaries are among `values`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histograms: Vec<RunHistogram>,
    pub rusage: Rusage,
    /// CPU time spent on the machine during the run by anything but the child and the
    /// controller: busy time from /proc/stat minus both. Counted in ticks of [`USER_HZ`], so it
    /// is noisy by a few ticks per CPU; may be slightly negative.
    pub foreign_cpu_ns: i64,
    /// CPU time of the controller process during the run (monitors, waiting).
    pub controller_cpu_ns: i64,
    /// CPU time of the load profiles running during the run (`--load`); not part of
    /// `foreign_cpu_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_cpu_ns: Option<i64>,
    /// What the monitors recorded during the run (measured runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitors: Option<Box<RunMonitorData>>,
    /// The per-run setup steps executed before the run (drop caches, idle gate, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup_steps: Vec<SetupStep>,
    /// Values that the session's setup set and that something else had changed right before
    /// or right after the run: the run measured at least partly without the setup asked for.
    /// Empty for a run measured as set up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup_changed: Vec<ChangedSetting>,
}

impl RunRecord {
    /// Where the run belongs within `configuration` (its configuration's id).
    pub fn place(&self, configuration: Uuid) -> crate::RunPlace {
        crate::RunPlace {
            configuration,
            warmup: self.warmup,
            index: self.index,
        }
    }
}

/// A per-run setup step as it happened before a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupStep {
    pub plugin: String,
    pub waited_ms: u64,
    /// The wait ended by its timeout, not by its condition.
    pub timed_out: bool,
    pub detail: String,
}

/// A value that a session's setup set (a sysctl, a CPU's governor) found changed by something
/// else while the session ran, by the check right before or right after a measured run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedSetting {
    /// What the setup set: its file (`/proc/sys/vm/swappiness`).
    pub setting: String,
    /// The value in effect once the setup had set it (as read back right after).
    pub set: String,
    /// The value found instead, or why it could not be read.
    pub found: String,
}

impl std::fmt::Display for ChangedSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is {} (set: {})", self.setting, self.found, self.set)
    }
}

/// A configuration as stored, with its runs in execution order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredConfiguration {
    #[serde(flatten)]
    pub record: ConfigurationRecord,
    pub runs: Vec<RunRecord>,
    /// Its profiled runs (`--profile`), after the timed ones; never part of its statistics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<crate::profile::ProfileRecord>,
}

impl StoredConfiguration {
    /// The primary metric of the measured runs, in run order.
    pub fn values(&self) -> Vec<f64> {
        self.metric_values(&self.record.metric.name)
    }

    /// A metric of the measured runs that reported it, in run order.
    pub fn metric_values(&self, metric: &str) -> Vec<f64> {
        self.metric_columns(&[metric]).pop().unwrap_or_default()
    }

    /// [`Self::metric_values`] of each of `metrics`, from one pass over the runs: a session of
    /// 100,000 runs holds tens of MB of them, which a pass per metric read again and again.
    pub fn metric_columns(&self, metrics: &[&str]) -> Vec<Vec<f64>> {
        let measured = self.runs.iter().filter(|r| !r.warmup).count();
        let mut columns: Vec<Vec<f64>> = metrics
            .iter()
            .map(|_| Vec::with_capacity(measured))
            .collect();
        let mut hints = vec![0; metrics.len()];
        for run in self.runs.iter().filter(|r| !r.warmup) {
            for ((metric, column), hint) in metrics.iter().zip(&mut columns).zip(&mut hints) {
                if let Some(value) = run.values.get_near(metric, hint) {
                    column.push(*value);
                }
            }
        }
        columns
    }
}

impl ConfigurationRecord {
    /// What matches this configuration across sessions: benchmark, options and loads.
    pub fn key(&self) -> crate::ConfigKey {
        crate::ConfigKey::loaded(&self.benchmark, &self.options, &self.loads)
    }

    /// The primary metric, then the secondary ones.
    pub fn metrics(&self) -> impl Iterator<Item = &MetricInfo> {
        std::iter::once(&self.metric).chain(&self.secondary_metrics)
    }
}

/// A whole session as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredSession {
    #[serde(flatten)]
    pub info: SessionInfo,
    pub configurations: Vec<StoredConfiguration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reason_text_round_trips() {
        for r in [
            StopReason::Converged,
            StopReason::MaxRuns,
            StopReason::MaxTime,
            StopReason::Unreachable,
            StopReason::Interrupted,
            StopReason::Failed,
        ] {
            assert_eq!(r.as_str().parse::<StopReason>(), Ok(r));
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{r}\""));
        }
        assert!("done".parse::<StopReason>().is_err());
    }

    #[test]
    fn user_text_is_one_printable_line() {
        assert!(check_user_text("note", "baseline, kernel 6.18 (ünïcode ok)").is_ok());
        assert_eq!(
            check_user_text("tag value", "a\nb"),
            Err(
                "tag value 'a\\nb' contains the control character '\\n'; tag values are one \
                 line of printable text"
                    .into()
            )
        );
        assert!(check_user_text("note", "\u{1b}[31mred").is_err());
        assert!(check_user_text("note", "tab\there").is_err());
        assert!(check_user_text("note", "\u{85}").is_err());
    }
}
