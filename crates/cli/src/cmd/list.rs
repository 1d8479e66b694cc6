//! `vernier list`: benchmarks, suites, setup plugins, monitors and loads, every kind of plugin
//! listed by the same code from its registry; also the long help of the options that name them.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Result;
use vernier_bench::Benchmark as _;
use vernier_engine::suite::{
    builtin_suites, read_suite_file, user_suite_files, Suite, SuiteSource,
};
use vernier_model::plugin::OtherOptions;
use vernier_model::{BenchmarkInfo, Describe, Description, OptionDefault, OptionSpec, Registry};

use crate::cli::ListArgs;
use crate::out::{out, outln, printable};

pub fn list(args: ListArgs) -> Result<ExitCode> {
    let online = vernier_sys::cpulist::online_cpus().len() as u32;
    outln!("Benchmarks:");
    let mut listing = Listing::new(BENCHMARK_WIDTH, args.verbose, online);
    let builtins = vernier_bench::builtins();
    for b in builtins.listed() {
        listing.benchmark(b.info(), "");
    }
    let mut unusable = Vec::new();
    if let Some(dir) = vernier_app::config::benchmark_dir() {
        let mine = vernier_bench::user::names(&dir);
        // A benchmark of the user's own named as a built-in is not used.
        let shadowed = |name: &str| builtins.get(name).is_some();
        // Every one of the user's own is described, all at the same time.
        let described: Vec<&str> = mine
            .iter()
            .map(String::as_str)
            .filter(|name| !shadowed(name))
            .collect();
        let mut loaded: std::collections::BTreeMap<String, _> =
            vernier_bench::user::load_all(&dir, &described)
                .into_iter()
                .collect();
        for name in &mine {
            if shadowed(name) {
                unusable.push(format!(
                    "  {name:<BENCHMARK_WIDTH$} (yours is not used: the built-in benchmark of this \
                     name wins)"
                ));
                continue;
            }
            match loaded.remove(name).flatten() {
                Some(Ok(b)) => {
                    let origin = format!(" ({})", printable(&b.path().display().to_string()));
                    listing.benchmark(&b.info(), &origin);
                }
                Some(Err(e)) => unusable.push(format!(
                    "  {name:<BENCHMARK_WIDTH$} unusable: {}",
                    printable(&e)
                )),
                None => {}
            }
        }
    }
    out!("{}", listing.text);
    for line in unusable {
        outln!("{line}");
    }
    outln!("\nSuites (--suite NAME, or a path to a .toml file):");
    for s in builtin_suites() {
        list_suite(&s, args.verbose)?;
    }
    if let Some(dir) = vernier_app::config::suite_dir() {
        let builtin: Vec<String> = builtin_suites().into_iter().map(|s| s.name).collect();
        for (name, path) in user_suite_files(&dir) {
            if builtin.contains(&name) {
                outln!(
                    "  {name:<10} {} is not used: the built-in suite of this name wins",
                    path.display()
                );
                continue;
            }
            match read_suite_file(&path) {
                Ok(suite) => list_suite(&suite, args.verbose)?,
                Err(e) => outln!("  {name:<10} unusable: {e}"),
            }
        }
    }
    outln!("\nSetup plugins (--setup NAME[?][:OPTION=VALUE]...):");
    out!("{}", setup_text(args.verbose));
    outln!("\nMonitors (--monitor NAME[:OPTION=VALUE]...,...):");
    out!("{}", monitor_text(args.verbose));
    outln!("\nLoads (--load NAME[:OPTION=VALUE]...,...):");
    out!("{}", load_text(args.verbose));
    Ok(ExitCode::SUCCESS)
}

/// One suite: its name and description, with `verbose` what it runs and sets.
fn list_suite(suite: &Suite, verbose: bool) -> Result<()> {
    let origin = match &suite.source {
        SuiteSource::Builtin => String::new(),
        SuiteSource::File(path) => format!(" ({})", path.display()),
    };
    outln!("  {:<10} {}{origin}", suite.name, suite.description);
    if !verbose {
        return Ok(());
    }
    for spec in &suite.specs {
        outln!("             {spec}");
    }
    let s = &suite.settings;
    let settings: Vec<String> = [
        s.warmup.map(|v| format!("--warmup {v}")),
        s.target.map(|v| format!("--target {v}")),
        s.min_runs.map(|v| format!("--min-runs {v}")),
        s.max_runs.map(|v| format!("--max-runs {v}")),
        s.min_time_s.map(|v| format!("--min-time {v}")),
        s.max_time_s.map(|v| format!("--max-time {v}")),
        s.run_timeout_s.map(|v| format!("--run-timeout {v}")),
        s.interleave.map(|i| {
            if i {
                "--interleave".to_string()
            } else {
                "--no-interleave".to_string()
            }
        }),
        s.seed.map(|v| format!("--seed {v}")),
    ]
    .into_iter()
    .flatten()
    .chain(suite.monitors.iter().map(|m| format!("--monitor {m}")))
    .chain(suite.setup.iter().map(|m| format!("--setup {m}")))
    .chain(suite.loads.iter().map(|m| format!("--load {m}")))
    .chain(suite.tags.iter().map(|(k, v)| format!("--tag {k}={v}")))
    .collect();
    if !settings.is_empty() {
        outln!("             ({} unless given)", settings.join(" "));
    }
    Ok(())
}

/// The column of a benchmark's name (and a suite's).
const BENCHMARK_WIDTH: usize = 10;
/// The column of the name of a setup plugin, monitor or load.
const PLUGIN_WIDTH: usize = 12;

/// The built-in benchmarks, one per line (the long help of `run`'s SPEC).
pub fn benchmark_text() -> String {
    let mut listing = Listing::new(BENCHMARK_WIDTH, false, 1);
    for b in vernier_bench::builtins().listed() {
        listing.benchmark(b.info(), "");
    }
    listing.text
}

/// The setup plugins, one per line, each with its options when `verbose`; also the long help of
/// `--setup`.
pub fn setup_text(verbose: bool) -> String {
    registry_text(vernier_setup::registry(), verbose, |_| "")
}

/// The monitors, one per line, each with its options when `verbose`; also the long help of
/// `--monitor`.
pub fn monitor_text(verbose: bool) -> String {
    registry_text(vernier_monitor::registry(), verbose, |m| {
        if m.in_default_set() {
            ""
        } else {
            " (not in default)"
        }
    })
}

/// The loads, one per line, each with its options when `verbose`; also the long help of
/// `--load`.
pub fn load_text(verbose: bool) -> String {
    registry_text(vernier_load::registry(), verbose, |_| "")
}

/// The plugins of `registry`, one per line with `note` after its summary, each with its
/// options when `verbose`; then the options every one of them takes and the words that name
/// several.
fn registry_text<T: Describe>(
    registry: &Registry<T>,
    verbose: bool,
    note: impl Fn(&T) -> &'static str,
) -> String {
    let online = vernier_sys::cpulist::online_cpus().len() as u32;
    let mut listing = Listing::new(PLUGIN_WIDTH, verbose, online);
    for entry in registry.listed() {
        listing.plugin(entry.description(), note(entry), &[]);
    }
    if verbose && !registry.shared_options().is_empty() {
        let _ = writeln!(listing.text, "  every {} takes:", registry.kind());
        listing.options(registry.shared_options(), None);
    }
    if !registry.groups().is_empty() {
        let (words, meanings): (Vec<&str>, Vec<&str>) = registry.groups().iter().copied().unzip();
        let _ = writeln!(
            listing.text,
            "  {}: {}",
            words.join(", "),
            meanings.join(", ")
        );
    }
    listing.text
}

/// Plugins listed the one way `list` and `--help` show every kind: a line each, and with
/// `verbose` their options, each with what it means, its default (resolved on this machine),
/// its unit and its valid values.
struct Listing {
    /// The column of the names.
    width: usize,
    verbose: bool,
    online_cpus: u32,
    text: String,
}

impl Listing {
    fn new(width: usize, verbose: bool, online_cpus: u32) -> Self {
        Listing {
            width,
            verbose,
            online_cpus,
            text: String::new(),
        }
    }

    /// A benchmark, with `origin` after its summary, and with `verbose` its version and
    /// metric.
    fn benchmark(&mut self, b: &BenchmarkInfo, origin: &str) {
        let direction = if b.metric().higher_is_better {
            "higher is better"
        } else {
            "lower is better"
        };
        let details = [format!(
            "version {}; metric {} in {} ({direction})",
            b.version(),
            b.metric().name,
            b.metric().unit
        )];
        self.plugin(b.description(), origin, &details);
    }

    /// A plugin's line, `note` after its summary, and with `verbose` the `details` lines and
    /// its options.
    fn plugin(&mut self, d: &Description, note: &str, details: &[String]) {
        let width = self.width;
        let _ = writeln!(self.text, "  {:<width$} {}{note}", d.name, d.summary);
        if self.verbose {
            for line in details {
                let _ = writeln!(self.text, "{}{line}", self.indent());
            }
            self.options(&d.options, d.other_options.as_ref());
        }
    }

    /// Options, one per line, and what the other options are.
    fn options(&mut self, options: &[OptionSpec], other: Option<&OtherOptions>) {
        let indent = self.indent();
        // The help texts start in one column: after the longest option name, at least 10 wide,
        // and at most 32 (a benchmark of the user's own may name an option at any length, and a
        // width beyond 65,535 makes `format!` panic); a longer name runs into its help.
        let width = options
            .iter()
            .map(|o| o.name.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(10, 32);
        for o in options {
            let unit = if o.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", o.unit)
            };
            let default = match (&o.default, o.default_value(self.online_cpus)) {
                (OptionDefault::Required, _) => "required".to_string(),
                (OptionDefault::Unset(what), _) => format!("default {what}"),
                (_, Some(resolved)) if o.default_label() != resolved.to_string() => {
                    format!("default {}, here {resolved}{unit}", o.default_label())
                }
                (_, _) if o.default_label().is_empty() => String::new(),
                (_, _) => format!("default {}{unit}", o.default_label()),
            };
            let default = if default.is_empty() {
                default
            } else {
                format!("{default}; ")
            };
            let _ = writeln!(
                self.text,
                "{indent}{:<width$} {} ({default}{})",
                o.name,
                o.help,
                o.kind.describe()
            );
        }
        if let Some(other) = other {
            let _ = writeln!(self.text, "{indent}{:<width$} {}", "NAME", other.help);
        }
    }

    /// Where the lines under a plugin's start: under its summary.
    fn indent(&self) -> String {
        " ".repeat(self.width + 3)
    }
}
