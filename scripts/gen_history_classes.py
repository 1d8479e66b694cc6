#!/usr/bin/env python3
"""Synthetic session histories with a known truth per class, and what two reference change-point
detectors find in them: the fixture of crates/analysis/tests/history_classes.rs (docs/history.md,
"Episodes, drifts and the baseline").

Classes (each series 40 sessions, the session-to-session noise 1% of the level, normal):
  transient  a regression of +10% or +20% lasting 2, 4, 6 or 8 sessions, then fixed
  drift      the level creeps linearly by +3% or +6% over the 40 sessions
  staircase  five steps of +1.5% every 6 sessions from session 8 (x1.077 in all)
  outlier    two single sessions 30% slow, nothing else
  null       noise only

References, run on the same series of session medians:
  E-Divisive  Matteson & James (JASA 2014) with its permutation test, as MongoDB's
              signal-processing-algorithms 2.1.6 implements it (`e_divisive`, p 0.05, 100
              permutations, numpy's generator seeded per series)
  PELT        Killick, Fearnhead & Eckley (JASA 2012), ruptures 1.1.10 (`Pelt(model="l2",
              min_size=2)`), penalty 2 sigma^2 ln(n) (BIC) with sigma from the MAD of the
              first differences divided by sqrt(2)

Usage: pip install --user ruptures==1.1.10 signal-processing-algorithms==2.1.6
       scripts/gen_history_classes.py > crates/analysis/tests/fixtures/history_classes.json
"""

import json
import sys

import numpy as np
import ruptures
from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

SEED = 20261127
SESSIONS = 40
NOISE = 0.01
PER_CLASS = 24


def transient(rng, k):
    length = [2, 4, 6, 8][k % 4]
    size = [0.10, 0.20][(k // 4) % 2]
    start = int(rng.integers(8, SESSIONS - 8 - length + 1))
    level = np.ones(SESSIONS)
    level[start : start + length] *= 1 + size
    return level, {"from": start, "to": start + length, "size": size}


def drift(rng, k):
    total = [0.03, 0.06][k % 2]
    level = 1 + total * np.arange(SESSIONS) / (SESSIONS - 1)
    return level, {"total": total}


def staircase(rng, k):
    level = np.ones(SESSIONS)
    for at in range(8, SESSIONS, 6):
        level[at:] *= 1.015
    return level, {"steps": list(range(8, SESSIONS, 6))}


def outlier(rng, k):
    level = np.ones(SESSIONS)
    first = int(rng.integers(4, SESSIONS // 2 - 2))
    second = int(rng.integers(SESSIONS // 2 + 2, SESSIONS - 4))
    for at in (first, second):
        level[at] *= 1.3
    return level, {"at": [first, second]}


def null(rng, k):
    return np.ones(SESSIONS), {}


CLASSES = [
    ("transient", transient),
    ("drift", drift),
    ("staircase", staircase),
    ("outlier", outlier),
    ("null", null),
]


def references(medians, seed):
    np.random.seed(seed)
    edivisive = sorted(int(i) for i in e_divisive(medians.tolist(), pvalue=0.05, permutations=100))
    sigma = np.median(np.abs(np.diff(medians))) / 0.6745 / np.sqrt(2)
    penalty = 2 * sigma * sigma * np.log(len(medians))
    pelt = ruptures.Pelt(model="l2", min_size=2, jump=1).fit(medians).predict(pen=penalty)
    return edivisive, [int(i) for i in pelt[:-1]]


def main():
    rng = np.random.default_rng(SEED)
    series = []
    for name, make in CLASSES:
        for k in range(PER_CLASS):
            level, truth = make(rng, k)
            medians = 100 * level * (1 + NOISE * rng.standard_normal(SESSIONS))
            edivisive, pelt = references(medians, SEED + len(series))
            series.append(
                {
                    "class": name,
                    "truth": truth,
                    "medians": [float(m) for m in medians],
                    "e_divisive": edivisive,
                    "pelt": pelt,
                }
            )
    json.dump(
        {
            "seed": SEED,
            "sessions": SESSIONS,
            "noise": NOISE,
            "references": {
                "e_divisive": "signal-processing-algorithms 2.1.6 e_divisive(p=0.05, permutations=100)",
                "pelt": "ruptures 1.1.10 Pelt(model='l2', min_size=2), penalty 2 sigma^2 ln n",
            },
            "series": series,
        },
        sys.stdout,
        indent=None,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
