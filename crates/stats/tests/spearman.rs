//! Spearman's rho, its p-value and the Benjamini-Hochberg adjustment over a group of keys,
//! against SciPy (`scipy.stats.spearmanr`, `false_discovery_control`; fixture written by
//! `scripts/gen_why_fixtures.py`). Relative tolerance 1e-9 for rho (arithmetic on ranks),
//! 1e-6 for p-values (Student's t: statrs and SciPy's cephes differ in the last digits).

// A malformed fixture is a broken test, and panicking with the location is the right report.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use serde_json::Value;
use vernier_stats::{benjamini_hochberg, spearman, spearman_permutation};

#[track_caller]
fn close(got: f64, want: f64, rel: f64, what: &str) {
    let scale = want.abs().max(1e-300);
    assert!(
        got == want || (got - want).abs() <= rel * scale,
        "{what}: got {got:e}, SciPy {want:e}"
    );
}

fn fixture() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spearman.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn spearman_and_bh_match_scipy() {
    let doc = fixture();
    let groups = doc["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 3);
    let mut checked = 0;
    for group in groups {
        let mut ps = Vec::new();
        for case in group.as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let r = spearman(&nums(&case["x"]), &nums(&case["y"])).unwrap();
            close(r.rho, case["rho"].as_f64().unwrap(), 1e-9, name);
            // A p-value of 0 (rho of exactly 1) is matched exactly by `close`.
            close(r.p, case["p"].as_f64().unwrap(), 1e-6, name);
            ps.push(r.p);
            checked += 1;
        }
        let adjusted = benjamini_hochberg(&ps).unwrap();
        for (case, a) in group.as_array().unwrap().iter().zip(adjusted) {
            close(a, case["p_adjusted"].as_f64().unwrap(), 1e-6, "adjusted");
        }
    }
    assert_eq!(checked, 19);
}

/// `scipy.stats.permutation_test(permutation_type="pairings")`: exact p-values (every
/// pairing) to 1e-12; a p-value from 9,999 drawn pairings within 4 binomial standard errors of
/// SciPy's, whose stream differs from ours.
#[test]
fn permutation_p_values_match_scipy() {
    let doc = fixture();
    let cases = doc["permutation"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let resamples = case["resamples"].as_u64().unwrap() as usize;
        let r = spearman_permutation(&nums(&case["x"]), &nums(&case["y"]), resamples, 11).unwrap();
        close(r.rho, case["rho"].as_f64().unwrap(), 1e-9, name);
        let want = case["p"].as_f64().unwrap();
        if case["exact"].as_bool().unwrap() {
            close(r.p, want, 1e-12, name);
        } else {
            let se = (want * (1.0 - want) / resamples as f64).sqrt() * 2.0;
            assert!(
                (r.p - want).abs() < 4.0 * se,
                "{name}: {} against {want}",
                r.p
            );
        }
    }
}
