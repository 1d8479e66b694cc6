//! `vernier __load SPEC [--dir DIR]`: the supervisor of one load (`run --load`), which runs it
//! until SIGTERM. The protocol and the loads are `vernier_load`'s; the binary adds hackbench,
//! which is a benchmark that crate does not see.

use std::process::ExitCode;

use vernier_bench::RunContext;
use vernier_load::HackbenchParams;
use vernier_model::OptionValue;

pub fn load(args: &[String]) -> ExitCode {
    match vernier_load::load_main(args, &mut std::io::stdout(), &run_hackbench) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", crate::out::printable(&e));
            ExitCode::from(1)
        }
    }
}

/// One run of the `hackbench` benchmark in process mode over Unix sockets, its other options
/// at their defaults.
fn run_hackbench(p: &HackbenchParams) -> Result<(), String> {
    let bench = vernier_bench::builtin("hackbench").ok_or("no hackbench benchmark")?;
    let mut options =
        vernier_bench::resolve_options(&bench.info(), &[]).map_err(|e| e.to_string())?;
    for (name, value) in [
        ("groups", OptionValue::UInt(p.groups)),
        ("loops", OptionValue::UInt(p.loops)),
        ("datasize", OptionValue::UInt(p.datasize)),
        ("tasks", OptionValue::Text("process".into())),
        ("ipc", OptionValue::Text("socket".into())),
    ] {
        options.0.insert(name.to_string(), value);
    }
    let context = RunContext::default();
    bench
        .run(&options, &context)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
