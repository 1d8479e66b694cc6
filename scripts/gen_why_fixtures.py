#!/usr/bin/env python3
"""Generate the SciPy reference fixture of the slow-run explanation's statistics
(crates/stats/tests/fixtures/spearman.json): Spearman's rho and its p-value
(`scipy.stats.spearmanr`, its default t approximation) on paired samples with and without
ties, and the Benjamini-Hochberg adjustment of each group's p-values
(`scipy.stats.false_discovery_control`), as the explanation ranks monitor keys.

Usage: python3 scripts/gen_why_fixtures.py [--size]   (needs numpy and scipy)

With --size it also prints, for the run counts a configuration has, the true rejection rate
at the 5% level of the t approximation under the permutation distribution (exact enumeration
up to 9 pairs, 200,000 seeded permutations above), the figures docs/why.md quotes.

Every input is fixed (literal lists or NumPy's PCG64 with a fixed seed), so the output only
changes when SciPy's answers change. Floats are written with Python's repr.
"""

import itertools
import json
import math
import os
import sys

import numpy as np
import scipy
from scipy import stats

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "stats",
                   "tests", "fixtures")

rng = np.random.default_rng(20261127)


def floats(xs):
    return [float(v) for v in xs]


def case(name, x, y):
    r = stats.spearmanr(x, y)
    return {"name": name, "x": floats(x), "y": floats(y),
            "rho": float(r.statistic), "p": float(r.pvalue)}


def groups():
    out = []
    # Group 1: a run value and monitor keys of 20 runs, some tied (counts), one associated.
    n = 20
    value = np.round(rng.lognormal(0.0, 0.05, n), 6)
    keys = [
        ("associated", np.round(value * 1e9 + rng.normal(0, 2e7, n))),
        ("gauge_ties", np.round(rng.normal(2.0, 0.6, n))),
        ("counter_ties", np.round(rng.poisson(3.0, n).astype(float))),
        ("noise", np.round(rng.normal(5e6, 1e5, n), 1)),
        ("anti", np.round(-value * 100 + rng.normal(0, 2, n), 2)),
    ]
    out.append([case(k, value, v) for k, v in keys])
    # Group 2: small and odd sizes, heavy ties.
    out.append([
        case("three", [1.0, 2.0, 3.0], [2.0, 1.0, 3.0]),
        case("five_ties", [1.0, 2.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 2.0, 5.0]),
        case("eight_half_tied", floats(rng.normal(0, 1, 8)), [0, 0, 0, 0, 1, 1, 1, 1]),
        case("twelve", floats(np.round(rng.normal(0, 1, 12), 3)),
             floats(np.round(rng.normal(0, 1, 12), 3))),
        case("perfect", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]),
    ])
    # Group 3: 60 runs, many keys of pure noise and two shifted subsets.
    n = 60
    value = rng.lognormal(0.0, 0.03, n)
    slow = np.zeros(n)
    slow[[7, 23, 41]] = 1.0
    value = value * (1.0 + 0.3 * slow)
    g = [case("load_user_ns", value, np.round(4e8 * slow + rng.normal(1e8, 1e7, n)))]
    for i in range(8):
        g.append(case(f"noise{i}", value, floats(np.round(rng.normal(10, 3, n)))))
    out.append(g)
    for g in out:
        adjusted = stats.false_discovery_control([c["p"] for c in g], method="bh")
        for c, a in zip(g, adjusted):
            c["p_adjusted"] = float(a)
    return out


def rho_of(x, y, axis=-1):
    """Spearman's rho along `axis` (vectorized for permutation_test): Pearson of the ranks."""
    rx = stats.rankdata(x, axis=axis)
    ry = stats.rankdata(y, axis=axis)
    rx = rx - rx.mean(axis=axis, keepdims=True)
    ry = ry - ry.mean(axis=axis, keepdims=True)
    return (rx * ry).sum(axis=axis) / np.sqrt((rx * rx).sum(axis=axis) * (ry * ry).sum(axis=axis))


def permutation_cases():
    """Permutation p-values (scipy.stats.permutation_test, pairings, two-sided): exact
    (n_resamples=inf) up to 8 pairs, 9,999 random pairings above (checked within Monte Carlo
    error: SciPy's stream is not ours)."""
    out = []
    inputs = [
        ("four", [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]),
        ("six_ties", [1.0, 1.0, 2.0, 3.0, 3.0, 4.0], [2.0, 1.0, 1.0, 5.0, 4.0, 4.0]),
        ("seven", floats(np.round(rng.normal(0, 1, 7), 3)), floats(np.round(rng.normal(0, 1, 7), 3))),
        ("eight_counts", [0.0, 1.0, 0.0, 2.0, 3.0, 1.0, 0.0, 2.0],
         floats(np.round(rng.normal(1, 0.1, 8), 4))),
        ("eight_assoc", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [1.0, 3.0, 2.0, 4.0, 6.0, 5.0, 8.0, 7.0]),
        ("twenty", floats(np.round(rng.normal(0, 1, 20), 3)), floats(np.round(rng.poisson(2.0, 20).astype(float)))),
    ]
    for name, x, y in inputs:
        n = len(x)
        exact = n <= 8
        # One sample re-paired against the fixed other: n! pairings (SciPy's own example for
        # Spearman's rho); passing both samples would permute each, (n!)^2 arrangements.
        yy = np.asarray(y)
        r = stats.permutation_test((x,), lambda a, axis: rho_of(a, np.broadcast_to(yy, a.shape), axis),
                                   permutation_type="pairings", vectorized=True,
                                   n_resamples=np.inf if exact else 9999,
                                   alternative="two-sided", rng=np.random.default_rng(5))
        out.append({"name": name, "x": floats(x), "y": floats(y), "exact": exact,
                    "resamples": math.factorial(n) if exact else 9999,
                    "rho": float(r.statistic), "p": float(r.pvalue)})
    return out


def t_rate(n, alpha=0.05):
    """Share of the permutation distribution of rho (no ties) that the t p-value rejects."""
    x = np.arange(n, dtype=float)
    if n <= 9:
        perms = itertools.permutations(range(n))
        total = math.factorial(n)
    else:
        total = 200_000
        g = np.random.default_rng(n)
        perms = (g.permutation(n) for _ in range(total))
    rejected = 0
    for p in perms:
        y = np.asarray(p, dtype=float)
        rho = np.corrcoef(x, y)[0, 1]
        if abs(rho) >= 1.0:
            rejected += 1
            continue
        t = rho * math.sqrt((n - 2) / ((1 - rho) * (1 + rho)))
        if 2 * stats.t.sf(abs(t), n - 2) < alpha:
            rejected += 1
    return rejected / total


def main():
    path = os.path.join(OUT, "spearman.json")
    with open(path, "w") as fh:
        json.dump({"generator": "scripts/gen_why_fixtures.py", "scipy": scipy.__version__,
                   "numpy": np.__version__, "groups": groups(),
                   "permutation": permutation_cases()}, fh, indent=1, allow_nan=False)
        fh.write("\n")
    print(f"wrote {path}")
    if "--size" in sys.argv:
        for n in (6, 8, 9, 10, 15, 20, 30):
            print(f"n={n}: t approximation rejects {100 * t_rate(n):.2f}% at the 5% level")


if __name__ == "__main__":
    main()
