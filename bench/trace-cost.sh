#!/bin/sh
# What tracing a latency measurement costs (`latency:trace=US`, docs/why.md "Traces"): the
# latency distribution and the CPU time of runs with the session's ftrace instance recording
# (sched, irq, softirq, hrtimer and local-timer events on the measured CPU) against runs
# without, interleaved in one session (`--interleave`: the two configurations alternate in
# randomized rounds, so drift and other load fall on both). The traced configuration's
# threshold is the largest (1 s), which no sample reaches: its instance records for the whole
# run, the worst case of the cost (a run whose sample crosses the threshold stops recording
# there). Per configuration: the medians over runs of p50, p99 and max, and of the run
# process's CPU time (user + system, getrusage) per second; their ratios traced / untraced;
# the load average before and after. Root (tracefs, SCHED_FIFO).
#
# Usage: bench/trace-cost.sh [RUNS per configuration, default 10] [SECONDS per run, default 5]
#        [CPU, default the last online]
# VERNIER: the binary (default: target/release/vernier, built if absent).
set -eu
cd "$(dirname "$0")/.."
runs="${1:-10}"
seconds="${2:-5}"
cpu="${3:-$(($(nproc) - 1))}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
vernier="${VERNIER:-$CARGO_TARGET_DIR/release/vernier}"
if [ ! -x "$vernier" ]; then
    cargo build --release -q -p vernier
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
base="latency:cpus=$cpu:duration=$seconds"
"$vernier" --db "$dir/cost.db" run "$base" "$base:trace=1000000" --interleave \
    --warmup 1 --min-runs "$runs" --max-runs "$runs" --max-time 24h >/dev/null
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$vernier" --db "$dir/cost.db" export --format csv >"$dir/runs.csv"
# A configuration that stopped short says why (a failed run, a timeout).
"$vernier" --db "$dir/cost.db" show --format json >"$dir/show.json"
python3 - "$dir/show.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1])):
    trace = c["options"].get("trace", "off")
    error = f" ({c['error']})" if c["error"] else ""
    print(f"trace={trace}: {c['n']} measured runs, stopped: {c['stop_reason']}{error}")
PY
python3 - "$dir/runs.csv" "$seconds" <<'PY'
import csv, statistics, sys
path, seconds = sys.argv[1], float(sys.argv[2])
by = {}
for row in csv.DictReader(open(path)):
    if row["warmup"] == "true":
        continue
    traced = "trace=" in row["options"]
    values = dict(kv.split("=") for kv in row["other_values"].split(";"))
    values["p99"] = row["value"]
    cpu = (int(row["user_cpu_ns"]) + int(row["system_cpu_ns"])) / 1e9 / seconds
    r = by.setdefault(traced, {"p50": [], "p99": [], "max": [], "cpu": []})
    for k in ("p50", "p99", "max"):
        r[k].append(float(values[k]))
    r["cpu"].append(cpu * 100)
med = {t: {k: statistics.median(v) for k, v in r.items()} for t, r in by.items()}
n = {t: len(r["p50"]) for t, r in by.items()}
print(f"{'':12}{'untraced':>12}{'traced':>12}{'ratio':>8}   (medians over {n[False]} and {n[True]} runs)")
for k, unit in (("p50", "us"), ("p99", "us"), ("max", "us"), ("cpu", "% CPU")):
    u, t = med[False][k], med[True][k]
    print(f"{k + ' (' + unit + ')':12}{u:12.2f}{t:12.2f}{t / u:8.3f}")
PY
