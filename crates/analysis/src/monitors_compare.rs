//! What the monitors recorded per unit of work, BASE against NEW: for each configuration
//! compared, the counters (context switches, migrations, page faults, interrupts, CPU time)
//! per operation where the runs report how many operations they did (a run value named
//! [`OPERATIONS`]), per run otherwise (said so), with the interval compare uses for a shift:
//! the Hodges-Lehmann estimate of NEW - BASE with its distribution-free (Moses) interval and
//! the Mann-Whitney p-value, adjusted by Benjamini-Hochberg over the keys of the
//! configuration (docs/why.md). A key *differs* when its adjusted p-value is below 0.05 and
//! its interval excludes 0. Like the slow runs' explanation, it says what moved with the
//! change, not what caused it.

use std::collections::BTreeMap;

use serde::Serialize;
use vernier_model::monitor::SeriesKind;
use vernier_model::{ConfigKey, StoredSession};
use vernier_stats::{benjamini_hochberg, hodges_lehmann, mann_whitney_u, median};

pub use vernier_model::values::OPERATIONS;
/// Adjusted p-value below which a key is said to differ.
pub const DIFFERS_P: f64 = 0.05;

/// What a key is divided by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    /// Per operation the run reported.
    Operation,
    /// Per run: the runs do not say how many operations they did.
    Run,
}

/// One counter of one configuration, BASE against NEW.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyDifference {
    pub key: String,
    /// The key's unit, per `per` (`count`, `ns`).
    pub unit: String,
    pub base_n: usize,
    pub new_n: usize,
    pub base_median: f64,
    pub new_median: f64,
    /// Hodges-Lehmann estimate of NEW - BASE, in `unit` per `per`.
    pub difference: f64,
    /// Its distribution-free interval at the report's level; absent with too few runs.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub p_value: f64,
    /// Benjamini-Hochberg over the keys of the configuration.
    pub p_adjusted: f64,
    pub differs: bool,
}

/// The monitor counters of one configuration compared. In `compare --format json` as
/// `monitors` (docs/why.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MonitorDifferences {
    pub configuration: String,
    pub per: Per,
    /// Every counter recorded on both sides by enough runs, those that differ first.
    pub keys: Vec<KeyDifference>,
}

impl MonitorDifferences {
    pub fn differing(&self) -> impl Iterator<Item = &KeyDifference> {
        self.keys.iter().filter(|k| k.differs)
    }
}

/// Per key: unit and the values per unit of work of one side's runs of one configuration.
struct SideValues {
    per: Per,
    keys: BTreeMap<String, (String, Vec<f64>)>,
}

fn side_values(sessions: &[StoredSession], key: &ConfigKey) -> SideValues {
    let runs: Vec<_> = sessions
        .iter()
        .flat_map(|s| &s.configurations)
        .filter(|c| &c.record.key() == key)
        .flat_map(|c| &c.runs)
        .filter(|r| !r.warmup && r.monitors.is_some())
        .collect();
    let per = if !runs.is_empty()
        && runs
            .iter()
            .all(|r| r.values.get(OPERATIONS).is_some_and(|&o| o > 0.0))
    {
        Per::Operation
    } else {
        Per::Run
    };
    let mut keys: BTreeMap<String, (String, Vec<f64>)> = BTreeMap::new();
    for r in runs {
        let Some(m) = &r.monitors else { continue };
        let divisor = match per {
            Per::Operation => r.values.get(OPERATIONS).copied().unwrap_or(1.0),
            Per::Run => 1.0,
        };
        for s in m.series.iter().filter(|s| s.kind == SeriesKind::Counter) {
            let k = s.key();
            if let Some(v) = m.summary.get(&k).filter(|v| v.is_finite()) {
                keys.entry(k)
                    .or_insert_with(|| (s.unit.clone(), Vec::new()))
                    .1
                    .push(v / divisor);
            }
        }
    }
    SideValues { per, keys }
}

/// The monitor counters of every configuration of `keys` (compare's matched ones), BASE
/// against NEW, at confidence `level`; configurations without monitor data on both sides
/// are left out.
pub fn monitor_differences(
    base: &[StoredSession],
    new: &[StoredSession],
    keys: &[ConfigKey],
    level: f64,
) -> Vec<MonitorDifferences> {
    let mut out = Vec::new();
    for key in keys {
        let b = side_values(base, key);
        let n = side_values(new, key);
        // Both sides per operation, or both per run: a ratio of unlike units is none.
        let per = if b.per == Per::Operation && n.per == Per::Operation {
            Per::Operation
        } else {
            Per::Run
        };
        let (b, n) = if per == Per::Run && (b.per != n.per) {
            (
                side_values_per_run(base, key),
                side_values_per_run(new, key),
            )
        } else {
            (b, n)
        };
        let mut rows = Vec::new();
        for (k, (unit, bv)) in &b.keys {
            let Some((_, nv)) = n.keys.get(k) else {
                continue;
            };
            if bv.len() < 2 || nv.len() < 2 {
                continue;
            }
            let (Ok(hl), Ok(mw), Ok(bm), Ok(nm)) = (
                hodges_lehmann(bv, nv, level),
                mann_whitney_u(bv, nv),
                median(bv),
                median(nv),
            ) else {
                continue;
            };
            rows.push(KeyDifference {
                key: k.clone(),
                unit: unit.clone(),
                base_n: bv.len(),
                new_n: nv.len(),
                base_median: bm,
                new_median: nm,
                difference: hl.shift,
                ci_low: hl.ci.map(|c| c.low),
                ci_high: hl.ci.map(|c| c.high),
                p_value: mw.p,
                p_adjusted: mw.p,
                differs: false,
            });
        }
        if rows.is_empty() {
            continue;
        }
        let ps: Vec<f64> = rows.iter().map(|r| r.p_value).collect();
        if let Ok(adjusted) = benjamini_hochberg(&ps) {
            for (r, p) in rows.iter_mut().zip(adjusted) {
                r.p_adjusted = p;
                let excludes_zero = match (r.ci_low, r.ci_high) {
                    (Some(lo), Some(hi)) => lo > 0.0 || hi < 0.0,
                    _ => false,
                };
                r.differs = p < DIFFERS_P && excludes_zero;
            }
        }
        rows.sort_by(|a, b| {
            b.differs
                .cmp(&a.differs)
                .then(a.p_adjusted.total_cmp(&b.p_adjusted))
                .then(a.key.cmp(&b.key))
        });
        out.push(MonitorDifferences {
            configuration: key.to_string(),
            per,
            keys: rows,
        });
    }
    out
}

/// [`side_values`] counted per run whatever the runs report.
fn side_values_per_run(sessions: &[StoredSession], key: &ConfigKey) -> SideValues {
    let stripped: Vec<StoredSession> = sessions
        .iter()
        .map(|s| {
            let mut s = s.clone();
            for c in &mut s.configurations {
                for r in &mut c.runs {
                    r.values.remove(OPERATIONS);
                }
            }
            s
        })
        .collect();
    side_values(&stripped, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vernier_testkit::{monitored_configuration, stored_session};
    use SeriesKind::Counter;

    fn session(ctxt: &[f64], operations: Option<f64>) -> StoredSession {
        let mut s = stored_session(0, &vec![1.0; ctxt.len()]);
        let mut c = monitored_configuration(
            &ctxt
                .iter()
                .map(|&v| vec![("stat", "ctxt", Counter, v), ("stat", "intr", Counter, 5.0)])
                .collect::<Vec<_>>(),
        );
        if let Some(ops) = operations {
            for r in &mut c.runs {
                r.values.insert(OPERATIONS, ops);
            }
        }
        c.record = s.configurations[0].record.clone();
        s.configurations[0] = c;
        s
    }

    #[test]
    fn a_counter_that_doubled_per_operation_differs() {
        let base = session(&[100., 104., 98., 101., 103., 99., 102., 100.], Some(10.0));
        let new = session(
            &[200., 204., 198., 201., 203., 199., 202., 205.],
            Some(10.0),
        );
        let key = base.configurations[0].record.key();
        let d = monitor_differences(&[base], &[new], &[key], 0.95);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].per, Per::Operation);
        let ctxt = &d[0].keys[0];
        assert_eq!(ctxt.key, "stat.ctxt");
        assert!(ctxt.differs, "{ctxt:?}");
        assert!((ctxt.difference - 10.0).abs() < 0.5, "{ctxt:?}");
        assert!(ctxt.ci_low.unwrap() > 9.0 && ctxt.ci_high.unwrap() < 11.0);
        // A counter equal on both sides does not differ.
        assert!(!d[0].keys[1].differs);
    }

    #[test]
    fn without_operations_the_runs_are_the_unit() {
        let base = session(&[100., 104., 98., 101., 103., 99.], None);
        let new = session(&[100., 101., 99., 103., 98., 102.], Some(10.0));
        let key = base.configurations[0].record.key();
        let d = monitor_differences(&[base], &[new], &[key], 0.95);
        assert_eq!(d[0].per, Per::Run);
        assert!(d[0].differing().next().is_none(), "{:?}", d[0]);
    }
}
