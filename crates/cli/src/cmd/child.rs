//! `vernier __child`: one measurement in a fresh process, request on stdin, reply on stdout.

use std::process::ExitCode;

pub fn child() -> ExitCode {
    // Benchmarks of the user's own too, as the controller found them.
    let user_dir = vernier_app::config::benchmark_dir();
    let status = vernier_engine::child::child_main(
        std::io::stdin().lock(),
        std::io::stdout().lock(),
        &|name| vernier_bench::find(name, user_dir.as_deref()),
    );
    ExitCode::from(status as u8)
}
