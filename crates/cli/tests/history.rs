//! `vernier history` end to end on a database built with `vernier import` from generated
//! sessions with planted steps: the change points and steps found, the output formats,
//! `--fail-on-regression` and bad input.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::{json, Value};
use vernier_stats::SeededRng;
use vernier_testkit::{export_runs, ok_json, temp_db, vernier};

const SESSIONS: u32 = 16;

/// The level of a configuration in session `i` on `host`: on host `a`, `groups=4` slows down
/// by 15% from session 8 on and `groups=8` speeds up by 15% from session 10 on; host `b` is
/// flat.
fn level(host: &str, groups: u64, i: u32) -> f64 {
    match (host, groups) {
        ("a", 4) if i >= 8 => 1.15,
        ("a", 8) if i >= 10 => 2.0 / 1.15,
        (_, 4) => 1.0,
        _ => 2.0,
    }
}

fn configuration(session: u32, groups: u64, values: &[f64]) -> Value {
    let runs = export_runs(values, |i| {
        format!("00000000-0000-4000-8000-{session:04}{groups:02}{i:06}")
    });
    json!({
        "id": format!("00000000-0000-4000-9000-{session:010}{groups:02}"),
        "position": groups / 4 - 1, "benchmark": "hackbench", "benchmark_version": "1",
        "options": {"groups": groups, "ipc": "socket"},
        "metric": {"name": "runtime", "unit": "s", "higher_is_better": false},
        "stop_reason": "max-runs", "converged": false, "error": null,
        "runs": runs
    })
}

/// An export document of 16 sessions a host on hosts `a` and `b`, each with hackbench
/// `groups=4` and `groups=8` (10 runs, 1% uniform noise from a fixed seed), tagged
/// `kernel=k<i>` and started an hour apart, the hosts interleaved.
fn export_doc() -> Value {
    export_doc_of(&["a", "b"], level)
}

/// As [`export_doc`], on `hosts` with the levels `level` gives.
fn export_doc_of(hosts: &[&str], level: impl Fn(&str, u64, u32) -> f64) -> Value {
    let mut rng = SeededRng::new(11);
    let mut sessions = Vec::new();
    for i in 0..SESSIONS {
        for (h, &host) in hosts.iter().enumerate() {
            let id = i * 2 + h as u32 + 1;
            let configurations: Vec<Value> = [4u64, 8]
                .into_iter()
                .map(|groups| {
                    let values: Vec<f64> = (0..10)
                        .map(|_| {
                            level(host, groups, i)
                                * (1.0 + 0.01 * (rng.index(2001) as f64 / 1000.0 - 1.0))
                        })
                        .collect();
                    configuration(id, groups, &values)
                })
                .collect();
            sessions.push(json!({
                "id": format!("00000000-0000-4000-a000-{id:012}"),
                "started_at_ns": 1_700_000_000_000_000_000i64
                    + i64::from(i) * 3_600_000_000_000 + h as i64,
                "ended_at_ns": null,
                "status": "completed", "suite": null, "specs": [],
                "tags": {"kernel": format!("k{i}")}, "note": null,
                "settings": {"warmup": 0, "target": 0.02, "min_runs": 1, "max_runs": 10,
                             "min_time_s": 0.0, "max_time_s": 60.0, "interleave": false,
                             "seed": 0},
                "vernier_version": "0.1.0", "environment": {"hostname": host},
                "fingerprint": format!("f{host}"),
                "configurations": configurations
            }));
        }
    }
    json!({"format": "vernier-export", "version": 1, "sessions": sessions})
}

fn database() -> (tempfile::TempDir, PathBuf) {
    database_of(export_doc())
}

fn database_of(doc: Value) -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = temp_db();
    let file = dir.path().join("farm.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    vernier(&db).arg("import").arg(&file).assert().success();
    (dir, db)
}

fn history_json(db: &Path, args: &[&str]) -> Value {
    ok_json(
        vernier(db)
            .arg("history")
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap(),
    )
}

fn series<'a>(report: &'a Value, host: &str, groups: u64) -> &'a Value {
    report["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["host"] == host && s["options"]["groups"] == groups)
        .unwrap_or_else(|| panic!("no series {host} groups={groups} in {report}"))
}

#[test]
fn planted_steps_are_found_with_their_size_and_direction() {
    let (_dir, db) = database();
    let r = history_json(&db, &[]);
    assert_eq!(r["series"].as_array().unwrap().len(), 4);
    assert_eq!(r["threshold"], 0.02);
    assert_eq!(r["max_pvalue"], 0.001);

    let slow = series(&r, "a", 4);
    let points = slow["points"].as_array().unwrap();
    assert_eq!(points.len(), SESSIONS as usize);
    assert!(points
        .windows(2)
        .all(|w| w[0]["started_at_ns"].as_i64() < w[1]["started_at_ns"].as_i64()));
    assert_eq!(points[3]["tags"]["kernel"], "k3");
    assert!(points.iter().all(
        |p| p["ci_low"].as_f64().unwrap() <= p["median"].as_f64().unwrap()
            && p["median"].as_f64().unwrap() <= p["ci_high"].as_f64().unwrap()
    ));
    let steps = slow["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{steps:?}");
    let s = &steps[0];
    assert_eq!(s["index"], 8);
    assert_eq!(s["session"], points[8]["session"]);
    assert_eq!(
        (s["before_sessions"].as_u64(), s["after_sessions"].as_u64()),
        (Some(8), Some(8))
    );
    let ratio = s["ratio"].as_f64().unwrap();
    assert!((ratio - 1.15).abs() < 0.01, "{s}");
    let (lo, hi) = (
        s["ratio_ci_low"].as_f64().unwrap(),
        s["ratio_ci_high"].as_f64().unwrap(),
    );
    assert!(1.02 < lo && lo < ratio && ratio < hi && hi < 1.3, "{s}");
    assert_eq!(s["noise_source"], "sessions");
    assert_eq!(s["direction"], "regression");
    assert_eq!(s["verdict"], "slower");
    assert!(s["p_value"].as_f64().unwrap() < 0.001);

    let fast = series(&r, "a", 8);
    let steps = fast["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(steps[0]["index"], 10);
    assert_eq!(steps[0]["direction"], "improvement");
    assert_eq!(steps[0]["verdict"], "faster");
    assert!((steps[0]["ratio"].as_f64().unwrap() - 1.0 / 1.15).abs() < 0.01);

    for groups in [4, 8] {
        let flat = series(&r, "b", groups);
        assert_eq!(flat["points"].as_array().unwrap().len(), SESSIONS as usize);
        assert!(flat["steps"].as_array().unwrap().is_empty(), "{flat}");
    }
}

#[test]
fn specs_and_selectors_choose_what_is_shown() {
    let (_dir, db) = database();
    let r = history_json(&db, &["hackbench:groups=8"]);
    assert_eq!(r["series"].as_array().unwrap().len(), 2);
    assert!(r["series"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["options"]["groups"] == 8));
    let r = history_json(&db, &["hackbench:groups=4,8:ipc=socket"]);
    assert_eq!(r["series"].as_array().unwrap().len(), 4);
    // One machine.
    let r = history_json(&db, &["host=b"]);
    let all = r["series"].as_array().unwrap();
    assert_eq!(all.len(), 2);
    assert!(all
        .iter()
        .all(|s| s["host"] == "b" && s["machine_id"].is_null()));
    // Several selectors join their sessions: three kernels, on both hosts.
    let r = history_json(
        &db,
        &["kernel=k1", "kernel=k2", "kernel=k3", "hackbench:groups=4"],
    );
    let s = series(&r, "a", 4);
    assert_eq!(s["points"].as_array().unwrap().len(), 3);
    assert_eq!(r["series"].as_array().unwrap().len(), 2);
}

#[test]
fn table_and_markdown_mark_the_change_points() {
    let (_dir, db) = database();
    let out = vernier(&db)
        .args(["history", "hackbench:groups=4"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "hackbench:groups=4 on a (runtime, s, lower is better): 16 sessions, 1 change point"
        ),
        "{text}"
    );
    assert!(
        text.contains("on b (runtime, s, lower is better): 16 sessions, no change point"),
        "{text}"
    );
    assert!(text.contains("kernel=k8"), "{text}");
    let marked: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("regression x1.1"))
        .collect();
    assert!(
        marked.len() == 2 && marked[0].contains("kernel=k8") && marked[0].contains("slower"),
        "{text}"
    );
    assert!(
        text.contains(
            "newest change is a regression beyond the threshold: hackbench:groups=4 on a"
        ),
        "{text}"
    );

    let out = vernier(&db)
        .args(["history", "hackbench:groups=8", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains("| session | started | tags | n | median | 95% CI | change |"),
        "{md}"
    );
    assert!(md.contains("improvement x0.8"), "{md}");
    assert!(md.contains("- 2 series, 1 change point"), "{md}");
}

#[test]
fn fail_on_regression_follows_the_newest_change() {
    let (_dir, db) = database();
    let status = |args: &[&str]| {
        vernier(&db)
            .arg("history")
            .args(args)
            .arg("--fail-on-regression")
            .output()
            .unwrap()
            .status
            .code()
    };
    // groups=4 on host a ends in a 15% regression.
    assert_eq!(status(&[]), Some(1));
    assert_eq!(status(&["hackbench:groups=4"]), Some(1));
    // Beyond a 2% threshold, not beyond 30%.
    assert_eq!(
        status(&["hackbench:groups=4", "--threshold", "30%"]),
        Some(0)
    );
    // groups=8 ends in an improvement.
    assert_eq!(status(&["hackbench:groups=8"]), Some(0));
    // Before the step there is nothing to regress.
    let before: Vec<String> = (0..8).map(|i| format!("kernel=k{i}")).collect();
    let mut args: Vec<&str> = before.iter().map(String::as_str).collect();
    args.push("hackbench:groups=4");
    assert_eq!(status(&args), Some(0));
    // Without the flag, a regression is no failure.
    vernier(&db).arg("history").assert().success();
}

#[test]
fn bad_input_is_refused_with_status_2() {
    let (dir, db) = database();
    let cases: [(&[&str], &str); 8] = [
        (&["--threshold", "0"], "outside (0, 1)"),
        (&["--max-pvalue", "2"], "outside (0, 1)"),
        (&["--window", "1"], "1 is not in 2.."),
        (
            &["hackbench:nope=1"],
            "benchmark 'hackbench' has no option 'nope'; valid options:",
        ),
        (
            &["hackbench:groups=many"],
            "invalid value 'many' for option 'groups'",
        ),
        (
            &["hackbench:groups=99"],
            "no configuration of the selected sessions matches 'hackbench:groups=99'",
        ),
        (&["kernel=none"], "kernel=none"),
        (&["--format", "csv"], "invalid value 'csv'"),
    ];
    for (args, message) in cases {
        vernier(&db)
            .arg("history")
            .args(args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(message));
    }
    let missing = dir.path().join("missing.db");
    vernier(&missing).arg("history").assert().code(2);
    assert!(!missing.exists(), "history created a database");
}

#[test]
fn the_report_has_a_history_page_with_the_change_points() {
    let (dir, db) = database();
    let out = dir.path().join("site");
    vernier(&db)
        .arg("report")
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let page = std::fs::read_to_string(out.join("history.html")).unwrap();
    // A figure per configuration and machine, the steps in a table under each.
    for k in 0..4 {
        assert!(page.contains(&format!("history/{k}.svg")), "{page}");
        assert!(out.join(format!("history/{k}.svg")).is_file());
    }
    assert!(!out.join("history/4.svg").exists());
    assert!(
        page.contains("<td>regression</td><td>slower</td>"),
        "{page}"
    );
    assert!(
        page.contains("<td>improvement</td><td>faster</td>"),
        "{page}"
    );
    assert_eq!(page.matches("No change point.").count(), 2, "{page}");
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("href=\"history.html\""), "{index}");
    let figure = std::fs::read_to_string(out.join("history/0.svg")).unwrap();
    assert!(figure.contains("x1.15"), "the step's label is missing");
}

#[test]
fn a_regression_that_came_and_went_and_a_staircase_are_reported() {
    // groups=4: 20% slower in sessions 6, 7 and 8 only; groups=8: three steps of 1.5%, at
    // sessions 4, 8 and 12, each too small to judge beyond the threshold alone.
    let (dir, db) = database_of(export_doc_of(&["a"], |_, groups, i| match groups {
        4 if (6..9).contains(&i) => 1.2,
        4 => 1.0,
        _ => 2.0 * 1.015f64.powi((i / 4) as i32),
    }));
    let report = history_json(&db, &[]);
    let episode = &series(&report, "a", 4)["episodes"][0];
    assert_eq!(
        (&episode["from_index"], &episode["to_index"]),
        (&json!(6), &json!(9)),
        "{report}"
    );
    assert_eq!(episode["direction"], "regression");
    assert_eq!(episode["verdict"], "slower");
    let ratio = episode["ratio"].as_f64().unwrap();
    assert!((ratio - 1.2).abs() < 0.03, "{ratio}");

    let stairs = series(&report, "a", 8);
    assert_eq!(stairs["cumulative"]["baseline"], "first-level", "{stairs}");
    assert_eq!(stairs["cumulative"]["verdict"], "slower", "{stairs}");
    let table = String::from_utf8(
        vernier(&db)
            .args(["history", "--fail-on-regression"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(table.contains("episode "), "{table}");
    assert!(table.contains("then back"), "{table}");
    // The episode has ended: only the staircase fails, as a drift up to the newest session
    // or through the newest level against the first.
    vernier(&db)
        .args(["history", "hackbench:groups=4", "--fail-on-regression"])
        .assert()
        .code(0);
    vernier(&db)
        .args(["history", "hackbench:groups=8", "--fail-on-regression"])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("drifts up to its newest session")
                .or(predicate::str::contains("worse than its baseline")),
        );
    // Against a named baseline inside the newest level there is nothing to regress.
    vernier(&db)
        .args([
            "history",
            "hackbench:groups=8",
            "--baseline",
            "kernel=k12",
            "--fail-on-regression",
        ])
        .assert()
        .code(0);
    vernier(&db)
        .args(["history", "--baseline", "kernel=nope"])
        .assert()
        .code(2);
    // The site's history page says so too.
    let out = dir.path().join("site");
    vernier(&db)
        .arg("report")
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let page = std::fs::read_to_string(out.join("history.html")).unwrap();
    assert!(page.contains("then back"), "{page}");
    assert!(page.contains("drift "), "{page}");
}
