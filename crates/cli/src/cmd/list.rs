//! `vernier list`: benchmarks, suites, setup plugins and monitors.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Result;
use vernier_bench::Benchmark as _;
use vernier_engine::suite::{
    builtin_suites, read_suite_file, user_suite_files, Suite, SuiteSource,
};

use crate::cli::ListArgs;
use crate::out::{out, outln, printable};

pub fn list(args: ListArgs) -> Result<ExitCode> {
    let online = vernier_sys::cpulist::online_cpus().len() as u32;
    outln!("Benchmarks:");
    let builtin: Vec<_> = vernier_bench::all()
        .iter()
        .map(|b| b.info())
        .filter(|i| !i.hidden)
        .collect();
    let mut listed: Vec<(vernier_model::BenchmarkInfo, String)> =
        builtin.into_iter().map(|b| (b, String::new())).collect();
    let mut unusable = Vec::new();
    let mine = vernier_bench::user::names();
    // The built-ins' names: a benchmark of the user's own of one of them is not used.
    let builtin_names: Vec<&'static str> = listed.iter().map(|(b, _)| b.name).collect();
    let shadowed = |name: &str| builtin_names.contains(&name);
    // Every one of the user's own is described, all at the same time.
    let described: Vec<&str> = mine
        .iter()
        .map(String::as_str)
        .filter(|name| !shadowed(name))
        .collect();
    let mut loaded: std::collections::BTreeMap<String, _> =
        vernier_bench::user::load_all(&described)
            .into_iter()
            .collect();
    for name in &mine {
        if shadowed(name) {
            unusable.push(format!(
                "  {name:<10} (yours is not used: the built-in benchmark of this name wins)"
            ));
            continue;
        }
        match loaded.remove(name).flatten() {
            Some(Ok(b)) => {
                let origin = format!(" ({})", printable(&b.path().display().to_string()));
                listed.push((b.info(), origin));
            }
            Some(Err(e)) => unusable.push(format!("  {name:<10} unusable: {}", printable(&e))),
            None => {}
        }
    }
    for (b, origin) in &listed {
        let direction = if b.metric.higher_is_better {
            "higher is better"
        } else {
            "lower is better"
        };
        outln!("  {:<10} {}{origin}", b.name, b.description);
        if args.verbose {
            outln!(
                "             version {}; metric {} in {} ({direction})",
                b.version,
                b.metric.name,
                b.metric.unit
            );
            // The help texts start in one column: after the longest option name of this
            // benchmark (sysbench's memory_block_size), at least 10 wide, and at most 32 (a
            // benchmark of the user's own may name an option at any length, and a width
            // beyond 65,535 makes `format!` panic); a longer name runs into its help.
            let width = b
                .options
                .iter()
                .map(|o| o.name.chars().count())
                .max()
                .unwrap_or(0)
                .clamp(10, 32);
            for o in &b.options {
                let unit = if o.unit.is_empty() {
                    String::new()
                } else {
                    format!(" {}", o.unit)
                };
                let default = o.default_label();
                let resolved = o.default_value(online);
                let default = if default == resolved.to_string() {
                    default
                } else {
                    format!("{default}, here {resolved}")
                };
                let default = if default.is_empty() {
                    String::new()
                } else {
                    format!("default {default}{unit}; ")
                };
                outln!(
                    "             {:<width$} {} ({default}{})",
                    o.name,
                    o.help,
                    o.kind.describe()
                );
            }
            if b.parameters {
                outln!(
                    "             {:<width$} any other option NAME=VALUE is a parameter (see above)",
                    "NAME"
                );
            }
        }
    }
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

/// The setup plugins, one per line, each with its options when `verbose`; also the long help of
/// `run --setup`.
pub fn setup_text(verbose: bool) -> String {
    let mut text = String::new();
    for p in vernier_setup::PLUGIN_HELP {
        let _ = writeln!(text, "  {:<12} {}", p.name, p.help);
        if verbose {
            let width = p
                .options
                .iter()
                .map(|(o, _)| o.len())
                .max()
                .unwrap_or(0)
                .max(10);
            for (option, help) in p.options {
                let _ = writeln!(text, "               {option:<width$} {help}");
            }
        }
    }
    text
}

/// The loads, one per line, each with its options when `verbose`; also the long help of
/// `run --load`.
pub fn load_text(verbose: bool) -> String {
    let online = vernier_sys::cpulist::online_cpus().len() as u32;
    let mut text = String::new();
    for l in vernier_load::LOADS {
        let _ = writeln!(text, "  {:<12} {}", l.name, l.help);
        if verbose {
            let options = (l.options)();
            let width = options
                .iter()
                .map(|o| o.name.len())
                .max()
                .unwrap_or(0)
                .max(10);
            for o in options {
                let unit = if o.unit.is_empty() {
                    String::new()
                } else {
                    format!(" {}", o.unit)
                };
                let default = match o.name {
                    // Their defaults are in their help (derived from the online CPUs, or none).
                    "cpus" | "groups" | "dir" | "cmd" => String::new(),
                    _ => format!(" (default {}{unit})", o.default_value(online)),
                };
                let _ = writeln!(
                    text,
                    "               {:<width$} {}{default}",
                    o.name, o.help
                );
            }
        }
    }
    text
}

/// The monitors, one per line, each with its options when `verbose`; also the long help of
/// `run --monitor`.
pub fn monitor_text(verbose: bool) -> String {
    use vernier_monitor::spec::{DEFAULT_INTERVAL_MS, DEFAULT_TOP, MIN_INTERVAL_MS, MONITORS};
    let mut text = String::new();
    for m in MONITORS.iter() {
        let default = if m.default { "" } else { " (not in default)" };
        let _ = writeln!(text, "  {:<12} {}{default}", m.name, m.description);
        if verbose {
            for option in m.options {
                let help = match *option {
                    "top" => format!("series kept, the top movers (default {DEFAULT_TOP})"),
                    "per-cpu" => "on: also each IRQ line per CPU, the top movers per CPU \
                                  (default off)"
                        .to_string(),
                    other => format!("see docs for '{other}'"),
                };
                let _ = writeln!(text, "               {option:<10} {help}");
            }
        }
    }
    if verbose {
        let _ = writeln!(
            text,
            "  every monitor takes interval=SECONDS between samples, at least {} (default {})",
            MIN_INTERVAL_MS as f64 / 1000.0,
            DEFAULT_INTERVAL_MS as f64 / 1000.0
        );
    }
    text.push_str("  default, all, none: the default set, every monitor, no monitor\n");
    text
}
