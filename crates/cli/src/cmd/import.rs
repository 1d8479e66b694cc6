//! `vernier import FILE`: a vernier export document (docs/export-format.md) or hyperfine's
//! `--export-json` output, checked whole and stored in one transaction. A session already
//! present with the same content is skipped; with other content the import is refused.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use serde::de::IgnoredAny;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;
use vernier_model::{
    validate, ConfigurationRecord, Environment, MetricInfo, OptionValue, Options, RunRecord,
    Rusage, SessionInfo, SessionStatus, Settings, StopReason, StoredConfiguration, StoredSession,
};
use vernier_store::Store;

use crate::cli::ImportArgs;
use crate::cmd::export::{ExportDocument, FORMAT, VERSION};
use crate::db;
use crate::out::outln;

/// What one file brings: sessions and the kernel configuration texts they refer to.
#[derive(Debug, Default)]
pub struct Parsed {
    pub sessions: Vec<StoredSession>,
    /// SHA-256 (hex) -> text.
    pub kernel_configs: BTreeMap<String, String>,
    /// The times were stamped at parsing (hyperfine files have none of their own).
    pub stamped: bool,
}

pub fn import(args: ImportArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let path = &args.file;
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    // Everything is parsed and checked before the database is opened: a bad file changes
    // nothing.
    let mut parsed =
        parse(&bytes, now_ns()).with_context(|| format!("cannot import {}", path.display()))?;
    let mut store = db::open_for_writing(db_arg)?;
    if parsed.stamped {
        // A file imported before keeps the times of its first import, so that importing it
        // again finds the same content and is skipped.
        let stored: BTreeMap<_, _> = store
            .sessions()?
            .into_iter()
            .map(|s| (s.id, s.started_at_ns))
            .collect();
        for session in &mut parsed.sessions {
            if let Some(&first) = stored.get(&session.info.id) {
                shift_times(session, first - session.info.started_at_ns);
            }
        }
    }
    let report = store
        .import_sessions(&parsed.sessions, &parsed.kernel_configs)
        .with_context(|| format!("cannot import {}", path.display()))?;
    outln!(
        "imported {} session(s), skipped {} already present with the same content",
        report.imported,
        report.skipped
    );
    Ok(ExitCode::SUCCESS)
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Moves every time of `session` by `delta_ns`.
fn shift_times(session: &mut StoredSession, delta_ns: i64) {
    let info = &mut session.info;
    info.started_at_ns = info.started_at_ns.saturating_add(delta_ns);
    info.ended_at_ns = info.ended_at_ns.map(|t| t.saturating_add(delta_ns));
    for run in session.configurations.iter_mut().flat_map(|c| &mut c.runs) {
        run.started_at_ns = run.started_at_ns.saturating_add(delta_ns);
        run.ended_at_ns = run.ended_at_ns.saturating_add(delta_ns);
    }
}

/// The top-level fields that tell the formats apart; everything else is skipped unparsed.
#[derive(Deserialize)]
struct Probe {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
    results: Option<IgnoredAny>,
}

/// The sessions of a vernier export or a hyperfine file, checked
/// ([`validate::check_sessions`]). `now_ns` stamps hyperfine sessions, which carry no time of
/// their own.
pub fn parse(bytes: &[u8], now_ns: i64) -> Result<Parsed> {
    let text = std::str::from_utf8(bytes).context("the file is not UTF-8 text")?;
    // A first pass for syntax (serde_json names line and column of an error or a
    // truncation) that builds nothing, then one for the few fields that tell the formats
    // apart; the document is parsed into its types once, in linear time and memory.
    serde_json::from_str::<IgnoredAny>(text).context("invalid JSON")?;
    let neither = || {
        anyhow::anyhow!(
            "neither a vernier export (an object with \"format\": \"{FORMAT}\") nor hyperfine \
             --export-json output (an object with \"results\")"
        )
    };
    let probe: Probe = serde_json::from_str(text).map_err(|_| neither())?;
    let parsed = if let Some(format) = probe.format {
        if format != FORMAT {
            bail!("unknown format {format} (expected \"{FORMAT}\")");
        }
        if probe.version.as_ref().and_then(serde_json::Value::as_u64) != Some(u64::from(VERSION)) {
            bail!(
                "{FORMAT} version {} is not supported (this vernier reads version {VERSION})",
                probe
                    .version
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "missing".to_string())
            );
        }
        let doc: ExportDocument =
            serde_json::from_str(text).context("not a valid vernier export")?;
        Parsed {
            sessions: doc.sessions,
            kernel_configs: doc.kernel_configs,
            stamped: false,
        }
    } else if probe.results.is_some() {
        let doc: HyperfineExport =
            serde_json::from_str(text).context("not a valid hyperfine --export-json file")?;
        Parsed {
            sessions: vec![from_hyperfine(&doc, bytes, now_ns)?],
            kernel_configs: BTreeMap::new(),
            stamped: true,
        }
    } else {
        return Err(neither());
    };
    // The checks every import shares, whatever the format (the store applies them again).
    validate::check_sessions(&parsed.sessions)?;
    validate::check_kernel_configs(&parsed.kernel_configs)?;
    Ok(parsed)
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
    /// One per time; `null` for a run killed by a signal. Absent in files of hyperfine
    /// before 1.12.
    #[serde(default)]
    exit_codes: Option<Vec<Option<i32>>>,
    /// Values of `--parameter-scan` / `--parameter-list` parameters.
    #[serde(default)]
    parameters: BTreeMap<String, serde_json::Value>,
}

/// Ids derived from a SHA-256 of length-prefixed parts: the same file always gives the same
/// ids, which makes a repeated import a no-op. A prefix (the file) is hashed once and the
/// state cloned for each id below it, so deriving an id per run stays linear in the file.
#[derive(Clone)]
struct IdHasher(Sha256);

impl IdHasher {
    fn new() -> Self {
        IdHasher(Sha256::new())
    }

    fn part(mut self, p: &[u8]) -> Self {
        self.0.update((p.len() as u64).to_le_bytes());
        self.0.update(p);
        self
    }

    /// A UUID version 8 ("custom") from the first 16 bytes of the digest.
    fn id(self) -> Uuid {
        let digest = self.0.finalize();
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        uuid::Builder::from_custom_bytes(bytes).into_uuid()
    }
}

/// One session of the `command` benchmark: a configuration per command (and parameter
/// values), a measured run per time, metric `time` in seconds, lower is better.
fn from_hyperfine(doc: &HyperfineExport, bytes: &[u8], now_ns: i64) -> Result<StoredSession> {
    if doc.results.is_empty() {
        bail!("the hyperfine file has no results");
    }
    let session_id = IdHasher::new().part(b"hyperfine-session").part(bytes).id();
    let configuration_ids = IdHasher::new().part(b"hyperfine-configuration").part(bytes);
    let run_ids = IdHasher::new().part(b"hyperfine-run").part(bytes);
    let mut configurations = Vec::new();
    for (i, result) in doc.results.iter().enumerate() {
        let place = || format!("results[{i}] (command '{}')", result.command);
        if result.times.is_empty() {
            bail!("{}: field 'times' is empty", place());
        }
        if let Some(codes) = &result.exit_codes {
            if codes.len() != result.times.len() {
                bail!(
                    "{}: field 'exit_codes' has {} entries, 'times' {}; hyperfine writes one \
                     exit code per time",
                    place(),
                    codes.len(),
                    result.times.len()
                );
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
        for (j, &t) in result.times.iter().enumerate() {
            let run_index = (j as u64).to_le_bytes();
            // hyperfine records no timestamps: runs are laid end to end from the import time.
            // A non-positive time is refused by the shared checks; here it only must not
            // move the clock backwards.
            let duration_ns = (t * 1e9).round().max(0.0) as i64;
            runs.push(RunRecord {
                id: run_ids.clone().part(&run_index).id(),
                index: j as u32,
                warmup: false,
                round: 0,
                preceding_executions: j as u32,
                started_at_ns: start,
                ended_at_ns: start.saturating_add(duration_ns),
                values: BTreeMap::from([("time".to_string(), t)]),
                rusage: Rusage::default(),
                foreign_cpu_ns: 0,
                controller_cpu_ns: 0,
                monitors: None,
                setup_steps: Vec::new(),
            });
            start = start.saturating_add(duration_ns);
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
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use vernier_model::Recorder;

    const HYPERFINE: &str = r#"{"results": [
        {"command": "a", "mean": 2, "times": [1.0, 3.0], "exit_codes": [0, 1]},
        {"command": "b", "times": [2.0], "parameters": {"n": 4}}
    ]}"#;

    fn sessions(text: &str, now_ns: i64) -> Vec<StoredSession> {
        parse(text.as_bytes(), now_ns).unwrap().sessions
    }

    fn error(text: &[u8]) -> String {
        format!("{:#}", parse(text, 0).unwrap_err())
    }

    /// The ids as the first versions of vernier derived them, each from a hash of the whole
    /// file: the linear derivation must give the same ids, so files imported then are still
    /// recognised as present.
    fn whole_file_id(parts: &[&[u8]]) -> Uuid {
        let mut hasher = Sha256::new();
        for p in parts {
            hasher.update((p.len() as u64).to_le_bytes());
            hasher.update(p);
        }
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&hasher.finalize()[..16]);
        uuid::Builder::from_custom_bytes(bytes).into_uuid()
    }

    #[test]
    fn hyperfine_becomes_one_deterministic_session() {
        let s = sessions(HYPERFINE, 100);
        assert_eq!(s.len(), 1);
        let again = sessions(HYPERFINE, 999);
        assert_eq!(s[0].info.id, again[0].info.id);
        assert_eq!(
            s[0].configurations[0].runs[1].id,
            again[0].configurations[0].runs[1].id
        );
        let bytes = HYPERFINE.as_bytes();
        assert_eq!(s[0].info.id, whole_file_id(&[b"hyperfine-session", bytes]));
        let (c1, r0) = (1u64.to_le_bytes(), 0u64.to_le_bytes());
        assert_eq!(
            s[0].configurations[1].record.id,
            whole_file_id(&[b"hyperfine-configuration", bytes, &c1])
        );
        assert_eq!(
            s[0].configurations[1].runs[0].id,
            whole_file_id(&[b"hyperfine-run", bytes, &c1, &r0])
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
        let other = sessions(&HYPERFINE.replace("3.0", "3.5"), 100);
        assert_ne!(other[0].info.id, s[0].info.id);
    }

    #[test]
    fn errors_name_the_place() {
        let err = error(b"{\"results\": [");
        assert!(err.contains("line 1 column 13"), "{err}");
        let err = error(br#"{"format": "vernier-export", "version": 2, "sessions": []}"#);
        assert!(err.contains("version 2 is not supported"), "{err}");
        let err = error(b"[1, 2]");
        assert!(err.contains("neither a vernier export"), "{err}");
        let err = error(b"{\"results\": [{\"command\": \"a\", \"times\": []}]}");
        assert!(
            err.contains("results[0] (command 'a'): field 'times' is empty"),
            "{err}"
        );
    }

    #[test]
    fn hyperfine_files_hyperfine_could_not_write_are_refused() {
        let err =
            error(br#"{"results": [{"command": "a", "times": [1.0, 2.0], "exit_codes": [0]}]}"#);
        assert!(
            err.contains("results[0] (command 'a'): field 'exit_codes' has 1 entries, 'times' 2"),
            "{err}"
        );
        // Files of hyperfine before 1.12 have no exit codes at all.
        assert!(parse(br#"{"results": [{"command": "a", "times": [1.0]}]}"#, 0).is_ok());
        for bad in ["0.0", "-0.25"] {
            let text =
                format!(r#"{{"results": [{{"command": "sleep 1", "times": [1.0, {bad}]}}]}}"#);
            let err = error(text.as_bytes());
            assert!(err.contains("(command:command=sleep 1)"), "{err}");
            assert!(err.contains("measured run 1"), "{err}");
            assert!(
                err.contains(&format!(
                    "field 'values.time' is {}",
                    bad.parse::<f64>().unwrap()
                )),
                "{err}"
            );
            assert!(err.contains("expected a positive duration in s"), "{err}");
        }
    }

    /// Doubles that inexact parsing or printing gets wrong: halfway cases, subnormals, the
    /// extremes, integers beyond 2^53, and decimals of 17 significant digits.
    fn tricky_doubles() -> Vec<f64> {
        use rand::{Rng, SeedableRng};
        let mut v = vec![
            0.9555510602119553,
            0.1 + 0.2,
            1.0 / 3.0,
            2.0 / 3.0,
            5e-324,
            1e-323,
            2.2250738585072014e-308,
            2.225073858507201e-308,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            9007199254740993.0,
            9007199254740991.0,
            1e23,
            8.98846567431158e307,
            0.0,
            -0.0,
            1.0,
            -1.0,
            123456789012345680.0,
            4.35e-7,
        ];
        // Fixed seed: the same sample on every run.
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x0076_6572_6e69_6572);
        while v.len() < 6000 {
            let x = match v.len() % 3 {
                // Any bit pattern.
                0 => f64::from_bits(rng.random::<u64>()),
                // A 17-digit decimal of ordinary magnitude.
                1 => format!(
                    "{}e{}",
                    rng.random_range(1e16..1e17),
                    rng.random_range(-30..10)
                )
                .parse()
                .unwrap(),
                // Near a power of two, where neighbours differ in spacing.
                _ => {
                    let p = 2f64.powi(rng.random_range(-1000..1000));
                    f64::from_bits(p.to_bits().wrapping_add(rng.random_range(0..3)) - 1)
                }
            };
            if x.is_finite() {
                v.push(x);
            }
        }
        v
    }

    #[test]
    fn tricky_doubles_survive_child_store_export_import_bit_for_bit() {
        use vernier_engine::child::ChildReply;
        use vernier_model::monitor::{MonitorPoint, MonitorSeries, RunMonitorData, SeriesKind};
        use vernier_store::SqliteStore;

        let doubles = tricky_doubles();
        let dir = tempfile::tempdir().unwrap();
        let mut a = SqliteStore::open(&dir.path().join("a.db")).unwrap();
        let mut b = SqliteStore::open(&dir.path().join("b.db")).unwrap();
        let hf = sessions(HYPERFINE, 1_000);
        let mut session = hf[0].clone();
        session.configurations.truncate(1);
        let mut config = session.configurations.remove(0);
        let template = config.runs.remove(0);
        a.begin_session(&session.info).unwrap();
        a.add_configuration(session.info.id, &config.record)
            .unwrap();
        let mut sent = Vec::new();
        for (j, chunk) in doubles.chunks(100).enumerate() {
            let mut values: BTreeMap<String, f64> = chunk
                .iter()
                .enumerate()
                .map(|(k, v)| (format!("x{k:03}"), *v))
                .collect();
            values.insert("time".into(), chunk[0].abs().max(f64::MIN_POSITIVE));
            // The child protocol: JSON text through a pipe.
            let reply = serde_json::to_string(&ChildReply::Measured { values }).unwrap();
            let Ok(ChildReply::Measured { values }) = serde_json::from_str(&reply) else {
                panic!("{reply}");
            };
            let points = chunk
                .iter()
                .enumerate()
                .map(|(k, v)| MonitorPoint {
                    t_ns: k as i64,
                    value: *v,
                })
                .collect();
            let run = RunRecord {
                id: Uuid::new_v4(),
                index: j as u32,
                values,
                monitors: Some(RunMonitorData {
                    series: vec![MonitorSeries {
                        monitor: "m".into(),
                        metric: "x".into(),
                        unit: "count".into(),
                        kind: SeriesKind::Gauge,
                        points,
                    }],
                    summary: BTreeMap::from([("m.x".to_string(), chunk[1])]),
                    ..RunMonitorData::default()
                }),
                ..template.clone()
            };
            a.add_run(config.record.id, &run).unwrap();
            sent.push(run);
        }
        config.runs = sent;

        let export = |store: &SqliteStore| {
            let doc = ExportDocument {
                format: FORMAT.into(),
                version: VERSION,
                sessions: vec![store.load_session(session.info.id).unwrap()],
                kernel_configs: BTreeMap::new(),
            };
            serde_json::to_string_pretty(&doc).unwrap()
        };
        let text = export(&a);
        let parsed = parse(text.as_bytes(), 0).unwrap();
        b.import_sessions(&parsed.sessions, &parsed.kernel_configs)
            .unwrap();
        let back = b.load_session(session.info.id).unwrap();
        let mut checked = 0;
        for run in &config.runs {
            let got = back.configurations[0]
                .runs
                .iter()
                .find(|r| r.id == run.id)
                .unwrap();
            for (name, v) in &run.values {
                // SQLite keeps -0.0 as 0.0 (a REAL of integral value); every other double is
                // stored as it is.
                let want = if *v == 0.0 { 0.0f64 } else { *v };
                assert_eq!(got.values[name].to_bits(), want.to_bits(), "{name} {v:e}");
                checked += 1;
            }
            let (sa, sb) = (
                run.monitors.as_ref().unwrap(),
                got.monitors.as_ref().unwrap(),
            );
            for (pa, pb) in sa.series[0].points.iter().zip(&sb.series[0].points) {
                assert_eq!(pa.value.to_bits(), pb.value.to_bits(), "{:e}", pa.value);
                checked += 1;
            }
            assert_eq!(sa.summary["m.x"].to_bits(), sb.summary["m.x"].to_bits());
        }
        assert_eq!(checked, 2 * doubles.len() + config.runs.len());
        // And exporting the second database gives the same document.
        assert_eq!(export(&b), text);
    }
}
