//! `vernier __child`: one measurement in a fresh process, request on stdin, reply on stdout;
//! with `--serve`, the runs of one configuration, a request per line
//! (`vernier_engine::child::serve_main`).

use std::process::ExitCode;

pub fn child(serve: bool) -> ExitCode {
    // Benchmarks of the user's own too, as the controller found them.
    let user_dir = vernier_app::config::benchmark_dir();
    let find = |name: &str| vernier_bench::find(name, user_dir.as_deref());
    let status = if serve {
        vernier_engine::child::serve_main(std::io::stdin().lock(), std::io::stdout().lock(), &find)
    } else {
        vernier_engine::child::child_main(std::io::stdin().lock(), std::io::stdout().lock(), &find)
    };
    ExitCode::from(status as u8)
}
