//! The site of sessions whose stored texts would be markup or break a document if they reached
//! it as they are: `<script>`, quotes, `&` and character references, control characters and
//! NUL, in tags, notes, option values, commands, environment strings, monitor keys and stored
//! errors. Every page and figure that `Site` lists is read as a browser's tokenizer reads it.

#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_sound, comparison, file, render_each, site, text, texts_of};
use vernier_model::{OptionValue, StoredSession};
use vernier_site::{Input, Site};
use vernier_testkit::site::{site_sessions, ERROR, IMG, SCRIPT, SVG_END};

/// Characters that a markup document may not hold (a NUL, C0 and C1 controls, an ANSI
/// sequence, a noncharacter), with `&` and a character reference that must stay text.
const CONTROL: &str = "\0\u{1}\u{1b}[2J\u{7f}\u{85}\u{ffff}&amp;";

/// Kernel A of `site_sessions` with `CONTROL` added to every stored text of it: a tag of its
/// own, its note, its specs and commands, its kernel command line and a sysctl, its monitor keys and its
/// stored error. The store refuses some of these (a control character in a tag or note, a NUL
/// anywhere); the site shows whatever it is given.
fn with_control_characters(mut s: StoredSession) -> StoredSession {
    s.info
        .tags
        .insert(format!("ctl{CONTROL}"), format!("v{CONTROL}"));
    s.info.note = Some(format!("{}{CONTROL}", s.info.note.unwrap_or_default()));
    for spec in &mut s.info.specs {
        spec.push_str(CONTROL);
    }
    let e = &mut s.info.environment;
    e.kernel_cmdline = Some(format!("quiet{CONTROL}"));
    e.sysctls
        .insert(format!("kernel.x{CONTROL}"), format!("1{CONTROL}"));
    for c in &mut s.configurations {
        if let Some(OptionValue::Text(cmd)) = c.record.options.0.get_mut("cmd") {
            cmd.push_str(CONTROL);
        }
        if let Some(error) = &mut c.record.error {
            error.push_str(CONTROL);
        }
        for run in &mut c.runs {
            for series in run.monitors.iter_mut().flat_map(|m| &mut m.series) {
                series.metric.push_str(CONTROL);
            }
        }
    }
    s
}

/// Kernels A (hostile, with control characters) and B, compared B against A.
fn hostile_input(group_by: Option<&str>) -> Input {
    let mut sessions = site_sessions();
    sessions[0] = with_control_characters(sessions[0].clone());
    let comparison = comparison(("kernel=B", &sessions[1..]), ("A", &sessions[..1]));
    Input {
        sessions,
        group_by: group_by.map(str::to_string),
        comparisons: comparison.into_iter().collect(),
        ..Input::default()
    }
}

/// A stored text as a page or figure shows it: control characters as the Rust escapes that the
/// terminal shows too.
fn shown(stored: &str) -> String {
    vernier_model::text::printable_in_markup(stored).into_owned()
}

#[test]
fn every_page_and_figure_is_well_formed_and_holds_only_the_sites_own_markup() {
    for group_by in [None, Some("kernel")] {
        let site = site(hostile_input(group_by));
        let checked = assert_sound(&site);
        // Index, two benchmarks with their box, bars and line figures, latency with its
        // figure and maxima, two monitors pages with figures, compare and its forest plot,
        // history, environment.
        assert!(checked >= 18, "{checked}: {:?}", site.keys());
        for kind in [
            "index.html",
            "latency.html",
            "compare.html",
            "compare-forest.svg",
            "environment.html",
        ] {
            assert!(site.contains_key(kind), "{kind} in {:?}", site.keys());
        }
        for (prefix, suffix) in [
            ("bench/", "-box.svg"),
            ("bench/", "-bars.svg"),
            ("bench/", "-line-0.svg"),
            ("latency/", "-maxima.svg"),
            ("monitors/", ".svg"),
        ] {
            assert!(
                site.keys()
                    .any(|p| p.starts_with(prefix) && p.ends_with(suffix)),
                "{prefix}*{suffix} in {:?}",
                site.keys()
            );
        }
    }
}

#[test]
fn stored_text_is_shown_as_the_text_it_is() {
    let input = hostile_input(None);
    let a = input.sessions[0].clone();
    let site = site(input);
    let tag = format!("kernel=A{SCRIPT}");
    let control_tag = shown(&format!("ctl{CONTROL}=v{CONTROL}"));
    let index = &site["index.html"];
    // Tags: in the table and as the filter's choices and values, which the script compares
    // with the rows' `data-tags`, one tag per line.
    let spans = texts_of(index, "span");
    assert!(spans.contains(&tag), "{spans:?}");
    assert!(spans.contains(&control_tag), "{spans:?}");
    let options = texts_of(index, "option");
    assert!(
        options.contains(&tag) && options.contains(&control_tag),
        "{options:?}"
    );
    let values = common::attributes(index, "value");
    assert!(
        values.contains(&tag) && values.contains(&control_tag),
        "{values:?}"
    );
    let rows = common::attributes(index, "data-tags");
    assert!(
        rows.iter().any(|r| r.split('\n').any(|t| t == tag)),
        "{rows:?}"
    );
    // The note, the command, the kernel release: `&amp;` stays the five characters it is.
    let cells = texts_of(index, "td");
    let note = shown(a.info.note.as_deref().unwrap());
    assert!(
        note.starts_with(IMG) && note.ends_with("\\u{ffff}&amp;"),
        "{note}"
    );
    assert!(cells.contains(&note), "{cells:?}");
    assert!(
        cells.contains(&format!("A{SVG_END}")),
        "the kernel release in {cells:?}"
    );
    let cmd = shown(&format!("command:cmd={SVG_END}{CONTROL}"));
    assert!(cells.iter().any(|c| c.contains(&cmd)), "{cmd} in {cells:?}");
    // The environment's strings and the stored error.
    let environment = text(&site["environment.html"]);
    for stored in [
        format!("quiet{CONTROL}"),
        format!("kernel.x{CONTROL}"),
        IMG.to_string(),
    ] {
        assert!(environment.contains(&shown(&stored)), "{stored:?}");
    }
    let bench = file(&site, "bench/", "-command.html");
    // The command is an option that every configuration of the page shares.
    let shared = shown(&format!("cmd={SVG_END}{CONTROL}"));
    assert!(
        text(bench).replace('\n', "").contains(&shared),
        "{shared} in {bench}"
    );
    let titles = common::attributes(bench, "title");
    assert!(
        titles.contains(&shown(&format!("{ERROR}{CONTROL}"))),
        "{titles:?}"
    );
    // A monitor key, as the heading of its page and in its figure's title.
    let key = shown(&format!("stat</svg>.{IMG}{CONTROL}"));
    let pages: Vec<&String> = site
        .keys()
        .filter(|p| p.starts_with("monitors/") && p.ends_with(".html"))
        .collect();
    assert!(
        pages
            .iter()
            .any(|p| texts_of(&site[*p], "h2").contains(&key)),
        "{key} in none of {pages:?}"
    );
    let figures: Vec<&String> = site
        .keys()
        .filter(|p| p.starts_with("monitors/") && p.ends_with(".svg"))
        .collect();
    assert!(
        figures.iter().any(|f| text(&site[*f]).contains(&key)),
        "{key} in none of {figures:?}"
    );
    // Figures: a series named by the hostile tag in the legend of the box plot.
    let figure = text(file(&site, "bench/", "-command-box.svg"));
    assert!(figure.contains(&tag), "{figure}");
    assert!(figure.contains(&control_tag), "{figure}");
}

#[test]
fn each_file_renders_on_its_own_as_the_whole_site_renders_it() {
    let input = hostile_input(Some("kernel"));
    let whole = site(input.clone());
    let site = Site::new(input).unwrap();
    assert_eq!(render_each(&site), whole);
    assert!(site.render("../index.html").is_none());
    assert!(site.render("no-such.html").is_none());
    assert_eq!(
        Site::content_type("bench/0-command.html"),
        "text/html; charset=utf-8"
    );
    assert_eq!(Site::content_type("compare-forest.svg"), "image/svg+xml");
    // The page carries the policy that would stop any script or request that got through.
    assert!(whole["index.html"].contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         img-src 'self'; style-src 'self'; script-src 'self'\">"
    ));
}
