//! hyperfine's `--export-json` output (hyperfine's `src/export/json.rs`) as one vernier
//! session of the `command` benchmark.
//!
//! A file is read as a stream, twice, so that memory stays bounded whatever its number of
//! times: [`outline`] reads it once for what the session's header needs (the commands,
//! parameters, counts, exit codes and total time of each result) and for the hash its ids
//! derive from, and checks it; [`Outline::runs`] reads it again and hands the runs on in parts.
//! Only the outline is kept between the two: some bytes per result, nothing per time.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufReader, Read};

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use uuid::Uuid;
use vernier_model::{
    ConfigurationRecord, Environment, MetricInfo, MetricName, OptionValue, Options, RunRecord,
    RunValues, Rusage, StopReason, StoredConfiguration, StoredSession, Texts,
};

use crate::ids::IdHasher;
use crate::import::Imported;
use crate::parts::{Parts, Place};
use crate::{ReadError, SourceError};

/// What the first reading of a hyperfine file learns ([`outline`]): enough to write the
/// session's header and configurations, and to know that every run is valid, without holding
/// a single time.
#[derive(Debug, Clone)]
pub struct Outline {
    ids: FileIds,
    results: Vec<ResultOutline>,
}

/// The ids of a file's records: each a hash of the file's bytes and of the record's place.
#[derive(Clone)]
struct FileIds {
    session: Uuid,
    configurations: IdHasher,
}

impl fmt::Debug for FileIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileIds")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl FileIds {
    /// The id of configuration `i`; its runs' ids are those their places give
    /// ([`vernier_model::RunPlace::derived_id`]).
    fn configuration(&self, i: usize) -> Uuid {
        let index = (i as u64).to_le_bytes();
        self.configurations.clone().part(&index).id()
    }
}

/// One element of `results`, without its times.
#[derive(Debug, Clone, Default)]
struct ResultOutline {
    command: String,
    /// Values of `--parameter-scan` / `--parameter-list` parameters.
    parameters: BTreeMap<String, serde_json::Value>,
    times: u64,
    /// How many exit codes the file gives (`None`: no field `exit_codes`, as in files of
    /// hyperfine before 1.12), and how many of them are not 0 (`null` for a run killed by a
    /// signal).
    exit_codes: Option<u64>,
    failed: u64,
    /// The times added up, seconds, as the message of times beyond the clock names them.
    sum_s: f64,
    /// The runs laid end to end, nanoseconds: where the last one ends after the first began.
    span_ns: i128,
    /// The first time that is no duration vernier stores: its index, value and where its run
    /// starts after the first began.
    invalid: Option<(u64, f64, i64)>,
}

/// The metric every hyperfine run holds, seconds, lower is better.
fn metric() -> MetricInfo {
    MetricInfo {
        name: "time".to_string(),
        unit: "s".to_string(),
        higher_is_better: false,
    }
}

/// A time's duration as a run's length, nanoseconds. A non-positive time, or one beyond
/// `validate::MAX_DURATION_S`, is refused by the shared checks; here it only must not move the
/// clock backwards.
fn duration_ns(t: f64) -> i64 {
    (t.clamp(0.0, vernier_model::validate::MAX_DURATION_S) * 1e9).round() as i64
}

/// Reads a hyperfine file of `len` bytes (a byte order mark excluded) once, as a stream: its
/// outline, and the hash of its bytes that the ids derive from. A file that is not `len` bytes
/// long (it changed meanwhile) is an error.
pub fn outline(input: impl Read, len: u64) -> Result<Outline, ReadError> {
    let hashed = Hashing {
        inner: input,
        session: IdHasher::new().part(b"hyperfine-session").begin(len),
        configurations: IdHasher::new().part(b"hyperfine-configuration").begin(len),
        read: 0,
    };
    let mut reader = BufReader::with_capacity(1 << 16, hashed);
    let mut results = Vec::new();
    {
        let mut de = serde_json::Deserializer::from_reader(&mut reader);
        Document(Pass::<NoSink>::Outline(&mut results))
            .deserialize(&mut de)
            .and_then(|()| de.end())
            .map_err(ReadError::HyperfineJson)?;
    }
    // Whatever follows the document's end was read by `end`, which accepts only white space.
    let hashed = reader.into_inner();
    if hashed.read != len {
        return Err(ReadError::Io(std::io::Error::other(format!(
            "the file changed while it was read: {} bytes, expected {len}",
            hashed.read
        ))));
    }
    Ok(Outline {
        ids: FileIds {
            session: hashed.session.id(),
            configurations: hashed.configurations,
        },
        results,
    })
}

/// The one session of a hyperfine `--export-json` file (`bytes`, whole: the ids derive from
/// it), not yet checked: a session of the `command` benchmark with a configuration per command
/// (and parameter values), a measured run per time, metric `time` in seconds, lower is better.
/// hyperfine records no timestamps: runs are laid end to end from `now_ns`. A large file is
/// read as a stream instead ([`outline`], [`Outline::runs`]).
pub fn parse_hyperfine(bytes: &[u8], now_ns: i64) -> Result<StoredSession, ReadError> {
    let outline = outline(bytes, bytes.len() as u64)?;
    let mut session = outline.session(now_ns)?;
    outline.runs(bytes, now_ns, usize::MAX, |part| {
        for part in part.configurations {
            let position = part.record.position as usize;
            session.configurations[position].runs.extend(part.runs);
        }
        Ok(())
    })?;
    Ok(session)
}

impl Outline {
    /// The session's id.
    pub fn session_id(&self) -> Uuid {
        self.ids.session
    }

    /// How many runs the file holds.
    pub fn runs_count(&self) -> u64 {
        self.results.iter().map(|r| r.times).sum()
    }

    /// The session of the file, its runs laid end to end from `now_ns`, with its
    /// configurations but none of their runs ([`Outline::runs`] reads them), checked as far as
    /// hyperfine could have written it and every run as [`vernier_model::validate`] checks it.
    pub fn session(&self, now_ns: i64) -> Result<StoredSession, ReadError> {
        if self.results.is_empty() {
            return Err(ReadError::Hyperfine(
                "the hyperfine file has no results".into(),
            ));
        }
        let mut configurations = Vec::with_capacity(self.results.len());
        let mut ended = now_ns;
        for (i, result) in self.results.iter().enumerate() {
            let place = || format!("results[{i}] (command '{}')", result.command);
            if result.times == 0 {
                return Err(ReadError::Hyperfine(format!(
                    "{}: field 'times' is empty",
                    place()
                )));
            }
            if let Some(codes) = result.exit_codes.filter(|&n| n != result.times) {
                return Err(ReadError::Hyperfine(format!(
                    "{}: field 'exit_codes' has {codes} entries, 'times' {}; hyperfine writes \
                     one exit code per time",
                    place(),
                    result.times
                )));
            }
            // The runs one after another must end within the clock's range (year 2262).
            let Some(end) = i64::try_from(i128::from(now_ns) + result.span_ns).ok() else {
                return Err(ReadError::Hyperfine(format!(
                    "{}: field 'times' adds up to {:e} s from now, beyond the year 2262 that \
                     nanoseconds since 1970 reach",
                    place(),
                    result.sum_s
                )));
            };
            ended = ended.max(end);
            configurations.push(self.configuration(i));
        }
        let mut session = StoredSession {
            info: Imported {
                id: self.ids.session,
                started_at_ns: now_ns,
                ended_at_ns: ended,
                specs: self
                    .results
                    .iter()
                    .map(|r| format!("command:command={}", r.command))
                    .collect(),
                source: "hyperfine",
                note: "imported from hyperfine --export-json".to_string(),
                environment: Environment::default(),
            }
            .info(),
            configurations,
        };
        // A command or parameter of several lines is recorded escaped (vernier_model::text).
        session.escape_controls();
        // A time that is no duration: named by the shared checks, as they name any run, from
        // the one run that holds it.
        for (i, result) in self.results.iter().enumerate() {
            if let Some((j, t, offset_ns)) = result.invalid {
                let configuration = self.ids.configuration(i);
                let mut part = StoredSession {
                    info: session.info.clone(),
                    configurations: vec![session.configurations[i].clone()],
                };
                part.configurations[0].runs = vec![run(
                    configuration,
                    &"time".into(),
                    j,
                    t,
                    now_ns.saturating_add(offset_ns),
                )];
                vernier_model::validate::check_session(&part)?;
            }
        }
        Ok(session)
    }

    /// Configuration `i`, without runs.
    fn configuration(&self, i: usize) -> StoredConfiguration {
        let result = &self.results[i];
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
        let failed = result.failed;
        StoredConfiguration {
            record: ConfigurationRecord {
                id: self.ids.configuration(i),
                position: i as u32,
                benchmark: "command".to_string(),
                benchmark_version: "hyperfine".to_string(),
                options: Options(options),
                metric: metric(),
                // hyperfine runs a fixed number of times; it has no stopping rule.
                secondary_metrics: Vec::new(),
                loads: Vec::new(),
                stop_reason: Some(StopReason::MaxRuns),
                converged: false,
                error: (failed > 0).then(|| {
                    format!(
                        "{failed} of {} runs exited with non-zero status",
                        result.times
                    )
                }),
            },
            runs: Vec::new(),
            profiles: Vec::new(),
        }
    }

    /// Reads the file again (`input`, the same bytes that [`outline`] read) and hands its runs
    /// to `each`, laid end to end from `now_ns` as [`Outline::session`] lays them, in parts of
    /// at most `per_part` runs: each part is the session with the configuration whose runs
    /// they are, in the file's order. An error of `each` stops the reading
    /// ([`ReadError::Sink`]).
    pub fn runs(
        &self,
        input: impl Read,
        now_ns: i64,
        per_part: usize,
        mut each: impl FnMut(StoredSession) -> Result<(), SourceError>,
    ) -> Result<(), ReadError> {
        let header = self.session(now_ns)?;
        let mut sink = RunSink {
            outline: self,
            header,
            now_ns,
            parts: Parts::new(per_part, |_, part| each(part)),
        };
        let mut de =
            serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, input));
        let read = Document(Pass::Runs(&mut sink))
            .deserialize(&mut de)
            .and_then(|()| de.end());
        if let Some(e) = sink.parts.take_error() {
            return Err(ReadError::Sink(e));
        }
        read.map_err(ReadError::HyperfineJson)
    }
}

/// Run `j` of configuration `configuration` (its id), with the id its place gives; its value is
/// named `time` (one name, shared by every run).
fn run(configuration: Uuid, time: &MetricName, j: u64, t: f64, start: i64) -> RunRecord {
    let place = vernier_model::RunPlace {
        configuration,
        warmup: false,
        index: j as u32,
    };
    RunRecord {
        id: place.derived_id(),
        index: j as u32,
        warmup: false,
        round: 0,
        preceding_executions: j as u32,
        started_at_ns: start,
        ended_at_ns: start.saturating_add(duration_ns(t)),
        values: RunValues::one(time.clone(), t),
        rusage: Rusage::default(),
        foreign_cpu_ns: 0,
        controller_cpu_ns: 0,
        load_cpu_ns: None,
        histograms: Vec::new(),
        monitors: None,
        setup_steps: Vec::new(),
        setup_changed: Vec::new(),
    }
}

/// A reader that hashes what it reads into the two id hashers.
struct Hashing<R> {
    inner: R,
    session: IdHasher,
    configurations: IdHasher,
    read: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for hasher in [&mut self.session, &mut self.configurations] {
            hasher.update(&buf[..n]);
        }
        self.read += n as u64;
        Ok(n)
    }
}

/// The first reading hands on no runs.
type NoSink = fn(usize, StoredSession) -> Result<(), SourceError>;

/// What a reading of the file does with it.
enum Pass<'a, 'b, F> {
    /// Outlines the results.
    Outline(&'a mut Vec<ResultOutline>),
    /// Hands the runs on.
    Runs(&'a mut RunSink<'b, F>),
}

/// The second reading's runs, gathered into parts.
struct RunSink<'a, F> {
    outline: &'a Outline,
    header: StoredSession,
    now_ns: i64,
    parts: Parts<F>,
}

/// The document: an object with `results` (hyperfine's `--export-json`; fields vernier does
/// not use, such as each result's mean and stddev, are skipped).
struct Document<'a, 'b, F>(Pass<'a, 'b, F>);

impl<'de, F: FnMut(usize, StoredSession) -> Result<(), SourceError>> DeserializeSeed<'de>
    for Document<'_, '_, F>
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(usize, StoredSession) -> Result<(), SourceError>> Visitor<'de>
    for Document<'_, '_, F>
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct HyperfineExport")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut results = false;
        while let Some(key) = map.next_key::<String>()? {
            if key != "results" {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            if results {
                return Err(de::Error::duplicate_field("results"));
            }
            results = true;
            map.next_value_seed(Results(&mut self.0))?;
        }
        if !results {
            return Err(de::Error::missing_field("results"));
        }
        Ok(())
    }
}

/// The `results` array.
struct Results<'p, 'a, 'b, F>(&'p mut Pass<'a, 'b, F>);

impl<'de, F: FnMut(usize, StoredSession) -> Result<(), SourceError>> DeserializeSeed<'de>
    for Results<'_, '_, '_, F>
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(usize, StoredSession) -> Result<(), SourceError>> Visitor<'de>
    for Results<'_, '_, '_, F>
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq
            .next_element_seed(HyperfineResult {
                pass: &mut *self.0,
                index: i,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }
}

/// Element `index` of `results`.
struct HyperfineResult<'p, 'a, 'b, F> {
    pass: &'p mut Pass<'a, 'b, F>,
    index: usize,
}

impl<'de, F: FnMut(usize, StoredSession) -> Result<(), SourceError>> DeserializeSeed<'de>
    for HyperfineResult<'_, '_, '_, F>
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(usize, StoredSession) -> Result<(), SourceError>> Visitor<'de>
    for HyperfineResult<'_, '_, '_, F>
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct HyperfineResult")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut outline = ResultOutline::default();
        let (mut command, mut times, mut exit_codes, mut parameters) = (false, false, false, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "command" => {
                    seen::<A::Error>(&mut command, "command")?;
                    outline.command = map.next_value()?;
                }
                "times" => {
                    seen::<A::Error>(&mut times, "times")?;
                    match self.pass {
                        Pass::Outline(_) => map.next_value_seed(TimesOutline(&mut outline))?,
                        Pass::Runs(ref mut sink) => {
                            map.next_value_seed(TimesRuns {
                                sink: &mut **sink,
                                index: self.index,
                            })?;
                        }
                    }
                }
                "exit_codes" => {
                    seen::<A::Error>(&mut exit_codes, "exit_codes")?;
                    if let Some(codes) = map.next_value::<Option<ExitCodes>>()? {
                        outline.exit_codes = Some(codes.count);
                        outline.failed = codes.failed;
                    }
                }
                "parameters" => {
                    seen::<A::Error>(&mut parameters, "parameters")?;
                    outline.parameters = map.next_value()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !command {
            return Err(de::Error::missing_field("command"));
        }
        if !times {
            return Err(de::Error::missing_field("times"));
        }
        if let Pass::Outline(results) = self.pass {
            results.push(outline);
        }
        Ok(())
    }
}

/// Marks field `name` seen: a second occurrence is an error, as serde's derived readers make
/// it.
fn seen<E: de::Error>(field: &mut bool, name: &'static str) -> Result<(), E> {
    if std::mem::replace(field, true) {
        Err(E::duplicate_field(name))
    } else {
        Ok(())
    }
}

/// Exit codes, counted: how many, and how many not 0.
struct ExitCodes {
    count: u64,
    failed: u64,
}

impl<'de> Deserialize<'de> for ExitCodes {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Counting;
        impl<'de> Visitor<'de> for Counting {
            type Value = ExitCodes;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ExitCodes, A::Error> {
                let mut codes = ExitCodes {
                    count: 0,
                    failed: 0,
                };
                // `null` for a run killed by a signal.
                while let Some(code) = seq.next_element::<Option<i32>>()? {
                    codes.count += 1;
                    codes.failed += u64::from(code != Some(0));
                }
                Ok(codes)
            }
        }
        d.deserialize_seq(Counting)
    }
}

/// The times of a result in the first reading: counted, added up and checked.
struct TimesOutline<'a>(&'a mut ResultOutline);

impl<'de> DeserializeSeed<'de> for TimesOutline<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for TimesOutline<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let outline = self.0;
        let metric = metric();
        let name = MetricName::from("time");
        while let Some(t) = seq.next_element::<f64>()? {
            if outline.invalid.is_none()
                && vernier_model::validate::check_run_values(
                    &metric,
                    &RunValues::one(name.clone(), t),
                )
                .is_err()
            {
                // Where its run starts, while it is still within the clock; a time beyond it
                // is named by the sum of the times.
                let offset = i64::try_from(outline.span_ns).unwrap_or(i64::MAX);
                outline.invalid = Some((outline.times, t, offset));
            }
            outline.times += 1;
            outline.sum_s += t;
            outline.span_ns += i128::from(duration_ns(t));
        }
        Ok(())
    }
}

/// The times of result `index` in the second reading: runs, handed on in parts.
struct TimesRuns<'s, 'a, F> {
    sink: &'s mut RunSink<'a, F>,
    index: usize,
}

impl<'de, F: FnMut(usize, StoredSession) -> Result<(), SourceError>> DeserializeSeed<'de>
    for TimesRuns<'_, '_, F>
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(usize, StoredSession) -> Result<(), SourceError>> Visitor<'de>
    for TimesRuns<'_, '_, F>
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let sink = self.sink;
        let i = self.index;
        let expected = sink.outline.results.get(i).map_or(0, |r| r.times);
        let configuration = sink.outline.ids.configuration(i);
        let time = MetricName::from("time");
        let Some(header) = sink.header.configurations.get(i) else {
            return Err(de::Error::custom(format!(
                "results[{i}] was not there when the file was first read: it changed meanwhile"
            )));
        };
        let place = Place {
            index: i,
            info: &sink.header.info,
            record: &header.record,
        };
        let (mut j, mut start) = (0u64, sink.now_ns);
        while let Some(t) = seq.next_element::<f64>()? {
            let record = run(configuration, &time, j, t, start);
            start = record.ended_at_ns;
            sink.parts.push(&place, record)?;
            j += 1;
        }
        if j != expected {
            return Err(de::Error::custom(format!(
                "results[{i}] has {j} times, {expected} when the file was first read: it changed \
                 meanwhile"
            )));
        }
        sink.parts.flush(&place)
    }
}
