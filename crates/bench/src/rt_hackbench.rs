//! `rt-hackbench`: one execution of rt-tests' `hackbench` per run (Debian package rt-tests),
//! its `Time: X` line the metric.
//!
//! `hackbench -g GROUPS -f FDS -l LOOPS -s DATASIZE [-p|-i] [-T|-P]`: GROUPS groups of FDS
//! senders and FDS receivers, each sender passing LOOPS messages of DATASIZE bytes to every
//! receiver of its group over socketpairs (or pipes, or TCP over loopback with `ipc=inet`),
//! as processes or threads. The defaults are rt-tests' own. hackbench times from when every
//! worker has reported ready, before it writes the start byte, to after it has reaped the last
//! one (gettimeofday, printed in whole milliseconds). vernier's own `hackbench` benchmark does
//! the same work and times the same span in-process; this adapter runs the tool itself, so that
//! its numbers compare with results published from it.

use std::collections::BTreeMap;

use vernier_model::{BenchmarkInfo, MetricInfo, Options};
use vernier_sys::MachineLimits;

use crate::opts::{choice, choice_spec, uint, uint_spec};
use crate::tool::{missing, number, Tool};
use crate::{BenchError, Benchmark, Measurement, RunContext};

const HACKBENCH: Tool = Tool {
    program: "hackbench",
    package: "rt-tests",
};

const NAME: &str = "rt-hackbench";

/// The metric.
pub const TIME: &str = "time";

pub struct RtHackbench;

impl RtHackbench {
    fn args(&self, options: &Options) -> Result<Vec<String>, BenchError> {
        let info = self.info();
        let mut args = Vec::new();
        for (name, flag) in [
            ("groups", "-g"),
            ("fds", "-f"),
            ("loops", "-l"),
            ("datasize", "-s"),
        ] {
            args.extend([flag.to_string(), uint(&info, options, name)?.to_string()]);
        }
        match choice(&info, options, "ipc")? {
            1 => args.push("-p".into()),
            2 => args.push("-i".into()),
            _ => {}
        }
        args.push(
            match choice(&info, options, "tasks")? {
                1 => "-T",
                _ => "-P",
            }
            .into(),
        );
        Ok(args)
    }
}

impl Benchmark for RtHackbench {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            NAME,
            "1",
            "rt-tests hackbench (package rt-tests): its reported time",
            MetricInfo::lower(TIME, "s"),
        )
        .with_options(vec![
            uint_spec(
                "groups",
                10,
                1,
                10_000,
                "",
                "groups of senders and receivers (-g)",
            ),
            uint_spec(
                "fds",
                20,
                1,
                1000,
                "",
                "senders and receivers per group (-f)",
            ),
            uint_spec("loops", 100, 1, 100_000_000, "", "messages per sender (-l)"),
            uint_spec("datasize", 100, 1, 1 << 20, "bytes", "message size (-s)"),
            choice_spec(
                "ipc",
                &["socket", "pipe", "inet"],
                "socketpairs, pipes (-p) or TCP over loopback (-i)",
            ),
            choice_spec(
                "tasks",
                &["process", "thread"],
                "processes (-P) or threads (-T)",
            ),
        ])
    }

    fn tools(&self, _options: &Options) -> Vec<&'static str> {
        vec![HACKBENCH.program]
    }

    fn check_options(&self, _options: &Options) -> Result<(), BenchError> {
        HACKBENCH.find(NAME)?;
        Ok(())
    }

    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        let info = self.info();
        let tasks = uint(&info, options, "groups")?
            .saturating_mul(uint(&info, options, "fds")?)
            .saturating_mul(2);
        // The run's process and hackbench's main task.
        limits.check_tasks(tasks.saturating_add(2))?;
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let output = HACKBENCH.run(NAME, &self.args(options)?)?;
        Ok(Measurement {
            values: parse_hackbench(&output)?,
            histograms: Vec::new(),
        })
    }
}

/// The time hackbench reports, in seconds, from its `Time: X` line.
pub fn parse_hackbench(output: &str) -> Result<BTreeMap<String, f64>, BenchError> {
    let text = output
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("Time:"))
        .ok_or_else(|| missing("hackbench", "'Time: N' line", output))?;
    let mut values = BTreeMap::new();
    values.insert(TIME.to_string(), number("hackbench", "its time", text)?);
    Ok(values)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::resolve_options;

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap()
    }

    /// Captured from rt-tests' hackbench V 2.40 on Debian 12.
    #[test]
    fn parses_real_output() {
        assert_eq!(
            parse_hackbench(&fixture("rt-hackbench.txt")).unwrap()[TIME],
            0.260
        );
        assert_eq!(
            parse_hackbench(&fixture("rt-hackbench-thread-pipe.txt")).unwrap()[TIME],
            0.187
        );
    }

    #[test]
    fn malformed_output_is_a_clear_error() {
        let e = |text: &str| parse_hackbench(text).unwrap_err().to_string();
        assert_eq!(
            e("Running in process mode\n"),
            "cannot read hackbench's output: no 'Time: N' line (its last line: Running in \
             process mode)"
        );
        assert_eq!(
            e("Time: soon\n"),
            "hackbench printed 'soon' as its time, which is not a finite number"
        );
    }

    #[test]
    fn builds_hackbench_arguments() {
        let args = |o: &[(&str, &str)]| {
            let options = resolve_options(&RtHackbench.info(), o).unwrap();
            RtHackbench.args(&options).unwrap().join(" ")
        };
        assert_eq!(args(&[]), "-g 10 -f 20 -l 100 -s 100 -P");
        assert_eq!(
            args(&[("groups", "1"), ("ipc", "pipe"), ("tasks", "thread")]),
            "-g 1 -f 20 -l 100 -s 100 -p -T"
        );
        assert_eq!(args(&[("ipc", "inet")]), "-g 10 -f 20 -l 100 -s 100 -i -P");
    }
}
