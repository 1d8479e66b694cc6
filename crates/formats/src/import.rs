//! What a file given to `vernier import` is, told from its first bytes ([`sniff`]), and every
//! session in a file held in memory, whatever its format ([`parse`]): a vernier export
//! ([`crate::export::reader`]), hyperfine's `--export-json` output ([`crate::hyperfine`]) or
//! cyclictest's results ([`crate::cyclictest`]).
//!
//! The readers only parse; checking ([`vernier_model::validate`]) and storing are the
//! caller's, except that [`parse`] applies the checks every import shares.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use vernier_model::{validate, StoredSession};

use crate::cyclictest::{self, Output};
use crate::export::reader::read_export;
use crate::export::{FORMAT, VERSION};
use crate::hyperfine::parse_hyperfine;
use crate::{ReadError, SourceError};

/// The record of a session that another tool measured, as an import stores it: completed,
/// tagged `source=TOOL`, with the fixed-n stopping rule (the tool's run count did not depend
/// on an interval) and nothing of vernier's own (findings, setup, monitors).
pub(crate) struct Imported {
    pub id: uuid::Uuid,
    pub started_at_ns: i64,
    pub ended_at_ns: i64,
    pub specs: Vec<String>,
    /// The tool's name, the value of the tag `source`.
    pub source: &'static str,
    pub note: String,
    pub environment: vernier_model::Environment,
}

impl Imported {
    pub fn info(self) -> vernier_model::SessionInfo {
        vernier_model::SessionInfo {
            id: self.id,
            started_at_ns: self.started_at_ns,
            ended_at_ns: Some(self.ended_at_ns),
            status: vernier_model::SessionStatus::Completed,
            suite: None,
            specs: self.specs,
            tags: BTreeMap::from([("source".to_string(), self.source.to_string())]),
            note: Some(self.note),
            settings: vernier_model::Settings {
                stopping_rule: vernier_model::StoppingRule::FixedN,
                ..vernier_model::Settings::default()
            },
            vernier_version: env!("CARGO_PKG_VERSION").to_string(),
            fingerprint: self.environment.fingerprint(),
            environment: self.environment,
            findings: Vec::new(),
            setup: Vec::new(),
            monitors: Vec::new(),
        }
    }
}

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
    // A prefix cut inside a number (`1.5e` of `1.5e-3`) reads as an invalid number, not as the
    // end of the input: it is read up to its last comma, after which only the end can come.
    let text = match text.rfind(',') {
        Some(comma) if !complete => &text[..=comma],
        _ => text,
    };
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use uuid::Uuid;

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
        let c1 = 1u64.to_le_bytes();
        let configuration = whole_file_id(&[b"hyperfine-configuration", bytes, &c1]);
        assert_eq!(s[0].configurations[1].record.id, configuration);
        // A run's id is the one its place gives, which the database need not store.
        let place = vernier_model::RunPlace {
            configuration,
            warmup: false,
            index: 0,
        };
        assert_eq!(s[0].configurations[1].runs[0].id, place.derived_id());
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
    fn hyperfine_runs_come_in_parts_in_the_file_order() {
        let bytes = HYPERFINE.as_bytes();
        let whole = sessions(HYPERFINE, 7).remove(0);
        let outline = crate::hyperfine::outline(bytes, bytes.len() as u64).unwrap();
        assert_eq!(outline.session_id(), whole.info.id);
        assert_eq!(outline.runs_count(), 3);
        let mut parts = Vec::new();
        outline
            .runs(bytes, 7, 1, |part| {
                parts.push(part);
                Ok(())
            })
            .unwrap();
        assert_eq!(parts.len(), 3);
        let runs: Vec<_> = parts
            .iter()
            .map(|p| {
                assert_eq!(p.info, whole.info);
                assert_eq!(p.configurations.len(), 1);
                p.configurations[0].runs[0].clone()
            })
            .collect();
        let expected: Vec<_> = whole
            .configurations
            .iter()
            .flat_map(|c| c.runs.clone())
            .collect();
        assert_eq!(runs, expected);
        // A file that is not as long as said (it changed while read) is refused.
        let err = crate::hyperfine::outline(bytes, bytes.len() as u64 + 1).unwrap_err();
        assert!(err.to_string().contains("cannot read the file"), "{err}");
        // An error of the consumer stops the reading, typed.
        let err = outline
            .runs(bytes, 7, 2, |_| Err("full".into()))
            .unwrap_err();
        assert!(matches!(err, ReadError::Sink(e) if e.to_string() == "full"));
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
        // Wherever the prefix ends, also inside a number.
        let numbers = br#"{"results": [{"command": "x", "times": [-1.5e-3, 0.25, 12E+2, 7]"#;
        for end in 14..numbers.len() {
            assert_eq!(
                sniff(&numbers[..end], false).unwrap(),
                Kind::Hyperfine,
                "{}",
                String::from_utf8_lossy(&numbers[..end])
            );
        }
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
