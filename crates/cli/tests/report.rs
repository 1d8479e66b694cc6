//! `vernier report` and `vernier serve`: the site from sessions written straight into a
//! database. Every page and figure is tokenized as a browser tokenizes HTML (html5gum, WHATWG)
//! to prove that stored text cannot add markup; every link resolves inside the site; nothing
//! refers to another origin; the target directory rules; the server answers the same pages,
//! read-only, and names a port in use.

#![allow(clippy::unwrap_used)]

mod site_fixture;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;

use site_fixture::{database, files, get, start_tags, Server};
use vernier_testkit::vernier;

/// The site's own elements: what the pages and figures are built of. Anything else in a
/// tokenized file came from the data.
const HTML_TAGS: &[&str] = &[
    "html",
    "head",
    "meta",
    "title",
    "link",
    "body",
    "nav",
    "a",
    "main",
    "h1",
    "h2",
    "h3",
    "p",
    "code",
    "span",
    "label",
    "select",
    "option",
    "div",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "figure",
    "img",
    "figcaption",
    "ul",
    "li",
    "script",
    "wbr",
];
const SVG_TAGS: &[&str] = &[
    "svg", "rect", "line", "polyline", "polygon", "circle", "text", "path", "g",
];

/// Checks that `text` (a page or figure) holds only the site's own markup: known elements,
/// no event-handler attribute, scripts only the site's own file and images only its figures.
fn assert_no_injected_markup(path: &str, text: &str) {
    let allowed = if path.ends_with(".svg") {
        SVG_TAGS
    } else {
        HTML_TAGS
    };
    let tags = start_tags(text);
    assert!(!tags.is_empty(), "{path} has no markup");
    for (name, attributes) in &tags {
        assert!(
            allowed.contains(&name.as_str()),
            "{path}: element <{name}> {attributes:?}"
        );
        for (k, v) in attributes {
            assert!(
                !k.starts_with("on"),
                "{path}: attribute {k}={v} on <{name}>"
            );
        }
        match name.as_str() {
            "script" => assert!(
                attributes
                    .get("src")
                    .is_some_and(|s| s.ends_with("vernier.js")),
                "{path}: {attributes:?}"
            ),
            "img" => assert!(
                attributes.get("src").is_some_and(|s| s.ends_with(".svg")),
                "{path}: {attributes:?}"
            ),
            _ => {}
        }
    }
    if path.ends_with(".svg") {
        assert_eq!(
            tags.iter().filter(|(n, _)| n == "svg").count(),
            1,
            "{path}: one svg element"
        );
    }
}

/// The relative links (`href`, `src`) of an HTML page to other files, resolved against its
/// directory and without a fragment (a link to a fragment of the page itself is left out).
fn links(path: &str, text: &str) -> Vec<String> {
    let base: Vec<&str> = path.split('/').collect();
    let base = &base[..base.len() - 1];
    start_tags(text)
        .into_iter()
        .flat_map(|(_, a)| a.into_iter())
        .filter(|(k, v)| (k == "href" || k == "src") && !v.starts_with('#'))
        .map(|(_, v)| {
            let v = v.split('#').next().unwrap().to_string();
            let mut parts: Vec<&str> = base.to_vec();
            for p in v.split('/') {
                match p {
                    ".." => {
                        parts.pop();
                    }
                    "." | "" => {}
                    p => parts.push(p),
                }
            }
            parts.join("/")
        })
        .collect()
}

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
fn stored_text_never_becomes_markup_in_any_page_or_figure() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let out = dir.path().join("site");
    let site = report(&db, &out, &["--compare", "kernel=B", "latest~1"]);
    let mut pages = 0;
    for (path, bytes) in &site {
        if !(path.ends_with(".html") || path.ends_with(".svg")) {
            continue;
        }
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_no_injected_markup(path, &text);
        pages += 1;
    }
    assert!(pages >= 10, "{:?}", site.keys().collect::<Vec<_>>());
    // The hostile texts are there, as text: escaped in the pages and figures that show them.
    let index = String::from_utf8(site["index.html"].clone()).unwrap();
    assert!(index.contains("A&lt;script&gt;alert(&#39;tag&#39;)&lt;/script&gt;"));
    assert!(index.contains("&quot;&gt;&lt;img src=x onerror=alert(&#39;note&#39;)&gt;"));
    let environment = String::from_utf8(site["environment.html"].clone()).unwrap();
    assert!(environment.contains("A&lt;/svg&gt;&lt;script&gt;"));
    let bench: Vec<&String> = site
        .keys()
        .filter(|p| p.starts_with("bench/") && p.ends_with("-box.svg"))
        .collect();
    let figure = String::from_utf8(site[bench[0]].clone()).unwrap();
    assert!(figure.contains("&lt;/svg&gt;&lt;script&gt;"), "{figure}");
    let page = bench[0].replace("-box.svg", ".html");
    let page = String::from_utf8(site[&page].clone()).unwrap();
    assert!(
        page.contains("the command wrote &lt;/td&gt;&lt;script&gt;alert(&#39;error&#39;)"),
        "{page}"
    );
}

#[test]
fn every_link_resolves_inside_the_site_and_nothing_comes_from_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let out = dir.path().join("site");
    let site = report(
        &db,
        &out,
        &["--by", "kernel", "--compare", "latest~1", "latest"],
    );
    for name in [
        "index.html",
        "environment.html",
        "latency.html",
        "compare.html",
        "compare-forest.svg",
        "vernier.css",
        "vernier.js",
        ".vernier-report",
    ] {
        assert!(site.contains_key(name), "{name} missing");
    }
    // The index says what each session ran, as `vernier sessions` does, and counts in words.
    let index = String::from_utf8(site["index.html"].clone()).unwrap();
    assert!(index.contains("<th>ran</th>"), "{index}");
    assert!(
        index.contains("<td class=\"text\">command:<wbr>cmd=true</td>"),
        "{index}"
    );
    assert!(index.contains(": 1 configuration in "), "{index}");
    assert!(!index.contains(" 1 configurations"), "{index}");
    // The medians' unit is named with their metric, as `compare` prints it beside them; the
    // geometric mean is either there or said to be missing, and why.
    let compare = String::from_utf8(site["compare.html"].clone()).unwrap();
    assert!(compare.contains("<td>p99 (us)</td>"), "{compare}");
    assert!(
        compare.contains("Geometric mean of the ") != compare.contains("No geometric mean: "),
        "{compare}"
    );
    assert!(
        !compare.contains("left out of the geometric mean"),
        "{compare}"
    );
    assert!(site.keys().any(|p| p.starts_with("monitors/")));
    assert!(site
        .keys()
        .any(|p| p.starts_with("latency/") && p.ends_with("-maxima.svg")));
    assert!(site.keys().any(|p| p.contains("-line-")));
    for (path, bytes) in &site {
        let text = String::from_utf8_lossy(bytes);
        // SVG names its XML namespaces by URI; they are names, not requests.
        let rest = text
            .replace("xmlns=\"http://www.w3.org/2000/svg\"", "")
            .replace("xmlns:xlink=\"http://www.w3.org/1999/xlink\"", "");
        for scheme in ["http://", "https://", "url(", "@import"] {
            assert!(!rest.contains(scheme), "{path} refers to {scheme}");
        }
        for (_, attributes) in start_tags(&rest) {
            for (k, v) in attributes {
                if k == "href" || k == "src" {
                    assert!(!v.contains(':') && !v.starts_with("//"), "{path}: {k}={v}");
                }
            }
        }
        if path.ends_with(".html") {
            for link in links(path, &text) {
                assert!(
                    site.contains_key(&link),
                    "{path} links to {link}, not in the site"
                );
            }
        }
    }
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
fn a_benchmark_without_runs_and_a_comparison_without_matches_still_make_a_site() {
    use std::collections::BTreeMap as Map;
    use vernier_model::{
        ConfigurationRecord, Environment, MetricInfo, Options, Recorder, SessionInfo,
        SessionStatus, Settings,
    };
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    // A session whose only configuration failed before any run.
    let mut store = vernier_store::SqliteStore::open(&db).unwrap();
    let id = uuid::Uuid::new_v4();
    store
        .begin_session(&SessionInfo {
            id,
            started_at_ns: 1_800_000_000_000_000_000,
            ended_at_ns: None,
            status: SessionStatus::Running,
            suite: None,
            specs: vec!["pipe".into()],
            tags: Map::from([("kernel".to_string(), "broken".to_string())]),
            note: None,
            settings: Settings::default(),
            vernier_version: "test".into(),
            environment: Environment::default(),
            fingerprint: "f".into(),
            findings: Vec::new(),
            setup: Vec::new(),
            monitors: Vec::new(),
        })
        .unwrap();
    let record = ConfigurationRecord {
        id: uuid::Uuid::new_v4(),
        position: 0,
        benchmark: "pipe".into(),
        benchmark_version: "1".into(),
        options: Options(Map::new()),
        metric: MetricInfo {
            name: "round_trip".into(),
            unit: "ns".into(),
            higher_is_better: false,
        },
        secondary_metrics: Vec::new(),
        loads: Vec::new(),
        stop_reason: None,
        converged: false,
        error: Some("the child failed".into()),
    };
    store.add_configuration(id, &record).unwrap();
    store
        .finish_session(id, SessionStatus::Failed, 1_800_000_000_000_001_000)
        .unwrap();
    drop(store);
    let out = dir.path().join("site");
    let site = report(&db, &out, &["--compare", "kernel=B", "kernel=broken"]);
    let compare = String::from_utf8(site["compare.html"].clone()).unwrap();
    assert!(compare.contains("No configuration is on both sides"));
    // The sides are BASE and NEW, as the page calls them everywhere; with nothing compared,
    // nothing is said about a geometric mean.
    assert!(compare.contains("<td>BASE</td>"), "{compare}");
    assert!(!compare.contains("eometric mean"), "{compare}");
    assert!(!site.contains_key("compare-forest.svg"));
    let page = site
        .iter()
        .find(|(p, _)| p.starts_with("bench/") && p.ends_with("-pipe.html"))
        .map(|(_, b)| String::from_utf8(b.clone()).unwrap())
        .unwrap();
    assert!(page.contains("No configuration has measured runs."));
    assert!(!site.keys().any(|p| p.ends_with("-pipe-box.svg")));
    // The links of every page still resolve.
    for (path, bytes) in site.iter().filter(|(p, _)| p.ends_with(".html")) {
        for link in links(path, &String::from_utf8_lossy(bytes)) {
            assert!(site.contains_key(&link), "{path} links to {link}");
        }
    }
}

#[test]
fn benchmark_pages_show_the_monitors_summary_beside_the_results_and_no_empty_section() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let out = dir.path().join("site");
    let site = report(&db, &out, &[]);
    let page = |path: &str| String::from_utf8(site[path].clone()).unwrap();
    let monitors: Vec<&String> = site
        .keys()
        .filter(|p| p.starts_with("monitors/") && p.ends_with(".html"))
        .collect();
    assert_eq!(monitors.len(), 2, "{monitors:?}");
    // Kernel B's runs increased stat.ctxt by 1900, 3800, ... 15200: the median of the eight
    // is 8550, on its monitors page and beside the results on the benchmark's page.
    let (with, without): (Vec<&String>, Vec<&String>) = monitors
        .into_iter()
        .partition(|p| page(p).contains("Summaries per configuration"));
    assert_eq!((with.len(), without.len()), (1, 1));
    let b = page(with[0]);
    assert!(b.contains("<td class=\"num\">8550</td>"), "{b}");
    let bench = site
        .keys()
        .find(|p| p.starts_with("bench/") && p.ends_with("-command.html"))
        .unwrap();
    let bench = page(bench);
    let summary = &bench[bench.find("Monitors during these runs").unwrap()..];
    assert!(
        summary.contains("<th class=\"num\">stat.<wbr>ctxt</th>"),
        "{summary}"
    );
    assert_eq!(summary.matches("<td class=\"num\">8550</td>").count(), 3);
    assert!(summary.contains(&format!("href=\"../{}\"", with[0])));
    assert!(summary.contains(&format!("href=\"../{}\"", without[0])));
    // The hostile session's runs have no summaries: its page has no heading over nothing.
    assert!(!page(without[0]).contains("<h2>Summaries per configuration</h2>"));
}

#[test]
fn sessions_of_one_environment_share_one_difference_that_names_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let a = site_fixture::record(&db, "A", 1.0, 1_700_000_000_000_000_000, false);
    let b1 = site_fixture::record(&db, "B", 1.5, 1_700_000_100_000_000_000, false);
    let b2 = site_fixture::record(&db, "B", 1.6, 1_700_000_200_000_000_000, false);
    let out = dir.path().join("site");
    let site = report(&db, &out, &[]);
    let page = String::from_utf8(site["environment.html"].clone()).unwrap();
    let short = |id: uuid::Uuid| id.to_string()[..8].to_string();
    // Both B sessions ran in one environment: one difference against A's, naming both.
    assert_eq!(
        page.matches("against environment 1</h3>").count(),
        1,
        "{page}"
    );
    let differences = &page[page.find("<h2>Differences</h2>").unwrap()..];
    let differences = &differences[..differences.find("<h2>Environments</h2>").unwrap()];
    assert!(
        differences.contains("The sessions of environment 2"),
        "{differences}"
    );
    assert!(differences.contains(&short(b1)) && differences.contains(&short(b2)));
    assert!(!differences.contains(&short(a)), "{differences}");
    assert_eq!(
        differences.matches(">kernel_release</td>").count(),
        1,
        "{differences}"
    );
    // Each environment's fields once, every session still a target of the index's links.
    assert_eq!(page.matches("<h3 id=\"env-").count(), 2, "{page}");
    for id in [a, b1, b2] {
        assert!(page.contains(&format!("id=\"s-{id}\"")), "{page}");
    }
}

#[test]
fn a_monitor_key_constant_over_every_run_is_stated_with_its_value_not_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let b = site_fixture::record(&db, "B", 1.5, 1_700_000_100_000_000_000, false);
    let out = dir.path().join("site");
    let site = report(&db, &out, &[]);
    let page = String::from_utf8(site[&format!("monitors/{b}.html")].clone()).unwrap();
    // Every key is a choice of the switch; only stat.ctxt, which rose, has a figure.
    for key in ["meminfo.MemTotal_bytes", "stat.ctxt", "vmstat.pswpin"] {
        assert!(page.contains(&format!("<option value=\"{key}\"")), "{page}");
    }
    let figures: Vec<&String> = site
        .keys()
        .filter(|p| p.starts_with(&format!("monitors/{b}/")))
        .collect();
    assert_eq!(figures.len(), 1, "{figures:?}");
    assert!(page.contains(&format!("<img src=\"{b}/")), "{page}");
    assert_eq!(page.matches("<img ").count(), 1, "{page}");
    // The constant keys say what they were, in their unit, in an element the switch shows.
    assert!(
        page.contains(
            "<p data-key=\"meminfo.MemTotal_bytes\">meminfo.<wbr>MemTotal_bytes was 8.000 GiB in \
             every sample of the 24 measured runs that recorded it"
        ),
        "{page}"
    );
    assert!(
        page.contains(
            "<p data-key=\"vmstat.pswpin\">vmstat.<wbr>pswpin did not rise in any of the 24 \
             measured runs"
        ),
        "{page}"
    );
    let index = String::from_utf8(site["index.html"].clone()).unwrap();
    assert!(index.contains("3 series, 2 of them constant"), "{index}");
}

#[test]
fn a_session_that_recorded_no_environment_is_one_line_not_a_difference_per_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    // Later than the import (which starts now): the environment that recorded nothing comes
    // first, and the differences are still against the one that recorded something.
    site_fixture::record(&db, "A", 1.0, 4_000_000_000_000_000_000, false);
    // cyclictest's histogram output says nothing of the machine it ran on.
    let histogram = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/fixtures/cyclictest/2.4-h400-q.txt");
    vernier(&db).arg("import").arg(histogram).assert().success();
    let out = dir.path().join("site");
    let site = report(&db, &out, &[]);
    let page = String::from_utf8(site["environment.html"].clone()).unwrap();
    let differences = &page[page.find("<h2>Differences</h2>").unwrap()..];
    let differences = &differences[..differences.find("<h2>Environments</h2>").unwrap()];
    assert!(
        differences.contains(
            "recorded no environment (imported from cyclictest&#39;s histogram output): nothing \
             to compare.</p>"
        ),
        "{differences}"
    );
    assert!(
        differences.contains("<h3>Environment 1 against environment 2</h3>"),
        "{differences}"
    );
    assert!(!differences.contains("<table"), "{differences}");
    assert!(!page.contains("(absent)"), "{page}");
    // The environment that recorded nothing is listed as such, not as an empty table.
    let environments = &page[page.find("<h2>Environments</h2>").unwrap()..];
    assert_eq!(environments.matches("<table").count(), 1, "{environments}");
    assert!(
        environments.contains("<p>No field recorded.</p>"),
        "{environments}"
    );
}

#[test]
fn a_partial_environment_is_compared_only_in_the_fields_both_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    // A session of this machine (every field vernier captures), then cyclictest's JSON, which
    // says only the kernel, the host name, the architecture and cyclictest's version.
    vernier(&db)
        .args(["run", "mock", "--quiet", "--tag", "side=full"])
        .assert()
        .success();
    let json = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/fixtures/cyclictest/2.4-h400.json");
    vernier(&db).arg("import").arg(json).assert().success();

    // `env diff` and the site count the fields only the full capture has, in one line.
    let diff = vernier(&db)
        .args(["env", "diff", "side=full", "source=cyclictest"])
        .assert()
        .success();
    let diff = String::from_utf8(diff.get_output().stdout.clone()).unwrap();
    let counted = diff
        .lines()
        .find(|l| l.contains(" recorded only by side=full are not compared"))
        .unwrap_or_else(|| panic!("{diff}"));
    let fields: usize = counted.split(' ').next().unwrap().parse().unwrap();
    // At least the kernel's command line and its sysctls.
    assert!(fields > 10, "{diff}");
    // What is left are the fields both recorded and the tools, which belong to a plan: the
    // mock benchmark runs none and the import ran cyclictest.
    let tools = diff.find("[tools]").unwrap_or(diff.len());
    assert!(!diff[..tools].contains("(absent)"), "{diff}");
    assert!(diff.lines().count() < 40, "{diff}");

    let site = report(&db, &dir.path().join("site"), &[]);
    let page = String::from_utf8(site["environment.html"].clone()).unwrap();
    let differences = &page[page.find("<h2>Differences</h2>").unwrap()..];
    let differences = &differences[..differences.find("<h2>Environments</h2>").unwrap()];
    // The environments are numbered in the order of their sessions' times, the import's from
    // its file.
    let first = &page[page.find("id=\"env-1\"").unwrap()..page.find("id=\"env-2\"").unwrap()];
    let (full, partial) = if first.contains("side=full") {
        (1, 2)
    } else {
        (2, 1)
    };
    assert!(
        differences.contains(&format!(
            "<p>{fields} fields recorded only by environment {full} are not compared \
             (environment {partial} is partial; its note: imported from cyclictest --json"
        )),
        "{differences}"
    );
    assert!(
        differences.matches("(absent)").count() <= 1,
        "{differences}"
    );
}

#[test]
fn a_failed_configuration_shows_why_beside_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    // A command that outlives its timeout: its run is killed and the configuration fails, with
    // the reason stored as `show` prints it.
    vernier(&db)
        .args(["run", "command:cmd=sleep 5:timeout=0.2", "--quiet"])
        .assert()
        .failure();
    let reason = "the command did not finish within timeout=0.2 s; its process group was killed";
    vernier(&db)
        .args(["show", "latest"])
        .assert()
        .stdout(predicates::str::contains(format!("error: {reason}")));
    let site = report(&db, &dir.path().join("site"), &[]);
    let page = site
        .iter()
        .find(|(p, _)| p.starts_with("bench/") && p.ends_with("-command.html"))
        .map(|(_, bytes)| String::from_utf8(bytes.clone()).unwrap())
        .unwrap();
    let table = &page[page.find("<h2>Runs of each configuration</h2>").unwrap()..];
    let table = &table[..table.find("</ul>").unwrap()];
    // The row links to the reason under the code `error`, before the warnings it causes.
    let row = &table[table.find("<tbody>").unwrap()..table.find("</tbody>").unwrap()];
    let error = row.find(&format!("title=\"{reason}\">error</a>"));
    let few_runs = row.find(">few-runs</a>");
    assert!(error.is_some() && error < few_runs, "{row}");
    assert!(
        table.contains(&format!("<code>error</code> {reason}</li>")),
        "{table}"
    );
}
