//! Each distinct environment once, naming the sessions that ran in it, and how each differs
//! from the first that recorded anything.

use std::collections::BTreeSet;

use maud::{html, Markup};
use vernier_analysis::environment::{diff, kernel_config_diff};
use vernier_model::{Environment, StoredSession};

use super::nav;
use crate::html;
use crate::{session_name, Site};

/// Sessions that ran in one environment, in the order each environment first appears.
type Group<'a> = (&'a Environment, Vec<&'a StoredSession>);

pub fn environment(site: &Site) -> String {
    let groups = environments(&site.input.sessions);
    // Differences are against the first environment that recorded anything: an imported
    // session (cyclictest's histogram output) may have recorded none, and against nothing every
    // field would be a difference.
    let reference = groups.iter().position(|(e, _)| recorded(e)).unwrap_or(0);
    let body = html! {
        h2 { "Differences" }
        @if groups.len() == 1 {
            p { "Every session ran in the same environment." }
        }
        @for i in (0..groups.len()).filter(|&i| i != reference) {
            (difference(site, &groups, reference, i))
        }
        h2 { "Environments" }
        (system_table(&groups, reference))
        @for (i, (e, members)) in groups.iter().enumerate() {
            h3 id={ "env-" (i + 1) } { "Environment " (i + 1) }
            p {
                "Fingerprint " (members[0].info.fingerprint) "; "
                (if members.len() == 1 { "session" } else { "sessions" }) ": "
                // Each session a target of the index's links, `#s-ID`.
                @for (n, s) in members.iter().enumerate() {
                    @if n > 0 { ", " }
                    a id={ "s-" (s.info.id) } href=(super::session_page(s)) { (session_name(s)) }
                }
                "."
            }
            @if recorded(e) {
                details {
                    summary { "Every field recorded (" (fields(e).len()) ")" }
                    (html::text_table(&["field", "value"], &fields(e)))
                }
            } @else {
                p { "No field recorded." }
            }
        }
    };
    html::page("", "Environment", &nav(site), &body)
}

/// The main fields of every environment side by side, in human units (`7.8 GiB`, `2 CPUs`),
/// each value that differs from the reference environment's marked (`class="differs"`): the
/// system at a glance, every field under each environment's fold.
fn system_table(groups: &[Group<'_>], reference: usize) -> Markup {
    let bytes = |b: u64| {
        let (unit, size) =
            vernier_report::units::unit_or_smallest(vernier_report::units::BYTES, b as f64, 1.0);
        format!("{:.1} {unit}", b as f64 / size)
    };
    type Field = (&'static str, fn(&Environment) -> Option<String>);
    let rows: [Field; 12] = [
        ("kernel", |e| e.kernel_release.clone()),
        ("preemption", |e| e.preemption.clone()),
        ("CPU", |e| e.cpu_model.clone()),
        ("online CPUs", |e| e.online_cpus.map(|n| n.to_string())),
        ("memory", |_| None),
        ("virtualization", |e| e.virtualization.clone()),
        ("governor", |e| e.governor.clone()),
        ("clocksource", |e| e.clocksource.clone()),
        ("tick", |e| e.tick.clone()),
        ("transparent huge pages", |e| e.thp_enabled.clone()),
        ("distribution", |e| e.distro.clone()),
        ("host", |e| e.hostname.clone()),
    ];
    let value = |name: &str, get: fn(&Environment) -> Option<String>, e: &Environment| {
        if name == "memory" {
            e.memory_bytes.map(bytes)
        } else {
            get(e)
        }
    };
    let recorded_groups: Vec<usize> = (0..groups.len())
        .filter(|&i| recorded(groups[i].0))
        .collect();
    if recorded_groups.len() < 2 {
        return html! {};
    }
    html! {
        div.scroll {
            table.system {
                thead {
                    tr {
                        th { "system" }
                        @for &i in &recorded_groups {
                            th { a href={ "#env-" (i + 1) } { "environment " (i + 1) } }
                        }
                    }
                }
                tbody {
                    @for (name, get) in rows {
                        @let of = |i: usize| value(name, get, groups[i].0);
                        @if recorded_groups.iter().any(|&i| of(i).is_some()) {
                            tr {
                                td { (name) }
                                @for &i in &recorded_groups {
                                    @let v = of(i);
                                    @let differs = i != reference && v != of(reference);
                                    td.text.differs[differs] {
                                        (v.as_deref().unwrap_or("-"))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        p.about { "A marked value differs from environment " (reference + 1) "'s." }
    }
}

/// How environment `i` of `groups` differs from environment `reference`, as `vernier env diff`
/// shows it, and their kernel configurations' differences when both texts are stored.
fn difference(site: &Site, groups: &[Group<'_>], reference: usize, i: usize) -> Markup {
    let (r, n) = (reference + 1, i + 1);
    let (a, _) = groups[reference];
    let (b, members) = &groups[i];
    let (ha, hb) = (format!("environment {r}"), format!("environment {n}"));
    let names: Vec<String> = members.iter().map(|s| session_name(s)).collect();
    let heading = html! { h3 { "Environment " (n) " against environment " (r) } };
    if !recorded(b) {
        // One line, not a row per field that the other environment has.
        return html! {
            (heading)
            p {
                (if members.len() == 1 { "Session" } else { "Sessions" }) " "
                (names.join(", ")) " recorded no environment"
                @if let Some(note) = common_note(members) { " (" (note) ")" }
                ": nothing to compare."
            }
        };
    }
    let compared = diff(a, b);
    // The side that recorded fewer fields is partial; its sessions' note says why (imported
    // from cyclictest --json).
    let partial = match (compared.only_a, compared.only_b) {
        (_, 0) => Some((&hb, members.as_slice())),
        (0, _) => Some((&ha, groups[reference].1.as_slice())),
        _ => None,
    };
    let not_compared = compared.not_compared(&ha, &hb);
    let shown = |v: Option<String>| v.unwrap_or_else(|| "(absent)".to_string());
    let rows: Vec<Vec<String>> = compared
        .differences
        .into_iter()
        .map(|d| vec![d.group.to_string(), d.field, shown(d.a), shown(d.b)])
        .collect();
    html! {
        (heading)
        p {
            (if members.len() == 1 { "The session" } else { "The sessions" })
            " of environment " (n) ": " (names.join(", ")) "; environment " (r) " is "
            a href={ "#env-" (r) } { "under Environments" } "."
        }
        @if let Some(line) = not_compared {
            p {
                (line)
                @if let Some((side, sessions)) = partial {
                    " (" (side) " is partial"
                    @if let Some(note) = common_note(sessions) { "; its note: " (note) }
                    ")"
                }
                "."
            }
        }
        @if rows.is_empty() {
            p {
                "No field that " code { "vernier env diff" } " compares differs; the fields of \
                 both are under Environments."
            }
        } @else {
            (html::text_table(&["group", "field", &ha, &hb], &rows))
        }
        (kernel_configs(site, a, b, &ha, &hb))
    }
}

/// The kernel configuration options set in one of `a` and `b` and not the other, or set to
/// different values, when their configurations differ.
fn kernel_configs(site: &Site, a: &Environment, b: &Environment, ha: &str, hb: &str) -> Markup {
    let (Some(ca), Some(cb)) = (&a.kernel_config_sha256, &b.kernel_config_sha256) else {
        return html! {};
    };
    if ca == cb {
        return html! {};
    }
    let texts = (
        site.input.kernel_configs.get(ca),
        site.input.kernel_configs.get(cb),
    );
    let (Some(ta), Some(tb)) = texts else {
        return html! { p { "The kernel configurations differ; their texts are not stored." } };
    };
    let unset = || "is not set".to_string();
    let rows: Vec<Vec<String>> = kernel_config_diff(ta, tb)
        .into_iter()
        .map(|c| {
            vec![
                c.option,
                c.a.unwrap_or_else(unset),
                c.b.unwrap_or_else(unset),
            ]
        })
        .collect();
    html! {
        p { "Kernel configuration:" }
        (html::text_table(&["option", ha, hb], &rows))
    }
}

/// Sessions grouped by their whole environment (every field, not only those the fingerprint
/// covers), in the order each environment first appears.
fn environments(sessions: &[StoredSession]) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for s in sessions {
        match groups.iter_mut().find(|(e, _)| **e == s.info.environment) {
            Some((_, members)) => members.push(s),
            None => groups.push((&s.info.environment, vec![s])),
        }
    }
    groups
}

/// The note that every one of `sessions` has, if they share one (imported from cyclictest
/// --json).
fn common_note<'a>(sessions: &[&'a StoredSession]) -> Option<&'a str> {
    let notes: BTreeSet<Option<&str>> = sessions.iter().map(|s| s.info.note.as_deref()).collect();
    match notes.first() {
        Some(Some(note)) if notes.len() == 1 => Some(note),
        _ => None,
    }
}

/// Whether any field of `e` was recorded: a session imported from a file that says nothing
/// of its machine has none.
fn recorded(e: &Environment) -> bool {
    *e != Environment::default()
}

/// The environment's fields as `show` lists them: `name` or `name.key` and the value.
fn fields(e: &Environment) -> Vec<Vec<String>> {
    let plain = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut rows = Vec::new();
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(e) {
        for (name, v) in fields {
            match v {
                serde_json::Value::Null => {}
                serde_json::Value::Object(map) => {
                    for (k, v) in map {
                        rows.push(vec![format!("{name}.{k}"), plain(&v)]);
                    }
                }
                other => rows.push(vec![name, plain(&other)]),
            }
        }
    }
    rows
}
