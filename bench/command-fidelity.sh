#!/usr/bin/env bash
# Fidelity check of the `command` benchmark: times the same commands with hyperfine and with
# vernier, on this machine, and prints the median of each and the ratio vernier/hyperfine.
# A faithful reimplementation of hyperfine's measurement gives ratios within 0.95-1.05.
#
#   sleep 0.05       through sh (both subtract the shell's start-up) and without a shell
#                    (hyperfine -N, vernier shell=none)
#   find             `find /usr/share/doc -name '*.gz'` through sh, a short I/O-bound command
#   true             through sh and without a shell
#
# `true` through a shell takes no longer than the shell's start-up, which both tools subtract:
# what is left is the noise of two start-ups, near zero and of either sign (hyperfine clamps it
# at 0, vernier at 1 ns), so a ratio of two such medians means nothing. For that pair the
# script prints both medians and their difference in milliseconds instead of a ratio; the
# check there is that both are near zero, that is within a fraction of the shell's start-up.
#
# The two sides alternate (hyperfine, vernier, hyperfine, ...) for ROUNDS rounds of RUNS
# measured runs each (after one warmup each), so that drift and background load hit both
# alike; the medians are over all measured runs of a side. This script installs nothing
# (apt-get install hyperfine).
#
# Where the command runs matters on a machine whose cross-CPU wake-ups are slow (a KVM guest:
# ~60 us against ~3 us on one CPU): a short command's child, its exit and the wait of its
# parent on two CPUs cost two such wake-ups. PIN=CPU runs both sides on that one CPU (hyperfine
# under taskset, vernier with --setup pin:cpus=CPU) so that both time the same placement.
#
# Environment:
#   PIN=                              a CPU to run both sides on (default: unpinned)
#   ROUNDS=5                          rounds per pair
#   RUNS=10                           measured runs per round and side
#   VERNIER=target/release/vernier    the vernier binary
set -euo pipefail

ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-10}
VERNIER=${VERNIER:-target/release/vernier}
PIN=${PIN:-}

if [[ -n $PIN && ! $PIN =~ ^[0-9]+$ ]]; then
    echo "command-fidelity: PIN must be one CPU number, got '$PIN'" >&2
    exit 2
fi
HYPERFINE=(hyperfine)
VERNIER_PIN=()
if [[ -n $PIN ]]; then
    HYPERFINE=(taskset -c "$PIN" hyperfine)
    VERNIER_PIN=(--setup "pin:cpus=$PIN")
fi

for var in ROUNDS RUNS; do
    if ! [[ ${!var} =~ ^[1-9][0-9]*$ ]]; then
        echo "command-fidelity: $var must be a positive integer, got '${!var}'" >&2
        exit 2
    fi
done
for tool in hyperfine python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "command-fidelity: $tool is needed (apt-get install $tool)" >&2
        exit 2
    fi
done
if [[ ! -x $VERNIER ]]; then
    echo "command-fidelity: no vernier binary at '$VERNIER' (build it with cargo build" >&2
    echo "--release, or set VERNIER=/path/to/vernier)" >&2
    exit 2
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DB=$WORK/fidelity.db
RESULTS=$WORK/results.tsv
: >"$RESULTS"

# The pairs: name | near zero (1: compare by difference) | hyperfine arguments | vernier spec.
PAIRS=(
    "sleep 0.05 (sh)|0|sleep 0.05|command:cmd=sleep 0.05"
    "sleep 0.05 (none)|0|-N sleep 0.05|command:cmd=sleep 0.05:shell=none"
    "find *.gz (sh)|0|find /usr/share/doc -name '*.gz'|command:cmd=find /usr/share/doc -name '*.gz'"
    "true (none)|0|-N true|command:cmd=true:shell=none"
    "true (sh)|1|true|command:cmd=true"
)

# One round of hyperfine; appends the time of every measured run.
hyperfine_round() {
    local name=$1 args=$2 json=$WORK/hyperfine.json flags=() cmd=$args
    if [[ $args == "-N "* ]]; then
        flags=(-N)
        cmd=${args#-N }
    fi
    if ! "${HYPERFINE[@]}" "${flags[@]}" --warmup 1 --runs "$RUNS" --style none \
        --export-json "$json" "$cmd" >/dev/null 2>"$WORK/hyperfine.err"; then
        echo "command-fidelity: hyperfine $args failed:" >&2
        cat "$WORK/hyperfine.err" >&2
        return 1
    fi
    python3 -c '
import json, sys
for t in json.load(open(sys.argv[1]))["results"][0]["times"]:
    print(f"{sys.argv[2]}\thyperfine\t{t!r}")
' "$json" "$name" >>"$RESULTS"
}

# One round of vernier; appends the time of every measured run.
vernier_round() {
    local name=$1 spec=$2 out
    if ! out=$("$VERNIER" run "$spec" "${VERNIER_PIN[@]}" --db "$DB" --warmup 1 --min-runs "$RUNS" \
        --max-runs "$RUNS" --quiet 2>&1); then
        echo "command-fidelity: vernier run '$spec' failed:" >&2
        echo "$out" >&2
        return 1
    fi
    "$VERNIER" show latest --db "$DB" --format json | python3 -c '
import json, sys
for conf in json.load(sys.stdin):
    for v in conf["values"]:
        print(f"{sys.argv[1]}\tvernier\t{v!r}")
' "$name" >>"$RESULTS"
}

for ((round = 1; round <= ROUNDS; round++)); do
    for pair in "${PAIRS[@]}"; do
        IFS='|' read -r name _zero args spec <<<"$pair"
        hyperfine_round "$name" "$args"
        vernier_round "$name" "$spec"
        echo "round $round/$ROUNDS  $name" >&2
    done
done

NEAR_ZERO=$(for pair in "${PAIRS[@]}"; do
    IFS='|' read -r name zero _ <<<"$pair"
    [[ $zero == 1 ]] && echo "$name"
done)

python3 - "$RESULTS" "$NEAR_ZERO" <<'PY'
import statistics, sys

near_zero = set(filter(None, sys.argv[2].split("\n")))
order, values = [], {}
with open(sys.argv[1]) as f:
    for line in f:
        name, side, value = line.rstrip("\n").split("\t")
        if name not in values:
            order.append(name)
            values[name] = {"hyperfine": [], "vernier": []}
        values[name][side].append(float(value))

print(f"{'command':<18} {'n':>4} {'hyperfine ms':>12} {'vernier ms':>11} {'ratio':>7}  verdict")
for name in order:
    h, v = values[name]["hyperfine"], values[name]["vernier"]
    mh, mv = statistics.median(h) * 1e3, statistics.median(v) * 1e3
    if name in near_zero:
        print(f"{name:<18} {len(h):>4} {mh:>12.3f} {mv:>11.3f} {'-':>7}  "
              f"near zero: difference {mv - mh:+.3f} ms")
        continue
    ratio = mv / mh if mh > 0 else float("nan")
    verdict = "ok" if 0.95 <= ratio <= 1.05 else "OUTSIDE 0.95-1.05"
    print(f"{name:<18} {len(h):>4} {mh:>12.3f} {mv:>11.3f} {ratio:>7.3f}  {verdict}")
PY
