//! Differential profiles: for a configuration profiled in BASE and in NEW (`--profile`), the
//! functions whose share of the samples changed most, self (the function itself running) and
//! inclusive (it or anything it called), each change with a bootstrap interval over the
//! profiled runs (docs/profiles.md).
//!
//! A function's share of a set of profiled runs is its weight summed over the runs over their
//! total weight (the runs pooled). The change is NEW's share minus BASE's, in percentage
//! points. Its interval: the runs of each side are resampled with replacement
//! ([`BOOTSTRAP_REPLICATES`] times, [`SeededRng`] from a fixed seed, so the same profiles give
//! the same interval), the change computed for each resample, and the interval is the
//! central quantiles at the comparison's level (the percentile bootstrap, Efron and
//! Tibshirani 1993, ch. 13). The variation between runs is what it measures: with few runs it
//! is coarse, and a change is only called one when its interval excludes zero.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use vernier_model::{ConfigKey, ProfileRecord, StoredConfiguration, StoredSession};
use vernier_stats::SeededRng;

/// Resamples of the bootstrap.
pub const BOOTSTRAP_REPLICATES: usize = 2000;

/// The seed of the bootstrap: fixed, so that a comparison is the same every time it is made.
pub const BOOTSTRAP_SEED: u64 = 0x7072_6f66; // "prof"

/// How many functions of each kind a comparison keeps (those whose share changed most).
pub const TOP_FUNCTIONS: usize = 10;

/// Self or inclusive share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShareKind {
    /// Samples in which the function is the innermost frame.
    #[serde(rename = "self")]
    Own,
    /// Samples in which it is anywhere on the stack.
    Inclusive,
}

impl ShareKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ShareKind::Own => "self",
            ShareKind::Inclusive => "inclusive",
        }
    }
}

/// How one function's share changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionChange {
    pub function: String,
    /// Shares of all samples, 0 to 1, in BASE and in NEW.
    pub base_share: f64,
    pub new_share: f64,
    /// NEW minus BASE, in percentage points.
    pub change_points: f64,
    /// The bootstrap interval of the change, in percentage points.
    pub interval: (f64, f64),
    /// The interval excludes zero.
    pub changed: bool,
}

/// The differential profile of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileComparison {
    pub configuration: String,
    pub base_runs: usize,
    pub new_runs: usize,
    /// The events sampled in BASE and NEW (`cycles`, `cpu-clock`).
    pub base_event: String,
    pub new_event: String,
    /// Profiled run time over the timed runs' median time, the median over the profiled runs
    /// of each side: what profiling cost.
    pub base_overhead: Option<f64>,
    pub new_overhead: Option<f64>,
    /// The functions whose self share changed most, largest change first.
    pub self_changes: Vec<FunctionChange>,
    /// The functions whose inclusive share changed most, largest change first.
    pub inclusive_changes: Vec<FunctionChange>,
}

/// The differential profiles of the configurations profiled on both sides, in the order of
/// BASE's configurations, at confidence `level`.
pub fn compare_profiles(
    base: &[StoredSession],
    new: &[StoredSession],
    level: f64,
) -> Vec<ProfileComparison> {
    let side = |sessions: &[StoredSession]| {
        let mut order: Vec<ConfigKey> = Vec::new();
        let mut by_key: HashMap<ConfigKey, Side> = HashMap::new();
        for c in sessions.iter().flat_map(|s| &s.configurations) {
            if c.profiles.is_empty() {
                continue;
            }
            let key = c.record.key();
            let entry = by_key.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                Side::default()
            });
            entry.profiles.extend(c.profiles.iter().cloned());
            entry.overheads.extend(overheads(c));
        }
        (order, by_key)
    };
    let (order, base_sides) = side(base);
    let (_, new_sides) = side(new);
    order
        .iter()
        .filter_map(|key| {
            let b = base_sides.get(key)?;
            let n = new_sides.get(key)?;
            Some(compare_sides(&key.to_string(), b, n, level))
        })
        .collect()
}

/// Each profiled run's time over the median time of `config`'s measured runs (none when it
/// has no measured run with a time): what profiling cost.
fn overheads(config: &StoredConfiguration) -> Vec<f64> {
    let timed: Vec<f64> = config
        .runs
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| (r.ended_at_ns - r.started_at_ns) as f64)
        .collect();
    let Some(timed) = median(timed).filter(|m| *m > 0.0) else {
        return Vec::new();
    };
    config
        .profiles
        .iter()
        .map(|p| p.duration_ns() as f64 / timed)
        .collect()
}

/// A configuration's profiled runs as `show` lists them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfiledRuns {
    pub configuration: String,
    pub runs: usize,
    /// The events sampled (`cycles`, `cpu-clock`), comma-separated when they differ.
    pub event: String,
    /// The sampling frequencies, lowest first, each once.
    pub frequencies_hz: Vec<u32>,
    /// The median over the runs of profiled run time over the timed runs' median time.
    pub overhead: Option<f64>,
}

/// The profiled runs of each configuration of `session` that has some, in its order.
pub fn profiled_runs(session: &StoredSession) -> Vec<ProfiledRuns> {
    session
        .configurations
        .iter()
        .filter(|c| !c.profiles.is_empty())
        .map(|c| {
            let mut frequencies_hz: Vec<u32> = c.profiles.iter().map(|p| p.frequency_hz).collect();
            frequencies_hz.sort_unstable();
            frequencies_hz.dedup();
            ProfiledRuns {
                configuration: c.record.key().to_string(),
                runs: c.profiles.len(),
                event: events(&c.profiles),
                frequencies_hz,
                overhead: median(overheads(c)),
            }
        })
        .collect()
}

#[derive(Default)]
struct Side {
    profiles: Vec<ProfileRecord>,
    overheads: Vec<f64>,
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

fn events(profiles: &[ProfileRecord]) -> String {
    let mut names: Vec<&str> = profiles.iter().map(|p| p.event.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.join(", ")
}

fn compare_sides(configuration: &str, base: &Side, new: &Side, level: f64) -> ProfileComparison {
    ProfileComparison {
        configuration: configuration.to_string(),
        base_runs: base.profiles.len(),
        new_runs: new.profiles.len(),
        base_event: events(&base.profiles),
        new_event: events(&new.profiles),
        base_overhead: median(base.overheads.clone()),
        new_overhead: median(new.overheads.clone()),
        self_changes: changes(&base.profiles, &new.profiles, ShareKind::Own, level),
        inclusive_changes: changes(&base.profiles, &new.profiles, ShareKind::Inclusive, level),
    }
}

/// Per run: its total weight and each function's weight of `kind`.
struct RunWeights {
    total: f64,
    functions: HashMap<String, f64>,
}

fn run_weights(profiles: &[ProfileRecord], kind: ShareKind) -> Vec<RunWeights> {
    profiles
        .iter()
        .map(|p| RunWeights {
            total: p.stacks.total() as f64,
            functions: p
                .stacks
                .function_samples()
                .into_iter()
                .map(|(name, s)| {
                    let w = match kind {
                        ShareKind::Own => s.self_samples,
                        ShareKind::Inclusive => s.inclusive_samples,
                    };
                    (name.to_string(), w as f64)
                })
                .filter(|(_, w)| *w > 0.0)
                .collect(),
        })
        .collect()
}

/// The pooled share of `function` over the runs `picked` (indexes into `runs`).
fn pooled_share(runs: &[RunWeights], picked: &[usize], function: &str) -> f64 {
    let (mut weight, mut total) = (0.0, 0.0);
    for &i in picked {
        total += runs[i].total;
        weight += runs[i].functions.get(function).copied().unwrap_or(0.0);
    }
    if total > 0.0 {
        weight / total
    } else {
        0.0
    }
}

/// The [`TOP_FUNCTIONS`] functions whose share of `kind` changed most from `base` to `new`.
/// Among equal changes the order is by name, so it does not depend on hashing.
pub fn changes(
    base: &[ProfileRecord],
    new: &[ProfileRecord],
    kind: ShareKind,
    level: f64,
) -> Vec<FunctionChange> {
    let (b, n) = (run_weights(base, kind), run_weights(new, kind));
    if b.is_empty() || n.is_empty() {
        return Vec::new();
    }
    let all_b: Vec<usize> = (0..b.len()).collect();
    let all_n: Vec<usize> = (0..n.len()).collect();
    let mut names: BTreeMap<&str, ()> = BTreeMap::new();
    for r in b.iter().chain(&n) {
        for name in r.functions.keys() {
            names.insert(name, ());
        }
    }
    let mut points: Vec<(&str, f64, f64)> = names
        .keys()
        .map(|&name| {
            (
                name,
                pooled_share(&b, &all_b, name),
                pooled_share(&n, &all_n, name),
            )
        })
        .collect();
    points.sort_by(|x, y| {
        (y.2 - y.1)
            .abs()
            .total_cmp(&(x.2 - x.1).abs())
            .then_with(|| x.0.cmp(y.0))
    });
    points.truncate(TOP_FUNCTIONS);
    // One stream of resamples for all the functions kept: their intervals come from the same
    // resampled runs.
    let mut rng = SeededRng::new(BOOTSTRAP_SEED);
    let mut replicates: Vec<Vec<f64>> =
        vec![Vec::with_capacity(BOOTSTRAP_REPLICATES); points.len()];
    let mut pick_b = vec![0usize; b.len()];
    let mut pick_n = vec![0usize; n.len()];
    for _ in 0..BOOTSTRAP_REPLICATES {
        pick_b.iter_mut().for_each(|i| *i = rng.index(b.len()));
        pick_n.iter_mut().for_each(|i| *i = rng.index(n.len()));
        for (slot, (name, _, _)) in replicates.iter_mut().zip(&points) {
            slot.push(pooled_share(&n, &pick_n, name) - pooled_share(&b, &pick_b, name));
        }
    }
    let alpha = (1.0 - level) / 2.0;
    points
        .into_iter()
        .zip(replicates)
        .map(|((name, base_share, new_share), reps)| {
            // Never empty: BOOTSTRAP_REPLICATES values, each finite (shares of positive
            // totals).
            let low = vernier_stats::quantile(&reps, alpha).unwrap_or(f64::NAN) * 100.0;
            let high = vernier_stats::quantile(&reps, 1.0 - alpha).unwrap_or(f64::NAN) * 100.0;
            FunctionChange {
                function: name.to_string(),
                base_share,
                new_share,
                change_points: (new_share - base_share) * 100.0,
                interval: (low, high),
                changed: low > 0.0 || high < 0.0,
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use uuid::Uuid;
    use vernier_model::{FoldedStacks, ProfileScope};

    fn profile(index: u32, folded: &str) -> ProfileRecord {
        ProfileRecord {
            id: Uuid::from_u128(u128::from(index) + 1),
            index,
            event: "cpu-clock".into(),
            frequency_hz: 999,
            scope: ProfileScope::Process,
            started_at_ns: 0,
            ended_at_ns: 1,
            value: None,
            stacks: FoldedStacks::from_folded(folded).unwrap(),
        }
    }

    /// Runs of `share`% in `planted` and the rest in `other`, with a little noise per run.
    fn side(share: u64, noise: &[i64]) -> Vec<ProfileRecord> {
        noise
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let planted = (share as i64 * 10 + d) as u64;
                profile(
                    i as u32,
                    &format!("main;planted {planted}\nmain;other {}\n", 1000 - planted),
                )
            })
            .collect()
    }

    #[test]
    fn a_planted_change_ranks_first_with_an_interval_around_it() {
        let base = side(20, &[-8, 3, 5, -2, 1]);
        let new = side(40, &[6, -4, 2, -7, 3]);
        let changes = changes(&base, &new, ShareKind::Own, 0.95);
        let first = &changes[0];
        assert!(
            first.function == "planted" || first.function == "other",
            "{changes:?}"
        );
        let planted = changes.iter().find(|c| c.function == "planted").unwrap();
        assert!((planted.change_points - 20.0).abs() < 1.5, "{planted:?}");
        assert!(
            planted.interval.0 < 20.0 && 20.0 < planted.interval.1,
            "{planted:?}"
        );
        assert!(planted.changed);
        // The same profiles give the same intervals.
        assert_eq!(changes, super::changes(&base, &new, ShareKind::Own, 0.95));
        // `main` is on every stack: inclusive 100% on both sides, not a change.
        let inclusive = super::changes(&base, &new, ShareKind::Inclusive, 0.95);
        let main = inclusive.iter().find(|c| c.function == "main").unwrap();
        assert_eq!(main.change_points, 0.0);
        assert!(!main.changed);
    }

    #[test]
    fn noise_alone_is_not_called_a_change() {
        let base = side(30, &[-20, 15, 5, -10, 12]);
        let new = side(30, &[10, -15, 18, -12, -3]);
        let changes = changes(&base, &new, ShareKind::Own, 0.95);
        assert!(changes.iter().all(|c| !c.changed), "{changes:?}");
    }

    #[test]
    fn a_sessions_profiled_runs_say_their_count_event_frequency_and_cost() {
        // Timed runs of 1,000 ns each; profiled runs of 1,100, 1,200 and 1,500 ns.
        let mut session = vernier_testkit::stored_session(0, &[1.0, 2.0, 3.0]);
        let mut second = session.configurations[0].clone();
        second.record.position = 1;
        second.profiles.clear();
        session.configurations[0].profiles = [1_100, 1_200, 1_500]
            .iter()
            .zip(0..)
            .map(|(&duration, i)| ProfileRecord {
                ended_at_ns: duration,
                frequency_hz: if i == 2 { 499 } else { 999 },
                ..profile(i, "main;work 10\n")
            })
            .collect();
        session.configurations.push(second);
        let runs = profiled_runs(&session);
        assert_eq!(runs.len(), 1, "{runs:?}");
        let r = &runs[0];
        assert_eq!(
            r.configuration,
            session.configurations[0].record.key().to_string()
        );
        assert_eq!((r.runs, r.event.as_str()), (3, "cpu-clock"));
        assert_eq!(r.frequencies_hz, [499, 999]);
        let overhead = r.overhead.unwrap();
        assert!((overhead - 1.2).abs() < 1e-9, "{overhead}");
    }
}
