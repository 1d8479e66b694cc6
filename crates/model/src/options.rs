//! Typed options of every plugin (benchmarks, setup plugins, monitors, loads): their declared
//! kinds, defaults and the one parser of their text values.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::plugin::Text;

/// The type and valid range of an option.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionKind {
    /// An unsigned integer in `min..=max`.
    UInt { min: u64, max: u64 },
    /// A real number in `min..=max`.
    Float { min: f64, max: f64 },
    /// One of a fixed set of words ([`OptionKind::choice`] makes one of built-in words).
    Choice(Vec<Text>),
    /// Free text (for example a list of scripted values).
    Text,
    /// A duration in whole microseconds in `min..=max`, a [`OptionValue::UInt`]: written as a
    /// number of microseconds or with a unit (`200us`, `1ms`, `0.5ms`, `1s`), so that
    /// `interval=1ms` and `interval=1000` are the same configuration.
    Micros { min: u64, max: u64 },
    /// A set of CPUs, a [`OptionValue::Text`]: `all`, or a list in the kernel's format
    /// (`0-1,3`; [`crate::cpulist`]) kept in canonical form so that `1,0` and `0-1` are the
    /// same configuration. Whether the CPUs exist is the benchmark's machine check.
    CpuList,
    /// A size in bytes in `min..=max`, a [`OptionValue::UInt`]: written as a number of bytes or
    /// with a binary unit (`16K`, `256KiB`, `8M`, `1G`: powers of 1024, as cache and memory sizes
    /// are given), so that `size=16K` and `size=16384` are the same configuration.
    Bytes { min: u64, max: u64 },
    /// On or off, a [`OptionValue::Text`] of [`ON`] or [`OFF`]: written `on`, `yes`, `true`
    /// or `1`, and `off`, `no`, `false` or `0`.
    Switch,
}

/// The value of a [`OptionKind::Switch`] that is on.
pub const ON: &str = "on";
/// The value of a [`OptionKind::Switch`] that is off.
pub const OFF: &str = "off";

/// The word of a [`OptionKind::CpuList`] for every CPU the run may use.
pub const ALL_CPUS: &str = "all";

/// Microseconds per unit of a [`OptionKind::Micros`] value; a bare number is microseconds.
const MICROS_UNITS: [(&str, f64); 4] = [("us", 1.0), ("µs", 1.0), ("ms", 1e3), ("s", 1e6)];

/// A duration text (`200`, `200us`, `1.5ms`, `1s`) in whole microseconds.
fn parse_micros(text: &str) -> Option<u64> {
    let (number, scale) = MICROS_UNITS
        .iter()
        .find_map(|(unit, scale)| text.strip_suffix(unit).map(|n| (n, *scale)))
        .unwrap_or((text, 1.0));
    let number: f64 = number.trim().parse().ok()?;
    let us = number * scale;
    let whole = us.round();
    (us.is_finite() && us >= 0.0 && (us - whole).abs() < 1e-6 && whole < u64::MAX as f64)
        .then_some(whole as u64)
}

/// Bytes per unit of a [`OptionKind::Bytes`] value; a bare number is bytes.
const BYTE_UNITS: [(&str, u64); 9] = [
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("K", 1 << 10),
    ("M", 1 << 20),
    ("G", 1 << 30),
    ("k", 1 << 10),
    ("B", 1),
    ("b", 1),
];

/// A size text (`4096`, `16K`, `8MiB`, `1G`) in bytes: a whole number, times its unit.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let (number, scale) = BYTE_UNITS
        .iter()
        .find_map(|(unit, scale)| text.strip_suffix(unit).map(|n| (n, *scale)))
        .unwrap_or((text, 1));
    let number = number.trim();
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    number.parse::<u64>().ok()?.checked_mul(scale)
}

/// Where the default of an option comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionDefault {
    Value(OptionValue),
    /// The number of online CPUs of the machine the plan is made on.
    OnlineCpus,
    /// No value unless one is given, its absence meaning what the text says (shown where a
    /// default is shown: "5, or 0 with load").
    Unset(Text),
    /// No value unless one is given, and the plugin needs one (it says so, with an example,
    /// when the option is missing).
    Required,
}

/// One option a plugin accepts.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionSpec {
    pub name: Text,
    pub kind: OptionKind,
    pub default: OptionDefault,
    /// Unit of the value, empty when it has none.
    pub unit: Text,
    pub help: Text,
}

/// A value of an option. Serialized as a bare JSON number or string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionValue {
    UInt(u64),
    Float(f64),
    Text(String),
}

impl fmt::Display for OptionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::UInt(v) => write!(f, "{v}"),
            OptionValue::Float(v) => write!(f, "{v}"),
            OptionValue::Text(v) => f.write_str(v),
        }
    }
}

/// Why a text could not become a value of an option.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid value '{value}' for option '{option}': expected {expected}")]
pub struct OptionError {
    pub option: String,
    pub value: String,
    pub expected: String,
}

impl OptionKind {
    /// A [`OptionKind::Choice`] of built-in words.
    pub fn choice(words: &'static [&'static str]) -> Self {
        OptionKind::Choice(words.iter().map(|w| Text::Borrowed(*w)).collect())
    }

    /// Human description of the valid values, used in error messages and `list -v`.
    pub fn describe(&self) -> String {
        match self {
            OptionKind::UInt { min, max } if *max == u64::MAX => format!("an integer >= {min}"),
            OptionKind::UInt { min, max } => format!("an integer in {min}..={max}"),
            OptionKind::Float { min, max } => format!("a number in {min}..={max}"),
            OptionKind::Choice(words) => format!("one of {}", words.join(", ")),
            OptionKind::Text => "text".to_string(),
            OptionKind::Micros { min, max } => format!(
                "a whole number of microseconds in {min}..={max} (for example 200, 200us or 1ms)"
            ),
            OptionKind::CpuList => format!("{ALL_CPUS} or a CPU list such as 0-1,3"),
            OptionKind::Bytes { min, max } => format!(
                "a size in {min}..={max} bytes, a whole number with an optional unit K, M or G \
                 (powers of 1024; for example 4096, 16K or 8M)"
            ),
            OptionKind::Switch => format!("{ON} or {OFF}"),
        }
    }
}

impl OptionSpec {
    /// An option without unit and help: add them with [`OptionSpec::unit`] and
    /// [`OptionSpec::help`].
    pub fn new(name: impl Into<Text>, kind: OptionKind, default: OptionDefault) -> Self {
        OptionSpec {
            name: name.into(),
            kind,
            default,
            unit: Text::Borrowed(""),
            help: Text::Borrowed(""),
        }
    }

    /// The option with the unit of its value.
    pub fn unit(mut self, unit: impl Into<Text>) -> Self {
        self.unit = unit.into();
        self
    }

    /// The option with what it means, as `list -v` and `--help` show it.
    pub fn help(mut self, help: impl Into<Text>) -> Self {
        self.help = help.into();
        self
    }

    /// Parses and range-checks a text value of this option.
    pub fn parse(&self, text: &str) -> Result<OptionValue, OptionError> {
        let err = || OptionError {
            option: self.name.to_string(),
            value: text.to_string(),
            expected: self.kind.describe(),
        };
        let text = text.trim();
        match &self.kind {
            OptionKind::UInt { min, max } => {
                let v: u64 = text.parse().map_err(|_| err())?;
                if v < *min || v > *max {
                    return Err(err());
                }
                Ok(OptionValue::UInt(v))
            }
            OptionKind::Float { min, max } => {
                let v: f64 = text.parse().map_err(|_| err())?;
                if !v.is_finite() || v < *min || v > *max {
                    return Err(err());
                }
                Ok(OptionValue::Float(v))
            }
            OptionKind::Choice(words) => words
                .iter()
                .find(|w| *w == text)
                .map(|w| OptionValue::Text(w.to_string()))
                .ok_or_else(err),
            OptionKind::Switch => match text {
                "on" | "yes" | "true" | "1" => Ok(OptionValue::Text(ON.into())),
                "off" | "no" | "false" | "0" => Ok(OptionValue::Text(OFF.into())),
                _ => Err(err()),
            },
            OptionKind::Text => {
                if text.is_empty() {
                    return Err(err());
                }
                Ok(OptionValue::Text(text.to_string()))
            }
            OptionKind::Micros { min, max } => match parse_micros(text) {
                Some(v) if v >= *min && v <= *max => Ok(OptionValue::UInt(v)),
                _ => Err(err()),
            },
            OptionKind::Bytes { min, max } => match parse_bytes(text) {
                Some(v) if v >= *min && v <= *max => Ok(OptionValue::UInt(v)),
                _ => Err(err()),
            },
            OptionKind::CpuList if text == ALL_CPUS => Ok(OptionValue::Text(ALL_CPUS.into())),
            OptionKind::CpuList => match crate::cpulist::parse_cpu_list(text) {
                Ok(cpus) if !cpus.is_empty() => {
                    Ok(OptionValue::Text(crate::cpulist::format_cpu_list(&cpus)))
                }
                _ => Err(err()),
            },
        }
    }

    /// The default value, resolved against the machine's number of online CPUs; `None` for an
    /// option that has none ([`OptionDefault::Unset`]).
    pub fn default_value(&self, online_cpus: u32) -> Option<OptionValue> {
        match &self.default {
            OptionDefault::Value(v) => Some(v.clone()),
            OptionDefault::OnlineCpus => Some(OptionValue::UInt(u64::from(online_cpus.max(1)))),
            OptionDefault::Unset(_) | OptionDefault::Required => None,
        }
    }

    /// The default as shown to users.
    pub fn default_label(&self) -> String {
        match &self.default {
            OptionDefault::Value(v) => v.to_string(),
            OptionDefault::OnlineCpus => "online CPUs".to_string(),
            OptionDefault::Unset(what) => what.to_string(),
            OptionDefault::Required => "required".to_string(),
        }
    }
}

/// The resolved options of one configuration: every declared option has a value.
/// Ordered by name so that equal configurations compare and serialize equally.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Options(pub BTreeMap<String, OptionValue>);

impl Options {
    pub fn get(&self, name: &str) -> Option<&OptionValue> {
        self.0.get(name)
    }

    /// The value of an unsigned option; 0 when absent or of another type (plans are validated
    /// before benchmarks read them, so that never happens in a run).
    pub fn uint(&self, name: &str) -> u64 {
        match self.0.get(name) {
            Some(OptionValue::UInt(v)) => *v,
            Some(OptionValue::Float(v)) => *v as u64,
            _ => 0,
        }
    }

    pub fn float(&self, name: &str) -> f64 {
        match self.0.get(name) {
            Some(OptionValue::Float(v)) => *v,
            Some(OptionValue::UInt(v)) => *v as f64,
            _ => 0.0,
        }
    }

    pub fn text(&self, name: &str) -> &str {
        match self.0.get(name) {
            Some(OptionValue::Text(v)) => v,
            _ => "",
        }
    }

    /// Whether a [`OptionKind::Switch`] is on; false when absent.
    pub fn is_on(&self, name: &str) -> bool {
        self.text(name) == ON
    }

    /// `name=value` pairs joined by `:`, as in a spec: `groups=10:ipc=socket`.
    pub fn label(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(":")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups() -> OptionSpec {
        OptionSpec::new(
            "groups",
            OptionKind::UInt { min: 1, max: 1000 },
            OptionDefault::Value(OptionValue::UInt(10)),
        )
    }

    #[test]
    fn uint_parses_and_checks_range() {
        assert_eq!(groups().parse("4"), Ok(OptionValue::UInt(4)));
        let err = groups().parse("0").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value '0' for option 'groups': expected an integer in 1..=1000"
        );
        assert!(groups().parse("four").is_err());
        assert!(groups().parse("-1").is_err());
    }

    #[test]
    fn choice_names_valid_words() {
        let spec = OptionSpec::new(
            "ipc",
            OptionKind::choice(&["socket", "pipe"]),
            OptionDefault::Value(OptionValue::Text("socket".into())),
        );
        assert_eq!(spec.parse("pipe"), Ok(OptionValue::Text("pipe".into())));
        let err = spec.parse("tcp").unwrap_err().to_string();
        assert!(err.contains("one of socket, pipe"), "{err}");
    }

    #[test]
    fn float_rejects_nan_and_out_of_range() {
        let spec = OptionSpec::new(
            "duration",
            OptionKind::Float {
                min: 0.01,
                max: 3600.0,
            },
            OptionDefault::Value(OptionValue::Float(5.0)),
        )
        .unit("s");
        assert_eq!(spec.parse("0.5"), Ok(OptionValue::Float(0.5)));
        assert!(spec.parse("NaN").is_err());
        assert!(spec.parse("0").is_err());
    }

    #[test]
    fn micros_take_a_unit_and_normalize_to_microseconds() {
        let spec = OptionSpec::new(
            "interval",
            OptionKind::Micros {
                min: 1,
                max: 1_000_000,
            },
            OptionDefault::Value(OptionValue::UInt(200)),
        )
        .unit("us");
        for (text, us) in [
            ("200", 200),
            ("200us", 200),
            ("200µs", 200),
            ("1ms", 1_000),
            ("0.5ms", 500),
            ("1s", 1_000_000),
            (" 250 us ", 250),
        ] {
            assert_eq!(spec.parse(text), Ok(OptionValue::UInt(us)), "{text}");
        }
        for bad in ["0", "2s", "0.5", "0.5us", "1h", "ms", "-1ms", "NaN", ""] {
            let e = spec.parse(bad).unwrap_err().to_string();
            assert!(
                e.ends_with(
                    "expected a whole number of microseconds in 1..=1000000 (for example 200, \
                     200us or 1ms)"
                ),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn bytes_take_a_binary_unit_and_normalize_to_bytes() {
        let spec = OptionSpec::new(
            "size",
            OptionKind::Bytes {
                min: 64,
                max: 1 << 40,
            },
            OptionDefault::Value(OptionValue::UInt(4096)),
        )
        .unit("bytes");
        for (text, bytes) in [
            ("4096", 4096),
            ("16K", 16 << 10),
            ("16k", 16 << 10),
            ("16KiB", 16 << 10),
            ("256K", 256 << 10),
            ("8M", 8 << 20),
            (" 8MiB ", 8 << 20),
            ("1G", 1 << 30),
            ("100B", 100),
        ] {
            assert_eq!(spec.parse(text), Ok(OptionValue::UInt(bytes)), "{text}");
        }
        for bad in ["", "K", "1.5M", "-1K", "8MB", "1T", "2048G", "63", "8 M B"] {
            let e = spec.parse(bad).unwrap_err().to_string();
            assert!(
                e.ends_with(
                    "expected a size in 64..=1099511627776 bytes, a whole number with an \
                     optional unit K, M or G (powers of 1024; for example 4096, 16K or 8M)"
                ),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn cpu_lists_are_canonical_and_all_is_a_word() {
        let spec = OptionSpec::new(
            "cpus",
            OptionKind::CpuList,
            OptionDefault::Value(OptionValue::Text(ALL_CPUS.into())),
        )
        .unit("");
        assert_eq!(spec.parse("all"), Ok(OptionValue::Text("all".into())));
        assert_eq!(spec.parse("3,1,0"), Ok(OptionValue::Text("0-1,3".into())));
        for bad in ["", "a", "2-1", "ALL", ","] {
            let e = spec.parse(bad).unwrap_err().to_string();
            assert!(
                e.ends_with("expected all or a CPU list such as 0-1,3"),
                "{e}"
            );
        }
    }

    #[test]
    fn switches_take_the_usual_words_and_normalize_to_on_or_off() {
        let spec = OptionSpec::new(
            "per-cpu",
            OptionKind::Switch,
            OptionDefault::Value(OptionValue::Text(OFF.into())),
        );
        for (text, value) in [
            ("on", ON),
            ("yes", ON),
            ("true", ON),
            ("1", ON),
            ("off", OFF),
            ("no", OFF),
            ("false", OFF),
            ("0", OFF),
        ] {
            assert_eq!(
                spec.parse(text),
                Ok(OptionValue::Text(value.into())),
                "{text}"
            );
        }
        let e = spec.parse("maybe").unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid value 'maybe' for option 'per-cpu': expected on or off"
        );
        let mut options = Options::default();
        assert!(!options.is_on("per-cpu"));
        options
            .0
            .insert("per-cpu".into(), spec.parse("yes").unwrap());
        assert!(options.is_on("per-cpu"));
    }

    #[test]
    fn an_unset_default_has_no_value_and_says_why() {
        let spec = OptionSpec::new(
            "load",
            OptionKind::Float { min: 0.0, max: 1e6 },
            OptionDefault::Unset("no wait for the load".into()),
        );
        assert_eq!(spec.default_value(4), None);
        assert_eq!(spec.default_label(), "no wait for the load");
        assert_eq!(groups().default_value(4), Some(OptionValue::UInt(10)));
    }

    #[test]
    fn options_serialize_as_plain_object() {
        let mut o = Options::default();
        o.0.insert("groups".into(), OptionValue::UInt(4));
        o.0.insert("ipc".into(), OptionValue::Text("pipe".into()));
        let json = serde_json::to_string(&o).unwrap();
        assert_eq!(json, r#"{"groups":4,"ipc":"pipe"}"#);
        let back: Options = serde_json::from_str(&json).unwrap();
        assert_eq!(back, o);
        assert_eq!(o.label(), "groups=4:ipc=pipe");
    }
}
