//! hyperfine's `--export-json` output (hyperfine's `src/export/json.rs`) as one vernier
//! session of the `command` benchmark. hyperfine files hold one session and are read whole.

use std::collections::BTreeMap;

use serde::Deserialize;
use vernier_model::{
    ConfigurationRecord, Environment, MetricInfo, MetricName, OptionValue, Options, RunRecord,
    RunValues, Rusage, SessionInfo, SessionStatus, Settings, StopReason, StoredConfiguration,
    StoredSession, Texts,
};

use crate::ids::IdHasher;
use crate::ReadError;

/// hyperfine's `--export-json` document (hyperfine's `src/export/json.rs`); fields vernier
/// does not use (mean, stddev, min, max, ...) are ignored.
#[derive(Debug, Deserialize)]
struct HyperfineExport {
    results: Vec<HyperfineResult>,
}

#[derive(Debug, Deserialize)]
struct HyperfineResult {
    command: String,
    /// Wall-clock time of each run, seconds.
    times: Vec<f64>,
    /// One per time; `null` for a run killed by a signal. Absent in files of hyperfine
    /// before 1.12.
    #[serde(default)]
    exit_codes: Option<Vec<Option<i32>>>,
    /// Values of `--parameter-scan` / `--parameter-list` parameters.
    #[serde(default)]
    parameters: BTreeMap<String, serde_json::Value>,
}

/// The one session of a hyperfine `--export-json` file (`bytes`, whole: the ids derive from
/// it), not yet checked: a session of the `command` benchmark with a configuration per command
/// (and parameter values), a measured run per time, metric `time` in seconds, lower is better.
/// hyperfine records no timestamps: runs are laid end to end from `now_ns`.
pub fn parse_hyperfine(bytes: &[u8], now_ns: i64) -> Result<StoredSession, ReadError> {
    let doc: HyperfineExport = serde_json::from_slice(bytes).map_err(ReadError::HyperfineJson)?;
    from_hyperfine(&doc, bytes, now_ns)
}

fn from_hyperfine(
    doc: &HyperfineExport,
    bytes: &[u8],
    now_ns: i64,
) -> Result<StoredSession, ReadError> {
    if doc.results.is_empty() {
        return Err(ReadError::Hyperfine(
            "the hyperfine file has no results".into(),
        ));
    }
    let session_id = IdHasher::new().part(b"hyperfine-session").part(bytes).id();
    let configuration_ids = IdHasher::new().part(b"hyperfine-configuration").part(bytes);
    let run_ids = IdHasher::new().part(b"hyperfine-run").part(bytes);
    let mut configurations = Vec::new();
    for (i, result) in doc.results.iter().enumerate() {
        let place = || format!("results[{i}] (command '{}')", result.command);
        if result.times.is_empty() {
            return Err(ReadError::Hyperfine(format!(
                "{}: field 'times' is empty",
                place()
            )));
        }
        if let Some(codes) = &result.exit_codes {
            if codes.len() != result.times.len() {
                return Err(ReadError::Hyperfine(format!(
                    "{}: field 'exit_codes' has {} entries, 'times' {}; hyperfine writes one \
                     exit code per time",
                    place(),
                    codes.len(),
                    result.times.len()
                )));
            }
        }
        let mut options = BTreeMap::from([(
            "command".to_string(),
            OptionValue::Text(result.command.clone()),
        )]);
        for (name, value) in &result.parameters {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            options.insert(name.clone(), OptionValue::Text(text));
        }
        let config_index = (i as u64).to_le_bytes();
        let config_id = configuration_ids.clone().part(&config_index).id();
        let run_ids = run_ids.clone().part(&config_index);
        let failed = result
            .exit_codes
            .iter()
            .flatten()
            .filter(|c| **c != Some(0))
            .count();
        let mut runs = Vec::with_capacity(result.times.len());
        let mut start = now_ns;
        // Every run's value is named "time": one name, shared.
        let time = MetricName::from("time");
        for (j, &t) in result.times.iter().enumerate() {
            let run_index = (j as u64).to_le_bytes();
            // A non-positive time, or one beyond validate::MAX_DURATION_S, is refused by the
            // shared checks; here it only must not move the clock backwards, and the runs one
            // after another must end within the clock's range (year 2262).
            let most = vernier_model::validate::MAX_DURATION_S;
            let duration_ns = (t.clamp(0.0, most) * 1e9).round() as i64;
            let Some(end) = start.checked_add(duration_ns) else {
                return Err(ReadError::Hyperfine(format!(
                    "{}: field 'times' adds up to {:e} s from now, beyond the year 2262 that \
                     nanoseconds since 1970 reach",
                    place(),
                    result.times.iter().sum::<f64>()
                )));
            };
            runs.push(RunRecord {
                id: run_ids.clone().part(&run_index).id(),
                index: j as u32,
                warmup: false,
                round: 0,
                preceding_executions: j as u32,
                started_at_ns: start,
                ended_at_ns: end,
                values: RunValues::one(time.clone(), t),
                rusage: Rusage::default(),
                foreign_cpu_ns: 0,
                controller_cpu_ns: 0,
                load_cpu_ns: None,
                histograms: Vec::new(),
                monitors: None,
                setup_steps: Vec::new(),
                setup_changed: Vec::new(),
            });
            start = end;
        }
        configurations.push(StoredConfiguration {
            record: ConfigurationRecord {
                id: config_id,
                position: i as u32,
                benchmark: "command".to_string(),
                benchmark_version: "hyperfine".to_string(),
                options: Options(options),
                metric: MetricInfo {
                    name: "time".to_string(),
                    unit: "s".to_string(),
                    higher_is_better: false,
                },
                // hyperfine runs a fixed number of times; it has no stopping rule.
                secondary_metrics: Vec::new(),
                loads: Vec::new(),
                stop_reason: Some(StopReason::MaxRuns),
                converged: false,
                error: (failed > 0).then(|| {
                    format!(
                        "{failed} of {} runs exited with non-zero status",
                        result.times.len()
                    )
                }),
            },
            runs,
        });
    }
    let environment = Environment::default();
    let ended = configurations
        .iter()
        .filter_map(|c| c.runs.last().map(|r| r.ended_at_ns))
        .max()
        .unwrap_or(now_ns);
    let mut session = StoredSession {
        info: SessionInfo {
            id: session_id,
            started_at_ns: now_ns,
            ended_at_ns: Some(ended),
            status: SessionStatus::Completed,
            suite: None,
            specs: doc
                .results
                .iter()
                .map(|r| format!("command:command={}", r.command))
                .collect(),
            tags: BTreeMap::from([("source".to_string(), "hyperfine".to_string())]),
            note: Some("imported from hyperfine --export-json".to_string()),
            // hyperfine's run count does not depend on an interval: the fixed-n one is valid.
            settings: Settings {
                stopping_rule: vernier_model::StoppingRule::FixedN,
                ..Settings::default()
            },
            vernier_version: env!("CARGO_PKG_VERSION").to_string(),
            fingerprint: environment.fingerprint(),
            environment,
            findings: Vec::new(),
            setup: Vec::new(),
            monitors: Vec::new(),
        },
        configurations,
    };
    // A command or parameter of several lines is recorded escaped (vernier_model::text).
    session.escape_controls();
    Ok(session)
}
