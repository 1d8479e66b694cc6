//! The metric values of one run, laid out for sessions of millions of runs.
//!
//! Nearly every run reports one value (its configuration's primary metric), and a session's runs
//! all name the same few metrics. A `BTreeMap<String, f64>` spent a node of about 400 bytes and
//! a copy of the name on each run; [`RunValues`] holds one value inline, its name shared
//! ([`Arc<str>`]) with the other runs of its configuration when the reader passes the same name,
//! and only runs of two or more metrics allocate (a list sorted by name). It reads like the map
//! it replaces (`get`, `insert`, `iter` in name order) and serializes as the same JSON object.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The run value that counts a run's operations (round trips, forks, yields, messages) where a
/// benchmark reports it: what `compare` divides monitor counters by (docs/why.md).
pub const OPERATIONS: &str = "operations";

/// A metric's name, shared by the runs that report it.
pub type MetricName = Arc<str>;

/// Metric name -> value of one run, in name order.
#[derive(Clone, Default, PartialEq)]
pub struct RunValues(Inner);

/// Invariant: `Many` holds two or more entries, sorted by name, each name once.
#[derive(Clone, Default, PartialEq)]
enum Inner {
    #[default]
    Empty,
    One(MetricName, f64),
    Many(Vec<(MetricName, f64)>),
}

impl RunValues {
    pub fn new() -> Self {
        Self::default()
    }

    /// One metric's value.
    pub fn one(metric: MetricName, value: f64) -> Self {
        Self(Inner::One(metric, value))
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Inner::Empty => 0,
            Inner::One(..) => 1,
            Inner::Many(entries) => entries.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        matches!(self.0, Inner::Empty)
    }

    pub fn get(&self, metric: &str) -> Option<&f64> {
        match &self.0 {
            Inner::One(name, value) if &**name == metric => Some(value),
            Inner::Empty | Inner::One(..) => None,
            Inner::Many(entries) => entries
                .binary_search_by(|(name, _)| (**name).cmp(metric))
                .ok()
                .map(|at| &entries[at].1),
        }
    }

    /// [`RunValues::get`] that looks first at position `*hint` and leaves there where `metric`
    /// was: the runs of a configuration report the same metrics, so reading one metric of
    /// every run finds it where it was in the run before, without a search.
    pub fn get_near(&self, metric: &str, hint: &mut usize) -> Option<&f64> {
        match &self.0 {
            Inner::Many(entries) => match entries.get(*hint) {
                Some((name, value)) if &**name == metric => Some(value),
                _ => {
                    let at = entries
                        .binary_search_by(|(name, _)| (**name).cmp(metric))
                        .ok()?;
                    *hint = at;
                    Some(&entries[at].1)
                }
            },
            _ => self.get(metric),
        }
    }

    pub fn get_mut(&mut self, metric: &str) -> Option<&mut f64> {
        match &mut self.0 {
            Inner::One(name, value) if &**name == metric => Some(value),
            Inner::Empty | Inner::One(..) => None,
            Inner::Many(entries) => entries
                .binary_search_by(|(name, _)| (**name).cmp(metric))
                .ok()
                .map(|at| &mut entries[at].1),
        }
    }

    pub fn clear(&mut self) {
        self.0 = Inner::Empty;
    }

    pub fn contains_key(&self, metric: &str) -> bool {
        self.get(metric).is_some()
    }

    /// Sets `metric` to `value`; returns the value it replaced.
    pub fn insert(&mut self, metric: impl Into<MetricName>, value: f64) -> Option<f64> {
        let metric = metric.into();
        let (inner, replaced) = match std::mem::take(&mut self.0) {
            Inner::Empty => (Inner::One(metric, value), None),
            Inner::One(name, old) if name == metric => (Inner::One(name, value), Some(old)),
            Inner::One(name, old) => {
                let mut entries = vec![(name, old), (metric, value)];
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                (Inner::Many(entries), None)
            }
            Inner::Many(mut entries) => {
                let replaced = match entries.binary_search_by(|(name, _)| name.cmp(&metric)) {
                    Ok(at) => Some(std::mem::replace(&mut entries[at].1, value)),
                    Err(at) => {
                        entries.insert(at, (metric, value));
                        None
                    }
                };
                (Inner::Many(entries), replaced)
            }
        };
        self.0 = inner;
        replaced
    }

    /// Removes `metric`; returns its value.
    pub fn remove(&mut self, metric: &str) -> Option<f64> {
        match &mut self.0 {
            Inner::Empty => None,
            Inner::One(name, value) if &**name == metric => {
                let value = *value;
                self.0 = Inner::Empty;
                Some(value)
            }
            Inner::One(..) => None,
            Inner::Many(entries) => {
                let at = entries
                    .binary_search_by(|(name, _)| (**name).cmp(metric))
                    .ok()?;
                let (_, value) = entries.remove(at);
                if entries.len() == 1 {
                    let (name, last) = entries.remove(0);
                    self.0 = Inner::One(name, last);
                }
                Some(value)
            }
        }
    }

    /// (name, value) in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &f64)> + Clone + '_ {
        let (one, many) = match &self.0 {
            Inner::Empty => (None, &[][..]),
            Inner::One(name, value) => (Some((&**name, value)), &[][..]),
            Inner::Many(entries) => (None, &entries[..]),
        };
        one.into_iter()
            .chain(many.iter().map(|(name, value)| (&**name, value)))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.iter().map(|(name, _)| name)
    }

    pub fn values(&self) -> impl Iterator<Item = &f64> + '_ {
        self.iter().map(|(_, value)| value)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut f64> + '_ {
        let (one, many) = match &mut self.0 {
            Inner::Empty => (None, &mut [][..]),
            Inner::One(_, value) => (Some(value), &mut [][..]),
            Inner::Many(entries) => (None, &mut entries[..]),
        };
        one.into_iter()
            .chain(many.iter_mut().map(|(_, value)| value))
    }

    /// The values as an ordinary map.
    pub fn to_map(&self) -> BTreeMap<String, f64> {
        self.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }
}

impl<K: Into<MetricName>> FromIterator<(K, f64)> for RunValues {
    fn from_iter<I: IntoIterator<Item = (K, f64)>>(iter: I) -> Self {
        let mut values = RunValues::new();
        for (name, value) in iter {
            values.insert(name, value);
        }
        values
    }
}

/// As [`RunValues::insert`] of each in turn (a metric given twice keeps its last value), with
/// one allocation and one sort: what a store reads of a run's metrics comes together.
impl<K: Into<MetricName>> Extend<(K, f64)> for RunValues {
    fn extend<I: IntoIterator<Item = (K, f64)>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        let mut all: Vec<(MetricName, f64)> = Vec::with_capacity(self.len() + iter.size_hint().0);
        match std::mem::take(&mut self.0) {
            Inner::Empty => {}
            Inner::One(name, value) => all.push((name, value)),
            Inner::Many(entries) => all.extend(entries),
        }
        all.extend(iter.map(|(name, value)| (name.into(), value)));
        // Stable: of the entries of one name, the one added last comes last, and is kept in
        // the place of the first.
        all.sort_by(|a, b| a.0.cmp(&b.0));
        let mut entries = all;
        entries.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(later, kept);
            }
            same
        });
        self.0 = match entries.len() {
            0 => Inner::Empty,
            1 => {
                let (name, value) = entries.remove(0);
                Inner::One(name, value)
            }
            _ => Inner::Many(entries),
        };
    }
}

impl<'a> IntoIterator for &'a RunValues {
    type Item = (&'a str, &'a f64);
    type IntoIter = Box<dyn Iterator<Item = (&'a str, &'a f64)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// A metric's value; panics when the run has none, as a map's index does.
impl std::ops::Index<&str> for RunValues {
    type Output = f64;
    fn index(&self, metric: &str) -> &f64 {
        match self.get(metric) {
            Some(value) => value,
            None => panic!("no value of metric {metric:?}"),
        }
    }
}

impl From<BTreeMap<String, f64>> for RunValues {
    fn from(map: BTreeMap<String, f64>) -> Self {
        map.into_iter().collect()
    }
}

impl<const N: usize> From<[(&str, f64); N]> for RunValues {
    fn from(entries: [(&str, f64); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl fmt::Debug for RunValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for RunValues {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (name, value) in self.iter() {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for RunValues {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValuesVisitor;
        impl<'de> Visitor<'de> for ValuesVisitor {
            type Value = RunValues;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of metric names and numbers")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RunValues, A::Error> {
                let mut values = RunValues::new();
                // A name given twice keeps its last value, as a BTreeMap did.
                while let Some((name, value)) = map.next_entry::<String, f64>()? {
                    values.insert(name, value);
                }
                Ok(values)
            }
        }
        deserializer.deserialize_map(ValuesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extending_is_inserting_each_in_turn() {
        type Entries = &'static [(&'static str, f64)];
        let cases: [(Entries, Entries); 5] = [
            (&[], &[]),
            (&[], &[("b", 1.0)]),
            (
                &[("m", 1.0)],
                &[("z", 2.0), ("a", 3.0), ("m", 4.0), ("a", 5.0)],
            ),
            (&[("b", 1.0), ("d", 2.0)], &[("c", 3.0), ("d", 4.0)]),
            (&[("x", 1.0), ("y", 2.0)], &[]),
        ];
        for (start, added) in cases {
            let mut inserted: RunValues = RunValues::new();
            let mut extended: RunValues = RunValues::new();
            for (name, value) in start {
                inserted.insert(*name, *value);
                extended.insert(*name, *value);
            }
            for (name, value) in added {
                inserted.insert(*name, *value);
            }
            extended.extend(added.iter().copied());
            assert_eq!(extended, inserted, "{start:?} + {added:?}");
            assert_eq!(extended.len(), inserted.len());
        }
    }

    #[test]
    fn a_hint_finds_what_get_finds_wherever_it_points() {
        let mut many = RunValues::new();
        for (name, value) in [("max", 3.0), ("mean", 2.0), ("min", 1.0), ("p99", 2.5)] {
            many.insert(name, value);
        }
        let one = RunValues::one("mean".into(), 7.0);
        for values in [&many, &one, &RunValues::new()] {
            for metric in ["max", "mean", "min", "p99", "p50", ""] {
                for start in 0..6 {
                    let mut hint = start;
                    assert_eq!(values.get_near(metric, &mut hint), values.get(metric));
                    // Where it was found, the hint finds it again at once.
                    let again = hint;
                    assert_eq!(values.get_near(metric, &mut hint), values.get(metric));
                    assert_eq!(hint, again);
                }
            }
        }
        let mut hint = 0;
        many.get_near("p99", &mut hint);
        assert_eq!(hint, 3);
    }

    #[test]
    fn reads_like_a_sorted_map() {
        let mut v = RunValues::new();
        assert!(v.is_empty());
        assert_eq!(v.insert("runtime", 2.0), None);
        assert_eq!(v.get("runtime"), Some(&2.0));
        assert_eq!(v.insert("max", 5.0), None);
        assert_eq!(v.insert("avg", 3.0), None);
        assert_eq!(v.insert("max", 6.0), Some(5.0));
        assert_eq!(v.len(), 3);
        assert_eq!(v.keys().collect::<Vec<_>>(), ["avg", "max", "runtime"]);
        assert_eq!(v.get("nope"), None);
        for value in v.values_mut() {
            *value *= 2.0;
        }
        assert_eq!(v.remove("avg"), Some(6.0));
        assert_eq!(v.remove("max"), Some(12.0));
        // Back to one value, inline: equal to the same value built directly.
        assert_eq!(v, RunValues::one("runtime".into(), 4.0));
        assert_eq!(v.remove("runtime"), Some(4.0));
        assert_eq!(v, RunValues::new());
    }

    #[test]
    fn serializes_as_the_map_it_replaces() {
        let map: BTreeMap<String, f64> = [("z".to_string(), 1.5), ("a".to_string(), -0.0)].into();
        let values = RunValues::from(map.clone());
        let text = serde_json::to_string(&values).unwrap();
        assert_eq!(text, serde_json::to_string(&map).unwrap());
        let back: RunValues = serde_json::from_str(&text).unwrap();
        assert_eq!(back.to_map(), map);
        assert!(back.get("a").unwrap().is_sign_negative());
        let one: RunValues = serde_json::from_str(r#"{"runtime": 0.25}"#).unwrap();
        assert_eq!(one, RunValues::from([("runtime", 0.25)]));
        assert!(serde_json::from_str::<RunValues>(r#"{"runtime": "x"}"#).is_err());
    }

    #[test]
    fn a_run_of_one_value_allocates_nothing_beside_its_shared_name() {
        assert!(std::mem::size_of::<RunValues>() <= 32);
        let name: MetricName = "runtime".into();
        let runs: Vec<RunValues> = (0..3)
            .map(|i| RunValues::one(name.clone(), f64::from(i)))
            .collect();
        assert_eq!(Arc::strong_count(&name), 4);
        assert_eq!(runs[2].get("runtime"), Some(&2.0));
    }
}
