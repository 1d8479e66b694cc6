//! Identities: what makes two configurations the same one ([`ConfigKey`]), and the short form
//! of a session id that tables, legends and pages show ([`ShortId`]).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use uuid::Uuid;

use crate::Options;

/// A configuration's identity across sessions: its benchmark, its options and the loads it ran
/// under (none for most). Compare, history, pooled summaries and calibrations match
/// configurations by it; the benchmark's version is not part of it (a change of version is
/// pooled and warned about, `analysis::Warning::VersionChanged`).
///
/// Options are compared by their canonical JSON text (sorted keys, numbers as stored), so that
/// `groups=10` and `groups=10.0` stay apart and the order is that of the text. Displayed as the
/// label every output shows: `benchmark:opt=value:...`, then ` [load cpu + io]` when there are
/// loads. The label leaves out the options at their benchmark's default (see
/// [`set_label_defaults`]); [`ConfigKey::full_label`] has them all, and the identity always
/// holds every option.
#[derive(Debug, Clone)]
pub struct ConfigKey {
    pub benchmark: String,
    pub options: Options,
    pub loads: Vec<String>,
    /// `options` as JSON: what equality, order and hash use.
    canonical: String,
}

impl ConfigKey {
    /// The key of `benchmark` with `options`, run without loads.
    pub fn new(benchmark: &str, options: &Options) -> Self {
        Self::loaded(benchmark, options, &[])
    }

    /// The key of `benchmark` with `options` run under `loads`: it matches only configurations
    /// under the same loads.
    pub fn loaded(benchmark: &str, options: &Options, loads: &[String]) -> Self {
        // Options are a map of numbers and strings: serializing them cannot fail; the label is
        // a faithful fallback all the same.
        let canonical = serde_json::to_string(options).unwrap_or_else(|_| options.label());
        ConfigKey {
            benchmark: benchmark.to_string(),
            options: options.clone(),
            loads: loads.to_vec(),
            canonical,
        }
    }

    fn identity(&self) -> (&str, &str, &[String]) {
        (&self.benchmark, &self.canonical, &self.loads)
    }
}

/// The default value of each option of each benchmark, which labels leave out: given once per
/// process by the binary, from the benchmarks' descriptions (model cannot see them). Without
/// it, labels hold every option.
static LABEL_DEFAULTS: OnceLock<BTreeMap<String, Options>> = OnceLock::new();

/// Sets the defaults that labels leave out: benchmark name -> its options at their defaults.
/// The first call wins; later ones change nothing (a process has one set of benchmarks).
pub fn set_label_defaults(defaults: BTreeMap<String, Options>) {
    let _ = LABEL_DEFAULTS.set(defaults);
}

impl ConfigKey {
    /// The label with every option, defaults included: `show -v`, and what identifies the
    /// configuration (`hackbench:datasize=100:fds=20:groups=10:...`).
    pub fn full_label(&self) -> String {
        self.label_with(&Options::default())
    }

    /// The label without the options whose value is in `defaults`.
    fn label_with(&self, defaults: &Options) -> String {
        let shown: Vec<String> = self
            .options
            .0
            .iter()
            .filter(|(name, value)| defaults.get(name) != Some(value))
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        let mut label = self.benchmark.clone();
        if !shown.is_empty() {
            label.push(':');
            label.push_str(&shown.join(":"));
        }
        if !self.loads.is_empty() {
            label.push_str(&format!(" [load {}]", self.loads.join(" + ")));
        }
        label
    }
}

impl PartialEq for ConfigKey {
    fn eq(&self, other: &Self) -> bool {
        self.identity() == other.identity()
    }
}

impl Eq for ConfigKey {}

impl Hash for ConfigKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.identity().hash(state);
    }
}

impl PartialOrd for ConfigKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ConfigKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.identity().cmp(&other.identity())
    }
}

impl fmt::Display for ConfigKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let defaults = LABEL_DEFAULTS
            .get()
            .and_then(|all| all.get(&self.benchmark));
        match defaults {
            Some(d) => f.write_str(&self.label_with(d)),
            None => f.write_str(&self.full_label()),
        }
    }
}

/// A session id as tables, figure legends and pages show it: its first 8 hexadecimal digits
/// (`1a2b3c4d`), which `vernier show` and every selector also accept as a prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortId(pub Uuid);

impl fmt::Display for ShortId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The first 4 bytes are the first 8 digits of the hyphenated form (RFC 9562).
        for b in &self.0.as_bytes()[..4] {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::OptionValue;
    use std::collections::{BTreeSet, HashSet};

    fn options(pairs: &[(&str, OptionValue)]) -> Options {
        Options(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn the_label_names_benchmark_options_and_loads() {
        let o = options(&[
            ("ipc", OptionValue::Text("pipe".into())),
            ("groups", OptionValue::UInt(10)),
        ]);
        assert_eq!(
            ConfigKey::new("hackbench", &o).to_string(),
            "hackbench:groups=10:ipc=pipe"
        );
        assert_eq!(
            ConfigKey::new("syscall", &Options::default()).to_string(),
            "syscall"
        );
        let loads = ["cpu".to_string(), "io".to_string()];
        assert_eq!(
            ConfigKey::loaded("hackbench", &o, &loads).to_string(),
            "hackbench:groups=10:ipc=pipe [load cpu + io]"
        );
    }

    #[test]
    fn the_label_leaves_out_defaults_and_the_identity_keeps_them() {
        let o = options(&[
            ("ipc", OptionValue::Text("pipe".into())),
            ("groups", OptionValue::UInt(10)),
            ("loops", OptionValue::UInt(1000)),
        ]);
        let defaults = options(&[
            ("ipc", OptionValue::Text("socket".into())),
            ("groups", OptionValue::UInt(10)),
            ("loops", OptionValue::UInt(1000)),
        ]);
        let key = ConfigKey::loaded("hackbench", &o, &["cpu".into()]);
        assert_eq!(key.label_with(&defaults), "hackbench:ipc=pipe [load cpu]");
        assert_eq!(
            key.full_label(),
            "hackbench:groups=10:ipc=pipe:loops=1000 [load cpu]"
        );
        let at_defaults = ConfigKey::new("hackbench", &defaults);
        assert_eq!(at_defaults.label_with(&defaults), "hackbench");
        // Two configurations that differ only in a default's value stay apart.
        let other = ConfigKey::new(
            "hackbench",
            &options(&[
                ("ipc", OptionValue::Text("socket".into())),
                ("groups", OptionValue::UInt(20)),
                ("loops", OptionValue::UInt(1000)),
            ]),
        );
        assert_ne!(at_defaults, other);
        assert_eq!(other.label_with(&defaults), "hackbench:groups=20");
    }

    #[test]
    fn options_that_print_alike_but_differ_stay_apart() {
        let int = ConfigKey::new("b", &options(&[("n", OptionValue::UInt(1))]));
        let float = ConfigKey::new("b", &options(&[("n", OptionValue::Float(1.0))]));
        assert_eq!(int.to_string(), float.to_string());
        assert_ne!(int, float);
        let same = ConfigKey::new("b", &options(&[("n", OptionValue::UInt(1))]));
        assert_eq!(int, same);
        let set: HashSet<ConfigKey> = [int.clone(), same, float.clone()].into();
        assert_eq!(set.len(), 2);
        let loaded = ConfigKey::loaded("b", &int.options, &["cpu".into()]);
        assert_ne!(int, loaded);
    }

    #[test]
    fn keys_order_by_benchmark_then_options_text() {
        let key = |b: &str, n: u64| ConfigKey::new(b, &options(&[("n", OptionValue::UInt(n))]));
        let order: Vec<String> = [key("b", 2), key("a", 3), key("b", 10)]
            .into_iter()
            .collect::<BTreeSet<_>>()
            .iter()
            .map(ToString::to_string)
            .collect();
        // `{"n":10}` sorts before `{"n":2}`: the order of the canonical text.
        assert_eq!(order, ["a:n=3", "b:n=10", "b:n=2"]);
    }

    #[test]
    fn a_short_id_is_the_first_eight_digits() {
        let id = Uuid::parse_str("1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d").unwrap();
        assert_eq!(ShortId(id).to_string(), "1a2b3c4d");
        assert_eq!(ShortId(Uuid::nil()).to_string(), "00000000");
        let any = Uuid::new_v4();
        assert_eq!(ShortId(any).to_string(), any.to_string()[..8]);
    }
}
