#!/usr/bin/env bash
# Scale of the store (issue "Fast at every size", goals 3-6): bytes per run and the wall time and
# maximum RSS (/usr/bin/time -v) of the read commands and of `sync`, for two vernier binaries side
# by side, interleaved (BEFORE, AFTER, BEFORE, AFTER, ... for every command), with the load
# average when each line was measured.
#
# The databases are built by `vernier import` of generated hyperfine --export-json files
# (python3, deterministic): for each SIZE two files of 10 commands of SIZE/10 times each, which
# import as two sessions of SIZE runs (10 configurations each). Each binary imports them into a
# database of its own schema; the BEFORE database is also copied and opened for writing by
# AFTER (`vernier tag`), which migrates it in place: that time is printed as `migrate`.
#
# Measured per size: `show latest`, `compare latest~1 latest`, `history`, `plot box latest~1
# latest`, `report -o DIR`, `sync --to` a new SQLite file and (when VERNIER_TEST_POSTGRES names
# a server, as scripts/with-postgres.sh provides) `sync --to` a new PostgreSQL database, and the
# database's bytes per run (pages in use after a checkpoint, divided by all runs; then those of
# the tables `runs` and `run_ids` with their indexes, the bytes their cells use). Sizes of
# BIG runs or more (a one-million-run session) measure `show` and the bytes only, with one
# session.
#
# Prints one line per (size, command): the best wall time of REPEAT of each binary, its CPU time
# (user + system: on a shared machine the wall time also counts waiting for a CPU) and maximum
# RSS, the ratio before/after of the wall times, and /proc/loadavg's 1-minute figure.
#
# Environment:
#   SIZES="10000 100000 1000000"           runs per session
#   BIG=1000000                            from this size on, only `show` and bytes per run
#   BEFORE=/work/store-bench/vernier-before  the binary of the previous schema
#   AFTER=target/release/vernier           the binary to measure
#   REPEAT=3                               timings of each command per binary; the best counts
#   KEEP=                                  a directory to keep the databases in
#   VERNIER_TEST_POSTGRES=                 URL of a PostgreSQL server's `postgres` database
set -euo pipefail

SIZES=${SIZES:-"10000 100000 1000000"}
BIG=${BIG:-1000000}
BEFORE=${BEFORE:-/work/store-bench/vernier-before}
AFTER=${AFTER:-target/release/vernier}
REPEAT=${REPEAT:-3}
KEEP=${KEEP:-}
PG=${VERNIER_TEST_POSTGRES:-}

for n in $SIZES $BIG $REPEAT; do
    if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
        echo "store-scale: SIZES, BIG and REPEAT must be positive integers, got '$n'" >&2
        exit 2
    fi
done
for bin in "$BEFORE" "$AFTER"; do
    if [[ ! -x $bin ]]; then
        echo "store-scale: no vernier binary at '$bin' (cargo build --release, or set" \
            "BEFORE= / AFTER=)" >&2
        exit 2
    fi
done
command -v python3 >/dev/null || { echo "store-scale: python3 is needed" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "store-scale: GNU time (/usr/bin/time) is needed" >&2; exit 2; }
if [[ -n $PG ]] && ! command -v psql >/dev/null; then
    echo "store-scale: psql is needed for the PostgreSQL sync" >&2
    exit 2
fi

if [[ -n $KEEP ]]; then
    mkdir -p "$KEEP"
    WORK=$KEEP
else
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
SCRIPT=store-scale
# shellcheck source=bench/measure.sh
source "$(dirname "$0")/measure.sh"

# bytes_per_run DB RUNS [TABLE]: the bytes of the pages in use per run, of the whole file or
# (TABLE) of that table with its indexes (SQLite's dbstat, https://www.sqlite.org/dbstat.html),
# to one decimal; "-" for a table the file does not have.
bytes_per_run() {
    python3 - "$1" "$2" "${3:-}" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
runs, table = int(sys.argv[2]), sys.argv[3]
if table:
    used = db.execute(
        "SELECT sum(pgsize - unused) FROM dbstat WHERE name IN "
        "(SELECT name FROM sqlite_schema WHERE tbl_name = ?)", (table,)).fetchone()[0]
    print("-" if used is None else "%.1f" % (used / runs))
else:
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    free = db.execute("PRAGMA freelist_count").fetchone()[0]
    size = db.execute("PRAGMA page_size").fetchone()[0]
    print("%.1f" % ((pages - free) * size / runs))
EOF
}

ratio() {
    python3 -c "import sys; a, b = sys.argv[1], sys.argv[2]
print('-' if 'fail' in (a, b) or '-' in (a, b) or float(b) == 0 else '%.1f' % (float(a) / float(b)))" "$1" "$2"
}

row() { # SIZE WHAT BEFORE_WALL BEFORE_CPU BEFORE_RSS AFTER_WALL AFTER_CPU AFTER_RSS
    printf "%8s  %-12s %9s %7s %6s   %9s %7s %6s   %7s  %5s\n" "$1" "$2" "$3" "$4" "$5" \
        "$6" "$7" "$8" "$(ratio "$3" "$6")" "$(load)"
}

printf "%8s  %-12s %9s %7s %6s   %9s %7s %6s   %7s  %5s\n" runs command before_s cpu_s MB \
    after_s cpu_s MB before/after load
for n in $SIZES; do
    big=$((n >= BIG))
    hyperfine_file "$n" 1 "$WORK/a-$n.json"
    [[ $big == 1 ]] || hyperfine_file "$n" 2 "$WORK/b-$n.json"
    declare -A db=() imp=()
    for side in before after; do
        bin=$BEFORE
        [[ $side == after ]] && bin=$AFTER
        db[$side]=$WORK/$side-$n.db
        rm -f "${db[$side]}"*
        imp[$side]=$(timed "$bin" --db "${db[$side]}" import "$WORK/a-$n.json")
        [[ $big == 1 ]] || timed "$bin" --db "${db[$side]}" import "$WORK/b-$n.json" >/dev/null
    done
    # shellcheck disable=SC2086
    row "$n" import ${imp[before]} ${imp[after]}
    sessions=$((big ? 1 : 2))
    row "$n" bytes/run "$(bytes_per_run "${db[before]}" $((n * sessions)))" - - \
        "$(bytes_per_run "${db[after]}" $((n * sessions)))" - -
    # Of those, the table of runs and that of the ids kept apart (schema version 16), each with
    # its indexes: the bytes of a row's cells, without the pages' unused space.
    for table in runs run_ids; do
        row "$n" "$table" "$(bytes_per_run "${db[before]}" $((n * sessions)) $table)" - - \
            "$(bytes_per_run "${db[after]}" $((n * sessions)) $table)" - -
    done
    cp "${db[before]}" "$WORK/migrated-$n.db"
    # shellcheck disable=SC2046
    row "$n" migrate - - - $(timed "$AFTER" --db "$WORK/migrated-$n.db" tag latest store-scale=migrated)
    rm -f "$WORK/migrated-$n.db"*

    commands=("show latest")
    if [[ $big == 0 ]]; then
        commands+=("compare latest~1 latest" "history" "plot box latest~1 latest -o $WORK/box.svg"
            "report -o $WORK/site")
    fi
    for command in "${commands[@]}"; do
        declare -A result=()
        for _ in $(seq "$REPEAT"); do
            for side in before after; do
                bin=$BEFORE
                [[ $side == after ]] && bin=$AFTER
                rm -rf "$WORK/site"
                # shellcheck disable=SC2086
                read -r wall cpu rss < <(timed "$bin" --db "${db[$side]}" $command)
                if [[ -z ${result[$side]:-} ]] || { [[ $wall != fail ]] &&
                    python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2].split()[0]) else 1)" "$wall" "${result[$side]/fail/inf}"; }; then
                    result[$side]="$wall $cpu $rss"
                fi
            done
        done
        # shellcheck disable=SC2086
        row "$n" "${command%% *}$([[ $command == plot* ]] && echo " box")" ${result[before]} ${result[after]}
        unset result
    done

    if [[ $big == 0 ]]; then
        targets=(sqlite)
        [[ -n $PG ]] && targets+=(postgres)
        for target in "${targets[@]}"; do
            declare -A result=()
            for _ in $(seq "$REPEAT"); do
                for side in before after; do
                    bin=$BEFORE
                    [[ $side == after ]] && bin=$AFTER
                    if [[ $target == sqlite ]]; then
                        to=$WORK/sync-target.db
                        rm -f "$to"*
                    else
                        to=$(pg_fresh "vernier_store_scale_$side")
                    fi
                    read -r wall cpu rss < <(timed "$bin" --db "${db[$side]}" sync --to "$to")
                    if [[ -z ${result[$side]:-} ]] || { [[ $wall != fail ]] &&
                        python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2].split()[0]) else 1)" "$wall" "${result[$side]/fail/inf}"; }; then
                        result[$side]="$wall $cpu $rss"
                    fi
                done
            done
            # shellcheck disable=SC2086
            row "$n" "sync-$target" ${result[before]} ${result[after]}
            unset result
        done
    fi
    rm -f "$WORK"/a-"$n".json "$WORK"/b-"$n".json
    [[ -n $KEEP ]] || rm -f "${db[before]}"* "${db[after]}"*
    unset db imp
done
