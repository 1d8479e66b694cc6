//! The description of a benchmark: its [`Description`] (name, summary, options, metrics) and
//! its version.

use serde::{Deserialize, Serialize};

use crate::options::OptionSpec;
use crate::plugin::{Describe, Description, Text};

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

impl MetricInfo {
    /// A metric of which less is better (a time).
    pub fn lower(name: &str, unit: &str) -> Self {
        MetricInfo {
            name: name.to_string(),
            unit: unit.to_string(),
            higher_is_better: false,
        }
    }

    /// A metric of which more is better (a rate).
    pub fn higher(name: &str, unit: &str) -> Self {
        MetricInfo {
            name: name.to_string(),
            unit: unit.to_string(),
            higher_is_better: true,
        }
    }
}

/// Everything the CLI and the plan validator need to know about a benchmark: its
/// [`Description`], whose metrics always hold the primary one first, and its version.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkInfo {
    description: Description,
    version: Text,
}

impl BenchmarkInfo {
    /// A benchmark without options and secondary metrics: add them with the `with_` methods.
    pub fn new(
        name: impl Into<Text>,
        version: impl Into<Text>,
        summary: impl Into<Text>,
        metric: MetricInfo,
    ) -> Self {
        BenchmarkInfo {
            description: Description::new(name, summary).with_metrics(vec![metric]),
            version: version.into(),
        }
    }

    pub fn with_options(mut self, options: Vec<OptionSpec>) -> Self {
        self.description.options = options;
        self
    }

    /// Further metrics every run reports, shown and compared next to the primary one.
    pub fn with_secondary_metrics(mut self, metrics: Vec<MetricInfo>) -> Self {
        self.description.metrics.truncate(1);
        self.description.metrics.extend(metrics);
        self
    }

    /// Accepts options it does not declare: text parameters, each named like an option, that
    /// fill `{name}` placeholders in its declared text options (`command:cmd=sleep {t}:t=1,2`
    /// sweeps `t` as any option is swept); `help` says so in `list -v`. The benchmark checks
    /// that each one is used.
    pub fn with_parameters(mut self, help: impl Into<Text>) -> Self {
        self.description = self.description.with_other_options(help, false);
        self
    }

    /// Runnable, but not listed (the scripted mock).
    pub fn hidden(mut self) -> Self {
        self.description = self.description.hidden();
        self
    }

    pub fn name(&self) -> &str {
        &self.description.name
    }

    /// Version of the benchmark's implementation; bumped when its numbers stop being
    /// comparable.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// What it measures, in one line.
    pub fn summary(&self) -> &str {
        &self.description.summary
    }

    pub fn options(&self) -> &[OptionSpec] {
        &self.description.options
    }

    pub fn option(&self, name: &str) -> Option<&OptionSpec> {
        self.description.option(name)
    }

    /// The primary metric.
    pub fn metric(&self) -> &MetricInfo {
        // `new` puts it first and `set_metrics` keeps it there: never empty.
        &self.description.metrics[0]
    }

    /// The metrics besides the primary one.
    pub fn secondary_metrics(&self) -> &[MetricInfo] {
        &self.description.metrics[1..]
    }

    /// Sets the metrics of a configuration (an adapter reports those of the tool's benchmark
    /// its options choose).
    pub fn set_metrics(&mut self, metric: MetricInfo, secondary: Vec<MetricInfo>) {
        self.description.metrics = std::iter::once(metric).chain(secondary).collect();
    }

    /// Whether it takes parameters ([`BenchmarkInfo::with_parameters`]).
    pub fn parameters(&self) -> bool {
        self.description.other_options.is_some()
    }

    /// Whether it is left out of listings.
    pub fn is_hidden(&self) -> bool {
        self.description.hidden
    }

    /// True when `name` is not a declared option but can be a parameter of this benchmark
    /// (see [`BenchmarkInfo::with_parameters`]).
    pub fn takes_parameter(&self, name: &str) -> bool {
        self.option(name).is_none()
            && self
                .description
                .other_options
                .as_ref()
                .is_some_and(|o| o.accepts(name))
    }
}

impl Describe for BenchmarkInfo {
    fn description(&self) -> &Description {
        &self.description
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_primary_metric_stays_first() {
        let mut info = BenchmarkInfo::new("fork", "1", "forks", MetricInfo::higher("rate", "/s"))
            .with_secondary_metrics(vec![MetricInfo::lower("time", "s")]);
        assert_eq!(info.metric().name, "rate");
        assert_eq!(info.secondary_metrics()[0].name, "time");
        info.set_metrics(MetricInfo::lower("runtime", "s"), Vec::new());
        assert_eq!(info.metric().name, "runtime");
        assert!(info.secondary_metrics().is_empty());
        assert!(!info.parameters() && !info.takes_parameter("t"));
        let command = info.with_parameters("placeholders");
        assert!(command.takes_parameter("t") && !command.takes_parameter("9t"));
    }
}
