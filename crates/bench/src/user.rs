//! Benchmarks of the user's own: executables in the user's benchmark directory
//! (`$XDG_CONFIG_HOME/vernier/benchmarks/NAME`) that describe themselves and measure
//! themselves, run by vernier like a built-in (docs/benchmarks.md, "Benchmarks of your own").
//!
//! The protocol: `NAME describe` prints one JSON object ([`Description`]: the options with
//! their types, defaults and valid values, the metrics with their units and directions, the
//! primary metric); `NAME run --OPTION=VALUE ...` (every option, in name order) measures once
//! and prints, as the last line of its standard output, a JSON object of metric -> number. A
//! non-zero exit status fails the run with the last line of its standard error.
//!
//! The directory is the caller's to give (the binary's configuration directory, in the
//! controller and in every run's child); a benchmark is described where it is named, into a
//! [`BenchmarkInfo`] of owned texts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use vernier_model::benchmark::is_parameter_name;
use vernier_model::{
    BenchmarkInfo, MetricInfo, OptionDefault, OptionKind, OptionSpec, OptionValue, Options,
};

use crate::{BenchError, Benchmark, Measurement, RunContext};

/// The names of the executables in the user's benchmark directory `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| is_executable(&e.path()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| is_parameter_name(n))
        .collect();
    names.sort();
    names
}

/// True when `path` is a file someone may execute.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The user benchmark `name` in `dir`: `None` when the directory has no executable of that
/// name, else the benchmark or why its description is unusable (one line, naming the file).
/// Described anew at every call.
pub fn load(dir: &Path, name: &str) -> Option<Result<UserBenchmark, String>> {
    let path = dir.join(name);
    if !is_parameter_name(name) || !is_executable(&path) {
        return None;
    }
    Some(describe(name, &path))
}

/// The user benchmarks `names` in `dir` ([`load`] of each), described at the same time: a slow
/// or hanging `describe` costs its limit once, not once per benchmark. In the order given,
/// each once.
pub fn load_all(
    dir: &Path,
    names: &[&str],
) -> Vec<(String, Option<Result<UserBenchmark, String>>)> {
    let mut unique: Vec<&str> = Vec::new();
    for name in names {
        if !unique.contains(name) {
            unique.push(name);
        }
    }
    std::thread::scope(|scope| {
        let described: Vec<_> = unique
            .iter()
            .map(|&name| (name, scope.spawn(move || load(dir, name))))
            .collect();
        described
            .into_iter()
            .map(|(name, thread)| {
                let loaded = thread.join().unwrap_or_else(|_| {
                    Some(Err(format!("user benchmark {name}: describing it failed")))
                });
                (name.to_string(), loaded)
            })
            .collect()
    })
}

/// What `NAME describe` prints.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Description {
    description: String,
    /// Bumped when the benchmark's numbers stop being comparable with older ones.
    #[serde(default = "first_version")]
    version: String,
    #[serde(default)]
    options: Vec<DescribedOption>,
    metrics: Vec<DescribedMetric>,
    primary: String,
}

fn first_version() -> String {
    "1".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DescribedOption {
    name: String,
    /// `uint`, `float`, `choice` or `text`.
    #[serde(rename = "type")]
    kind: String,
    default: serde_json::Value,
    /// Bounds of a `uint` or `float`.
    min: Option<f64>,
    max: Option<f64>,
    /// The words of a `choice`.
    #[serde(default)]
    values: Vec<String>,
    #[serde(default)]
    unit: String,
    #[serde(default)]
    help: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DescribedMetric {
    name: String,
    unit: String,
    /// `lower` or `higher`.
    better: String,
}

/// How long `NAME describe` may take, its output closed: it only prints a description, and it
/// runs when a plan is made or `vernier list` lists, where no run timeout applies.
const DESCRIBE_LIMIT: Duration = Duration::from_secs(10);

/// How much `NAME describe` may write, both outputs together: a description is one JSON
/// object of a few kilobytes; 1 MiB is the bound of every other text vernier reads.
const DESCRIBE_OUTPUT: usize = 1 << 20;

/// Runs `path describe` and reads its description.
fn describe(name: &str, path: &Path) -> Result<UserBenchmark, String> {
    describe_within(name, path, DESCRIBE_LIMIT)
}

/// Runs `path describe` for at most `limit` ([`crate::tool::execute_within`]: at the limit its
/// process group, its descendants and whatever holds its output are killed) and reads its
/// description.
fn describe_within(name: &str, path: &Path, limit: Duration) -> Result<UserBenchmark, String> {
    use crate::tool::Bounded;
    let context = |detail: String| format!("user benchmark {name} ({}): {detail}", path.display());
    let seconds = limit.as_secs_f64();
    let bounded =
        crate::tool::execute_within(path, &["describe".to_string()], limit, DESCRIBE_OUTPUT)
            .map_err(|e| context(e.to_string()))?;
    let output = match bounded {
        Bounded::Finished(output) => output,
        Bounded::TooMuchOutput { limit } => {
            return Err(context(format!(
                "`{name} describe` wrote more than {limit} bytes and was killed; a \
                 description is one JSON object (docs/benchmarks.md)"
            )));
        }
        Bounded::Killed { exited, holders } => {
            let held = if holders.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} that it started in a session of its own held its output and {} \
                     killed",
                    holders.join(", "),
                    if holders.len() == 1 { "was" } else { "were" }
                )
            };
            return Err(context(if exited {
                format!(
                    "`{name} describe` exited, but its output was still open after {seconds} s{held}"
                )
            } else {
                format!(
                    "`{name} describe` did not finish within {seconds} s; its process group was \
                     killed{held}"
                )
            }));
        }
    };
    if !output.status.success() {
        return Err(context(format!(
            "`{name} describe` failed ({}): {}",
            output.status,
            last_line(&output.stderr)
        )));
    }
    let description: Description = serde_json::from_slice(&output.stdout).map_err(|e| {
        context(format!(
            "`{name} describe` did not print a valid description ({e}); it prints one JSON \
             object with description, options, metrics and primary (docs/benchmarks.md)"
        ))
    })?;
    info_of(name, description)
        .map(|info| UserBenchmark {
            path: path.to_path_buf(),
            info,
        })
        .map_err(context)
}

/// The [`BenchmarkInfo`] of a description, with its mistakes named.
fn info_of(name: &str, d: Description) -> Result<BenchmarkInfo, String> {
    // Its texts are listed and recorded: one line of printable text each
    // (vernier_model::text).
    let texts = [("description", &d.description), ("version", &d.version)]
        .into_iter()
        .chain(
            d.metrics
                .iter()
                .flat_map(|m| [("metrics.name", &m.name), ("metrics.unit", &m.unit)]),
        )
        .chain(d.options.iter().flat_map(|o| {
            [
                ("options.name", &o.name),
                ("options.unit", &o.unit),
                ("options.help", &o.help),
            ]
            .into_iter()
            .chain(o.values.iter().map(|v| ("options.values", v)))
        }));
    for (field, text) in texts {
        vernier_model::text::check_text(field, text)?;
    }
    let mut metrics = Vec::new();
    for m in d.metrics {
        let higher_is_better = match m.better.as_str() {
            "lower" => false,
            "higher" => true,
            other => {
                return Err(format!(
                    "metric '{}': better is '{other}', expected lower or higher",
                    m.name
                ))
            }
        };
        if m.name.is_empty() || metrics.iter().any(|x: &MetricInfo| x.name == m.name) {
            return Err(format!("metric '{}' is empty or given twice", m.name));
        }
        metrics.push(MetricInfo {
            name: m.name,
            unit: m.unit,
            higher_is_better,
        });
    }
    let Some(at) = metrics.iter().position(|m| m.name == d.primary) else {
        return Err(format!(
            "primary '{}' is not one of its metrics ({})",
            d.primary,
            metrics
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let primary = metrics.remove(at);
    let mut options: Vec<OptionSpec> = Vec::new();
    for o in d.options {
        if !is_parameter_name(&o.name) || options.iter().any(|x| x.name == o.name) {
            return Err(format!(
                "option '{}' is given twice or is not a name (a letter, then letters, digits, \
                 - and _)",
                o.name
            ));
        }
        let bound = |v: Option<f64>, default: f64| v.unwrap_or(default);
        let kind = match o.kind.as_str() {
            "uint" => OptionKind::UInt {
                min: bound(o.min, 0.0) as u64,
                max: o.max.map_or(u64::MAX, |m| m as u64),
            },
            "float" => OptionKind::Float {
                min: bound(o.min, f64::MIN),
                max: bound(o.max, f64::MAX),
            },
            "choice" if !o.values.is_empty() => {
                OptionKind::Choice(o.values.into_iter().map(Into::into).collect())
            }
            "text" => OptionKind::Text,
            other => {
                return Err(format!(
                    "option '{}': type '{other}' is not uint, float, choice (with values) or text",
                    o.name
                ))
            }
        };
        let mut spec = OptionSpec::new(o.name, kind, OptionDefault::Value(OptionValue::UInt(0)))
            .unit(o.unit)
            .help(o.help);
        let default_text = match &o.default {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let default = spec
            .parse(&default_text)
            .map_err(|e| format!("option '{}': its default: {e}", spec.name))?;
        spec.default = OptionDefault::Value(default);
        options.push(spec);
    }
    Ok(
        BenchmarkInfo::new(name.to_string(), d.version, d.description, primary)
            .with_secondary_metrics(metrics)
            .with_options(options),
    )
}

/// The last non-empty line of a program's output, for error messages.
fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no output")
        .to_string()
}

/// A described user benchmark.
#[derive(Debug, Clone)]
pub struct UserBenchmark {
    path: PathBuf,
    info: BenchmarkInfo,
}

impl UserBenchmark {
    /// The executable.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Benchmark for UserBenchmark {
    fn info(&self) -> BenchmarkInfo {
        self.info.clone()
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let name = self.info.name();
        let mut args = vec!["run".to_string()];
        args.extend(options.0.iter().map(|(k, v)| format!("--{k}={v}")));
        let output = crate::tool::execute(&self.path, &args)?;
        if !output.status.success() {
            return Err(BenchError::Command(format!(
                "`{name} run` failed ({}): {}",
                output.status,
                last_line(&output.stderr)
            )));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let values = parse_values(&self.info, &stdout)
            .map_err(|e| BenchError::Command(format!("`{name} run`: {e}")))?;
        Ok(Measurement {
            values,
            histograms: Vec::new(),
        })
    }
}

/// The metric values of a run's standard output: its last non-empty line, a JSON object with a
/// number for every metric `info` describes and nothing else.
fn parse_values(info: &BenchmarkInfo, stdout: &str) -> Result<BTreeMap<String, f64>, String> {
    let last = stdout
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .ok_or("printed nothing; its last line of output must be a JSON object of metric values")?;
    let values: BTreeMap<String, f64> = serde_json::from_str(last).map_err(|e| {
        format!(
            "its last line is not a JSON object of metric -> number ({e}): {}",
            last.chars().take(200).collect::<String>()
        )
    })?;
    let described: Vec<&str> = std::iter::once(info.metric())
        .chain(info.secondary_metrics())
        .map(|m| m.name.as_str())
        .collect();
    if let Some(missing) = described.iter().find(|m| !values.contains_key(**m)) {
        return Err(format!("printed no value of its metric '{missing}'"));
    }
    if let Some(extra) = values.keys().find(|k| !described.contains(&k.as_str())) {
        return Err(format!(
            "printed '{extra}', which is not one of its metrics ({})",
            described.join(", ")
        ));
    }
    if let Some((k, v)) = values.iter().find(|(_, v)| !v.is_finite()) {
        return Err(format!("the value of '{k}' is not finite: {v}"));
    }
    Ok(values)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const DESCRIPTION: &str = r#"{
        "description": "sorts numbers",
        "options": [
            {"name": "count", "type": "uint", "default": 1000, "min": 1, "max": 1000000},
            {"name": "order", "type": "choice", "values": ["random", "sorted"], "default": "random"},
            {"name": "factor", "type": "float", "default": 0.5, "min": 0, "max": 1, "unit": "x"}
        ],
        "metrics": [
            {"name": "rate", "unit": "numbers/s", "better": "higher"},
            {"name": "time", "unit": "s", "better": "lower"}
        ],
        "primary": "time"
    }"#;

    fn info(text: &str) -> Result<BenchmarkInfo, String> {
        info_of(
            "sort",
            serde_json::from_str(text).map_err(|e| e.to_string())?,
        )
    }

    #[test]
    fn a_description_becomes_options_and_metrics() {
        let i = info(DESCRIPTION).unwrap();
        assert_eq!((i.name(), i.version()), ("sort", "1"));
        assert_eq!(i.metric().name, "time");
        assert!(!i.metric().higher_is_better);
        assert_eq!(i.secondary_metrics()[0].name, "rate");
        let options = crate::resolve_options(&i, &[("order", "sorted")]).unwrap();
        assert_eq!(options.uint("count"), 1000);
        assert_eq!(options.text("order"), "sorted");
        assert_eq!(options.float("factor"), 0.5);
        let e = crate::resolve_options(&i, &[("count", "0")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected an integer in 1..=1000000"), "{e}");
        let e = crate::resolve_options(&i, &[("order", "reverse")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("one of random, sorted"), "{e}");
    }

    #[test]
    fn mistakes_in_a_description_are_named() {
        let e = info(&DESCRIPTION.replace("\"primary\": \"time\"", "\"primary\": \"speed\""));
        assert_eq!(
            e.unwrap_err(),
            "primary 'speed' is not one of its metrics (rate, time)"
        );
        let e = info(&DESCRIPTION.replace("\"higher\"", "\"more\""));
        assert!(e
            .unwrap_err()
            .contains("better is 'more', expected lower or higher"));
        let e = info(&DESCRIPTION.replace("\"default\": 1000", "\"default\": 0"));
        assert!(e.unwrap_err().starts_with("option 'count': its default: "));
        let e = info(&DESCRIPTION.replace("\"uint\"", "\"int\""));
        assert!(e.unwrap_err().contains("type 'int' is not uint, float"));
        let e = info(&DESCRIPTION.replace("\"description\"", "\"about\""));
        assert!(e.unwrap_err().contains("unknown field `about`"));
    }

    #[test]
    fn a_describe_that_writes_without_end_is_killed_at_the_output_limit() {
        let _turn = crate::test_turns::describing();
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("floods");
        std::fs::write(&script, "#!/bin/sh\nexec cat /dev/zero\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A time limit no machine reaches: the output limit must end it.
        let e = describe_within("floods", &script, Duration::from_secs(3600)).unwrap_err();
        assert_eq!(
            e,
            format!(
                "user benchmark floods ({}): `floods describe` wrote more than 1048576 bytes \
                 and was killed; a description is one JSON object (docs/benchmarks.md)",
                script.display()
            )
        );
    }

    #[test]
    fn a_describe_that_never_ends_is_killed_at_the_limit() {
        let _turn = crate::test_turns::describing();
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("never-written");
        let made = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `made` is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(made.as_ptr(), 0o600) }, 0);
        // The script and a child it leaves behind both block opening a FIFO nobody writes, so
        // neither can end by itself however slow the machine is.
        let script = dir.path().join("hangs");
        let pids = dir.path().join("pids");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ncat {fifo} &\necho $$ $! > {pids}\nread line < {fifo}\n",
                fifo = fifo.display(),
                pids = pids.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = describe_within("hangs", &script, Duration::from_millis(300)).unwrap_err();
        assert_eq!(
            e,
            format!(
                "user benchmark hangs ({}): `hangs describe` did not finish within 0.3 s; its \
                 process group was killed",
                script.display()
            )
        );
        // Both were killed. A killed process closes its files (the end of output that
        // `describe_within` read) before it has finished exiting, so the check waits for the
        // exit itself, with a limit no machine reaches. A script killed before it wrote its
        // pids left nothing running to check.
        let recorded = std::fs::read_to_string(&pids).unwrap_or_default();
        for pid in recorded.split_whitespace() {
            let pid: i32 = pid.parse().unwrap();
            let ended = vernier_sys::process::wait_for_exit(pid as u32, Duration::from_secs(60))
                .unwrap_or_else(|_| vernier_sys::process::read_pid_stat(pid as u32).is_none());
            assert!(ended, "{pid} still runs a minute after it was killed");
        }
    }

    /// An executable script `name` in `dir`.
    fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_setsid_child_holding_the_output_does_not_outlast_the_limit() {
        let _turn = crate::test_turns::describing();
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let description = DESCRIPTION.replace('\n', " ");
        // A child in a session of its own that keeps standard output open: the script exits
        // (after printing a whole description) or waits for it.
        for (name, end) in [("exits", ""), ("waits", "wait\n")] {
            let path = script(
                dir.path(),
                name,
                &format!(
                    "#!/bin/sh\necho '{description}'\nsetsid sleep 300 &\necho $! > {}\n{end}",
                    pids.display()
                ),
            );
            let start = std::time::Instant::now();
            let e = describe_within(name, &path, Duration::from_millis(500)).unwrap_err();
            assert!(start.elapsed() < Duration::from_secs(30), "{name}: {e}");
            let expected = if end.is_empty() {
                format!("`{name} describe` exited, but its output was still open after 0.5 s; PID ")
            } else {
                format!("`{name} describe` did not finish within 0.5 s; its process group was killed; PID ")
            };
            assert!(e.contains(&expected), "{e}");
            assert!(e.ends_with(" (sleep) that it started in a session of its own held its output and was killed"), "{e}");
            let pid: i32 = std::fs::read_to_string(&pids)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            let ended = vernier_sys::process::wait_for_exit(pid as u32, Duration::from_secs(60))
                .unwrap_or_else(|_| vernier_sys::process::read_pid_stat(pid as u32).is_none());
            assert!(
                ended,
                "{name}: {pid} still runs a minute after it was killed"
            );
        }
    }

    #[test]
    fn benchmarks_are_found_in_the_directory_given_and_described_each_time() {
        let description = DESCRIPTION.replace('\n', " ");
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        for (dir, summary) in [(&first, "first"), (&second, "second")] {
            script(
                dir.path(),
                "sort",
                &format!(
                    "#!/bin/sh\necho '{}'\n",
                    description.replace("sorts numbers", summary)
                ),
            );
        }
        // One process, two directories: each is read as given, nothing is kept from the other.
        let summary = |dir: &Path| {
            load(dir, "sort")
                .unwrap()
                .unwrap()
                .info()
                .summary()
                .to_string()
        };
        assert_eq!(summary(first.path()), "first");
        assert_eq!(summary(second.path()), "second");
        assert_eq!(names(first.path()), ["sort"]);
        assert!(load(first.path(), "nosuch").is_none());
        assert!(crate::find("sort", Some(second.path())).is_some());
        assert!(crate::find("sort", None).is_none());
        // A built-in is found whatever the directory.
        assert!(crate::find("yield", Some(first.path())).is_some());
    }

    #[test]
    fn a_description_with_a_control_character_is_refused() {
        let e = info(&DESCRIPTION.replace("sorts numbers", "sorts \\u001b[2Jnumbers")).unwrap_err();
        assert!(e.starts_with("field 'description' ('sorts \\u{1b}[2Jnumbers') contains the control character ESC"), "{e}");
    }

    #[test]
    fn run_output_is_the_last_line_with_every_metric() {
        let i = info(DESCRIPTION).unwrap();
        let v = parse_values(&i, "warming up\n{\"time\": 0.5, \"rate\": 2000}\n\n").unwrap();
        assert_eq!((v["time"], v["rate"]), (0.5, 2000.0));
        let e = parse_values(&i, "{\"time\": 0.5}").unwrap_err();
        assert_eq!(e, "printed no value of its metric 'rate'");
        let e = parse_values(&i, "{\"time\": 0.5, \"rate\": 1, \"speed\": 2}").unwrap_err();
        assert!(
            e.starts_with("printed 'speed', which is not one of its metrics"),
            "{e}"
        );
        let e = parse_values(&i, "done").unwrap_err();
        assert!(e.starts_with("its last line is not a JSON object"), "{e}");
        assert!(parse_values(&i, "")
            .unwrap_err()
            .starts_with("printed nothing"));
    }
}
