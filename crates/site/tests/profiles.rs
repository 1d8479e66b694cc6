//! Profiles on the site (docs/profiles.md): each benchmark page shows a flame graph per
//! profiled configuration and session, the compare page the differential one of each
//! configuration profiled on both sides. The flame graphs are inferno's SVG, files of their own
//! that the pages show as images (in which no script runs), so that the pages' markup stays
//! the site's own; opened on their own, inferno's script (search, zoom) runs, and it is the only
//! markup in them that the site did not make.

#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_sound, attributes, comparison, site, text};
use vernier_model::ShortId;
use vernier_site::Input;
use vernier_testkit::site::{site_session, with_profiles, FRAME, STARTED_AT_NS};

#[test]
fn benchmark_pages_show_a_flame_graph_per_configuration_and_session_and_compare_a_differential_one()
{
    // Kernel A's texts plain, so that its configurations are B's; the hostile text is a frame.
    let sessions = vec![
        with_profiles(site_session("A", 1.0, STARTED_AT_NS, false), 20),
        with_profiles(
            site_session("B", 1.5, STARTED_AT_NS + 100_000_000_000, false),
            40,
        ),
    ];
    let mut comparison = comparison(("kernel=A", &sessions[..1]), ("kernel=B", &sessions[1..]));
    // As `vernier compare` and `report` make it (the binary's db::compare_report).
    if let Some(c) = &mut comparison {
        c.report.profiles = vernier_analysis::profile::compare_profiles(
            &sessions[..1],
            &sessions[1..],
            c.report.level,
        );
    }
    let site = site(Input {
        sessions: sessions.clone(),
        comparisons: comparison.into_iter().collect(),
        ..Input::default()
    });
    assert_sound(&site);

    // The command page: four flame graphs, levels 1 and 2 of both sessions, each an image of a
    // file of the site that names its configuration and session, and a link to open it.
    let (path, page) = site
        .iter()
        .find(|(p, _)| p.starts_with("bench/") && p.ends_with("-command.html"))
        .unwrap();
    let flames: Vec<String> = attributes(page, "src")
        .into_iter()
        .filter(|s| s.starts_with("../flame/"))
        .collect();
    assert_eq!(flames.len(), 4, "{flames:?}");
    let links = attributes(page, "href");
    let shown = text(page);
    for s in &sessions {
        for c in s.configurations.iter().filter(|c| !c.profiles.is_empty()) {
            let file = format!("flame/{}-{}.svg", s.info.id, c.record.position);
            assert!(
                flames.contains(&format!("../{file}")),
                "{file} in {flames:?}"
            );
            assert!(links.contains(&format!("../{file}")), "{path} links {file}");
            let svg = &site[&file];
            // inferno's: its frames, kernel frames without their `_[k]`, the hostile frame as
            // text.
            assert!(svg.contains("<title>kmem_cache_alloc ("), "{file}");
            assert!(common::text(svg).contains(FRAME), "{file}");
            let caption = format!(
                "{}, session {}: 3 profiled runs (cpu-clock)",
                c.record.key(),
                ShortId(s.info.id)
            );
            assert!(
                shown.contains(&vernier_model::text::printable(&caption).into_owned()),
                "{caption} in {shown}"
            );
        }
    }
    // The latency configuration has no profile and no flame graph.
    assert!(!site.keys().any(|p| p.starts_with("flame/")
        && sessions
            .iter()
            .any(|s| p.ends_with(&format!("{}-3.svg", s.info.id)))));

    // The compare page: the differential flame graph of each configuration profiled on both
    // sides, beside the table of the functions whose share changed.
    let compare = &site["compare.html"];
    let diffs: Vec<String> = attributes(compare, "src")
        .into_iter()
        .filter(|s| s.starts_with("flame/"))
        .collect();
    assert_eq!(
        diffs,
        ["flame/compare-0.svg", "flame/compare-1.svg"],
        "{compare}"
    );
    let compare_text = text(compare);
    assert!(
        compare_text.contains("kmem_cache_alloc_[k]"),
        "{compare_text}"
    );
    for d in &diffs {
        assert!(attributes(compare, "href").contains(d), "compare links {d}");
        assert!(site[d].contains("NEW&apos;s stacks") || site[d].contains("NEW's stacks"));
        // kmem_cache_alloc grew from 20% to 40%: red in the differential graph.
        assert!(site[d].contains("<title>kmem_cache_alloc ("), "{d}");
    }
}
