//! `vernier list`: benchmarks and suites.

use std::process::ExitCode;

use anyhow::Result;
use vernier_engine::suite::suites;

use crate::cli::ListArgs;
use crate::out::outln;

pub fn list(args: ListArgs) -> Result<ExitCode> {
    let online = vernier_sys::cpulist::online_cpus().len() as u32;
    outln!("Benchmarks:");
    for b in vernier_bench::all()
        .iter()
        .map(|b| b.info())
        .filter(|i| !i.hidden)
    {
        let direction = if b.metric.higher_is_better {
            "higher is better"
        } else {
            "lower is better"
        };
        outln!("  {:<10} {}", b.name, b.description);
        if args.verbose {
            outln!(
                "             version {}; metric {} in {} ({direction})",
                b.version,
                b.metric.name,
                b.metric.unit
            );
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
                outln!(
                    "             {:<10} {} (default {default}{unit}; {})",
                    o.name,
                    o.help,
                    o.kind.describe()
                );
            }
        }
    }
    outln!("\nSuites:");
    for s in suites() {
        outln!("  {:<10} {}", s.name, s.description);
        if args.verbose {
            for spec in s.specs {
                outln!("             {spec}");
            }
            if let Some(t) = s.max_time_s {
                outln!("             (--max-time {t} s unless given)");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
