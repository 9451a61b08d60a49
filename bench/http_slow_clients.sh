#!/usr/bin/env bash
# usage: bench/http_slow_clients.sh [ASTRAEUS_BINARY] [SLOW=5000] [CALLS=500] [BODIES=100]
# The HTTP layer under hostile clients (issue 18), on 127.0.0.1: a normal client's latency
# beside SLOW slowloris connections, and the server's memory while BODIES clients each try to
# send a 1 GiB chunked body (bench/http_slow_clients.py). Starts its own `astraeus serve
# --executor sim` in a temp dir (--header-timeout 120, so the slow connections stay for the
# whole measurement), prints the figures as JSON, stops the server. Bounded: about a minute.
set -euo pipefail
ASTRAEUS=${1:-build/release/astraeus}
SLOW=${2:-5000}; CALLS=${3:-500}; BODIES=${4:-100}
WORK=$(mktemp -d)
PID=""
trap '[ -n "$PID" ] && kill -TERM "$PID" 2> /dev/null; wait 2> /dev/null; rm -rf "$WORK"' EXIT
echo '{"pools": [{"name": "a100", "machines": [{"count": 4, "gpus": 8}]}]}' > "$WORK/c.json"
"$ASTRAEUS" admin init --org acme --cluster main --config "$WORK/c.json" --data-dir "$WORK/data" > /dev/null
"$ASTRAEUS" admin workspace add ml --data-dir "$WORK/data" > /dev/null
TOKEN=$("$ASTRAEUS" admin token create --workspace ml --data-dir "$WORK/data" 2> /dev/null)
"$ASTRAEUS" serve --executor sim --config "$WORK/c.json" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
  --port-file "$WORK/port" --header-timeout 120 > "$WORK/serve.log" 2>&1 &
PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
python3 "$(dirname "$0")/http_slow_clients.py" "$(cat "$WORK/port")" "$PID" "$TOKEN" "$SLOW" "$CALLS" "$BODIES"
grep -c 'http.connection_refused' "$WORK/serve.log" > /dev/null && echo "connections refused over budget: $(grep -c http.connection_refused "$WORK/serve.log")" || true
