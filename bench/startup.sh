#!/usr/bin/env bash
# Start-up cost of `vernier run`: wall time of a session of one trivial measured run
# (`vernier run mock --warmup 0 --min-runs 1 --max-runs 1`), with the system check's sampled
# and measured findings (200 ms window, 500 ping-pong round trips) measured on every
# invocation (an empty cache, as before they were cached) and taken from the per-boot cache.
#
# Prints the median and minimum of each (wall time, and the CPU time of the session's processes,
# which a loaded machine stretches less), the difference and the ratio. The two alternate for
# RUNS rounds so that background load hits both alike. With BASELINE, another vernier binary
# (an earlier build) runs in the same rounds with the cached check, and the ratio of this build
# to it is printed: a change that makes a session start slower shows there. Both binaries are
# copied into the work directory first, written the same way: how a binary's pages sit in the
# page cache (a file the linker wrote, or one read in large folios) changed the page faults of
# every start by ~30 and its CPU time by up to 0.8 ms, which is not the build's doing. In
# every round hyperfine's own start-up (`hyperfine -N --runs 1 true`: a harness that starts,
# runs one command once and reports it) is timed the same way, as the reference. The load
# average is printed before and after.
#
# With LOAD=N, N busy loops (`stress-ng --cpu N`) run for the whole measurement, started 20 s
# before the first round so that the load average shows them; they are stopped on exit. On a
# machine of fewer CPUs than N, a session then waits for a CPU as on a loaded machine: its
# wall time grows by more than its CPU time.
#
# Environment:
#   RUNS=20       rounds
#   VERNIER=BIN   the vernier binary to measure (default: a release build of this checkout)
#   BASELINE=BIN  a vernier binary to compare this build with (optional)
#   LOAD=N        N CPU-bound processes running meanwhile (default 0: none)
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-20}
if ! [[ $RUNS =~ ^[1-9][0-9]*$ ]]; then
    echo "startup: RUNS must be a positive integer, got '$RUNS'" >&2
    exit 2
fi
if ! command -v python3 >/dev/null; then
    echo "startup: python3 is needed to compute medians" >&2
    exit 2
fi
BASELINE=${BASELINE:-}
LOAD=${LOAD:-0}
if ! [[ $LOAD =~ ^[0-9]+$ ]]; then
    echo "startup: LOAD must be a number of busy processes, got '$LOAD'" >&2
    exit 2
fi
if ((LOAD > 0)) && ! command -v stress-ng >/dev/null; then
    echo "startup: LOAD needs stress-ng" >&2
    exit 2
fi
if ! command -v hyperfine >/dev/null; then
    echo "startup: hyperfine is needed as the reference" >&2
    exit 2
fi
if [[ -n $BASELINE && ! -x $BASELINE ]]; then
    echo "startup: BASELINE must be an executable vernier, got '$BASELINE'" >&2
    exit 2
fi
if [[ -z ${VERNIER:-} ]]; then
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
    cargo build --release -q -p vernier
    VERNIER=$CARGO_TARGET_DIR/release/vernier
elif [[ ! -x $VERNIER ]]; then
    echo "startup: VERNIER must be an executable vernier, got '$VERNIER'" >&2
    exit 2
fi

WORK=$(mktemp -d)
# The binaries, written alike (see above).
cat "$VERNIER" >"$WORK/vernier"
chmod +x "$WORK/vernier"
VERNIER=$WORK/vernier
if [[ -n $BASELINE ]]; then
    cat "$BASELINE" >"$WORK/baseline"
    chmod +x "$WORK/baseline"
    BASELINE=$WORK/baseline
fi
STRESS=
cleanup() {
    if [[ -n $STRESS ]]; then
        kill "$STRESS" 2>/dev/null || true
        wait "$STRESS" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
RESULTS=$WORK/results.tsv
: >"$RESULTS"

# The CPU time of the waited-for children in the output $1 of bash's `times`, in milliseconds.
# `times` must run in this shell (not in a command substitution, whose subshell counts only its
# own children).
children_cpu_ms() {
    python3 - "$1" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
print(round(sum(int(m) * 60000 + float(s) * 1000 for m, s in re.findall(r"(\d+)m([\d.]+)s", lines[1]))))
PY
}

# Runs the command $2... once; appends its wall time in microseconds and its CPU time in
# milliseconds under name $1.
timed() {
    local name=$1 t0 t1 c0 c1
    shift
    # The CPU times are taken inside the wall-clock span, so that they leave out `date`.
    t0=$(date +%s%N)
    times >"$WORK/times0"
    "$@" >/dev/null
    times >"$WORK/times1"
    t1=$(date +%s%N)
    c0=$(children_cpu_ms "$WORK/times0")
    c1=$(children_cpu_ms "$WORK/times1")
    printf '%s\t%s\t%s\n' "$name" "$(( (t1 - t0) / 1000 ))" "$((c1 - c0))" >>"$RESULTS"
}

# One session of binary $3 (this build by default) with the cache under $2, timed under name
# $1, recording into database $4.
session() {
    local name=$1 cache=$2 bin=${3:-$VERNIER} db=${4:-$WORK/startup.db}
    # Assigned before a function, the variable is in the environment of what it runs.
    XDG_CACHE_HOME=$cache timed "$name" "$bin" run mock --db "$db" --warmup 0 \
        --min-runs 1 --max-runs 1 --quiet
}

if ((LOAD > 0)); then
    stress-ng --cpu "$LOAD" --quiet >/dev/null 2>&1 &
    STRESS=$!
    sleep 20
    echo "stress-ng --cpu $LOAD running"
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# Fills the warm cache once (and the baseline's database, which may be of an older schema). The
# baseline's cache is a directory of its own: an older binary's cache is not this build's, and
# each would replace the other's, so that every cached session captured the environment again.
XDG_CACHE_HOME=$WORK/warm "$VERNIER" run mock --db "$WORK/startup.db" --warmup 0 \
    --min-runs 1 --max-runs 1 --quiet >/dev/null
if [[ -n $BASELINE ]]; then
    XDG_CACHE_HOME=$WORK/baseline-warm "$BASELINE" run mock --db "$WORK/baseline.db" --warmup 0 \
        --min-runs 1 --max-runs 1 --quiet >/dev/null
fi
for ((i = 1; i <= RUNS; i++)); do
    rm -rf "$WORK/cold"
    # A database of its own: the cached runs of this build and of the baseline read databases
    # of the same size.
    session "check measured every time" "$WORK/cold" "$VERNIER" "$WORK/cold.db"
    # This build and the baseline take turns at going first.
    if [[ -n $BASELINE ]] && ((i % 2 == 0)); then
        session "baseline, check cached" "$WORK/baseline-warm" "$BASELINE" "$WORK/baseline.db"
    fi
    session "check cached for this boot" "$WORK/warm"
    if [[ -n $BASELINE ]] && ((i % 2 == 1)); then
        session "baseline, check cached" "$WORK/baseline-warm" "$BASELINE" "$WORK/baseline.db"
    fi
    timed "hyperfine -N --runs 1 true" hyperfine -N --runs 1 --style none true
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$RESULTS" <<'EOF'
import statistics, sys
rows, cpu = {}, {}
for line in open(sys.argv[1]):
    name, us, ms = line.rstrip("\n").split("\t")
    rows.setdefault(name, []).append(int(us) / 1000)
    cpu.setdefault(name, []).append(int(ms))
print(f"vernier run mock, one measured run: wall and CPU time, {len(next(iter(rows.values())))} runs each (ms)")
for name, v in rows.items():
    c = cpu[name]
    print(f"  {name:<28} median {statistics.median(v):7.1f}  min {min(v):7.1f}"
          f"   CPU median {statistics.median(c):6.1f}  min {min(c):5.1f}")
cold = statistics.median(rows["check measured every time"])
warm = statistics.median(rows["check cached for this boot"])
print(f"  saved per invocation: {cold - warm:.1f} ms (cached/measured = {warm / cold:.2f})")
if "baseline, check cached" in rows:
    base = statistics.median(rows["baseline, check cached"])
    print(f"  this build / baseline, check cached: {warm / base:.3f} ({warm - base:+.1f} ms)")
    cpu_warm = statistics.median(cpu["check cached for this boot"])
    cpu_base = statistics.median(cpu["baseline, check cached"])
    print(f"  CPU time, this build / baseline: {cpu_warm / cpu_base:.3f} ({cpu_warm - cpu_base:+.1f} ms)")
ref = statistics.median(rows["hyperfine -N --runs 1 true"])
print(f"  this build, check cached, beyond hyperfine's start-up: {warm - ref:+.1f} ms"
      f" ({warm / ref:.1f}x)")
EOF
