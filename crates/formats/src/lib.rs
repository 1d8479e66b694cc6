//! vernier's file formats: its own export document and run CSV (docs/export-format.md), written
//! and read as streams ([`export`]), and the files of other tools that `vernier import` reads:
//! hyperfine's `--export-json` output ([`hyperfine`]) and cyclictest's histogram and `--json`
//! output ([`cyclictest`], whose parser the `cyclictest` benchmark uses too). [`import`] tells
//! a file's format from its first bytes. [`perf`] collapses the output of `perf script` into the
//! folded stacks a profiled run stores.
//!
//! Bytes in, records out, and back: a format turns a file into [`vernier_model`] records and
//! records into bytes, and nothing else. Checking what may be stored is
//! [`vernier_model::validate`]'s, storing is the caller's, and presenting is `vernier-report`'s.

use uuid::Uuid;

pub mod cyclictest;
pub mod export;
pub mod ftrace;
pub mod hyperfine;
mod ids;
pub mod import;
mod parts;
pub mod perf;

use export::{FORMAT, VERSION};

/// An error of the code that hands sessions to the writer or takes them from the reader (a
/// store, typically).
pub type SourceError = Box<dyn std::error::Error + Send + Sync>;

/// Why an export could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot load session {id}")]
    Load {
        id: Uuid,
        #[source]
        source: SourceError,
    },
    #[error("cannot read kernel configuration {sha256}")]
    KernelConfig {
        sha256: String,
        #[source]
        source: SourceError,
    },
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Csv(#[from] csv::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Why a file could not be read as an export, a hyperfine or a cyclictest file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not JSON, or truncated: serde_json names the line and column.
    #[error("invalid JSON")]
    Syntax(#[source] serde_json::Error),
    #[error(
        "neither a vernier export (an object with \"format\": \"{FORMAT}\"), hyperfine \
         --export-json output (an object with \"results\") nor cyclictest output (its -h \
         histogram with a '# Histogram' line, or its --json object with \"thread\")"
    )]
    Neither,
    /// A file of another kind, named: CSV, an SQLite database, compressed data, an empty file.
    #[error(
        "the file is {0}; import takes a vernier export (JSON), hyperfine --export-json output \
         or cyclictest's output (its -h/-H histogram or its --json file)"
    )]
    NotImportable(String),
    /// The input is larger than a reader that holds it whole accepts.
    #[error("{what} is larger than {limit_bytes} bytes, the most vernier reads of one")]
    TooLarge { what: String, limit_bytes: u64 },
    #[error("unknown format {0} (expected \"{FORMAT}\")")]
    UnknownFormat(String),
    #[error("{FORMAT} version {0} is not supported (this vernier reads version {VERSION})")]
    Version(String),
    #[error("not a valid vernier export")]
    Export(#[source] serde_json::Error),
    #[error("not a valid hyperfine --export-json file")]
    HyperfineJson(#[source] serde_json::Error),
    /// A hyperfine file that hyperfine could not have written.
    #[error("{0}")]
    Hyperfine(String),
    #[error("cannot read the file")]
    Io(#[source] std::io::Error),
    /// cyclictest's histogram output that cyclictest could not have written.
    #[error("line {line}: {problem}")]
    CyclictestLine { line: usize, problem: String },
    #[error("not a valid cyclictest --json file")]
    CyclictestJson(#[source] serde_json::Error),
    /// A cyclictest file that cyclictest could not have written, or that vernier cannot use.
    #[error("{0}")]
    Cyclictest(String),
    /// The checks every import shares ([`vernier_model::validate`]).
    #[error(transparent)]
    Invalid(#[from] vernier_model::validate::Invalid),
    /// The consumer of the sessions failed (a store, typically).
    #[error(transparent)]
    Sink(SourceError),
}
