//! The site of `vernier report` in a real browser: Debian's Chromium, driven by playwright-core
//! (crates/cli/tests/browser/site.mjs), opens every page from file:// and from `vernier serve` and checks that no console
//! error, failed request, request outside the site or dialog happens, that every figure is drawn,
//! that links lead to pages of the site (and fragments to elements of them) and that the tag
//! filter and the figure switches work. Screenshots of the main pages are kept in
//! target/browser-screenshots.
//!
//! Needs /usr/bin/chromium (or $CHROMIUM), node and `npm ci` in crates/cli/tests/browser
//! (`.ci/run` installs all three). Outside CI a missing one skips the test with a message; with
//! CI=true it fails.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod site_fixture;

use std::path::{Path, PathBuf};
use std::process::Command;

use vernier_testkit::{can_run, vernier};

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

/// Runs `vernier run SPEC` on `db` with a few measured runs and the `monitors`, tagged `tags`.
fn run(db: &Path, spec: &str, runs: &str, monitors: &str, tags: &[&str]) {
    let mut cmd = vernier(db);
    cmd.args([
        "run",
        spec,
        "--warmup",
        "0",
        "--min-runs",
        runs,
        "--max-runs",
        runs,
    ]);
    cmd.args(["--quiet", "--monitor", monitors]);
    for tag in tags {
        cmd.args(["--tag", tag]);
    }
    cmd.assert().success();
}

/// The sessions the site shows: the fixture's two kernels (A, its texts hostile, and B; a
/// sweep, monitor series, latency histograms of two CPUs and environments that differ), and
/// sessions measured on this machine: two of hackbench sweeping its groups, which the
/// comparison sets against each other, and one of the latency benchmark (histograms of every
/// CPU); all three with monitors, whose series and summaries are stored.
fn database(dir: &Path) -> PathBuf {
    let db = site_fixture::database(dir);
    for attempt in ["try=1", "try=2"] {
        let spec = "hackbench:groups=1,2,4:loops=50";
        run(&db, spec, "5", "stat,meminfo", &["suite=sched", attempt]);
    }
    // SCHED_OTHER: the benchmark needs no privilege then, so the test runs as any user.
    run(
        &db,
        "latency:duration=1:policy=other",
        "2",
        "stat",
        &["suite=latency"],
    );
    db
}

#[test]
fn every_page_works_in_chromium_from_disk_and_from_serve() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let browser_dir = manifest.join("tests/browser");
    if !can_run(
        "every_page_works_in_chromium_from_disk_and_from_serve",
        missing(&browser_dir),
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let compare = ["--compare", "try=1", "try=2"];
    let site = dir.path().join("site");
    vernier(&db)
        .arg("report")
        .args(compare)
        .arg("-o")
        .arg(&site)
        .assert()
        .success();
    // Each tag of the index's filter and the rows it leaves shown.
    let expected = serde_json::json!({
        "rows": 5,
        "filter": {
            format!("kernel=A{}", vernier_testkit::site::SCRIPT): 1,
            "kernel=B": 1,
            "suite=sched": 2,
            "try=2": 1,
            "suite=latency": 1,
        },
    });
    let (_server, url) = site_fixture::Server::start(&db, &compare);
    // Kept after the test, in the workspace's target directory.
    let shots = manifest.join("../../target/browser-screenshots");
    let _ = std::fs::remove_dir_all(&shots);
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
        "environment.png",
        "monitors.png",
    ] {
        let size = std::fs::metadata(shots.join(shot)).map_or(0, |m| m.len());
        assert!(size > 10_000, "screenshot {shot}: {size} bytes");
    }
}
