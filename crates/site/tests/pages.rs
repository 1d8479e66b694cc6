//! What the pages of a site say, from sessions built in memory: the index, a benchmark's page
//! with its monitors, the comparison, the environments and the monitors pages.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{assert_links_resolve, comparison, file, site, site_of};
use uuid::Uuid;
use vernier_formats::cyclictest;
use vernier_model::{Environment, SessionStatus, StoredSession};
use vernier_site::Input;
use vernier_testkit::site::{site_session, site_sessions, STARTED_AT_NS};
use vernier_testkit::stored_session;

fn short(id: Uuid) -> String {
    id.to_string()[..8].to_string()
}

/// The part of `page` from `start` up to `end` (to its end without `end`).
fn between<'a>(page: &'a str, start: &str, end: Option<&str>) -> &'a str {
    let from = &page[page
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {page}"))..];
    match end {
        Some(end) => &from[..from.find(end).unwrap_or_else(|| panic!("{end} in {from}"))],
        None => from,
    }
}

/// The session of cyclictest's output in the fixture file `name`, as `vernier import` makes it
/// (a file without times started at `now_ns`).
fn imported(name: &str, output: cyclictest::Output, now_ns: i64) -> StoredSession {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/fixtures/cyclictest")
        .join(name);
    let file = std::fs::File::open(path).unwrap();
    cyclictest::session(&cyclictest::read(output, file).unwrap(), now_ns).unwrap()
}

#[test]
fn the_index_says_what_each_session_ran_and_the_comparison_names_units() {
    let sessions = site_sessions();
    let comparison = comparison(("A", &sessions[..1]), ("B", &sessions[1..]));
    let site = site(Input {
        sessions,
        group_by: Some("kernel".into()),
        comparisons: comparison.into_iter().collect(),
        ..Input::default()
    });
    // The index says what each session ran, as `vernier sessions` does, and counts in words.
    let index = &site["index.html"];
    assert!(index.contains("<th>ran</th>"), "{index}");
    assert!(
        index.contains("<td class=\"text\">command:<wbr>cmd=true</td>"),
        "{index}"
    );
    assert!(
        index.contains(">latency</a>: 1 configuration in 2 series"),
        "{index}"
    );
    assert!(!index.contains(" 1 configurations"), "{index}");
    // One series per kernel.
    let bench = file(&site, "bench/", "-command.html");
    assert!(bench.contains("<p>Series: kernel=A"), "{bench}");
    // The medians' unit is named with their metric, as `compare` prints them beside them; the
    // geometric mean is either there or said to be missing, and why.
    let compare = &site["compare.html"];
    assert!(compare.contains("<td>p99 (us)</td>"), "{compare}");
    assert!(
        compare.contains("Geometric mean of the ") != compare.contains("No geometric mean: "),
        "{compare}"
    );
    assert!(
        !compare.contains("left out of the geometric mean"),
        "{compare}"
    );
    assert_links_resolve(&site);
}

#[test]
fn a_benchmark_without_runs_and_a_comparison_without_matches_still_make_a_site() {
    // A session whose only configuration failed before any run.
    let mut broken = stored_session(1_800_000_000_000_000_000, &[]);
    broken.info.status = SessionStatus::Failed;
    broken.info.tags = BTreeMap::from([("kernel".to_string(), "broken".to_string())]);
    broken.info.environment = Environment::default();
    let config = &mut broken.configurations[0].record;
    config.benchmark = "pipe".into();
    config.metric.name = "round_trip".into();
    config.metric.unit = "ns".into();
    config.stop_reason = None;
    config.error = Some("the child failed".into());
    let mut sessions = site_sessions();
    sessions.push(broken);
    let comparison = comparison(
        ("kernel=B", &sessions[1..2]),
        ("kernel=broken", &sessions[2..]),
    );
    let site = site(Input {
        sessions,
        comparisons: comparison.into_iter().collect(),
        ..Input::default()
    });
    let compare = &site["compare.html"];
    assert!(compare.contains("No configuration is on both sides"));
    // The sides are BASE and NEW, as the page calls them everywhere; with nothing compared,
    // nothing is said about a geometric mean.
    assert!(compare.contains("<td>BASE</td>"), "{compare}");
    assert!(!compare.contains("eometric mean"), "{compare}");
    assert!(!site.contains_key("compare-forest.svg"));
    let page = file(&site, "bench/", "-pipe.html");
    assert!(page.contains("No configuration has measured runs."));
    assert!(!site.keys().any(|p| p.ends_with("-pipe-box.svg")));
    assert_links_resolve(&site);
}

#[test]
fn benchmark_pages_show_the_monitors_summary_beside_the_results_and_no_empty_section() {
    let site = site_of(site_sessions());
    let bench = file(&site, "bench/", "-command.html");
    let summary = between(bench, "Monitors during these runs", None);
    assert!(
        summary.contains("<th class=\"num\">stat.<wbr>ctxt</th>"),
        "{summary}"
    );
    // Kernel B's runs increased stat.ctxt by 1900, 3800, ... 15200: the median of the eight
    // is 8550 in each of its three configurations.
    assert_eq!(summary.matches("<td class=\"num\">8550</td>").count(), 3);
    // Every key of the benchmark is a link away, opening on stat.ctxt.
    assert!(summary.contains("5 keys, 3 of them constant"), "{summary}");
    let opened = summary
        .split("href=\"../monitors/")
        .nth(1)
        .and_then(|l| l.split('"').next())
        .unwrap();
    let page = &site[&format!("monitors/{opened}")];
    assert!(
        page.contains("<h2 id=\"stat-ctxt\">stat.<wbr>ctxt</h2>"),
        "{page}"
    );
}

#[test]
fn monitors_are_a_page_per_benchmark_and_key_shared_by_every_session() {
    // Three sessions of two kernels: one figure per key that changed, not one per session.
    let sessions = vec![
        site_session("A", 1.0, STARTED_AT_NS, false),
        site_session("B", 1.5, STARTED_AT_NS + 100_000_000_000, false),
        site_session("B", 1.6, STARTED_AT_NS + 200_000_000_000, false),
    ];
    let site = site(Input {
        sessions,
        group_by: Some("kernel".to_string()),
        ..Input::default()
    });
    let monitors: Vec<&String> = site.keys().filter(|p| p.starts_with("monitors/")).collect();
    // stat.ctxt alone rose: its page and its figure; the constant keys have neither.
    assert_eq!(monitors.len(), 2, "{monitors:?}");
    let page = &site[monitors
        .iter()
        .find(|p| p.ends_with(".html"))
        .unwrap()
        .as_str()];
    let figure = &site[monitors
        .iter()
        .find(|p| p.ends_with(".svg"))
        .unwrap()
        .as_str()];
    // One figure on the page, whether the script runs or not.
    assert_eq!(page.matches("<img ").count(), 1, "{page}");
    assert!(!page.contains("<select"), "{page}");
    // A panel per configuration, a line per series: its median run of the pooled runs.
    let texts = common::text(figure);
    assert!(texts.contains("kernel=B (median run of 16)"), "{texts}");
    assert!(texts.contains("kernel=A (median run of 8)"), "{texts}");
    // The summaries per configuration and series, pooled over the series' sessions:
    // kernel=B's 16 runs rose by 1900 ... 15200 twice, a median of 8550.
    let table = between(page, ">Per configuration</h2>", None);
    assert_eq!(
        table.matches("<td class=\"num\">16</td>").count(),
        3,
        "{table}"
    );
    assert_eq!(
        table.matches("<td class=\"num\">8550</td>").count(),
        6,
        "{table}"
    );
    // The flat keys are said with their values, folded away.
    assert!(
        page.contains(
            "meminfo.<wbr>MemTotal_bytes was 8.000 GiB in every sample of the 72 measured runs"
        ),
        "{page}"
    );
    assert!(
        page.contains("vmstat.<wbr>pswpin did not rise in any of the 72"),
        "{page}"
    );
    let index = &site["index.html"];
    assert!(index.contains("3 keys, 2 of them constant"), "{index}");
    assert_links_resolve(&site);
}

#[test]
fn a_site_of_many_sessions_has_monitors_of_a_size_that_does_not_grow_with_them() {
    let sessions = |n: i64| -> Vec<StoredSession> {
        (0..n)
            .map(|i| {
                let kernel = if i % 2 == 0 { "A" } else { "B" };
                site_session(kernel, 1.0, STARTED_AT_NS + i * 100_000_000_000, false)
            })
            .collect()
    };
    let monitors = |n: i64| -> (usize, usize) {
        let site = site(Input {
            sessions: sessions(n),
            group_by: Some("kernel".to_string()),
            ..Input::default()
        });
        let files: Vec<&String> = site.keys().filter(|p| p.starts_with("monitors/")).collect();
        (files.len(), files.iter().map(|f| site[*f].len()).sum())
    };
    let (few_files, few_bytes) = monitors(2);
    let (many_files, many_bytes) = monitors(20);
    assert_eq!(few_files, many_files);
    // The lines are the series' median runs: the same points whatever their number; the
    // numbers in the table may be a digit longer.
    assert!(
        many_bytes < few_bytes + few_bytes / 10,
        "{few_bytes} -> {many_bytes}"
    );
}

#[test]
fn sessions_of_one_environment_share_one_difference_that_names_them_all() {
    let a = site_session("A", 1.0, STARTED_AT_NS, false);
    let b1 = site_session("B", 1.5, STARTED_AT_NS + 100_000_000_000, false);
    let b2 = site_session("B", 1.6, STARTED_AT_NS + 200_000_000_000, false);
    let ids = [a.info.id, b1.info.id, b2.info.id];
    let site = site_of(vec![a, b1, b2]);
    let page = &site["environment.html"];
    // Both B sessions ran in one environment: one difference against A's, naming both.
    assert_eq!(
        page.matches("against environment 1</h3>").count(),
        1,
        "{page}"
    );
    let differences = between(page, ">Differences</h2>", Some(">Environments</h2>"));
    assert!(
        differences.contains("The sessions of environment 2"),
        "{differences}"
    );
    assert!(differences.contains(&short(ids[1])) && differences.contains(&short(ids[2])));
    assert!(!differences.contains(&short(ids[0])), "{differences}");
    assert_eq!(
        differences.matches(">kernel_release</td>").count(),
        1,
        "{differences}"
    );
    // Each environment's fields once, every session still a target of the index's links.
    assert_eq!(page.matches("<h3 id=\"env-").count(), 2, "{page}");
    for id in ids {
        assert!(page.contains(&format!("id=\"s-{id}\"")), "{page}");
    }
}

#[test]
fn a_session_that_recorded_no_environment_is_one_line_not_a_difference_per_field() {
    // cyclictest's histogram output says nothing of the machine it ran on. It comes first: the
    // differences are still against the environment that recorded something.
    let histogram = imported(
        "2.4-h400-q.txt",
        cyclictest::Output::Histogram,
        STARTED_AT_NS,
    );
    let a = site_session("A", 1.0, STARTED_AT_NS + 100_000_000_000, false);
    let site = site_of(vec![histogram, a]);
    let page = &site["environment.html"];
    let differences = between(page, ">Differences</h2>", Some(">Environments</h2>"));
    assert!(
        differences.contains(
            "recorded no environment (imported from cyclictest's histogram output): nothing \
             to compare.</p>"
        ),
        "{differences}"
    );
    assert!(
        differences.contains(">Environment 1 against environment 2</h3>"),
        "{differences}"
    );
    assert!(!differences.contains("<table"), "{differences}");
    assert!(!page.contains("(absent)"), "{page}");
    // The environment that recorded nothing is listed as such, not as an empty table.
    let environments = between(page, ">Environments</h2>", None);
    assert_eq!(environments.matches("<table").count(), 1, "{environments}");
    assert!(
        environments.contains("<p>No field recorded.</p>"),
        "{environments}"
    );
}

/// An environment as vernier captures one, with every field recorded.
fn full_environment() -> Environment {
    Environment {
        kernel_release: Some("6.18.0".into()),
        kernel_version: Some("#1 SMP PREEMPT_DYNAMIC".into()),
        kernel_cmdline: Some("quiet console=ttyS0".into()),
        arch: Some("x86_64".into()),
        cpu_model: Some("Intel Xeon".into()),
        online_cpus: Some(2),
        online_cpu_list: Some("0-1".into()),
        memory_bytes: Some(24 << 30),
        hostname: Some("box1".into()),
        machine_id: Some("0123456789abcdef0123456789abcdef".into()),
        distro: Some("Debian GNU/Linux 12".into()),
        virtualization: Some("kvm".into()),
        clocksource: Some("tsc".into()),
        preemption: Some("none (dynamic)".into()),
        sysctls: (0..12)
            .map(|i| (format!("kernel.knob{i}"), i.to_string()))
            .collect(),
        mitigations: BTreeMap::from([("meltdown".to_string(), "Not affected".to_string())]),
        thp_enabled: Some("madvise".into()),
        ..Environment::default()
    }
}

#[test]
fn a_partial_environment_is_compared_only_in_the_fields_both_recorded() {
    // A session of a machine (every field vernier captures), then cyclictest's JSON, which
    // says only the kernel, the host name, the architecture and cyclictest's version.
    let mut full = stored_session(0, &[1.0, 1.1]);
    full.info.environment = full_environment();
    full.info.tags = BTreeMap::from([("side".to_string(), "full".to_string())]);
    let json = imported("2.4-h400.json", cyclictest::Output::Json, 0);
    full.info.started_at_ns = json.info.started_at_ns + 1;
    let fields =
        vernier_analysis::environment::diff(&full.info.environment, &json.info.environment).only_a;
    assert!(fields > 10, "{fields}");
    let site = site_of(vec![json, full]);
    let page = &site["environment.html"];
    let differences = between(page, ">Differences</h2>", Some(">Environments</h2>"));
    assert!(
        differences.contains(&format!(
            "<p>{fields} fields recorded only by environment 2 are not compared \
             (environment 1 is partial; its note: imported from cyclictest --json"
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
    // A command killed at its timeout: the configuration failed after one run, with the reason
    // stored as `show` prints it.
    let reason = "the command did not finish within timeout=0.2 s; its process group was killed";
    let mut session = stored_session(0, &[0.2]);
    session.configurations[0].record.error = Some(reason.into());
    let site = site_of(vec![session]);
    let page = file(&site, "bench/", "-command.html");
    let table = between(page, ">Runs of each configuration</h2>", Some("</ul>"));
    // The row links to the reason under the code `error`, before the warnings it causes.
    let row = between(table, "<tbody>", Some("</tbody>"));
    let error = row.find(&format!("title=\"{reason}\">error</a>"));
    let few_runs = row.find(">few-runs</a>");
    assert!(error.is_some() && error < few_runs, "{row}");
    assert!(
        table.contains(&format!("<code>error</code> {reason}</li>")),
        "{table}"
    );
}

/// A session of `kernel` with a `syscall` configuration whose runs recorded per-call times:
/// 450 calls of 100 ns, 350 of 110, 190 of 120 (each `shift` ns later) and 10 of 5000 ns.
fn syscall_session(kernel: &str, shift: u64, started_at_ns: i64) -> StoredSession {
    use vernier_model::histogram::{Recording, CALL};
    use vernier_model::{OptionValue, Options};
    let mut s = site_session(kernel, 1.0, started_at_ns, false);
    let mut c = s.configurations[0].clone();
    c.record.benchmark = "syscall".into();
    c.record.options = Options(BTreeMap::from([(
        "call".to_string(),
        OptionValue::Text("getpid".into()),
    )]));
    for run in &mut c.runs {
        let mut r = Recording::new();
        for (v, n) in [(100, 450), (110, 350), (120, 190), (5000, 10)] {
            r.record_n(if v < 5000 { v + shift } else { v }, n);
        }
        run.histograms = vec![r.finish(CALL, 0, Some(0))];
        run.monitors = None;
    }
    s.configurations.push(c);
    s
}

#[test]
fn the_syscall_page_shows_the_per_call_distribution_as_show_prints_it() {
    let a = syscall_session("A", 0, STARTED_AT_NS);
    let b = syscall_session("B", 50, STARTED_AT_NS + 100_000_000_000);
    let expected = vernier_analysis::summarize(a.configurations.last().unwrap(), 1)
        .calls
        .unwrap();
    let site = site_of(vec![a, b]);
    let page = file(&site, "bench/", "-syscall.html");
    let section = between(page, ">Per-call times</h2>", Some("</table>"));
    // The numbers of `show --histogram`: 8 runs of 1000 calls, p50 110 ns, p99 120, max 5000.
    assert_eq!(expected.count, 8000);
    for cell in [
        expected.count.to_string(),
        expected.min_ns.to_string(),
        expected.p50_ns.unwrap().to_string(),
        expected.p99_ns.unwrap().to_string(),
        expected.max_ns.to_string(),
    ] {
        assert!(
            section.contains(&format!("<td class=\"num\">{cell}</td>")),
            "{cell} in {section}"
        );
    }
    assert!(
        section.contains("<td class=\"num\">160</td>"),
        "B's p50: {section}"
    );
    assert!(section.contains("-syscall-calls.svg"), "{section}");
    // Both kernels on one axis, in one figure, each with its percentiles in the legend.
    let figure = common::text(file(&site, "bench/", "-syscall-calls.svg"));
    assert!(figure.contains("p50 110 p99 120 max 5000 ns"), "{figure}");
    assert!(figure.contains("p50 160 p99 170 max 5000 ns"), "{figure}");
    // Benchmarks without per-call times have no such section.
    let command = file(&site, "bench/", "-command.html");
    assert!(!command.contains("Per-call times"));
    assert_links_resolve(&site);
}

#[test]
fn the_command_page_shows_user_and_system_time_and_max_rss_as_show_summarizes_them() {
    use vernier_model::MetricInfo;
    let mut a = site_session("A", 1.0, STARTED_AT_NS, false);
    for c in a
        .configurations
        .iter_mut()
        .filter(|c| c.record.benchmark == "command")
    {
        c.record.secondary_metrics = vec![
            MetricInfo::lower("user_time", "s"),
            MetricInfo::lower("system_time", "s"),
            MetricInfo::lower("max_rss_bytes", "bytes"),
        ];
        for (i, run) in c.runs.iter_mut().enumerate() {
            run.values.insert("user_time", 0.5 + i as f64);
            run.values.insert("system_time", 0.25);
            run.values.insert("max_rss_bytes", 4_000_000.0);
        }
    }
    let expected = vernier_analysis::summarize(&a.configurations[0], 1);
    let user = expected
        .secondary
        .iter()
        .find(|m| m.metric == "user_time")
        .unwrap();
    // Eight runs of 0.5, 1.5, ... 7.5 s: the median is 4.
    assert_eq!(user.median, Some(4.0));
    let site = site_of(vec![a]);
    let page = file(&site, "bench/", "-command.html");
    let section = between(page, ">Secondary metrics</h3>", Some("</table>"));
    for metric in ["user_time (s)", "system_time (s)", "max_rss_bytes (bytes)"] {
        assert_eq!(
            section.matches(&format!("<td>{metric}</td>")).count(),
            3,
            "{metric} in {section}"
        );
    }
    assert!(
        section.contains("<td class=\"num\">4.000</td>"),
        "{section}"
    );
    assert!(
        section.contains("<td class=\"num\">0.5000</td>"),
        "{section}"
    );
}

#[test]
fn the_environment_page_opens_with_the_systems_side_by_side_and_folds_the_raw_fields() {
    let mut a = site_session("A", 1.0, STARTED_AT_NS, false);
    let mut b = site_session("B", 1.0, STARTED_AT_NS + 100_000_000_000, false);
    a.info.environment.memory_bytes = Some(8 * 1_073_741_824);
    b.info.environment.memory_bytes = Some(16 * 1_073_741_824);
    a.info.environment.online_cpus = Some(2);
    b.info.environment.online_cpus = Some(2);
    let site = site_of(vec![a, b]);
    let page = &site["environment.html"];
    let table = between(page, "<table class=\"system\">", Some("</table>"));
    // Memory in binary units; B's kernel and memory marked as differing, the CPUs not.
    assert!(table.contains("<td class=\"text\">8.0 GiB</td>"), "{table}");
    assert!(
        table.contains("<td class=\"text differs\">16.0 GiB</td>"),
        "{table}"
    );
    assert!(
        table.contains("<td class=\"text differs\">B</td>"),
        "{table}"
    );
    assert_eq!(
        table.matches("<td class=\"text\">2</td>").count(),
        2,
        "{table}"
    );
    // Every field of each environment is folded away under it.
    assert_eq!(
        page.matches("<summary>Every field recorded").count(),
        2,
        "{page}"
    );
}
