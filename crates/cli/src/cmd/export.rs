//! `vernier export`: sessions with their environment, configurations and every run, as the
//! versioned JSON document of docs/export-format.md, or as CSV with one row per run.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use vernier_model::StoredSession;
use vernier_store::Store;

use crate::cli::{ExportArgs, ExportFormat};
use crate::cmd::compare::{push_csv_row, resolve_selector};
use crate::db;

/// The value of the `format` field of an export document.
pub const FORMAT: &str = "vernier-export";
/// The version of the export format this build writes and reads.
pub const VERSION: u32 = 1;

/// The export document (docs/export-format.md).
#[derive(Debug, Serialize, Deserialize)]
pub struct ExportDocument {
    pub format: String,
    pub version: u32,
    pub sessions: Vec<StoredSession>,
    /// The kernel configuration texts the sessions' environments refer to
    /// (`kernel_config_sha256` -> text), so `env diff` works on imported sessions. Optional:
    /// absent in older exports, and readers that do not know it ignore it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kernel_configs: BTreeMap<String, String>,
}

pub fn export(args: ExportArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let store = db::open_for_reading(db_arg)?;
    let ids = match &args.selector {
        Some(selector) => resolve_selector(&store, selector)?,
        None => store.sessions()?.into_iter().map(|s| s.id).collect(),
    };
    let sessions = ids
        .into_iter()
        .map(|id| {
            store
                .load_session(id)
                .with_context(|| format!("cannot load session {id}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let bytes = match args.format {
        ExportFormat::Json => {
            let mut kernel_configs = BTreeMap::new();
            for sha in sessions
                .iter()
                .filter_map(|s| s.info.environment.kernel_config_sha256.as_ref())
            {
                if !kernel_configs.contains_key(sha) {
                    if let Some(text) = store.kernel_config(sha)? {
                        kernel_configs.insert(sha.clone(), text);
                    }
                }
            }
            let doc = ExportDocument {
                format: FORMAT.to_string(),
                version: VERSION,
                sessions,
                kernel_configs,
            };
            let mut text = serde_json::to_string_pretty(&doc)?;
            text.push('\n');
            text.into_bytes()
        }
        ExportFormat::Csv => csv(&sessions).into_bytes(),
    };
    match &args.output {
        Some(path) => crate::out::write_output(path, &bytes)?,
        None => crate::out::write_bytes(&bytes)?,
    }
    Ok(ExitCode::SUCCESS)
}

const CSV_HEADER: &str = "session_id,session_started_at_ns,tags,fingerprint,configuration_id,\
    benchmark,benchmark_version,options,metric,unit,higher_is_better,run_id,index,warmup,round,\
    preceding_executions,started_at_ns,ended_at_ns,value,other_values,user_cpu_ns,\
    system_cpu_ns,voluntary_cs,involuntary_cs,max_rss_bytes,foreign_cpu_ns,controller_cpu_ns\n";

/// One row per run, warmups included (column `warmup`), for pandas and spreadsheets.
/// `value` is the primary metric; other metrics go to `other_values` as `name=value;...`.
pub fn csv(sessions: &[StoredSession]) -> String {
    let mut out = String::from(CSV_HEADER);
    for s in sessions {
        let tags: Vec<String> = s
            .info
            .tags
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        for c in &s.configurations {
            let r = &c.record;
            for run in &c.runs {
                let value = run
                    .values
                    .get(&r.metric.name)
                    .map(|v| csv_number(*v))
                    .unwrap_or_default();
                let others: Vec<String> = run
                    .values
                    .iter()
                    .filter(|(k, _)| **k != r.metric.name)
                    .map(|(k, v)| format!("{k}={}", csv_number(*v)))
                    .collect();
                let fields = [
                    s.info.id.to_string(),
                    s.info.started_at_ns.to_string(),
                    tags.join(";"),
                    s.info.fingerprint.clone(),
                    r.id.to_string(),
                    r.benchmark.clone(),
                    r.benchmark_version.clone(),
                    r.options.label(),
                    r.metric.name.clone(),
                    r.metric.unit.clone(),
                    r.metric.higher_is_better.to_string(),
                    run.id.to_string(),
                    run.index.to_string(),
                    run.warmup.to_string(),
                    run.round.to_string(),
                    run.preceding_executions.to_string(),
                    run.started_at_ns.to_string(),
                    run.ended_at_ns.to_string(),
                    value,
                    others.join(";"),
                    run.rusage.user_cpu_ns.to_string(),
                    run.rusage.system_cpu_ns.to_string(),
                    run.rusage.voluntary_cs.to_string(),
                    run.rusage.involuntary_cs.to_string(),
                    run.rusage.max_rss_bytes.to_string(),
                    run.foreign_cpu_ns.to_string(),
                    run.controller_cpu_ns.to_string(),
                ];
                push_csv_row(&mut out, &fields);
            }
        }
    }
    out
}

/// A number as the shortest decimal that parses back to the same double (Rust's `Display`
/// and `LowerExp` of `f64` both print the shortest round-trip digits); an exponent for very
/// small or large magnitudes, where plain digits would run to hundreds of zeros.
fn csv_number(v: f64) -> String {
    if v == 0.0 || (1e-5..1e16).contains(&v.abs()) {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_has_one_name_per_field() {
        let names: Vec<&str> = CSV_HEADER.trim_end().split(',').collect();
        assert_eq!(names.len(), 27);
        assert!(names.iter().all(|n| !n.is_empty() && !n.contains(' ')));
    }

    #[test]
    fn csv_numbers_parse_back_bit_for_bit() {
        let tricky = [
            0.9555510602119553,
            0.1 + 0.2,
            13.0,
            -0.0,
            5e-324,
            2.2250738585072014e-308,
            2.225073858507201e-308,
            f64::MAX,
            f64::MIN_POSITIVE,
            1e-5,
            9.999999999999999e-6,
            1e16,
            9007199254740993.0,
            -123.456,
            1.0 / 3.0,
        ];
        for v in tricky {
            let text = csv_number(v);
            let back: f64 = text.parse().unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{v} printed as {text}");
        }
        assert_eq!(csv_number(13.0), "13");
        assert_eq!(csv_number(5e-324), "5e-324");
        assert_eq!(csv_number(0.9555510602119553), "0.9555510602119553");
    }
}
