#!/usr/bin/env bash
# Copies of a long session between databases (issue "Fast at every size", goal 5: sync and merge
# of a 100k-run session under 2 s in bounded memory): `sync --to` a new SQLite file, `sync --to`
# a new PostgreSQL database (with VERNIER_TEST_POSTGRES, as scripts/with-postgres.sh provides),
# `merge -o` a new file and the same merge again `--into` the result (nothing to add: the cost
# of comparing the copies of a session held twice), for two vernier binaries side by side,
# interleaved (BEFORE, AFTER for every command, REPEAT times, the best wall time counting), with
# the load average beside every figure.
#
# The database is DB when given (a latency session grown by bench/long-session.sh's generator,
# say), else an import of a generated hyperfine file of 10 commands of RUNS/10 times each (an
# ordinary scalar session, as bench/store-scale.sh makes them), imported by BEFORE. Each binary
# reads a copy of it of its own, AFTER's migrated to its schema first.
#
# Each line: wall time, CPU time (user + system: on a shared machine the wall time also counts
# waiting for a CPU) and maximum RSS (/usr/bin/time) of each binary, and the 1-minute load.
#
# Environment:
#   RUNS=100000                        runs of the generated session
#   DB=                                a database to copy in place of the generated one
#   BEFORE=/work/rel/vernier-main      the binary to compare with
#   AFTER=target/release/vernier       the binary to measure
#   REPEAT=1                           timings of each command per binary
#   VERNIER_TEST_POSTGRES=             URL of a PostgreSQL server's `postgres` database
set -euo pipefail

RUNS=${RUNS:-100000}
DB=${DB:-}
BEFORE=${BEFORE:-/work/rel/vernier-main}
AFTER=${AFTER:-target/release/vernier}
REPEAT=${REPEAT:-1}
PG=${VERNIER_TEST_POSTGRES:-}

for n in $RUNS $REPEAT; do
    if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
        echo "farm-copy: RUNS and REPEAT must be positive integers, got '$n'" >&2
        exit 2
    fi
done
for bin in "$BEFORE" "$AFTER"; do
    if [[ ! -x $bin ]]; then
        echo "farm-copy: no vernier binary at '$bin' (set BEFORE= / AFTER=)" >&2
        exit 2
    fi
done
for tool in python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "farm-copy: $tool is needed" >&2; exit 2; }
done
if [[ -n $PG ]] && ! command -v psql >/dev/null; then
    echo "farm-copy: psql is needed for the PostgreSQL sync" >&2
    exit 2
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SCRIPT=farm-copy
# shellcheck source=bench/measure.sh
source "$(dirname "$0")/measure.sh"
if [[ -z $DB ]]; then
    hyperfine_file "$RUNS" 1 "$WORK/h.json"
    DB=$WORK/source.db
    "$BEFORE" --db "$DB" import "$WORK/h.json" >/dev/null
    rm -f "$WORK/h.json"
fi

# Each binary copies its own copy of the database, AFTER's migrated on disk first when BEFORE
# wrote an older schema: a database opened read-only in an older schema is migrated in memory
# at every opening (crates/store/src/sqlite/connection.rs), which a farm does once with
# `vernier db migrate` (timed on the line "migrate").
for side in before after; do
    for suffix in "" -wal; do
        if [[ -e $DB$suffix ]]; then cp "$DB$suffix" "$WORK/$side-source.db$suffix"; fi
    done
done
printf "%-14s %9s %7s %6s   %9s %7s %6s   %5s\n" command before_s cpu_s MB after_s cpu_s MB load
read -r wall cpu rss < <(timed "$AFTER" --db "$WORK/after-source.db" db migrate)
printf "%-14s %9s %7s %6s   %9s %7s %6s   %5s\n" migrate - - - "$wall" "$cpu" "$rss" "$(load)"
# measure WHAT PREPARE ARGS...: the best of REPEAT runs of each binary, PREPARE (a shell
# function taking the side) run before each; SIDE in ARGS is replaced by the side.
measure() {
    local what=$1 prepare=$2
    shift 2
    declare -A result=()
    for _ in $(seq "$REPEAT"); do
        for side in before after; do
            bin=$BEFORE
            [[ $side == after ]] && bin=$AFTER
            "$prepare" "$side"
            read -r wall cpu rss < <(timed "$bin" "${@//SIDE/$side}")
            if [[ -z ${result[$side]:-} ]] || { [[ $wall != fail ]] &&
                python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2].split()[0]) else 1)" "$wall" "${result[$side]/fail/inf}"; }; then
                result[$side]="$wall $cpu $rss"
            fi
        done
    done
    # shellcheck disable=SC2086
    printf "%-14s %9s %7s %6s   %9s %7s %6s   %5s\n" "$what" ${result[before]} \
        ${result[after]} "$(load)"
}
fresh_file() { rm -f "$WORK/$1"-copy.db* "$WORK/.$1"-copy.db.merging*; }
fresh_pg() { pg_fresh "vernier_farm_copy_$1" >"$WORK/$1.url"; }
nothing() { :; }

measure sync-sqlite fresh_file --db "$WORK/SIDE-source.db" sync --to "$WORK/SIDE-copy.db"
if [[ -n $PG ]]; then
    declare -A result=()
    for _ in $(seq "$REPEAT"); do
        for side in before after; do
            bin=$BEFORE
            [[ $side == after ]] && bin=$AFTER
            fresh_pg "$side"
            read -r wall cpu rss < <(timed "$bin" --db "$WORK/$side-source.db" sync --to "$(cat "$WORK/$side.url")")
            if [[ -z ${result[$side]:-} ]] || { [[ $wall != fail ]] &&
                python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2].split()[0]) else 1)" "$wall" "${result[$side]/fail/inf}"; }; then
                result[$side]="$wall $cpu $rss"
            fi
        done
    done
    # shellcheck disable=SC2086
    printf "%-14s %9s %7s %6s   %9s %7s %6s   %5s\n" sync-postgres ${result[before]} \
        ${result[after]} "$(load)"
    unset result
fi
measure merge-new fresh_file merge "$WORK/SIDE-source.db" -o "$WORK/SIDE-copy.db"
measure merge-again nothing merge "$WORK/SIDE-source.db" --into "$WORK/SIDE-copy.db"
