#!/bin/bash
# postgres-test-server.sh: a throw-away PostgreSQL 15 (Debian 12's postgresql-15) for Astraeus'
# PostgreSQL store tests and for developers: initdb in $BASE, `postgres` on 127.0.0.1:$PORT (the
# first free port from 15432) with its unix socket in $BASE/sock, trust authentication for the
# superuser `astraeus` (local connections only), stopped by the PID in its pid file. PostgreSQL
# refuses to run as root: as root the server runs as the system user $PGUSER_OS (created with
# `useradd --system` when missing). Everything (data, socket, log) lives under $BASE.
#
# Usage:  scripts/postgres-test-server.sh start|stop|status|env
#   start   (re)creates $BASE, starts the server, waits until it accepts connections, writes
#           $BASE/env and prints its line: export ASTRAEUS_TEST_PG='host=127.0.0.1 port=N user=astraeus dbname=postgres'
#           (the tests create and drop their own databases with it). Exit 0 when up.
#   stop    `pg_ctl stop -m fast` (then TERM, KILL after 15 s, by the pid file's PID); removes
#           $BASE (KEEP=1 keeps it, e.g. to read $BASE/postgres.log). Exit 0.
#   status  exit 0 when the server accepts connections; 1 otherwise.
#   env     prints the export line of a started server (eval "$(... env)").
# Env: BASE (/tmp/astraeus-pg)  PORT (first free from 15432)  PGUSER_OS (astraeus-pg)  KEEP
set -euo pipefail
BASE=${BASE:-/tmp/astraeus-pg}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PGUSER_OS=${PGUSER_OS:-astraeus-pg}
DATA=$BASE/data
SOCK=$BASE/sock

log() { echo "[postgres-test-server $(date +%T.%N | cut -c1-12)] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Runs a command as the server's user (root: $PGUSER_OS; anyone else: themselves).
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$PGUSER_OS" -- "$@"; else "$@"; fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

conninfo() { echo "host=127.0.0.1 port=$(cat "$BASE/port") user=astraeus dbname=postgres"; }

ready() { [ -f "$BASE/port" ] && "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$(cat "$BASE/port")" -t 2; }

server_pid() { [ -f "$DATA/postmaster.pid" ] && head -1 "$DATA/postmaster.pid"; }

start() {
  [ -x "$PGBIN/initdb" ] || die "$PGBIN/initdb not found (apt-get install postgresql-15)"
  if ready; then log "already up on port $(cat "$BASE/port")"; print_env; return 0; fi
  stop >/dev/null 2>&1 || true
  if [ "$(id -u)" -eq 0 ] && ! id -u "$PGUSER_OS" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin "$PGUSER_OS" || die "cannot create the user $PGUSER_OS"
  fi
  mkdir -p "$BASE" "$SOCK"
  if [ "$(id -u)" -eq 0 ]; then chown "$PGUSER_OS" "$BASE" "$SOCK"; fi
  local port=${PORT:-15432}
  if [ -z "${PORT:-}" ]; then
    while ! port_free "$port"; do port=$((port + 1)); [ "$port" -lt 15532 ] || die "no free port in 15432..15531"; done
  fi
  echo "$port" > "$BASE/port"
  as_pg "$PGBIN/initdb" -D "$DATA" -U astraeus --auth=trust -E UTF8 --locale=C.UTF-8 >"$BASE/initdb.log" 2>&1 ||
    { cat "$BASE/initdb.log" >&2; die "initdb failed"; }
  as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$BASE/postgres.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$SOCK -c max_connections=200" \
    >/dev/null || { cat "$BASE/postgres.log" >&2; die "the server did not start"; }
  ready || die "the server does not accept connections (see $BASE/postgres.log)"
  echo "export ASTRAEUS_TEST_PG='$(conninfo)'" > "$BASE/env"
  log "up: PID $(server_pid), port $port, data $DATA"
  print_env
}

stop() {
  local pid; pid=$(server_pid || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast -t 15 stop >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null || true
    log "stopped PID $pid"
  fi
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$BASE"; fi
}

status() {
  if ready; then log "up on port $(cat "$BASE/port") (PID $(server_pid))"; return 0; fi
  log "not running"; return 1
}

print_env() { [ -f "$BASE/env" ] || die "not started (no $BASE/env)"; cat "$BASE/env"; }

case "${1:-}" in
  start)  start ;;
  stop)   stop ;;
  status) status ;;
  env)    print_env ;;
  *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
