#!/usr/bin/env python3
"""Generate crates/stats/tests/fixtures/distribution.json: SciPy's values of every distribution
function and quantile that crates/stats evaluates (crates/stats/src/distribution.rs), over the
whole domain they are used in.

Usage: python3 scripts/gen_distribution_fixture.py   (needs numpy and scipy)

- the standard normal: distribution function, survival function and quantile, probabilities
  from 1e-300 to 1 - 1e-12;
- Student's t: quantile, distribution and survival function at 34 degrees of freedom from 0.5
  to 1e12 and infinity (null in the JSON), probabilities from 1e-12 to 1 - 1e-12;
- the beta distribution function at the parameters of the median's order statistic for 2 to a
  million values (Maritz-Jarrett's standard error) and at others (t-like, small, skewed);
- the binomial distribution function (p = 1/2 for the median's interval, and p = 0.3) for 1 to
  ten million trials.

SciPy is the reference. Where it misses (its t quantile at 4 degrees of freedom and p = 0.499
is off by 1.8e-11: its own distribution function gives 0.49900000000001815 there), the t
values below 1e4 degrees of freedom are checked with mpmath at 40 digits (the t distribution
function through the regularized incomplete beta function, the quantile by its root): a SciPy
value more than 1e-13 away from mpmath's is replaced by mpmath's, and the script lists them.

The script also prints the largest relative error of the four-term Cornish-Fisher expansion of
the t quantile (Abramowitz and Stegun 26.7.5) at each degree of freedom from 100 up, which is
why the Rust code may switch to it from 3000 on (T_EXPANSION_DF is 1e4).

Inputs are literal lists; floats are written with Python's repr (round trip exact); the fixture
is committed so that `cargo test` needs no Python.
"""

import json
import math
import os

import mpmath as mp
import numpy as np
from scipy import stats

mp.mp.dps = 40

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "stats",
                   "tests", "fixtures", "distribution.json")

TAILS = [1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.45,
         0.49, 0.499]
PROBABILITIES = TAILS + [0.5] + [1.0 - p for p in reversed(TAILS)]

DFS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0, 200.0,
       500.0, 1000.0, 2000.0, 2999.0, 3000.0, 5000.0, 1e4, 3e4, 1e5, 1e6, 5e6, 1e7, 2e7, 1e8,
       1e9, 1e10, 1e12, math.inf]


def num(x):
    x = float(x)
    return x if math.isfinite(x) else None


def cornish_fisher(p, v):
    z = stats.norm.ppf(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def mp_t_cdf(x, df):
    """P(T <= x) at 40 digits."""
    x, df = mp.mpf(x), mp.mpf(df)
    tail = mp.betainc(df / 2, mp.mpf(1) / 2, 0, df / (df + x * x), regularized=True) / 2
    return tail if x <= 0 else 1 - tail


def checked(scipy_value, exact, what, replaced):
    """SciPy's value, or mpmath's where SciPy is more than 1e-13 away."""
    exact = float(exact)
    if exact != 0 and abs(scipy_value / exact - 1) > 1e-13:
        replaced.append(f"{what}: SciPy {scipy_value!r}, mpmath {exact!r}")
        return exact
    return scipy_value


def main():
    replaced = []
    normal = {
        "quantile": [[p, num(stats.norm.ppf(p))]
                     for p in [1e-300, 1e-100, 1e-20] + PROBABILITIES],
        "cdf": [], "sf": [],
    }
    for x in [-38.0, -20.0, -10.0, -7.0, -5.0, -3.0, -1.96, -1.0, -0.5, -1e-3, 0.0, 1e-3, 0.5,
              1.0, 1.96, 3.0, 5.0, 7.0, 10.0, 20.0, 38.0]:
        normal["cdf"].append([x, float(stats.norm.cdf(x))])
        normal["sf"].append([x, float(stats.norm.sf(x))])

    t = {"quantile": [], "cdf": [], "sf": []}
    for df in DFS:
        for p in PROBABILITIES:
            x = float(stats.t.ppf(p, df))
            cdf, sf = float(stats.t.cdf(x, df)), float(stats.t.sf(x, df))
            if df < 1e4:
                exact_x = mp.findroot(lambda v: mp_t_cdf(v, df) - mp.mpf(p), mp.mpf(x))
                x = checked(x, exact_x, f"t quantile p {p} df {df}", replaced)
                c = mp_t_cdf(x, df)
                cdf = checked(cdf, c, f"t cdf x {x} df {df}", replaced)
                sf = checked(sf, 1 - c, f"t sf x {x} df {df}", replaced)
            t["quantile"].append([p, num(df), x])
            t["cdf"].append([x, num(df), cdf])
            t["sf"].append([x, num(df), sf])

    beta = []
    for n in [2, 3, 5, 10, 11, 20, 50, 100, 1000, 10_000, 100_000, 1_000_000]:
        m = (n + 1) // 2
        a, b = float(m), float(n - m + 1)
        xs = {float(stats.beta.ppf(p, a, b)) for p in PROBABILITIES}
        xs |= {i / n for i in range(max(m - 3, 0), min(m + 4, n + 1))}
        for x in sorted(xs):
            if 0.0 < x < 1.0:
                beta.append([x, a, b, float(stats.beta.cdf(x, a, b))])
    for a, b in [(0.5, 0.5), (0.5, 10.0), (10.0, 0.5), (1500.0, 0.5), (0.5, 1500.0), (2.0, 3.0),
                 (7.5, 8.5), (100.0, 10_000.0), (500_000.0, 500_000.0), (3.0, 400_000.0)]:
        for p in PROBABILITIES:
            x = float(stats.beta.ppf(p, a, b))
            if 0.0 < x < 1.0:
                beta.append([x, a, b, float(stats.beta.cdf(x, a, b))])

    binomial = []
    for n in [1, 2, 5, 10, 20, 40, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000]:
        for p in (0.5, 0.3):
            ks = {int(stats.binom.ppf(q, n, p)) for q in PROBABILITIES} | {0, n}
            for k in sorted(ks):
                binomial.append([k, n, p, float(stats.binom.cdf(k, n, p))])

    with open(OUT, "w") as f:
        json.dump({"normal": normal, "t": t, "beta": beta, "binomial": binomial}, f)
        f.write("\n")
    print(f"wrote {OUT}: {len(t['quantile'])} t quantiles, {len(beta)} beta values, "
          f"{len(binomial)} binomial values")
    print(f"{len(replaced)} SciPy values replaced by mpmath's:")
    for r in replaced:
        print("  " + r)

    print("largest relative error of the Cornish-Fisher t quantile over the probabilities:")
    for v in [100, 300, 1000, 2000, 3000, 5000, 1e4, 1e5]:
        err = max(abs(cornish_fisher(p, v) / stats.t.ppf(p, v) - 1) for p in PROBABILITIES
                  if p != 0.5)
        print(f"  df {v:g}: {err:.1e}")


if __name__ == "__main__":
    main()
