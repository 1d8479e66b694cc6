#!/usr/bin/env bash
# A year of `vernier monitor latency` (issue "A farm that runs for a year", item 2): the cost of
# syncing and showing one session of RUNS intervals, each with its histograms and monitor data,
# for two vernier binaries side by side, interleaved (BEFORE, AFTER for every command), with the
# load average beside every figure.
#
# The session is recorded for real (`monitor latency --interval 1s --for 3s`, default monitors)
# by AFTER, then grown to RUNS runs by GROW (crates/store/examples/long_session.rs: copies of
# the recorded intervals, later in time, 10,000 a transaction) and left `running`, as a
# monitor's session is while it records. BEFORE gets a copy of the same file; when it is of an
# earlier schema version (it refuses the file as newer), the copy has what the additive
# versions since added dropped: version 15's table `histogram_totals` (the kept merged
# histograms), and for a vernier of version 11 version 12's `configurations.run_count` and
# `.last_run_ended_ns`.
#
# Measured: the sync of the whole session to a new SQLite file and (with VERNIER_TEST_POSTGRES,
# as scripts/with-postgres.sh provides) to a new PostgreSQL database, a sync with nothing new
# to a file that holds the session already, and `show latest` (as text and as JSON). Each line: wall time, CPU time
# (user + system) and maximum RSS (/usr/bin/time) of each binary, and the 1-minute load.
#
# Environment:
#   RUNS=100000                         intervals of the session
#   BEFORE=/work/rel/vernier-main       the binary to compare with
#   AFTER=target/release/vernier        the binary to measure
#   GROW=target/release/examples/long_session   (cargo build --release -p vernier-store
#                                                --example long_session)
#   COPY=1                              0 skips the first copies (minutes at 100,000 runs)
#   LIMIT=900                           seconds after which a command is stopped (and fails)
set -euo pipefail

RUNS=${RUNS:-100000}
BEFORE=${BEFORE:-/work/rel/vernier-main}
AFTER=${AFTER:-target/release/vernier}
GROW=${GROW:-target/release/examples/long_session}
COPY=${COPY:-1}
LIMIT=${LIMIT:-900}
PG=${VERNIER_TEST_POSTGRES:-}

if ! [[ $RUNS =~ ^[1-9][0-9]*$ ]]; then
    echo "long-session: RUNS must be a positive integer, got '$RUNS'" >&2
    exit 2
fi
for bin in "$BEFORE" "$AFTER" "$GROW"; do
    if [[ ! -x $bin ]]; then
        echo "long-session: no executable at '$bin' (set BEFORE=, AFTER=, GROW=)" >&2
        exit 2
    fi
done
for tool in sqlite3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "long-session: $tool is needed" >&2; exit 2; }
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SCRIPT=long-session
# shellcheck source=bench/measure.sh
source "$(dirname "$0")/measure.sh"

row() { # WHAT BEFORE(3) AFTER(3)
    printf "%-16s %9s %7s %6s   %9s %7s %6s   %5s\n" "$@" "$(load)"
}

"$AFTER" --db "$WORK/after.db" monitor latency --interval 1s --for 3s --quiet >/dev/null
"$GROW" "$WORK/after.db" "$RUNS" running
cp "$WORK/after.db" "$WORK/before.db"
if ! "$BEFORE" --db "$WORK/before.db" sessions >/dev/null 2>&1; then
    # A vernier of version 14 reads version 15 without its kept merged histograms.
    sqlite3 "$WORK/before.db" "DROP TABLE IF EXISTS histogram_totals; PRAGMA user_version = 14;"
fi
if ! "$BEFORE" --db "$WORK/before.db" sessions >/dev/null 2>&1; then
    sqlite3 "$WORK/before.db" "ALTER TABLE configurations DROP COLUMN run_count;
        ALTER TABLE configurations DROP COLUMN last_run_ended_ns; PRAGMA user_version = 11;"
fi

printf "%-16s %9s %7s %6s   %9s %7s %6s   %5s\n" "$RUNS runs" before_s cpu_s MB after_s \
    cpu_s MB load
declare -A result
measure() { # WHAT, then the arguments after the binary, with SIDE for before/after
    local what=$1
    shift
    for side in before after; do
        bin=$BEFORE
        [[ $side == after ]] && bin=$AFTER
        result[$side]=$(timed timeout "$LIMIT" "$bin" "${@//SIDE/$side}")
    done
    # shellcheck disable=SC2086
    row "$what" ${result[before]} ${result[after]}
}
if [[ $COPY == 1 ]]; then
    measure sync-sqlite --db "$WORK/SIDE.db" sync --to "$WORK/SIDE-copy.db"
    rm -f "$WORK"/*-copy.db*
    if [[ -n $PG ]]; then
        before_url=$(pg_fresh vernier_long_before)
        after_url=$(pg_fresh vernier_long_after)
        for side in before after; do
            bin=$BEFORE url=$before_url
            [[ $side == after ]] && bin=$AFTER url=$after_url
            result[$side]=$(timed timeout "$LIMIT" "$bin" --db "$WORK/$side.db" sync --to "$url")
        done
        # shellcheck disable=SC2086
        row sync-postgres ${result[before]} ${result[after]}
    fi
fi
cp "$WORK/before.db" "$WORK/before-held.db"
cp "$WORK/after.db" "$WORK/after-held.db"
measure sync-nothing-new --db "$WORK/SIDE.db" sync --to "$WORK/SIDE-held.db"
measure show --db "$WORK/SIDE.db" show latest
measure show-json --db "$WORK/SIDE.db" show latest --format json
