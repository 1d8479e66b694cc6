#!/usr/bin/env bash
# Memory of `vernier export` and `vernier import` on a large export: both stream one session at
# a time, so their maximum RSS should stay near the size of one session whatever the file's
# size, also when the export comes through a pipe (`import -`). Records one short session with
# the default monitors, copies it SESSIONS times with RUNS measured runs per configuration
# (python3, fresh ids), imports the file into a new database, once from the file and once
# through a pipe, exports it back, and prints the file's size and the wall time and maximum RSS
# of each command. Export reads a configuration's runs page by page: with SESSIONS=1 and a large
# RUNS its maximum RSS stays near that of a small session, while import holds the session.
#
# Environment:
#   SESSIONS=40                      copies of the recorded session
#   RUNS=200                         measured runs per configuration of each copy
#   VERNIER=target/release/vernier   the vernier binary
set -euo pipefail

SESSIONS=${SESSIONS:-40}
RUNS=${RUNS:-200}
VERNIER=${VERNIER:-target/release/vernier}

if [[ ! -x $VERNIER ]]; then
    echo "export-memory: no vernier binary at '$VERNIER' (cargo build --release, or set" \
        "VERNIER=/path/to/vernier)" >&2
    exit 2
fi
for tool in python3 /usr/bin/time; do
    if ! command -v "$tool" >/dev/null; then
        echo "export-memory: $tool is needed" >&2
        exit 2
    fi
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

"$VERNIER" --db "$WORK/template.db" run fork:workers=1:duration=0.2 pipe --max-runs 12 \
    --quiet >/dev/null
"$VERNIER" --db "$WORK/template.db" export -o "$WORK/template.json"

python3 - "$WORK/template.json" "$WORK/big.json" "$SESSIONS" "$RUNS" <<'PY'
import copy, json, sys, uuid
src, out, n, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
template = json.load(open(src))["sessions"][0]
with open(out, "w") as f:
    f.write('{"format": "vernier-export", "version": 1, "sessions": [\n')
    for i in range(n):
        s = copy.deepcopy(template)
        s["id"] = str(uuid.uuid4())
        s["tags"] = {"copy": str(i)}
        for c in s["configurations"]:
            c["id"] = str(uuid.uuid4())
            measured = [r for r in c["runs"] if not r["warmup"]]
            c["runs"] = []
            for j in range(runs):
                r = copy.deepcopy(measured[j % len(measured)])
                r["id"], r["index"] = str(uuid.uuid4()), j
                c["runs"].append(r)
        f.write((",\n" if i else "") + json.dumps(s))
    f.write("\n]}\n")
PY

# timed NAME COMMAND...: prints NAME, wall time and maximum RSS of the command.
timed() {
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" >/dev/null
    read -r wall rss <"$WORK/time"
    printf "%-9s %8s s %8s MB\n" "$name" "$wall" "$(python3 -c "print('%.0f' % ($rss / 1024))")"
}

echo "file: $(python3 -c "import os; print('%.0f' % (os.path.getsize('$WORK/big.json') / 1e6))") MB," \
    "$SESSIONS sessions of $((2 * RUNS)) runs"
timed import "$VERNIER" --db "$WORK/big.db" import "$WORK/big.json"
# From a pipe, read once: the second pass reads the copy the first kept in $TMPDIR.
timed "import -" sh -c 'cat "$1" | "$2" --db "$3" import -' sh "$WORK/big.json" "$VERNIER" \
    "$WORK/pipe.db"
timed export "$VERNIER" --db "$WORK/big.db" export -o "$WORK/export.json"
echo "exported: $(python3 -c "import os; print('%.0f' % (os.path.getsize('$WORK/export.json') / 1e6))") MB"
