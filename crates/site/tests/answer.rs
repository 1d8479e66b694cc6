//! The answer that opens the index and the compare page: what changed, by how much and how
//! sure, in the numbers and words of `vernier compare`.

#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_sound, comparison, site};
use vernier_analysis::{change_text, Verdict};
use vernier_model::Finding;
use vernier_site::{automatic_comparisons, Input};
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
        comparisons: comparison.into_iter().collect(),
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
        comparisons: comparison.into_iter().collect(),
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
fn one_tag_that_splits_the_sessions_is_compared_against_its_first_value() {
    let sessions = site_sessions();
    let (key, values) = automatic_comparisons(&sessions, None).unwrap();
    assert_eq!(key, "kernel");
    assert_eq!(values, [sessions[0].info.tags["kernel"].as_str(), "B"]);
    // A second tag that differs: which one is meant is not known, unless --by names it.
    let mut two = sessions.clone();
    two[0].info.tags.insert("host".into(), "a".into());
    two[1].info.tags.insert("host".into(), "b".into());
    assert_eq!(automatic_comparisons(&two, None), None);
    let (key, values) = automatic_comparisons(&two, Some("host")).unwrap();
    assert_eq!(
        (key.as_str(), values),
        ("host", vec!["a".into(), "b".into()])
    );
    // A tag shared by all is no split; a session without the tag is no side, unless --by
    // names the tag, which leaves it out.
    two[1].info.tags.insert("host".into(), "a".into());
    assert!(automatic_comparisons(&two, None).is_some());
    assert_eq!(automatic_comparisons(&two, Some("host")), None);
    two[1].info.tags.clear();
    assert_eq!(automatic_comparisons(&two, None), None);
    // Three values: the second and the third each against the first (the oldest session's).
    let mut three = sessions.clone();
    three.push(site_session(
        "C",
        1.0,
        STARTED_AT_NS + 200_000_000_000,
        false,
    ));
    let (_, values) = automatic_comparisons(&three, None).unwrap();
    assert_eq!(values, [sessions[0].info.tags["kernel"].as_str(), "B", "C"]);
    assert_eq!(automatic_comparisons(&sessions[..1], None), None);
}

#[test]
fn several_values_get_an_answer_and_a_compare_page_each_the_first_answer_first() {
    let sessions = vec![
        site_session("A", 1.0, STARTED_AT_NS, false),
        site_session("B", 1.5, STARTED_AT_NS + 100_000_000_000, false),
        site_session("C", 0.5, STARTED_AT_NS + 200_000_000_000, false),
    ];
    let b = comparison(("kernel=A", &sessions[..1]), ("kernel=B", &sessions[1..2]));
    let c = comparison(("kernel=A", &sessions[..1]), ("kernel=C", &sessions[2..]));
    let reports = [b.clone().unwrap().report, c.clone().unwrap().report];
    let site = site(Input {
        sessions,
        comparisons: b.into_iter().chain(c).collect(),
        ..Input::default()
    });
    assert_sound(&site);
    let index = &site["index.html"];
    let page = text(index);
    // Each answer under a heading naming its sides, B's first, both before the sessions.
    let first = page
        .find("What changed: kernel=B against kernel=A")
        .unwrap();
    let second = page
        .find("What changed: kernel=C against kernel=A")
        .unwrap();
    assert!(first < second, "{page}");
    assert!(second < page.find("started (UTC)").unwrap(), "{page}");
    for (n, (report, verdict)) in reports
        .iter()
        .zip([Verdict::Slower, Verdict::Faster])
        .enumerate()
    {
        let ranked = vernier_report::compare::ranked(report);
        assert!(!ranked.is_empty());
        let answer = if n == 0 { first } else { second };
        let end = if n == 0 { second } else { page.len() };
        for x in &ranked {
            let line = format!(
                "{} {} {} {}",
                x.label(),
                change_text(x.ratio),
                x.change_interval_text(),
                x.verdict
            );
            assert!(page[answer..end].contains(&line), "{line} in {page}");
            assert_eq!(x.verdict, verdict, "{line}");
        }
    }
    // A compare page each, its forest beside it, each answer pointing to its own page.
    for (i, (path, forest, new)) in [
        ("compare.html", "compare-forest.svg", "kernel=B"),
        ("compare-2.html", "compare-2-forest.svg", "kernel=C"),
    ]
    .into_iter()
    .enumerate()
    {
        let compare = &site[path];
        assert!(compare.contains(&format!("src=\"{forest}\"")), "{compare}");
        assert!(site.contains_key(forest));
        assert!(
            text(compare).contains(&format!("vernier compare kernel=A {new} reports it")),
            "{compare}"
        );
        let id = if i == 0 { "answer" } else { "answer-2" };
        assert!(index.contains(&format!("id=\"{id}\"")), "{index}");
        assert!(
            index.contains(&format!("href=\"{path}\"")),
            "{path} in {index}"
        );
        let change = change_text(reports[i].comparisons[0].ratio);
        assert!(text(compare).contains(&change), "{change} in {path}");
    }
    // Both in the navigation, by what they compare.
    assert!(page.contains("Compare kernel=B") && page.contains("Compare kernel=C"));
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
