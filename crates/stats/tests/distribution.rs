//! Every distribution function and quantile of `vernier_stats::distribution` against SciPy over
//! its whole domain (fixture written by `scripts/gen_distribution_fixture.py`): the normal, and
//! Student's t from 0.5 to 1e12 degrees of freedom and infinity at probabilities from 1e-12 to
//! 1 - 1e-12, the beta distribution function of the median's order statistic up to a million
//! values, the binomial distribution function up to ten million trials. statrs 0.19, which the
//! statistics called before, looped for ever on the t quantile from 2e7 degrees of freedom
//! and failed every one of these bounds somewhere (docs of the module).

// A malformed fixture is a broken test, and panicking with the location is the right report.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::path::PathBuf;

use serde_json::Value;
use vernier_stats::{
    beta_cdf, binomial_cdf, normal_cdf, normal_quantile, normal_sf, t_cdf, t_quantile, t_sf,
};

fn fixture() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/distribution.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Degrees of freedom: null stands for infinity.
fn df(v: &Value) -> f64 {
    if v.is_null() {
        f64::INFINITY
    } else {
        num(v)
    }
}

fn rows<'a>(doc: &'a Value, path: &[&str]) -> &'a Vec<Value> {
    let mut v = doc;
    for p in path {
        v = &v[*p];
    }
    let rows = v
        .as_array()
        .unwrap_or_else(|| panic!("{path:?} is not a list"));
    assert!(!rows.is_empty(), "{path:?} is empty");
    rows
}

/// The largest relative error (absolute where the reference is 0) over the rows, with the row
/// that has it; fails at the first value that is not a number or an error.
struct Worst {
    error: f64,
    at: String,
}

impl Worst {
    fn new() -> Self {
        Worst {
            error: 0.0,
            at: String::new(),
        }
    }

    fn add(&mut self, got: f64, want: f64, at: impl Fn() -> String) {
        let error = if want == 0.0 {
            got.abs()
        } else if got == want {
            0.0
        } else {
            ((got - want) / want).abs()
        };
        assert!(!error.is_nan(), "{}: got {got}, expected {want}", at());
        if error > self.error {
            self.error = error;
            self.at = at();
        }
    }

    #[track_caller]
    fn at_most(&self, what: &str, bound: f64) {
        println!(
            "{what}: largest relative error {:.1e} ({})",
            self.error, self.at
        );
        assert!(
            self.error <= bound,
            "{what}: relative error {:e} at {} exceeds {bound:e}",
            self.error,
            self.at
        );
    }
}

#[test]
fn normal_matches_scipy() {
    let doc = fixture();
    let mut q = Worst::new();
    for r in rows(&doc, &["normal", "quantile"]) {
        let (p, want) = (num(&r[0]), num(&r[1]));
        q.add(normal_quantile(p).unwrap(), want, || format!("p {p}"));
    }
    q.at_most("normal quantile", 1e-14);
    let mut c = Worst::new();
    for r in rows(&doc, &["normal", "cdf"]) {
        let (x, want) = (num(&r[0]), num(&r[1]));
        c.add(normal_cdf(x), want, || format!("x {x}"));
    }
    for r in rows(&doc, &["normal", "sf"]) {
        let (x, want) = (num(&r[0]), num(&r[1]));
        c.add(normal_sf(x), want, || format!("sf x {x}"));
    }
    // At x = -20 the rounding of -x / sqrt 2 alone moves erfc by 4e-14 of its value.
    c.at_most("normal distribution function", 1e-13);
}

#[test]
fn students_t_matches_scipy_from_half_a_degree_of_freedom_to_infinity() {
    let doc = fixture();
    let mut q = Worst::new();
    for r in rows(&doc, &["t", "quantile"]) {
        let (p, df, want) = (num(&r[0]), df(&r[1]), num(&r[2]));
        q.add(t_quantile(p, df).unwrap(), want, || {
            format!("p {p} df {df}")
        });
    }
    q.at_most("t quantile", 1e-12);
    let mut c = Worst::new();
    for r in rows(&doc, &["t", "cdf"]) {
        let (x, df, want) = (num(&r[0]), df(&r[1]), num(&r[2]));
        c.add(t_cdf(x, df).unwrap(), want, || format!("x {x} df {df}"));
    }
    for r in rows(&doc, &["t", "sf"]) {
        let (x, df, want) = (num(&r[0]), df(&r[1]), num(&r[2]));
        c.add(t_sf(x, df).unwrap(), want, || format!("sf x {x} df {df}"));
    }
    c.at_most("t distribution function", 1e-12);
}

#[test]
fn beta_and_binomial_match_scipy() {
    let doc = fixture();
    let mut b = Worst::new();
    for r in rows(&doc, &["beta"]) {
        let (x, a, bb, want) = (num(&r[0]), num(&r[1]), num(&r[2]), num(&r[3]));
        b.add(beta_cdf(x, a, bb).unwrap(), want, || {
            format!("x {x} a {a} b {bb}")
        });
    }
    b.at_most("beta distribution function", 1e-10);
    let mut k = Worst::new();
    for r in rows(&doc, &["binomial"]) {
        let (kk, n, p, want) = (num(&r[0]), num(&r[1]), num(&r[2]), num(&r[3]));
        k.add(binomial_cdf(kk as u64, n as u64, p).unwrap(), want, || {
            format!("k {kk} n {n} p {p}")
        });
    }
    k.at_most("binomial distribution function", 1e-10);
}
