#!/usr/bin/env bash
# Fidelity check: runs vernier's built-in benchmarks side by side with the established tools
# they reproduce, on this machine, and prints the median of each and the ratio
# vernier/reference. A faithful reimplementation gives ratios within 0.90-1.10.
#
#   hackbench (4 variants)  vs  rt-tests `hackbench -g 10 -l 1000 [-p] [-T]` ("Time: X" line)
#   pipe same-cpu           vs  `taskset -c 0 perf bench sched pipe -l 100000` ("usecs/op")
#
# The two sides alternate (reference, vernier, reference, vernier, ...) for ROUNDS rounds so
# that drift and background load hit both alike. A pair whose reference tool is absent is
# skipped with a message; this script installs nothing (rt-tests provides hackbench,
# linux-perf provides perf).
#
# Environment:
#   ROUNDS=7                          rounds per pair
#   VERNIER=target/release/vernier    the vernier binary
#   REFERENCE_ONLY=1                  run only the reference tools (checks this script's
#                                     reference half without a vernier binary)
set -euo pipefail

ROUNDS=${ROUNDS:-7}
VERNIER=${VERNIER:-target/release/vernier}
REFERENCE_ONLY=${REFERENCE_ONLY:-0}

if ! [[ $ROUNDS =~ ^[1-9][0-9]*$ ]]; then
    echo "fidelity: ROUNDS must be a positive integer, got '$ROUNDS'" >&2
    exit 2
fi
if ! command -v python3 >/dev/null; then
    echo "fidelity: python3 is needed to read vernier's JSON and compute medians" >&2
    exit 2
fi
if [[ $REFERENCE_ONLY != 1 && ! -x $VERNIER ]]; then
    echo "fidelity: no vernier binary at '$VERNIER' (build it with cargo build --release," >&2
    echo "or set VERNIER=/path/to/vernier, or REFERENCE_ONLY=1)" >&2
    exit 2
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DB=$WORK/fidelity.db
RESULTS=$WORK/results.tsv
: >"$RESULTS"

# The pairs: name | reference command | vernier spec.
PAIRS=(
    "hackbench socket/process|hackbench -g 10 -l 1000|hackbench:groups=10:loops=1000:ipc=socket:tasks=process"
    "hackbench pipe/process|hackbench -g 10 -l 1000 -p|hackbench:groups=10:loops=1000:ipc=pipe:tasks=process"
    "hackbench socket/thread|hackbench -g 10 -l 1000 -T|hackbench:groups=10:loops=1000:ipc=socket:tasks=thread"
    "hackbench pipe/thread|hackbench -g 10 -l 1000 -p -T|hackbench:groups=10:loops=1000:ipc=pipe:tasks=thread"
    "pipe same-cpu (us)|taskset -c 0 perf bench sched pipe -l 100000|pipe:loops=100000:placement=same-cpu:tasks=process"
)

# Keeps the pairs whose reference tools exist.
ACTIVE=()
for pair in "${PAIRS[@]}"; do
    IFS='|' read -r name ref _spec <<<"$pair"
    missing=""
    for tool in $ref; do
        case $tool in
        hackbench | taskset | perf)
            command -v "$tool" >/dev/null || missing="$missing $tool"
            ;;
        esac
    done
    if [[ -n $missing ]]; then
        echo "fidelity: skipping '$name':$missing not installed" >&2
    else
        ACTIVE+=("$pair")
    fi
done
if [[ ${#ACTIVE[@]} -eq 0 ]]; then
    echo "fidelity: no reference tool present (apt-get install rt-tests linux-perf)" >&2
    exit 2
fi

# One run of a reference tool; prints the number it reports.
reference_value() {
    local ref=$1 out value
    if ! out=$($ref 2>&1); then
        echo "fidelity: '$ref' failed:" >&2
        echo "$out" >&2
        return 1
    fi
    case $ref in
    hackbench*) value=$(awk '/^Time:/ {print $2}' <<<"$out") ;;
    *"perf bench sched pipe"*) value=$(awk '$2 == "usecs/op" {print $1}' <<<"$out") ;;
    esac
    if [[ -z ${value:-} ]]; then
        echo "fidelity: no result in the output of '$ref':" >&2
        echo "$out" >&2
        return 1
    fi
    echo "$value"
}

# One measured vernier run; prints the value of its primary metric.
vernier_value() {
    local spec=$1 out
    if ! out=$("$VERNIER" run "$spec" --db "$DB" --warmup 0 --min-runs 1 --max-runs 1 \
        --quiet 2>&1); then
        echo "fidelity: vernier run '$spec' failed:" >&2
        echo "$out" >&2
        return 1
    fi
    "$VERNIER" show latest --db "$DB" --format json | python3 -c '
import json, sys
bench = sys.argv[1]
for conf in json.load(sys.stdin):
    if conf.get("benchmark") == bench and conf.get("values"):
        print(conf["values"][-1])
        break
else:
    sys.exit("fidelity: no %s result in vernier show latest" % bench)
' "${spec%%:*}"
}

for ((round = 1; round <= ROUNDS; round++)); do
    for pair in "${ACTIVE[@]}"; do
        IFS='|' read -r name ref spec <<<"$pair"
        a=$(reference_value "$ref")
        printf '%s\treference\t%s\n' "$name" "$a" >>"$RESULTS"
        if [[ $REFERENCE_ONLY == 1 ]]; then
            b="-"
        else
            b=$(vernier_value "$spec")
            printf '%s\tvernier\t%s\n' "$name" "$b" >>"$RESULTS"
        fi
        echo "round $round/$ROUNDS  $name: reference $a, vernier $b" >&2
    done
done

python3 - "$RESULTS" <<'PY'
import statistics, sys

order, values = [], {}
with open(sys.argv[1]) as f:
    for line in f:
        name, side, value = line.rstrip("\n").split("\t")
        if name not in values:
            order.append(name)
            values[name] = {"reference": [], "vernier": []}
        values[name][side].append(float(value))

print(f"{'pair':<26} {'n':>3} {'reference':>10} {'vernier':>10} {'ratio':>7}  verdict")
for name in order:
    ref, ver = values[name]["reference"], values[name]["vernier"]
    mref = statistics.median(ref)
    if not ver:
        print(f"{name:<26} {len(ref):>3} {mref:>10.4g} {'-':>10} {'-':>7}")
        continue
    mver = statistics.median(ver)
    ratio = mver / mref if mref > 0 else float("nan")
    verdict = "ok" if 0.90 <= ratio <= 1.10 else "OUTSIDE 0.90-1.10"
    print(f"{name:<26} {len(ref):>3} {mref:>10.4g} {mver:>10.4g} {ratio:>7.3f}  {verdict}")
PY
