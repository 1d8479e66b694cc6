//! Typed benchmark options: their declared kinds, defaults and the parsing of text values.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The type and valid range of an option.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionKind {
    /// An unsigned integer in `min..=max`.
    UInt { min: u64, max: u64 },
    /// A real number in `min..=max`.
    Float { min: f64, max: f64 },
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
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
}

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
}

/// One option a benchmark accepts.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
    pub default: OptionDefault,
    /// Unit of the value, empty when it has none.
    pub unit: &'static str,
    pub help: &'static str,
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
        }
    }
}

impl OptionSpec {
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
                .find(|w| **w == text)
                .map(|w| OptionValue::Text((*w).to_string()))
                .ok_or_else(err),
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

    /// The default value, resolved against the machine's number of online CPUs.
    pub fn default_value(&self, online_cpus: u32) -> OptionValue {
        match &self.default {
            OptionDefault::Value(v) => v.clone(),
            OptionDefault::OnlineCpus => OptionValue::UInt(u64::from(online_cpus.max(1))),
        }
    }

    /// The default as shown to users.
    pub fn default_label(&self) -> String {
        match &self.default {
            OptionDefault::Value(v) => v.to_string(),
            OptionDefault::OnlineCpus => "online CPUs".to_string(),
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
        OptionSpec {
            name: "groups",
            kind: OptionKind::UInt { min: 1, max: 1000 },
            default: OptionDefault::Value(OptionValue::UInt(10)),
            unit: "",
            help: "",
        }
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
        let spec = OptionSpec {
            name: "ipc",
            kind: OptionKind::Choice(&["socket", "pipe"]),
            default: OptionDefault::Value(OptionValue::Text("socket".into())),
            unit: "",
            help: "",
        };
        assert_eq!(spec.parse("pipe"), Ok(OptionValue::Text("pipe".into())));
        let err = spec.parse("tcp").unwrap_err().to_string();
        assert!(err.contains("one of socket, pipe"), "{err}");
    }

    #[test]
    fn float_rejects_nan_and_out_of_range() {
        let spec = OptionSpec {
            name: "duration",
            kind: OptionKind::Float {
                min: 0.01,
                max: 3600.0,
            },
            default: OptionDefault::Value(OptionValue::Float(5.0)),
            unit: "s",
            help: "",
        };
        assert_eq!(spec.parse("0.5"), Ok(OptionValue::Float(0.5)));
        assert!(spec.parse("NaN").is_err());
        assert!(spec.parse("0").is_err());
    }

    #[test]
    fn micros_take_a_unit_and_normalize_to_microseconds() {
        let spec = OptionSpec {
            name: "interval",
            kind: OptionKind::Micros {
                min: 1,
                max: 1_000_000,
            },
            default: OptionDefault::Value(OptionValue::UInt(200)),
            unit: "us",
            help: "",
        };
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
        let spec = OptionSpec {
            name: "size",
            kind: OptionKind::Bytes {
                min: 64,
                max: 1 << 40,
            },
            default: OptionDefault::Value(OptionValue::UInt(4096)),
            unit: "bytes",
            help: "",
        };
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
        let spec = OptionSpec {
            name: "cpus",
            kind: OptionKind::CpuList,
            default: OptionDefault::Value(OptionValue::Text(ALL_CPUS.into())),
            unit: "",
            help: "",
        };
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
