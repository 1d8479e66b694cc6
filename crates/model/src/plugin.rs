//! The one shape of every plugin of vernier, whatever its kind (benchmarks, setup plugins,
//! monitors, loads): a [`Description`] (name, summary, typed options, metrics where the kind
//! has them) and a [`Registry`] per kind that finds them by name, lists them and resolves the
//! options of a spec with the one typed parser of [`crate::options`]. The text of a
//! description is [`Text`], borrowed for the built-ins and owned for what is described at run
//! time (a benchmark of the user's own), so that nothing needs to live for the whole process.
//!
//! What a name or an option means is the plugin's own; here is only what every kind shares:
//! the unknown name and the unknown option, each with what is valid, and option values checked
//! against their types, in the same words for every kind.

use std::borrow::Cow;
use std::fmt;

use crate::benchmark::{is_parameter_name, MetricInfo};
use crate::options::{OptionError, OptionSpec, OptionValue, Options};

/// A text of a description: `&'static str` for the built-ins, a `String` for a description
/// read at run time.
pub type Text = Cow<'static, str>;

/// The kinds of plugins, as messages and listings name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Benchmark,
    Setup,
    Monitor,
    Load,
}

impl Kind {
    /// One of them: `setup plugin`.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Benchmark => "benchmark",
            Kind::Setup => "setup plugin",
            Kind::Monitor => "monitor",
            Kind::Load => "load",
        }
    }

    /// Several of them: `setup plugins`.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Benchmark => "benchmarks",
            Kind::Setup => "setup plugins",
            Kind::Monitor => "monitors",
            Kind::Load => "loads",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.noun())
    }
}

/// Options a plugin takes besides those it declares, each a text value under a name the user
/// chooses: a benchmark's parameters (`command:cmd=sleep {t}:t=1`), `sysctl:NAME=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct OtherOptions {
    /// What they are, as `list -v` shows it on a line of its own, named `NAME`.
    pub help: Text,
    /// Any name of the spec grammar (sysctl's `kernel.timer_migration`); otherwise a name as
    /// options are named ([`is_parameter_name`]), so that `{name}` placeholders stay
    /// unambiguous.
    pub any_name: bool,
}

impl OtherOptions {
    /// Whether `name` can be one of them.
    pub fn accepts(&self, name: &str) -> bool {
        self.any_name || is_parameter_name(name)
    }
}

/// What a plugin says about itself: everything that finds, checks and lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    pub name: Text,
    /// One line: what it does, or measures.
    pub summary: Text,
    /// The options it declares, in the order help lists them.
    pub options: Vec<OptionSpec>,
    /// Options it takes besides those it declares, if any.
    pub other_options: Option<OtherOptions>,
    /// What it reports, where its kind reports something: a benchmark's metrics, the primary
    /// one first. Empty for setup plugins and loads; a monitor's series are named as it reads
    /// them.
    pub metrics: Vec<MetricInfo>,
    /// Usable by name but not listed (the scripted mock benchmark).
    pub hidden: bool,
}

impl Description {
    /// A plugin without options, metrics or a hidden mark: add them with the `with_` methods.
    pub fn new(name: impl Into<Text>, summary: impl Into<Text>) -> Self {
        Description {
            name: name.into(),
            summary: summary.into(),
            options: Vec::new(),
            other_options: None,
            metrics: Vec::new(),
            hidden: false,
        }
    }

    pub fn with_options(mut self, options: Vec<OptionSpec>) -> Self {
        self.options = options;
        self
    }

    /// Takes options it does not declare, with what they are ([`OtherOptions`]).
    pub fn with_other_options(mut self, help: impl Into<Text>, any_name: bool) -> Self {
        self.other_options = Some(OtherOptions {
            help: help.into(),
            any_name,
        });
        self
    }

    pub fn with_metrics(mut self, metrics: Vec<MetricInfo>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Runnable by name, but not listed.
    pub fn hidden(mut self) -> Self {
        self.hidden = true;
        self
    }

    /// The declared option `name`.
    pub fn option(&self, name: &str) -> Option<&OptionSpec> {
        self.options.iter().find(|o| o.name == name)
    }

    /// Checks and types the options of a spec: every name is declared by the plugin or
    /// `shared` (the options every plugin of its registry takes) or one of its other options,
    /// every value parses as its option's type says, and every option not given takes its
    /// default (resolved against `online_cpus`; an [`crate::OptionDefault::Unset`] or
    /// [`crate::OptionDefault::Required`] one stays absent). Other options are text. Names are checked before any value.
    pub fn resolve<'a>(
        &self,
        kind: Kind,
        shared: &[OptionSpec],
        given: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
        online_cpus: u32,
    ) -> Result<Options, PluginError> {
        self.check_names(
            kind,
            shared,
            given.clone().into_iter().map(|(name, _)| name),
        )?;
        let declared = || shared.iter().chain(&self.options);
        let mut options = Options::default();
        for option in declared() {
            if let Some(value) = option.default_value(online_cpus) {
                options.0.insert(option.name.to_string(), value);
            }
        }
        for (name, text) in given {
            let value = match declared().find(|o| o.name == name) {
                Some(option) => option.parse(text).map_err(|source| PluginError::Value {
                    kind,
                    plugin: self.name.to_string(),
                    source,
                })?,
                None => OptionValue::Text(text.trim().to_string()),
            };
            options.0.insert(name.to_string(), value);
        }
        Ok(options)
    }

    /// Checks that it takes an option of each of `names`: declared by it or `shared`, or one of
    /// its other options.
    pub fn check_names<'a>(
        &self,
        kind: Kind,
        shared: &[OptionSpec],
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), PluginError> {
        for name in names {
            let known = shared.iter().chain(&self.options).any(|o| o.name == name)
                || self.other_options.as_ref().is_some_and(|o| o.accepts(name));
            if !known {
                return Err(PluginError::UnknownOption {
                    kind,
                    plugin: self.name.to_string(),
                    option: name.to_string(),
                    valid: self.option_names(shared),
                });
            }
        }
        Ok(())
    }

    /// The names of the options it declares and `shared`, for messages: `a, b` or `none`.
    pub fn option_names(&self, shared: &[OptionSpec]) -> String {
        let names: Vec<&str> = shared
            .iter()
            .chain(&self.options)
            .map(|o| o.name.as_ref())
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    }
}

/// Something a registry holds: it describes itself.
pub trait Describe {
    fn description(&self) -> &Description;
}

impl Describe for Description {
    fn description(&self) -> &Description {
        self
    }
}

/// Why a plugin or one of its options was refused, in the same words for every kind.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PluginError {
    #[error("unknown {kind} '{name}'; valid {}: {valid}", kind.plural())]
    Unknown {
        kind: Kind,
        name: String,
        valid: String,
    },
    #[error("{kind} '{plugin}' has no option '{option}'; valid options: {valid}")]
    UnknownOption {
        kind: Kind,
        plugin: String,
        option: String,
        valid: String,
    },
    #[error("{kind} '{plugin}': {source}")]
    Value {
        kind: Kind,
        plugin: String,
        #[source]
        source: OptionError,
    },
}

/// The plugin called `name` among `entries`, or the error that names the valid ones (those not
/// hidden), then `groups`, words that name several at once (`default, all, none`).
pub fn find<'a, T: Describe>(
    kind: Kind,
    entries: &'a [T],
    groups: &[&str],
    name: &str,
) -> Result<&'a T, PluginError> {
    entries
        .iter()
        .find(|e| e.description().name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = entries
                .iter()
                .map(Describe::description)
                .filter(|d| !d.hidden)
                .map(|d| d.name.as_ref())
                .collect();
            let mut valid = names.join(", ");
            if !groups.is_empty() {
                valid.push_str(&format!(" (or {})", groups.join(", ")));
            }
            PluginError::Unknown {
                kind,
                name: name.to_string(),
                valid,
            }
        })
}

/// The plugins of one kind, in the order they are listed: found by name with the same error,
/// listed by the same code, their specs' options resolved by the same parser.
#[derive(Debug, Clone)]
pub struct Registry<T> {
    kind: Kind,
    entries: Vec<T>,
    shared: Vec<OptionSpec>,
    groups: &'static [(&'static str, &'static str)],
}

impl<T: Describe> Registry<T> {
    /// The registry of `entries`, whose names must differ.
    pub fn new(kind: Kind, entries: Vec<T>) -> Self {
        debug_assert!(
            entries.iter().enumerate().all(|(i, e)| entries[..i]
                .iter()
                .all(|f| f.description().name != e.description().name)),
            "a {kind} is registered twice"
        );
        Registry {
            kind,
            entries,
            shared: Vec::new(),
            groups: &[],
        }
    }

    /// Options that every entry takes besides its own (a monitor's `interval`), listed once.
    pub fn with_shared_options(mut self, options: Vec<OptionSpec>) -> Self {
        self.shared = options;
        self
    }

    /// Words that a spec may give instead of a name, each naming several entries, with what
    /// they name (the monitors' `default`, `all`, `none`): named among the valid names of an
    /// unknown one, and listed.
    pub fn with_groups(mut self, groups: &'static [(&'static str, &'static str)]) -> Self {
        self.groups = groups;
        self
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The options every entry takes besides its own.
    pub fn shared_options(&self) -> &[OptionSpec] {
        &self.shared
    }

    /// The words that name several entries, each with what it names.
    pub fn groups(&self) -> &[(&'static str, &'static str)] {
        self.groups
    }

    /// Every entry, hidden ones included, in listing order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.entries.iter()
    }

    /// The entries that are listed (not hidden).
    pub fn listed(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().filter(|e| !e.description().hidden)
    }

    /// The names of the listed entries.
    pub fn names(&self) -> Vec<&str> {
        self.listed()
            .map(|e| e.description().name.as_ref())
            .collect()
    }

    /// The entry called `name`, hidden ones included.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.entries.iter().find(|e| e.description().name == name)
    }

    /// The entry called `name`, or the error naming the valid ones.
    pub fn find(&self, name: &str) -> Result<&T, PluginError> {
        let groups: Vec<&str> = self.groups.iter().map(|(word, _)| *word).collect();
        find(self.kind, &self.entries, &groups, name)
    }

    /// The entry called `name`, taken out of the registry.
    pub fn take(self, name: &str) -> Option<T> {
        self.entries
            .into_iter()
            .find(|e| e.description().name == name)
    }

    /// The options of a spec of `entry`, checked and typed ([`Description::resolve`]), with
    /// the options every entry shares.
    pub fn resolve<'a>(
        &self,
        entry: &T,
        given: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
        online_cpus: u32,
    ) -> Result<Options, PluginError> {
        entry
            .description()
            .resolve(self.kind, &self.shared, given, online_cpus)
    }
}

/// A spec's text from a name and options in the order given: `name:k=v:k=v` (the canonical
/// specs stored with a session).
pub fn spec_text<'a>(
    name: &str,
    options: impl IntoIterator<Item = (&'a str, &'a OptionValue)>,
) -> String {
    let mut text = name.to_string();
    for (key, value) in options {
        text.push_str(&format!(":{key}={value}"));
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::options::{OptionDefault, OptionKind};

    fn cooldown() -> Description {
        Description::new("cooldown", "pause before every run").with_options(vec![
            OptionSpec::new(
                "seconds",
                OptionKind::Float {
                    min: 0.0,
                    max: 86_400.0,
                },
                OptionDefault::Unset("5, or 0 with load".into()),
            ),
            OptionSpec::new(
                "timeout",
                OptionKind::Float {
                    min: 0.0,
                    max: 86_400.0,
                },
                OptionDefault::Value(OptionValue::Float(300.0)),
            ),
        ])
    }

    fn registry() -> Registry<Description> {
        Registry::new(
            Kind::Setup,
            vec![
                cooldown(),
                Description::new("turbo", "switch turbo off"),
                Description::new("sysctl", "set sysctls")
                    .with_other_options("NAME=VALUE sets the sysctl NAME", true),
                Description::new("secret", "not listed").hidden(),
            ],
        )
    }

    fn pairs(given: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        given.to_vec()
    }

    #[test]
    fn unknown_names_list_the_valid_ones_but_not_the_hidden() {
        let r = registry();
        assert_eq!(r.names(), ["cooldown", "turbo", "sysctl"]);
        assert!(r.get("secret").is_some());
        let e = r.find("cooldwn").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown setup plugin 'cooldwn'; valid setup plugins: cooldown, turbo, sysctl"
        );
        let monitors = Registry::new(Kind::Monitor, vec![Description::new("stat", "")])
            .with_groups(&[
                ("default", "a few"),
                ("all", "each"),
                ("none", "no monitor"),
            ]);
        assert_eq!(
            monitors.find("x").unwrap_err().to_string(),
            "unknown monitor 'x'; valid monitors: stat (or default, all, none)"
        );
        assert_eq!(r.take("turbo").unwrap().name, "turbo");
    }

    #[test]
    fn options_are_named_typed_and_defaulted_in_the_same_words_for_every_kind() {
        let r = registry();
        let cooldown = r.get("cooldown").unwrap();
        let o = r.resolve(cooldown, pairs(&[("seconds", "2")]), 2).unwrap();
        assert_eq!(o.float("seconds"), 2.0);
        assert_eq!(o.float("timeout"), 300.0);
        // An unset default stays absent.
        let o = r.resolve(cooldown, pairs(&[]), 2).unwrap();
        assert_eq!(o.get("seconds"), None);
        let e = r.resolve(cooldown, pairs(&[("secs", "3")]), 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "setup plugin 'cooldown' has no option 'secs'; valid options: seconds, timeout"
        );
        let e = r
            .resolve(cooldown, pairs(&[("secs", "3"), ("seconds", "x")]), 2)
            .unwrap_err();
        assert!(
            matches!(e, PluginError::UnknownOption { .. }),
            "names first"
        );
        let e = r
            .resolve(cooldown, pairs(&[("seconds", "-1")]), 2)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "setup plugin 'cooldown': invalid value '-1' for option 'seconds': expected a \
             number in 0..=86400"
        );
        let turbo = r.get("turbo").unwrap();
        let e = r.resolve(turbo, pairs(&[("x", "1")]), 2).unwrap_err();
        assert!(e.to_string().ends_with("valid options: none"), "{e}");
        // Other options are text, under any name when the plugin says so.
        let sysctl = r.get("sysctl").unwrap();
        let o = r
            .resolve(sysctl, pairs(&[("kernel.timer_migration", "0")]), 2)
            .unwrap();
        assert_eq!(o.text("kernel.timer_migration"), "0");
    }

    #[test]
    fn shared_options_apply_to_every_entry() {
        let interval = OptionSpec::new(
            "interval",
            OptionKind::Float {
                min: 0.01,
                max: 3600.0,
            },
            OptionDefault::Value(OptionValue::Float(1.0)),
        );
        let r = Registry::new(Kind::Monitor, vec![Description::new("stat", "")])
            .with_shared_options(vec![interval]);
        let stat = r.get("stat").unwrap();
        let o = r.resolve(stat, pairs(&[]), 1).unwrap();
        assert_eq!(o.float("interval"), 1.0);
        let e = r.resolve(stat, pairs(&[("top", "3")]), 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "monitor 'stat' has no option 'top'; valid options: interval"
        );
    }

    #[test]
    fn parameters_are_named_as_options_are() {
        let command =
            Description::new("command", "any command").with_other_options("a parameter", false);
        let o = command
            .resolve(Kind::Benchmark, &[], pairs(&[("level", "6")]), 1)
            .unwrap();
        assert_eq!(o.text("level"), "6");
        let e = command
            .resolve(Kind::Benchmark, &[], pairs(&[("9lives", "1")]), 1)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "benchmark 'command' has no option '9lives'; valid options: none"
        );
    }

    #[test]
    fn spec_text_joins_name_and_options() {
        let one = OptionValue::UInt(1);
        let on = OptionValue::Text("on".into());
        assert_eq!(spec_text("a", [("x", &one), ("y", &on)]), "a:x=1:y=on");
        assert_eq!(spec_text("a", []), "a");
    }
}
