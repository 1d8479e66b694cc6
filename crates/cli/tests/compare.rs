//! `vernier compare` end to end on imported data with known answers, each output format, the
//! exit codes, and the rejection of values a ratio cannot use.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::{json, Value};
use vernier_testkit::{export_runs, imported_db, temp_db, vernier, vernier_json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A database holding tests/fixtures/two-kernels.json: session kernel=A (base) and kernel=B
/// (new); `doubled` has every time doubled, `ties` is all 5.0 on both sides, `base-only` and
/// `new-only` are on one side only.
fn two_kernels() -> (tempfile::TempDir, PathBuf) {
    imported_db(&fixture("two-kernels.json"))
}

fn compare_json(db: &Path, base: &str, new: &str) -> Value {
    vernier_json(db, &["compare", base, new, "--format", "json"])
}

fn by_case<'a>(report: &'a Value, case: &str) -> &'a Value {
    report["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["options"]["case"] == case)
        .unwrap()
}

/// A one-session export document with configuration `case` holding `values`.
fn session_doc(session: u32, kernel: &str, case: &str, values: &[f64]) -> Value {
    let runs = export_runs(values, |i| {
        format!("00000000-0000-4000-8000-{session:04}{i:08}")
    });
    json!({
        "format": "vernier-export",
        "version": 1,
        "sessions": [{
            "id": format!("00000000-0000-4000-a000-{session:012}"),
            "started_at_ns": i64::from(session) * 1_000_000, "ended_at_ns": null,
            "status": "completed", "suite": null, "specs": [], "tags": {"kernel": kernel},
            "note": null,
            "settings": {"warmup": 0, "target": 0.02, "min_runs": 1, "max_runs": 10,
                         "min_time_s": 0.0, "max_time_s": 60.0, "interleave": false, "seed": 0},
            "vernier_version": "0.1.0", "environment": {}, "fingerprint": "f",
            "configurations": [{
                "id": format!("00000000-0000-4000-9000-{session:012}"),
                "position": 0, "benchmark": "bench", "benchmark_version": "1",
                "options": {"case": case},
                "metric": {"name": "runtime", "unit": "s", "higher_is_better": false},
                "stop_reason": "max-runs", "converged": false, "error": null,
                "runs": runs
            }]
        }]
    })
}

/// A database with session 1 (kernel=A) and session 2 (kernel=B), one configuration each.
fn pair(base: &[f64], new: &[f64]) -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = temp_db();
    for (i, (kernel, values)) in [("A", base), ("B", new)].into_iter().enumerate() {
        let file = dir.path().join(format!("{kernel}.json"));
        let doc = session_doc(i as u32 + 1, kernel, "c", values);
        std::fs::write(&file, doc.to_string()).unwrap();
        vernier(&db).arg("import").arg(&file).assert().success();
    }
    (dir, db)
}

#[test]
fn known_answers_of_a_doubled_time_and_of_equal_samples() {
    let (_dir, db) = two_kernels();
    let r = compare_json(&db, "kernel=A", "kernel=B");
    let d = by_case(&r, "doubled");
    // Every pairwise log-ratio is ln 2 + ln(b_j / b_i), a set symmetric about ln 2.
    assert!((d["ratio"].as_f64().unwrap() - 2.0).abs() < 1e-12, "{d}");
    let (lo, hi) = (
        d["ratio_ci_low"].as_f64().unwrap(),
        d["ratio_ci_high"].as_f64().unwrap(),
    );
    assert!(1.02 < lo && lo <= 2.0 && 2.0 <= hi, "{d}");
    // Fully separated 8 against 8: scipy.stats.mannwhitneyu gives the exact p = 2 / C(16, 8).
    let p = 2.0 / 12870.0;
    assert!((d["p_value"].as_f64().unwrap() - p).abs() < 1e-15, "{d}");
    // Benjamini-Hochberg with the other p-value 1: p * 2 / 1.
    assert!(
        (d["p_adjusted"].as_f64().unwrap() - 2.0 * p).abs() < 1e-15,
        "{d}"
    );
    assert_eq!(d["verdict"], "slower");
    assert_eq!(
        (d["base_n"].as_u64(), d["new_n"].as_u64()),
        (Some(8), Some(8))
    );
    assert_eq!(d["base_median"], 13.5);
    assert_eq!(d["new_median"], 27.0);
    assert!(
        d["welch_ci_low"].as_f64().unwrap() < 2.0 && d["welch_ci_high"].as_f64().unwrap() > 2.0
    );

    // All ties: the interval would be the point [1, 1], which is no interval.
    let t = by_case(&r, "ties");
    assert_eq!(t["ratio"], 1.0);
    assert_eq!(
        (&t["ratio_ci_low"], &t["ratio_ci_high"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(t["p_value"], 1.0);
    assert_eq!(t["welch_ci_low"], Value::Null);
    assert_eq!(t["verdict"], "inconclusive");

    let unmatched = r["unmatched"].as_array().unwrap();
    assert_eq!(unmatched.len(), 2);
    assert_eq!(unmatched[0]["options"]["case"], "base-only");
    assert_eq!(unmatched[0]["side"], "base");
    assert_eq!(unmatched[1]["options"]["case"], "new-only");
    assert_eq!(unmatched[1]["side"], "new");

    let s = &r["summary"];
    assert_eq!(
        (s["slower"].as_u64(), s["equivalent"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(
        (s["faster"].as_u64(), s["inconclusive"].as_u64()),
        (Some(0), Some(1))
    );
    // Geometric mean of the one ratio with an interval, 2.
    assert!(
        (s["geomean_ratio"].as_f64().unwrap() - 2.0).abs() < 1e-12,
        "{s}"
    );
    assert_eq!(s["geomean_of"], 1);
    assert!(s["geomean_ci_low"].as_f64().unwrap() < 2.0);

    // The other way round: faster, and the ratio is the reciprocal.
    let r = compare_json(&db, "kernel=B", "kernel=A");
    let d = by_case(&r, "doubled");
    assert!((d["ratio"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(d["verdict"], "faster");
}

#[test]
fn fail_on_regression_sets_the_exit_code() {
    let (_dir, db) = two_kernels();
    vernier(&db)
        .args(["compare", "kernel=A", "kernel=B"])
        .assert()
        .code(0);
    vernier(&db)
        .args(["compare", "kernel=A", "kernel=B", "--fail-on-regression"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("slower"));
    vernier(&db)
        .args(["compare", "kernel=B", "kernel=A", "--fail-on-regression"])
        .assert()
        .code(0);
    // Session selectors and tag lists work too: latest~1 is kernel A.
    vernier(&db)
        .args([
            "compare",
            "latest~1",
            "kernel=B,tag:host=x",
            "--fail-on-regression",
        ])
        .assert()
        .code(1);
    // A threshold outside (0, 1) is a usage error.
    vernier(&db)
        .args(["compare", "kernel=A", "kernel=B", "--threshold", "150%"])
        .assert()
        .code(2);
}

#[test]
fn every_output_format() {
    let (_dir, db) = two_kernels();
    let table = vernier(&db)
        .args(["compare", "kernel=A", "kernel=B"])
        .output()
        .unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    let first = table.lines().next().unwrap();
    assert!(
        first.starts_with("configuration") && first.contains("verdict"),
        "{table}"
    );
    assert!(table.contains("bench:case=doubled"));
    assert!(table.contains("2.000"));
    assert!(
        table.contains("unmatched:\n  bench:case=base-only (base): not in new"),
        "{table}"
    );
    assert!(
        table.contains(
            "2 compared (threshold 2.0%): 0 faster, 1 slower, 0 equivalent, 1 inconclusive"
        ),
        "{table}"
    );

    // The changes that count, ranked, as signed percentages with their intervals.
    let ranked = table
        .split("changes, largest first (NEW against BASE):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no ranked changes in {table}"));
    let line = ranked.lines().nth(1).unwrap();
    assert!(
        line.trim_start().starts_with("slower") && line.contains("bench:case=doubled  +100.0%"),
        "{table}"
    );

    let md = vernier(&db)
        .args(["compare", "kernel=A", "kernel=B", "--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(
        lines[0],
        "| configuration | base median | new median | ratio | 95% CI | MDC | p | p adj | verdict |"
    );
    assert!(lines[1].starts_with("|---|"));
    assert!(
        lines[2].starts_with("| bench:case=doubled | 13.50 s | 27.00 s | 2.000 |"),
        "{md}"
    );
    assert!(md.contains("- unmatched: `bench:case=new-only` (new): not in base"));
    assert!(md.contains("1. `bench:case=doubled` +100.0% "), "{md}");

    let csv = vernier(&db)
        .args(["compare", "kernel=A", "kernel=B", "--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    let header = &rows[0];
    assert_eq!(header.len(), 27);
    // Fields added later come last, so that columns read by position keep their place.
    assert_eq!(header[24..], ["runs_ratio", "ratio_df", "resolution"]);
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert_eq!(rows[1][col("options")], "case=doubled");
    assert_eq!(rows[1][col("verdict")], "slower");
    assert_eq!(rows[2][col("verdict")], "inconclusive");
    assert_eq!(rows[1][col("base_n")], "8");
    let ratio: f64 = rows[1][col("ratio")].parse().unwrap();
    assert!((ratio - 2.0).abs() < 1e-12);
    assert_eq!(rows[2][col("welch_ci_low")], "");
}

#[test]
fn one_and_two_runs_give_a_ratio_of_medians_and_no_verdict() {
    let (_dir, db) = pair(&[2.0], &[3.0]);
    let r = compare_json(&db, "kernel=A", "kernel=B");
    let c = &r["comparisons"][0];
    assert_eq!(c["ratio"], 1.5);
    assert_eq!(c["ratio_ci_low"], Value::Null);
    assert_eq!(c["verdict"], "inconclusive");
    assert!(
        c["warnings"][0].as_str().unwrap().contains("too few runs"),
        "{c}"
    );
    assert_eq!(r["summary"]["geomean_ratio"], Value::Null);

    let (_dir, db) = pair(&[2.0, 4.0], &[3.0, 5.0]);
    let c = compare_json(&db, "kernel=A", "kernel=B")["comparisons"][0].clone();
    assert!((c["ratio"].as_f64().unwrap() - 4.0 / 3.0).abs() < 1e-12);
    assert_eq!(c["verdict"], "inconclusive");
    assert!(c["welch_ci_low"].is_f64());
}

#[test]
fn ties_pool_into_a_median_of_pairwise_log_ratios() {
    let base = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 4.0];
    let new = [2.0, 3.0, 3.0, 4.0, 4.0, 4.0, 5.0, 5.0];
    let (_dir, db) = pair(&base, &new);
    let c = compare_json(&db, "kernel=A", "kernel=B")["comparisons"][0].clone();
    // Computed here independently: the median of the 64 differences of logs.
    let mut d: Vec<f64> = new
        .iter()
        .flat_map(|y: &f64| base.iter().map(move |x: &f64| y.ln() - x.ln()))
        .collect();
    d.sort_by(f64::total_cmp);
    let want = ((d[31] + d[32]) / 2.0).exp();
    assert!(
        (c["ratio"].as_f64().unwrap() - want).abs() < 1e-12,
        "{c} {want}"
    );
    let (lo, hi) = (
        c["ratio_ci_low"].as_f64().unwrap(),
        c["ratio_ci_high"].as_f64().unwrap(),
    );
    assert!(lo < want && want < hi);
    assert!(c["p_value"].as_f64().unwrap() < 0.1);
}

#[test]
fn zero_and_negative_values_are_rejected() {
    for bad in [0.0, -1.0] {
        // A duration is positive: import refuses the file already.
        let (dir, db) = pair(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]);
        let file = dir.path().join("bad.json");
        std::fs::write(&file, session_doc(3, "C", "c", &[1.0, bad]).to_string()).unwrap();
        vernier(&db)
            .arg("import")
            .arg(&file)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "field 'values.runtime' is {bad}, expected a positive duration in s"
            )));
        // A metric of another unit may be 0 or negative, but a ratio cannot use it.
        let (dir, db) = temp_db();
        for (i, (kernel, values)) in [("A", [1.0, 2.0, 3.0]), ("B", [1.0, bad, 3.0])]
            .into_iter()
            .enumerate()
        {
            let mut doc = session_doc(i as u32 + 1, kernel, "c", &values);
            doc["sessions"][0]["configurations"][0]["metric"]["unit"] = json!("ops");
            let file = dir.path().join(format!("{kernel}.json"));
            std::fs::write(&file, doc.to_string()).unwrap();
            vernier(&db).arg("import").arg(&file).assert().success();
        }
        vernier(&db)
            .args(["compare", "kernel=A", "kernel=B"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(format!(
                "bench:case=c (new): value {bad} of run 1 is not positive"
            )))
            .stderr(predicate::str::contains("logarithm"));
    }
}

#[test]
fn selectors_that_match_nothing_are_errors() {
    let (_dir, db) = two_kernels();
    vernier(&db)
        .args(["compare", "kernel=C", "kernel=B"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no session matches 'kernel=C'"));
    vernier(&db)
        .args(["compare", "kernel=A", "ffff"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("NEW"));
    vernier(&db)
        .args(["compare", "kernel=A", "kernel=B,oops"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'oops' is not KEY=VALUE"));
}

#[test]
fn sessions_matched_by_tags_are_pooled() {
    let (dir, db) = temp_db();
    let sets: [(u32, &str, [f64; 4]); 3] = [
        (1, "A", [1.0, 1.1, 1.2, 1.3]),
        (2, "A", [1.05, 1.15, 1.25, 1.35]),
        (3, "B", [1.0, 1.1, 1.2, 1.3]),
    ];
    for (i, kernel, values) in sets {
        let file = dir.path().join(format!("{i}.json"));
        std::fs::write(&file, session_doc(i, kernel, "c", &values).to_string()).unwrap();
        vernier(&db).arg("import").arg(&file).assert().success();
    }
    let c = compare_json(&db, "kernel=A", "kernel=B")["comparisons"][0].clone();
    assert_eq!(c["base_n"], 8);
    assert_eq!(c["new_n"], 4);
}
