#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server: `scripts/with-postgres.sh cargo test`.
#
# The server lives in a new temporary directory, listens only on a Unix socket there (no TCP
# port, so it meets no other server), trusts local connections, and is stopped and removed when
# the command ends, however it ends. The command gets VERNIER_TEST_POSTGRES, the URL of the
# server's `postgres` database as its superuser; vernier's PostgreSQL tests create a database
# of their own on it for each test. Needs Debian's `postgresql` package (initdb, pg_ctl);
# PG_BIN overrides where they are.
set -euo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

bin=${PG_BIN:-}
if [ -z "$bin" ]; then
  # The newest installed major version (Debian installs each under /usr/lib/postgresql/N).
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
fi
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "$0: no initdb found; install PostgreSQL (apt-get install postgresql) or set PG_BIN" >&2
  exit 2
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/vernier-pg.XXXXXX")
# initdb refuses to run as root, and so does the server: as root, run them as `postgres`.
as_server=()
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
  as_server=(runuser -u postgres --)
  user=postgres
  chown postgres "$dir"
fi

stop() {
  "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT

"${as_server[@]}" "$bin/initdb" -D "$dir/data" -A trust -U "$user" -E UTF8 >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
# Enough connections for tests running in parallel, each with a few processes of its own.
"${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-k $dir -c listen_addresses= -c max_connections=200 -c fsync=off" start >/dev/null \
  || { cat "$dir/server.log" >&2; exit 1; }

export VERNIER_TEST_POSTGRES="postgresql:///postgres?host=$dir&user=$user"
"$@"
