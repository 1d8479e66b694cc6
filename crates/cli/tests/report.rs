//! `vernier report` and `vernier serve`: the site of sessions stored in a database. What the
//! pages say and that no stored text becomes markup is the site crate's to test
//! (`crates/site/tests`, on `Site` itself); here the command writes exactly the files of the
//! site of the sessions it selects, the target directory rules, and the server answers the
//! same pages, read-only, and names a port in use.

#![allow(clippy::unwrap_used)]

mod site_fixture;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;

use site_fixture::{database, files, get, stored_bisection, Server};
use vernier_analysis::CompareSettings;
use vernier_site::{Comparison, Input};
use vernier_store::Store;
use vernier_testkit::site::{site_session, site_sessions, start_tags, STARTED_AT_NS};
use vernier_testkit::vernier;

fn report(db: &Path, out: &Path, extra: &[&str]) -> BTreeMap<String, Vec<u8>> {
    vernier(db)
        .arg("report")
        .args(extra)
        .arg("-o")
        .arg(out)
        .assert()
        .success();
    files(out)
}

#[test]
fn report_writes_the_files_of_the_site_of_the_selected_sessions_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = site_sessions();
    let db = dir.path().join("results.db");
    vernier_store::SqliteStore::open(&db)
        .unwrap()
        .import_sessions(&sessions, &BTreeMap::new())
        .unwrap();
    let out = dir.path().join("site");
    let written = report(
        &db,
        &out,
        &["--by", "kernel", "--compare", "kernel=B", "latest~1"],
    );
    // The sessions read back with everything stored, a series per kernel, and B against A
    // (latest~1) as `vernier compare` compares them.
    let (a, b) = (&sessions[..1], &sessions[1..]);
    let expected = vernier_site::build(Input {
        comparisons: vec![Comparison {
            base: "kernel=B".into(),
            new: "latest~1".into(),
            report: vernier_analysis::compare(b, a, &CompareSettings::default()).unwrap(),
            base_sessions: b.iter().map(|s| s.info.id).collect(),
            new_sessions: a.iter().map(|s| s.info.id).collect(),
        }],
        sessions,
        group_by: Some("kernel".into()),
        ..Input::default()
    })
    .unwrap();
    let expected: BTreeMap<String, Vec<u8>> = expected.into_iter().collect();
    assert_eq!(
        written.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &expected {
        assert!(&written[path] == bytes, "{path} differs from Site's");
    }
    // Selectors choose the sessions: the latest alone has no comparison and B's pages only.
    let latest = report(&db, &out, &["latest"]);
    assert!(!latest.contains_key("compare.html"));
    let index = String::from_utf8(latest["index.html"].clone()).unwrap();
    assert!(
        index.contains("kernel=B") && !index.contains("kernel=A"),
        "{index}"
    );
}

#[test]
fn several_new_sides_get_a_comparison_each_named_or_by_the_tag_that_splits_them() {
    let dir = tempfile::tempdir().unwrap();
    let sessions: Vec<_> = [("A", 1.0), ("B", 1.5), ("C", 0.5)]
        .into_iter()
        .enumerate()
        .map(|(i, (kernel, scale))| {
            site_session(
                kernel,
                scale,
                STARTED_AT_NS + i as i64 * 100_000_000_000,
                false,
            )
        })
        .collect();
    let db = dir.path().join("results.db");
    vernier_store::SqliteStore::open(&db)
        .unwrap()
        .import_sessions(&sessions, &BTreeMap::new())
        .unwrap();
    let out = dir.path().join("site");
    let text = |files: &BTreeMap<String, Vec<u8>>, path: &str| {
        String::from_utf8(files[path].clone()).unwrap()
    };
    // Without --compare: B and C each against the oldest session's kernel.
    let auto = report(&db, &out, &[]);
    let index = text(&auto, "index.html");
    for (page, new) in [("compare.html", "B"), ("compare-2.html", "C")] {
        assert!(
            text(&auto, page).contains(&format!("vernier compare kernel=A kernel={new}")),
            "{page}"
        );
        assert!(index.contains(&format!("href=\"{page}\"")), "{index}");
    }
    assert!(!auto.contains_key("compare-3.html"));
    // --compare BASE NEW NEW: each NEW against the BASE the user names, up to the next option.
    let named = report(
        &db,
        &out,
        &["--compare", "kernel=C", "kernel=B", "latest~2"],
    );
    assert!(text(&named, "compare.html").contains("vernier compare kernel=C kernel=B"));
    assert!(text(&named, "compare-2.html").contains("vernier compare kernel=C latest~2"));
    // A second tag that differs makes no comparison on its own; --by names the tag.
    let mut store = vernier_store::SqliteStore::open(&db).unwrap();
    let host = |name: &str| [("host".to_string(), name.to_string())];
    store
        .update_tags(&[sessions[0].info.id], &host("lab1"), &[])
        .unwrap();
    let rest: Vec<_> = sessions[1..].iter().map(|s| s.info.id).collect();
    store.update_tags(&rest, &host("lab2"), &[]).unwrap();
    drop(store);
    assert!(!report(&db, &out, &[]).contains_key("compare.html"));
    let by = report(&db, &out, &["--by", "host"]);
    assert!(text(&by, "compare.html").contains("vernier compare host=lab1 host=lab2"));
    assert!(!by.contains_key("compare-2.html"));
}

#[test]
fn the_target_must_be_new_empty_or_a_previous_report_and_is_replaced_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    // A directory with other files is refused and left as it was.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("thesis.tex"), "keep me").unwrap();
    vernier(&db)
        .args(["report", "-o"])
        .arg(&other)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "neither empty nor a previous vernier report",
        ));
    assert_eq!(files(&other).len(), 1);
    // A missing parent is an error naming it; a selector that matches nothing leaves no
    // directory behind.
    vernier(&db)
        .args(["report", "-o"])
        .arg(dir.path().join("no/such"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("does not exist"));
    let out = dir.path().join("site");
    vernier(&db)
        .args(["report", "kernel=nothing", "-o"])
        .arg(&out)
        .assert()
        .code(2);
    assert!(!out.exists());
    // A previous report is replaced: a file the new one does not have is gone.
    let first = report(&db, &out, &[]);
    assert!(first.contains_key("index.html"));
    std::fs::write(out.join("stale.html"), "old").unwrap();
    let second = report(&db, &out, &["latest"]);
    assert!(!second.contains_key("stale.html"));
    assert!(second.contains_key("index.html"));
    // Nothing is left beside it.
    let beside: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".vernier-report"))
        .collect();
    assert!(beside.is_empty(), "{beside:?}");
}

#[test]
fn serve_answers_the_pages_of_report_read_only_and_names_a_port_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let before = std::fs::read(&db).unwrap();
    let out = dir.path().join("site");
    let site = report(&db, &out, &["--by", "kernel"]);
    let (_server, url) = Server::start(&db, &["--by", "kernel"]);
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    // Every file of the static site, the same bytes.
    for (path, bytes) in &site {
        let (status, body) = get(&address, path);
        assert_eq!(status, 200, "{path}");
        assert!(&body == bytes, "{path} differs from the static site");
    }
    assert!(get(&address, "").1 == site["index.html"]);
    assert_eq!(get(&address, "../results.db").0, 404);
    assert_eq!(get(&address, "no-such.html").0, 404);
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the database changed"
    );
    // A session recorded meanwhile is on the next page served.
    let index = String::from_utf8(get(&address, "index.html").1).unwrap();
    assert!(!index.contains("kernel=C"));
    site_fixture::record(&db, "C", 2.0, 1_700_000_200_000_000_000, false);
    let index = String::from_utf8(get(&address, "index.html").1).unwrap();
    assert!(index.contains("kernel=C"), "{index}");
    // The same port again: an error naming it.
    let port = address.rsplit(':').next().unwrap();
    vernier(&db)
        .args(["serve", "--port", port])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "port {port} on 127.0.0.1 is in use"
        )));
    // A port held by another program.
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    vernier(&db)
        .args(["serve", "--port", &port])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("is in use"));
}

#[test]
fn bars_draw_a_bar_per_series_and_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let out = dir.path().join("bars.svg");
    vernier(&db)
        .args([
            "plot",
            "bars",
            "latest~1",
            "latest",
            "--benchmark",
            "command",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("command medians"), "{text}");
    assert!(text.contains("bar: median, whisker: its 95% interval"));
    // Two rectangles (fill and outline) per bar: 3 configurations x 2 series.
    let bars = start_tags(&text)
        .into_iter()
        .filter(|(n, a)| n == "rect" && a.get("opacity").is_some_and(|o| o == "0.75"))
        .count();
    assert_eq!(bars, 6, "{text}");
}

#[test]
fn sessions_split_by_one_tag_are_compared_without_being_asked() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = site_sessions();
    let db = database(dir.path());
    let out = dir.path().join("site");
    let written = report(&db, &out, &[]);
    // kernel=A... (the oldest) against kernel=B, as `--compare` with those selectors would.
    let (a, b) = (&sessions[..1], &sessions[1..]);
    let report = vernier_analysis::compare(a, b, &CompareSettings::default()).unwrap();
    assert!(written.contains_key("compare.html"), "{:?}", written.keys());
    let index = String::from_utf8(written["index.html"].clone()).unwrap();
    assert!(index.contains("What changed"), "{index}");
    assert!(index.contains("kernel=B"), "{index}");
    let s = &report.summary;
    for count in [
        format!("<span class=\"slower\">{} <a", s.slower),
        format!("<span class=\"faster\">{} <a", s.faster),
        format!(", {} <a class=\"verdict inconclusive\"", s.inconclusive),
    ] {
        assert!(index.contains(&count), "{count} in {index}");
    }
}

#[test]
fn a_stored_bisection_has_a_page_with_its_answer_its_figure_and_its_steps() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let bisection = stored_bisection(&db);
    let out = dir.path().join("site");
    let site = report(&db, &out, &[]);
    let text = |path: &str| String::from_utf8(site[path].clone()).unwrap();
    let page_path = format!("bisect/{}.html", bisection.id);
    let figure_path = format!("bisect/{}.svg", bisection.id);
    let page = text(&page_path);
    // The index links to it; its sessions' commits make no comparison of their own.
    assert!(text("index.html").contains(&format!("href=\"{page_path}\"")));
    assert!(!site.contains_key("compare.html"));
    // Its sessions' tags on the index: the bisection's id and the commit short, whole in the
    // tooltip.
    let index = text("index.html");
    assert!(
        index.contains(&format!("title=\"bisect={}\"", bisection.id)),
        "{index}"
    );
    assert!(index.contains("bisect=00000000</span>"), "{index}");
    assert!(index.contains(&format!("commit={}</span>", &bisection.commits[0][..12])));
    // The answer in the words of `vernier bisect report`: the first bad commit, its effect and
    // interval.
    let terminal = vernier_testkit::vernier_stdout(&db, &["bisect", "report"]);
    let found = terminal
        .lines()
        .find(|l| l.starts_with("first bad commit: "))
        .unwrap_or_else(|| panic!("{terminal}"));
    assert!(found.contains(&bisection.commits[2]), "{terminal}");
    assert!(page.contains(found), "{found} in {page}");
    // How sure the whole bisection is, on the terminal and the page alike.
    let confidence = terminal
        .lines()
        .find(|l| l.starts_with("confidence: ") && l.contains("% that this is the first bad"))
        .unwrap_or_else(|| panic!("{terminal}"));
    assert!(
        page.contains(&confidence.replace('"', "&quot;")),
        "{confidence} in {page}"
    );
    // The steps as the figure of `bisect report --plot` and as tables, each commit's sessions
    // linked to their pages.
    assert!(
        page.contains(&format!("src=\"{}.svg\"", bisection.id)),
        "{page}"
    );
    let svg = text(&figure_path);
    let mut plotted = vernier_testkit::vernier_command(&db);
    let plot = dir.path().join("steps.svg");
    plotted.args(["bisect", "report", "--plot"]).arg(&plot);
    assert!(plotted.output().unwrap().status.success());
    assert_eq!(svg, std::fs::read_to_string(&plot).unwrap());
    for commit in [0, 1, 2, 4] {
        assert!(
            page.contains(&bisection.commits[commit][..12]),
            "{commit}: {page}"
        );
    }
    let links = page.matches("href=\"../sessions/").count();
    // Each session in the table of levels and, for the commits the rule visited, of steps.
    assert!(links >= 6, "{links} session links in {page}");
    for (path, bytes) in &site {
        if let Some(id) = path
            .strip_prefix("sessions/")
            .and_then(|p| p.strip_suffix(".html"))
        {
            assert!(!bytes.is_empty());
            assert!(page.contains(&format!("../sessions/{id}.html")), "{id}");
        }
    }
}
