//! Presentation of stored results: terminal renderings of the summaries and comparisons that
//! `vernier-analysis` computes. Every function here is a pure function of stored data; nothing
//! is printed (the CLI prints the strings this crate returns). The files that move sessions
//! between machines and tools are `vernier-formats`'.

pub mod bisect;
pub mod calibration;
pub mod calls;
pub mod compare;
pub mod format;
pub mod histogram;
pub mod history;
pub mod latency;
pub mod markup;
pub mod monitors;
pub mod profile;
pub mod table;
pub mod trace;
pub mod units;
pub mod why;
