#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server: `scripts/with-postgres.sh cargo test`.
#
# The server lives in a new temporary directory, listens on a Unix socket there and, for the
# tests of TLS, on a free TCP port of 127.0.0.1 that takes only TLS connections (a self-signed
# certificate for localhost made with `openssl`), trusts local connections, and is stopped and
# removed when the command ends, however it ends. The command gets VERNIER_TEST_POSTGRES, the
# URL of the server's `postgres` database as its superuser over the socket; vernier's
# PostgreSQL tests create a database of their own on it for each test. With `openssl` it also
# gets VERNIER_TEST_POSTGRES_TLS (the same database over TCP, without `sslmode`) and
# VERNIER_TEST_POSTGRES_CA (the certificate, to verify the server with). Needs Debian's
# `postgresql` package (initdb, pg_ctl); PG_BIN overrides where they are.
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
# TCP takes TLS only (hostssl), so that a connection without it is refused and one that
# succeeds there was encrypted (https://www.postgresql.org/docs/15/ssl-tcp.html).
listen=
ssl=
if command -v openssl >/dev/null; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$dir/data/server.key" -out "$dir/data/server.crt" >"$dir/openssl.log" 2>&1 \
    || { cat "$dir/openssl.log" >&2; exit 1; }
  cp "$dir/data/server.crt" "$dir/ca.crt"
  chmod 600 "$dir/data/server.key"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir/data/server.key" "$dir/data/server.crt"; fi
  printf 'local all all trust\nhostssl all all 127.0.0.1/32 trust\n' >"$dir/data/pg_hba.conf"
  listen=127.0.0.1
  ssl="-c ssl=on"
fi
# A port of its own (it also names the socket): a random one, another if a server has it.
started=
for _ in 1 2 3 4 5 6 7 8; do
  port=$((20000 + RANDOM % 30000))
  # Enough connections for tests running in parallel, each with a few processes of its own.
  if "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
    "-k $dir -p $port -c listen_addresses=$listen $ssl -c max_connections=200 -c fsync=off" \
    start >/dev/null; then
    started=1
    break
  fi
done
[ -n "$started" ] || { cat "$dir/server.log" >&2; exit 1; }

export VERNIER_TEST_POSTGRES="postgresql:///postgres?host=$dir&port=$port&user=$user"
if [ -n "$listen" ]; then
  export VERNIER_TEST_POSTGRES_TLS="postgresql://$user@localhost:$port/postgres"
  export VERNIER_TEST_POSTGRES_CA="$dir/ca.crt"
fi
"$@"
