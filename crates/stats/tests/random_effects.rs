//! Known answers of the session-to-session noise statistics (fixture written by
//! `scripts/gen_random_effects_fixture.py` from the published formulas with SciPy's
//! quantiles).

// A malformed fixture is a broken test, and panicking with the location is the right report.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use serde_json::Value;
use vernier_stats::{
    between_session_variance, min_detectable_change, widen, Component, SessionMedian,
};

const EXACT: f64 = 1e-9;
/// Where a t or normal quantile enters (statrs and SciPy's cephes differ in the last digits).
const APPROX: f64 = 1e-6;

fn fixture() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/random_effects.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[track_caller]
fn close(got: f64, want: f64, rel: f64, what: &str) {
    let scale = want.abs().max(1e-12);
    assert!(
        (got - want).abs() <= rel * scale,
        "{what}: got {got:e}, expected {want:e}"
    );
}

#[test]
fn session_medians_between_variance_and_widening_match_the_reference() {
    let doc = fixture();
    let level = num(&doc["level"]);
    let cases = doc["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for (i, case) in cases.iter().enumerate() {
        let mut groups: Vec<Vec<SessionMedian>> = Vec::new();
        for (g, sessions) in case["values"].as_array().unwrap().iter().enumerate() {
            let mut group = Vec::new();
            for (s, values) in sessions.as_array().unwrap().iter().enumerate() {
                let xs: Vec<f64> = values.as_array().unwrap().iter().map(num).collect();
                let m = SessionMedian::of(&xs).unwrap();
                let what = format!("case {i} group {g} session {s}");
                close(m.median, num(&case["session_medians"][g][s]), EXACT, &what);
                close(
                    m.within_variance,
                    num(&case["within_variances"][g][s]),
                    APPROX,
                    &what,
                );
                group.push(m);
            }
            groups.push(group);
        }
        let refs: Vec<&[SessionMedian]> = groups.iter().map(Vec::as_slice).collect();
        let b = between_session_variance(&refs).unwrap();
        let want = &case["between"];
        close(
            b.mean_square,
            num(&want["mean_square"]),
            EXACT,
            "mean square",
        );
        close(b.within, num(&want["within"]), APPROX, "within");
        close(b.variance, num(&want["variance"]), APPROX, "variance");
        assert_eq!(b.df, num(&want["df"]));
        assert_eq!(b.sessions as f64, num(&want["sessions"]));

        let w = &case["widen"];
        let extra = Component::with_df(num(&w["extra_variance"]), num(&w["extra_df"]));
        let got = widen(
            num(&w["center"]),
            num(&w["low"]),
            num(&w["high"]),
            level,
            extra,
        )
        .unwrap();
        let e = &w["expected"];
        close(got.low, num(&e["low"]), APPROX, &format!("case {i} low"));
        close(got.high, num(&e["high"]), APPROX, &format!("case {i} high"));
        if extra.variance > 0.0 {
            close(got.df_low, num(&e["df_low"]), APPROX, "df low");
            close(got.df_high, num(&e["df_high"]), APPROX, "df high");
            close(got.se_low, num(&e["se_low"]), APPROX, "se low");
            close(got.se_high, num(&e["se_high"]), APPROX, "se high");
        }
    }
}

#[test]
fn min_detectable_change_matches_the_reference() {
    let doc = fixture();
    for case in doc["mdc"].as_array().unwrap() {
        let df = if case["df"].is_null() {
            f64::INFINITY
        } else {
            num(&case["df"])
        };
        let got = min_detectable_change(
            num(&case["threshold"]),
            num(&case["se"]),
            df,
            doc["level"].as_f64().unwrap(),
            num(&case["power"]),
        )
        .unwrap();
        // The chi-square median that scales the standard error is a planning figure, within
        // 2e-5 (vernier_stats::power).
        close(got, num(&case["expected"]), 2e-5, "mdc");
    }
}
