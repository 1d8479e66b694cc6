//! Small helpers to declare option specs and read resolved values defensively.

use vernier_model::{
    BenchmarkInfo, Describe, Kind, OptionDefault, OptionKind, OptionSpec, OptionValue, Options,
};

use crate::BenchError;

pub(crate) fn uint_spec(
    name: &'static str,
    default: u64,
    min: u64,
    max: u64,
    unit: &'static str,
    help: &'static str,
) -> OptionSpec {
    OptionSpec::new(
        name,
        OptionKind::UInt { min, max },
        OptionDefault::Value(OptionValue::UInt(default)),
    )
    .unit(unit)
    .help(help)
}

/// A free-text option with a default.
pub(crate) fn text_spec(name: &'static str, default: &str, help: &'static str) -> OptionSpec {
    OptionSpec::new(
        name,
        OptionKind::Text,
        OptionDefault::Value(OptionValue::Text(default.to_string())),
    )
    .help(help)
}

pub(crate) fn choice_spec(
    name: &'static str,
    words: &'static [&'static str],
    help: &'static str,
) -> OptionSpec {
    OptionSpec::new(
        name,
        OptionKind::choice(words),
        OptionDefault::Value(OptionValue::Text(words[0].to_string())),
    )
    .help(help)
}

pub(crate) fn workers_spec() -> OptionSpec {
    OptionSpec::new(
        "workers",
        OptionKind::UInt { min: 1, max: 4096 },
        OptionDefault::OnlineCpus,
    )
    .help("number of worker processes")
}

pub(crate) fn duration_spec() -> OptionSpec {
    OptionSpec::new(
        "duration",
        OptionKind::Float {
            min: 0.01,
            max: 3600.0,
        },
        OptionDefault::Value(OptionValue::Float(5.0)),
    )
    .unit("s")
    .help("how long each worker runs")
}

/// A resolved unsigned option, range-checked against its spec (a run never trusts that the
/// plan was validated).
pub(crate) fn uint(info: &BenchmarkInfo, options: &Options, name: &str) -> Result<u64, BenchError> {
    let value = match options.get(name) {
        Some(OptionValue::UInt(v)) => *v,
        other => {
            return Err(BenchError::Options(format!(
                "option '{name}' must be an integer, got {other:?}"
            )))
        }
    };
    if let Some(OptionSpec {
        kind: OptionKind::UInt { min, max },
        ..
    }) = info.option(name)
    {
        if value < *min || value > *max {
            return Err(BenchError::Options(format!(
                "option '{name}' = {value} is outside {min}..={max}"
            )));
        }
    }
    Ok(value)
}

/// A resolved real option, range-checked against its spec.
pub(crate) fn float(
    info: &BenchmarkInfo,
    options: &Options,
    name: &str,
) -> Result<f64, BenchError> {
    let value = match options.get(name) {
        Some(OptionValue::Float(v)) => *v,
        Some(OptionValue::UInt(v)) => *v as f64,
        other => {
            return Err(BenchError::Options(format!(
                "option '{name}' must be a number, got {other:?}"
            )))
        }
    };
    if let Some(OptionSpec {
        kind: OptionKind::Float { min, max },
        ..
    }) = info.option(name)
    {
        if !value.is_finite() || value < *min || value > *max {
            return Err(BenchError::Options(format!(
                "option '{name}' = {value} is outside {min}..={max}"
            )));
        }
    }
    Ok(value)
}

/// A resolved choice option: the index of the word in the spec's list.
pub(crate) fn choice(
    info: &BenchmarkInfo,
    options: &Options,
    name: &str,
) -> Result<usize, BenchError> {
    let text = options.text(name);
    match info.option(name).map(|s| &s.kind) {
        Some(OptionKind::Choice(words)) => words.iter().position(|w| *w == text).ok_or_else(|| {
            BenchError::Options(format!(
                "option '{name}' = '{text}' is not one of {}",
                words.join(", ")
            ))
        }),
        _ => Err(BenchError::Options(format!("no choice option '{name}'"))),
    }
}

/// The options of `info` with every default resolved against this machine and `overrides`
/// (name, text) parsed on top, as the engine's plan would resolve them. Used by tests and
/// examples to run a benchmark directly.
pub fn resolve_options(
    info: &BenchmarkInfo,
    overrides: &[(&str, &str)],
) -> Result<Options, BenchError> {
    let online = u32::try_from(vernier_sys::cpulist::online_cpus().len()).unwrap_or(u32::MAX);
    info.description()
        .resolve(Kind::Benchmark, &[], overrides.iter().copied(), online)
        .map_err(|e| BenchError::Options(e.to_string()))
}

/// Runs `work` in the `workers` worker processes for `duration` seconds (both options of
/// `info`) and reports the summed rate as the benchmark's metric: the shared body of the
/// throughput benchmarks (fork, yield).
pub(crate) fn run_rate_benchmark(
    info: &vernier_model::BenchmarkInfo,
    options: &vernier_model::Options,
    work: fn(u64) -> Result<u64, i32>,
) -> Result<crate::Measurement, crate::BenchError> {
    let workers = uint(info, options, "workers")?;
    let duration = float(info, options, "duration")?;
    let workers = usize::try_from(workers)
        .map_err(|_| crate::BenchError::Options("workers is too large".into()))?;
    let rate = crate::workers::rate_of_workers(workers, (duration * 1e9) as u64, work)?;
    let mut m = crate::Measurement::single(&info.metric().name, rate.per_second);
    m.values.insert(
        vernier_model::values::OPERATIONS.into(),
        rate.operations as f64,
    );
    Ok(m)
}

/// Checks that the `workers` of a throughput benchmark, each `tasks_per_worker` tasks at
/// most, can start besides the run's own process.
pub(crate) fn check_rate_benchmark(
    info: &BenchmarkInfo,
    options: &Options,
    limits: &vernier_sys::MachineLimits,
    tasks_per_worker: u64,
) -> Result<(), BenchError> {
    let workers = uint(info, options, "workers")?;
    limits.check_tasks(workers.saturating_mul(tasks_per_worker).saturating_add(1))?;
    Ok(())
}
