//! The built-in monitors, one file each: its registry entry (the [`Description`] `--monitor`,
//! `list -v` and `--help` show, whether the default set has it, how it is made from its
//! options) next to the type that reads its interface through the parsers of
//! [`crate::procfs`] (/proc/meminfo through [`vernier_sys::meminfo`]) into a buffer it keeps
//! between samples.
//!
//! Adding a monitor: its file here, with an `entry()`, and its line in [`registry`].

mod cpufreq;
mod cpuidle;
mod interrupts;
mod meminfo;
mod perf;
mod pressure;
mod schedstat;
mod slab;
mod softirqs;
mod stat;
mod vmstat;

use std::sync::LazyLock;

use vernier_model::{
    Describe, Description, Kind, OptionDefault, OptionKind, OptionSpec, OptionValue, Options,
    Registry,
};
use vernier_sys::Roots;

pub use cpufreq::CpufreqMonitor;
pub use cpuidle::{idle_state_key, CpuidleMonitor};
pub use interrupts::InterruptsMonitor;
pub use meminfo::{MeminfoMonitor, MEMINFO_FIELDS};
pub use perf::PerfMonitor;
pub use pressure::{PressureMonitor, PSI_RESOURCES};
pub use schedstat::SchedstatMonitor;
pub use slab::SlabMonitor;
pub use softirqs::SoftirqsMonitor;
pub use stat::StatMonitor;
pub use vmstat::{vmstat_selected, VmstatMonitor};

use crate::{Monitor, MonitorError, Reader};

/// Every monitor, in the order help lists them. Each takes [`INTERVAL`] besides its own
/// options; `default`, `all` and `none` name sets of them ([`crate::parse_monitor_list`]).
pub fn registry() -> &'static Registry<Entry> {
    static REGISTRY: LazyLock<Registry<Entry>> = LazyLock::new(|| {
        Registry::new(
            Kind::Monitor,
            vec![
                stat::entry(),
                meminfo::entry(),
                vmstat::entry(),
                schedstat::entry(),
                pressure::entry(),
                interrupts::entry(),
                softirqs::entry(),
                slab::entry(),
                perf::entry(),
                cpufreq::entry(),
                cpuidle::entry(),
            ],
        )
        .with_shared_options(vec![interval_option()])
        .with_groups(&[
            (DEFAULT, "the default set"),
            (ALL, "every monitor"),
            (NONE, "no monitor"),
        ])
    });
    &REGISTRY
}

/// The group of the default monitors.
pub const DEFAULT: &str = "default";
/// The group of every monitor.
pub const ALL: &str = "all";
/// No monitor.
pub const NONE: &str = "none";

/// A monitor of the registry: what it says about itself, whether the default set samples it,
/// and how it is made from its resolved options.
pub struct Entry {
    description: Description,
    default: bool,
    build: fn(&Options, &Roots) -> Box<dyn Monitor>,
}

impl Entry {
    fn new(
        description: Description,
        default: bool,
        build: fn(&Options, &Roots) -> Box<dyn Monitor>,
    ) -> Self {
        Entry {
            description,
            default,
            build,
        }
    }

    /// Whether the default set (no `--monitor`, or `default`) samples it.
    pub fn in_default_set(&self) -> bool {
        self.default
    }

    /// The working monitor of `options` (resolved by [`Registry::resolve`]) reading the machine
    /// at `roots`.
    pub fn build(&self, options: &Options, roots: &Roots) -> Box<dyn Monitor> {
        (self.build)(options, roots)
    }
}

impl Describe for Entry {
    fn description(&self) -> &Description {
        &self.description
    }
}

/// The option every monitor takes: seconds between samples.
pub const INTERVAL: &str = "interval";
/// Default sampling interval.
pub const DEFAULT_INTERVAL_S: f64 = 1.0;
/// Shortest interval accepted: shorter ones cost the controller more than they tell.
pub const MIN_INTERVAL_S: f64 = 0.01;

fn interval_option() -> OptionSpec {
    OptionSpec::new(
        INTERVAL,
        OptionKind::Float {
            min: MIN_INTERVAL_S,
            max: 3600.0,
        },
        OptionDefault::Value(OptionValue::Float(DEFAULT_INTERVAL_S)),
    )
    .unit("s")
    .help("time between samples, rounded to whole milliseconds")
}

/// The option of the monitors that keep only the series that moved most.
const TOP: &str = "top";
/// Default number of top movers kept by `interrupts` and `slab`.
pub const DEFAULT_TOP: u64 = 5;

fn top_option() -> OptionSpec {
    OptionSpec::new(
        TOP,
        OptionKind::UInt {
            min: 1,
            max: 1 << 20,
        },
        OptionDefault::Value(OptionValue::UInt(DEFAULT_TOP)),
    )
    .help("series kept, the top movers")
}

/// The `top` of resolved options.
fn top(options: &Options) -> usize {
    usize::try_from(options.uint(TOP)).unwrap_or(usize::MAX)
}

/// Reads `path` with `reader` (see [`Reader`]) and parses it, mapping parse errors to the path.
fn load<'b, T>(
    path: &std::path::Path,
    reader: &'b mut Reader,
    parse: impl FnOnce(&'b str) -> Result<T, String>,
) -> Result<T, MonitorError> {
    let text = reader.read(path)?;
    parse(text).map_err(|e| MonitorError::parse(path, e))
}

fn buffer() -> Reader {
    Reader::new(16 * 1024)
}

/// What the tests of the monitors share.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;

    use crate::{Monitor, Reading};

    /// Starts `m` and takes one sample.
    pub(crate) fn sample_once(m: &mut dyn Monitor) -> Vec<Reading> {
        #[allow(clippy::unwrap_used)]
        m.start(0).unwrap();
        let mut out = Vec::new();
        #[allow(clippy::unwrap_used)]
        m.sample(&mut out).unwrap();
        out
    }

    /// The reading of `metric`.
    pub(crate) fn get<'a>(r: &'a [Reading], metric: &str) -> &'a Reading {
        r.iter()
            .find(|x| &*x.metric == metric)
            .unwrap_or_else(|| panic!("no {metric} in {r:?}"))
    }

    /// The fixture tree `name` of `tests/fixtures`.
    pub(crate) fn fixture(name: &str) -> vernier_sys::Roots {
        vernier_sys::Roots::under(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures")
                .join(name),
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_monitor_names_itself_as_registered_with_its_default_options() {
        let roots = Roots::real();
        let names = registry().names();
        assert_eq!(names.len(), registry().iter().count());
        for entry in registry().iter() {
            let options = registry().resolve(entry, [], 1).unwrap();
            let monitor = entry.build(&options, &roots);
            assert_eq!(monitor.name(), entry.description().name);
        }
    }
}
