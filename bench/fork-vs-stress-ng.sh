#!/usr/bin/env bash
# vernier's fork benchmark against `stress-ng --fork 1`, side by side, one worker each.
#
# Prints the median of each and the ratios vernier/stress-ng:
#   stress-ng --fork 1 -t SECONDS --metrics-brief: both of its bogo-op rates, per second of
#     real time (what vernier's forks_per_second counts: forks per second of the worker's
#     elapsed time) and per second of the worker's user+system CPU time;
#   vernier fork:workers=1:duration=SECONDS with parent_mem=0 (the default), with parent_mem
#     set to what stress-ng's fork worker has resident (its VmRSS, read from /proc while it
#     runs: the pages whose table entries fork(2) copies) and to what it maps (its VmSize;
#     parent_mem touches all of it, so this is an upper bound).
#
# The sides alternate (stress-ng, vernier, vernier, stress-ng, ...) for ROUNDS rounds so that
# drift and background load hit all alike. stress-ng is installed with apt-get when missing
# (as root); the vernier binary is built in release mode.
#
# Environment:
#   ROUNDS=5       rounds
#   SECONDS_RUN=2  seconds per run of each side
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
SECONDS_RUN=${SECONDS_RUN:-2}
if ! [[ $ROUNDS =~ ^[1-9][0-9]*$ ]]; then
    echo "fork-vs-stress-ng: ROUNDS must be a positive integer, got '$ROUNDS'" >&2
    exit 2
fi
if ! [[ $SECONDS_RUN =~ ^[1-9][0-9]*$ ]]; then
    echo "fork-vs-stress-ng: SECONDS_RUN must be a positive integer, got '$SECONDS_RUN'" >&2
    exit 2
fi
if ! command -v python3 >/dev/null; then
    echo "fork-vs-stress-ng: python3 is needed to read vernier's JSON and compute medians" >&2
    exit 2
fi
if ! command -v stress-ng >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends stress-ng >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get install -y -qq --no-install-recommends stress-ng >/dev/null; }
    else
        echo "fork-vs-stress-ng: stress-ng is not installed (apt-get install stress-ng, as root)" >&2
        exit 2
    fi
fi

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p vernier
VERNIER=$CARGO_TARGET_DIR/release/vernier

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DB=$WORK/fork.db
RESULTS=$WORK/results.tsv
: >"$RESULTS"

# One stress-ng run: appends its two rates; in the first round also reads the size of its
# fork worker (the process named stress-ng-fork) once it runs.
stress_ng_run() {
    local out=$WORK/stress-ng.out
    stress-ng --fork 1 -t "$SECONDS_RUN" --metrics-brief >"$out" 2>&1 &
    local pid=$! worker="" tries
    if [[ ! -s $WORK/vmsize ]]; then
        for ((tries = 0; tries < 10 * SECONDS_RUN; tries++)); do
            sleep 0.1
            worker=$(pgrep -P "$pid" -x stress-ng-fork | head -n 1 || true)
            [[ -z $worker ]] && continue
            sleep 0.2
            awk '$1 == "VmSize:" {print $2}' "/proc/$worker/status" >"$WORK/vmsize" || true
            awk '$1 == "VmRSS:" {print $2}' "/proc/$worker/status" >"$WORK/vmrss" || true
            break
        done
    fi
    wait "$pid" || { cat "$out" >&2; return 1; }
    # "stress-ng: metrc: [pid] fork OPS REAL USR SYS RATE_REAL RATE_USR_SYS"
    awk '$3 ~ /^\[/ && $4 == "fork" && $5 ~ /^[0-9]/ {
        print "stress-ng real time\t" $9; print "stress-ng usr+sys time\t" $10 }' \
        "$out" >>"$RESULTS"
    grep -q "stress-ng real time" "$RESULTS" || { cat "$out" >&2; return 1; }
}

# One measured vernier run of fork with parent_mem=$1 MiB: appends its rate.
vernier_run() {
    local mem=$1 out
    if ! out=$("$VERNIER" run "fork:workers=1:duration=$SECONDS_RUN:parent_mem=$mem" \
        --db "$DB" --warmup 0 --min-runs 1 --max-runs 1 --quiet 2>&1); then
        echo "$out" >&2
        return 1
    fi
    "$VERNIER" show latest --db "$DB" --format json | python3 -c '
import json, sys
print("vernier parent_mem=%s MiB\t%s" % (sys.argv[1], json.load(sys.stdin)[0]["values"][-1]))
' "$mem" >>"$RESULTS"
}

stress_ng_run
kib_to_mib() { echo $(( ($(cat "$1" 2>/dev/null || echo 0) + 512) / 1024 )); }
SIZE=$(kib_to_mib "$WORK/vmsize")
RSS=$(kib_to_mib "$WORK/vmrss")
if [[ $SIZE == 0 ]]; then
    echo "fork-vs-stress-ng: could not read the size of stress-ng's fork worker; using 77 and 3 MiB" >&2
    SIZE=77
    RSS=3
fi
[[ $RSS == 0 ]] && RSS=1
echo "stress-ng's fork worker: VmSize $SIZE MiB, VmRSS $RSS MiB"
MEMS=(0 "$RSS" "$SIZE")
for mem in "${MEMS[@]}"; do vernier_run "$mem"; done
for ((round = 2; round <= ROUNDS; round++)); do
    for ((k = ${#MEMS[@]} - 1; k >= 0; k--)); do vernier_run "${MEMS[k]}"; done
    stress_ng_run
done

python3 - "$RESULTS" "${MEMS[@]}" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, value = line.rstrip("\n").split("\t")
    rows.setdefault(name, []).append(float(value))
med = {name: statistics.median(v) for name, v in rows.items()}
ours = [f"vernier parent_mem={m} MiB" for m in dict.fromkeys(sys.argv[2:])]
theirs = ["stress-ng real time", "stress-ng usr+sys time"]
print(f"\nfork, 1 worker, medians of {len(rows[theirs[0]])} runs (forks/s):")
for name in theirs + ours:
    print(f"  {name:<28} {med[name]:>10.0f}")
print("\nratios vernier / stress-ng:")
for v in ours:
    for s in theirs:
        print(f"  {v:<26} / {s:<24} {med[v] / med[s]:>6.2f}")
EOF
