#!/usr/bin/env bash
# usage: trace_export_local_test.sh ASTRAEUS_BINARY
# `astraeus trace export` of a store served by `astraeus serve --executor local --gpus 2` while the
# configuration says 4 machines x 8 GPUs: the local executor ran one machine with 2 GPUs, and
# the exported machine list says so (one row, 2 GPUs), not the configuration's 4 x 8. The same
# data directory served again with the sim executor exports the configuration's machines.
# Skipped (exit 77) when curl or jq is missing. Bounded: about 10 s.
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 4, "gpus": 8}]}], "time_scale": 60,
 "local": {"allow_root": true}}
JSON
SERVE_ARGS="--executor local --gpus 2" start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml > /dev/null || exit 1
ML=$(new_token --workspace ml)
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$API/runs" -H "Authorization: Bearer $ML" \
  -H 'Content-Type: application/json' -d '{"name":"hello","gpus_per_worker":2,"command":["true"]}')
check "hello submitted (2 GPUs)" '[ "$code" = 201 ]'
for _ in $(seq 100); do
  [ "$(curl -sS "$API/runs/hello" -H "Authorization: Bearer $ML" | jq -r .state)" = succeeded ] && break
  sleep 0.1
done
stop_all; SERVER_PID=""
"$ASTRAEUS" trace export --data-dir "$WORK/data" --out "$WORK/local.csv" 2> "$WORK/local.err"
check "export exits 0: $(cat "$WORK/local.err")" '[ $? = 0 ]'
check "the machine list is the local machine: 1 machine, 2 GPUs" \
  '[ "$(tail -n +2 "$WORK/local-machines.csv")" = "default/default-1,default,2,1" ]'

# The same data directory with the sim executor: the configuration's machines run again.
rm -f "$WORK/port"
"$ASTRAEUS" serve --executor sim --config "$WORK/astraeus.json" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
    --port-file "$WORK/port" >> "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
stop_all; SERVER_PID=""
"$ASTRAEUS" trace export --data-dir "$WORK/data" --out "$WORK/sim.csv" 2> /dev/null
check "served by the sim executor: 4 machines of 8 GPUs" \
  '[ "$(tail -n +2 "$WORK/sim-machines.csv" | cut -d, -f2,3 | sort | uniq -c | tr -s " ")" = " 4 default,8" ]'

echo "trace_export_local_test: $passes passed, $fails failed"
[ "$fails" = 0 ] || { cat "$WORK/server.log" | tail -20; exit 1; }
