#!/usr/bin/env bash
# Scale of `vernier compare`: wall time and maximum resident memory of the comparison of two
# synthetic sessions of one configuration, for several sizes (runs per side). Drives
# vernier_analysis::compare, the function `vernier compare` runs on the loaded sessions,
# through `cargo run --release -p vernier-analysis --example compare_scale`.
#
# For each size it prints the time that compare() itself took (measured in the example), the
# process's wall time, CPU time (user + system: on a shared machine the wall time also counts
# waiting for a CPU) and maximum RSS (/usr/bin/time -v), and the maximum RSS of a run that only
# builds the input sessions, so the memory of the comparison is the difference. Goal (issue
# "Honest statistics"): 100,000 vs 100,000 under 1 s and under 100 MB.
#
# Values are lognormal times around 1 ms (sigma 2%), NEW 1% slower, untied unless a size names a
# timer resolution in ns (then rounded to it, so large samples have ties).
#
# Environment:
#   SIZES="10000:10000 20000:20000 100000:100000 100000:100000:1 8:100000"
#                                 BASE:NEW[:RESOLUTION_NS] runs per side
#   TIMEOUT=120                                               seconds allowed per size
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"10000:10000 20000:20000 100000:100000 100000:100000:1 8:100000"}
TIMEOUT=${TIMEOUT:-120}
if ! [[ $TIMEOUT =~ ^[1-9][0-9]*$ ]]; then
    echo "compare-scale: TIMEOUT must be a positive integer, got '$TIMEOUT'" >&2
    exit 2
fi
for size in $SIZES; do
    if ! [[ $size =~ ^[1-9][0-9]*:[1-9][0-9]*(:[0-9]+)?$ ]]; then
        echo "compare-scale: a size is BASE:NEW[:RESOLUTION_NS] (positive integers), got '$size'" >&2
        exit 2
    fi
done
[[ -x /usr/bin/time ]] || { echo "compare-scale: /usr/bin/time (GNU time) is needed" >&2; exit 2; }

cargo build --release -q -p vernier-analysis --example compare_scale
bin=target/release/examples/compare_scale
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# field NAME FILE: the value of a /usr/bin/time -v line.
field() { sed -n "s/^[[:space:]]*$1: //p" "$2"; }
# seconds of an elapsed time h:mm:ss or m:ss.ss
seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'; }
# MB of a number of kB
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

printf '%-16s %10s %8s %8s %11s %9s %11s  %s\n' size compare_s wall_s cpu_s max_rss_MB \
    input_MB compare_MB result
for size in $SIZES; do
    IFS=: read -r m n res <<<"$size"
    res=${res:-0}
    /usr/bin/time -v -o "$out" "$bin" "$m" "$n" "$res" --input-only >/dev/null
    input_kb=$(field 'Maximum resident set size (kbytes)' "$out")
    status=0
    result=$(/usr/bin/time -v -o "$out" timeout "$TIMEOUT" "$bin" "$m" "$n" "$res") || status=$?
    if [[ $status != 0 ]]; then
        printf '%-16s %10s %8s %8s %11s %9s %11s  %s\n' "$size" - - - - "$(mb "$input_kb")" - \
            "failed (exit $status; timeout ${TIMEOUT}s or out of memory)"
        continue
    fi
    rss_kb=$(field 'Maximum resident set size (kbytes)' "$out")
    wall=$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$out" | seconds)
    cpu=$(awk -v u="$(field 'User time (seconds)' "$out")" -v s="$(field 'System time (seconds)' "$out")" \
        'BEGIN { printf "%.2f", u + s }')
    compare_s=$(sed -n 's/^compare [0-9]* vs [0-9]*: \([0-9.]*\) s.*/\1/p' <<<"$result")
    printf '%-16s %10s %8s %8s %11s %9s %11s  %s\n' "$size" "$compare_s" "$wall" "$cpu" \
        "$(mb "$rss_kb")" "$(mb "$input_kb")" "$(mb "$((rss_kb - input_kb))")" "${result#*s, }"
done
