//! The loads, their typed options and their canonical specs.
//!
//! `--load` takes a list in the spec grammar (`vernier_model::spec`): `cpu:duty=50,io` is two
//! loads, `cpu:cpus=0,2-3:duty=50` one (a piece after a comma that starts with a digit continues
//! a list value). A `command`'s `cmd` therefore cannot hold `:` or a `,` followed by a letter;
//! put such a command in a script. `--load` may be repeated; the loads add up.
//!
//! The canonical spec of a load names every option with its resolved value in a fixed order
//! (`cpu:cpus=0-3:duty=50`), so that the same load reads the same in every session and compare
//! can match configurations on it.

use std::fmt;
use std::path::PathBuf;

use vernier_model::options::OptionError;
use vernier_model::spec::{parse_spec, parse_spec_list, Spec, SpecError};
use vernier_model::{OptionDefault, OptionKind, OptionSpec, OptionValue};

/// One load with its options resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// Busy loops at normal priority, one thread pinned to each CPU, busy for `duty` percent
    /// of every [`CPU_PERIOD_MS`].
    Cpu { cpus: Vec<usize>, duty: u64 },
    /// vernier's hackbench (rt-tests semantics) in process mode over sockets, restarted when it
    /// ends, as rteval's hackbench load runs `hackbench -P -g G -l 1000 -s 1000` (G = 3 x the
    /// CPUs; rteval/modules/loads/hackbench.py).
    Hackbench {
        groups: u64,
        loops: u64,
        datasize: u64,
    },
    /// `rate` bursts per second, each allocating `mb` MiB, writing every byte and copying it
    /// into a second allocation, then freeing both.
    Memory { mb: u64, rate: f64 },
    /// Every second, `mb_per_s` MiB written to a file and fsync(2)ed, then the file truncated,
    /// in a fresh directory under `dir` (default: the temporary directory) removed afterwards.
    Io { mb_per_s: f64, dir: Option<PathBuf> },
    /// Every 100 ms, a tenth of `mbit` megabits sent over one TCP connection on 127.0.0.1 and
    /// read on the other side.
    Net { mbit: f64 },
    /// The OSADL QA Farm's load mix (RESEARCH.md 1.5): about 1 MB/s of memory allocation,
    /// 1 MB/s of file I/O and 1 Mbit/s of network traffic, in bursts at low average CPU.
    Osadl,
    /// `sh -c cmd`, restarted when it exits, killed with its process group at the end.
    Command { cmd: String },
}

/// Length of one busy-and-sleep period of the `cpu` load.
pub const CPU_PERIOD_MS: u64 = 100;

/// A load's name, what it does and its options, for help and errors.
#[derive(Debug, Clone)]
pub struct LoadInfo {
    pub name: &'static str,
    pub help: &'static str,
    pub options: fn() -> Vec<OptionSpec>,
}

fn option(
    name: &'static str,
    kind: OptionKind,
    default: OptionValue,
    unit: &'static str,
    help: &'static str,
) -> OptionSpec {
    OptionSpec {
        name,
        kind,
        default: OptionDefault::Value(default),
        unit,
        help,
    }
}

fn cpu_options() -> Vec<OptionSpec> {
    vec![
        OptionSpec {
            name: "cpus",
            kind: OptionKind::Text,
            default: OptionDefault::OnlineCpus,
            unit: "",
            help: "CPU list, e.g. 0,2-3 (default: every online CPU)",
        },
        option(
            "duty",
            OptionKind::UInt { min: 1, max: 100 },
            OptionValue::UInt(100),
            "%",
            "busy share of every 100 ms period",
        ),
    ]
}

fn hackbench_options() -> Vec<OptionSpec> {
    vec![
        OptionSpec {
            name: "groups",
            kind: OptionKind::UInt { min: 1, max: 1000 },
            default: OptionDefault::OnlineCpus,
            unit: "",
            help: "groups of 20 senders and 20 receivers (default: 3 x the online CPUs)",
        },
        option(
            "loops",
            OptionKind::UInt {
                min: 1,
                max: u64::MAX,
            },
            OptionValue::UInt(1000),
            "",
            "messages each sender sends to each receiver",
        ),
        option(
            "datasize",
            OptionKind::UInt {
                min: 1,
                max: 1_000_000,
            },
            OptionValue::UInt(1000),
            "bytes",
            "size of one message",
        ),
    ]
}

fn memory_options() -> Vec<OptionSpec> {
    vec![
        option(
            "mb",
            OptionKind::UInt { min: 1, max: 65536 },
            OptionValue::UInt(32),
            "MiB",
            "allocated, written and copied per burst",
        ),
        option(
            "rate",
            OptionKind::Float {
                min: 0.01,
                max: 1000.0,
            },
            OptionValue::Float(2.0),
            "per second",
            "bursts",
        ),
    ]
}

fn io_options() -> Vec<OptionSpec> {
    vec![
        option(
            "mb_per_s",
            OptionKind::Float {
                min: 0.01,
                max: 100_000.0,
            },
            OptionValue::Float(10.0),
            "MiB/s",
            "written and fsynced every second",
        ),
        OptionSpec {
            name: "dir",
            kind: OptionKind::Text,
            default: OptionDefault::Value(OptionValue::Text(String::new())),
            unit: "",
            help: "directory to write in, on the file system to load (default: $TMPDIR or /tmp)",
        },
    ]
}

fn net_options() -> Vec<OptionSpec> {
    vec![option(
        "mbit",
        OptionKind::Float {
            min: 0.01,
            max: 100_000.0,
        },
        OptionValue::Float(100.0),
        "Mbit/s",
        "sent over TCP on 127.0.0.1",
    )]
}

fn command_options() -> Vec<OptionSpec> {
    vec![OptionSpec {
        name: "cmd",
        kind: OptionKind::Text,
        default: OptionDefault::Value(OptionValue::Text(String::new())),
        unit: "",
        help: "the command, run by sh -c (required; no ':' in it)",
    }]
}

/// Every load, in the order help lists them.
pub const LOADS: &[LoadInfo] = &[
    LoadInfo {
        name: "cpu",
        help: "busy loops at normal priority, one per CPU",
        options: cpu_options,
    },
    LoadInfo {
        name: "hackbench",
        help: "hackbench in process mode, restarted when it ends (as rteval)",
        options: hackbench_options,
    },
    LoadInfo {
        name: "memory",
        help: "allocation and copy bursts",
        options: memory_options,
    },
    LoadInfo {
        name: "io",
        help: "file writes with fsync bursts in a temporary directory",
        options: io_options,
    },
    LoadInfo {
        name: "net",
        help: "TCP bursts over 127.0.0.1",
        options: net_options,
    },
    LoadInfo {
        name: "osadl",
        help: "the OSADL QA Farm's mix: 1 MB/s memory, 1 MB/s I/O, 1 Mbit/s network",
        options: Vec::new,
    },
    LoadInfo {
        name: "command",
        help: "any program (sh -c), restarted when it exits",
        options: command_options,
    },
];

/// Why `--load` is not valid, or a load could not start or run; one line each.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("--load {0}")]
    Spec(#[from] SpecError),
    #[error("unknown load '{name}'; valid loads: {valid}")]
    Unknown { name: String, valid: String },
    #[error("load '{load}' has no option '{option}'; valid options: {valid}")]
    UnknownOption {
        load: String,
        option: String,
        valid: String,
    },
    #[error("load '{load}': {source}")]
    Option {
        load: String,
        #[source]
        source: OptionError,
    },
    #[error("load '{load}': {problem}")]
    Invalid { load: String, problem: String },
    #[error("load '{load}' did not start: {reason}")]
    Start { load: String, reason: String },
}

fn valid_loads() -> String {
    LOADS.iter().map(|l| l.name).collect::<Vec<_>>().join(", ")
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
    pub fn name(&self) -> &'static str {
        match self {
            Load::Cpu { .. } => "cpu",
            Load::Hackbench { .. } => "hackbench",
            Load::Memory { .. } => "memory",
            Load::Io { .. } => "io",
            Load::Net { .. } => "net",
            Load::Osadl => "osadl",
            Load::Command { .. } => "command",
        }
    }

    /// Parses one load's canonical or written spec on its own (every comma in a value is a
    /// list separator), as the supervisor reads its argument.
    pub fn parse(text: &str, online: &[usize]) -> Result<Load, LoadError> {
        Load::from_spec(&parse_spec(text)?, online)
    }

    /// Checks a parsed spec: the name, every option against the load's options and their
    /// types, the CPUs against the online ones.
    pub fn from_spec(spec: &Spec, online: &[usize]) -> Result<Load, LoadError> {
        spec.not_optional()?;
        let info =
            LOADS
                .iter()
                .find(|l| l.name == spec.name)
                .ok_or_else(|| LoadError::Unknown {
                    name: spec.name.clone(),
                    valid: valid_loads(),
                })?;
        let options = (info.options)();
        for (key, _) in &spec.options {
            if !options.iter().any(|o| o.name == key) {
                let valid = if options.is_empty() {
                    "none".to_string()
                } else {
                    options
                        .iter()
                        .map(|o| o.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(LoadError::UnknownOption {
                    load: info.name.to_string(),
                    option: key.clone(),
                    valid,
                });
            }
        }
        let load = info.name.to_string();
        let invalid = |problem: String| LoadError::Invalid {
            load: load.clone(),
            problem,
        };
        // The value given, parsed and range-checked, or None for the default.
        let given = |name: &str| -> Result<Option<OptionValue>, LoadError> {
            let Some(text) = spec.option(name) else {
                return Ok(None);
            };
            let Some(o) = options.iter().find(|o| o.name == name) else {
                return Ok(None);
            };
            o.parse(text).map(Some).map_err(|source| LoadError::Option {
                load: load.clone(),
                source,
            })
        };
        let default = |name: &str| {
            options
                .iter()
                .find(|o| o.name == name)
                .map(|o| o.default_value(online.len() as u32))
        };
        let uint = |name: &str| -> Result<u64, LoadError> {
            match given(name)?.or_else(|| default(name)) {
                Some(OptionValue::UInt(v)) => Ok(v),
                _ => Err(invalid(format!("option '{name}' has no value"))),
            }
        };
        let float = |name: &str| -> Result<f64, LoadError> {
            match given(name)?.or_else(|| default(name)) {
                Some(OptionValue::Float(v)) => Ok(v),
                Some(OptionValue::UInt(v)) => Ok(v as f64),
                _ => Err(invalid(format!("option '{name}' has no value"))),
            }
        };
        let text = |name: &str| -> Result<Option<String>, LoadError> {
            Ok(match given(name)? {
                Some(OptionValue::Text(t)) => Some(t),
                _ => None,
            })
        };
        Ok(match info.name {
            "cpu" => {
                let cpus = match spec.option("cpus") {
                    None => online.to_vec(),
                    Some(list) => {
                        let cpus = vernier_sys::cpulist::parse_cpu_list(list).map_err(|e| {
                            invalid(format!(
                                "invalid value '{list}' for option 'cpus': {e}; expected a CPU \
                                 list such as 0,2-3"
                            ))
                        })?;
                        if cpus.is_empty() {
                            return Err(invalid("option 'cpus' names no CPU".into()));
                        }
                        if let Some(cpu) = cpus.iter().find(|c| !online.contains(c)) {
                            return Err(invalid(format!(
                                "CPU {cpu} is not online; online CPUs: {}",
                                cpu_list(online)
                            )));
                        }
                        cpus
                    }
                };
                Load::Cpu {
                    cpus,
                    duty: uint("duty")?,
                }
            }
            "hackbench" => Load::Hackbench {
                groups: match given("groups")? {
                    Some(OptionValue::UInt(v)) => v,
                    _ => 3 * (online.len().max(1) as u64),
                },
                loops: uint("loops")?,
                datasize: uint("datasize")?,
            },
            "memory" => Load::Memory {
                mb: uint("mb")?,
                rate: float("rate")?,
            },
            "io" => Load::Io {
                mb_per_s: float("mb_per_s")?,
                dir: text("dir")?.map(PathBuf::from),
            },
            "net" => Load::Net {
                mbit: float("mbit")?,
            },
            "osadl" => Load::Osadl,
            _ => Load::Command {
                cmd: text("cmd")?.ok_or_else(|| {
                    invalid("needs cmd=COMMAND, e.g. command:cmd=make -j4".into())
                })?,
            },
        })
    }

    /// Whether the load writes files (and gets a temporary directory).
    pub(crate) fn needs_dir(&self) -> bool {
        matches!(self, Load::Io { .. } | Load::Osadl)
    }
}

/// A CPU list in the kernel's format, ranges joined: `0-3,8`.
pub(crate) fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// A number as a spec writes it: no trailing `.0`.
fn number(v: f64) -> String {
    format!("{v}")
}

impl fmt::Display for Load {
    /// The canonical spec: every option in a fixed order with its resolved value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Load::Cpu { cpus, duty } => write!(f, "cpu:cpus={}:duty={duty}", cpu_list(cpus)),
            Load::Hackbench {
                groups,
                loops,
                datasize,
            } => write!(
                f,
                "hackbench:groups={groups}:loops={loops}:datasize={datasize}"
            ),
            Load::Memory { mb, rate } => write!(f, "memory:mb={mb}:rate={}", number(*rate)),
            Load::Io { mb_per_s, dir } => {
                write!(f, "io:mb_per_s={}", number(*mb_per_s))?;
                match dir {
                    Some(dir) => write!(f, ":dir={}", dir.display()),
                    None => Ok(()),
                }
            }
            Load::Net { mbit } => write!(f, "net:mbit={}", number(*mbit)),
            Load::Osadl => f.write_str("osadl"),
            Load::Command { cmd } => write!(f, "command:cmd={cmd}"),
        }
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

    #[test]
    fn cpu_lists_join_ranges() {
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(cpu_list(&[3]), "3");
        assert_eq!(cpu_list(&[]), "");
    }
}
