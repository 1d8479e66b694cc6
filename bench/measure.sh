# Helpers sourced by the store's benchmark scripts (store-scale.sh, farm-copy.sh,
# long-session.sh, import-scale.sh). The sourcing script sets SCRIPT (its name, for messages),
# WORK (a scratch directory) and, for pg_fresh, PG (a PostgreSQL server's URL naming its
# database `postgres`).

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

# hyperfine_file N SEED FILE: a hyperfine file of 10 commands with N/10 times each.
hyperfine_file() {
    python3 - "$1" "$2" "$3" <<'EOF'
import json, random, sys
n, seed, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(seed)
results = []
for c in range(10):
    k = n // 10
    times = [0.01 * (1 + c / 10) * rng.lognormvariate(0, 0.02) for _ in range(k)]
    results.append({"command": f"sleep 0.0{c}", "mean": sum(times) / k, "times": times,
                    "exit_codes": [0] * k})
with open(path, "w") as f:
    json.dump({"results": results}, f)
EOF
}
