#!/usr/bin/env python3
"""Generate the SciPy reference fixtures of crates/stats (crates/stats/tests/fixtures/*.json).

Usage: python3 scripts/gen_stats_fixtures.py   (needs numpy and scipy; `pip install scipy numpy`)

Every input is fixed (literal lists or NumPy's PCG64 with a fixed seed, written into the
fixture), so the output only changes when SciPy's answers change. Floats are written with
Python's repr, which round-trips exactly. The fixtures are committed, so `cargo test` needs no
Python. Undefined results (SciPy's NaN) are written as null.

Hodges-Lehmann has no SciPy function; `hl_reference` below implements it from Hollander &
Wolfe and cross-checks its exact U distribution against SciPy's.
"""

import json
import math
import os
from fractions import Fraction
from functools import lru_cache

import numpy as np
import scipy
from scipy import stats

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "stats",
                   "tests", "fixtures")

rng = np.random.default_rng(20240601)


def f(x):
    """A JSON number, or null for NaN / infinity."""
    x = float(x)
    return x if math.isfinite(x) else None


def floats(xs):
    return [float(v) for v in xs]


# ---------------------------------------------------------------------------------------------
# Inputs

SAMPLES = {
    "one": [5.0],
    "two": [3.0, 1.0],
    "small": [2.1, 3.4, 1.9, 5.6, 4.4, 3.3, 2.8],
    "ties": [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 5.0, 6.0],
    "equal": [4.0] * 8,
    "skewed": floats(np.round(rng.lognormal(0.0, 1.0, 30), 6)),
    "large": floats(np.round(rng.normal(100.0, 5.0, 200), 4)),
    "bimodal": floats(np.concatenate([rng.normal(10.0, 1.0, 40), rng.normal(20.0, 1.0, 40)])),
    "outliers": [10.0, 10.2, 9.9, 10.1, 9.8, 10.0, 10.3, 9.7, 14.0, 30.0, 2.0, 6.5],
}

PAIRS = {
    "one_one": ([1.0], [2.0]),
    "two_three": ([1.5, 3.0], [2.0, 4.0, 6.0]),
    "separated": ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),
    "small_exact": ([1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30],
                    [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]),
    "five_seven": ([19.0, 22.0, 16.0, 29.0, 24.0], [20.0, 11.0, 17.0, 12.0, 13.0, 15.0, 14.0]),
    "eight_twenty": (floats(np.round(rng.normal(10.0, 2.0, 8), 5)),
                     floats(np.round(rng.normal(11.0, 2.0, 20), 5))),
    "nine_nine": (floats(np.round(rng.normal(0.0, 1.0, 9), 5)),
                  floats(np.round(rng.normal(0.8, 1.0, 9), 5))),
    "ties_small": ([1.0, 2.0, 2.0, 3.0], [2.0, 3.0, 3.0, 4.0, 5.0]),
    "ties_large": (floats(np.round(rng.normal(50.0, 3.0, 40))),
                   floats(np.round(rng.normal(51.0, 3.0, 35)))),
    "equal_samples": ([7.0] * 10, [7.0] * 12),
    "identical": ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    "skewed": (floats(np.round(rng.lognormal(0.0, 0.5, 25), 6)),
               floats(np.round(rng.lognormal(0.3, 0.5, 30), 6))),
    "large": (floats(np.round(rng.normal(100.0, 5.0, 150), 6)),
              floats(np.round(rng.normal(101.0, 7.0, 120), 6))),
}


def write(name, data):
    path = os.path.join(OUT, name + ".json")
    with open(path, "w") as fh:
        json.dump({"generator": "scripts/gen_stats_fixtures.py", "scipy": scipy.__version__,
                   "numpy": np.__version__, **data}, fh, indent=1, allow_nan=False)
        fh.write("\n")


# ---------------------------------------------------------------------------------------------
# Summary: numpy linear quantiles, median, mean, std (ddof 1), MAD (scale 1).

def gen_summary():
    qs = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0]
    cases = []
    for name, x in SAMPLES.items():
        a = np.array(x)
        cases.append({
            "name": name, "x": x, "q": qs,
            "quantiles": floats(np.quantile(a, qs)),
            "median": float(np.median(a)),
            "mean": float(np.mean(a)),
            "std": f(np.std(a, ddof=1)) if len(a) > 1 else None,
            "mad": float(stats.median_abs_deviation(a)),
        })
    write("summary", {"cases": cases})


# ---------------------------------------------------------------------------------------------
# Median CI by order statistics, and the mean's t interval.

def exact_median_k(n, level):
    """Largest k >= 1 with P(B <= k-1) <= (1-level)/2, B ~ Binomial(n, 1/2), exact rationals;
    0 if none. k is capped at ceil(n/2) so that x(k) <= x(n-k+1)."""
    alpha_half = (1 - Fraction(level)) / 2
    k, cdf = 0, Fraction(0)
    while k < n // 2:
        cdf += Fraction(math.comb(n, k), 2 ** n)
        if cdf > alpha_half:
            break
        k += 1
    return k


def gen_median_ci():
    cases = []
    samples = {}
    sizes = list(range(1, 41)) + [50, 71, 100, 257, 1000]
    for n in sizes:
        # Distinct values in shuffled order, so the index of each endpoint is visible.
        samples[str(n)] = floats(rng.permutation(np.arange(1, n + 1)) * 1.5)
    for level in [0.5, 0.75, 0.9, 0.95, 0.99]:
        for n in sizes:
            x = samples[str(n)]
            s = sorted(x)
            ci = stats.quantile_test(x, q=float(np.median(x)), p=0.5).confidence_interval(level)
            k = exact_median_k(n, Fraction(str(level)))
            exact = [s[k - 1], s[n - k]] if k >= 1 else None
            scipy_ci = [f(ci.low), f(ci.high)]
            # SciPy's ppf-based lower index is conservative (one lower) when a binomial tail
            # probability equals (1-level)/2 exactly; record where that happens.
            agrees = (exact == scipy_ci) or (exact is None and scipy_ci == [None, None])
            cases.append({"n": n, "level": level, "scipy": scipy_ci, "exact": exact,
                          "scipy_agrees": agrees})
    means = []
    for name, x in SAMPLES.items():
        if len(x) < 2:
            continue
        a = np.array(x)
        for level in [0.9, 0.95, 0.99]:
            lo, hi = stats.t.interval(level, len(a) - 1, loc=a.mean(), scale=stats.sem(a))
            means.append({"name": name, "x": x, "level": level, "mean": float(a.mean()),
                          "low": f(lo), "high": f(hi)})
    write("median_ci", {"samples": samples, "cases": cases, "mean_ci": means})


# ---------------------------------------------------------------------------------------------
# Mann-Whitney U.

def exact_feasible(m, n):
    """Rust tabulates the exact U distribution in integers only up to these sizes."""
    return m * n <= 1_000_000 and math.comb(m + n, m) <= 1e36


def gen_mannwhitney():
    cases = []
    for name, (x, y) in PAIRS.items():
        for method in ["auto", "exact", "asymptotic"]:
            has_ties = len(set(x + y)) < len(x) + len(y)
            if method == "exact" and (has_ties or not exact_feasible(len(x), len(y))):
                continue  # Rust refuses: the exact distribution assumes no ties.
            r = stats.mannwhitneyu(x, y, alternative="two-sided", method=method)
            used = method
            if method == "auto":
                used = "asymptotic" if (len(x) > 8 and len(y) > 8) or has_ties else "exact"
            cases.append({"name": name, "x": x, "y": y, "method": method, "used": used,
                          "u": float(r.statistic), "p": float(r.pvalue)})
    write("mannwhitney", {"cases": cases})


# ---------------------------------------------------------------------------------------------
# Hodges-Lehmann: reference implementation (Hollander & Wolfe, sec. 4.2-4.3).

@lru_cache(maxsize=None)
def u_count(m, n, u):
    """Number of arrangements of m x's and n y's with U = u (x above y pairs): the classic
    recurrence on whether the largest pooled value is an x (it beats all n y's) or a y."""
    if u < 0 or u > m * n:
        return 0
    if m == 0 or n == 0:
        return 1 if u == 0 else 0
    return u_count(m - 1, n, u - n) + u_count(m, n - 1, u)


def u_cdf(m, n, k):
    return Fraction(sum(u_count(m, n, u) for u in range(k + 1)), math.comb(m + n, m))


def hl_reference(x, y, level, method):
    m, n = len(x), len(y)
    mn = m * n
    d = sorted(yj - xi for yj in y for xi in x)
    shift = float(np.median(d))
    pooled = x + y
    has_ties = len(set(pooled)) < len(pooled)
    if method == "auto":
        method = "asymptotic" if (m > 8 and n > 8) or has_ties else "exact"
    alpha_half = (1 - Fraction(str(level))) / 2
    k_max = (mn + 1) // 2
    if method == "exact":
        k = 0
        while k < k_max and u_cdf(m, n, k) <= alpha_half:
            k += 1
        # Cross-check the counting against SciPy's exact distribution.
        mwu = stats._mannwhitneyu._MWU(m, n)
        for j in range(0, min(k + 1, mn // 2) + 1):
            assert abs(float(u_cdf(m, n, j)) - float(mwu.cdf(np.array([j]))[0])) < 1e-12
    else:
        _, counts = np.unique(pooled, return_counts=True)
        tie = float(np.sum(counts.astype(float) ** 3 - counts))
        big_n = m + n
        sd = math.sqrt(mn / 12 * ((big_n + 1) - tie / (big_n * (big_n - 1))))
        z = stats.norm.ppf(1 - float(alpha_half))
        k = math.floor(mn / 2 - z * sd + 0.5)
        k = min(max(k, 0), k_max)
    ci = [d[k - 1], d[mn - k]] if k >= 1 else None
    return {"shift": shift, "k": k, "ci": ci, "used": method}


def gen_hodges_lehmann():
    cases = []
    for name, (x, y) in PAIRS.items():
        if len(x) * len(y) > 5000:
            continue
        for level in [0.9, 0.95]:
            for method in ["auto", "exact", "asymptotic"]:
                has_ties = len(set(x + y)) < len(x) + len(y)
                if method == "exact" and (has_ties or len(x) * len(y) > 400):
                    continue
                r = hl_reference(x, y, level, method)
                cases.append({"name": name, "x": x, "y": y, "level": level, "method": method,
                              **r})
    write("hodges_lehmann", {"cases": cases})


# ---------------------------------------------------------------------------------------------
# Welch's t-test.

def gen_welch():
    cases = []
    for name, (x, y) in PAIRS.items():
        if len(x) < 2 or len(y) < 2 or (np.var(x) == 0 and np.var(y) == 0):
            continue
        for level in [0.9, 0.95]:
            r = stats.ttest_ind(x, y, equal_var=False)
            ci = r.confidence_interval(level)
            cases.append({"name": name, "x": x, "y": y, "level": level,
                          "t": float(r.statistic), "df": float(r.df), "p": float(r.pvalue),
                          "difference": float(np.mean(x) - np.mean(y)),
                          "low": float(ci.low), "high": float(ci.high)})
    write("welch", {"cases": cases})


# ---------------------------------------------------------------------------------------------
# Benjamini-Hochberg.

def gen_bh():
    inputs = [
        [0.5],
        [0.01, 0.04, 0.03, 0.2],
        [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216, 0.222, 0.251,
         0.269, 0.275, 0.34, 0.341, 0.384, 0.569, 0.594, 0.696, 0.762, 0.94, 0.942, 0.975,
         0.986],
        [0.05, 0.05, 0.05, 0.0, 1.0],
        floats(rng.uniform(0.0, 1.0, 50) ** 3),
    ]
    cases = [{"p": p, "adjusted": floats(stats.false_discovery_control(p, method="bh"))}
             for p in inputs]
    write("bh", {"cases": cases})


# ---------------------------------------------------------------------------------------------
# Geometric means.

def gen_geomean():
    gm = [{"name": name, "x": x, "gmean": float(stats.gmean(x))}
          for name, x in SAMPLES.items() if min(x) > 0]
    ratio_inputs = [
        ([0.05], [0.01]),
        ([0.1, -0.05, 0.02, 0.0], [0.02, 0.03, 0.01, 0.015]),
        (floats(rng.normal(0.0, 0.1, 12)), floats(rng.uniform(0.005, 0.05, 12))),
    ]
    ratios = []
    for logs, ses in ratio_inputs:
        for level in [0.9, 0.95]:
            k = len(logs)
            mean = sum(logs) / k
            half = stats.norm.ppf(0.5 + level / 2) * math.sqrt(sum(s * s for s in ses)) / k
            ratios.append({"log_ratios": logs, "std_errors": ses, "level": level,
                           "geomean": float(stats.gmean(np.exp(logs))),
                           "low": math.exp(mean - half), "high": math.exp(mean + half)})
    write("geomean", {"gmean": gm, "ratio": ratios})


# ---------------------------------------------------------------------------------------------
# Outliers: Tukey fences on numpy linear quartiles, modified z-scores.

def gen_outliers():
    cases = []
    for name, x in SAMPLES.items():
        a = np.array(x)
        q1, q3 = np.quantile(a, [0.25, 0.75])
        iqr = q3 - q1
        classes = []
        for v in a:
            if v < q1 - 3 * iqr:
                classes.append("low_severe")
            elif v < q1 - 1.5 * iqr:
                classes.append("low_mild")
            elif v > q3 + 3 * iqr:
                classes.append("high_severe")
            elif v > q3 + 1.5 * iqr:
                classes.append("high_mild")
            else:
                classes.append("inside")
        mad = stats.median_abs_deviation(a)
        z = None if mad == 0 else floats(0.6745 * (a - np.median(a)) / mad)
        cases.append({"name": name, "x": x, "tukey": classes, "modified_z": z})
    write("outliers", {"cases": cases})


# ---------------------------------------------------------------------------------------------
# Drift: Spearman against the run index.

def gen_drift():
    inputs = dict(SAMPLES)
    inputs["trend"] = floats(np.arange(40) * 0.05 + rng.normal(0.0, 0.5, 40))
    inputs["three"] = [3.0, 1.0, 2.0]
    cases = []
    for name, x in inputs.items():
        if len(x) < 3 or len(set(x)) == 1:
            continue
        r = stats.spearmanr(np.arange(len(x)), x)
        cases.append({"name": name, "x": x, "rho": float(r.statistic), "p": float(r.pvalue)})
    write("drift", {"cases": cases})


# ---------------------------------------------------------------------------------------------
# Bimodality coefficient (Pfister et al. 2013) from SciPy's bias-corrected moments.

def gen_modality():
    cases = []
    for name, x in SAMPLES.items():
        if len(x) < 4 or len(set(x)) == 1:
            continue
        n = len(x)
        g = stats.skew(x, bias=False)
        k = stats.kurtosis(x, bias=False)
        bc = (g * g + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
        cases.append({"name": name, "x": x, "skewness": float(g), "excess_kurtosis": float(k),
                      "coefficient": float(bc)})
    write("modality", {"cases": cases})


# ---------------------------------------------------------------------------------------------
# Bootstrap. Two checks: (1) the interval from a given bootstrap distribution, which is
# deterministic (SciPy's bootstrap_result with n_resamples=0); (2) SciPy's full bootstrap with
# 10000 resamples, which Rust can only match within Monte Carlo error (different streams).

STATISTICS = {"mean": np.mean, "median": np.median, "std": lambda a, axis=-1: np.std(a, ddof=1,
                                                                                      axis=axis)}


class Given:
    def __init__(self, dist):
        self.bootstrap_distribution = np.asarray(dist)


def gen_bootstrap():
    given = []
    monte_carlo = []
    for name in ["small", "skewed", "ties", "large"]:
        x = SAMPLES[name]
        a = np.array(x)
        for stat_name, stat in STATISTICS.items():
            fn = (lambda s: (lambda d, axis=-1: s(d, axis=axis)))(stat)
            idx = rng.integers(0, len(a), size=(400, len(a)))
            dist = floats(fn(a[idx], axis=-1))
            results = []
            for method in ["percentile", "BCa"]:
                for level in [0.9, 0.95]:
                    r = stats.bootstrap((a,), fn, n_resamples=0, bootstrap_result=Given(dist),
                                        method=method, confidence_level=level)
                    results.append({"method": method, "level": level,
                                    "low": f(r.confidence_interval.low),
                                    "high": f(r.confidence_interval.high),
                                    "standard_error": float(r.standard_error)})
                r = stats.bootstrap((a,), fn, n_resamples=10000, method=method,
                                    confidence_level=0.95, rng=np.random.default_rng(7))
                monte_carlo.append({"name": name, "statistic": stat_name,
                                    "method": method, "level": 0.95, "resamples": 10000,
                                    "low": f(r.confidence_interval.low),
                                    "high": f(r.confidence_interval.high),
                                    "standard_error": float(r.standard_error)})
            given.append({"name": name, "statistic": stat_name, "distribution": dist,
                          "results": results})
    samples = {name: SAMPLES[name] for name in ["small", "skewed", "ties", "large"]}
    write("bootstrap", {"samples": samples, "given": given, "monte_carlo": monte_carlo})


def main():
    os.makedirs(OUT, exist_ok=True)
    gen_summary()
    gen_median_ci()
    gen_mannwhitney()
    gen_hodges_lehmann()
    gen_welch()
    gen_bh()
    gen_geomean()
    gen_outliers()
    gen_drift()
    gen_modality()
    gen_bootstrap()


if __name__ == "__main__":
    main()
