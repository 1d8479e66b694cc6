#!/usr/bin/env bash
# Whether a harness's own CPU work moves the time of a short command it spawns, apart from any
# code of vernier: the example `spawner_placement` (crates/engine/examples) spawns and waits for
# `true` in two shapes, alone (one process does WORK_US of work per run and spawns: hyperfine's
# shape at 0) and served (a controller does WORK_US of work per run and asks a second process to
# spawn: the shape of vernier's served `command` runs), and `hyperfine -N true` runs beside them
# as the reference. The shapes alternate
# for ROUNDS rounds of RUNS spawns each; the script prints each shape's median of the rounds'
# medians and its median ratio, round by round, to `alone 0`.
#
# On a 2-vCPU KVM guest (kernel 6.18) `command-fidelity.sh` found vernier's `true` (shell=none)
# 1.12x hyperfine's unpinned and 1.04x pinned to one CPU, and `perf sched` showed vernier's
# measured child moved to the other CPU at its exec (sched_exec) in 115 of 200 runs against
# hyperfine's 25. This script tells whether the shape alone does that. With PLACEMENT=1 (root,
# perf) it also counts, per shape, the spawned processes that exec'd on another CPU than the one
# they were forked on (tracepoints sched_process_fork and sched_process_exec). PIN=CPU runs
# every shape on that one CPU (taskset), where no placement can differ.
#
# Environment:
#   ROUNDS=10     rounds
#   RUNS=300      spawns per shape and round
#   WORKS="0 130 800"   the work per run of the spawner (alone) or its controller (served), us
#   PIN=          a CPU to run everything on (default: unpinned)
#   PLACEMENT=    1: count the execs on another CPU than the fork's (needs perf and root)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-10}
RUNS=${RUNS:-300}
WORKS=${WORKS:-0 130 800}
PIN=${PIN:-}
PLACEMENT=${PLACEMENT:-}

for var in ROUNDS RUNS; do
    if ! [[ ${!var} =~ ^[1-9][0-9]*$ ]]; then
        echo "spawner-placement: $var must be a positive integer, got '${!var}'" >&2
        exit 2
    fi
done
for w in $WORKS; do
    if ! [[ $w =~ ^[0-9]+$ ]]; then
        echo "spawner-placement: WORKS must be whole microseconds, got '$w'" >&2
        exit 2
    fi
done
if [[ -n $PIN && ! $PIN =~ ^[0-9]+$ ]]; then
    echo "spawner-placement: PIN must be one CPU number, got '$PIN'" >&2
    exit 2
fi
for tool in hyperfine python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "spawner-placement: $tool is needed (apt-get install $tool)" >&2
        exit 2
    fi
done
if [[ -n $PLACEMENT ]] && ! command -v perf >/dev/null; then
    echo "spawner-placement: PLACEMENT=1 needs perf (apt-get install linux-perf)" >&2
    exit 2
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p vernier-engine --example spawner_placement
MODEL=$CARGO_TARGET_DIR/release/examples/spawner_placement
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
RESULTS=$WORK/results.tsv
: >"$RESULTS"
ON=()
[[ -n $PIN ]] && ON=(taskset -c "$PIN")

# Runs "$@" and echoes the median it printed; with PLACEMENT, under perf, and appends how many
# of its execs of `true` were on another CPU than their fork to $WORK/placement.tsv.
measure() {
    local shape=$1
    shift
    if [[ -z $PLACEMENT ]]; then
        "${ON[@]}" "$@"
        return
    fi
    local out=$WORK/out data=$WORK/perf.data
    perf record -q -a -o "$data" -e sched:sched_process_fork -e sched:sched_process_exec \
        -- "${ON[@]}" "$@" >"$out" 2>/dev/null
    perf script -i "$data" -F pid,cpu,event,trace 2>/dev/null | python3 -c '
import re, sys
forked, moved, execs = {}, 0, 0
for line in sys.stdin:
    m = re.match(r"\s*(\d+)\s+\[(\d+)\]\s+(\S+):\s*(.*)", line)
    if not m:
        continue
    pid, cpu, event, trace = m.groups()
    if event.endswith("sched_process_fork"):
        forked[re.search(r"child_pid=(\d+)", trace).group(1)] = cpu
    elif event.endswith("sched_process_exec") and trace.startswith("filename=") and "/true " in trace:
        execs += 1
        moved += forked.get(pid) != cpu
print(f"{sys.argv[1]}\t{moved}\t{execs}")
' "$shape" >>"$WORK/placement.tsv"
    cat "$out"
}

SHAPES=("alone 0")
for w in $WORKS; do
    [[ $w != 0 ]] && SHAPES+=("alone $w")
    SHAPES+=("served $w")
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$ROUNDS"); do
    json=$WORK/hyperfine.json
    "${ON[@]}" hyperfine -N --warmup 10 --runs "$RUNS" --style none --export-json "$json" true \
        >/dev/null 2>&1
    hf=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["results"][0]["median"] * 1e9))' "$json")
    printf '%s\thyperfine -N\t%s\n' "$round" "$hf" >>"$RESULTS"
    for shape in "${SHAPES[@]}"; do
        # shellcheck disable=SC2086 # the shape is two words: mode and work
        ns=$(measure "$shape" "$MODEL" ${shape%% *} "$RUNS" ${shape##* })
        printf '%s\t%s\t%s\n' "$round" "$shape" "$ns" >>"$RESULTS"
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$RESULTS" "$WORK/placement.tsv" "$RUNS" "${PIN:-unpinned}" <<'EOF'
import os, statistics, sys
from collections import defaultdict
results, placement, runs, pin = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
by_round = defaultdict(dict)
for line in open(results):
    r, shape, ns = line.rstrip("\n").split("\t")
    by_round[r][shape] = int(ns)
moved = defaultdict(lambda: [0, 0])
if os.path.exists(placement):
    for line in open(placement):
        shape, m, n = line.rstrip("\n").split("\t")
        moved[shape][0] += int(m)
        moved[shape][1] += int(n)
shapes = list(next(iter(by_round.values())).keys())
print(f"spawn and wait of true, {len(by_round)} rounds of {runs} spawns per shape ({pin}):")
print(f"{'shape':<16}{'median us':>10}{'ratio to alone 0':>18}{'moved at exec':>16}")
for shape in shapes:
    medians = [row[shape] for row in by_round.values()]
    ratios = [row[shape] / row["alone 0"] for row in by_round.values()]
    m = moved.get(shape)
    where = f"{m[0]}/{m[1]}" if m else "-"
    print(f"{shape:<16}{statistics.median(medians) / 1000:>10.1f}"
          f"{statistics.median(ratios):>18.3f}{where:>16}")
EOF
