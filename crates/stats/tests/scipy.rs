//! Known answers from SciPy (fixtures written by `scripts/gen_stats_fixtures.py`).
//!
//! Tolerances: relative 1e-9 for exact methods (order statistics, exact U distribution, plain
//! arithmetic); 1e-6 where a special function is evaluated (t, normal, incomplete beta: statrs
//! and SciPy's cephes differ in the last digits); bootstrap intervals from our own resampling
//! stream are compared within Monte Carlo error (see `bootstrap_monte_carlo`).

// A malformed fixture is a broken test, and panicking with the location is the right report.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use serde_json::Value;
use vernier_stats::*;

const EXACT: f64 = 1e-9;
const APPROX: f64 = 1e-6;

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn opt(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(num).collect()
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap()
}

fn cases<'a>(doc: &'a Value, key: &str) -> &'a Vec<Value> {
    let list = doc[key].as_array().unwrap();
    assert!(!list.is_empty(), "no cases under {key}");
    list
}

#[track_caller]
fn close(got: f64, want: f64, rel: f64, what: &str) {
    let scale = want.abs().max(1e-300);
    assert!(
        got == want || (got - want).abs() <= rel * scale,
        "{what}: got {got:e}, SciPy {want:e} (rel. diff {:e})",
        (got - want).abs() / scale
    );
}

fn method(name: &str) -> Method {
    match name {
        "auto" => Method::Auto,
        "exact" => Method::Exact,
        "asymptotic" => Method::Asymptotic,
        other => panic!("unknown method {other}"),
    }
}

#[test]
fn summary_statistics() {
    let doc = fixture("summary");
    for c in cases(&doc, "cases") {
        let name = text(&c["name"]);
        let x = nums(&c["x"]);
        for (q, want) in nums(&c["q"]).into_iter().zip(nums(&c["quantiles"])) {
            close(
                quantile(&x, q).unwrap(),
                want,
                EXACT,
                &format!("{name} q{q}"),
            );
        }
        close(median(&x).unwrap(), num(&c["median"]), EXACT, name);
        close(mean(&x).unwrap(), num(&c["mean"]), EXACT, name);
        close(mad(&x).unwrap(), num(&c["mad"]), EXACT, name);
        match opt(&c["std"]) {
            Some(s) => close(std_dev(&x).unwrap(), s, EXACT, name),
            None => assert!(std_dev(&x).is_err(), "{name}"),
        }
    }
}

/// The exact binomial definition (PRODUCT.md) everywhere; SciPy's
/// `quantile_test(...).confidence_interval()` agrees except when a binomial tail probability
/// equals `(1 - level) / 2` exactly (n = 2 at 50%, n = 3 at 75%): its `ppf` then takes the lower
/// index one step further out and runs off the sample (NaN), while `[x(k), x(n-k+1)]` already
/// has coverage exactly `level`.
#[test]
fn median_ci_by_order_statistics() {
    let doc = fixture("median_ci");
    let mut disagreements = 0;
    for c in cases(&doc, "cases") {
        let n = c["n"].as_u64().unwrap();
        let level = num(&c["level"]);
        let x = nums(&doc["samples"][n.to_string()]);
        let got = median_ci(&x, level).unwrap().map(|ci| [ci.low, ci.high]);
        let exact = c["exact"].as_array().map(|a| [num(&a[0]), num(&a[1])]);
        assert_eq!(got, exact, "n={n} level={level}");
        if c["scipy_agrees"].as_bool().unwrap() {
            let scipy = [opt(&c["scipy"][0]), opt(&c["scipy"][1])];
            assert_eq!(
                got.map(|[l, h]| [Some(l), Some(h)]).unwrap_or([None, None]),
                scipy,
                "n={n} level={level}"
            );
        } else {
            disagreements += 1;
            // The upper endpoint still agrees; only SciPy's lower index differs.
            assert_eq!(
                got.map(|g| g[1]),
                opt(&c["scipy"][1]),
                "n={n} level={level}"
            );
        }
    }
    assert_eq!(disagreements, 2);
}

#[test]
fn mean_t_interval() {
    let doc = fixture("median_ci");
    for c in cases(&doc, "mean_ci") {
        let x = nums(&c["x"]);
        let (m, ci) = mean_ci(&x, num(&c["level"])).unwrap();
        let ci = ci.unwrap();
        close(m, num(&c["mean"]), EXACT, "mean");
        match (opt(&c["low"]), opt(&c["high"])) {
            (Some(low), Some(high)) => {
                close(ci.low, low, APPROX, text(&c["name"]));
                close(ci.high, high, APPROX, text(&c["name"]));
            }
            // Zero spread: SciPy gives NaN from scale 0, we give the point interval.
            _ => assert_eq!((ci.low, ci.high), (m, m)),
        }
    }
}

#[test]
fn mann_whitney() {
    let doc = fixture("mannwhitney");
    for c in cases(&doc, "cases") {
        let what = format!("{} {}", text(&c["name"]), text(&c["method"]));
        let r = mann_whitney_u_with(&nums(&c["x"]), &nums(&c["y"]), method(text(&c["method"])))
            .unwrap();
        let used = method(text(&c["used"]));
        assert_eq!(r.method, used, "{what}");
        close(r.u, num(&c["u"]), EXACT, &what);
        let tol = if used == Method::Exact { EXACT } else { APPROX };
        close(r.p, num(&c["p"]), tol, &what);
    }
}

#[test]
fn hodges_lehmann_reference() {
    let doc = fixture("hodges_lehmann");
    for c in cases(&doc, "cases") {
        let what = format!(
            "{} {} {}",
            text(&c["name"]),
            text(&c["method"]),
            num(&c["level"])
        );
        let r = hodges_lehmann_with(
            &nums(&c["x"]),
            &nums(&c["y"]),
            num(&c["level"]),
            method(text(&c["method"])),
        )
        .unwrap();
        assert_eq!(r.method, method(text(&c["used"])), "{what}");
        close(r.shift, num(&c["shift"]), EXACT, &what);
        // Endpoints are order statistics of the differences: equal, not just close.
        let want = c["ci"].as_array().map(|a| (num(&a[0]), num(&a[1])));
        assert_eq!(r.ci.map(|ci| (ci.low, ci.high)), want, "{what}");
    }
}

#[test]
fn welch() {
    let doc = fixture("welch");
    for c in cases(&doc, "cases") {
        let what = text(&c["name"]);
        let r = welch_t_test(&nums(&c["x"]), &nums(&c["y"]), num(&c["level"])).unwrap();
        close(r.t, num(&c["t"]), EXACT, what);
        close(r.df, num(&c["df"]), EXACT, what);
        close(r.difference, num(&c["difference"]), EXACT, what);
        close(r.p, num(&c["p"]), APPROX, what);
        close(r.ci.low, num(&c["low"]), APPROX, what);
        close(r.ci.high, num(&c["high"]), APPROX, what);
    }
}

#[test]
fn benjamini_hochberg_adjustment() {
    let doc = fixture("bh");
    for c in cases(&doc, "cases") {
        let got = benjamini_hochberg(&nums(&c["p"])).unwrap();
        let want = nums(&c["adjusted"]);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.into_iter().zip(want) {
            close(g, w, EXACT, "bh");
        }
    }
}

#[test]
fn geometric_means() {
    let doc = fixture("geomean");
    for c in cases(&doc, "gmean") {
        let got = geometric_mean(&nums(&c["x"])).unwrap();
        close(got, num(&c["gmean"]), EXACT, text(&c["name"]));
    }
    for c in cases(&doc, "ratio") {
        let r = geomean_ratio_ci(
            &nums(&c["log_ratios"]),
            &nums(&c["std_errors"]),
            num(&c["level"]),
        )
        .unwrap();
        close(r.geomean, num(&c["geomean"]), EXACT, "geomean");
        close(r.ci.low, num(&c["low"]), APPROX, "low");
        close(r.ci.high, num(&c["high"]), APPROX, "high");
    }
}

#[test]
fn outlier_classes() {
    let doc = fixture("outliers");
    for c in cases(&doc, "cases") {
        let name = text(&c["name"]);
        let got = classify_outliers(&nums(&c["x"])).unwrap();
        let tukey: Vec<&str> = c["tukey"].as_array().unwrap().iter().map(text).collect();
        for (g, want) in got.iter().zip(&tukey) {
            let class = match *want {
                "low_severe" => TukeyClass::LowSevere,
                "low_mild" => TukeyClass::LowMild,
                "inside" => TukeyClass::Inside,
                "high_mild" => TukeyClass::HighMild,
                "high_severe" => TukeyClass::HighSevere,
                other => panic!("unknown class {other}"),
            };
            assert_eq!(g.tukey, class, "{name}");
        }
        match c["modified_z"].as_array() {
            None => assert!(got.iter().all(|g| g.modified_z.is_none()), "{name}"),
            Some(z) => {
                for (g, w) in got.iter().zip(z) {
                    close(g.modified_z.unwrap(), num(w), EXACT, name);
                }
            }
        }
    }
}

#[test]
fn spearman_drift_against_index() {
    let doc = fixture("drift");
    for c in cases(&doc, "cases") {
        let name = text(&c["name"]);
        let r = spearman_drift(&nums(&c["x"])).unwrap();
        close(r.rho, num(&c["rho"]), EXACT, name);
        close(r.p, num(&c["p"]), APPROX, name);
    }
}

#[test]
fn bimodality_coefficient() {
    let doc = fixture("modality");
    for c in cases(&doc, "cases") {
        let name = text(&c["name"]);
        let r = bimodality(&nums(&c["x"])).unwrap();
        close(r.skewness, num(&c["skewness"]), EXACT, name);
        close(r.excess_kurtosis, num(&c["excess_kurtosis"]), EXACT, name);
        close(r.coefficient, num(&c["coefficient"]), EXACT, name);
    }
    let bimodal = cases(&doc, "cases")
        .iter()
        .find(|c| text(&c["name"]) == "bimodal")
        .unwrap();
    assert!(bimodality(&nums(&bimodal["x"]))
        .unwrap()
        .suggests_bimodality());
}

fn statistic(name: &str) -> fn(&[f64]) -> f64 {
    fn mean_of(xs: &[f64]) -> f64 {
        mean(xs).unwrap()
    }
    fn median_of(xs: &[f64]) -> f64 {
        median(xs).unwrap()
    }
    fn std_of(xs: &[f64]) -> f64 {
        std_dev(xs).unwrap()
    }
    match name {
        "mean" => mean_of,
        "median" => median_of,
        "std" => std_of,
        other => panic!("unknown statistic {other}"),
    }
}

fn bootstrap_method(name: &str) -> BootstrapMethod {
    match name {
        "percentile" => BootstrapMethod::Percentile,
        "BCa" => BootstrapMethod::Bca,
        other => panic!("unknown method {other}"),
    }
}

/// The interval computed from a given bootstrap distribution is deterministic and must match
/// SciPy's up to the normal quantile and CDF used for BCa.
#[test]
fn bootstrap_from_given_distribution() {
    let doc = fixture("bootstrap");
    for g in cases(&doc, "given") {
        let x = nums(&doc["samples"][text(&g["name"])]);
        let dist = nums(&g["distribution"]);
        for r in g["results"].as_array().unwrap() {
            let what = format!(
                "{} {} {} {}",
                text(&g["name"]),
                text(&g["statistic"]),
                text(&r["method"]),
                num(&r["level"])
            );
            let got = bootstrap_interval(
                &x,
                statistic(text(&g["statistic"])),
                &dist,
                bootstrap_method(text(&r["method"])),
                num(&r["level"]),
            );
            match (opt(&r["low"]), opt(&r["high"])) {
                (Some(low), Some(high)) => {
                    let got = got.unwrap();
                    close(got.interval.low, low, APPROX, &what);
                    close(got.interval.high, high, APPROX, &what);
                    close(got.standard_error, num(&r["standard_error"]), EXACT, &what);
                }
                // SciPy warns and returns NaN (constant jackknife); we return an error.
                _ => assert!(
                    matches!(got, Err(StatsError::Degenerate { .. })),
                    "{what}: {got:?}"
                ),
            }
        }
    }
}

/// Gap between the distinct values of `sorted` that bracket `at`: where the statistic takes few
/// values (the mean of tied data, a median), a Monte Carlo quantile can sit one atom away.
fn atom_gap(sorted: &[f64], at: f64) -> f64 {
    let below = sorted
        .iter()
        .rev()
        .find(|&&t| t <= at)
        .copied()
        .unwrap_or(at);
    let above = sorted.iter().find(|&&t| t > at).copied().unwrap_or(at);
    above - below
}

/// Full bootstrap with our resampling stream against SciPy's with NumPy's: both are Monte Carlo
/// estimates from 10000 resamples. The standard error of a 2.5% quantile of B = 10000 draws is
/// about 0.027 bootstrap standard errors (sqrt(p(1-p)/B) / density, normal approximation), so
/// two independent estimates differ by about 0.04 SE; we allow 0.25 SE (over 6 sigma) for each
/// endpoint, plus one atom where the bootstrap distribution is discrete, and 5% for the
/// standard error itself (its own relative Monte Carlo error is about 0.7%).
#[test]
fn bootstrap_monte_carlo() {
    let doc = fixture("bootstrap");
    for (i, c) in cases(&doc, "monte_carlo").iter().enumerate() {
        let what = format!(
            "{} {} {}",
            text(&c["name"]),
            text(&c["statistic"]),
            text(&c["method"])
        );
        let x = nums(&doc["samples"][text(&c["name"])]);
        let stat = statistic(text(&c["statistic"]));
        let method = bootstrap_method(text(&c["method"]));
        let level = num(&c["level"]);
        let resamples = c["resamples"].as_u64().unwrap() as usize;
        let seed = 1000 + i as u64;
        // bootstrap_ci is this pair of calls; keeping the distribution gives the atoms.
        let mut dist = bootstrap_distribution(&x, stat, resamples, seed).unwrap();
        let got = bootstrap_interval(&x, stat, &dist, method, level);
        let (Some(low), Some(high)) = (opt(&c["low"]), opt(&c["high"])) else {
            assert!(
                matches!(got, Err(StatsError::Degenerate { .. })),
                "{what}: {got:?}"
            );
            continue;
        };
        let got = got.unwrap();
        dist.sort_by(f64::total_cmp);
        let se = num(&c["standard_error"]);
        assert!(
            (got.standard_error - se).abs() <= 0.05 * se,
            "{what}: se {} vs {se}",
            got.standard_error
        );
        for (ours, theirs, end) in [
            (got.interval.low, low, "low"),
            (got.interval.high, high, "high"),
        ] {
            let tol = 0.25 * se + atom_gap(&dist, ours);
            assert!(
                (ours - theirs).abs() <= tol,
                "{what}: {end} {ours} vs SciPy {theirs} (se {se}, tolerance {tol})"
            );
        }
    }
}
