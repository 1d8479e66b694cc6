#!/usr/bin/env bash
# Scale of a database with monitor data: bytes per run and the time of the read commands at
# 10,000 runs per session with the default monitors (issue "One source of truth", item 4;
# goal: `show` and `compare` under 0.3 s, under 8 KB per run, `sessions` cheap).
#
# The monitor data is real: a short `vernier run mock` samples the default monitors of this
# machine; its runs' monitor records (series, summaries, unsupported monitors) are then copied,
# with new ids, times and lognormal values (python3, seeded), into an export document of two
# sessions of RUNS measured runs each (tags scale=a and scale=b, one mock configuration) and
# SMALL sessions of 2 runs each (so `sessions` has something to list), which is imported into a
# new database.
#
# Prints: the database's bytes per run (pages in use, after a checkpoint, divided by all runs),
# the time (best of REPEAT, wall clock) of `show` of one large session, `compare` of the two,
# `sessions`, CSV export of the two, and wall time and maximum RSS (/usr/bin/time -v) of the
# import of the document and of a JSON export of the whole database.
#
# Environment:
#   RUNS=10000                       measured runs of each of the two large sessions
#   SMALL=1000                       further sessions of 2 runs each
#   SAMPLE=20                        runs of the real mock session whose monitor data is copied
#   REPEAT=3                         timings of each read command; the best is printed
#   VERNIER=target/release/vernier   the vernier binary
#   KEEP=                            a directory to keep the database and the documents in
set -euo pipefail

RUNS=${RUNS:-10000}
SMALL=${SMALL:-1000}
SAMPLE=${SAMPLE:-20}
REPEAT=${REPEAT:-3}
VERNIER=${VERNIER:-target/release/vernier}
KEEP=${KEEP:-}

for v in RUNS SAMPLE REPEAT; do
    if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
        echo "scale: $v must be a positive integer, got '${!v}'" >&2
        exit 2
    fi
done
if ! [[ $SMALL =~ ^[0-9]+$ ]]; then
    echo "scale: SMALL must be a non-negative integer, got '$SMALL'" >&2
    exit 2
fi
if [[ ! -x $VERNIER ]]; then
    echo "scale: no vernier binary at '$VERNIER' (cargo build --release, or set" \
        "VERNIER=/path/to/vernier)" >&2
    exit 2
fi
command -v python3 >/dev/null || { echo "scale: python3 is needed" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "scale: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

if [[ -n $KEEP ]]; then
    mkdir -p "$KEEP"
    WORK=$KEEP
else
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
DB=$WORK/scale.db
rm -f "$DB" "$DB-wal" "$DB-shm" "$WORK/sample.db"*

# The real monitor data: default monitors, no warmup, SAMPLE measured runs.
"$VERNIER" run --db "$WORK/sample.db" --warmup 0 --min-runs "$SAMPLE" --max-runs "$SAMPLE" \
    mock >/dev/null
"$VERNIER" export --db "$WORK/sample.db" -o "$WORK/sample.json"

python3 - "$WORK/sample.json" "$WORK/scale.json" "$RUNS" "$SMALL" <<'EOF'
import copy, json, random, sys, uuid
sample_path, out_path, runs, small = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sample = json.load(open(sample_path))
template = sample["sessions"][0]
monitored = [r for c in template["configurations"] for r in c["runs"] if r.get("monitors")]
if not monitored:
    sys.exit("scale: the sample session recorded no monitor data")
rng = random.Random(1)
u = lambda tag, i: str(uuid.UUID(int=(tag << 96) | i, version=4))

def session(n, tag, index, name):
    s = copy.deepcopy(template)
    s["id"] = u(tag, index)
    s["tags"] = {"scale": name}
    t0 = 1_700_000_000_000_000_000 + index * 10**12 + tag * 10**15
    s["started_at_ns"] = t0
    config = s["configurations"][0]
    s["configurations"] = [config]
    config["id"] = u(tag + 1, index)
    out, t = [], t0
    for i in range(n):
        source = monitored[i % len(monitored)]
        r = copy.deepcopy(source)
        value = rng.lognormvariate(0.0, 0.02) * (1.01 if name == "b" else 1.0)
        duration = int(value * 1e6)
        r.update({"id": u(tag + 2, index * 10**6 + i), "index": i, "warmup": False,
                  "round": 0, "preceding_executions": i, "started_at_ns": t,
                  "ended_at_ns": t + duration})
        r["values"] = {k: value for k in r["values"]}
        out.append(r)
        t += duration + 1000
    config["runs"] = out
    s["ended_at_ns"] = t
    return s

sessions = [session(runs, 1, 0, "a"), session(runs, 1, 1, "b")]
sessions += [session(2, 5, i, "small") for i in range(small)]
doc = {"format": sample["format"], "version": sample["version"], "sessions": sessions}
if "kernel_configs" in sample:
    doc["kernel_configs"] = sample["kernel_configs"]
json.dump(doc, open(out_path, "w"))
print(f"{2 * runs + 2 * small} runs in {len(sessions)} sessions, "
      f"{len(monitored[0]['monitors']['series'])} monitor series per run", file=sys.stderr)
EOF

tm=$WORK/time.txt
# field NAME: the value of a /usr/bin/time -v line.
field() { sed -n "s/^[[:space:]]*$1: //p" "$tm"; }
seconds() { field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' \
    | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'; }
rss_mb() { awk -v k="$(field 'Maximum resident set size (kbytes)')" 'BEGIN { printf "%.0f", k / 1024 }'; }
# best LABEL COMMAND...: the shortest wall time of REPEAT runs, to 1 ms.
best() {
    local label=$1
    shift
    python3 - "$REPEAT" "$@" <<'EOF' | { read -r t; printf '%-28s %8s s\n' "$label" "$t"; }
import subprocess, sys, time
repeat, cmd = int(sys.argv[1]), sys.argv[2:]
times = []
for _ in range(repeat):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    times.append(time.perf_counter() - start)
print(f"{min(times):.3f}")
EOF
}

/usr/bin/time -v -o "$tm" "$VERNIER" import --db "$DB" "$WORK/scale.json" >/dev/null
import_line=$(printf '%-28s %8s s  max RSS %s MB (document %s MB)' "import" "$(seconds)" \
    "$(rss_mb)" "$(du -m "$WORK/scale.json" | cut -f1)")

python3 - "$DB" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
pages = c.execute("PRAGMA page_count").fetchone()[0] - c.execute("PRAGMA freelist_count").fetchone()[0]
size = c.execute("PRAGMA page_size").fetchone()[0]
runs = c.execute("SELECT count(*) FROM runs").fetchone()[0]
version = c.execute("PRAGMA user_version").fetchone()[0]
print(f"schema version {version}: {runs} runs, {pages * size / 2**20:.1f} MB, "
      f"{pages * size / runs:.0f} bytes per run")
EOF
echo "$import_line"
A=$(python3 -c 'import uuid; print(uuid.UUID(int=(1 << 96) | 0, version=4))')
B=$(python3 -c 'import uuid; print(uuid.UUID(int=(1 << 96) | 1, version=4))')
best "show (1 session, $RUNS runs)" "$VERNIER" show --db "$DB" "$A"
best "compare ($RUNS vs $RUNS runs)" "$VERNIER" compare --db "$DB" "$A" "$B"
best "sessions ($((SMALL + 2)) sessions)" "$VERNIER" sessions --db "$DB"
best "export csv ($RUNS runs)" "$VERNIER" export --db "$DB" --format csv scale=a
/usr/bin/time -v -o "$tm" "$VERNIER" export --db "$DB" -o "$WORK/export.json"
printf '%-28s %8s s  max RSS %s MB (document %s MB)\n' "export json (all)" "$(seconds)" \
    "$(rss_mb)" "$(du -m "$WORK/export.json" | cut -f1)"
