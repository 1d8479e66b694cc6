#!/usr/bin/env bash
# Import scaling: `vernier import` of hyperfine --export-json files with 10k, 100k and 1M times
# and of vernier exports with as many runs, each into a new database, then the same file again
# (the idempotent skip, which compares the stored session with the file). Prints wall time, CPU
# time (user + system, less disturbed than wall time on a busy machine) and maximum RSS of each
# import (and of BASELINE's, side by side, interleaved), the 1-minute load average after each
# line, and the ratio of each size's CPU time to the previous size's: with the default sizes
# (steps of 10x) a linear import gives about 10, a quadratic one about 100.
#
# Three kinds of file (KINDS), generated deterministically and written as a stream (python3
# holds no list of times, so 10,000,000 runs take no more memory than 10):
#   hyperfine  hyperfine times of 17 significant digits, one result
#   vernier    a hand-made vernier export of one session of one configuration, one run per time
#   export     what `vernier export` writes of the hyperfine file imported: a real export, whose
#              runs carry every field a recorded run does; after the first import its database
#              is exported again and compared with the file byte for byte (column `same`)
#
# Environment:
#   SIZES="10000 100000 1000000"     numbers of times / runs
#   KINDS="hyperfine vernier export" kinds of file
#   VERNIER=target/release/vernier   the vernier binary
#   BASELINE=                        another vernier binary (say, an older build) to time side
#                                    by side; its column and the ratio baseline/VERNIER are
#                                    printed when set
set -euo pipefail

SIZES=${SIZES:-"10000 100000 1000000"}
KINDS=${KINDS:-"hyperfine vernier export"}
VERNIER=${VERNIER:-target/release/vernier}
BASELINE=${BASELINE:-}

for n in $SIZES; do
    if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
        echo "import-scale: SIZES must be positive integers, got '$n'" >&2
        exit 2
    fi
done
for kind in $KINDS; do
    if ! [[ $kind =~ ^(hyperfine|vernier|export)$ ]]; then
        echo "import-scale: KINDS are hyperfine, vernier and export, got '$kind'" >&2
        exit 2
    fi
done
for bin in "$VERNIER" ${BASELINE:+"$BASELINE"}; do
    if [[ ! -x $bin ]]; then
        echo "import-scale: no vernier binary at '$bin' (cargo build --release, or set" \
            "VERNIER=/path/to/vernier)" >&2
        exit 2
    fi
done
if ! command -v python3 >/dev/null; then
    echo "import-scale: python3 is needed to generate the files" >&2
    exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
    echo "import-scale: GNU time (/usr/bin/time) is needed for the maximum RSS" >&2
    exit 2
fi

WORK=$(mktemp -d)
SCRIPT=import-scale
# shellcheck source=bench/measure.sh
source "$(dirname "$0")/measure.sh"
trap 'rm -rf "$WORK"' EXIT

# gen KIND N FILE: a hyperfine file with N times, or a vernier export with N runs.
gen() {
    if [[ $1 == export ]]; then
        gen hyperfine "$2" "$3.hyperfine"
        rm -f "$WORK"/gen.db*
        "$VERNIER" --db "$WORK/gen.db" import "$3.hyperfine" >/dev/null
        "$VERNIER" --db "$WORK/gen.db" export -o "$3"
        rm -f "$WORK"/gen.db* "$3.hyperfine"
        return
    fi
    python3 - "$1" "$2" "$3" <<'EOF'
import json, sys, uuid
kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# 17 significant digits, varied, all positive (durations in seconds).
time = lambda i: 0.01 + ((i * 7919) % 100003) * 1.000000000000123e-7
out = open(path, "w", buffering=1 << 20)
if kind == "hyperfine":
    out.write('{"results": [{"command": "sleep 0.01", "mean": %r, "times": [' %
              (sum(time(i) for i in range(n)) / n))
    for i in range(n):
        out.write((", " if i else "") + repr(time(i)))
    out.write('], "exit_codes": [')
    for i in range(n):
        out.write(", 0" if i else "0")
    out.write("]}]}")
else:
    u = lambda tag, i: str(uuid.UUID(int=(tag << 96) | i, version=4))
    start = 1_700_000_000_000_000_000
    end = start + sum(int(time(i) * 1e9) + 1 for i in range(n))
    session = json.dumps({
        "id": u(1, 0), "started_at_ns": start, "ended_at_ns": end,
        "status": "completed", "suite": None, "specs": ["mock"], "tags": {"scale": str(n)},
        "note": None,
        "settings": {"warmup": 0, "target": 0.02, "min_runs": n, "max_runs": n,
                     "min_time_s": 0.0, "max_time_s": 1e9, "interleave": False, "seed": 0},
        "vernier_version": "0.1.0", "environment": {}, "fingerprint": "f"})
    configuration = json.dumps({
        "id": u(2, 0), "position": 0, "benchmark": "mock", "benchmark_version": "1",
        "options": {"values": "1"},
        "metric": {"name": "value", "unit": "s", "higher_is_better": False},
        "stop_reason": "max-runs", "converged": False, "error": None})
    # The session's and the configuration's fields before their runs, as vernier writes them.
    out.write('{"format": "vernier-export", "version": 1, "sessions": [%s, "configurations": '
              '[%s, "runs": [' % (session[:-1], configuration[:-1]))
    t = start
    for i in range(n):
        v = time(i)
        out.write((", " if i else "") + json.dumps(
            {"id": u(3, i), "index": i, "warmup": False, "round": 0,
             "preceding_executions": i, "started_at_ns": t,
             "ended_at_ns": t + int(v * 1e9), "values": {"value": v},
             "rusage": {"user_cpu_ns": 1000, "system_cpu_ns": 2000, "voluntary_cs": 1,
                        "involuntary_cs": 0, "max_rss_bytes": 4096},
             "foreign_cpu_ns": 0, "controller_cpu_ns": 10}))
        t += int(v * 1e9) + 1
    out.write("]}]}]}")
out.close()
EOF
}

ratio() {
    python3 -c "import sys; a, b = sys.argv[1], sys.argv[2]
print('-' if '-' in (a, b) or 'fail' in (a, b) or float(b) == 0 else '%.1f' % (float(a) / float(b)))" "$1" "$2"
}

header="format     size      MB   pass     wall_s    cpu_s  max_rss_MB  cpu_x_prev"
[[ -n $BASELINE ]] && header+="  base_wall_s  base_cpu_s  base_rss_MB  base/new_cpu"
header+="  same  load"
echo "$header"
for kind in $KINDS; do
    declare -A prev=()
    for n in $SIZES; do
        file=$WORK/$kind-$n.json
        gen "$kind" "$n" "$file"
        mb=$(python3 -c "import os, sys; print('%.1f' % (os.path.getsize(sys.argv[1]) / 1e6))" "$file")
        rm -f "$WORK"/new.db* "$WORK"/base.db*
        for pass in first again; do
            read -r wall cpu rss_mb < <(timed "$VERNIER" --db "$WORK/new.db" import "$file")
            scale=$([[ -n ${prev[$pass]:-} ]] && ratio "$cpu" "${prev[$pass]}" || echo -)
            line=$(printf "%-9s %8s %7s  %-6s %8s %8s %11s %11s" "$kind" "$n" "$mb" "$pass" "$wall" "$cpu" "$rss_mb" "$scale")
            if [[ -n $BASELINE ]]; then
                read -r bwall bcpu brss_mb < <(timed "$BASELINE" --db "$WORK/base.db" import "$file")
                line+=$(printf "  %11s  %10s  %11s  %12s" "$bwall" "$bcpu" "$brss_mb" "$(ratio "$bcpu" "$cpu")")
            fi
            same=-
            if [[ $kind == export && $pass == first ]]; then
                "$VERNIER" --db "$WORK/new.db" export -o "$WORK/again.json"
                same=$(cmp -s "$file" "$WORK/again.json" && echo yes || echo NO)
                rm -f "$WORK/again.json"
            fi
            line+=$(printf "  %4s  %s" "$same" "$(cut -d' ' -f1 /proc/loadavg)")
            echo "$line"
            prev[$pass]=$cpu
        done
        rm -f "$file"
    done
    unset prev
done
