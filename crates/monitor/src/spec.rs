//! `--monitor NAME[:option=value...],...`: the parsing of monitor specs against the registry
//! ([`crate::monitors::registry`]).
//!
//! Specs are validated here, before anything runs; [`build`] turns a spec into a working
//! [`Monitor`].

use std::fmt;

use serde::{Deserialize, Serialize};
use vernier_model::spec::{parse_spec_list, Spec};
use vernier_model::{Describe, OptionValue, Options, PluginError};
use vernier_sys::Roots;

use crate::monitors::{registry, Entry, ALL, DEFAULT, INTERVAL, NONE};
use crate::{Monitor, MonitorError};

/// A validated monitor choice: a monitor of the registry and its resolved options (those it
/// shares with every monitor, `interval`, and its own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorSpec {
    pub name: String,
    pub options: Options,
}

impl MonitorSpec {
    /// The monitor `entry` with every option at its default.
    pub fn of(entry: &Entry) -> Self {
        let no_options: [(&str, &str); 0] = [];
        MonitorSpec {
            name: entry.description().name.to_string(),
            // The defaults of the registry's own options always resolve.
            options: registry().resolve(entry, no_options, 1).unwrap_or_default(),
        }
    }

    /// The time between samples.
    pub fn interval(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.interval_ms())
    }

    /// The time between samples in milliseconds.
    pub fn interval_ms(&self) -> u64 {
        (self.options.float(INTERVAL) * 1000.0).round() as u64
    }
}

/// The canonical text of a spec, accepted back by [`parse_monitor_list`]: the name and each
/// option that differs from its default, the shared ones first.
impl fmt::Display for MonitorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        let Some(entry) = registry().get(&self.name) else {
            return Ok(());
        };
        let declared = registry()
            .shared_options()
            .iter()
            .chain(&entry.description().options);
        for option in declared {
            let value = self.options.get(&option.name);
            if let Some(value) = value.filter(|v| Some(*v) != option.default_value(1).as_ref()) {
                write!(f, ":{}={value}", option.name)?;
            }
        }
        Ok(())
    }
}

/// The monitors sampled when none are chosen: every cheap one. Those unsupported on a machine
/// (schedstat, cpufreq, hardware counters in a VM) just record that.
pub fn default_monitors() -> Vec<MonitorSpec> {
    registry()
        .iter()
        .filter(|m| m.in_default_set())
        .map(MonitorSpec::of)
        .collect()
}

/// Parses `NAME[:option=value[:option=value]],...`, in vernier's one spec grammar
/// ([`vernier_model::spec`]). `default` and `all` stand for the default set and every monitor
/// (an option given to them applies to each monitor that takes it), `none` for no monitor. A
/// monitor named again replaces the earlier choice in place, so `default,stat:interval=0.1`
/// samples stat faster. The options are each monitor's ([`crate::monitors`]; `vernier list
/// -v`), typed and checked as every plugin's are.
pub fn parse_monitor_list(text: &str) -> Result<Vec<MonitorSpec>, MonitorError> {
    let bad = |reason: String| MonitorError::BadSpec {
        text: text.to_string(),
        reason,
    };
    if text.trim() == NONE {
        return Ok(Vec::new());
    }
    let items = parse_spec_list(text)
        .and_then(|items| {
            items.iter().try_for_each(Spec::not_optional)?;
            Ok(items)
        })
        .map_err(|e| {
            bad(if e.spec == text.trim() {
                e.problem.to_string()
            } else {
                e.to_string()
            })
        })?;
    let mut out: Vec<MonitorSpec> = Vec::new();
    for item in items {
        let specs = match item.name.as_str() {
            NONE => return Err(bad("'none' cannot be combined with monitors".into())),
            DEFAULT => resolve_group(&item, registry().iter().filter(|m| m.in_default_set()))?,
            ALL => resolve_group(&item, registry().iter())?,
            name => vec![resolve(registry().find(name)?, &item.options)?],
        };
        for spec in specs {
            match out.iter_mut().find(|s| s.name == spec.name) {
                Some(existing) => *existing = spec,
                None => out.push(spec),
            }
        }
    }
    Ok(out)
}

/// The spec of monitor `entry` with `given` options.
fn resolve(entry: &Entry, given: &[(String, String)]) -> Result<MonitorSpec, PluginError> {
    let mut options = registry().resolve(
        entry,
        given.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        1,
    )?;
    // Samples are timed in whole milliseconds: the spec says what is sampled.
    let interval = options.float(INTERVAL);
    options.0.insert(
        INTERVAL.to_string(),
        OptionValue::Float((interval * 1000.0).round() / 1000.0),
    );
    Ok(MonitorSpec {
        name: entry.description().name.to_string(),
        options,
    })
}

/// The specs of a group (`default`, `all`): each option given applies to the members that take
/// it; an option none of them takes is refused, and so is a value refused for a member, both
/// naming the group.
fn resolve_group<'a>(
    item: &Spec,
    members: impl Iterator<Item = &'a Entry> + Clone,
) -> Result<Vec<MonitorSpec>, PluginError> {
    let takes = |entry: &Entry, key: &str| {
        registry().shared_options().iter().any(|o| o.name == key)
            || entry.description().option(key).is_some()
    };
    let mut valid: Vec<&str> = Vec::new();
    for option in registry()
        .shared_options()
        .iter()
        .chain(members.clone().flat_map(|m| &m.description().options))
    {
        if !valid.contains(&option.name.as_ref()) {
            valid.push(&option.name);
        }
    }
    if let Some((key, _)) = item
        .options
        .iter()
        .find(|(key, _)| !members.clone().any(|m| takes(m, key)))
    {
        return Err(PluginError::UnknownOption {
            kind: registry().kind(),
            plugin: item.name.clone(),
            option: key.clone(),
            valid: valid.join(", "),
        });
    }
    members
        .map(|entry| {
            let given: Vec<(String, String)> = item
                .options
                .iter()
                .filter(|(key, _)| takes(entry, key))
                .cloned()
                .collect();
            resolve(entry, &given).map_err(|e| match e {
                PluginError::Value { kind, source, .. } => PluginError::Value {
                    kind,
                    plugin: item.name.clone(),
                    source,
                },
                other => other,
            })
        })
        .collect()
}

/// Creates the working monitor of `spec`.
pub fn build(spec: &MonitorSpec, roots: &Roots) -> Result<Box<dyn Monitor>, MonitorError> {
    let entry = registry().find(&spec.name)?;
    Ok(entry.build(&spec.options, roots))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(specs: &[MonitorSpec]) -> Vec<&str> {
        specs.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn default_set_excludes_slab_perf_softirqs_and_cpuidle() {
        let d = default_monitors();
        assert_eq!(
            names(&d),
            [
                "stat",
                "meminfo",
                "vmstat",
                "schedstat",
                "pressure",
                "interrupts",
                "cpufreq"
            ]
        );
        assert!(d.iter().all(|s| s.interval_ms() == 1000));
        assert!(d.iter().all(|s| s.to_string() == s.name));
    }

    #[test]
    fn parses_names_and_options() {
        let s = parse_monitor_list("stat:interval=0.1, interrupts:top=3:interval=2,perf").unwrap();
        assert_eq!(names(&s), ["stat", "interrupts", "perf"]);
        assert_eq!(s[0].interval_ms(), 100);
        assert_eq!((s[1].options.uint("top"), s[1].interval_ms()), (3, 2000));
        assert_eq!(s[2], MonitorSpec::of(registry().get("perf").unwrap()));
        assert_eq!(parse_monitor_list("none").unwrap(), vec![]);
        assert_eq!(
            parse_monitor_list("all").unwrap().len(),
            registry().iter().count()
        );
        // Sampled in whole milliseconds.
        let s = parse_monitor_list("stat:interval=0.1234").unwrap();
        assert_eq!(
            (s[0].interval_ms(), s[0].to_string()),
            (123, "stat:interval=0.123".into())
        );
    }

    #[test]
    fn later_choice_replaces_earlier_and_group_options_apply_to_all() {
        let s = parse_monitor_list("default:interval=0.5,stat:interval=0.1,slab").unwrap();
        assert_eq!(s.len(), default_monitors().len() + 1);
        assert_eq!(s[0].name, "stat");
        assert_eq!(s[0].interval_ms(), 100);
        assert!(s[1..s.len() - 1].iter().all(|m| m.interval_ms() == 500));
        assert_eq!(s.last().unwrap().name, "slab");
        let t = parse_monitor_list("all:top=2").unwrap();
        assert!(t.iter().all(|m| match m.name.as_str() {
            "interrupts" | "slab" => m.options.uint("top") == 2,
            _ => m.options.get("top").is_none(),
        }));
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "stat",
            "stat:interval=0.25",
            "slab:interval=2:top=9",
            "interrupts:top=3:per-cpu=on",
        ] {
            let s = parse_monitor_list(text).unwrap();
            assert_eq!(s[0].to_string(), text);
            assert_eq!(parse_monitor_list(&s[0].to_string()).unwrap(), s);
        }
        // The words a switch takes are written as on.
        let s = parse_monitor_list("interrupts:per-cpu=yes").unwrap();
        assert_eq!(s[0].to_string(), "interrupts:per-cpu=on");
    }

    #[test]
    fn errors_name_the_valid_choices() {
        let e = parse_monitor_list("stat,bogus").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown monitor 'bogus'; valid monitors: stat, meminfo, vmstat, schedstat, \
             pressure, interrupts, softirqs, slab, perf, cpufreq, cpuidle (or default, all, none)"
        );

        let e = parse_monitor_list("stat:top=3").unwrap_err().to_string();
        assert_eq!(
            e,
            "monitor 'stat' has no option 'top'; valid options: interval"
        );
        let e = parse_monitor_list("slab:depth=3").unwrap_err().to_string();
        assert!(e.ends_with("valid options: interval, top"), "{e}");
        let e = parse_monitor_list("slab:per-cpu=on")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no option 'per-cpu'"), "{e}");
        let s = parse_monitor_list("default:per-cpu=on").unwrap();
        assert!(s
            .iter()
            .all(|m| m.options.is_on("per-cpu") == (m.name == "interrupts")));
        let e = parse_monitor_list("default:depth=1")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "monitor 'default' has no option 'depth'; valid options: interval, top, per-cpu, min-run"
        );
        let e = parse_monitor_list("all:interval=0")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("monitor 'all': invalid value '0'"), "{e}");

        for (bad, expected) in [
            ("stat:interval=0", "expected a number in 0.01..=3600"),
            ("stat:interval=fast", "expected a number in 0.01..=3600"),
            ("stat:interval=0.001", "expected a number in 0.01..=3600"),
            ("stat:interval=inf", "expected a number in 0.01..=3600"),
            ("interrupts:top=0", "expected an integer in 1..=1048576"),
            ("interrupts:per-cpu=maybe", "expected on or off"),
        ] {
            let e = parse_monitor_list(bad).unwrap_err();
            assert!(
                matches!(e, MonitorError::Plugin(PluginError::Value { .. })),
                "{bad}: {e}"
            );
            assert!(e.to_string().ends_with(expected), "{bad}: {e}");
        }
        for bad in ["", "stat,,meminfo", "stat:interval", "none,stat"] {
            let e = parse_monitor_list(bad).unwrap_err();
            assert!(matches!(e, MonitorError::BadSpec { .. }), "{bad}: {e}");
        }
    }
}
