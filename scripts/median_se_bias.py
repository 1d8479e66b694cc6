#!/usr/bin/env python3
"""How well two distribution-free estimators of the sample median's variance do at the sizes
`vernier calibrate` and `compare` see, and what that does to the between-session variance.

Usage: python3 scripts/median_se_bias.py   (needs numpy and scipy; about a minute)

- McKean & Schrader (1984), as R. Wilcox's `msmedse`: (x(n-c+1) - x(c)) / (2 z_0.995) with
  c = round((n+1)/2 - z_0.995 sqrt(n/4)); at n = 10, c = 1, the extremes.
- Maritz & Jarrett (1978): the Beta(m, n - m + 1) weights of the m-th order statistic on the
  empirical quantiles (crates/stats/src/random_effects.rs, `median_se`).

Part 1 prints the mean estimated variance over the true variance of the median (20,000 samples
each). Part 2 simulates calibrations of 8 sessions of 10 runs (session effect tau, run noise
sigma, a share of runs shifted up by 0.2) and prints the mean of the truncated estimate of
tau^2 over tau^2 and how often it is truncated to zero. Seeds are fixed.
"""

import math

import numpy as np
from scipy import stats

rng = np.random.default_rng(20261123)


def mckean_schrader(x):
    n = len(x)
    z = stats.norm.ppf(0.995)
    c = min(max(int(round((n + 1) / 2 - z * math.sqrt(n / 4))), 1), (n + 1) // 2)
    s = np.sort(x)
    return ((s[n - c] - s[c - 1]) / (2 * z)) ** 2


def maritz_jarrett(x):
    n = len(x)
    m = int(math.floor(n / 2 + 0.5))
    s = np.sort(x)
    i = np.arange(1, n + 1)
    w = stats.beta.cdf(i / n, m, n - m + 1) - stats.beta.cdf((i - 1) / n, m, n - m + 1)
    c1 = np.sum(w * s)
    return max(np.sum(w * s * s) - c1 * c1, 0.0)


ESTIMATORS = [("McKean-Schrader", mckean_schrader), ("Maritz-Jarrett", maritz_jarrett)]
SHAPES = [
    ("normal", lambda n: rng.normal(size=n)),
    ("10% shifted", lambda n: np.where(rng.random(n) < 0.1, 3.0, 0.0) + rng.normal(size=n)),
    ("bimodal 50/50", lambda n: np.where(rng.random(n) < 0.5, 0.1, 0.0)
     + rng.normal(0, 0.01, size=n)),
]

print("estimated / true variance of the sample median")
for shape, draw in SHAPES:
    for n in (6, 10, 20, 50):
        xs = np.array([draw(n) for _ in range(20000)])
        true = np.var(np.median(xs, axis=1))
        ratios = [np.mean([f(x) for x in xs]) / true for _, f in ESTIMATORS]
        print(f"  {shape:14} n={n:2}  " + "  ".join(
            f"{name} {r:.2f}" for (name, _), r in zip(ESTIMATORS, ratios)))

print("between-session variance from 8 sessions of 10 runs (truncated at zero)")
for tau, sigma, shifted in [(0.02, 0.02, 0.0), (0.05, 0.02, 0.1), (0.02, 0.01, 0.1)]:
    for name, f in ESTIMATORS:
        estimates = []
        for _ in range(3000):
            medians, within = [], []
            for _ in range(8):
                x = (rng.normal(0, tau) + rng.normal(0, sigma, 10)
                     + np.where(rng.random(10) < shifted, 0.2, 0.0))
                medians.append(np.median(x))
                within.append(f(x))
            estimates.append(np.var(medians, ddof=1) - np.mean(within))
        estimates = np.array(estimates)
        print(f"  tau {tau} sigma {sigma} shifted {shifted:.0%}  {name:15} "
              f"mean estimate / tau^2 {np.mean(np.maximum(estimates, 0)) / tau ** 2:.2f}  "
              f"zero {np.mean(estimates <= 0):.0%}")
