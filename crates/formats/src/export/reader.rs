//! Reading a vernier export document (docs/export-format.md) as a stream: serde visitors walk
//! the `sessions` array, each session's `configurations` and each configuration's `runs`, and
//! hand the runs on in parts of a bounded number as they are parsed ([`crate::parts`], as
//! hyperfine's times are handed on), so memory holds a session's outline (its information,
//! configurations and profiled runs) and one part of its runs, never the file nor a session's
//! runs.
//!
//! A store wants a session's outline before its runs, which the file gives after them (a
//! configuration's profiled runs follow its runs). An import therefore reads the file twice,
//! as it reads a hyperfine file: [`outline_export`] hands each session's runs on in parts, then
//! its outline; [`export_runs`] reads the file again and, given the outlines that the first
//! reading handed on, hands each outline on first and then the runs. [`read_export`] hands on
//! whole sessions, for documents small enough to hold.
//!
//! The reader only parses; checking ([`vernier_model::validate`]) and storing are the caller's,
//! through the function each part is handed to.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use vernier_model::profile::ProfileRecord;
use vernier_model::StoredSession;
use vernier_model::{ConfigurationRecord, RunRecord, SessionInfo, StoredConfiguration};

use super::{FORMAT, VERSION};
use crate::parts::{Parts, Place, TakesParts};
use crate::{ReadError, SourceError};

/// What a reading of an export hands on, in file order.
#[derive(Debug)]
pub enum Part {
    /// The outline of the session that follows ([`export_runs`]): as the first reading handed
    /// it on, before any of its runs.
    Session(StoredSession),
    /// Runs of configuration `configuration` (its index in the session's `configurations`):
    /// `part` is the session's information and that configuration with these runs and without
    /// its profiled runs.
    Runs {
        configuration: usize,
        part: StoredSession,
    },
    /// A session once read to its end ([`outline_export`]): its information and
    /// configurations with their profiled runs, but none of their runs, which were handed on
    /// before it.
    Outline(StoredSession),
}

/// Reads an export document from `input` (without a byte order mark,
/// [`crate::import::without_bom`]), handing each session to `each` in file order as soon as it
/// is parsed, and returns the kernel configuration texts (SHA-256 -> text). A session is held
/// whole: for a large file, [`outline_export`] and [`export_runs`]. An error of `each` ends the
/// reading ([`ReadError::Sink`]).
pub fn read_export<E: Into<SourceError>>(
    input: impl Read,
    mut each: impl FnMut(StoredSession) -> Result<(), E>,
) -> Result<BTreeMap<String, String>, ReadError> {
    let mut runs: Vec<Vec<RunRecord>> = Vec::new();
    outline_export(input, usize::MAX, |part| match part {
        Part::Runs {
            configuration,
            part,
        } => {
            if runs.len() <= configuration {
                runs.resize_with(configuration + 1, Vec::new);
            }
            let given = part.configurations.into_iter().flat_map(|c| c.runs);
            runs[configuration].extend(given);
            Ok(())
        }
        Part::Outline(mut session) => {
            for (c, r) in session.configurations.iter_mut().zip(runs.drain(..)) {
                c.runs = r;
            }
            each(session).map_err(Into::into)
        }
        Part::Session(_) => Ok(()),
    })
}

/// Reads an export document from `input` (without a byte order mark) once, handing on each
/// session's runs in parts of at most `per_part` ([`Part::Runs`]) and then the session's
/// outline ([`Part::Outline`]), and returns the kernel configuration texts (SHA-256 -> text).
/// [`crate::import::sniff`] it first: this pass checks the format and version only at the end
/// of the document (JSON does not order an object's fields). A session's `fingerprint` is not
/// read but computed from its environment, as a recording computes it
/// ([`vernier_model::Environment::fingerprint`]): what identifies an environment is never
/// taken on trust. An error of `each` ends the reading ([`ReadError::Sink`]).
///
/// Runs are handed on as they are read when the fields of their session and configuration
/// come before them, as vernier writes them; runs that come before those are held until the
/// fields that they need are read.
pub fn outline_export<E: Into<SourceError>>(
    input: impl Read,
    per_part: usize,
    mut each: impl FnMut(Part) -> Result<(), E>,
) -> Result<BTreeMap<String, String>, ReadError> {
    let mut each = |part| each(part).map_err(Into::into);
    read(input, per_part, None, &mut each)
}

/// Reads the export document that [`outline_export`] read once again, handing on each
/// session's outline as `outlines` gives it, in file order ([`Part::Session`]: those that the
/// first reading handed on), then its runs in parts of at most `per_part` ([`Part::Runs`]),
/// whatever the order of the fields in the file. Only the runs are read: the rest of each
/// session is the outline's.
pub fn export_runs<E: Into<SourceError>>(
    input: impl Read,
    per_part: usize,
    mut outlines: impl FnMut() -> Result<Option<StoredSession>, SourceError>,
    mut each: impl FnMut(Part) -> Result<(), E>,
) -> Result<(), ReadError> {
    let mut each = |part| each(part).map_err(Into::into);
    read(input, per_part, Some(&mut outlines), &mut each).map(|_| ())
}

type Each<'a> = dyn FnMut(Part) -> Result<(), SourceError> + 'a;
type Outlines<'a> = dyn FnMut() -> Result<Option<StoredSession>, SourceError> + 'a;

/// The consumer of a reading, and where its outlines come from on a second reading.
struct Sink<'a> {
    each: &'a mut Each<'a>,
    outlines: Option<&'a mut Outlines<'a>>,
}

impl TakesParts for Sink<'_> {
    fn part(&mut self, configuration: usize, part: StoredSession) -> Result<(), SourceError> {
        (self.each)(Part::Runs {
            configuration,
            part,
        })
    }
}

type State<'a> = Parts<Sink<'a>>;

fn read<'a>(
    input: impl Read,
    per_part: usize,
    outlines: Option<&'a mut Outlines<'a>>,
    each: &'a mut Each<'a>,
) -> Result<BTreeMap<String, String>, ReadError> {
    let mut parts = Parts::new(per_part, Sink { each, outlines });
    let mut de = serde_json::Deserializer::from_reader(input);
    let result = DocumentSeed { parts: &mut parts }
        .deserialize(&mut de)
        .and_then(|doc| de.end().map(|()| doc));
    if let Some(e) = parts.take_error() {
        return Err(ReadError::Sink(e));
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

struct DocumentSeed<'p, 'a> {
    parts: &'p mut State<'a>,
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
                        parts: &mut *self.parts,
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

struct SessionsSeed<'p, 'a> {
    parts: &'p mut State<'a>,
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
        while seq
            .next_element_seed(SessionSeed {
                parts: &mut *self.parts,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// The session's information from its fields other than `configurations`, its fingerprint
/// computed (see [`outline_export`]).
fn session_info(fields: Map<String, Value>) -> Result<SessionInfo, serde_json::Error> {
    let mut info = SessionInfo::deserialize(Value::Object(fields))?;
    info.fingerprint = info.environment.fingerprint();
    Ok(info)
}

/// Adds field `key` of an object read as fields: a second occurrence is an error, as serde's
/// derived readers make it.
fn add_field<'de, A: MapAccess<'de>>(
    fields: &mut Map<String, Value>,
    key: String,
    map: &mut A,
) -> Result<(), A::Error> {
    if fields.contains_key(&key) {
        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
    }
    let value = map.next_value::<Value>()?;
    fields.insert(key, value);
    Ok(())
}

/// One element of `sessions`.
struct SessionSeed<'p, 'a> {
    parts: &'p mut State<'a>,
}

impl<'de> DeserializeSeed<'de> for SessionSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for SessionSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct StoredSession")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let parts = self.parts;
        if let Some(outlines) = parts.each().outlines.as_mut() {
            // The second reading: the outline is the first reading's, only the runs are read.
            let outline = match outlines() {
                Ok(Some(outline)) => outline,
                Ok(None) => {
                    return Err(de::Error::custom(
                        "the file has more sessions than when it was first read: it changed \
                         meanwhile",
                    ))
                }
                Err(e) => return Err(parts.fail(e)),
            };
            let given = (parts.each().each)(Part::Session(outline.clone()));
            given.map_err(|e| parts.fail(e))?;
            while let Some(key) = map.next_key::<String>()? {
                if key == "configurations" {
                    map.next_value_seed(ConfigurationsSeed {
                        parts: &mut *parts,
                        info: Some(&outline.info),
                        known: Some(&outline.configurations),
                    })?;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            return Ok(());
        }
        let mut fields = Map::new();
        let mut configurations = None;
        while let Some(key) = map.next_key::<String>()? {
            if key != "configurations" {
                add_field(&mut fields, key, &mut map)?;
                continue;
            }
            if configurations.is_some() {
                return Err(de::Error::duplicate_field("configurations"));
            }
            // The runs are handed on as they come once the session's fields are read, as
            // vernier writes them; otherwise they are held until they are.
            let early = session_info(fields.clone()).ok();
            configurations = Some(map.next_value_seed(ConfigurationsSeed {
                parts: &mut *parts,
                info: early.as_ref(),
                known: None,
            })?);
        }
        let Some(configurations) = configurations else {
            return Err(de::Error::missing_field("configurations"));
        };
        let info = session_info(fields).map_err(de::Error::custom)?;
        let mut configurations: Vec<StoredConfiguration> =
            configurations.into_iter().flatten().collect();
        for (index, c) in configurations.iter_mut().enumerate() {
            let runs = std::mem::take(&mut c.runs);
            if !runs.is_empty() {
                let place = Place {
                    index,
                    info: &info,
                    record: &c.record,
                };
                parts.hand_on(&place, runs)?;
            }
        }
        let outline = StoredSession {
            info,
            configurations,
        };
        let given = (parts.each().each)(Part::Outline(outline));
        given.map_err(|e| parts.fail(e))
    }
}

/// A session's `configurations`: on the first reading (`known` is `None`), each
/// configuration without the runs handed on, with those held when `info` was not known yet.
struct ConfigurationsSeed<'p, 'a, 'i> {
    parts: &'p mut State<'a>,
    /// The session's information, if known when the runs come.
    info: Option<&'i SessionInfo>,
    /// The configurations of the first reading, on the second.
    known: Option<&'i [StoredConfiguration]>,
}

impl<'de> DeserializeSeed<'de> for ConfigurationsSeed<'_, '_, '_> {
    type Value = Vec<Option<StoredConfiguration>>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ConfigurationsSeed<'_, '_, '_> {
    type Value = Vec<Option<StoredConfiguration>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of configurations")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut configurations = Vec::new();
        loop {
            let index = configurations.len();
            let known = self.known.map(|known| known.get(index).map(|c| &c.record));
            let seed = ConfigurationSeed {
                parts: &mut *self.parts,
                index,
                info: self.info,
                known,
            };
            match seq.next_element_seed(seed)? {
                Some(c) => configurations.push(c),
                None => return Ok(configurations),
            }
        }
    }
}

/// Configuration `index` of a session.
struct ConfigurationSeed<'p, 'a, 'i> {
    parts: &'p mut State<'a>,
    index: usize,
    info: Option<&'i SessionInfo>,
    /// On the second reading, the configuration's record as the first one read it (`None`: a
    /// configuration that the first reading did not find).
    known: Option<Option<&'i ConfigurationRecord>>,
}

impl<'de> DeserializeSeed<'de> for ConfigurationSeed<'_, '_, '_> {
    type Value = Option<StoredConfiguration>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ConfigurationSeed<'_, '_, '_> {
    type Value = Option<StoredConfiguration>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct StoredConfiguration")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let index = self.index;
        if let Some(known) = self.known {
            let Some(record) = known else {
                return Err(de::Error::custom(format_args!(
                    "the file has a configuration {index} that it did not have when it was \
                     first read: it changed meanwhile"
                )));
            };
            let info = self.info.ok_or_else(|| de::Error::custom("no session"))?;
            while let Some(key) = map.next_key::<String>()? {
                if key == "runs" {
                    let place = Place {
                        index,
                        info,
                        record,
                    };
                    map.next_value_seed(RunsSeed {
                        parts: &mut *self.parts,
                        place: &place,
                    })?;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            return Ok(None);
        }
        let mut fields = Map::new();
        let (mut runs, mut held, mut profiles) = (false, Vec::new(), None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "runs" => {
                    if std::mem::replace(&mut runs, true) {
                        return Err(de::Error::duplicate_field("runs"));
                    }
                    let record = ConfigurationRecord::deserialize(Value::Object(fields.clone()));
                    match (self.info, record) {
                        (Some(info), Ok(record)) => {
                            let place = Place {
                                index,
                                info,
                                record: &record,
                            };
                            map.next_value_seed(RunsSeed {
                                parts: &mut *self.parts,
                                place: &place,
                            })?;
                        }
                        // Fields that the runs need follow them: held until they are read.
                        _ => held = map.next_value::<Vec<RunRecord>>()?,
                    }
                }
                "profiles" => {
                    if profiles.is_some() {
                        return Err(de::Error::duplicate_field("profiles"));
                    }
                    profiles = Some(map.next_value::<Vec<ProfileRecord>>()?);
                }
                _ => add_field(&mut fields, key, &mut map)?,
            }
        }
        if !runs {
            return Err(de::Error::missing_field("runs"));
        }
        let record =
            ConfigurationRecord::deserialize(Value::Object(fields)).map_err(de::Error::custom)?;
        if let Some(info) = self.info.filter(|_| !held.is_empty()) {
            let place = Place {
                index,
                info,
                record: &record,
            };
            self.parts.hand_on(&place, std::mem::take(&mut held))?;
        }
        Ok(Some(StoredConfiguration {
            record,
            runs: held,
            profiles: profiles.unwrap_or_default(),
        }))
    }
}

/// A configuration's `runs`, handed on in parts.
struct RunsSeed<'p, 'a, 'r> {
    parts: &'p mut State<'a>,
    place: &'r Place<'r>,
}

impl<'de> DeserializeSeed<'de> for RunsSeed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RunsSeed<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of runs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(run) = seq.next_element::<RunRecord>()? {
            self.parts.push(self.place, run)?;
        }
        self.parts.flush(self.place)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::export::{writer, ExportDocument};
    use crate::import::{parse, sniff, Kind};
    use serde_json::Value;
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

    /// An export's runs are handed on in parts as they are read, then each session's outline;
    /// a second reading given those outlines hands them on first and the same parts after,
    /// whatever the order of the fields in the file.
    #[test]
    fn runs_are_handed_on_in_parts_before_the_outline_and_after_it_on_a_second_reading() {
        let times: Vec<String> = (0..7).map(|i| format!("{}.5", i + 1)).collect();
        let session = parse(
            format!(
                r#"{{"results": [{{"command": "a", "times": [{}]}}, {{"command": "b", "times": [2.0]}}]}}"#,
                times.join(", ")
            )
            .as_bytes(),
            7,
        )
        .unwrap()
        .sessions
        .remove(0);
        let mut text = Vec::new();
        writer::json(
            &mut text,
            &[session.info.id],
            |_| Ok::<_, SourceError>(session.clone()),
            |_| Ok(None),
        )
        .unwrap();
        // The same document with every object's fields in alphabetical order: a session's
        // `configurations` before its `id`, a configuration's `runs` before `stop_reason`.
        let sorted = serde_json::to_vec(&serde_json::from_slice::<Value>(&text).unwrap()).unwrap();
        for text in [&text, &sorted] {
            let mut first = Vec::new();
            outline_export(&text[..], 3, |part| {
                first.push(part);
                Ok::<(), SourceError>(())
            })
            .unwrap();
            let sizes: Vec<(usize, usize)> = first
                .iter()
                .filter_map(|p| match p {
                    Part::Runs {
                        configuration,
                        part,
                    } => Some((*configuration, part.configurations[0].runs.len())),
                    _ => None,
                })
                .collect();
            assert_eq!(sizes, [(0, 3), (0, 3), (0, 1), (1, 1)]);
            let Some(Part::Outline(outline)) = first.last() else {
                panic!("{first:?}");
            };
            let mut without_runs = session.clone();
            for c in &mut without_runs.configurations {
                c.runs.clear();
            }
            assert_eq!(outline, &without_runs);
            let mut outlines = vec![outline.clone()].into_iter();
            let mut second = Vec::new();
            export_runs(
                &text[..],
                3,
                || Ok(outlines.next()),
                |part| {
                    second.push(part);
                    Ok::<(), SourceError>(())
                },
            )
            .unwrap();
            assert!(matches!(&second[0], Part::Session(s) if s == outline));
            let runs = |parts: &[Part]| -> Vec<StoredSession> {
                parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Runs { part, .. } => Some(part.clone()),
                        _ => None,
                    })
                    .collect()
            };
            assert_eq!(runs(&second), runs(&first));
            // A file with more sessions than the first reading found changed meanwhile.
            let err =
                export_runs(&text[..], 3, || Ok(None), |_| Ok::<(), SourceError>(())).unwrap_err();
            assert!(
                std::error::Error::source(&err)
                    .unwrap()
                    .to_string()
                    .contains("it changed meanwhile"),
                "{err}"
            );
        }
        let err = outline_export(
            &br#"{"format": "vernier-export", "version": 1, "sessions": [{"configurations": [], "configurations": []}]}"#[..],
            3,
            |_| Ok::<(), SourceError>(()),
        )
        .unwrap_err();
        let cause = std::error::Error::source(&err).unwrap().to_string();
        assert!(
            cause.contains("duplicate field `configurations`"),
            "{cause}"
        );
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
