//! `vernier show`: the statistics of a stored session.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use vernier_model::ConfigKey;
use vernier_store::{Histograms, Load};

use crate::cli::{ShowArgs, ShowFormat};
use crate::db;
use crate::db::resolve_one;
use crate::out::{local_time, out, outln, printable, printable_lines, terminal_width};

pub fn show(args: ShowArgs, db_arg: Option<&Path>) -> Result<ExitCode> {
    if args.format == ShowFormat::Json {
        // The JSON document holds the statistics only; these options would change nothing.
        for (given, name) in [
            (args.series.is_some(), "--series"),
            (args.monitors, "--monitors"),
            (args.histogram, "--histogram"),
        ] {
            if given {
                bail!("{name} applies to the table; --format json prints the statistics only");
            }
        }
    }
    let store = db::open_for_reading(db_arg)?;
    let id = resolve_one(store.as_ref(), &args.session)?;
    // Monitor data is most of a session; the slow runs' explanation (docs/why.md) reads the
    // runs' monitor summaries.
    let load = Load {
        runs: true,
        monitors: true,
        histograms: Histograms::Whole,
        // A few KiB per profiled run, for the list of them.
        profiles: true,
    };
    // Every run's monitor data only for the views of it; the explanations of a long session
    // read that of a bounded window of runs (vernier_app::database::MONITORED_RUNS).
    let every_monitor = args.monitors || args.series.is_some();
    let shown = vernier_app::database::load_for_show(store.as_ref(), id, load, every_monitor)?;
    let session = shown.session;
    let summaries = vernier_analysis::summarize_session(&session);
    match args.format {
        ShowFormat::Json => {
            // Every configuration carries its session's status (docs/json.md), so a document of
            // an interrupted or abandoned session says so without another command.
            let status = serde_json::to_value(session.info.status)?;
            let mut document = serde_json::to_value(&summaries)?;
            if let Some(configurations) = document.as_array_mut() {
                for configuration in configurations {
                    if let Some(fields) = configuration.as_object_mut() {
                        fields.insert("session_status".to_string(), status.clone());
                    }
                }
            }
            outln!("{}", serde_json::to_string_pretty(&document)?);
        }
        ShowFormat::Table => {
            // Everything shown comes from stored text (labels, tags, imported names): it is
            // built first and printed with control characters escaped.
            let mut text = String::new();
            let info = &session.info;
            // A copy stored part by part reads as running until its last part (docs/farm.md).
            let copying = store
                .session_headers()?
                .into_iter()
                .find(|h| h.id == info.id)
                .and_then(|h| h.copying);
            writeln!(
                text,
                "session {}  {}  {}  fingerprint {}",
                info.id,
                local_time(info.started_at_ns),
                match copying {
                    Some(_) => "copying".to_string(),
                    None => info.status.to_string(),
                },
                info.fingerprint
            )?;
            if let Some(copy) = copying {
                writeln!(
                    text,
                    "copying: being copied from another database part by part, {} of its {} \
                     runs so far; the next sync stores the rest, and its end",
                    copy.runs, copy.of
                )?;
            } else if info.status == vernier_model::SessionStatus::Abandoned {
                writeln!(
                    text,
                    "abandoned: the process recording it ended before the session did (killed, \
                     crashed or the machine went down); the runs it recorded are complete"
                )?;
            }
            if !info.tags.is_empty() {
                let tags: Vec<String> = info
                    .tags
                    .iter()
                    .map(|(k, v)| format!("{}={}", printable(k), printable(v)))
                    .collect();
                writeln!(text, "tags: {}", tags.join(" "))?;
            }
            if let Some(note) = &info.note {
                writeln!(text, "note: {}", printable(note))?;
            }
            writeln!(text)?;
            write!(
                text,
                "{}",
                vernier_report::table::show_text(&summaries, terminal_width(), args.verbose)
            )?;
            for s in &summaries {
                if let Some(latency) = &s.latency {
                    writeln!(text, "{}: latency per CPU", s.label())?;
                    write!(text, "{}", vernier_report::latency::latency_text(latency))?;
                    writeln!(text)?;
                }
            }
            for (s, window) in summaries.iter().zip(&shown.monitored) {
                if let (Some((first, last, of)), true) =
                    (window, s.latency.is_some() || s.slow_runs.is_some())
                {
                    writeln!(
                        text,
                        "{}: monitor data read of measured runs {first}-{last} of {of} (around \
                         the worst case, or the latest): the activity and the slow runs are \
                         of those",
                        s.label()
                    )?;
                }
            }
            for s in &summaries {
                let Some(why) = &s.slow_runs else { continue };
                let lines = vernier_report::why::slow_runs_text(why);
                if !lines.is_empty() {
                    writeln!(text, "{}: why runs stand out (monitors)", s.label())?;
                    text.push_str(&lines);
                    writeln!(text)?;
                }
            }
            let profiled = vernier_report::profile::profiled_runs_text(
                &vernier_analysis::profile::profiled_runs(&session),
            );
            if !profiled.is_empty() {
                writeln!(text, "{profiled}")?;
            }
            let important: Vec<_> = info
                .findings
                .iter()
                .filter(|f| f.severity >= vernier_model::Severity::Warning)
                .cloned()
                .collect();
            if !important.is_empty() {
                writeln!(text, "validity findings of the session:")?;
                write!(
                    text,
                    "{}",
                    vernier_report::format::findings_text(&important)
                )?;
                writeln!(text)?;
            }
            if args.monitors {
                for c in &session.configurations {
                    let config = ConfigKey::new(&c.record.benchmark, &c.record.options);
                    writeln!(text, "{config}: monitors")?;
                    write!(text, "{}", vernier_report::monitors::monitor_text(c))?;
                    writeln!(text)?;
                }
            }
            if let Some(key) = &args.series {
                let mut found = false;
                for c in &session.configurations {
                    if let Some(series) = vernier_report::monitors::series_text(c, key) {
                        found = true;
                        let config = ConfigKey::new(&c.record.benchmark, &c.record.options);
                        writeln!(text, "{config}: {key}")?;
                        text.push_str(&series);
                    }
                }
                if !found {
                    bail!(
                        "no run of this session recorded the series '{}'; \
                         `vernier show --monitors` lists the recorded ones",
                        printable(key)
                    );
                }
            }
            if args.histogram {
                for s in &summaries {
                    writeln!(text, "{}: {} in {}", s.label(), s.metric, s.unit)?;
                    writeln!(
                        text,
                        "{}",
                        vernier_report::histogram::histogram(&s.values, 12, 50)
                    )?;
                    if let Some(calls) = &s.calls {
                        writeln!(text, "{}: time per call, every call", s.label())?;
                        writeln!(text, "{}", vernier_report::calls::call_text(calls, 50))?;
                    }
                }
            }
            out!("{}", printable_lines(&text));
        }
    }
    // The command ends with the process: what a long session read (a million allocations for
    // 100,000 latency intervals, 2% of its `show`) is left to the exit, not freed one by one.
    std::mem::forget((session, summaries));
    Ok(ExitCode::SUCCESS)
}
