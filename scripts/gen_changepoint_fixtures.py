#!/usr/bin/env python3
"""Generate the change-point reference fixture of crates/stats
(crates/stats/tests/fixtures/changepoint.json) by running Apache Otava's detector.

Usage:
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install apache-otava==0.8.0
    /tmp/venv/bin/python scripts/gen_changepoint_fixtures.py
    /tmp/venv/bin/python scripts/gen_changepoint_fixtures.py --merge-variants

The second form writes nothing: it counts how often Otava's merge step (which, after removing
a change point, retests the two change points to its right) and the textbook one (which
retests both neighbours) find different change points on random series (docs/history.md).

Reference: Apache Otava 0.8.0 (PyPI `apache-otava`, formerly Hunter), `otava.analysis.
compute_change_points(series, window_len, max_pvalue, min_magnitude)`: the split-and-merge
method of Fleming et al., "Hunter: Using Change Point Detection to Hunt for Performance
Regressions", ICPE 2023 (doi:10.1145/3578244.3583719). `vernier_stats::change_points` must find
the same change points with the same p-values (tests/changepoint.rs).

The inputs are fixed (literal lists, or NumPy's PCG64 with a fixed seed, written into the
fixture), so the output only changes when Otava's answers change. Floats are written with
Python's repr, which round-trips exactly. The fixture is committed, so `cargo test` needs no
Python.
"""

import copy
import json
import math
import os
import sys
from importlib.metadata import version

import numpy as np
from otava.analysis import TTestSignificanceTester, compute_change_points, merge, split

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "stats",
                   "tests", "fixtures", "changepoint.json")

rng = np.random.default_rng(20261125)


def stepped(length, steps, noise, level=100.0):
    """`length` points around `level`, multiplied by (1 + r) from each step's index on, with
    normal noise of standard deviation `noise` (in the units of the values)."""
    y = np.full(length, level)
    for index, relative in steps:
        y[index:] *= 1.0 + relative
    return [float(v) for v in np.round(y + rng.normal(0.0, noise, length), 6)]


SERIES = [
    ("empty", []),
    ("one", [5.0]),
    ("two", [1.0, 2.0]),
    ("three", [1.0, 1.0, 5.0]),
    ("constant", [3.0] * 12),
    ("clean_step", [1.0] * 8 + [2.0] * 8),
    ("clean_two_steps", [10.0] * 10 + [12.0] * 10 + [9.0] * 10),
    ("noise_only_40", stepped(40, [], 1.0)),
    ("noise_only_150", stepped(150, [], 1.0)),
    ("step10_len30", stepped(30, [(15, 0.10)], 1.0)),
    ("step5_len60", stepped(60, [(25, 0.05)], 1.0)),
    ("step2_len60", stepped(60, [(30, 0.02)], 1.0)),
    ("steps_len120", stepped(120, [(30, 0.05), (70, -0.04), (95, 0.08)], 1.0)),
    ("steps_len200", stepped(200, [(20, 0.03), (60, 0.10), (110, -0.05), (160, 0.02)], 1.0)),
    ("noisy_steps_len200", stepped(200, [(50, 0.05), (120, -0.05)], 3.0)),
    ("late_step_len80", stepped(80, [(74, 0.10)], 1.0)),
    ("early_step_len80", stepped(80, [(4, -0.10)], 1.0)),
    ("heavy_tail_len100", [float(v) for v in np.round(
        100.0 + np.concatenate([np.zeros(50), np.full(50, 4.0)])
        + rng.standard_t(3, 100), 6)]),
    ("many_steps_len300", stepped(
        300, [(i, 0.06 if k % 2 == 0 else -0.06) for k, i in enumerate(range(25, 300, 25))],
        1.5)),
]

SETTINGS = [
    {"window_len": 50, "max_pvalue": 0.001, "min_magnitude": 0.0},
    {"window_len": 50, "max_pvalue": 0.01, "min_magnitude": 0.0},
    {"window_len": 50, "max_pvalue": 0.05, "min_magnitude": 0.0},
    {"window_len": 30, "max_pvalue": 0.001, "min_magnitude": 0.0},
    {"window_len": 20, "max_pvalue": 0.01, "min_magnitude": 0.03},
]


def number(x):
    x = float(x)
    return x if math.isfinite(x) else None


def main():
    cases = []
    for name, series in SERIES:
        for s in SETTINGS:
            points, _weak = compute_change_points(
                list(series), window_len=s["window_len"], max_pvalue=s["max_pvalue"],
                min_magnitude=s["min_magnitude"])
            cases.append({
                "name": name,
                **s,
                "series": series,
                "change_points": [{
                    "index": int(cp.index),
                    "p_value": number(cp.stats.pvalue),
                    "mean_before": number(cp.stats.mean_1),
                    "mean_after": number(cp.stats.mean_2),
                    "std_before": number(cp.stats.std_1),
                    "std_after": number(cp.stats.std_2),
                } for cp in points],
            })
    doc = {
        "generator": "scripts/gen_changepoint_fixtures.py",
        "reference": f"apache-otava {version('apache-otava')}, "
                     "otava.analysis.compute_change_points",
        "numpy": np.__version__,
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    found = sum(len(c["change_points"]) for c in cases)
    print(f"wrote {len(cases)} cases with {found} change points to {os.path.normpath(OUT)}")


def merge_both_neighbours(change_points, series, max_pvalue, min_magnitude):
    """Otava's merge, retesting both neighbours of a removed change point."""
    tester = TTestSignificanceTester(max_pvalue)
    while change_points:
        weakest = max(change_points, key=lambda c: c.stats.pvalue)
        if weakest.stats.pvalue < max_pvalue:
            weakest = min(change_points, key=lambda c: c.stats.change_magnitude())
            if weakest.stats.change_magnitude() > min_magnitude:
                return change_points
        at = change_points.index(weakest)
        del change_points[at]
        intervals = tester.get_intervals(change_points)
        for k in (at - 1, at):
            if 0 <= k < len(change_points):
                change_points[k] = tester.change_point(
                    change_points[k].to_candidate(), series, intervals)
    return change_points


def merge_variants():
    variants = np.random.default_rng(7)
    differ = total = 0
    for _ in range(300):
        n = int(variants.integers(20, 250))
        k = int(variants.integers(0, 6))
        at = sorted(variants.choice(np.arange(5, n - 5), size=k, replace=False)) if k else []
        y = np.full(n, 100.0)
        for i in at:
            y[i:] *= 1 + variants.choice([-1, 1]) * variants.choice([0.01, 0.02, 0.05, 0.1])
        y = list(y + variants.normal(0, variants.choice([0.5, 1, 2, 5]), n))
        for p in (0.001, 0.01, 0.05):
            weak = split(y, 50, p * 10 if p < 0.05 else p * 2)
            otava = [c.index for c in merge(copy.deepcopy(weak), y, p, 0.0)]
            both = [c.index for c in merge_both_neighbours(copy.deepcopy(weak), y, p, 0.0)]
            total += 1
            differ += otava != both
    print(f"{differ} of {total} series: different change points")


if __name__ == "__main__":
    if sys.argv[1:] == ["--merge-variants"]:
        merge_variants()
    else:
        main()
