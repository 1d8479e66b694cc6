#!/bin/sh
# What profiled runs cost (docs/profiles.md): the overhead, a profiled run's time over the
# median time of the configuration's timed runs, and the bytes each profiled run takes in the
# database (the compressed folded stacks, `profiles.stacks`), for hackbench and for a
# compile-like command (make -j2 of generated C files). Needs perf (linux-perf) and root or
# kernel.perf_event_paranoid <= 1 (2: user space only). Prints the load average before and
# after: a busy machine makes both times longer, not their ratio.
#
# Usage: bench/profile-cost.sh [PROFILED RUNS per configuration, default 5]
#   VERNIER=path/to/vernier (default: target/release/vernier, built if absent)
#   BENCHMARKS="hackbench compile" (the default; either alone)
set -eu
cd "$(dirname "$0")/.."
runs="${1:-5}"
vernier="${VERNIER:-target/release/vernier}"
if [ ! -x "$vernier" ]; then
    cargo build --release -q -p vernier
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/profile.db"
benchmarks="${BENCHMARKS:-hackbench compile}"
# A compile-like command: 8 C files of 80 functions each, built by make -j2.
src="$work/src"
mkdir -p "$src"
i=0
while [ $i -lt 8 ]; do
    awk -v n=$i 'BEGIN { for (f = 0; f < 80; f++)
        printf "int f%d_%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d; return s; }\n", n, f, f }' \
        > "$src/f$i.c"
    i=$((i + 1))
done
printf 'OBJS := $(patsubst %%.c,%%.o,$(wildcard *.c))\nall: $(OBJS)\n%%.o: %%.c\n\tcc -O2 -c $< -o $@\n' \
    > "$src/Makefile"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
case " $benchmarks " in *" hackbench "*)
    "$vernier" --db "$db" run hackbench:groups=4 --warmup 1 --min-runs 10 --max-runs 10 \
        --profile="$runs" --tag what=hackbench --quiet ;;
esac
case " $benchmarks " in *" compile "*)
    "$vernier" --db "$db" run "command:cmd=make -s -B -j2 -C $src" --warmup 1 --min-runs 10 \
        --max-runs 10 --profile="$runs" --tag what=compile --quiet ;;
esac
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
sqlite3 -header -column "$db" "
WITH timed AS (
    SELECT c.key, c.benchmark, r.ended_at_ns - r.started_at_ns AS ns,
           row_number() OVER (PARTITION BY c.key ORDER BY r.ended_at_ns - r.started_at_ns) AS k,
           count(*) OVER (PARTITION BY c.key) AS n
    FROM configurations c JOIN runs r ON r.configuration_key = c.key WHERE r.warmup = 0),
median AS (SELECT key, benchmark, avg(ns) AS ns FROM timed
           WHERE k IN ((n + 1) / 2, (n + 2) / 2) GROUP BY key)
SELECT m.benchmark, count(*) AS profiled_runs, p.event,
       printf('%.3f', m.ns / 1e9) AS timed_median_s,
       printf('%.3f', avg(p.ended_at_ns - p.started_at_ns) / 1e9) AS profiled_mean_s,
       printf('%.2f', avg(p.ended_at_ns - p.started_at_ns) / m.ns) AS overhead,
       printf('%.2f', min(p.ended_at_ns - p.started_at_ns) / m.ns) AS overhead_min,
       printf('%.2f', max(p.ended_at_ns - p.started_at_ns) / m.ns) AS overhead_max,
       CAST(avg(length(p.stacks)) AS INTEGER) AS bytes_per_profiled_run,
       max(length(p.stacks)) AS bytes_max
FROM median m JOIN profiles p ON p.configuration_key = m.key GROUP BY m.key;"
