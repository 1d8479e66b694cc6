#!/usr/bin/env bash
# Start-up cost of `vernier run`: wall time of a session of one trivial measured run
# (`vernier run mock --warmup 0 --min-runs 1 --max-runs 1`), with the system check's sampled
# and measured findings (200 ms window, 500 ping-pong round trips) measured on every
# invocation (an empty cache, as before they were cached) and taken from the per-boot cache.
#
# Prints the median and minimum of each, the difference and the ratio. The two alternate for
# RUNS rounds so that background load hits both alike.
#
# Environment:
#   RUNS=20  rounds
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-20}
if ! [[ $RUNS =~ ^[1-9][0-9]*$ ]]; then
    echo "startup: RUNS must be a positive integer, got '$RUNS'" >&2
    exit 2
fi
if ! command -v python3 >/dev/null; then
    echo "startup: python3 is needed to compute medians" >&2
    exit 2
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p vernier
VERNIER=$CARGO_TARGET_DIR/release/vernier

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
RESULTS=$WORK/results.tsv
: >"$RESULTS"

# One session with the cache under $2; appends its wall time in milliseconds under name $1.
session() {
    local name=$1 cache=$2 t0 t1
    t0=$(date +%s%N)
    XDG_CACHE_HOME=$cache "$VERNIER" run mock --db "$WORK/startup.db" --warmup 0 \
        --min-runs 1 --max-runs 1 --quiet >/dev/null
    t1=$(date +%s%N)
    printf '%s\t%s\n' "$name" "$(( (t1 - t0) / 1000 ))" >>"$RESULTS"
}

# Fills the warm cache once.
XDG_CACHE_HOME=$WORK/warm "$VERNIER" run mock --db "$WORK/startup.db" --warmup 0 \
    --min-runs 1 --max-runs 1 --quiet >/dev/null
for ((i = 1; i <= RUNS; i++)); do
    rm -rf "$WORK/cold"
    session "check measured every time" "$WORK/cold"
    session "check cached for this boot" "$WORK/warm"
done

python3 - "$RESULTS" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, us = line.rstrip("\n").split("\t")
    rows.setdefault(name, []).append(int(us) / 1000)
print(f"vernier run mock, one measured run: wall time, {len(next(iter(rows.values())))} runs each (ms)")
for name, v in rows.items():
    print(f"  {name:<28} median {statistics.median(v):7.1f}  min {min(v):7.1f}")
cold = statistics.median(rows["check measured every time"])
warm = statistics.median(rows["check cached for this boot"])
print(f"  saved per invocation: {cold - warm:.1f} ms (cached/measured = {warm / cold:.2f})")
EOF
