# Sourced by the end-to-end tests of tests/service/ and tests/exec/ (live_test_begin, check):
# starts `astraeus serve` on 127.0.0.1 (any free port) with a temp data directory, and makes
# tokens with `astraeus admin`. Everything it starts is stopped by its own PID on exit.
# Needs: $ASTRAEUS (the binary), $WORK (a temp dir: live_test_begin makes it); optional $SERVE_ARGS (the executor flags,
# default --executor sim). Sets: $API, $SERVER_PID, $SERVER_PORT.

SERVER_PID=""
EXTRA_PIDS=()

# live_test_begin TOOL...: the tests' common start. Skips the test (exit 77, saying which) when a
# TOOL is not installed; makes $WORK, removed on exit unless KEEP is set (everything started is
# stopped by PID first); zeroes the counts of `check`.
live_test_begin() {
  local tool
  for tool in "$@"; do
    command -v "$tool" > /dev/null || { echo "SKIP: $tool not installed"; exit 77; }
  done
  WORK=$(mktemp -d)
  trap 'stop_all; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
  fails=0; passes=0
}

# check WHAT CONDITION: evaluates the shell CONDITION; counts a pass, or prints "FAIL: WHAT".
check() { if eval "$2"; then passes=$((passes+1)); else echo "FAIL: $1"; fails=$((fails+1)); fi; }

stop_all() {
  local p
  for p in "${EXTRA_PIDS[@]}" $SERVER_PID; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${EXTRA_PIDS[@]}" $SERVER_PID; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
}

# admin ARGS...: `astraeus admin ARGS --data-dir $WORK/data`.
admin() { "$ASTRAEUS" admin "$@" --data-dir "$WORK/data"; }

# start_server CONFIG_JSON_FILE: init the data dir from the config, then serve it.
start_server() {
  local cfg=$1
  admin init --org acme --cluster main --config "$cfg" > "$WORK/init.txt" || return 1
  "$ASTRAEUS" serve ${SERVE_ARGS:---executor sim} --config "$cfg" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
      --port-file "$WORK/port" > "$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 200); do
    [ -s "$WORK/port" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "server exited:"; cat "$WORK/server.log"; return 1; }
    sleep 0.1
  done
  [ -s "$WORK/port" ] || { echo "server did not listen within 20 s"; cat "$WORK/server.log"; return 1; }
  SERVER_PORT=$(cat "$WORK/port")
  API="http://127.0.0.1:$SERVER_PORT/v1"
}

# store_sql QUERY: the query's rows ('|'-separated) from the server's SQLite store, read-only.
store_sql() { sqlite3 -noheader -batch "file:$WORK/data/astraeus.db?mode=ro" "$1"; }

# restart_server SIGNAL CONFIG_JSON_FILE: stops the server with SIGNAL (KILL, TERM) and waits for
# it, then serves the same data directory again (log: $WORK/serve.N.log, N = 1, 2, ...); sets $API.
SERVER_RESTARTS=0
restart_server() {
  kill "-$1" "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
  SERVER_RESTARTS=$((SERVER_RESTARTS+1)); rm -f "$WORK/port"
  "$ASTRAEUS" serve ${SERVE_ARGS:---executor sim} --config "$2" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
      --port-file "$WORK/port" > "$WORK/serve.$SERVER_RESTARTS.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  API="http://127.0.0.1:$(cat "$WORK/port" 2>/dev/null)/v1"
}

# new_token SCOPE-ARGS...: prints a new token (e.g. new_token --workspace ml).
new_token() { admin token create "$@" 2>/dev/null; }

# start_prometheus CONFIG: starts Debian's prometheus with CONFIG (TSDB in $WORK/prom, log in
# $WORK/prometheus.log) on a free port of 127.0.0.1 and waits (up to 60 s) until it answers
# /-/ready; sets PPORT. A port taken between free_port and prometheus' bind (another test) is
# retried on another port, up to 5 times. Returns 1, with the log's tail, when it never got ready.
start_prometheus() {
  local pid
  for _ in 1 2 3 4 5; do
    PPORT=$(free_port) || return 1
    prometheus --config.file="$1" --storage.tsdb.path="$WORK/prom" \
      --web.listen-address="127.0.0.1:$PPORT" --log.level=warn > "$WORK/prometheus.log" 2>&1 &
    pid=$!
    for _ in $(seq 120); do
      kill -0 "$pid" 2> /dev/null || break
      if [ "$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PPORT/-/ready" 2> /dev/null)" = 200 ]; then
        EXTRA_PIDS+=("$pid"); return 0
      fi
      sleep 0.5
    done
    kill "$pid" 2> /dev/null; wait "$pid" 2> /dev/null
    grep -q 'address already in use' "$WORK/prometheus.log" || break
  done
  echo "--- prometheus.log"; tail -20 "$WORK/prometheus.log"
  return 1
}

# free_port: a TCP port on 127.0.0.1 nobody listens on now.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}
