//! The loads a session runs, checked against the registry ([`crate::loads`]), and their
//! canonical specs.
//!
//! `--load` takes a list in the spec grammar (`vernier_model::spec`): `cpu:duty=50,io` is two
//! loads, `cpu:cpus=0,2-3:duty=50` one (a piece after a comma that starts with a digit continues
//! a list value). A `command`'s `cmd` therefore cannot hold `:` or a `,` followed by a letter;
//! put such a command in a script. `--load` may be repeated; the loads add up.
//!
//! The canonical spec of a load names every option with its resolved value in the order the
//! load declares them (`cpu:cpus=0-3:duty=50`), so that the same load reads the same in every
//! session and compare can match configurations on it.

use std::fmt;
use std::path::PathBuf;

use vernier_model::plugin::spec_text;
use vernier_model::spec::{parse_spec, parse_spec_list, Spec, SpecError};
use vernier_model::{Describe, Options, PluginError};

use crate::loads::{registry, Entry, Program, Work};

/// One load with its options resolved.
#[derive(Debug, Clone)]
pub struct Load {
    entry: &'static Entry,
    options: Options,
}

impl PartialEq for Load {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.entry, other.entry) && self.options == other.options
    }
}

/// Why `--load` is not valid, or a load could not start or run; one line each.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("--load {0}")]
    Spec(#[from] SpecError),
    /// An unknown load, an unknown option or a value its option's type refuses.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error("load '{load}': {problem}")]
    Invalid { load: String, problem: String },
    #[error("load '{load}' did not start: {reason}")]
    Start { load: String, reason: String },
}

/// Parses `--load` values into a [`LoadPlan`].
pub struct LoadSet;

impl LoadSet {
    /// Parses every `--load` value (each a spec list) against this machine's online CPUs.
    pub fn parse(values: &[String]) -> Result<LoadPlan, LoadError> {
        LoadSet::parse_with(values, &vernier_sys::cpulist::online_cpus())
    }

    /// [`LoadSet::parse`] with the online CPUs given.
    pub fn parse_with(values: &[String], online: &[usize]) -> Result<LoadPlan, LoadError> {
        let mut loads = Vec::new();
        for value in values {
            for spec in parse_spec_list(value)? {
                loads.push(Load::from_spec(&spec, online)?);
            }
        }
        Ok(LoadPlan {
            loads,
            launcher: None,
            start_check: None,
        })
    }
}

/// Checked loads, ready to start before every measured run ([`LoadPlan::start`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadPlan {
    pub loads: Vec<Load>,
    /// The program and leading arguments that run a load's supervisor with its spec appended;
    /// `None`: this executable with `__load`.
    pub(crate) launcher: Option<(PathBuf, Vec<String>)>,
    /// How long a load's program must run without failing to count as started; `None`: the
    /// supervisor's default, 100 ms.
    pub(crate) start_check: Option<std::time::Duration>,
}

impl LoadPlan {
    /// Runs supervisors as `program args... SPEC` instead of `<this executable> __load SPEC`
    /// (tests, whose executable is not vernier).
    pub fn with_launcher(mut self, program: PathBuf, args: Vec<String>) -> Self {
        self.launcher = Some((program, args));
        self
    }

    /// Gives a load's program `check` to fail before it counts as started, instead of 100 ms:
    /// on a busy machine a missing program may take longer than that to fail.
    pub fn with_start_check(mut self, check: std::time::Duration) -> Self {
        self.start_check = Some(check);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.loads.is_empty()
    }

    /// The canonical specs, as stored with each configuration.
    pub fn canonical(&self) -> Vec<String> {
        self.loads.iter().map(Load::to_string).collect()
    }
}

impl Load {
    pub fn name(&self) -> &str {
        &self.entry.description().name
    }

    /// Its options, every one resolved.
    pub fn options(&self) -> &Options {
        &self.options
    }

    pub(crate) fn entry(&self) -> &'static Entry {
        self.entry
    }

    /// Parses one load's canonical or written spec on its own (every comma in a value is a
    /// list separator), as the supervisor reads its argument.
    pub fn parse(text: &str, online: &[usize]) -> Result<Load, LoadError> {
        Load::from_spec(&parse_spec(text)?, online)
    }

    /// Checks a parsed spec against the registry: the name, every option against the load's
    /// options and their types, and what the load leaves to the machine (the CPUs against the
    /// online ones).
    pub fn from_spec(spec: &Spec, online: &[usize]) -> Result<Load, LoadError> {
        spec.not_optional()?;
        let entry = registry().find(&spec.name)?;
        let mut options = registry().resolve(
            entry,
            spec.options.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            online.len() as u32,
        )?;
        entry
            .complete(&mut options, online)
            .map_err(|problem| LoadError::Invalid {
                load: spec.name.clone(),
                problem,
            })?;
        Ok(Load { entry, options })
    }

    /// The program the supervisor runs, for a load that runs one.
    pub(crate) fn program(&self) -> Option<Program> {
        match self.entry.work() {
            Work::Program(program) => Some(program(&self.options)),
            Work::Threads { .. } => None,
        }
    }

    /// Where a load that writes files gets its fresh directory: under its `dir` option, or the
    /// temporary directory. `None` for a load that writes none.
    pub(crate) fn dir_base(&self) -> Option<PathBuf> {
        match self.entry.work() {
            Work::Threads {
                writes_files: true, ..
            } => Some(match self.options.get("dir") {
                Some(_) => PathBuf::from(self.options.text("dir")),
                None => std::env::temp_dir(),
            }),
            _ => None,
        }
    }
}

impl fmt::Display for Load {
    /// The canonical spec: every option in the order the load declares them, with its resolved
    /// value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let declared = &self.entry.description().options;
        let options = declared
            .iter()
            .filter_map(|o| Some((o.name.as_ref(), self.options.get(&o.name)?)));
        f.write_str(&spec_text(self.name(), options))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(values: &[&str]) -> Result<Vec<String>, String> {
        let values: Vec<String> = values.iter().map(|s| s.to_string()).collect();
        LoadSet::parse_with(&values, &[0, 1, 2, 3])
            .map(|p| p.canonical())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn loads_combine_in_one_list_and_over_repeated_flags() {
        assert_eq!(
            parse(&["cpu:duty=50,io", "net:mbit=1.5"]).unwrap(),
            ["cpu:cpus=0-3:duty=50", "io:mb_per_s=10", "net:mbit=1.5"]
        );
        assert_eq!(
            parse(&["cpu:cpus=0,2-3:duty=50,memory:mb=4:rate=0.5,osadl"]).unwrap(),
            ["cpu:cpus=0,2-3:duty=50", "memory:mb=4:rate=0.5", "osadl"]
        );
        assert_eq!(
            parse(&["hackbench", "command:cmd=sleep 1"]).unwrap(),
            [
                "hackbench:groups=12:loops=1000:datasize=1000",
                "command:cmd=sleep 1"
            ]
        );
    }

    #[test]
    fn canonical_specs_parse_back_to_the_same_load() {
        for value in [
            "cpu:cpus=1,3:duty=7",
            "hackbench:groups=2:loops=10:datasize=64",
            "memory:mb=1:rate=0.25",
            "io:mb_per_s=2:dir=/var/tmp",
            "net:mbit=3",
            "osadl",
            "command:cmd=stress-ng --cpu 1 --timeout 5",
        ] {
            let load = Load::parse(value, &[0, 1, 2, 3]).unwrap();
            assert_eq!(load.to_string(), value);
            assert_eq!(Load::parse(&load.to_string(), &[0, 1, 2, 3]).unwrap(), load);
        }
    }

    #[test]
    fn bad_loads_and_options_are_one_line_naming_what_is_valid() {
        let cases = [
            (
                "fire",
                "unknown load 'fire'; valid loads: cpu, hackbench, memory, io, net, osadl, command",
            ),
            (
                "cpu:speed=3",
                "load 'cpu' has no option 'speed'; valid options: cpus, duty",
            ),
            (
                "cpu:duty=0",
                "load 'cpu': invalid value '0' for option 'duty': expected an integer in 1..=100",
            ),
            (
                "cpu:duty=half",
                "load 'cpu': invalid value 'half' for option 'duty': expected an integer in 1..=100",
            ),
            ("cpu:cpus=9", "load 'cpu': CPU 9 is not online; online CPUs: 0-3"),
            (
                "memory:rate=0",
                "load 'memory': invalid value '0' for option 'rate': expected a number in 0.01..=1000",
            ),
            ("osadl:x=1", "load 'osadl' has no option 'x'; valid options: none"),
            (
                "command",
                "load 'command': needs cmd=COMMAND, e.g. command:cmd=make -j4",
            ),
            ("cpu?", "--load spec 'cpu?': only --setup plugins can be marked optional with '?'"),
            (
                "cpu:duty",
                "--load spec 'cpu:duty': 'duty' is not OPTION=VALUE (':' separates options, so no \
                 value can hold a ':')",
            ),
        ];
        for (value, message) in cases {
            assert_eq!(parse(&[value]).unwrap_err(), message, "{value}");
        }
        assert!(parse(&["cpu:cpus=x"])
            .unwrap_err()
            .starts_with("load 'cpu': invalid value 'x' for option 'cpus'"));
    }
}
