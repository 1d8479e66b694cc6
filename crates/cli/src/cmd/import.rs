//! `vernier import FILE`: a vernier export document (docs/export-format.md), hyperfine's
//! `--export-json` output (`vernier_formats::hyperfine`) or cyclictest's histogram or
//! `--json` output (`vernier_formats::cyclictest`), checked whole and stored in one
//! transaction. A session already present with the same content is skipped; with other content
//! the import is refused. `-` is standard input.
//!
//! The input is read once, as a stream, whatever it is (a file, standard input, a pipe, a FIFO,
//! the shell's `<(...)`): its first bytes tell its format (`vernier_formats::import::sniff`),
//! and the reader of that format goes on from them. An export is read twice
//! (`vernier_formats::export::reader`): the first reading checks every session, its runs part
//! by part as they come and its outline (all of it but its runs) at its end, before the
//! database is opened (a bad file changes nothing and takes no lock), and keeps each outline
//! in an unnamed temporary file; the second stores each session's outline, then its runs some
//! thousands at a time, in one transaction (a failure stores none). Memory holds a session's
//! outline and one part of its runs, whatever the number of runs in the file or in one of its
//! sessions; a run repeated in another part of the file is refused by the database's keys. For
//! that second pass a regular file is read again through the descriptor opened once
//! (and refused if it changed meanwhile), and any other input from the copy of its bytes that
//! the first pass kept in an unnamed temporary file. A hyperfine file is read twice as well,
//! the first time for what its session's header needs and the hash its ids derive from, the
//! second for its runs, stored some thousands at a time in one transaction: memory is bounded
//! whatever its number of times. cyclictest's JSON is read whole into memory, its histogram
//! output line by line.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::{bail, Context, Result};
use vernier_formats::export::reader::{export_runs, outline_export, Part};
use vernier_formats::import::{sniff, without_bom, Kind, SNIFF_BYTES};
use vernier_formats::{cyclictest, hyperfine, ReadError, SourceError};
use vernier_model::text::plural;
use vernier_model::{validate, StoredSession};
use vernier_store::{ImportReport, Store};

use crate::cli::ImportArgs;
use crate::db;
use crate::out::{outln, printable};

/// The largest file read whole into memory (cyclictest's JSON), far beyond real ones:
/// cyclictest's JSON of `-h 400` over two threads is 5 KB and each non-empty bucket adds some
/// 20 bytes.
const WHOLE_LIMIT_BYTES: u64 = 256 << 20;

pub fn import(args: ImportArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let path = &args.file;
    let name = if path == Path::new("-") {
        "standard input".to_string()
    } else {
        printable(&path.display().to_string()).into_owned()
    };
    let context = || format!("cannot import {name}");
    let input = Input::open(path).with_context(|| format!("cannot read {name}"))?;
    let report = match sniff(&input.prefix, input.complete).with_context(context)? {
        Kind::Export => import_export(input, &name, db_arg)?,
        Kind::Hyperfine => import_hyperfine(input, &name, db_arg)?,
        Kind::Cyclictest(output) => {
            let result = match output {
                cyclictest::Output::Json => {
                    let bytes = input.read_whole().with_context(context)?;
                    cyclictest::read(output, without_bom(&bytes))
                }
                cyclictest::Output::Histogram => cyclictest::read(output, input.stream()),
            }
            .with_context(context)?;
            let session = cyclictest::session(&result, now_ns()).with_context(context)?;
            let report = store_cyclictest(session, db_arg).with_context(context)?;
            if let Some(problem) = cyclictest::unreadable_times(&result) {
                eprintln!(
                    "warning: {name}: {problem}; the session is dated at its first import \
                     (its note says so)"
                );
            }
            report
        }
    };
    outln!(
        "imported {}, skipped {} already present with the same content",
        plural(report.imported, "session"),
        report.skipped
    );
    Ok(ExitCode::SUCCESS)
}

/// The input of an import, opened once, with its first bytes read.
struct Input {
    file: File,
    /// The first bytes (up to [`SNIFF_BYTES`]), which tell the format; every reader reads
    /// them first, then the rest of `file`.
    prefix: Vec<u8>,
    /// The input ended within `prefix`.
    complete: bool,
    /// A regular file, which can be read again: where it was when opened.
    regular: Option<Snapshot>,
}

/// Where a regular file's bytes start in its descriptor (standard input redirected from a file
/// may have been read into already) and its size and modification time when it was opened.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Snapshot {
    start: u64,
    len: u64,
    modified: Option<SystemTime>,
}

impl Snapshot {
    fn of(file: &File) -> std::io::Result<Option<Self>> {
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Ok(None);
        }
        let mut file = file;
        Ok(Some(Snapshot {
            start: file.stream_position()?,
            len: meta.len(),
            modified: meta.modified().ok(),
        }))
    }
}

impl Input {
    fn open(path: &Path) -> std::io::Result<Self> {
        let file = if path == Path::new("-") {
            use std::os::fd::AsFd;
            File::from(std::io::stdin().as_fd().try_clone_to_owned()?)
        } else {
            File::open(path)?
        };
        let regular = Snapshot::of(&file)?;
        let mut prefix = Vec::with_capacity(SNIFF_BYTES);
        (&file).take(SNIFF_BYTES as u64).read_to_end(&mut prefix)?;
        Ok(Input {
            complete: prefix.len() < SNIFF_BYTES,
            file,
            prefix,
            regular,
        })
    }

    /// The input from its first byte after a byte order mark, read on from the prefix.
    fn stream(&self) -> impl Read + '_ {
        without_bom(&self.prefix).chain(&self.file)
    }

    /// Whether a regular file is still what it was when it was opened (its size and
    /// modification time): an import stores what it checked, or nothing.
    fn unchanged(&self, name: &str) -> Result<()> {
        if let Some(snapshot) = self.regular {
            if Snapshot::of(&self.file)?.map(|now| Snapshot {
                start: snapshot.start,
                ..now
            }) != Some(snapshot)
            {
                bail!(
                    "{name} changed while it was imported; nothing was imported (import it \
                     once it is written)"
                );
            }
        }
        Ok(())
    }

    /// The whole input, for the formats that are read whole.
    fn read_whole(self) -> Result<Vec<u8>, ReadError> {
        let mut bytes = self.prefix;
        let room = (WHOLE_LIMIT_BYTES + 1).saturating_sub(bytes.len() as u64);
        (&self.file)
            .take(room)
            .read_to_end(&mut bytes)
            .map_err(ReadError::Io)?;
        if bytes.len() as u64 > WHOLE_LIMIT_BYTES {
            return Err(ReadError::TooLarge {
                what: "a cyclictest JSON file".to_string(),
                limit_bytes: WHOLE_LIMIT_BYTES,
            });
        }
        Ok(bytes)
    }
}

/// A reader that keeps a copy of what it reads in `copy`, for inputs that can be read once.
struct Tee<R> {
    inner: R,
    copy: Option<File>,
    /// Why the copy could not be written.
    failed: Option<std::io::Error>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(copy) = &mut self.copy {
            if let Err(e) = copy.write_all(&buf[..n]) {
                let kind = e.kind();
                self.failed = Some(e);
                return Err(kind.into());
            }
        }
        Ok(n)
    }
}

/// How many runs of an export are read and stored at once: memory holds this many runs, and a
/// session's outline (its information, configurations and profiled runs), whatever the number
/// of runs in the file or in one of its sessions.
const EXPORT_RUNS_PER_PART: usize = 10_000;

/// Checks every session of an export before the database is opened, then stores them in one
/// transaction, reading the input once (see the module documentation).
fn import_export(input: Input, name: &str, db_arg: Option<&Path>) -> Result<ImportReport> {
    let context = || format!("cannot import {name}");
    let temporary = |what: &str| {
        format!(
            "cannot create a temporary file in {} for {what} of {name} (set TMPDIR to a \
             writable directory)",
            std::env::temp_dir().display()
        )
    };
    let copy = match input.regular {
        Some(_) => None,
        None => Some(
            tempfile::tempfile()
                .with_context(|| temporary("the bytes, which can be read only once,"))?,
        ),
    };
    let mut tee = Tee {
        inner: input.stream(),
        copy,
        failed: None,
    };
    // The outline of each session (all but its runs), kept for the second reading, which
    // stores a session's outline before its runs while the file gives it after them.
    let mut outlines =
        BufWriter::new(tempfile::tempfile().with_context(|| temporary("the outlines"))?);
    // Everything is parsed and checked before the database is opened.
    let mut check = validate::FileCheck::new();
    let mut runs = 0;
    let checked = outline_export(
        BufReader::with_capacity(1 << 16, &mut tee),
        EXPORT_RUNS_PER_PART,
        |part| -> Result<(), SourceError> {
            match part {
                Part::Runs { part, .. } => {
                    check.part(&part)?;
                    runs += part
                        .configurations
                        .iter()
                        .map(|c| c.runs.len())
                        .sum::<usize>();
                }
                Part::Outline(session) => {
                    check.session(&session)?;
                    serde_json::to_writer(&mut outlines, &session)?;
                    outlines.write_all(b"\n")?;
                }
                Part::Session(_) => {}
            }
            Ok(())
        },
    );
    if let Some(e) = tee.failed.take() {
        return Err(anyhow::Error::new(e).context(format!(
            "cannot keep the bytes of {name} in a temporary file in {}",
            std::env::temp_dir().display()
        )));
    }
    let kernel_configs = checked.with_context(context)?;
    validate::check_kernel_configs(&kernel_configs).with_context(context)?;
    let mut outlines = outlines
        .into_inner()
        .map_err(|e| e.into_error())
        .and_then(|mut file| file.rewind().map(|()| file))
        .with_context(|| format!("cannot keep the outlines of {name} in a temporary file"))?;
    let second: Box<dyn Read + '_> = match (tee.copy.take(), input.regular) {
        (Some(mut copy), _) => {
            copy.rewind()
                .with_context(|| format!("cannot read the temporary copy of {name}"))?;
            Box::new(copy)
        }
        (None, Some(snapshot)) => {
            let bom = (input.prefix.len() - without_bom(&input.prefix).len()) as u64;
            let mut file = &input.file;
            file.seek(SeekFrom::Start(snapshot.start + bom))
                .with_context(|| format!("cannot read {name} again"))?;
            Box::new(file)
        }
        (None, None) => bail!("{name} can be read only once and was not kept"),
    };
    let mut store = db::open_for_writing(db_arg)?;
    store_export(
        store.as_mut(),
        BufReader::with_capacity(1 << 16, second),
        BufReader::new(&mut outlines),
        runs,
        &kernel_configs,
        || input.unchanged(name),
    )
    .with_context(context)
}

/// How many runs of a hyperfine file are read and stored at once: memory holds this many runs
/// (some 200 bytes each), whatever the number of times in the file.
const HYPERFINE_RUNS_PER_PART: usize = 10_000;

/// Imports a hyperfine file read twice as a stream (`vernier_formats::hyperfine`): once for its
/// outline and the hash its ids derive from, checked before the database is opened, then again
/// for its runs, stored part by part in one transaction. Input that is not a regular file is
/// kept in an unnamed temporary file first: the ids are a hash of the file's length and bytes.
fn import_hyperfine(input: Input, name: &str, db_arg: Option<&Path>) -> Result<ImportReport> {
    let context = || format!("cannot import {name}");
    let bom = (input.prefix.len() - without_bom(&input.prefix).len()) as u64;
    let (source, start, len) = match input.regular {
        Some(snapshot) => {
            let start = snapshot.start + bom;
            (None, start, snapshot.len.saturating_sub(start))
        }
        None => {
            let mut copy = tempfile::tempfile().with_context(|| {
                format!(
                    "cannot create a temporary file in {} for the bytes of {name}, which can \
                     be read only once (set TMPDIR to a writable directory)",
                    std::env::temp_dir().display()
                )
            })?;
            let kept = std::io::copy(&mut input.stream(), &mut copy).with_context(|| {
                format!(
                    "cannot keep the bytes of {name} in a temporary file in {}",
                    std::env::temp_dir().display()
                )
            })?;
            (Some(copy), 0, kept)
        }
    };
    let file = source.as_ref().unwrap_or(&input.file);
    let from_start = || -> Result<&File> {
        let mut file = file;
        file.seek(SeekFrom::Start(start))
            .with_context(|| format!("cannot read {name} again"))?;
        Ok(file)
    };
    let outline = hyperfine::outline(from_start()?, len).with_context(context)?;
    let mut now = now_ns();
    let mut session = outline.session(now).with_context(context)?;
    validate::FileCheck::new()
        .session(&session)
        .with_context(context)?;
    let mut store = db::open_for_writing(db_arg)?;
    if let Some(first) = store
        .session_headers()?
        .into_iter()
        .find(|s| s.id == session.info.id)
    {
        // Imported before: read with the times of its first import (the file has none of its
        // own), so that the same file finds the same content; the import compares it with
        // what is stored part by part (`Import::session`) and stores nothing.
        now = first.started_at_ns;
        session = outline.session(now).with_context(context)?;
    }
    let stored = (|| -> Result<ImportReport> {
        let mut import = store.importer(outline.runs_count() as usize)?;
        import.session(&session)?;
        outline.runs(from_start()?, now, HYPERFINE_RUNS_PER_PART, |part| {
            import.add_runs(&part)?;
            Ok(())
        })?;
        input.unchanged(name)?;
        Ok(import.commit()?)
    })();
    stored.with_context(context)
}

/// Checks and stores the one session of a cyclictest file. A file imported before keeps the
/// times of its first import (a histogram has none of its own), so that importing it again
/// finds the same content and is skipped.
fn store_cyclictest(mut session: StoredSession, db_arg: Option<&Path>) -> Result<ImportReport> {
    validate::FileCheck::new().session(&session)?;
    let mut store = db::open_for_writing(db_arg)?;
    if let Some(first) = store
        .session_headers()?
        .into_iter()
        .find(|s| s.id == session.info.id)
    {
        let delta_ns = first.started_at_ns - session.info.started_at_ns;
        shift_times(&mut session, delta_ns);
    }
    store_one(session, store.as_mut())
}

/// Stores one session of a file of another tool, or skips it when stored with the same
/// content.
fn store_one(session: StoredSession, store: &mut dyn Store) -> Result<ImportReport> {
    Ok(store.import_sessions(&[session], &BTreeMap::new())?)
}

/// Stores the sessions of the export `input` in one transaction, each as it is read: its
/// outline, the next of `outlines` (those the first reading kept), then its runs part by part.
/// Commits once `unchanged` says that the input is still what was checked.
fn store_export(
    store: &mut dyn Store,
    input: impl Read,
    outlines: impl Read,
    runs: usize,
    kernel_configs: &BTreeMap<String, String>,
    unchanged: impl FnOnce() -> Result<()>,
) -> Result<ImportReport> {
    let mut import = store.importer(runs)?;
    for (sha256, text) in kernel_configs {
        import.kernel_config(sha256, text)?;
    }
    let mut outlines = serde_json::Deserializer::from_reader(outlines).into_iter();
    export_runs(
        input,
        EXPORT_RUNS_PER_PART,
        || outlines.next().transpose().map_err(Into::into),
        |part| -> Result<(), SourceError> {
            match part {
                Part::Session(session) => import.session(&session)?,
                Part::Runs { part, .. } => {
                    import.add_runs(&part)?;
                }
                Part::Outline(_) => {}
            }
            Ok(())
        },
    )?;
    if outlines.next().is_some() {
        bail!("the file has fewer sessions than when it was first read: it changed meanwhile");
    }
    unchanged()?;
    Ok(import.commit()?)
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeMap;

    use uuid::Uuid;
    use vernier_formats::export::{ExportDocument, FORMAT, VERSION};
    use vernier_formats::import::parse;
    use vernier_model::{Recorder, RunRecord, StoredSession};
    use vernier_store::Store;

    const HYPERFINE: &str = r#"{"results": [
        {"command": "a", "mean": 2, "times": [1.0, 3.0], "exit_codes": [0, 1]},
        {"command": "b", "times": [2.0], "parameters": {"n": 4}}
    ]}"#;

    fn sessions(text: &str, now_ns: i64) -> Vec<StoredSession> {
        parse(text.as_bytes(), now_ns).unwrap().sessions
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
            // The primary metric is a duration, positive and at most MAX_DURATION_S; every
            // double of the chunk, this one too, is among the x values.
            let most = vernier_model::validate::MAX_DURATION_S;
            values.insert("time".into(), chunk[0].abs().clamp(f64::MIN_POSITIVE, most));
            // The child protocol: JSON text through a pipe.
            let reply = serde_json::to_string(&ChildReply::Measured {
                values,
                histograms: Vec::new(),
            })
            .unwrap();
            let Ok(ChildReply::Measured { values, .. }) = serde_json::from_str(&reply) else {
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
                values: values.into(),
                monitors: Some(Box::new(RunMonitorData {
                    series: vec![MonitorSeries {
                        monitor: "m".into(),
                        metric: "x".into(),
                        unit: "count".into(),
                        kind: SeriesKind::Gauge,
                        points,
                    }],
                    summary: BTreeMap::from([("m.x".to_string(), chunk[1])]),
                    ..RunMonitorData::default()
                })),
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
                sessions: vec![store
                    .load_session(session.info.id, vernier_store::Load::ALL)
                    .unwrap()],
                kernel_configs: BTreeMap::new(),
            };
            serde_json::to_string_pretty(&doc).unwrap()
        };
        let text = export(&a);
        let parsed = parse(text.as_bytes(), 0).unwrap();
        b.import_sessions(&parsed.sessions, &parsed.kernel_configs)
            .unwrap();
        let back = b
            .load_session(session.info.id, vernier_store::Load::ALL)
            .unwrap();
        let mut checked = 0;
        for run in &config.runs {
            let got = back.configurations[0]
                .runs
                .iter()
                .find(|r| r.id == run.id)
                .unwrap();
            for (name, v) in run.values.iter() {
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
