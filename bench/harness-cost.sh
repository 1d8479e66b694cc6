#!/usr/bin/env bash
# Per-run cost of the harness: the slope of a session's wall time between LOW and HIGH runs of
# `command:cmd=true:shell=none` (what one more run costs, the session's start-up cancelled),
# for vernier with its default monitors, vernier with `--monitor none` and `hyperfine -N true`,
# and with BASELINE an earlier vernier binary both ways. `true` does nearly nothing, so the
# slope is the harness's own cost per run plus one spawn of `true`, which all tools pay.
#
# The tools take turns within each round (the order rotates from round to round) so that
# drift and background load hit all alike; the slope of a tool is the median over ROUNDS of
# (wall(HIGH) - wall(LOW)) / (HIGH - LOW), and the ratio to hyperfine's is printed. The load
# average is printed before and after. Goal (issue 29): vernier with default monitors at most
# 2x hyperfine.
#
# Environment:
#   ROUNDS=5                          rounds
#   LOW=20 HIGH=120                   the two session sizes
#   VERNIER=target/release/vernier    the vernier binary (built if it is the default and absent)
#   BASELINE=BIN                      an earlier vernier binary to measure alongside (optional)
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
LOW=${LOW:-20}
HIGH=${HIGH:-120}
for var in ROUNDS LOW HIGH; do
    if ! [[ ${!var} =~ ^[1-9][0-9]*$ ]]; then
        echo "harness-cost: $var must be a positive integer, got '${!var}'" >&2
        exit 2
    fi
done
if ((LOW < 2 || HIGH <= LOW)); then
    echo "harness-cost: need 2 <= LOW < HIGH, got LOW=$LOW HIGH=$HIGH" >&2
    exit 2
fi
for tool in hyperfine python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "harness-cost: $tool is needed (apt-get install $tool)" >&2
        exit 2
    fi
done
VERNIER=${VERNIER:-}
if [[ -z $VERNIER ]]; then
    cargo build --release -q -p vernier
    VERNIER=target/release/vernier
fi
BASELINE=${BASELINE:-}
for bin in "$VERNIER" $BASELINE; do
    if [[ ! -x $bin ]]; then
        echo "harness-cost: '$bin' is not an executable vernier" >&2
        exit 2
    fi
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
RESULTS=$WORK/results.tsv
: >"$RESULTS"
SPEC='command:cmd=true:shell=none'

# The sides: name | how to run a session of N runs (N replaces @N@). Each binary keeps its
# environment cache in a directory of its own: an older binary's cache is not this build's, and
# one that replaced the other's would make the next session capture the environment again.
SIDES=(
    "vernier, default monitors|env XDG_CACHE_HOME=$WORK/cache $VERNIER run $SPEC --db $WORK/v.db --warmup 0 --min-runs @N@ --max-runs @N@ --quiet"
    "vernier, --monitor none|env XDG_CACHE_HOME=$WORK/cache $VERNIER run $SPEC --db $WORK/vn.db --monitor none --warmup 0 --min-runs @N@ --max-runs @N@ --quiet"
    "hyperfine -N|hyperfine -N --style none --warmup 0 --runs @N@ true"
)
if [[ -n $BASELINE ]]; then
    SIDES+=(
        "baseline, default monitors|env XDG_CACHE_HOME=$WORK/baseline-cache $BASELINE run $SPEC --db $WORK/b.db --warmup 0 --min-runs @N@ --max-runs @N@ --quiet"
        "baseline, --monitor none|env XDG_CACHE_HOME=$WORK/baseline-cache $BASELINE run $SPEC --db $WORK/bn.db --monitor none --warmup 0 --min-runs @N@ --max-runs @N@ --quiet"
    )
fi

# Wall time in microseconds of one session of $2 runs of side $1.
session() {
    local command=${1//@N@/$2} t0 t1
    t0=$(date +%s%N)
    # Word splitting of $command is meant: the paths hold no spaces (mktemp, the binaries).
    # shellcheck disable=SC2086
    if ! $command >/dev/null 2>"$WORK/err"; then
        echo "harness-cost: '$command' failed:" >&2
        cat "$WORK/err" >&2
        exit 1
    fi
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000))
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# One session of each first: databases created, caches filled, binaries in the page cache.
for side in "${SIDES[@]}"; do
    session "${side#*|}" "$LOW" >/dev/null
done
n=${#SIDES[@]}
for ((round = 0; round < ROUNDS; round++)); do
    for ((k = 0; k < n; k++)); do
        side=${SIDES[$(((k + round) % n))]}
        name=${side%%|*}
        low=$(session "${side#*|}" "$LOW")
        high=$(session "${side#*|}" "$HIGH")
        printf '%s\t%s\t%s\n' "$name" "$low" "$high" >>"$RESULTS"
    done
    echo "round $((round + 1))/$ROUNDS  load $(cut -d' ' -f1 /proc/loadavg)" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$RESULTS" "$LOW" "$HIGH" <<'PY'
import statistics, sys
low_n, high_n = int(sys.argv[2]), int(sys.argv[3])
slopes, order = {}, []
for line in open(sys.argv[1]):
    name, low, high = line.rstrip("\n").split("\t")
    if name not in slopes:
        order.append(name)
        slopes[name] = []
    slopes[name].append((int(high) - int(low)) / 1000 / (high_n - low_n))
print(f"command:cmd=true:shell=none, ms per run, slope between {low_n} and {high_n} runs")
hf = statistics.median(slopes["hyperfine -N"])
for name in order:
    s = slopes[name]
    m = statistics.median(s)
    print(f"  {name:<28} median {m:7.2f}  min {min(s):7.2f}  max {max(s):7.2f}  x hyperfine {m / hf:6.2f}")
PY
