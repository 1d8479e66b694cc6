//! `stress-ng`: one execution of `stress-ng --STRESSOR N --timeout T --metrics-brief --yaml
//! FILE` per run (Debian package stress-ng), its bogo-ops rate read from the YAML metrics.
//!
//! Any stressor that stress-ng lists (`stress-ng --stressors`, checked when the plan is made)
//! runs with `instances` instances (0: one per online CPU, stress-ng's own 0) for `timeout`
//! seconds, or until each instance has done `ops` bogo operations (`--STRESSOR-ops`). The
//! metric is the stressor's `bogo-ops-per-second-real-time`, the bogo operations of all
//! instances over the wall-clock time; beside it are the rate over the instances' user and
//! system time, the bogo operations, and the wall-clock, user and system times. A bogo
//! operation is what each stressor counts as one iteration of its loop: rates compare one
//! stressor between machines, kernels and settings, never two stressors.
//!
//! stress-ng's temporary files go to a directory of the run's own (`--temp-path`), removed
//! after the run with the YAML file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use vernier_model::{BenchmarkInfo, MetricInfo, OptionDefault, OptionKind, OptionSpec};
use vernier_model::{OptionValue, Options};
use vernier_sys::MachineLimits;

use crate::opts::{uint, uint_spec};
use crate::tool::{missing, number, Tool};
use crate::{BenchError, Benchmark, Measurement, RunContext};

const STRESS_NG: Tool = Tool {
    program: "stress-ng",
    package: "stress-ng",
};

const NAME: &str = "stress-ng";

/// The metrics, by name, and the YAML keys they come from.
pub const BOGO_OPS_PER_SEC: &str = "bogo_ops_per_sec";
pub const BOGO_OPS_PER_CPU_SEC: &str = "bogo_ops_per_cpu_sec";
pub const BOGO_OPS: &str = "bogo_ops";
pub const WALL_TIME: &str = "wall_time";
pub const USER_TIME: &str = "user_time";
pub const SYSTEM_TIME: &str = "system_time";

const KEYS: [(&str, &str); 6] = [
    (BOGO_OPS_PER_SEC, "bogo-ops-per-second-real-time"),
    (BOGO_OPS_PER_CPU_SEC, "bogo-ops-per-second-usr-sys-time"),
    (BOGO_OPS, "bogo-ops"),
    (WALL_TIME, "wall-clock-time"),
    (USER_TIME, "user-time"),
    (SYSTEM_TIME, "system-time"),
];

pub struct StressNg;

fn metric(name: &str, unit: &str, higher_is_better: bool) -> MetricInfo {
    MetricInfo {
        name: name.into(),
        unit: unit.into(),
        higher_is_better,
    }
}

impl Benchmark for StressNg {
    fn info(&self) -> BenchmarkInfo {
        BenchmarkInfo::new(
            NAME,
            "1",
            "stress-ng (package stress-ng): any stressor's bogo-ops rate",
            metric(BOGO_OPS_PER_SEC, "bogo-ops/s", true),
        )
        .with_secondary_metrics(vec![
            metric(BOGO_OPS_PER_CPU_SEC, "bogo-ops/s", true),
            metric(BOGO_OPS, "bogo-ops", true),
            metric(WALL_TIME, "s", false),
            metric(USER_TIME, "s", false),
            metric(SYSTEM_TIME, "s", false),
        ])
        .with_options(vec![
            OptionSpec::new(
                "stressor",
                OptionKind::Text,
                OptionDefault::Value(OptionValue::Text("cpu".into())),
            )
            .help("the stressor (stress-ng --stressors lists them)"),
            uint_spec(
                "instances",
                1,
                0,
                4096,
                "",
                "instances of the stressor; 0: one per online CPU",
            ),
            uint_spec("timeout", 5, 1, 86400, "s", "how long it runs (--timeout)"),
            uint_spec(
                "ops",
                0,
                0,
                u64::MAX >> 1,
                "",
                "stops each instance after this many bogo operations; 0: no limit",
            ),
        ])
    }

    fn tools(&self, _options: &Options) -> Vec<&'static str> {
        vec![STRESS_NG.program]
    }

    fn check_options(&self, options: &Options) -> Result<(), BenchError> {
        let stressor = options.text("stressor");
        if stressor.is_empty()
            || !stressor
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(BenchError::Options(format!(
                "stressor='{stressor}' is not a stressor's name; stress-ng --stressors lists them"
            )));
        }
        let listed = STRESS_NG.run(NAME, &["--stressors".to_string()])?;
        if !listed.split_whitespace().any(|s| s == stressor) {
            return Err(BenchError::Options(format!(
                "stress-ng has no stressor '{stressor}'; stress-ng --stressors lists them"
            )));
        }
        Ok(())
    }

    fn check_machine(&self, options: &Options, limits: &MachineLimits) -> Result<(), BenchError> {
        // The run's process, stress-ng's parent and its instances (each may start more).
        let instances = match uint(&self.info(), options, "instances")? {
            0 => limits.cpus.len().max(1) as u64,
            n => n,
        };
        limits.check_tasks(instances.saturating_add(2))?;
        Ok(())
    }

    fn run(&self, options: &Options, _ctx: &RunContext) -> Result<Measurement, BenchError> {
        let info = self.info();
        let stressor = options.text("stressor");
        let dir = RunDir::create()?;
        let yaml = dir.0.join("metrics.yaml");
        let mut args = vec![
            format!("--{stressor}"),
            uint(&info, options, "instances")?.to_string(),
            "--timeout".into(),
            uint(&info, options, "timeout")?.to_string(),
            "--metrics-brief".into(),
            "--yaml".into(),
            yaml.display().to_string(),
            "--temp-path".into(),
            dir.0.display().to_string(),
        ];
        let ops = uint(&info, options, "ops")?;
        if ops > 0 {
            args.extend([format!("--{stressor}-ops"), ops.to_string()]);
        }
        STRESS_NG.run(NAME, &args)?;
        let text = std::fs::read_to_string(&yaml).map_err(|e| {
            BenchError::Command(format!(
                "stress-ng wrote no metrics to {}: {e}",
                yaml.display()
            ))
        })?;
        Ok(Measurement {
            values: parse_stress_ng_yaml(stressor, &text)?,
            histograms: Vec::new(),
        })
    }
}

/// A directory of the run's own, removed when dropped.
struct RunDir(PathBuf);

impl RunDir {
    fn create() -> Result<Self, BenchError> {
        let nanos = vernier_sys::clock::monotonic_ns();
        let dir =
            std::env::temp_dir().join(format!("vernier-stress-ng-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| BenchError::Command(format!("cannot create {}: {e}", dir.display())))?;
        Ok(RunDir(dir))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The metrics of `stressor` from the YAML file of `stress-ng --metrics-brief --yaml`: the
/// entry `- stressor: NAME` of its `metrics:` list, whose `key: value` lines follow it.
pub fn parse_stress_ng_yaml(
    stressor: &str,
    yaml: &str,
) -> Result<BTreeMap<String, f64>, BenchError> {
    let tool = "stress-ng";
    let mut in_metrics = false;
    let mut entry: Option<BTreeMap<&str, &str>> = None;
    for line in yaml.lines().filter(|l| !l.trim().is_empty()) {
        if !line.starts_with(' ') && !line.starts_with('-') {
            in_metrics = line.trim_end() == "metrics:";
            continue;
        }
        if !in_metrics {
            continue;
        }
        let trimmed = line.trim();
        if let Some(item) = trimmed.strip_prefix("- ") {
            if entry.is_some() {
                break;
            }
            if item.split_once(':').map(|(k, v)| (k.trim(), v.trim()))
                == Some(("stressor", stressor))
            {
                entry = Some(BTreeMap::new());
            }
        } else if let (Some(map), Some((key, value))) = (entry.as_mut(), trimmed.split_once(':')) {
            map.insert(key.trim(), value.trim());
        }
    }
    let entry = entry.ok_or_else(|| {
        missing(
            tool,
            &format!("metrics of stressor '{stressor}' in its YAML file"),
            yaml,
        )
    })?;
    let mut values = BTreeMap::new();
    for (name, key) in KEYS {
        let text = entry
            .get(key)
            .ok_or_else(|| missing(tool, &format!("'{key}' for stressor '{stressor}'"), yaml))?;
        values.insert(name.to_string(), number(tool, key, text)?);
    }
    if values[BOGO_OPS] == 0.0 {
        return Err(BenchError::Command(format!(
            "stress-ng's stressor '{stressor}' did no bogo operation (not supported here, or \
             skipped: run stress-ng --{stressor} 1 --timeout 1 to see why)"
        )));
    }
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

    /// Captured from stress-ng 0.15.06 on Debian 12.
    #[test]
    fn parses_real_yaml() {
        let v = parse_stress_ng_yaml("cpu", &fixture("stress-ng-cpu.yaml")).unwrap();
        assert_eq!(v[BOGO_OPS_PER_SEC], 503.621420);
        assert_eq!(v[BOGO_OPS_PER_CPU_SEC], 1649.750744);
        assert_eq!(v[BOGO_OPS], 506.0);
        assert_eq!(v[WALL_TIME], 1.004723);
        assert_eq!(v[USER_TIME], 0.299730);
        assert_eq!(v[SYSTEM_TIME], 0.006983);
        let v = parse_stress_ng_yaml("switch", &fixture("stress-ng-switch.yaml")).unwrap();
        assert_eq!(v[BOGO_OPS_PER_SEC], 68167.180449);
        // Every declared metric is among the values.
        let info = StressNg.info();
        for m in std::iter::once(info.metric()).chain(info.secondary_metrics()) {
            assert!(v.contains_key(&m.name), "{}", m.name);
        }
    }

    #[test]
    fn malformed_yaml_is_a_clear_error() {
        let e = |stressor, text: &str| {
            parse_stress_ng_yaml(stressor, text)
                .unwrap_err()
                .to_string()
        };
        assert!(e("vm", &fixture("stress-ng-cpu.yaml"))
            .starts_with("cannot read stress-ng's output: no metrics of stressor 'vm'"));
        assert_eq!(
            e("cpu", ""),
            "cannot read stress-ng's output: no metrics of stressor 'cpu' in its YAML file \
             (its last line: no output)"
        );
        let partial = "metrics:\n    - stressor: cpu\n      bogo-ops: 5\n";
        assert!(e("cpu", partial).contains("no 'bogo-ops-per-second-real-time'"));
        let zero = fixture("stress-ng-cpu.yaml").replace("bogo-ops: 506", "bogo-ops: 0");
        assert!(e("cpu", &zero).contains("did no bogo operation"));
        let bad = fixture("stress-ng-cpu.yaml").replace("503.621420", "fast");
        assert!(e("cpu", &bad).contains("'fast'"));
    }

    #[test]
    fn refuses_unknown_stressors() {
        let check = |s: &str| {
            let options = resolve_options(&StressNg.info(), &[("stressor", s)]).unwrap();
            StressNg.check_options(&options).map_err(|e| e.to_string())
        };
        assert!(check("cpu; rm")
            .unwrap_err()
            .contains("is not a stressor's name"));
        if vernier_sys::environment::tools::find_on_path(
            "stress-ng",
            &std::env::var_os("PATH").unwrap_or_default(),
        )
        .is_some()
        {
            assert!(check("cpu").is_ok());
            assert!(check("nope")
                .unwrap_err()
                .contains("has no stressor 'nope'"));
        }
    }
}
