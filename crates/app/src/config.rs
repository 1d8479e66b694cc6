//! The user's configuration directory of vernier: `$XDG_CONFIG_HOME/vernier` (by default
//! `~/.config/vernier`), where suites and benchmarks of the user's own live.

use std::path::PathBuf;

use vernier_model::BenchmarkInfo;

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

/// What a plan of `specs` is checked against: the built-in benchmarks and the usable ones of
/// the user's own. A user benchmark that cannot describe itself is an error only when a spec
/// names it.
pub fn benchmark_infos(specs: &[String]) -> Result<Vec<BenchmarkInfo>, AppError> {
    use vernier_bench::Benchmark as _;
    let mut infos: Vec<_> = vernier_bench::all().iter().map(|b| b.info()).collect();
    let named: Vec<&str> = specs
        .iter()
        .map(|s| s.split(':').next().unwrap_or(s))
        .collect();
    for name in vernier_bench::user::names() {
        if infos.iter().any(|i| i.name == name) {
            continue;
        }
        match vernier_bench::user::load(&name) {
            Some(Ok(benchmark)) => infos.push(benchmark.info()),
            Some(Err(e)) if named.contains(&name.as_str()) => {
                return Err(AppError::UserBenchmark(e))
            }
            _ => {}
        }
    }
    Ok(infos)
}
