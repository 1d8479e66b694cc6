//! A session's monitors: one series at a time (a switch), and per configuration the summaries
//! of every key over its measured runs; and the figure of one key.

use maud::{html, Markup, Render};
use vernier_analysis::monitors::{monitor_summaries, MonitorSummary, RecordedKey};
use vernier_model::monitor::SeriesKind;
use vernier_model::StoredSession;
use vernier_plot::{Format, MonitorTrace, PlotError, Size};
use vernier_report::format::plural;
use vernier_report::monitors::Scale;

use super::nav;
use crate::html;
use crate::{session_name, short_id, Site};

pub fn monitors(site: &Site, m: usize) -> String {
    let (session, keys) = &site.monitors[m];
    let s = &site.input.sessions[*session];
    // The series shown first: the first key monitor the session recorded (context switches
    // before CPU time), not the first key by name, which is often a flat line; else the first
    // key that is drawn.
    let drawn = |x: &&RecordedKey| x.constant.is_none();
    let shown = vernier_report::monitors::KEY_MONITORS
        .iter()
        .find_map(|k| keys.iter().position(|x| x.key == *k && drawn(&x)))
        .or_else(|| keys.iter().position(|x| drawn(&x)))
        .unwrap_or(0);
    let names: Vec<String> = keys.iter().map(|k| k.key.clone()).collect();
    let body = html! {
        p { "Session " (s.info.id) " started " (html::utc(s.info.started_at_ns)) "." }
        h2 { "Series during the runs" }
        (html::switch("monitor-figures", "Series", &names, shown))
        div #monitor-figures {
            @for (k, key) in keys.iter().enumerate() {
                @if key.constant.is_none() {
                    (html::figure(
                        &format!("{}/{k}.svg", s.info.id),
                        &format!(
                            "{} during each measured run, a panel per configuration",
                            key.key
                        ),
                        Some(&key.key),
                    ))
                } @else {
                    p data-key=(key.key) {
                        (html::label(&key.key)) " " (flat(key)) ": a flat line, not drawn."
                    }
                }
            }
        }
        (html::section(
            2,
            None,
            "Summaries per configuration",
            Some(html! {
                "Per run, a counter's increase over the run or a gauge's time-weighted mean; \
                 here their median and range over the measured runs."
            }),
            &summaries(s),
        ))
    };
    html::page(
        "../",
        &format!("Monitors of {}", session_name(s)),
        &nav(site),
        &body,
    )
}

/// What a key of one value over every run was. A flat line in every panel says no more than
/// its value, and such keys (a counter of swap-ins that never rose) are often most of a
/// session's keys.
fn flat(key: &RecordedKey) -> String {
    let value = key.constant.unwrap_or_default();
    let runs = plural(key.runs, "measured run");
    if key.kind == SeriesKind::Counter && value == 0.0 {
        format!("did not rise in any of the {runs} that recorded it, in any configuration")
    } else {
        let scale = Scale::of_constant(key);
        let value = format!("{} {}", scale.format(value), scale.unit);
        format!(
            "was {} in every sample of the {runs} that recorded it, in every configuration",
            value.trim_end()
        )
    }
}

/// Per configuration with monitor summaries, the median and range of every key over its
/// measured runs.
fn summaries(s: &StoredSession) -> Markup {
    html! {
        @for c in &s.configurations {
            @let summaries = monitor_summaries(c);
            @if !summaries.is_empty() {
                h3 {
                    (html::label(&vernier_analysis::label(
                        &c.record.benchmark,
                        &c.record.options,
                        &c.record.loads,
                    )))
                }
                (html::table(
                    &["key", "unit", "runs", "median", "min", "max"],
                    &summary_rows(&summaries),
                    &[2, 3, 4, 5],
                ))
            }
        }
    }
}

/// A row per key: its median, minimum and maximum over the runs, in the unit of the row.
fn summary_rows(summaries: &[MonitorSummary]) -> Vec<Vec<Markup>> {
    summaries
        .iter()
        .map(|x| {
            let scale = Scale::of_summary(x);
            vec![
                html::label(&x.key),
                scale.unit.render(),
                x.runs.render(),
                scale.format(x.median).render(),
                scale.format(x.min).render(),
                scale.format(x.max).render(),
            ]
        })
        .collect()
}

pub fn monitor_figure(site: &Site, m: usize, k: usize) -> Result<Vec<u8>, PlotError> {
    let (session, keys) = &site.monitors[m];
    let s = &site.input.sessions[*session];
    let key = &keys[k].key;
    let traces: Vec<MonitorTrace> = s
        .configurations
        .iter()
        .filter_map(|c| {
            let label =
                vernier_analysis::label(&c.record.benchmark, &c.record.options, &c.record.loads);
            MonitorTrace::of(label, c, key)
        })
        .collect();
    let size = Size {
        width: 1200,
        height: (80 + 320 * traces.len() as u32).clamp(500, 8000),
    };
    vernier_plot::monitor(
        &traces,
        key,
        &format!("{key} during the runs of {}", short_id(s)),
        Format::Svg,
        size,
    )
}
