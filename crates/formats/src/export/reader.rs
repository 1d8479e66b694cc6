//! Reading a vernier export document (docs/export-format.md) as a stream: a serde visitor walks
//! the `sessions` array and hands each session on as soon as it is parsed, so memory holds one
//! session, not the file.
//!
//! The reader only parses; checking ([`vernier_model::validate`]) and storing are the caller's,
//! through the function each session is handed to.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use vernier_model::StoredSession;

use super::{FORMAT, VERSION};
use crate::{ReadError, SourceError};

/// Reads an export document from `input` (without a byte order mark, [`crate::import::without_bom`]), handing
/// each session to `each` in file order as soon as it is parsed, and returns the kernel
/// configuration texts (SHA-256 -> text). [`crate::import::sniff`] it first: this pass checks the format and
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::export::{writer, ExportDocument};
    use crate::import::{parse, sniff, Kind};
    use uuid::Uuid;

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
