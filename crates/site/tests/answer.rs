//! The answer that opens the index and the compare page: what changed, by how much and how
//! sure, in the numbers and words of `vernier compare`.

#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_sound, comparison, site};
use vernier_analysis::{change_text, Verdict};
use vernier_model::Finding;
use vernier_site::{automatic_comparison, Input};
use vernier_testkit::site::{site_session, site_sessions, STARTED_AT_NS};

/// The text of a page as one line, as a reader reads it (the tags left out).
fn text(page: &str) -> String {
    common::text(page).replace('\n', "")
}

#[test]
fn the_index_opens_with_the_changes_ranked_linked_and_explained() {
    let mut sessions = vec![
        site_session("A", 1.0, STARTED_AT_NS, false),
        site_session("B", 1.5, STARTED_AT_NS + 100_000_000_000, false),
    ];
    sessions[1].info.environment.kernel_release = Some("6.9.0-rc1".into());
    sessions[1].info.findings = vec![Finding::new(
        "virtual-machine",
        vernier_model::Severity::Warning,
        "virtual machine",
        "KVM guest: steal time can disturb the runs",
    )];
    let comparison = comparison(("kernel=A", &sessions[..1]), ("kernel=B", &sessions[1..]));
    let report = comparison.as_ref().unwrap().report.clone();
    let site = site(Input {
        sessions,
        comparison,
        ..Input::default()
    });
    assert_sound(&site);
    let index = &site["index.html"];
    let page = text(index);
    // First on the page, before the sessions' table.
    let answer = page.find("What changed").unwrap();
    assert!(answer < page.find("started (UTC)").unwrap(), "{page}");
    // Every conclusive change, largest first, as `compare` prints it: the signed change,
    // its interval in percent and the verdict, linking to the benchmark's page and the
    // glossary.
    let ranked = vernier_report::compare::ranked(&report);
    assert!(!ranked.is_empty());
    let mut at = 0;
    for c in &ranked {
        let line = format!(
            "{} {} {} {}",
            c.label(),
            change_text(c.ratio),
            c.change_interval_text(),
            c.verdict
        );
        let found = page[at..]
            .find(&line)
            .unwrap_or_else(|| panic!("{line} in {page}"));
        at += found;
        assert!(c.verdict == Verdict::Slower, "B is 50% slower: {line}");
    }
    assert!(index.contains("href=\"bench/0-command.html\""), "{index}");
    // Each change leads to its configuration's row of medians, not only to the page.
    let anchor = "c-command-cmd-true-level-4";
    assert!(
        index.contains(&format!("href=\"bench/0-command.html#{anchor}\"")),
        "{index}"
    );
    let bench = &site["bench/0-command.html"];
    let row = &bench[bench
        .find(&format!("id=\"{anchor}\""))
        .unwrap_or_else(|| panic!("{anchor}"))..];
    assert!(
        row[..row.find("</tr>").unwrap()].contains("level=4"),
        "{row}"
    );
    assert!(index.contains("href=\"glossary.html#slower\""), "{index}");
    // The environments' difference and the findings of each side.
    assert!(page.contains("kernel kernel_release: "), "{page}");
    assert!(page.contains("→ 6.9.0-rc1"), "{page}");
    assert!(
        page.contains("NEW kernel=B: warning virtual machine: KVM guest"),
        "{page}"
    );
    // The glossary explains every verdict word.
    let glossary = text(&site["glossary.html"]);
    for word in [
        "faster",
        "slower",
        "equivalent",
        "inconclusive",
        "withheld",
        "MDC",
    ] {
        assert!(glossary.contains(word), "{word} in {glossary}");
    }
    // The compare page opens with the same answer, and its table's p-values read as
    // `compare` prints them.
    let compare = text(&site["compare.html"]);
    assert!(compare.contains(&format!(
        "{} {}",
        change_text(ranked[0].ratio),
        ranked[0].change_interval_text()
    )));
    assert!(!compare.contains("e-"), "{compare}");
}

#[test]
fn inconclusive_verdicts_say_why_apart_from_the_changes() {
    // Kernel B a hair slower (1%): within the threshold or across its boundary, never a
    // change; with one session a side the interval is wide.
    let sessions = vec![
        site_session("A", 1.0, STARTED_AT_NS, false),
        site_session("B", 1.01, STARTED_AT_NS + 100_000_000_000, false),
    ];
    let comparison = comparison(("kernel=A", &sessions[..1]), ("kernel=B", &sessions[1..]));
    let report = comparison.as_ref().unwrap().report.clone();
    let site = site(Input {
        sessions,
        comparison,
        ..Input::default()
    });
    let page = text(&site["index.html"]);
    assert!(vernier_report::compare::ranked(&report).is_empty());
    let undecided: Vec<_> = report
        .comparisons
        .iter()
        .filter(|c| c.verdict == Verdict::Inconclusive)
        .collect();
    assert!(!undecided.is_empty(), "{page}");
    assert!(page.contains("No configuration changed by more than the threshold"));
    for c in undecided {
        let why = vernier_report::compare::inconclusive_reason(c, report.threshold).unwrap();
        assert!(page.contains(&why), "{why} in {page}");
    }
}

#[test]
fn one_tag_with_two_values_is_compared_on_its_own() {
    let sessions = site_sessions();
    let (key, base, new) = automatic_comparison(&sessions).unwrap();
    assert_eq!(key, "kernel");
    assert_eq!(base, sessions[0].info.tags["kernel"]);
    assert_eq!(new, "B");
    // A second tag that differs: which one is meant is not known.
    let mut two = sessions.clone();
    two[0].info.tags.insert("host".into(), "a".into());
    two[1].info.tags.insert("host".into(), "b".into());
    assert_eq!(automatic_comparison(&two), None);
    // A tag shared by all is no split; a session without the tag is no side.
    two[1].info.tags.insert("host".into(), "a".into());
    assert!(automatic_comparison(&two).is_some());
    two[1].info.tags.clear();
    assert_eq!(automatic_comparison(&two), None);
    // Three values: not two sides.
    let mut three = sessions.clone();
    three.push(site_session(
        "C",
        1.0,
        STARTED_AT_NS + 200_000_000_000,
        false,
    ));
    assert_eq!(automatic_comparison(&three), None);
    assert_eq!(automatic_comparison(&sessions[..1]), None);
}

#[test]
fn each_session_has_a_page_with_its_configurations_and_its_runs_as_csv() {
    let sessions = vec![
        site_session("A", 1.0, STARTED_AT_NS, false),
        site_session("B", 1.5, STARTED_AT_NS + 100_000_000_000, false),
    ];
    let site = site(Input {
        sessions: sessions.clone(),
        ..Input::default()
    });
    assert_sound(&site);
    let index = &site["index.html"];
    for s in &sessions {
        let path = format!("sessions/{}.html", s.info.id);
        assert!(index.contains(&format!("href=\"{path}\"")), "{index}");
        let page = text(&site[&path]);
        // Every configuration with its median, as `show` computes it.
        for c in vernier_analysis::summarize_session(s) {
            let median = vernier_report::format::sig(c.median.unwrap(), 4);
            assert!(page.contains(&median), "{median} in {page}");
        }
        assert!(
            page.contains("Settings") && page.contains("min_runs"),
            "{page}"
        );
        // The runs: a CSV row for each (warmups included) under the export's header.
        let csv = &site[&format!("sessions/{}.csv", s.info.id)];
        let runs: usize = s.configurations.iter().map(|c| c.runs.len()).sum();
        assert_eq!(csv.lines().count(), runs + 1, "{csv}");
        assert!(csv.lines().next().unwrap().contains("session_id"), "{csv}");
    }
    // Every heading can be linked.
    for (path, page) in &site {
        if path.ends_with(".html") {
            assert!(!page.contains("<h2>") && !page.contains("<h3>"), "{path}");
        }
    }
}

#[test]
fn tables_list_configurations_in_the_order_the_figures_draw_them() {
    // Run in the order 4, 2, 1: the figures draw 1, 2, 4, and so do the tables.
    let mut session = site_session("A", 1.0, STARTED_AT_NS, false);
    session.configurations[..3].reverse();
    let site = site(Input {
        sessions: vec![session],
        ..Input::default()
    });
    let page = text(&site["bench/0-command.html"]);
    let at = |label: &str| {
        page.find(label)
            .unwrap_or_else(|| panic!("{label} in {page}"))
    };
    assert!(
        at("level=1") < at("level=2") && at("level=2") < at("level=4"),
        "{page}"
    );
}
