//! `vernier trace SESSION [--config SPEC] [-o FILE]`: the kernel's events of a session's traced
//! latencies (`latency:trace=US`) in ftrace's text form, the lines `trace-cmd report` prints,
//! for the tools people already read traces with; each traced sample's events after a `#`
//! header naming its configuration, run, thread, CPU and latency.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use vernier_store::Load;

use crate::cli::TraceArgs;
use crate::db::{self, resolve_one};
use crate::out::{printable, stream_output};

pub fn trace(args: TraceArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    let filter = match &args.config {
        Some(spec) => {
            let infos = vernier_app::config::benchmark_infos(std::slice::from_ref(spec))?;
            let name = spec.split(':').next().unwrap_or_default().trim();
            let Some(info) = infos.iter().find(|i| i.name() == name) else {
                bail!(
                    "--config {}: no benchmark named '{}' (`vernier list` names them)",
                    printable(spec),
                    printable(name)
                );
            };
            Some(crate::cmd::history::filter(spec, info)?)
        }
        None => None,
    };
    let store = db::open_for_reading(db_arg)?;
    let id = resolve_one(store.as_ref(), &args.session)?;
    let session = vernier_app::database::load_for_display(store.as_ref(), id, Load::DISTRIBUTIONS)?;
    let mut text = String::new();
    let mut matched = 0;
    for c in &session.configurations {
        if filter.as_ref().is_some_and(|f| !f.matches(&c.record)) {
            continue;
        }
        matched += 1;
        let label = vernier_model::ConfigKey::new(&c.record.benchmark, &c.record.options);
        for (run, r) in c.runs.iter().filter(|r| !r.warmup).enumerate() {
            for h in &r.histograms {
                let Some(t) = &h.trace else { continue };
                let cpu = h.cpu.map(|c| format!(", CPU {c}")).unwrap_or_default();
                let header = vec![
                    format!(
                        "vernier session {}, {label}, measured run {}, thread {}{cpu}",
                        session.info.id,
                        run + 1,
                        h.thread
                    ),
                    format!(
                        "latency {} ns above trace={} us: expiry {} ns, wake-up {} ns \
                         (CLOCK_MONOTONIC), thread id {}{}",
                        t.latency_ns,
                        t.threshold_ns / 1_000,
                        t.expiry_ns,
                        t.wake_ns,
                        t.tid,
                        if t.truncated {
                            ", earliest events dropped"
                        } else {
                            ""
                        }
                    ),
                ];
                text.push_str(&vernier_formats::ftrace::write_events(&header, &t.events));
            }
        }
    }
    if matched == 0 {
        bail!(
            "no configuration of session {} matches --config {}; `vernier show` lists them",
            session.info.id,
            printable(args.config.as_deref().unwrap_or_default())
        );
    }
    if text.is_empty() {
        bail!(
            "session {} has no traced latency: `latency:trace=US` traces the samples above US \
             (docs/why.md, \"Traces\")",
            session.info.id
        );
    }
    // Stored text is printed escaped, as every command prints it.
    let text = crate::out::printable_lines(&text).into_owned();
    stream_output(
        args.output.as_deref(),
        |w| Ok(w.write_all(text.as_bytes())?),
    )?;
    Ok(ExitCode::SUCCESS)
}
