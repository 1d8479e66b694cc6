//! Identities: what makes two configurations the same one ([`ConfigKey`]), where a run belongs
//! and the id that place gives it ([`RunPlace`]), and the short form of a session id that
//! tables, legends and pages show ([`ShortId`]).

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

/// Where a run belongs: its configuration, its kind (warmup or measured) and its index among
/// the runs of that kind. No two runs share a place, so sync, merge and import tell a run they
/// hold already by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunPlace {
    pub configuration: Uuid,
    pub warmup: bool,
    pub index: u32,
}

impl RunPlace {
    /// The id a run recorded in this place gets: a name-based UUID of version 8 (RFC 9562,
    /// section 5.8 and its SHA-256 example in appendix B.2), the first 16 bytes of the SHA-256
    /// of the configuration's 16 bytes, one byte 0 (measured) or 1 (warmup) and the index as 4
    /// bytes big endian, with the version and variant bits set. A database stores only the ids
    /// that are not this (docs/schema.md, `run_ids`).
    pub fn derived_id(&self) -> Uuid {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        hasher.update(self.configuration.as_bytes());
        hasher.update([u8::from(self.warmup)]);
        hasher.update(self.index.to_be_bytes());
        let digest = hasher.finalize();
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        uuid::Builder::from_custom_bytes(bytes).into_uuid()
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
    fn a_derived_run_id_is_the_documented_hash_of_its_place() {
        let configuration = Uuid::parse_str("0b6f1c2e-8d7a-4c39-9f4e-5a1d2c3b4e5f").unwrap();
        let place = |warmup, index| RunPlace {
            configuration,
            warmup,
            index,
        };
        // Python: h = hashlib.sha256(c.bytes + bytes([0]) + (7).to_bytes(4, "big")).digest()
        // then version 8 and the RFC 9562 variant in bytes 6 and 8.
        assert_eq!(
            place(false, 7).derived_id().to_string(),
            "0e3d120c-f93b-8918-99f3-bb7b90b55d92"
        );
        assert_eq!(place(false, 7).derived_id().get_version_num(), 8);
        let ids: HashSet<Uuid> = (0..1000)
            .flat_map(|i| [place(false, i).derived_id(), place(true, i).derived_id()])
            .collect();
        assert_eq!(ids.len(), 2000);
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
