//! `sysfs`: a kernel-function microbenchmark run by a kernel module, in the style of the
//! kbench write-up ("(Micro)benchmarking Linux kernel functions"): the module exposes its
//! parameters as writable attributes of a sysfs directory and a read-only `run` attribute whose
//! reading runs the benchmark in the kernel and returns `key=value` pairs
//! (`min=72 max=33364 count=100000 p50=112 ...`). contrib/kbench-module/ is such a module.
//!
//! Each run writes the options that are not declared here (the module's parameters,
//! `loop_count=5000`) to `DIR/<name>`, reads `DIR/run` once and stores every numeric value as a
//! metric; the primary is `primary=KEY`. The parameters' previous values are written back after
//! the run, also when it fails, so that the module is left as it was found.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

#[cfg(test)]
use vernier_model::OptionValue;
use vernier_model::{BenchmarkInfo, MetricInfo, Options};

use crate::opts::{choice_spec, text_spec};
use crate::{BenchError, Benchmark, Measurement, RunContext, PARAMETERS};

/// The attribute whose reading runs the benchmark.
const RUN: &str = "run";
/// The directory of contrib/kbench-module.
const DEFAULT_PATH: &str = "/sys/kernel/kbench";
/// Directions of the primary metric.
const BETTER: &[&str] = &["lower", "higher"];
/// Keys by which a module reports a failure instead of figures (the write-up's
/// `err=%d msg="lookup error"`).
const FAILURE_KEYS: [&str; 2] = ["err", "msg"];

pub struct Sysfs;

impl Benchmark for Sysfs {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            "sysfs",
            "1",
            "a kernel module's benchmark in sysfs (contrib/kbench-module): writes \
                          the other options to DIR/NAME, reads DIR/run once per run and stores \
                          its key=value figures",
            MetricInfo::lower("p50", "cycles"),
        )
        .with_options(vec![
            text_spec(
                "path",
                DEFAULT_PATH,
                "the module's sysfs directory, with its `run` attribute",
            ),
            text_spec(
                "primary",
                "p50",
                "the key of `run`'s output that is the primary metric",
            ),
            text_spec("unit", "cycles", "the unit of the figures, as stored"),
            choice_spec("better", BETTER, "the primary metric's better direction"),
        ])
        .with_parameters(PARAMETERS)
    }

    fn metrics(&self, options: &Options) -> (MetricInfo, Vec<MetricInfo>) {
        (
            MetricInfo {
                name: options.text("primary").to_string(),
                unit: options.text("unit").to_string(),
                higher_is_better: options.text("better") == "higher",
            },
            Vec::new(),
        )
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        let dir = PathBuf::from(options.text("path"));
        let run = dir.join(RUN);
        if !readable(&run) {
            return Err(BenchError::Options(format!(
                "{} is not readable: path=DIR must be the sysfs directory of a loaded benchmark \
                 module, with a `run` attribute (contrib/kbench-module/README.md)",
                run.display()
            )));
        }
        for (name, _) in parameters(&self.info(), options) {
            let attribute = dir.join(name);
            if name == RUN || !attribute.is_file() {
                return Err(BenchError::Options(format!(
                    "{} has no parameter '{name}'; its attributes: {}",
                    dir.display(),
                    attributes(&dir).join(", ")
                )));
            }
            if !writable(&attribute) {
                return Err(BenchError::Options(format!(
                    "cannot write {}: permission denied (module attributes are usually \
                     writable by root only)",
                    attribute.display()
                )));
            }
        }
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let dir = PathBuf::from(options.text("path"));
        let params = parameters(&self.info(), options);
        let written = Written::write(&dir, &params)?;
        let text = std::fs::read_to_string(dir.join(RUN));
        // The module is left as it was found before the result is looked at.
        written.restore()?;
        let path = dir.join(RUN);
        let text = text.map_err(|e| io_error(&path, "read", e))?;
        let values = parse_run(&text)
            .map_err(|e| BenchError::Command(format!("{}: {e}", path.display())))?;
        let primary = options.text("primary");
        if !values.contains_key(primary) {
            return Err(BenchError::Command(format!(
                "{} printed no '{primary}' (it printed {}); choose the primary metric with \
                 primary=KEY",
                path.display(),
                values.keys().cloned().collect::<Vec<_>>().join(", ")
            )));
        }
        Ok(Measurement {
            values,
            histograms: Vec::new(),
        })
    }
}

/// The options of a configuration that are the module's parameters: those not declared.
fn parameters<'a>(info: &BenchmarkInfo, options: &'a Options) -> Vec<(&'a str, String)> {
    options
        .0
        .iter()
        .filter(|(name, _)| info.option(name).is_none())
        .map(|(name, value)| (name.as_str(), value.to_string()))
        .collect()
}

/// The attribute files of `dir`, sorted, for error messages.
fn attributes(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_file())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| n != RUN)
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// access(2) of `path` for `mode`: what this process may do, root's override of the mode bits
/// included (a mode check alone would refuse root a 0644 attribute of someone else's).
fn access(path: &Path, mode: libc::c_int) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

fn readable(path: &Path) -> bool {
    path.is_file() && access(path, libc::R_OK)
}

fn writable(path: &Path) -> bool {
    access(path, libc::W_OK)
}

fn io_error(path: &Path, what: &str, e: std::io::Error) -> BenchError {
    BenchError::Command(format!("cannot {what} {}: {e}", path.display()))
}

/// Parameters written for a run, with the values they had before; [`Written::restore`] (or
/// dropping it, on a failure in between) writes those back.
struct Written {
    previous: Vec<(PathBuf, String)>,
}

impl Written {
    /// Writes each parameter to its attribute, remembering the previous value; on a failure the
    /// ones written so far are restored.
    fn write(dir: &Path, params: &[(&str, String)]) -> Result<Written, BenchError> {
        let mut written = Written {
            previous: Vec::new(),
        };
        for (name, value) in params {
            let path = dir.join(name);
            let old = std::fs::read_to_string(&path).map_err(|e| io_error(&path, "read", e))?;
            std::fs::write(&path, format!("{value}\n")).map_err(|e| io_error(&path, "write", e))?;
            written.previous.push((path, old));
        }
        Ok(written)
    }

    /// Writes the previous values back, the last written first.
    fn restore(mut self) -> Result<(), BenchError> {
        self.restore_all()
    }

    fn restore_all(&mut self) -> Result<(), BenchError> {
        let mut first_error = None;
        while let Some((path, old)) = self.previous.pop() {
            if let Err(e) = std::fs::write(&path, &old) {
                first_error.get_or_insert(io_error(&path, "restore", e));
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for Written {
    fn drop(&mut self) {
        let _ = self.restore_all();
    }
}

/// The figures of a `run` attribute's text: `key=value` pairs separated by blanks or lines,
/// each value a number (`min=72 max=33364 count=100000`). A module reports a failure with
/// `err=` or `msg="..."` (the write-up's convention), which becomes the run's error.
pub fn parse_run(text: &str) -> Result<BTreeMap<String, f64>, String> {
    let pairs = split_pairs(text)?;
    if let Some((_, message)) = pairs.iter().find(|(k, _)| k == FAILURE_KEYS[1]) {
        let err = pairs
            .iter()
            .find(|(k, _)| k == FAILURE_KEYS[0])
            .map(|(_, v)| format!(" (err={v})"))
            .unwrap_or_default();
        return Err(format!("the module reported a failure: {message}{err}"));
    }
    let mut values = BTreeMap::new();
    for (key, value) in pairs {
        let number: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("the value of '{key}' is not a number: '{value}'"))?;
        if key == FAILURE_KEYS[0] && number != 0.0 {
            return Err(format!("the module reported a failure: err={value}"));
        }
        if values.insert(key.clone(), number).is_some() {
            return Err(format!("'{key}' is printed twice"));
        }
    }
    if values.is_empty() {
        return Err("printed no key=value figures".into());
    }
    Ok(values)
}

/// Splits `key=value key="quoted value"` pairs.
fn split_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=').ok_or_else(|| {
            format!(
                "'{}' is not key=value",
                rest.split_whitespace().next().unwrap_or(rest)
            )
        })?;
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!("'{}' is not key=value", key.trim()));
        }
        let (value, after) = match after.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted
                    .find('"')
                    .ok_or_else(|| format!("the value of '{key}' has no closing quote"))?;
                (&quoted[..end], &quoted[end + 1..])
            }
            None => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        pairs.push((key.to_string(), value.to_string()));
        rest = after.trim_start();
    }
    Ok(pairs)
}

/// Options with `path` set and the parameters `params`, for tests.
#[cfg(test)]
fn options_for(dir: &Path, params: &[(&str, &str)]) -> Options {
    let path = dir.to_str().unwrap_or_default();
    let mut options = crate::resolve_options(&Sysfs.info(), &[("path", path)]).unwrap_or_default();
    for (name, value) in params {
        options
            .0
            .insert((*name).to_string(), OptionValue::Text((*value).to_string()));
    }
    options
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const FIGURES: &str = "min=72 max=33364 count=100000 p95=154 p90=142 p50=112 mad=6\n";

    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RUN), FIGURES).unwrap();
        std::fs::write(dir.path().join("loop_count"), "5000\n").unwrap();
        std::fs::write(dir.path().join("flow_dst_ipaddr"), "8.8.8.8\n").unwrap();
        dir
    }

    #[test]
    fn parses_the_figures_a_module_prints() {
        let v = parse_run(FIGURES).unwrap();
        assert_eq!(v["p50"], 112.0);
        assert_eq!(v["count"], 100000.0);
        assert_eq!(v.len(), 7);
        let v = parse_run("avg=75\nerr=0\n").unwrap();
        assert_eq!((v["avg"], v["err"]), (75.0, 0.0));
        assert_eq!(
            parse_run("err=-22 msg=\"lookup error\"\n").unwrap_err(),
            "the module reported a failure: lookup error (err=-22)"
        );
        assert_eq!(
            parse_run("err=3\n").unwrap_err(),
            "the module reported a failure: err=3"
        );
        assert!(parse_run("min=x")
            .unwrap_err()
            .contains("'min' is not a number"));
        assert!(parse_run("min 3").unwrap_err().contains("is not key=value"));
        assert!(parse_run("a=1 a=2").unwrap_err().contains("printed twice"));
        assert!(parse_run("\n").unwrap_err().contains("no key=value"));
    }

    #[test]
    fn a_run_reads_the_figures_and_leaves_the_parameters_as_it_found_them() {
        let dir = fixture();
        let options = options_for(dir.path(), &[("loop_count", "1000")]);
        Sysfs.check_options(&options).unwrap();
        let m = Sysfs.run(&options, &RunContext::default()).unwrap();
        assert_eq!(m.values["p50"], 112.0);
        assert_eq!(m.values["mad"], 6.0);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("loop_count")).unwrap(),
            "5000\n"
        );
        let (metric, _) = Sysfs.metrics(&options);
        assert_eq!(
            (metric.name.as_str(), metric.unit.as_str()),
            ("p50", "cycles")
        );
        assert!(!metric.higher_is_better);
    }

    #[test]
    fn parameters_are_written_before_the_reading_and_restored_after() {
        let dir = fixture();
        let written = Written::write(
            dir.path(),
            &[
                ("loop_count", "1000".into()),
                ("flow_dst_ipaddr", "9.9.9.9".into()),
            ],
        )
        .unwrap();
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(
            (read("loop_count"), read("flow_dst_ipaddr")),
            ("1000\n".into(), "9.9.9.9\n".into())
        );
        written.restore().unwrap();
        assert_eq!(
            (read("loop_count"), read("flow_dst_ipaddr")),
            ("5000\n".into(), "8.8.8.8\n".into())
        );
        // Dropped without restore (a failure in between): restored all the same.
        drop(Written::write(dir.path(), &[("loop_count", "7".into())]).unwrap());
        assert_eq!(read("loop_count"), "5000\n");
    }

    #[test]
    fn the_plan_refuses_unknown_parameters_missing_directories_and_absent_keys() {
        let dir = fixture();
        let e = Sysfs
            .check_options(&options_for(dir.path(), &[("loops", "1")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("has no parameter 'loops'; its attributes: flow_dst_ipaddr, loop_count"),
            "{e}"
        );
        let e = Sysfs
            .check_options(&options_for(&dir.path().join("absent"), &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("run is not readable: path=DIR must be"), "{e}");
        let mut options = options_for(dir.path(), &[]);
        options
            .0
            .insert("primary".into(), OptionValue::Text("p99".into()));
        let e = Sysfs
            .run(&options, &RunContext::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("printed no 'p99' (it printed count, mad, max, min, p50, p90, p95); choose the primary metric with primary=KEY"),
            "{e}"
        );
    }
}
