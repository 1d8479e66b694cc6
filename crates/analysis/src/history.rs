//! Results over time (`vernier history`, docs/history.md): per configuration and machine, the
//! series of session medians, its change points and the size of each step.
//!
//! Each point is a session's median of the configuration with its interval, from
//! [`summarize_session`] (what `vernier show` prints). The change points are found in the
//! series of medians by Otava's split and merge ([`vernier_stats::change_points`]). Each step
//! is then measured as `vernier compare` measures two result sets: the runs of the sessions
//! between the previous change point and this one against those up to the next
//! ([`compare_calibrated`]), so its ratio, interval (with the session-to-session noise of
//! those sessions, or of a calibration when one session stands on a side) and verdict are
//! compare's. A step is a regression beyond the threshold exactly when compare would say
//! `slower`.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use uuid::Uuid;
use vernier_model::{
    Calibration, ConfigKey, ConfigurationRecord, OptionValue, Options, StoredSession,
};
use vernier_stats::{change_points, ChangePointSettings};

use crate::compare::{CompareSettings, Key, Verdict};
use crate::summary::summarize_session;
use crate::AnalysisError;

mod changes;
pub use changes::{BaselineKind, Change, Cumulative, Drift, Episode, EpisodeSource};

/// How to find and judge changes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HistorySettings {
    /// Threshold and confidence level of each step's verdict, as for compare.
    pub compare: CompareSettings,
    /// The change-point detector's knobs (Otava's defaults unless given).
    pub detection: ChangePointSettings,
    /// The sessions the newest level is measured against (`--baseline`); none: each series'
    /// first level.
    pub baseline: Option<Vec<Uuid>>,
}

/// The configurations a `vernier history` SPEC names: a benchmark and, for each option given,
/// the values it may have (other options may have any value).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigFilter {
    pub benchmark: String,
    pub options: Vec<(String, Vec<OptionValue>)>,
}

impl ConfigFilter {
    pub fn matches(&self, record: &ConfigurationRecord) -> bool {
        record.benchmark == self.benchmark
            && self
                .options
                .iter()
                .all(|(name, values)| record.options.get(name).is_some_and(|v| values.contains(v)))
    }
}

/// One session's result in a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryPoint {
    pub session: Uuid,
    pub started_at_ns: i64,
    pub tags: BTreeMap<String, String>,
    /// Measured runs.
    pub n: usize,
    pub median: f64,
    /// The median's interval as `show` gives it (absent with too few runs).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

/// Whether a step made the metric worse or better (by its direction: a longer time, a lower
/// rate is worse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Regression,
    Improvement,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Regression => "regression",
            Direction::Improvement => "improvement",
        }
    }
}

/// A change point and the step it marks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Position in the series of the first point at the new level.
    pub index: usize,
    /// That point's session and start.
    pub session: Uuid,
    pub started_at_ns: i64,
    /// The detector's p-value (Otava's t-test of the session medians on either side).
    pub p_value: f64,
    /// Sessions on either side: from the previous change point (or the first session) and up
    /// to the next one (or the last session).
    pub before_sessions: usize,
    pub after_sessions: usize,
    /// The sessions after against those before, as compare measures them.
    #[serde(flatten)]
    pub change: Change,
}

/// The history of one configuration on one machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistorySeries {
    /// The machine's hostname (of its newest session), or its machine id when no hostname was
    /// recorded, or `unknown`; followed by the start of its machine id in parentheses when
    /// another machine of the report has the same hostname.
    pub host: String,
    /// The machine's /etc/machine-id, which keeps its sessions together when its hostname
    /// changes; absent when its sessions did not record one (then the hostname does).
    pub machine_id: Option<String>,
    pub benchmark: String,
    pub options: Options,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<String>,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Oldest first.
    pub points: Vec<HistoryPoint>,
    pub steps: Vec<Step>,
    /// Runs of sessions at another level that came back, oldest first.
    pub episodes: Vec<Episode>,
    /// Pieces between change points whose level creeps.
    pub drifts: Vec<Drift>,
    /// The newest level against the baseline; absent when there is nothing to measure it
    /// against (no change point and no `--baseline`).
    pub cumulative: Option<Cumulative>,
}

impl HistorySeries {
    /// `benchmark:opt=value:...`, and the loads when there are any.
    pub fn label(&self) -> String {
        ConfigKey::loaded(&self.benchmark, &self.options, &self.loads).to_string()
    }

    /// The first point a named baseline does not accept: one past its newest session (0
    /// without a named baseline).
    pub fn accepted_before(&self) -> usize {
        self.cumulative
            .as_ref()
            .filter(|c| c.baseline == BaselineKind::Named)
            .map_or(0, |c| c.baseline_to_index)
    }

    /// Whether the series is worse now, beyond the threshold (compare's `slower`): its newest
    /// step, a drift up to its newest session, or its newest level against the baseline. A
    /// named baseline accepts what came before it: a step or drift that began before its
    /// newest session does not count.
    pub fn ends_in_regression(&self) -> bool {
        let accepted = self.accepted_before();
        self.steps
            .last()
            .is_some_and(|s| s.index >= accepted && s.change.verdict == Verdict::Slower)
            || self.drifts.iter().any(|d| {
                d.from_index >= accepted
                    && d.to_index == self.points.len()
                    && d.verdict == Verdict::Slower
            })
            || self
                .cumulative
                .as_ref()
                .is_some_and(|c| c.change.verdict == Verdict::Slower)
    }
}

/// The result of [`history`]: the JSON document of `vernier history --format json`, and the
/// data the report's history page draws.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryReport {
    pub threshold: f64,
    pub level: f64,
    pub max_pvalue: f64,
    pub window: usize,
    pub series: Vec<HistorySeries>,
}

impl HistoryReport {
    /// Whether the newest step of any series is a regression beyond the threshold (for
    /// `--fail-on-regression`).
    pub fn has_regression(&self) -> bool {
        self.series.iter().any(HistorySeries::ends_in_regression)
    }
}

/// The name of the machine a session ran on, as far as it recorded it: its hostname, else its
/// machine id, else `unknown`.
pub fn host_of(session: &StoredSession) -> &str {
    let env = &session.info.environment;
    env.hostname
        .as_deref()
        .or(env.machine_id.as_deref())
        .unwrap_or("unknown")
}

/// The first 8 characters of a machine id, enough to tell a farm's machines apart.
pub fn short_machine_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// The hostnames that name more than one machine among `sessions` (machines told apart by
/// their machine id), each with those machines' ids in order of first appearance.
pub fn machines_named_alike<'a>(
    sessions: impl IntoIterator<Item = &'a StoredSession>,
) -> Vec<(String, Vec<String>)> {
    let mut named: Vec<(String, Vec<String>)> = Vec::new();
    for session in sessions {
        let env = &session.info.environment;
        let (Some(host), Some(id)) = (&env.hostname, &env.machine_id) else {
            continue;
        };
        let id = id.to_ascii_lowercase();
        match named.iter_mut().find(|(h, _)| h == host) {
            Some((_, ids)) if !ids.contains(&id) => ids.push(id),
            Some(_) => {}
            None => named.push((host.clone(), vec![id])),
        }
    }
    named.retain(|(_, ids)| ids.len() > 1);
    named
}

/// What keeps a machine's sessions in one series: its machine id (machine-id(5): set once at
/// installation, so a renamed machine stays one, and two machines sharing a hostname stay
/// two), else its hostname.
fn machine_key(session: &StoredSession) -> String {
    match &session.info.environment.machine_id {
        Some(id) => format!("id:{}", id.to_ascii_lowercase()),
        None => format!("host:{}", host_of(session)),
    }
}

/// A series while it is gathered: its points with the session and configuration behind each.
struct Gathered {
    series: HistorySeries,
    /// (session index, configuration index) of each point.
    sources: Vec<(usize, usize)>,
}

impl Gathered {
    /// The sessions of the points `at`, each holding only this configuration.
    fn sessions_at(&self, sessions: &[StoredSession], at: &[usize]) -> Vec<StoredSession> {
        at.iter()
            .map(|&i| {
                let (si, ci) = self.sources[i];
                StoredSession {
                    info: sessions[si].info.clone(),
                    configurations: vec![sessions[si].configurations[ci].clone()],
                }
            })
            .collect()
    }
}

/// The history of every configuration (of the primary metric; only those `filters` name, when
/// there are any) on every machine in `sessions`, a series per configuration and machine in
/// order of first appearance. Sessions without measured runs of a configuration leave no point
/// in its series. `calibrations` widen a step's interval where one session stands on a side,
/// as in compare.
pub fn history(
    sessions: &[StoredSession],
    filters: &[ConfigFilter],
    settings: &HistorySettings,
    calibrations: &[Calibration],
) -> Result<HistoryReport, AnalysisError> {
    let threshold = settings.compare.threshold;
    if !(threshold > 0.0 && threshold < 1.0) {
        return Err(AnalysisError::Threshold(threshold));
    }
    let mut order: Vec<usize> = (0..sessions.len()).collect();
    order.sort_by_key(|&i| (sessions[i].info.started_at_ns, sessions[i].info.id));
    let mut gathered: Vec<Gathered> = Vec::new();
    let mut index: HashMap<(String, Key), usize> = HashMap::new();
    for &si in &order {
        let session = &sessions[si];
        let host = host_of(session);
        for (ci, (config, summary)) in session
            .configurations
            .iter()
            .zip(summarize_session(session))
            .enumerate()
        {
            let r = &config.record;
            if !filters.is_empty() && !filters.iter().any(|f| f.matches(r)) {
                continue;
            }
            let Some(median) = summary.median else {
                continue;
            };
            let key = (machine_key(session), (r.key(), r.metric.name.clone()));
            let at = *index.entry(key).or_insert_with(|| {
                gathered.push(Gathered {
                    series: HistorySeries {
                        host: host.to_string(),
                        machine_id: session.info.environment.machine_id.clone(),
                        benchmark: r.benchmark.clone(),
                        options: r.options.clone(),
                        loads: r.loads.clone(),
                        metric: r.metric.name.clone(),
                        unit: r.metric.unit.clone(),
                        higher_is_better: r.metric.higher_is_better,
                        points: Vec::new(),
                        steps: Vec::new(),
                        episodes: Vec::new(),
                        drifts: Vec::new(),
                        cumulative: None,
                    },
                    sources: Vec::new(),
                });
                gathered.len() - 1
            });
            let g = &mut gathered[at];
            // Sessions come oldest first: the series is named by the newest hostname.
            g.series.host = host.to_string();
            g.series.points.push(HistoryPoint {
                session: session.info.id,
                started_at_ns: session.info.started_at_ns,
                tags: session.info.tags.clone(),
                n: summary.n,
                median,
                ci_low: summary.ci_low,
                ci_high: summary.ci_high,
            });
            g.sources.push((si, ci));
        }
    }
    // Two machines sharing a hostname are two series: their names tell them apart.
    let alike = machines_named_alike(sessions);
    let mut series = Vec::with_capacity(gathered.len());
    for mut g in gathered {
        if let Some(id) = &g.series.machine_id {
            if alike.iter().any(|(host, _)| *host == g.series.host) {
                g.series.host = format!("{} ({})", g.series.host, short_machine_id(id));
            }
        }
        g.series.steps = steps(&g, sessions, settings, calibrations)?;
        let steps_at: Vec<(usize, Direction, f64)> = g
            .series
            .steps
            .iter()
            .map(|s| (s.index, s.change.direction, s.p_value))
            .collect();
        let cuts: Vec<usize> = steps_at.iter().map(|s| s.0).collect();
        g.series.episodes =
            changes::find_episodes(&g, sessions, &steps_at, settings, calibrations)?;
        g.series.drifts = changes::find_drifts(&g, &steps_at, &g.series.episodes, settings);
        g.series.cumulative = changes::find_cumulative(
            &g,
            sessions,
            &cuts,
            settings.baseline.as_deref(),
            settings,
            calibrations,
        )?;
        series.push(g.series);
    }
    Ok(HistoryReport {
        threshold,
        level: settings.compare.level,
        max_pvalue: settings.detection.max_pvalue,
        window: settings.detection.window_len,
        series,
    })
}

/// The change points of a series and compare's measure of each step.
fn steps(
    g: &Gathered,
    sessions: &[StoredSession],
    settings: &HistorySettings,
    calibrations: &[Calibration],
) -> Result<Vec<Step>, AnalysisError> {
    let medians: Vec<f64> = g.series.points.iter().map(|p| p.median).collect();
    let found =
        change_points(&medians, &settings.detection).map_err(|source| AnalysisError::Stats {
            configuration: g.series.label(),
            source,
        })?;
    let mut out = Vec::with_capacity(found.len());
    for (k, cp) in found.iter().enumerate() {
        let from = if k == 0 { 0 } else { found[k - 1].index };
        let to = found.get(k + 1).map_or(medians.len(), |c| c.index);
        let before: Vec<usize> = (from..cp.index).collect();
        let after: Vec<usize> = (cp.index..to).collect();
        let change = changes::measure(g, sessions, &before, &after, settings, calibrations)?;
        let point = &g.series.points[cp.index];
        out.push(Step {
            index: cp.index,
            session: point.session,
            started_at_ns: point.started_at_ns,
            p_value: cp.p_value,
            before_sessions: before.len(),
            after_sessions: after.len(),
            change,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session_noise::NoiseSource;
    use vernier_model::{Environment, StopReason, StoredConfiguration};
    use vernier_stats::SeededRng;

    /// A configuration of `benchmark` with option `groups`, converged, whose runs took
    /// `values` (testkit's builders).
    fn config(benchmark: &str, groups: u64, values: &[f64]) -> StoredConfiguration {
        let options = Options(BTreeMap::from([(
            "groups".to_string(),
            OptionValue::UInt(groups),
        )]));
        let mut config = vernier_testkit::configuration(benchmark, options, ("time", "s"));
        config.record.stop_reason = Some(StopReason::Converged);
        config.record.converged = true;
        config.runs = values
            .iter()
            .zip(0u32..)
            .map(|(&v, i)| vernier_testkit::run(i, 0, 1_000_000, ("time", v)))
            .collect();
        config
    }

    /// A session on `host` started at `at` of `configurations`.
    fn session(host: &str, at: i64, configurations: Vec<StoredConfiguration>) -> StoredSession {
        let mut session = vernier_testkit::stored_session(at, &[]);
        session.info.ended_at_ns = Some(at + 1);
        session.info.specs = Vec::new();
        session.info.vernier_version = "0".into();
        session.info.environment = Environment {
            hostname: Some(host.into()),
            ..Environment::default()
        };
        session.info.fingerprint = "f".into();
        session.configurations = configurations;
        session
    }

    /// Ten runs around `level` with 1% noise.
    fn runs(rng: &mut SeededRng, level: f64) -> Vec<f64> {
        (0..10)
            .map(|_| level * (1.0 + 0.01 * (rng.index(2001) as f64 / 1000.0 - 1.0)))
            .collect()
    }

    /// 24 sessions on host `a` with a 10% slowdown from session 12 on, and 24 on host `b`
    /// without; given newest first, so the series must be put in time order.
    fn planted() -> Vec<StoredSession> {
        let mut rng = SeededRng::new(7);
        let mut sessions = Vec::new();
        for i in (0..24i64).rev() {
            let level = if i >= 12 { 1.1 } else { 1.0 };
            sessions.push(session(
                "a",
                i * 1_000,
                vec![config("hackbench", 4, &runs(&mut rng, level))],
            ));
            sessions.push(session(
                "b",
                i * 1_000 + 1,
                vec![config("hackbench", 4, &runs(&mut rng, 2.0))],
            ));
        }
        sessions
    }

    #[test]
    fn a_planted_step_is_found_on_its_machine_only() {
        let report = history(&planted(), &[], &HistorySettings::default(), &[]).unwrap();
        assert_eq!(report.series.len(), 2);
        let a = report.series.iter().find(|s| s.host == "a").unwrap();
        let b = report.series.iter().find(|s| s.host == "b").unwrap();
        assert_eq!(a.points.len(), 24);
        assert!(a
            .points
            .windows(2)
            .all(|w| w[0].started_at_ns < w[1].started_at_ns));
        assert_eq!(a.steps.len(), 1, "{:?}", a.steps);
        let step = &a.steps[0];
        assert_eq!(step.index, 12);
        assert_eq!(step.started_at_ns, 12_000);
        assert_eq!((step.before_sessions, step.after_sessions), (12, 12));
        assert!(
            (step.change.ratio - 1.1).abs() < 0.01,
            "{}",
            step.change.ratio
        );
        let (low, high) = (
            step.change.ratio_ci_low.unwrap(),
            step.change.ratio_ci_high.unwrap(),
        );
        assert!(low < step.change.ratio && step.change.ratio < high && low > 1.02);
        assert_eq!(step.change.noise_source, Some(NoiseSource::Sessions));
        assert_eq!(step.change.direction, Direction::Regression);
        assert_eq!(step.change.verdict, Verdict::Slower);
        assert!(a.ends_in_regression() && report.has_regression());
        assert!(b.steps.is_empty());
        // A threshold above the step: a regression still, but not beyond the threshold.
        let wide = HistorySettings {
            compare: CompareSettings {
                threshold: 0.5,
                ..CompareSettings::default()
            },
            ..HistorySettings::default()
        };
        let report = history(&planted(), &[], &wide, &[]).unwrap();
        assert!(!report.has_regression());
        let a = report.series.iter().find(|s| s.host == "a").unwrap();
        assert_eq!(a.steps[0].change.direction, Direction::Regression);
        assert_ne!(a.steps[0].change.verdict, Verdict::Slower);
    }

    #[test]
    fn the_machine_id_keeps_a_renamed_machine_together() {
        let mut sessions = planted();
        for s in &mut sessions {
            let env = &mut s.info.environment;
            let old = env.hostname.clone().unwrap();
            env.machine_id = Some(format!("{old}{old}"));
            // Host a is renamed halfway; host b's sessions lose their hostname.
            if old == "a" && s.info.started_at_ns >= 6_000 {
                env.hostname = Some("a-renamed".into());
            } else if old == "b" {
                env.hostname = None;
            }
        }
        let report = history(&sessions, &[], &HistorySettings::default(), &[]).unwrap();
        assert_eq!(report.series.len(), 2);
        let a = report
            .series
            .iter()
            .find(|s| s.host == "a-renamed")
            .unwrap();
        assert_eq!(a.machine_id.as_deref(), Some("aa"));
        assert_eq!(a.points.len(), 24);
        assert_eq!(a.steps[0].index, 12);
        let b = report.series.iter().find(|s| s.host == "bb").unwrap();
        assert_eq!(b.points.len(), 24);
    }

    #[test]
    fn two_machines_sharing_a_hostname_are_two_series_named_apart() {
        let mut sessions = planted();
        for s in &mut sessions {
            let env = &mut s.info.environment;
            let old = env.hostname.clone().unwrap();
            env.machine_id = Some(format!("{}0123456789", old.repeat(4)));
            env.hostname = Some("lab1".into());
        }
        let report = history(&sessions, &[], &HistorySettings::default(), &[]).unwrap();
        let mut hosts: Vec<&str> = report.series.iter().map(|s| s.host.as_str()).collect();
        hosts.sort_unstable();
        assert_eq!(hosts, ["lab1 (aaaa0123)", "lab1 (bbbb0123)"]);
        assert_eq!(
            machines_named_alike(&sessions),
            [(
                "lab1".to_string(),
                vec!["aaaa0123456789".to_string(), "bbbb0123456789".to_string()]
            )]
        );
        // One machine under its name: no suffix.
        sessions.retain(|s| s.info.environment.machine_id.as_deref() == Some("aaaa0123456789"));
        let report = history(&sessions, &[], &HistorySettings::default(), &[]).unwrap();
        assert!(report.series.iter().all(|s| s.host == "lab1"));
    }

    #[test]
    fn a_higher_rate_is_an_improvement() {
        let mut sessions = planted();
        for s in &mut sessions {
            s.configurations[0].record.metric.higher_is_better = true;
        }
        let report = history(&sessions, &[], &HistorySettings::default(), &[]).unwrap();
        let a = report.series.iter().find(|s| s.host == "a").unwrap();
        assert_eq!(a.steps[0].change.direction, Direction::Improvement);
        assert_eq!(a.steps[0].change.verdict, Verdict::Faster);
        assert!(!report.has_regression());
    }

    #[test]
    fn filters_select_configurations() {
        let mut sessions = planted();
        for s in &mut sessions {
            s.configurations.push(config("hackbench", 8, &[3.0; 5]));
            s.configurations.push(config("pipe", 4, &[5.0; 5]));
        }
        let all = history(&sessions, &[], &HistorySettings::default(), &[]).unwrap();
        assert_eq!(all.series.len(), 6);
        let filter = |benchmark: &str, groups: &[u64]| ConfigFilter {
            benchmark: benchmark.into(),
            options: if groups.is_empty() {
                Vec::new()
            } else {
                vec![(
                    "groups".into(),
                    groups.iter().map(|&g| OptionValue::UInt(g)).collect(),
                )]
            },
        };
        let count = |filters: &[ConfigFilter]| {
            history(&sessions, filters, &HistorySettings::default(), &[])
                .unwrap()
                .series
                .len()
        };
        assert_eq!(count(&[filter("hackbench", &[])]), 4);
        assert_eq!(count(&[filter("hackbench", &[8])]), 2);
        assert_eq!(count(&[filter("hackbench", &[4, 8])]), 4);
        assert_eq!(count(&[filter("hackbench", &[16])]), 0);
        assert_eq!(count(&[filter("hackbench", &[8]), filter("pipe", &[])]), 4);
    }

    #[test]
    fn a_bad_threshold_is_an_error() {
        let settings = HistorySettings {
            compare: CompareSettings {
                threshold: 0.0,
                ..CompareSettings::default()
            },
            ..HistorySettings::default()
        };
        assert!(matches!(
            history(&planted(), &[], &settings, &[]),
            Err(AnalysisError::Threshold(_))
        ));
    }
}
