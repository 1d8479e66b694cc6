//! The [`Benchmark`] trait and the built-in benchmarks.
//!
//! A benchmark's `run` executes inside a fresh child process that the engine starts for every
//! run; it may fork and spawn threads of its own. It measures only its work with
//! CLOCK_MONOTONIC, keeps its hot loop free of allocation, locks and logging, and never prints.

use std::collections::BTreeMap;

use vernier_model::{BenchmarkInfo, Options};

/// Where a run stands in its configuration, for benchmarks that care (the scripted mock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunContext {
    pub warmup: bool,
    /// Index among runs of the same kind (warmup or measured), from 0.
    pub index: u32,
}

/// The values one run measured: metric name -> value. The primary metric must be present.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measurement {
    pub values: BTreeMap<String, f64>,
}

impl Measurement {
    pub fn single(metric: &str, value: f64) -> Self {
        let mut values = BTreeMap::new();
        values.insert(metric.to_string(), value);
        Measurement { values }
    }
}

/// Why a benchmark run failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{call} failed: {source}")]
    Syscall {
        call: &'static str,
        source: std::io::Error,
    },
    #[error("{0}")]
    Sys(#[from] vernier_sys::SysError),
    #[error("worker failed: {0}")]
    Worker(String),
    #[error("invalid options: {0}")]
    Options(String),
}

impl BenchError {
    /// The error of the last failed libc call.
    pub fn last_os(call: &'static str) -> Self {
        BenchError::Syscall {
            call,
            source: std::io::Error::last_os_error(),
        }
    }
}

/// A benchmark: a description and a way to measure one run.
pub trait Benchmark: Send + Sync {
    fn info(&self) -> BenchmarkInfo;
    fn run(&self, options: &Options, ctx: &RunContext) -> Result<Measurement, BenchError>;
}

/// Every built-in benchmark, hidden ones included, in listing order.
pub fn all() -> Vec<Box<dyn Benchmark>> {
    vec![]
}

/// The benchmark called `name`.
pub fn find(name: &str) -> Option<Box<dyn Benchmark>> {
    all().into_iter().find(|b| b.info().name == name)
}
