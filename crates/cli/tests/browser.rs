//! The site of `vernier report` in a real browser: Debian's Chromium, driven by playwright-core
//! (crates/cli/tests/browser/site.mjs), opens every page from file:// and from `vernier serve`
//! and checks that no console error, failed request or dialog happens, that every figure is
//! drawn, that links lead to pages of the site and that the tag filter and the figure switches
//! work. Screenshots of the main pages are kept in target/browser-test/screenshots.
//!
//! Needs /usr/bin/chromium (or $CHROMIUM), node and `npm ci` in crates/cli/tests/browser
//! (`.ci/run` installs all three). Outside CI a missing one skips the test with a message; with
//! CI=true it fails.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod site_fixture;

use std::path::{Path, PathBuf};
use std::process::Command;

use vernier_testkit::vernier;

/// What is missing for the test, if anything.
fn missing(browser_dir: &Path) -> Option<String> {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        return Some(format!(
            "no Chromium at {chromium} (apt-get install chromium)"
        ));
    }
    if Command::new("node").arg("--version").output().is_err() {
        return Some("no node (apt-get install nodejs npm)".into());
    }
    if !browser_dir.join("node_modules/playwright-core").exists() {
        return Some(format!(
            "no playwright-core (npm ci --prefix {})",
            browser_dir.display()
        ));
    }
    None
}

#[test]
fn every_page_works_in_chromium_from_disk_and_from_serve() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let browser_dir = manifest.join("tests/browser");
    if let Some(what) = missing(&browser_dir) {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("the browser test must run in CI: {what}");
        }
        println!("skipped: {what}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = site_fixture::database(dir.path());
    // Kept after the test: target/browser-test (the workspace's target directory).
    let out = manifest.join("../../target/browser-test");
    let _ = std::fs::remove_dir_all(out.join("site"));
    std::fs::create_dir_all(&out).unwrap();
    let site = out.join("site");
    vernier(&db)
        .args(["report", "--compare", "latest~1", "latest", "-o"])
        .arg(&site)
        .assert()
        .success();
    let (_server, url) = site_fixture::Server::start(&db, &["--compare", "latest~1", "latest"]);
    // The two sessions carry kernel tags A<script>... and B: each filter shows one row.
    let expected = serde_json::json!({
        "rows": 2,
        "filter": {
            format!("kernel=A{}", site_fixture::SCRIPT): 1,
            "kernel=B": 1,
        },
    });
    let shots = out.join("screenshots");
    let result = Command::new("node")
        .arg(browser_dir.join("site.mjs"))
        .arg(site.canonicalize().unwrap())
        .arg(&url)
        .arg(&shots)
        .arg(expected.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    println!("{stdout}");
    assert!(result.status.success(), "{stdout}\n{stderr}");
    for shot in [
        "index.png",
        "benchmark.png",
        "latency.png",
        "compare.png",
        "monitors.png",
    ] {
        let size = std::fs::metadata(shots.join(shot)).map_or(0, |m| m.len());
        assert!(size > 10_000, "screenshot {shot}: {size} bytes");
    }
}
