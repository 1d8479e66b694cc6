//! The export document of docs/export-format.md: sessions with their environment,
//! configurations and every run, versioned, so another machine or a later vernier can import
//! them ([`reader`]) and other tools can read them; and the one-row-per-run CSV for pandas and
//! spreadsheets. Both are written session by session ([`writer`]) and read as a stream, so
//! memory is bounded by a few sessions, never by the file (hyperfine's `export/` is the model:
//! plain records in, bytes out).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;
use vernier_model::StoredSession;

pub mod cyclictest;
pub mod reader;
pub mod writer;

/// The value of the `format` field of an export document.
pub const FORMAT: &str = "vernier-export";
/// The version of the export format this build writes and reads.
pub const VERSION: u32 = 1;

/// The export document (docs/export-format.md), whole in memory: what [`writer::json`] writes
/// and [`reader::parse`] reads, for documents small enough to hold.
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
