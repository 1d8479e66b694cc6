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

use vernier_testkit::{can_run, temp_db, vernier};

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
    // The fixture's kernels have profiled runs of two configurations each: four flame graphs.
    let expected = serde_json::json!({
        "flames": 4,
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

/// Kernel B against A: `mode=cross-cpu` takes 15% longer, `mode=same-cpu` 10% less and
/// `mode=idle` the same.
const KERNEL_B: (&str, &str, [f64; 3]) = ("B", "6.18.0-rc4", [1.15, 0.90, 1.0]);
/// Kernel C against A: `mode=same-cpu` takes 20% longer, `mode=idle` 8% less.
const KERNEL_C: (&str, &str, [f64; 3]) = ("C", "6.18.0", [1.0, 1.20, 0.92]);

/// An export of kernel A and `others` (name, release, each mode's level against A), three
/// sessions each, of one benchmark in three configurations (`mode=cross-cpu`, `same-cpu`,
/// `idle`); each session's runs vary by a few tenths of a percent around its own level.
fn kernels_export(others: &[(&str, &str, [f64; 3])]) -> serde_json::Value {
    let modes = ["cross-cpu", "same-cpu", "idle"];
    let kernels: Vec<(&str, &str, [f64; 3])> = std::iter::once(("A", "6.17.9", [1.0; 3]))
        .chain(others.iter().copied())
        .collect();
    let mut sessions = Vec::new();
    for (k, (kernel, release, changes)) in kernels.iter().enumerate() {
        for s in 0..3u64 {
            let n = k as u64 * 3 + s;
            let start = 1_700_000_000_000_000_000u64 + n * 1_000_000_000_000;
            let configurations: Vec<serde_json::Value> = modes
                .iter()
                .enumerate()
                .map(|(c, mode)| {
                    let factor = changes[c];
                    // The session's level, within ±0.4% in no order, the same on both kernels.
                    let level = 10.0 * (c + 1) as f64 * factor * [1.0, 1.004, 0.997][s as usize];
                    let runs: Vec<serde_json::Value> = (0..12u64)
                        .map(|i| {
                            let at = start + (c as u64 * 12 + i) * 1_000_000_000;
                            // Twelve distinct values in no order: no ties, no drift.
                            let step = [5, -2, 9, -7, 1, -11, 7, -4, 11, -9, 3, -1][i as usize];
                            let wobble = 0.0003 * f64::from(step);
                            serde_json::json!({
                                "id": format!("{:08}-0000-4000-8000-{:02}{:010}", n + 1, c, i),
                                "index": i, "warmup": false, "round": 0, "preceding_executions": i,
                                "started_at_ns": at, "ended_at_ns": at + 500_000_000,
                                "values": { "time": level * (1.0 + wobble) },
                                "rusage": { "user_cpu_ns": 1000, "system_cpu_ns": 1000,
                                            "voluntary_cs": 1, "involuntary_cs": 0,
                                            "max_rss_bytes": 4096 },
                                "foreign_cpu_ns": 0, "controller_cpu_ns": 1000
                            })
                        })
                        .collect();
                    serde_json::json!({
                        "id": format!("{:08}-0000-4000-9000-{:012}", n + 1, c),
                        "position": c, "benchmark": "pipe", "benchmark_version": "1",
                        "options": { "mode": mode, "messages": 10000 },
                        "metric": { "name": "time", "unit": "ms", "higher_is_better": false },
                        "stop_reason": "converged", "converged": true, "error": null,
                        "runs": runs
                    })
                })
                .collect();
            sessions.push(serde_json::json!({
                "id": format!("{:08}-0000-4000-a000-000000000000", n + 1),
                "started_at_ns": start, "ended_at_ns": start + 900_000_000_000,
                "status": "completed", "suite": null, "specs": ["pipe"],
                "tags": { "kernel": kernel },
                "note": null,
                "settings": { "warmup": 0, "target": 0.02, "min_runs": 12, "max_runs": 12,
                              "min_time_s": 0.0, "max_time_s": 60.0, "interleave": false,
                              "seed": 1 },
                "vernier_version": "0.1.0",
                "environment": { "online_cpus": 2, "kernel_release": release },
                "fingerprint": "",
                "configurations": configurations
            }));
        }
    }
    serde_json::json!({ "format": "vernier-export", "version": 1, "sessions": sessions })
}

/// The changes the answer of `new` against kernel A must show, largest first, as `vernier
/// compare kernel=A NEW` computes them: label, signed change, interval and verdict.
fn changes(db: &Path, new: &str) -> Vec<serde_json::Value> {
    let out = vernier(db)
        .args(["compare", "kernel=A", new, "--format", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut changes: Vec<(f64, serde_json::Value)> = report["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "slower" || c["verdict"] == "faster")
        .map(|c| {
            let ratio = c["ratio"].as_f64().unwrap();
            let change = vernier_analysis::change_text;
            let interval = format!(
                "[{}, {}]",
                change(c["ratio_ci_low"].as_f64().unwrap()),
                change(c["ratio_ci_high"].as_f64().unwrap())
            );
            let options = c["options"].as_object().unwrap();
            let label = format!(
                "pipe:messages={}:mode={}",
                options["messages"],
                options["mode"].as_str().unwrap()
            );
            let expected = serde_json::json!({
                "label": label, "change": change(ratio), "interval": interval,
                "verdict": c["verdict"],
            });
            (ratio.ln().abs(), expected)
        })
        .collect();
    changes.sort_by(|a, b| b.0.total_cmp(&a.0));
    changes.into_iter().map(|(_, e)| e).collect()
}

#[test]
fn the_answer_is_on_the_first_screen_and_one_click_from_its_runs() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let browser_dir = manifest.join("tests/browser");
    if !can_run(
        "the_answer_is_on_the_first_screen_and_one_click_from_its_runs",
        missing(&browser_dir),
    ) {
        return;
    }
    let (dir, db) = temp_db();
    let file = dir.path().join("two-kernels.json");
    std::fs::write(&file, kernels_export(&[KERNEL_B]).to_string()).unwrap();
    vernier(&db).arg("import").arg(&file).assert().success();
    // No --compare: the sessions split by their kernel tag, A (the oldest) against B.
    let site = dir.path().join("site");
    vernier(&db)
        .arg("report")
        .arg("-o")
        .arg(&site)
        .assert()
        .success();
    let expected = changes(&db, "kernel=B");
    // Both planted changes, with their signs.
    assert_eq!(expected.len(), 2, "{expected:?}");
    assert_eq!(expected[0]["change"], "+15.0%", "{expected:?}");
    assert_eq!(expected[1]["change"], "-10.0%", "{expected:?}");
    let answers = serde_json::json!([
        { "id": "answer", "page": "compare.html", "changes": expected },
    ]);
    // Kept after the test, apart from the other test's screenshots, which it replaces whole.
    check_answers(&site, "browser-screenshots-answer", &answers);
}

/// Runs answer.mjs on the site in `site` for `answers` ([{id, page, changes}]), keeping its
/// screenshots in the workspace's target/`shots`, and fails on any problem it reports.
fn check_answers(site: &Path, shots: &str, answers: &serde_json::Value) {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let browser_dir = manifest.join("tests/browser");
    let shots = manifest.join("../../target").join(shots);
    let result = Command::new("node")
        .arg(browser_dir.join("answer.mjs"))
        .arg(site.canonicalize().unwrap())
        .arg(&shots)
        .arg(answers.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    println!("{stdout}");
    assert!(result.status.success(), "{stdout}\n{stderr}");
    for shot in [
        "answer-first-screen.png",
        "answer-index.png",
        "answer-compare.png",
    ] {
        let size = std::fs::metadata(shots.join(shot)).map_or(0, |m| m.len());
        assert!(size > 10_000, "screenshot {shot}: {size} bytes");
    }
}

#[test]
fn with_three_kernels_each_answers_against_the_first_and_leads_to_its_evidence() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let browser_dir = manifest.join("tests/browser");
    if !can_run(
        "with_three_kernels_each_answers_against_the_first_and_leads_to_its_evidence",
        missing(&browser_dir),
    ) {
        return;
    }
    let (dir, db) = temp_db();
    let file = dir.path().join("three-kernels.json");
    std::fs::write(&file, kernels_export(&[KERNEL_B, KERNEL_C]).to_string()).unwrap();
    vernier(&db).arg("import").arg(&file).assert().success();
    // No --compare: the kernel tag splits the sessions in three, B and C each against A (the
    // oldest), as `vernier compare kernel=A kernel=B` and `kernel=A kernel=C` compare them.
    let site = dir.path().join("site");
    vernier(&db)
        .arg("report")
        .arg("-o")
        .arg(&site)
        .assert()
        .success();
    let (b, c) = (changes(&db, "kernel=B"), changes(&db, "kernel=C"));
    let signs = |v: &[serde_json::Value]| -> Vec<String> {
        v.iter()
            .map(|x| x["change"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(signs(&b), ["+15.0%", "-10.0%"], "{b:?}");
    assert_eq!(signs(&c), ["+20.0%", "-8.0%"], "{c:?}");
    let answers = serde_json::json!([
        { "id": "answer", "page": "compare.html", "changes": b },
        { "id": "answer-2", "page": "compare-2.html", "changes": c },
    ]);
    check_answers(&site, "browser-screenshots-answers", &answers);
}
