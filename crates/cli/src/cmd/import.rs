//! `vernier import FILE`: a vernier export document (docs/export-format.md) or hyperfine's
//! `--export-json` output, stored in one transaction; sessions already present are skipped.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, Environment, MetricInfo, OptionValue, Options, RunRecord, Rusage,
    SessionInfo, SessionStatus, Settings, StopReason, StoredConfiguration, StoredSession,
};
use vernier_store::Store;

use crate::cli::ImportArgs;
use crate::cmd::export::{ExportDocument, FORMAT, VERSION};
use crate::db;

pub fn import(args: ImportArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let path = &args.file;
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    // Everything is parsed and checked before the database is opened: a bad file changes
    // nothing.
    let sessions =
        parse(&bytes, now_ns()).with_context(|| format!("cannot import {}", path.display()))?;
    let mut store = db::open_for_writing(db_arg)?;
    let report = store
        .import_sessions(&sessions)
        .with_context(|| format!("cannot import {}", path.display()))?;
    println!(
        "imported {} session(s), skipped {} already present",
        report.imported, report.skipped
    );
    Ok(ExitCode::SUCCESS)
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The sessions of a vernier export or a hyperfine file. `now_ns` stamps hyperfine sessions,
/// which carry no time of their own.
pub fn parse(bytes: &[u8], now_ns: i64) -> Result<Vec<StoredSession>> {
    let text = std::str::from_utf8(bytes).context("the file is not UTF-8 text")?;
    // A first pass to tell the formats apart; serde_json names line and column of a syntax
    // error or a truncation.
    let value: serde_json::Value = serde_json::from_str(text).context("invalid JSON")?;
    if let Some(format) = value.get("format") {
        if format != FORMAT {
            bail!("unknown format {format} (expected \"{FORMAT}\")");
        }
        let version = value.get("version").and_then(serde_json::Value::as_u64);
        if version != Some(u64::from(VERSION)) {
            bail!(
                "{FORMAT} version {} is not supported (this vernier reads version {VERSION})",
                value
                    .get("version")
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "missing".to_string())
            );
        }
        // Parsed again from the text, so that errors carry line and column.
        let doc: ExportDocument =
            serde_json::from_str(text).context("not a valid vernier export")?;
        check_sessions(&doc.sessions)?;
        return Ok(doc.sessions);
    }
    if value.get("results").is_some() {
        let doc: HyperfineExport =
            serde_json::from_str(text).context("not a valid hyperfine --export-json file")?;
        return Ok(vec![from_hyperfine(&doc, bytes, now_ns)?]);
    }
    bail!(
        "neither a vernier export (an object with \"format\": \"{FORMAT}\") nor hyperfine \
         --export-json output (an object with \"results\")"
    )
}

/// Checks what the types cannot: every run's primary value is present and finite.
fn check_sessions(sessions: &[StoredSession]) -> Result<()> {
    for s in sessions {
        for c in &s.configurations {
            for run in &c.runs {
                if let Some((metric, v)) = run.values.iter().find(|(_, v)| !v.is_finite()) {
                    bail!(
                        "session {}, configuration {}, run {}: value {v} of '{metric}' is not \
                         a finite number",
                        s.info.id,
                        c.record.id,
                        run.id
                    );
                }
            }
        }
    }
    Ok(())
}

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
    /// `null` for a command killed by a signal.
    #[serde(default)]
    exit_codes: Vec<Option<i32>>,
    /// Values of `--parameter-scan` / `--parameter-list` parameters.
    #[serde(default)]
    parameters: BTreeMap<String, serde_json::Value>,
}

/// A UUID (version 8, "custom") from a SHA-256 of `parts`: the same file always gives the same
/// ids, which makes a repeated import a no-op.
fn derived_id(parts: &[&[u8]]) -> Uuid {
    let mut hasher = Sha256::new();
    for p in parts {
        hasher.update((p.len() as u64).to_le_bytes());
        hasher.update(p);
    }
    let digest = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

/// One session of the `command` benchmark: a configuration per command (and parameter
/// values), a measured run per time, metric `time` in seconds, lower is better.
fn from_hyperfine(doc: &HyperfineExport, bytes: &[u8], now_ns: i64) -> Result<StoredSession> {
    if doc.results.is_empty() {
        bail!("the hyperfine file has no results");
    }
    let session_id = derived_id(&[b"hyperfine-session", bytes]);
    let mut configurations = Vec::new();
    for (i, result) in doc.results.iter().enumerate() {
        if result.times.is_empty() {
            bail!("result {i} ('{}') has no times", result.command);
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
        let config_id = derived_id(&[b"hyperfine-configuration", bytes, &config_index]);
        let failed = result.exit_codes.iter().filter(|c| **c != Some(0)).count();
        let mut runs = Vec::new();
        let mut start = now_ns;
        for (j, &t) in result.times.iter().enumerate() {
            let run_index = (j as u64).to_le_bytes();
            // hyperfine records no timestamps: runs are laid end to end from the import time.
            let duration_ns = (t * 1e9).round() as i64;
            runs.push(RunRecord {
                id: derived_id(&[b"hyperfine-run", bytes, &config_index, &run_index]),
                index: j as u32,
                warmup: false,
                round: 0,
                preceding_executions: j as u32,
                started_at_ns: start,
                ended_at_ns: start.saturating_add(duration_ns.max(0)),
                values: BTreeMap::from([("time".to_string(), t)]),
                rusage: Rusage::default(),
                foreign_cpu_ns: 0,
                controller_cpu_ns: 0,
                monitors: None,
                setup_steps: Vec::new(),
            });
            start = start.saturating_add(duration_ns.max(0));
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
    Ok(StoredSession {
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
            settings: Settings::default(),
            vernier_version: env!("CARGO_PKG_VERSION").to_string(),
            fingerprint: environment.fingerprint(),
            environment,
            findings: Vec::new(),
            setup: Vec::new(),
            monitors: Vec::new(),
        },
        configurations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYPERFINE: &str = r#"{"results": [
        {"command": "a", "mean": 2, "times": [1.0, 3.0], "exit_codes": [0, 1]},
        {"command": "b", "times": [2.0], "parameters": {"n": 4}}
    ]}"#;

    #[test]
    fn hyperfine_becomes_one_deterministic_session() {
        let s = parse(HYPERFINE.as_bytes(), 100).unwrap();
        assert_eq!(s.len(), 1);
        let again = parse(HYPERFINE.as_bytes(), 999).unwrap();
        assert_eq!(s[0].info.id, again[0].info.id);
        assert_eq!(
            s[0].configurations[0].runs[1].id,
            again[0].configurations[0].runs[1].id
        );
        let c = &s[0].configurations;
        assert_eq!(c[0].values(), vec![1.0, 3.0]);
        assert_eq!(c[0].record.options.text("command"), "a");
        assert_eq!(
            c[0].record.error.as_deref(),
            Some("1 of 2 runs exited with non-zero status")
        );
        assert_eq!(c[1].record.options.text("n"), "4");
        assert_eq!(c[0].runs[1].started_at_ns, 100 + 1_000_000_000);
        // Another file, other ids.
        let other = parse(HYPERFINE.replace("3.0", "3.5").as_bytes(), 100).unwrap();
        assert_ne!(other[0].info.id, s[0].info.id);
    }

    #[test]
    fn errors_name_the_place() {
        let err = format!("{:#}", parse(b"{\"results\": [", 0).unwrap_err());
        assert!(err.contains("line 1 column 13"), "{err}");
        let err = format!(
            "{:#}",
            parse(
                br#"{"format": "vernier-export", "version": 2, "sessions": []}"#,
                0
            )
            .unwrap_err()
        );
        assert!(err.contains("version 2 is not supported"), "{err}");
        let err = format!("{:#}", parse(b"[1, 2]", 0).unwrap_err());
        assert!(err.contains("neither a vernier export"), "{err}");
        let err = format!(
            "{:#}",
            parse(b"{\"results\": [{\"command\": \"a\", \"times\": []}]}", 0).unwrap_err()
        );
        assert!(err.contains("no times"), "{err}");
    }
}
