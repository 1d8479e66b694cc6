#!/usr/bin/env bash
# A/A check of `vernier compare`: runs the same configurations as two sessions, PAIRS times,
# compares each pair and counts how often the verdict is anything but equivalent or
# inconclusive. Both sides measure the same thing, so every "faster" or "slower" is a false
# verdict. Goal (issue "vernier compare"): at most 5% false verdicts.
#
# Every pair runs one session after the other, as a user comparing two kernels would, so drift
# between sessions counts against vernier. Results go to a temporary database that is removed
# at the end (KEEP_DB=1 keeps it and prints its path).
#
# Environment:
#   PAIRS=20                         pairs of sessions
#   SPECS="pipe:loops=20000:placement=same-cpu hackbench:groups=2:loops=200"
#   RUNS=10                          measured runs per configuration (min and max)
#   THRESHOLD=2%                     compare --threshold
#   VERNIER=target/release/vernier   the vernier binary
set -euo pipefail

PAIRS=${PAIRS:-20}
SPECS=${SPECS:-"pipe:loops=20000:placement=same-cpu hackbench:groups=2:loops=200"}
RUNS=${RUNS:-10}
THRESHOLD=${THRESHOLD:-2%}
VERNIER=${VERNIER:-target/release/vernier}

if ! [[ $PAIRS =~ ^[1-9][0-9]*$ && $RUNS =~ ^[1-9][0-9]*$ ]]; then
    echo "aa-check: PAIRS and RUNS must be positive integers" >&2
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
for ((i = 1; i <= PAIRS; i++)); do
    for side in a b; do
        "$VERNIER" --db "$db" run "${specs[@]}" --min-runs "$RUNS" --max-runs "$RUNS" \
            --warmup 1 --tag aa-pair="$i" --tag aa-side="$side" --quiet >/dev/null
    done
    "$VERNIER" --db "$db" compare "aa-pair=$i,aa-side=a" "aa-pair=$i,aa-side=b" \
        --threshold "$THRESHOLD" --format json >"$dir/compare-$i.json"
    echo "aa-check: pair $i/$PAIRS done" >&2
done

python3 - "$dir" "$PAIRS" <<'PY'
import json, sys, collections
d, pairs = sys.argv[1], int(sys.argv[2])
verdicts = collections.Counter()
per_config = collections.defaultdict(collections.Counter)
ratios = collections.defaultdict(list)
for i in range(1, pairs + 1):
    with open(f"{d}/compare-{i}.json") as f:
        report = json.load(f)
    for c in report["comparisons"]:
        label = c["benchmark"] + ":" + ":".join(f"{k}={v}" for k, v in sorted(c["options"].items()))
        verdicts[c["verdict"]] += 1
        per_config[label][c["verdict"]] += 1
        ratios[label].append(c["ratio"])
total = sum(verdicts.values())
false = verdicts["faster"] + verdicts["slower"]
for label, counts in per_config.items():
    r = sorted(ratios[label])
    print(f"{label}: {dict(counts)}  ratio min {r[0]:.3f} median {r[len(r)//2]:.3f} max {r[-1]:.3f}")
print(f"verdicts over {total} comparisons: {dict(verdicts)}")
rate = false / total if total else 0.0
print(f"false verdicts (faster or slower): {false} of {total} = {rate:.1%} (goal: at most 5%)")
sys.exit(0 if rate <= 0.05 else 1)
PY
