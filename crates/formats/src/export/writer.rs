//! Writing the export document and the run CSV one session at a time: each session is loaded
//! when its turn comes, serialized and dropped, so memory holds one session, not the export.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};
use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, ProfileRecord, RunRecord, SessionInfo, StoredSession, Texts,
};

use super::{FORMAT, VERSION};
use crate::{SourceError, WriteError};

/// Writes the export document of the sessions `ids`, in that order, to `out`: the bytes of
/// `serde_json::to_string_pretty` of the whole [`super::ExportDocument`] and a line end, with
/// the kernel configuration texts (`kernel_config(sha256)`) the sessions refer to. `load`
/// gives one session at a time.
pub fn json<E: Into<SourceError>>(
    out: impl Write,
    ids: &[Uuid],
    load: impl FnMut(Uuid) -> Result<StoredSession, E>,
    kernel_config: impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<(), WriteError> {
    write_json(out, ids, load, None::<NoPages<E>>, kernel_config)
}

/// [`json`] with each configuration's runs read page by page while they are written, so that
/// memory holds a page of runs rather than a session (a session of a million runs takes
/// some 300 MB in memory): `load` gives a session without its runs (each configuration with
/// none), and `runs(session, configuration, each)` hands the runs of a configuration to
/// `each` in pages, in execution order. `each` returns `false` once the output failed, and
/// `runs` should then stop. The bytes are those of [`json`] of the whole sessions.
pub fn json_in_pages<E, R>(
    out: impl Write,
    ids: &[Uuid],
    load: impl FnMut(Uuid) -> Result<StoredSession, E>,
    runs: R,
    kernel_config: impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<(), WriteError>
where
    E: Into<SourceError>,
    R: FnMut(Uuid, Uuid, &mut dyn FnMut(Vec<RunRecord>) -> bool) -> Result<(), E>,
{
    write_json(out, ids, load, Some(runs), kernel_config)
}

/// The reader of runs page by page of [`json`], which has none: each session comes whole.
type NoPages<E> = fn(Uuid, Uuid, &mut dyn FnMut(Vec<RunRecord>) -> bool) -> Result<(), E>;

fn write_json<E, R>(
    out: impl Write,
    ids: &[Uuid],
    load: impl FnMut(Uuid) -> Result<StoredSession, E>,
    runs: Option<R>,
    kernel_config: impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<(), WriteError>
where
    E: Into<SourceError>,
    R: FnMut(Uuid, Uuid, &mut dyn FnMut(Vec<RunRecord>) -> bool) -> Result<(), E>,
{
    let doc = LazyDocument {
        ids,
        load: RefCell::new(load),
        runs: runs.map(RefCell::new),
        kernel_config: RefCell::new(kernel_config),
        kernel_configs: RefCell::new(BTreeSet::new()),
        error: RefCell::new(None),
    };
    let mut out = out;
    let written = serde_json::to_writer_pretty(&mut out, &doc);
    // An error of `load`, `runs` or `kernel_config` reaches serde as a message; the typed one
    // is kept.
    if let Some(e) = doc.error.into_inner() {
        return Err(e);
    }
    written?;
    out.write_all(b"\n")?;
    Ok(())
}

/// The export document whose sessions are loaded while it is serialized.
struct LazyDocument<'a, L, K, R> {
    ids: &'a [Uuid],
    load: RefCell<L>,
    /// Reads the runs page by page, when `load` gives sessions without them.
    runs: Option<RefCell<R>>,
    kernel_config: RefCell<K>,
    /// The SHA-256 of the kernel configurations the sessions written so far refer to.
    kernel_configs: RefCell<BTreeSet<String>>,
    error: RefCell<Option<WriteError>>,
}

impl<L, K, R> LazyDocument<'_, L, K, R> {
    fn fail<S: serde::ser::Error>(&self, e: WriteError) -> S {
        let message = e.to_string();
        *self.error.borrow_mut() = Some(e);
        S::custom(message)
    }
}

/// The `sessions` array of a [`LazyDocument`].
struct Sessions<'d, 'a, L, K, R>(&'d LazyDocument<'a, L, K, R>);

impl<L, K, R, E> Serialize for Sessions<'_, '_, L, K, R>
where
    L: FnMut(Uuid) -> Result<StoredSession, E>,
    K: FnMut(&str) -> Result<Option<String>, E>,
    R: FnMut(Uuid, Uuid, &mut dyn FnMut(Vec<RunRecord>) -> bool) -> Result<(), E>,
    E: Into<SourceError>,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let doc = self.0;
        let mut seq = serializer.serialize_seq(Some(doc.ids.len()))?;
        for &id in doc.ids {
            let loaded = (doc.load.borrow_mut())(id);
            let mut session = loaded.map_err(|e| {
                doc.fail::<S::Error>(WriteError::Load {
                    id,
                    source: e.into(),
                })
            })?;
            // Texts that a vernier before the rule of vernier_model::text stored raw are
            // written escaped, so every export imports.
            session.escape_controls();
            if let Some(sha) = &session.info.environment.kernel_config_sha256 {
                doc.kernel_configs.borrow_mut().insert(sha.clone());
            }
            match &doc.runs {
                None => seq.serialize_element(&session)?,
                Some(runs) => seq.serialize_element(&PagedSession {
                    info: &session.info,
                    configurations: PagedConfigurations {
                        doc,
                        runs,
                        session: &session,
                    },
                })?,
            }
        }
        seq.end()
    }
}

/// A session whose runs are read page by page while it is written: the fields, in their
/// order, of the derived `Serialize` of [`StoredSession`] and [`StoredConfiguration`], so that
/// the bytes are the same.
#[derive(Serialize)]
struct PagedSession<'s, C> {
    #[serde(flatten)]
    info: &'s SessionInfo,
    configurations: C,
}

/// The configurations of a [`PagedSession`].
struct PagedConfigurations<'d, 'a, 's, L, K, R> {
    doc: &'d LazyDocument<'a, L, K, R>,
    runs: &'d RefCell<R>,
    session: &'s StoredSession,
}

#[derive(Serialize)]
struct PagedConfiguration<'s, P> {
    #[serde(flatten)]
    record: &'s ConfigurationRecord,
    runs: P,
    #[serde(skip_serializing_if = "no_profiles")]
    profiles: &'s [ProfileRecord],
}

fn no_profiles(profiles: &&[ProfileRecord]) -> bool {
    profiles.is_empty()
}

/// The runs of one configuration of a [`PagedSession`], read page by page.
struct PagedRuns<'d, 'a, L, K, R> {
    doc: &'d LazyDocument<'a, L, K, R>,
    runs: &'d RefCell<R>,
    session: Uuid,
    configuration: Uuid,
}

impl<L, K, R, E> Serialize for PagedConfigurations<'_, '_, '_, L, K, R>
where
    R: FnMut(Uuid, Uuid, &mut dyn FnMut(Vec<RunRecord>) -> bool) -> Result<(), E>,
    E: Into<SourceError>,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let configurations = &self.session.configurations;
        let mut seq = serializer.serialize_seq(Some(configurations.len()))?;
        for c in configurations {
            seq.serialize_element(&PagedConfiguration {
                record: &c.record,
                runs: PagedRuns {
                    doc: self.doc,
                    runs: self.runs,
                    session: self.session.info.id,
                    configuration: c.record.id,
                },
                profiles: &c.profiles,
            })?;
        }
        seq.end()
    }
}

impl<L, K, R, E> Serialize for PagedRuns<'_, '_, L, K, R>
where
    R: FnMut(Uuid, Uuid, &mut dyn FnMut(Vec<RunRecord>) -> bool) -> Result<(), E>,
    E: Into<SourceError>,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Without a length: serde_json writes an empty sequence as `[]` either way.
        let mut seq = serializer.serialize_seq(None)?;
        let mut failed: Option<S::Error> = None;
        let read = (self.runs.borrow_mut())(self.session, self.configuration, &mut |mut page| {
            for run in &mut page {
                if failed.is_some() {
                    return false;
                }
                // As `json` escapes each whole session (vernier_model::text).
                run.escape_controls();
                if let Err(e) = seq.serialize_element(run) {
                    failed = Some(e);
                }
            }
            failed.is_none()
        });
        if let Some(e) = failed {
            return Err(e);
        }
        read.map_err(|e| {
            self.doc.fail::<S::Error>(WriteError::Load {
                id: self.session,
                source: e.into(),
            })
        })?;
        seq.end()
    }
}

impl<L, K, R, E> Serialize for LazyDocument<'_, L, K, R>
where
    L: FnMut(Uuid) -> Result<StoredSession, E>,
    K: FnMut(&str) -> Result<Option<String>, E>,
    R: FnMut(Uuid, Uuid, &mut dyn FnMut(Vec<RunRecord>) -> bool) -> Result<(), E>,
    E: Into<SourceError>,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut doc = serializer.serialize_struct("ExportDocument", 4)?;
        doc.serialize_field("format", FORMAT)?;
        doc.serialize_field("version", &VERSION)?;
        doc.serialize_field("sessions", &Sessions(self))?;
        let mut texts = BTreeMap::new();
        let shas = self.kernel_configs.borrow();
        for sha in shas.iter() {
            let text = (self.kernel_config.borrow_mut())(sha).map_err(|e| {
                self.fail::<S::Error>(WriteError::KernelConfig {
                    sha256: sha.clone(),
                    source: e.into(),
                })
            })?;
            if let Some(text) = text {
                texts.insert(sha.as_str(), text);
            }
        }
        // Absent when empty, as `ExportDocument` writes it.
        if texts.is_empty() {
            doc.skip_field("kernel_configs")?;
        } else {
            doc.serialize_field("kernel_configs", &texts)?;
        }
        doc.end()
    }
}

/// One CSV row per run: the columns of docs/export-format.md.
#[derive(Serialize)]
struct RunRow<'a> {
    session_id: Uuid,
    session_started_at_ns: i64,
    /// `key=value;...`.
    tags: &'a str,
    fingerprint: &'a str,
    configuration_id: Uuid,
    benchmark: &'a str,
    benchmark_version: &'a str,
    options: &'a str,
    metric: &'a str,
    unit: &'a str,
    higher_is_better: bool,
    run_id: Uuid,
    index: u32,
    warmup: bool,
    round: u32,
    preceding_executions: u32,
    started_at_ns: i64,
    ended_at_ns: i64,
    /// The primary metric.
    #[serde(serialize_with = "number")]
    value: Option<f64>,
    /// The other metrics, `name=value;...`.
    other_values: String,
    user_cpu_ns: i64,
    system_cpu_ns: i64,
    voluntary_cs: i64,
    involuntary_cs: i64,
    max_rss_bytes: i64,
    foreign_cpu_ns: i64,
    controller_cpu_ns: i64,
    /// The configuration's loads (canonical specs joined by `;`), empty without loads.
    loads: &'a str,
    /// Empty when no load ran.
    load_cpu_ns: Option<i64>,
}

/// The header of [`RunRow`], also written when there is no run.
const CSV_HEADER: [&str; 29] = [
    "session_id",
    "session_started_at_ns",
    "tags",
    "fingerprint",
    "configuration_id",
    "benchmark",
    "benchmark_version",
    "options",
    "metric",
    "unit",
    "higher_is_better",
    "run_id",
    "index",
    "warmup",
    "round",
    "preceding_executions",
    "started_at_ns",
    "ended_at_ns",
    "value",
    "other_values",
    "user_cpu_ns",
    "system_cpu_ns",
    "voluntary_cs",
    "involuntary_cs",
    "max_rss_bytes",
    "foreign_cpu_ns",
    "controller_cpu_ns",
    "loads",
    "load_cpu_ns",
];

fn number<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_str(&csv_number(*v)),
        None => s.serialize_none(),
    }
}

/// Writes one CSV row per run of the sessions `ids` (warmups included, column `warmup`), for
/// pandas and spreadsheets. `value` is the primary metric; other metrics go to
/// `other_values` as `name=value;...`. `load` gives one session at a time.
pub fn csv<E: Into<SourceError>>(
    out: impl Write,
    ids: &[Uuid],
    mut load: impl FnMut(Uuid) -> Result<StoredSession, E>,
) -> Result<(), WriteError> {
    let mut out = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out);
    out.write_record(CSV_HEADER)?;
    for &id in ids {
        let mut s = load(id).map_err(|e| WriteError::Load {
            id,
            source: e.into(),
        })?;
        // No raw escape sequence reaches a spreadsheet (vernier_model::text).
        s.escape_controls();
        let tags: Vec<String> = s
            .info
            .tags
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let tags = tags.join(";");
        for c in &s.configurations {
            let r = &c.record;
            let options = r.options.label();
            let loads = r.loads.join(";");
            for run in &c.runs {
                let others: Vec<String> = run
                    .values
                    .iter()
                    .filter(|(k, _)| **k != r.metric.name)
                    .map(|(k, v)| format!("{k}={}", csv_number(*v)))
                    .collect();
                out.serialize(RunRow {
                    session_id: s.info.id,
                    session_started_at_ns: s.info.started_at_ns,
                    tags: &tags,
                    fingerprint: &s.info.fingerprint,
                    configuration_id: r.id,
                    benchmark: &r.benchmark,
                    benchmark_version: &r.benchmark_version,
                    options: &options,
                    metric: &r.metric.name,
                    unit: &r.metric.unit,
                    higher_is_better: r.metric.higher_is_better,
                    run_id: run.id,
                    index: run.index,
                    warmup: run.warmup,
                    round: run.round,
                    preceding_executions: run.preceding_executions,
                    started_at_ns: run.started_at_ns,
                    ended_at_ns: run.ended_at_ns,
                    value: run.values.get(&r.metric.name).copied(),
                    other_values: others.join(";"),
                    user_cpu_ns: run.rusage.user_cpu_ns,
                    system_cpu_ns: run.rusage.system_cpu_ns,
                    voluntary_cs: run.rusage.voluntary_cs,
                    involuntary_cs: run.rusage.involuntary_cs,
                    max_rss_bytes: run.rusage.max_rss_bytes,
                    foreign_cpu_ns: run.foreign_cpu_ns,
                    controller_cpu_ns: run.controller_cpu_ns,
                    loads: &loads,
                    load_cpu_ns: run.load_cpu_ns,
                })?;
            }
        }
    }
    out.flush()?;
    Ok(())
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::export::ExportDocument;

    #[test]
    fn header_has_one_name_per_field() {
        assert!(CSV_HEADER.iter().all(|n| !n.is_empty() && !n.contains(' ')));
        // The header names the row's fields, in order.
        let mut out = csv::Writer::from_writer(Vec::new());
        let row = RunRow {
            session_id: Uuid::nil(),
            session_started_at_ns: 0,
            tags: "",
            fingerprint: "",
            configuration_id: Uuid::nil(),
            benchmark: "",
            benchmark_version: "",
            options: "",
            metric: "",
            unit: "",
            higher_is_better: false,
            run_id: Uuid::nil(),
            index: 0,
            warmup: false,
            round: 0,
            preceding_executions: 0,
            started_at_ns: 0,
            ended_at_ns: 0,
            value: None,
            other_values: String::new(),
            user_cpu_ns: 0,
            system_cpu_ns: 0,
            voluntary_cs: 0,
            involuntary_cs: 0,
            max_rss_bytes: 0,
            foreign_cpu_ns: 0,
            controller_cpu_ns: 0,
            loads: "",
            load_cpu_ns: None,
        };
        out.serialize(row).unwrap();
        let text = String::from_utf8(out.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), CSV_HEADER.join(","));
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

    /// The document written with runs read page by page is the one of the whole sessions,
    /// byte for byte, and a failing read of runs is the error, typed.
    #[test]
    fn runs_written_page_by_page_give_the_same_bytes() {
        let file = br#"{"results": [
            {"command": "a", "times": [0.1, 0.2, 0.3, 0.4, 0.5], "exit_codes": [0, 0, 0, 0, 0]},
            {"command": "b", "times": [1.5], "exit_codes": [0]}]}"#;
        let mut session = crate::hyperfine::parse_hyperfine(file, 1_000).unwrap();
        session.configurations[0].runs[0].warmup = true;
        // A configuration without runs: `[]` either way.
        let mut empty = session.configurations[1].clone();
        empty.record.id = Uuid::from_u128(7);
        empty.runs.clear();
        session.configurations.push(empty);
        let sessions = [session.clone(), session];
        let load = |id: Uuid| {
            sessions
                .iter()
                .find(|s| s.info.id == id)
                .cloned()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
        };
        let ids = [sessions[0].info.id];
        let mut whole = Vec::new();
        json(&mut whole, &ids, load, |_| Ok(None)).unwrap();
        let header = |id: Uuid| {
            load(id).map(|mut s| {
                for c in &mut s.configurations {
                    c.runs.clear();
                }
                s
            })
        };
        let mut pages = Vec::new();
        let mut paged = Vec::new();
        json_in_pages(
            &mut paged,
            &ids,
            header,
            |session, configuration, each: &mut dyn FnMut(Vec<RunRecord>) -> bool| {
                let runs = load(session)?
                    .configurations
                    .into_iter()
                    .find(|c| c.record.id == configuration)
                    .map(|c| c.runs)
                    .unwrap_or_default();
                for page in runs.chunks(2) {
                    pages.push(page.len());
                    if !each(page.to_vec()) {
                        break;
                    }
                }
                Ok(())
            },
            |_| Ok(None),
        )
        .unwrap();
        assert_eq!(pages, [2, 2, 1, 1]);
        assert_eq!(
            String::from_utf8(paged).unwrap(),
            String::from_utf8(whole).unwrap()
        );
        let err = json_in_pages(
            Vec::new(),
            &ids,
            header,
            |_, _, _: &mut dyn FnMut(Vec<RunRecord>) -> bool| {
                Err(std::io::Error::from(std::io::ErrorKind::NotFound))
            },
            |_| Ok(None),
        )
        .unwrap_err();
        assert!(matches!(err, WriteError::Load { .. }), "{err}");
    }

    #[test]
    fn the_streamed_document_is_the_whole_one() {
        let empty = |with_sha: bool| {
            let mut doc: ExportDocument = serde_json::from_str(
                r#"{"format": "vernier-export", "version": 1, "sessions": []}"#,
            )
            .unwrap();
            if with_sha {
                doc.kernel_configs
                    .insert("abc".into(), "CONFIG_X=y\n".into());
            }
            serde_json::to_string_pretty(&doc).unwrap() + "\n"
        };
        let mut out = Vec::new();
        json(
            &mut out,
            &[],
            |_| Err::<StoredSession, std::io::Error>(std::io::ErrorKind::NotFound.into()),
            |_| Ok(None),
        )
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), empty(false));
        // A failing load is the error, typed.
        let err = json(
            Vec::new(),
            &[Uuid::nil()],
            |_| Err::<StoredSession, std::io::Error>(std::io::ErrorKind::NotFound.into()),
            |_| Ok(None),
        )
        .unwrap_err();
        assert!(matches!(err, WriteError::Load { .. }), "{err}");
    }
}
