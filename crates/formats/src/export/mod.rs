//! The export document of docs/export-format.md: sessions with their environment,
//! configurations and every run, versioned, so another machine or a later vernier can import
//! them ([`reader`], [`crate::import`]) and other tools can read them; and the one-row-per-run CSV for pandas and
//! spreadsheets. Both are written session by session ([`writer`]) and the document is read as
//! a stream, its runs in parts ([`reader`]), so memory is bounded by a page of runs and a
//! session's outline, never by the file nor by a session (hyperfine's `export/` is the model:
//! plain records in, bytes out).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use vernier_model::StoredSession;

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
