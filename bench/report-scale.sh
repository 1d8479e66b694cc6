#!/usr/bin/env bash
# Scale of `vernier report`: wall time, maximum resident memory and the site's size for a
# database of 10,000 measured runs (goal: under 10 s and a site under 20 MB; docs/report.md,
# "Large databases").
#
# A vernier export (docs/export-format.md) is generated and brought in through `vernier import`
# into a fresh database: SESSIONS sessions tagged kernel=K1, K2, ..., each a hackbench-like
# sweep of CONFIGS configurations (groups=1..CONFIGS) of RUNS_PER_CONFIG measured runs, every
# run with KEYS monitor series of POINTS samples each: a context-switch counter, then keys of
# which two in five never change (a counter that stays at 0, a gauge at one value: the default
# monitors record 80 to 110 keys, 30 to 60 of them constant), the others rising counters and
# moving gauges. The defaults make 2 x 20 x 250 = 10,000 runs and 500,000 monitor points. Then
# `vernier report --by kernel --compare kernel=K1 kernel=K2` writes the site, timed by
# /usr/bin/time -v.
#
# Environment:
#   SESSIONS=2 CONFIGS=20 RUNS_PER_CONFIG=250 POINTS=50 KEYS=1
#   KERNELS=N  tag the sessions with N kernels in turn (K1, K2, ..., K1 again) [default: SESSIONS]:
#              a farm of SESSIONS=1000 KERNELS=2 is two kernels of 500 sessions each
#   VERNIER=PATH  the binary to time [default: a release build of this checkout]
#   KEEP=DIR   keep the database and the site in DIR
set -euo pipefail
cd "$(dirname "$0")/.."

SESSIONS=${SESSIONS:-2}
KERNELS=${KERNELS:-$SESSIONS}
CONFIGS=${CONFIGS:-20}
RUNS_PER_CONFIG=${RUNS_PER_CONFIG:-250}
POINTS=${POINTS:-50}
KEYS=${KEYS:-1}
for v in SESSIONS KERNELS CONFIGS RUNS_PER_CONFIG POINTS KEYS; do
    if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
        echo "report-scale: $v must be a positive integer, got '${!v}'" >&2
        exit 2
    fi
done
[[ -x /usr/bin/time ]] || { echo "report-scale: /usr/bin/time (GNU time) is needed" >&2; exit 2; }
command -v python3 >/dev/null || { echo "report-scale: python3 is needed" >&2; exit 2; }

if [[ -n ${VERNIER:-} ]]; then
    bin=$(realpath "$VERNIER")
else
    cargo build --release -q -p vernier
    bin=$PWD/target/release/vernier
fi
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$work"' EXIT
rm -rf "$work/results.db" "$work/site"

python3 - "$work/export.json" "$SESSIONS" "$CONFIGS" "$RUNS_PER_CONFIG" "$POINTS" "$KERNELS" "$KEYS" <<'PY'
import json, math, random, sys, uuid

path, sessions, configs, runs, points, kernels, keys = sys.argv[1], *map(int, sys.argv[2:])
rng = random.Random(1)
def uid():
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))

def monitor_series(dur, groups):
    """KEYS series of POINTS samples: stat.ctxt, then keys of which two in five are constant."""
    times = [i * dur // max(points - 1, 1) for i in range(points)]
    out = [("stat", "ctxt", "count", "counter",
            [float(i * 1000 * groups + rng.randrange(100)) for i in range(points)])]
    for j in range(1, keys):
        kind = j % 5
        if kind == 1:
            out.append(("vmstat", "idle%d" % j, "count", "counter", [0.0] * points))
        elif kind == 2:
            out.append(("meminfo", "fixed%d" % j, "bytes", "gauge", [float(j << 20)] * points))
        elif kind == 4:
            out.append(("meminfo", "moving%d" % j, "bytes", "gauge",
                        [float((j << 20) + rng.randrange(1 << 16)) for _ in range(points)]))
        else:
            out.append(("vmstat", "rising%d" % j, "count", "counter",
                        [float(i * j * groups + rng.randrange(10)) for i in range(points)]))
    series, summary = [], {}
    for monitor, metric, unit, kind, values in out:
        series.append({"monitor": monitor, "metric": metric, "unit": unit, "kind": kind,
                       "points": [{"t_ns": t, "value": v} for t, v in zip(times, values)]})
        summary["%s.%s" % (monitor, metric)] = (values[-1] - values[0] if kind == "counter"
                                                else sum(values) / len(values))
    return series, summary

# Written a session at a time: a farm's export does not fit in memory as one object.
f = open(path, "w")
f.write('{"format": "vernier-export", "version": 1, "sessions": [')
t0 = 1_700_000_000_000_000_000
for s in range(sessions):
    start = t0 + s * 86_400_000_000_000
    t = start
    session = {
        "id": uid(), "started_at_ns": start, "status": "completed", "suite": None,
        "specs": ["hackbench:groups=1-%d" % configs],
        "tags": {"kernel": "K%d" % (s % kernels + 1)}, "note": None,
        "settings": {"warmup": 0, "target": 0.02, "min_runs": 6, "max_runs": runs,
                     "min_time_s": 0.0, "max_time_s": 600.0, "interleave": False, "seed": 1},
        "vernier_version": "0.1.0",
        "environment": {"online_cpus": 2, "kernel_release": "6.%d.0" % (10 + s % kernels)},
        "fingerprint": "scale%d" % (s % kernels), "configurations": [],
    }
    for c in range(configs):
        groups = c + 1
        centre = 0.05 * groups * (1 + 0.03 * (s % kernels))
        config = {
            "id": uid(), "position": c, "benchmark": "hackbench", "benchmark_version": "1",
            "options": {"groups": groups, "loops": 1000},
            "metric": {"name": "time", "unit": "s", "higher_is_better": False},
            "stop_reason": "max-runs", "converged": False, "error": None, "runs": [],
        }
        for r in range(runs):
            value = centre * math.exp(rng.gauss(0, 0.02))
            dur = int(value * 1e9)
            series, summary = monitor_series(dur, groups)
            config["runs"].append({
                "id": uid(), "index": r, "warmup": False, "round": r, "preceding_executions": r,
                "started_at_ns": t, "ended_at_ns": t + dur, "values": {"time": value},
                "rusage": {"user_cpu_ns": dur, "system_cpu_ns": dur // 2, "voluntary_cs": 10,
                           "involuntary_cs": 1, "max_rss_bytes": 4_000_000},
                "foreign_cpu_ns": 0, "controller_cpu_ns": 1_000_000,
                "monitors": {"series": series, "summary": summary,
                             "unsupported": {}, "failures": [], "sampler_priority": "normal",
                             "sampler_cpu_ns": 0, "rounds": points},
            })
            t += dur + 10_000_000
        session["configurations"].append(config)
    session["ended_at_ns"] = t
    f.write(("," if s else "") + json.dumps(session, separators=(",", ":")))
f.write("]}")
f.close()
PY

runs_total=$((SESSIONS * CONFIGS * RUNS_PER_CONFIG))
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
import_s=$( { /usr/bin/time -f %e "$bin" --db "$work/results.db" import "$work/export.json" >/dev/null; } 2>&1 )
timing=$(mktemp)
/usr/bin/time -v -o "$timing" "$bin" --db "$work/results.db" report --by kernel \
    --compare kernel=K1 "kernel=K$KERNELS" -o "$work/site" >/dev/null
field() { sed -n "s/^[[:space:]]*$1: //p" "$timing"; }
wall=$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
cpu=$(awk -v u="$(field 'User time (seconds)')" -v s="$(field 'System time (seconds)')" \
    'BEGIN { printf "%.2f", u + s }')
rss=$(awk -v k="$(field 'Maximum resident set size (kbytes)')" 'BEGIN { printf "%.1f", k / 1024 }')
rm -f "$timing"
site_mb=$(du -sk "$work/site" | awk '{ printf "%.1f", $1 / 1024 }')
files=$(find "$work/site" -type f | wc -l)
largest=$(find "$work/site" -type f -printf '%s %P\n' | sort -n | tail -1 |
    awk '{ printf "%s (%.1f MB)", $2, $1 / 1e6 }')
printf 'runs %d (%d sessions of %d kernels x %d configurations x %d runs, %d monitor keys of %d points each)\n' \
    "$runs_total" "$SESSIONS" "$KERNELS" "$CONFIGS" "$RUNS_PER_CONFIG" "$KEYS" "$POINTS"
printf 'load average before: %s\n' "$load_before"
printf 'import %s s\n' "$import_s"
printf 'report: wall %s s, cpu %s s, max RSS %s MB; site %s MB in %d files, largest %s\n' \
    "$wall" "$cpu" "$rss" "$site_mb" "$files" "$largest"
# Where the bytes are: per top-level directory of the site (sessions/, monitors/, bench/...).
for dir in "$work/site"/*/; do
    printf '  %s: %s MB in %d files\n' "$(basename "$dir")" \
        "$(du -sk "$dir" | awk '{ printf "%.1f", $1 / 1024 }')" "$(find "$dir" -type f | wc -l)"
done
