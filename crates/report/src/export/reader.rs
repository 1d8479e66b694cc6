//! Reading a vernier export document (docs/export-format.md), hyperfine's `--export-json`
//! output or cyclictest's results ([`super::cyclictest`]) into model records. An export is read as a stream: a serde visitor walks the
//! `sessions` array and hands each session on as soon as it is parsed, so memory holds one
//! session, not the file. hyperfine files hold one session and are read whole.
//!
//! The reader only parses; checking ([`vernier_model::validate`]) and storing are the caller's,
//! through the function each session is handed to.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;
use vernier_model::{
    validate, ConfigurationRecord, Environment, MetricInfo, OptionValue, Options, RunRecord,
    Rusage, SessionInfo, SessionStatus, Settings, StopReason, StoredConfiguration, StoredSession,
    Texts,
};

use super::cyclictest::{self, Output};
use super::{ReadError, SourceError, FORMAT, VERSION};

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A vernier export document.
    Export,
    /// hyperfine's `--export-json` output.
    Hyperfine,
    /// cyclictest's histogram output or `--json` output.
    Cyclictest(Output),
}

/// Bytes of a file's beginning from which [`sniff`] tells its format: the readers then read
/// the file once, from these bytes on.
pub const SNIFF_BYTES: usize = 64 * 1024;

/// The UTF-8 byte order mark that some editors (Notepad, PowerShell's `Out-File`) write at the
/// start of a text file. JSON forbids it, though a parser may ignore it (RFC 8259, section
/// 8.1); vernier skips it.
pub const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// `bytes` without a leading UTF-8 byte order mark.
pub fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes)
}

/// The top-level keys of a JSON object that tell the formats apart, as far as a prefix of the
/// document shows them, and the values of `format` and `version`.
#[derive(Default)]
struct TopKeys {
    keys: Vec<String>,
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
}

impl TopKeys {
    fn has(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k == key)
    }
}

struct TopKeysSeed<'a>(&'a mut TopKeys);

impl<'de> DeserializeSeed<'de> for TopKeysSeed<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopKeysSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            // Kept before its value, which may go on beyond the prefix.
            self.0.keys.push(key.clone());
            match key.as_str() {
                "format" => self.0.format = Some(map.next_value()?),
                "version" => self.0.version = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Which format a file is in, told from `prefix`, its first bytes (up to [`SNIFF_BYTES`], a
/// byte order mark included); `complete` when the prefix is the whole file. Nothing beyond the
/// prefix is read, so the file can then be read once, as a stream, by the reader of its format.
///
/// - JSON: an object whose top-level keys in the prefix include `format` (a vernier export,
///   its format name and version checked here), `results` (hyperfine), `thread` or
///   `rt_test_version:` (cyclictest) or `sessions` (an export whose format follows its
///   sessions, checked at its end). A syntax error within the prefix is named by line and
///   column.
/// - Text: cyclictest's histogram output when a line of the prefix is `# Histogram`, `# Min
///   Latencies: ...` or a status line `T: 0 ( 1234) P:90 I:200 ...`.
/// - Anything else is named ([`ReadError::NotImportable`]): CSV (vernier's own CSV export
///   among it), an SQLite database, compressed or other binary data, an empty file.
pub fn sniff(prefix: &[u8], complete: bool) -> Result<Kind, ReadError> {
    let bytes = without_bom(prefix);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // A prefix may end inside a character.
        Err(e) if e.error_len().is_none() && !complete => {
            std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return Err(ReadError::NotImportable(binary_kind(bytes))),
    };
    if text.contains('\0') {
        return Err(ReadError::NotImportable(binary_kind(bytes)));
    }
    let start = text.trim_start();
    match start.chars().next() {
        None if complete && text.is_empty() => Err(ReadError::NotImportable("empty".to_string())),
        None => Err(ReadError::NotImportable(
            "only white space at its start".to_string(),
        )),
        Some('{') => sniff_json_object(text, complete),
        Some(first @ ('[' | '"')) => {
            let mut de = serde_json::Deserializer::from_str(text);
            match IgnoredAny::deserialize(&mut de).and_then(|_| de.end()) {
                Err(e) if complete || !e.is_eof() => Err(ReadError::Syntax(e)),
                _ => Err(ReadError::NotImportable(format!(
                    "a JSON {}, not an object",
                    if first == '[' { "array" } else { "string" }
                ))),
            }
        }
        Some(_) => sniff_text(text, complete),
    }
}

/// The kind of a JSON object from its top-level keys (see [`sniff`]).
fn sniff_json_object(text: &str, complete: bool) -> Result<Kind, ReadError> {
    let mut top = TopKeys::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let read = TopKeysSeed(&mut top).deserialize(&mut de).and_then(|()| {
        if complete {
            de.end()
        } else {
            Ok(())
        }
    });
    match read {
        Ok(()) => {}
        // The prefix ends inside the document.
        Err(e) if e.is_eof() && !complete => {}
        Err(e) => return Err(ReadError::Syntax(e)),
    }
    if top.has("format") {
        // Its value may go on beyond the prefix: then it is checked at the end.
        if let Some(format) = top.format.filter(|f| f != FORMAT) {
            return Err(ReadError::UnknownFormat(format.to_string()));
        }
        match top.version {
            Some(v) if v.as_u64() == Some(u64::from(VERSION)) => {}
            Some(v) => return Err(ReadError::Version(v.to_string())),
            None if complete => return Err(ReadError::Version("missing".to_string())),
            // Checked at the end of the document.
            None => {}
        }
        return Ok(Kind::Export);
    }
    let cyclictest = top.has("rt_test_version:") || top.has("cmdline:");
    if top.has("results") {
        Ok(Kind::Hyperfine)
    } else if top.has("thread") && (cyclictest || top.has("rt_test_version") || top.has("cmdline"))
    {
        Ok(Kind::Cyclictest(Output::Json))
    } else if cyclictest && !complete {
        // cyclictest writes `thread` last.
        Ok(Kind::Cyclictest(Output::Json))
    } else if top.has("sessions") {
        // An export that names its format after its sessions: checked at its end.
        Ok(Kind::Export)
    } else {
        Err(ReadError::Neither)
    }
}

/// The kind of a text file: cyclictest's histogram output, or what else it is.
fn sniff_text(text: &str, complete: bool) -> Result<Kind, ReadError> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if !complete {
        // The last line may go on beyond the prefix.
        lines.pop();
    }
    if lines.iter().any(|l| cyclictest::is_marker(l)) {
        return Ok(Kind::Cyclictest(Output::Histogram));
    }
    let first = lines
        .first()
        .copied()
        .unwrap_or(text)
        .trim_end_matches('\r');
    let what = if first.starts_with("session_id,session_started_at_ns,") {
        "vernier's CSV export, which is for spreadsheets and pandas and cannot be imported \
         (`vernier export` without --format csv writes the JSON that moves sessions)"
            .to_string()
    } else if first.contains(',')
        && lines.get(1).is_none_or(|second| {
            second.trim_end_matches('\r').is_empty()
                || second.matches(',').count() == first.matches(',').count()
        })
    {
        "CSV (comma-separated values)".to_string()
    } else if first.trim_start().starts_with('<') {
        "HTML or XML".to_string()
    } else {
        let within = if complete {
            String::new()
        } else {
            format!(" in its first {} KiB", SNIFF_BYTES / 1024)
        };
        format!(
            "text but not cyclictest's output (no line '# Histogram', '# Min Latencies:' or \
             'T: 0 ( 1234) P:90 I:200 ...'{within})"
        )
    };
    Err(ReadError::NotImportable(what))
}

/// What binary data is, from its magic number.
fn binary_kind(bytes: &[u8]) -> String {
    const KINDS: [(&[u8], &str); 6] = [
        (
            b"SQLite format 3\0",
            "an SQLite database (`vernier merge FILE --into DB` copies the sessions of a vernier \
             database into another)",
        ),
        (
            b"\x1f\x8b",
            "gzip-compressed (decompress it on the way: `zcat FILE | vernier import -`)",
        ),
        (
            b"\xfd7zXZ\0",
            "xz-compressed (decompress it on the way: `xzcat FILE | vernier import -`)",
        ),
        (
            b"\x28\xb5\x2f\xfd",
            "zstd-compressed (decompress it on the way: `zstdcat FILE | vernier import -`)",
        ),
        (
            b"BZh",
            "bzip2-compressed (decompress it on the way: `bzcat FILE | vernier import -`)",
        ),
        (b"PK\x03\x04", "a ZIP archive (unpack it first)"),
    ];
    KINDS
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map_or_else(
            || "binary data (it holds a NUL byte or is not UTF-8 text)".to_string(),
            |(_, what)| (*what).to_string(),
        )
}

/// Reads an export document from `input` (without a byte order mark, [`without_bom`]), handing
/// each session to `each` in file order as soon as it is parsed, and returns the kernel
/// configuration texts (SHA-256 -> text). [`sniff`] it first: this pass checks the format and
/// version only at the end of the document (JSON does not order an object's fields). A
/// session's `fingerprint` is not read but computed from its environment, as a recording
/// computes it ([`vernier_model::Environment::fingerprint`]): what identifies an environment
/// is never taken on trust. An error of `each` ends the reading ([`ReadError::Sink`]).
pub fn read_export<E: Into<SourceError>>(
    input: impl Read,
    mut each: impl FnMut(StoredSession) -> Result<(), E>,
) -> Result<BTreeMap<String, String>, ReadError> {
    let mut failure = None;
    let mut sink = |s: StoredSession| -> Result<(), ()> {
        each(s).map_err(|e| {
            failure = Some(ReadError::Sink(e.into()));
        })
    };
    let mut de = serde_json::Deserializer::from_reader(input);
    let result = DocumentSeed {
        each: &mut sink as &mut Sink<'_>,
    }
    .deserialize(&mut de)
    .and_then(|doc| de.end().map(|()| doc));
    if let Some(f) = failure {
        return Err(f);
    }
    let doc = result.map_err(ReadError::Export)?;
    doc.check()?;
    Ok(doc.kernel_configs)
}

/// The fields of the document besides the sessions, as the visitor meets them.
#[derive(Default)]
struct Header {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
    sessions: bool,
    kernel_configs: BTreeMap<String, String>,
}

impl Header {
    fn check(&self) -> Result<(), ReadError> {
        match &self.format {
            Some(f) if f == FORMAT => {}
            Some(f) => return Err(ReadError::UnknownFormat(f.to_string())),
            None => return Err(ReadError::Export(de::Error::missing_field("format"))),
        }
        if self.version.as_ref().and_then(serde_json::Value::as_u64) != Some(u64::from(VERSION)) {
            return Err(ReadError::Version(
                self.version
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "missing".to_string()),
            ));
        }
        if !self.sessions {
            return Err(ReadError::Export(de::Error::missing_field("sessions")));
        }
        Ok(())
    }
}

/// A sink that failed: its error is kept by the caller, serde only learns that it stopped.
type Sink<'a> = dyn FnMut(StoredSession) -> Result<(), ()> + 'a;

const SINK_STOPPED: &str = "the import stopped";

struct DocumentSeed<'a, 'b> {
    each: &'a mut Sink<'b>,
}

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_, '_> {
    type Value = Header;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Header, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_, '_> {
    type Value = Header;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a vernier export document")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Header, A::Error> {
        let mut header = Header::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => header.format = Some(map.next_value()?),
                "version" => header.version = Some(map.next_value()?),
                "sessions" => {
                    map.next_value_seed(SessionsSeed {
                        each: &mut *self.each,
                    })?;
                    header.sessions = true;
                }
                "kernel_configs" => header.kernel_configs = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(header)
    }
}

struct SessionsSeed<'a, 'b> {
    each: &'a mut Sink<'b>,
}

impl<'de> DeserializeSeed<'de> for SessionsSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for SessionsSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of sessions")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(mut session) = seq.next_element::<StoredSession>()? {
            session.info.fingerprint = session.info.environment.fingerprint();
            (self.each)(session).map_err(|()| de::Error::custom(SINK_STOPPED))?;
        }
        Ok(())
    }
}

/// What one file brings: sessions and the kernel configuration texts they refer to.
#[derive(Debug, Default)]
pub struct Parsed {
    pub sessions: Vec<StoredSession>,
    /// SHA-256 (hex) -> text.
    pub kernel_configs: BTreeMap<String, String>,
    /// The times were stamped at parsing (hyperfine files and cyclictest's histogram output
    /// have none of their own).
    pub stamped: bool,
}

/// The sessions of a vernier export, a hyperfine or a cyclictest file held in memory, checked
/// ([`validate::check_sessions`]). `now_ns` stamps sessions that carry no time of their own.
/// For a large export, [`sniff`] and [`read_export`] on the file instead.
pub fn parse(bytes: &[u8], now_ns: i64) -> Result<Parsed, ReadError> {
    let kind = sniff(
        &bytes[..bytes.len().min(SNIFF_BYTES)],
        bytes.len() <= SNIFF_BYTES,
    )?;
    let bytes = without_bom(bytes);
    let parsed = match kind {
        Kind::Export => {
            let mut sessions = Vec::new();
            let kernel_configs = read_export(bytes, |s| {
                sessions.push(s);
                Ok::<(), SourceError>(())
            })?;
            Parsed {
                sessions,
                kernel_configs,
                stamped: false,
            }
        }
        Kind::Hyperfine => Parsed {
            sessions: vec![parse_hyperfine(bytes, now_ns)?],
            kernel_configs: BTreeMap::new(),
            stamped: true,
        },
        Kind::Cyclictest(output) => {
            let result = cyclictest::read(output, bytes)?;
            Parsed {
                sessions: vec![cyclictest::session(&result, now_ns)?],
                kernel_configs: BTreeMap::new(),
                stamped: cyclictest::times(&result).is_none(),
            }
        }
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
pub(super) struct IdHasher(Sha256);

impl IdHasher {
    pub(super) fn new() -> Self {
        IdHasher(Sha256::new())
    }

    pub(super) fn part(mut self, p: &[u8]) -> Self {
        self.0.update((p.len() as u64).to_le_bytes());
        self.0.update(p);
        self
    }

    /// A UUID version 8 ("custom") from the first 16 bytes of the digest.
    pub(super) fn id(self) -> Uuid {
        let digest = self.0.finalize();
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        uuid::Builder::from_custom_bytes(bytes).into_uuid()
    }
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
                values: BTreeMap::from([("time".to_string(), t)]),
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const HYPERFINE: &str = r#"{"results": [
        {"command": "a", "mean": 2, "times": [1.0, 3.0], "exit_codes": [0, 1]},
        {"command": "b", "times": [2.0], "parameters": {"n": 4}}
    ]}"#;

    fn sessions(text: &str, now_ns: i64) -> Vec<StoredSession> {
        parse(text.as_bytes(), now_ns).unwrap().sessions
    }

    /// The error with its causes, as the binary prints it.
    fn error(text: &[u8]) -> String {
        let e = parse(text, 0).unwrap_err();
        let mut out = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            out = format!("{out}: {s}");
            source = s.source();
        }
        out
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
        assert!(
            err.starts_with(
                "the file is a JSON array, not an object; import takes a vernier export"
            ),
            "{err}"
        );
        let err = error(br#"{"thread": 1}"#);
        assert!(err.contains("neither a vernier export"), "{err}");
        let err = error(b"{\"results\": [{\"command\": \"a\", \"times\": []}]}");
        assert!(
            err.contains("results[0] (command 'a'): field 'times' is empty"),
            "{err}"
        );
    }

    #[test]
    fn the_format_is_told_from_the_first_bytes() {
        let export = br#"{"format": "vernier-export", "version": 1, "sessions": [{"id": "#;
        // The first bytes of a large file: the document goes on beyond them.
        assert_eq!(sniff(export, false).unwrap(), Kind::Export);
        // Whole, the same bytes are a truncated document, named by line and column.
        let err = sniff(export, true).unwrap_err();
        assert!(matches!(err, ReadError::Syntax(_)), "{err}");
        assert!(matches!(
            sniff(br#"{"format": "vernier-export", "version": 7, "sessions": ["#, false),
            Err(ReadError::Version(v)) if v == "7"
        ));
        assert!(matches!(
            sniff(br#"{"format": "other", "#, false),
            Err(ReadError::UnknownFormat(_))
        ));
        // The format may follow the sessions, and is checked at the end of the document.
        assert_eq!(
            sniff(br#"{"sessions": [{"id": "00"#, false).unwrap(),
            Kind::Export
        );
        assert_eq!(
            sniff(br#"{"results": [{"command": "#, false).unwrap(),
            Kind::Hyperfine
        );
        // A syntax error within the first bytes is named there.
        let err = sniff(b"{\"results\": [1 2", false).unwrap_err();
        assert!(err.to_string().contains("invalid JSON"), "{err}");
        // A byte order mark is skipped, also before a character cut by the end of the prefix.
        let mut bom = UTF8_BOM.to_vec();
        bom.extend_from_slice(HYPERFINE.as_bytes());
        assert_eq!(sniff(&bom, true).unwrap(), Kind::Hyperfine);
        assert_eq!(
            sessions(std::str::from_utf8(&bom).unwrap(), 1)[0].info.id,
            sessions(HYPERFINE, 1)[0].info.id
        );
        let cut = "{\"results\": [{\"command\": \"é".as_bytes();
        assert_eq!(
            sniff(&cut[..cut.len() - 1], false).unwrap(),
            Kind::Hyperfine
        );
        // Other files are named.
        let named = |bytes: &[u8]| match sniff(bytes, true) {
            Err(ReadError::NotImportable(what)) => what,
            other => panic!("{other:?}"),
        };
        assert_eq!(named(b""), "empty");
        assert_eq!(
            named(b"a,b,c\n1,2,3\n4,5,6\n"),
            "CSV (comma-separated values)"
        );
        assert!(
            named(b"session_id,session_started_at_ns,tags\n").starts_with("vernier's CSV export")
        );
        assert!(named(b"SQLite format 3\0\x10\0").starts_with("an SQLite database"));
        assert!(named(b"\x1f\x8b\x08\0").starts_with("gzip-compressed"));
        assert!(named(b"\0\0\0\0").starts_with("binary data"));
        assert!(named(b"\xff\xfe{").starts_with("binary data"));
        assert!(named(b"<html>").starts_with("HTML or XML"));
        assert!(named(b"hello\n").starts_with("text but not cyclictest's output"));
    }

    #[test]
    fn a_fingerprint_is_computed_never_read() {
        let mut session = sessions(HYPERFINE, 5).remove(0);
        let fingerprint = session.info.fingerprint.clone();
        session.info.fingerprint = "0123456789abcdef".into();
        let document = crate::export::ExportDocument {
            format: crate::export::FORMAT.into(),
            version: crate::export::VERSION,
            sessions: vec![session],
            kernel_configs: BTreeMap::new(),
        };
        let parsed = parse(&serde_json::to_vec(&document).unwrap(), 0).unwrap();
        assert_eq!(parsed.sessions[0].info.fingerprint, fingerprint);
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
        // Times beyond the longest duration vernier takes, and times that add up beyond the
        // clock, are refused with the bound.
        let err = error(br#"{"results": [{"command": "a", "times": [1.0, 1e300]}]}"#);
        assert!(
            err.contains("field 'values.time' is 1e300, expected a positive duration in s of at most 1e9 (1e9 s)"),
            "{err}"
        );
        let err = error(br#"{"results": [{"command": "a", "times": [1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 1e9]}]}"#);
        assert!(
            err.contains("field 'times' adds up to 1e10 s from now"),
            "{err}"
        );
        assert!(parse(br#"{"results": [{"command": "a", "times": [1e9]}]}"#, 0).is_ok());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod stream_tests {
    use super::*;
    use crate::export::{writer, ExportDocument};

    #[test]
    fn sessions_are_handed_on_one_at_a_time_and_round_trip() {
        let hf = parse(
            br#"{"results": [{"command": "a", "times": [1.0, 3.0]}, {"command": "b", "times": [2.0]}]}"#,
            7,
        )
        .unwrap()
        .sessions;
        let mut second = hf[0].clone();
        second.info.id = Uuid::from_u128(2);
        for (i, c) in second.configurations.iter_mut().enumerate() {
            c.record.id = Uuid::from_u128(100 + i as u128);
            for (j, r) in c.runs.iter_mut().enumerate() {
                r.id = Uuid::from_u128(1000 + 10 * i as u128 + j as u128);
            }
        }
        let sessions = vec![hf[0].clone(), second];
        let whole = ExportDocument {
            format: crate::export::FORMAT.into(),
            version: crate::export::VERSION,
            sessions: sessions.clone(),
            kernel_configs: BTreeMap::new(),
        };
        let whole = serde_json::to_string_pretty(&whole).unwrap() + "\n";
        let ids: Vec<Uuid> = sessions.iter().map(|s| s.info.id).collect();
        let mut streamed = Vec::new();
        writer::json(
            &mut streamed,
            &ids,
            |id| Ok::<_, SourceError>(sessions.iter().find(|s| s.info.id == id).unwrap().clone()),
            |_| Ok(None),
        )
        .unwrap();
        assert_eq!(String::from_utf8(streamed.clone()).unwrap(), whole);
        assert_eq!(sniff(&streamed, true).unwrap(), Kind::Export);
        let mut got = Vec::new();
        read_export(&streamed[..], |s| {
            got.push(s);
            Ok::<(), SourceError>(())
        })
        .unwrap();
        assert_eq!(got, sessions);
        // A failing consumer stops the reading with its own error.
        let mut calls = 0;
        let err = read_export(&streamed[..], |_| {
            calls += 1;
            Err::<(), SourceError>("full".into())
        })
        .unwrap_err();
        assert!(matches!(err, ReadError::Sink(_)), "{err}");
        assert_eq!(calls, 1);
    }

    /// A hyperfine session whose first run carries two latency histograms and a load.
    fn session_with_histograms() -> StoredSession {
        let mut session = parse(
            br#"{"results": [{"command": "a", "times": [1.0, 3.0]}]}"#,
            7,
        )
        .unwrap()
        .sessions
        .remove(0);
        let run = &mut session.configurations[0].runs[0];
        for thread in 0..2 {
            let mut r = vernier_model::Recording::new();
            for i in 0..20_000u64 {
                r.record(2_000 + (i * 104_729) % 30_000);
            }
            r.record(1_500_000);
            r.miss(2);
            run.histograms
                .push(r.finish("latency", thread, Some(thread)));
        }
        run.load_cpu_ns = Some(42);
        session.configurations[0].record.loads = vec!["cpu".into()];
        session
    }

    #[test]
    fn histograms_round_trip_through_an_export() {
        let session = session_with_histograms();
        let mut text = Vec::new();
        writer::json(
            &mut text,
            &[session.info.id],
            |_| Ok::<_, SourceError>(session.clone()),
            |_| Ok(None),
        )
        .unwrap();
        let parsed = parse(&text, 0).unwrap();
        assert_eq!(parsed.sessions, vec![session.clone()]);
        let run = &parsed.sessions[0].configurations[0].runs[0];
        assert_eq!(run.histograms[1].count, 20_001);
        assert_eq!(run.histograms[1].quantile_ns(1.0), Some(1_500_000));
    }

    #[test]
    fn an_export_with_a_contradictory_histogram_is_refused() {
        let mut session = session_with_histograms();
        session.configurations[0].runs[0].histograms[1].overflows = 5;
        let document = ExportDocument {
            format: crate::export::FORMAT.into(),
            version: crate::export::VERSION,
            sessions: vec![session],
            kernel_configs: BTreeMap::new(),
        };
        let err = parse(&serde_json::to_vec(&document).unwrap(), 0)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("field 'histograms': latency thread 1 (CPU 1): 20001 samples"),
            "{err}"
        );
        assert!(err.contains("plus 5 overflows"), "{err}");
        let mut broken = serde_json::to_value(&document).unwrap();
        broken["sessions"][0]["configurations"][0]["runs"][0]["histograms"][0]["buckets"] =
            "AAAA".into();
        let err = parse(&serde_json::to_vec(&broken).unwrap(), 0).unwrap_err();
        let cause = std::error::Error::source(&err).unwrap().to_string();
        assert!(
            cause.contains("not an HdrHistogram V2 encoding"),
            "{err}: {cause}"
        );
    }

    #[test]
    fn format_and_version_may_follow_the_sessions() {
        let text = r#"{"sessions": [], "version": 1, "format": "vernier-export"}"#;
        assert!(parse(text.as_bytes(), 0).unwrap().sessions.is_empty());
        let text = r#"{"sessions": [], "version": 2, "format": "vernier-export"}"#;
        assert!(matches!(
            read_export(text.as_bytes(), |_| Ok::<(), SourceError>(())),
            Err(ReadError::Version(_))
        ));
    }
}
