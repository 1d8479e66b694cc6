#!/usr/bin/env bash
# A/A check of `vernier compare`: runs the same configurations as two sessions, PAIRS times,
# compares each pair and counts how often the verdict is anything but equivalent or
# inconclusive. Both sides measure the same thing, so every "faster" or "slower" is a false
# verdict. Goal (issue "Honest statistics"): at most 5% false verdicts with 40 pairs or more.
#
# Beside it, the power to see a real change: each pair's second session is exported, every
# measured value of its primary metric multiplied by 1 + PLANT (default 10%; a time gets
# slower, a rate faster), imported as a new session, and compared with the first. The change
# is exact and known, and it sits on real session-to-session noise. The share of these
# comparisons that report the planted direction is the power; the median minimum detectable
# change (`mdc`) of the A/A comparisons is printed too.
#
# With CALIBRATE=N (default 8; 0 turns it off) the script first runs `vernier calibrate` with
# N sessions of the same configurations and runs, their starts spread over SPREAD seconds
# (default 600; 0 runs them back to back), so single-session compares are widened by this
# machine's session-to-session noise (docs/compare.md); with CALIBRATE=0 the figures are those
# of the intervals from runs alone.
#
# Every pair runs one session after the other, as a user comparing two kernels would, so drift
# between sessions counts against vernier. Results go to a temporary database that is removed
# at the end (KEEP_DB=1 keeps it and prints its path).
#
# Environment:
#   PAIRS=40                         pairs of sessions
#   SPECS="pipe:loops=20000:placement=same-cpu hackbench:groups=2:loops=200"
#   RUNS=10                          measured runs per configuration (min and max)
#   THRESHOLD=2%                     compare --threshold
#   CALIBRATE=8                      calibration sessions before the pairs (0: none)
#   SPREAD=600                       seconds over which the calibration's sessions start
#   PLANT=0.10                       the planted relative change for the power figure
#   VERNIER=target/release/vernier   the vernier binary
set -euo pipefail

PAIRS=${PAIRS:-40}
SPECS=${SPECS:-"pipe:loops=20000:placement=same-cpu hackbench:groups=2:loops=200"}
RUNS=${RUNS:-10}
THRESHOLD=${THRESHOLD:-2%}
CALIBRATE=${CALIBRATE:-8}
SPREAD=${SPREAD:-600}
PLANT=${PLANT:-0.10}
VERNIER=${VERNIER:-target/release/vernier}

if ! [[ $PAIRS =~ ^[1-9][0-9]*$ && $RUNS =~ ^[1-9][0-9]*$ && $CALIBRATE =~ ^[0-9]+$ &&
    $SPREAD =~ ^[0-9]+$ ]]; then
    echo "aa-check: PAIRS and RUNS must be positive integers, CALIBRATE a count (0 for none)," \
        "SPREAD whole seconds (0 for back to back)" >&2
    exit 2
fi
if [[ $CALIBRATE == 1 ]]; then
    echo "aa-check: CALIBRATE must be 0 or at least 2 (sessions)" >&2
    exit 2
fi
if ! [[ $PLANT =~ ^0?\.[0-9]+$ ]]; then
    echo "aa-check: PLANT must be a fraction such as 0.10" >&2
    exit 2
fi
if ! [[ -x $VERNIER ]]; then
    echo "aa-check: no vernier binary at $VERNIER (cargo build --release, or set VERNIER)" >&2
    exit 2
fi
command -v python3 >/dev/null || { echo "aa-check: python3 is needed to read JSON" >&2; exit 2; }

dir=$(mktemp -d)
db=$dir/aa.db
if [[ ${KEEP_DB:-0} == 1 ]]; then
    echo "aa-check: database $db"
else
    trap 'rm -rf "$dir"' EXIT
fi

read -r -a specs <<<"$SPECS"
started=$(date +%s)
if ((CALIBRATE > 0)); then
    echo "aa-check: calibrating with $CALIBRATE sessions over $SPREAD s" >&2
    spread=()
    ((SPREAD > 0)) && spread=(--spread "$SPREAD")
    "$VERNIER" --db "$db" calibrate "${specs[@]}" --sessions "$CALIBRATE" --runs "$RUNS" \
        --warmup 1 --max-time 60 "${spread[@]}" >"$dir/calibration.txt"
    cat "$dir/calibration.txt"
fi

# The second session of a pair, exported, scaled by 1 + PLANT and given new ids, as side "p".
plant() {
    "$VERNIER" --db "$db" export "aa-pair=$1,aa-side=b" -o "$dir/b-$1.json"
    python3 - "$dir/b-$1.json" "$dir/p-$1.json" "$PLANT" <<'PY'
import json, sys, uuid
src, dst, plant = sys.argv[1], sys.argv[2], float(sys.argv[3])
doc = json.load(open(src))
for s in doc["sessions"]:
    s["id"] = str(uuid.uuid4())
    s["tags"]["aa-side"] = "p"
    for c in s["configurations"]:
        c["id"] = str(uuid.uuid4())
        metric = c["metric"]["name"]
        for r in c["runs"]:
            r["id"] = str(uuid.uuid4())
            if not r["warmup"] and metric in r["values"]:
                r["values"][metric] *= 1.0 + plant
json.dump(doc, open(dst, "w"))
PY
    "$VERNIER" --db "$db" import "$dir/p-$1.json" >/dev/null
}

for ((i = 1; i <= PAIRS; i++)); do
    for side in a b; do
        "$VERNIER" --db "$db" run "${specs[@]}" --min-runs "$RUNS" --max-runs "$RUNS" \
            --warmup 1 --tag aa-pair="$i" --tag aa-side="$side" --quiet >/dev/null
    done
    "$VERNIER" --db "$db" compare "aa-pair=$i,aa-side=a" "aa-pair=$i,aa-side=b" \
        --threshold "$THRESHOLD" --format json >"$dir/compare-$i.json"
    plant "$i"
    "$VERNIER" --db "$db" compare "aa-pair=$i,aa-side=a" "aa-pair=$i,aa-side=p" \
        --threshold "$THRESHOLD" --format json >"$dir/planted-$i.json"
    echo "aa-check: pair $i/$PAIRS done" >&2
done
echo "aa-check: $PAIRS pairs in $(($(date +%s) - started)) s (with calibration: $CALIBRATE sessions over $SPREAD s)"

python3 - "$dir" "$PAIRS" "$PLANT" <<'PY'
import json, sys, collections
d, pairs, plant = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

def label(c):
    return c["benchmark"] + ":" + ":".join(f"{k}={v}" for k, v in sorted(c["options"].items()))

verdicts = collections.Counter()
per_config = collections.defaultdict(collections.Counter)
ratios = collections.defaultdict(list)
mdcs = collections.defaultdict(list)
sources = collections.Counter()
detected = collections.Counter()
planted_total = collections.Counter()
withheld = 0
for i in range(1, pairs + 1):
    with open(f"{d}/compare-{i}.json") as f:
        report = json.load(f)
    for c in report["comparisons"]:
        verdicts[c["verdict"]] += 1
        per_config[label(c)][c["verdict"]] += 1
        ratios[label(c)].append(c["ratio"])
        sources[c.get("noise_source") or "none"] += 1
        if c.get("mdc") is not None:
            mdcs[label(c)].append(c["mdc"])
    with open(f"{d}/planted-{i}.json") as f:
        report = json.load(f)
    for c in report["comparisons"]:
        # A time multiplied by 1 + PLANT is slower, a rate faster.
        want = "faster" if c["higher_is_better"] else "slower"
        planted_total[label(c)] += 1
        detected[label(c)] += c["verdict"] == want
        # Verdicts withheld because runs were contaminated by other CPU activity.
        withheld += any("withheld" in w for w in c["warnings"])

def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")

for name, counts in per_config.items():
    r = sorted(ratios[name])
    power = detected[name] / planted_total[name] if planted_total[name] else 0.0
    print(f"{name}: {dict(counts)}  ratio min {r[0]:.3f} median {median(r):.3f} max {r[-1]:.3f}"
          f"  median MDC {median(mdcs[name]):.1%}"
          f"  planted {plant:.0%}: detected {detected[name]} of {planted_total[name]} ({power:.0%})")
total = sum(verdicts.values())
false = verdicts["faster"] + verdicts["slower"]
rate = false / total if total else 0.0
power = sum(detected.values()) / sum(planted_total.values()) if planted_total else 0.0
print(f"interval noise source: {dict(sources)}")
print(f"verdicts over {total} comparisons: {dict(verdicts)}")
print(f"false verdicts (faster or slower): {false} of {total} = {rate:.1%} (goal: at most 5%)"
      f"  |  power for a real {plant:.0%} change: {sum(detected.values())} of "
      f"{sum(planted_total.values())} = {power:.0%}")
print(f"planted comparisons whose verdict was withheld for contaminated runs: {withheld}")
if pairs < 40:
    print(f"note: {pairs} pairs; the goal is stated for 40 or more")
sys.exit(0 if rate <= 0.05 else 1)
PY
