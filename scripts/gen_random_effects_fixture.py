#!/usr/bin/env python3
"""Generate crates/stats/tests/fixtures/random_effects.json, the known answers of
crates/stats/src/random_effects.rs (session-to-session noise).

Usage: python3 scripts/gen_random_effects_fixture.py   (needs numpy and scipy)

Every input comes from NumPy's PCG64 with a fixed seed and is written into the fixture. The
expected values are computed here independently of the Rust code, from the published
formulas, with SciPy's normal and t quantiles:

- Maritz & Jarrett's (1978) standard error of the median: the Beta(m, n - m + 1)
  distribution of the m-th order statistic, m = floor(n/2 + 1/2), on the empirical quantiles;
- the ANOVA estimator of the between-session variance component (Searle, Casella &
  McCulloch 1992): the pooled within-group mean square of the session medians (the residual
  mean square of a one-way ANOVA, cross-checked against scipy.stats.f_oneway) minus the mean
  within-session variance, truncated at zero;
- an interval widened by that variance with Satterthwaite's degrees of freedom;
- the minimum detectable change: the noncentral t's power (scipy.stats.nct) at the
  interval's critical value, the standard error scaled to be right in the median.
"""

import json
import math
import os

import numpy as np
from scipy import optimize, stats

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "stats",
                   "tests", "fixtures", "random_effects.json")

rng = np.random.default_rng(20261123)
LEVEL = 0.95


def mjse(x):
    y = np.sort(np.asarray(x, dtype=float))
    n = len(y)
    m = int(math.floor(n / 2 + 0.5))
    i = np.arange(1, n + 1)
    w = stats.beta.cdf(i / n, m, n - m + 1) - stats.beta.cdf((i - 1) / n, m, n - m + 1)
    c1 = float(np.sum(w * y))
    c2 = float(np.sum(w * y * y))
    return math.sqrt(max(c2 - c1 * c1, 0.0))


def between(groups):
    """groups: list of lists of (median, within variance)."""
    k = sum(len(g) for g in groups)
    ss = 0.0
    for g in groups:
        m = np.array([s[0] for s in g])
        ss += float(np.sum((m - m.mean()) ** 2))
    df = k - len(groups)
    ms = ss / df
    if len(groups) > 1 and all(len(g) > 1 for g in groups):
        # The residual mean square of a one-way ANOVA, from SciPy's F statistic.
        meds = [np.array([s[0] for s in g]) for g in groups]
        f = stats.f_oneway(*meds).statistic
        grand = np.concatenate(meds).mean()
        msb = sum(len(m) * (m.mean() - grand) ** 2 for m in meds) / (len(meds) - 1)
        if math.isfinite(f) and f > 0:
            assert abs(msb / f - ms) <= 1e-9 * ms, (msb / f, ms)
    within = float(np.mean([s[1] for g in groups for s in g]))
    return {"mean_square": ms, "within": within, "variance": max(0.0, ms - within),
            "df": float(df), "sessions": k}


def widen(center, low, high, extra_var, extra_df):
    z = stats.norm.ppf(0.5 + LEVEL / 2)
    out = {}
    for name, width in (("low", center - low), ("high", high - center)):
        se = width / z
        total = se * se + extra_var
        df = total * total / (extra_var * extra_var / extra_df)
        q = stats.t.ppf(0.5 + LEVEL / 2, df)
        out[name] = center - q * math.sqrt(total) if name == "low" else center + q * math.sqrt(total)
        out["df_" + name] = df
        out["se_" + name] = math.sqrt(total)
    return out


def mdc(threshold, se, df, level=LEVEL, power=0.8):
    """exp(ln(1 + threshold) + delta se k) - 1: delta the noncentrality at which the one-sided
    t test at the interval's critical value has the power (scipy.stats.nct), k the factor that
    makes the estimated standard error right in the median, 1 / sqrt(chi2.median(df) / df)."""
    if math.isinf(df):
        delta = stats.norm.ppf(0.5 + level / 2) + stats.norm.ppf(power)
        k = 1.0
    else:
        c = stats.t.ppf(0.5 + level / 2, df)
        delta = optimize.brentq(lambda d: stats.nct.sf(c, df, d) - power, c - 10, c + 500,
                                xtol=1e-14, rtol=1e-14)
        k = 1 / math.sqrt(stats.chi2.median(df) / df)
    return math.expm1(math.log1p(threshold) + delta * se * k)


cases = []
for case, (k_groups, sessions, runs, tau, sigma) in enumerate([
    (1, 5, 10, 0.02, 0.01),
    (1, 3, 7, 0.0, 0.05),
    (1, 8, 25, 0.05, 0.02),
    (2, 3, 12, 0.03, 0.01),
    (2, 2, 9, 0.01, 0.03),
    (2, 4, 40, 0.02, 0.005),
]):
    groups = []
    raw = []
    for g in range(k_groups):
        sess = []
        raw_g = []
        for _ in range(sessions):
            # Log values of one session: a session effect plus lognormal-like run noise with
            # a few slow runs, rounded to 1e-6 so some sessions carry ties.
            b = rng.normal(0.0, tau)
            e = rng.normal(0.0, sigma, size=runs)
            e[rng.random(runs) < 0.1] += 3 * sigma
            x = np.round(0.1 * g + b + e, 6)
            raw_g.append([float(v) for v in x])
            se = mjse(x)
            sess.append((float(np.median(x)), se * se))
        groups.append(sess)
        raw.append(raw_g)
    result = between(groups)
    # A runs interval around 0.01 of half-widths 0.02 and 0.03, widened by the between
    # variance as a comparison of one session per side would be (2 tau^2) or, for two groups,
    # by tau^2 (1/k + 1/k).
    scale = 2.0 if k_groups == 1 else 2.0 / sessions
    extra = scale * result["variance"]
    if extra > 0:
        w = widen(0.01, -0.01, 0.04, extra, result["df"])
    else:
        w = {"low": -0.01, "high": 0.04}
    cases.append({
        "values": raw,
        "session_medians": [[s[0] for s in g] for g in groups],
        "within_variances": [[s[1] for s in g] for g in groups],
        "between": result,
        "widen": {"center": 0.01, "low": -0.01, "high": 0.04, "extra_variance": extra,
                  "extra_df": result["df"], "expected": w},
    })

mdc_cases = [{"threshold": t, "se": se, "df": None if math.isinf(df) else df, "power": p,
              "expected": mdc(t, se, df, power=p)}
             for t, se, df, p in [(0.02, 0.025, math.inf, 0.8), (0.0, 0.004, 1.0, 0.5),
                                  (0.05, 0.07, 4.0, 0.9), (0.02, 0.01, 1.7, 0.8),
                                  (0.02, 0.03, 25.0, 0.8)]]

with open(OUT, "w") as f:
    json.dump({"level": LEVEL, "cases": cases, "mdc": mdc_cases}, f, indent=1)
    f.write("\n")
print(f"wrote {OUT}")
