//! The user's configuration directory of vernier: `$XDG_CONFIG_HOME/vernier` (by default
//! `~/.config/vernier`), where suites and benchmarks of the user's own live.

use std::path::PathBuf;

use vernier_engine::PlanError;
use vernier_model::{BenchmarkInfo, PluginError};

use crate::AppError;

/// `vernier/` in the user's configuration directory, when there is one.
fn config_root() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("vernier"))
}

/// The directory of the user's suites: `NAME.toml` is `--suite NAME`.
pub fn suite_dir() -> Option<PathBuf> {
    config_root().map(|d| d.join("suites"))
}

/// The directory of the user's benchmarks: an executable `NAME` there is the benchmark `NAME`
/// (`vernier_bench::user`).
pub fn benchmark_dir() -> Option<PathBuf> {
    config_root().map(|d| d.join("benchmarks"))
}

/// What a plan of `specs` is checked against: the built-in benchmarks and the benchmarks of the
/// user's own that a spec names, described at the same time (`vernier_bench::user::load_all`),
/// so that a slow or hanging `describe` of another costs nothing and one of those named costs
/// its limit once. A named one that cannot describe itself is an error naming it.
pub fn benchmark_infos(specs: &[String]) -> Result<Vec<BenchmarkInfo>, AppError> {
    use vernier_bench::Benchmark as _;
    let mut infos = vernier_bench::builtin_infos();
    let Some(dir) = benchmark_dir() else {
        return Ok(infos);
    };
    let named: Vec<&str> = specs
        .iter()
        .map(|s| s.split(':').next().unwrap_or(s).trim())
        .filter(|name| !infos.iter().any(|i| i.name() == *name))
        .collect();
    for (_, loaded) in vernier_bench::user::load_all(&dir, &named) {
        match loaded {
            Some(Ok(benchmark)) => infos.push(benchmark.info()),
            Some(Err(e)) => return Err(AppError::UserBenchmark(e)),
            None => {}
        }
    }
    Ok(infos)
}

/// `error` with the benchmarks of the user's own that were not described (not named by a
/// spec) among the valid benchmarks of an unknown one, by name.
pub fn naming_user_benchmarks(error: PlanError) -> PlanError {
    match error {
        PlanError::Plugin(PluginError::Unknown { kind, name, valid }) => {
            let listed: Vec<&str> = valid.split(", ").collect();
            let more: Vec<String> = benchmark_dir()
                .map(|dir| vernier_bench::user::names(&dir))
                .unwrap_or_default()
                .into_iter()
                .filter(|n| !listed.contains(&n.as_str()))
                .collect();
            let valid = if more.is_empty() {
                valid
            } else {
                format!("{valid}, {}", more.join(", "))
            };
            PlanError::Plugin(PluginError::Unknown { kind, name, valid })
        }
        other => other,
    }
}
