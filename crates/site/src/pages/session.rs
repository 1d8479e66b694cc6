//! A page per session: what ran, with which settings, where (the environment's main fields,
//! the whole on the environment page), the validity findings, and every configuration with
//! its result as `vernier show` gives it; its runs as a CSV download in the format of
//! `vernier export --format csv`.

use maud::{html, Markup, Render};
use vernier_analysis::summarize_session;
use vernier_model::StoredSession;
use vernier_report::format::{describe_session, plural};

use super::nav;
use crate::html::{self, interval, num};
use crate::{session_name, Site};

/// The path of session `s`'s page, relative to the root.
pub fn session_page(s: &StoredSession) -> String {
    format!("sessions/{}.html", s.info.id)
}

/// The path of session `s`'s runs as CSV, relative to the root.
pub fn session_csv(s: &StoredSession) -> String {
    format!("sessions/{}.csv", s.info.id)
}

pub fn session(site: &Site, i: usize) -> String {
    let s = &site.input.sessions[i];
    let info = &s.info;
    let root = "../";
    let mut notes = html::WarningNotes::new("warning");
    let summaries = summarize_session(s);
    let rows: Vec<Vec<Markup>> = summaries
        .iter()
        .map(|c| {
            let label = html::label(&c.label());
            vec![
                match site.benchmark_page(&c.benchmark) {
                    Some(page) => html! { a href={ (root) (page) } { (label) } },
                    None => label,
                },
                format!("{} ({})", c.metric, c.unit).render(),
                c.n.render(),
                num(c.median).render(),
                interval(c.ci_low, c.ci_high).render(),
                num(c.mean).render(),
                num(c.mad).render(),
                num(c.min).render(),
                num(c.max).render(),
                c.stop_reason.clone().unwrap_or_default().render(),
                notes.cell_with_error(c.error.as_deref(), &c.warnings),
            ]
        })
        .collect();
    let settings: Vec<Vec<String>> = match serde_json::to_value(&info.settings) {
        Ok(serde_json::Value::Object(fields)) => fields
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                vec![k, v]
            })
            .collect(),
        _ => Vec::new(),
    };
    let e = &info.environment;
    let environment: Vec<Vec<String>> = [
        ("kernel release", e.kernel_release.clone()),
        ("preemption", e.preemption.clone()),
        ("CPU", e.cpu_model.clone()),
        ("online CPUs", e.online_cpus.map(|n| n.to_string())),
        ("host", e.hostname.clone()),
        ("virtualization", e.virtualization.clone()),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some(vec![k.to_string(), v?]))
    .collect();
    let findings: Vec<Vec<String>> = info
        .findings
        .iter()
        .map(|f| {
            vec![
                f.severity.as_str().to_string(),
                f.title.clone(),
                f.detail.clone(),
                f.fix.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let body = html! {
        p {
            "Started " (vernier_report::units::utc_named(info.started_at_ns))
            @if let Some(end) = info.ended_at_ns { ", ended " (vernier_report::units::utc_named(end)) }
            "; " (info.status.as_str()) ". Ran "
            code { (describe_session(info.suite.as_deref(), &info.specs)) } "."
            @if !info.tags.is_empty() {
                " Tags: "
                @for (n, (k, v)) in info.tags.iter().enumerate() {
                    @if n > 0 { " " }
                    span.tag { (k) "=" (v) }
                }
                "."
            }
            @if let Some(note) = &info.note { " Note: " (note) }
        }
        p.session-id { "Session " (info.id) ", vernier " (info.vernier_version) "." }
        h2 #configurations { "Configurations" }
        p {
            (plural(summaries.len(), "configuration")) ", as " code { "vernier show" }
            " gives them. The runs: "
            a href={ (root) (session_csv(s)) } download { "CSV" }
            " (the format of " code { "vernier export --format csv" } "); "
            code { "vernier export " (info.id) } " writes the session as JSON, which "
            code { "vernier import" } " reads."
        }
        (html::table(
            &["configuration", "metric (unit)", "runs", "median", "CI of the median", "mean",
              "MAD", "min", "max", "stopped", "warnings"],
            &rows,
            &[2, 3, 4, 5, 6, 7, 8],
        ))
        (notes.list())
        h2 #findings { "Findings" }
        @if findings.is_empty() {
            p { "No finding was recorded." }
        } @else {
            (html::text_table(&["severity", "finding", "detail", "fix"], &findings))
        }
        h2 #settings { "Settings" }
        (html::text_table(&["setting", "value"], &settings))
        h2 #environment { "Environment" }
        @if !environment.is_empty() {
            (html::text_table(&["field", "value"], &environment))
        }
        p {
            a href={ (root) "environment.html#s-" (info.id) } { "Every field of the environment" }
            ", with how it differs from the others."
        }
    };
    let nav: Vec<(String, String)> = nav(site);
    html::page(root, &format!("Session {}", session_name(s)), &nav, &body)
}

/// The runs of session `i` as CSV, in the format of `vernier export --format csv`.
pub fn session_runs_csv(site: &Site, i: usize) -> Result<Vec<u8>, String> {
    let s = &site.input.sessions[i];
    let mut out = Vec::new();
    vernier_formats::export::writer::csv(&mut out, &[s.info.id], |_| {
        Ok::<_, std::convert::Infallible>(s.clone())
    })
    .map_err(|e| e.to_string())?;
    Ok(out)
}
