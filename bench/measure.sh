# Helpers sourced by the store's benchmark scripts (store-scale.sh, farm-copy.sh,
# long-session.sh). The sourcing script sets SCRIPT (its name, for messages), WORK (a scratch
# directory) and, for pg_fresh, PG (a PostgreSQL server's URL naming its database `postgres`).

# load: the 1-minute load average, printed beside every figure.
load() { cut -d' ' -f1 /proc/loadavg; }

# timed CMD ARGS...: "WALL_S CPU_S MAX_RSS_MB" of one run (CPU = user + system, which on a shared
# machine does not count waiting for a CPU), or "fail - -" with the command's output on stderr.
timed() {
    local out
    if out=$(/usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$@" 2>&1 >/dev/null); then
        read -r wall user sys rss <"$WORK/time"
        echo "$wall $(python3 -c "print('%.2f' % ($user + $sys))") $((rss / 1024))"
    else
        echo "$SCRIPT: $* failed: $out" >&2
        echo "fail - -"
    fi
}

# pg_fresh NAME: a new, empty PostgreSQL database on PG's server; prints its URL.
pg_fresh() {
    PGOPTIONS=--client-min-messages=warning psql -q "$PG" -c "DROP DATABASE IF EXISTS $1" \
        -c "CREATE DATABASE $1" >/dev/null
    echo "${PG/\/postgres\?//$1?}"
}
