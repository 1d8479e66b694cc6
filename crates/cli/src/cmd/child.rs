//! `vernier __child`: one measurement in a fresh process, request on stdin, reply on stdout.

use std::process::ExitCode;

pub fn child() -> ExitCode {
    let status =
        vernier_engine::child::child_main(std::io::stdin().lock(), std::io::stdout().lock());
    ExitCode::from(status as u8)
}
