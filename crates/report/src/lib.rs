//! Presentation of stored results: per-configuration summaries and their terminal renderings.
//! Every function here is a pure function of stored data; nothing is printed (the CLI prints the
//! strings this crate returns).

pub mod format;
pub mod histogram;
pub mod monitors;
pub mod summary;
pub mod table;

pub use summary::{summarize, summarize_session, summarize_with, ConfigSummary};
