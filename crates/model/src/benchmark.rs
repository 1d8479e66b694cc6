//! The description of a benchmark: its name, version, options and the metric it reports.

use serde::{Deserialize, Serialize};

use crate::options::OptionSpec;

/// The primary metric of a benchmark: what is compared and what the stopping rule watches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricInfo {
    /// Name of the metric, for example `runtime`.
    pub name: String,
    /// Unit as printed, for example `s`, `us`, `forks/s`.
    pub unit: String,
    /// Direction: true when more is better (a rate), false when less is better (a time).
    pub higher_is_better: bool,
}

/// Everything the CLI and the plan validator need to know about a benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkInfo {
    pub name: &'static str,
    /// Version of the benchmark's implementation; bumped when its numbers stop being comparable.
    pub version: &'static str,
    pub description: &'static str,
    pub metric: MetricInfo,
    /// Further metrics every run reports, shown and compared next to the primary one.
    pub secondary_metrics: Vec<MetricInfo>,
    pub options: Vec<OptionSpec>,
    /// Accepts options it does not declare: text parameters, each named like an option, that
    /// fill `{name}` placeholders in its declared text options (`command:cmd=sleep {t}:t=1,2`
    /// sweeps `t` as any option is swept). The benchmark checks that each one is used.
    pub parameters: bool,
    /// Hidden benchmarks (the scripted mock) are runnable but not listed.
    pub hidden: bool,
}

impl BenchmarkInfo {
    pub fn option(&self, name: &str) -> Option<&OptionSpec> {
        self.options.iter().find(|o| o.name == name)
    }

    /// True when `name` is not a declared option but can be a parameter of this benchmark
    /// (see [`BenchmarkInfo::parameters`]).
    pub fn takes_parameter(&self, name: &str) -> bool {
        self.parameters && self.option(name).is_none() && is_parameter_name(name)
    }
}

/// True for a name a parameter may have: a letter, then letters, digits, `-` and `_` (the
/// grammar of option names, so `{name}` cannot be mistaken for other uses of braces, such as
/// `{}` in `find -exec` or `{print $1}` in awk).
pub fn is_parameter_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
