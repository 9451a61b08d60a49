#!/usr/bin/env bash
# usage: restart_preemption_test.sh ASTRAEUS_BINARY ASTRA_BINARY
# A clean restart of `astraeus serve --executor local` (SIGTERM) is a preemption of the runs it
# was running, not a failure: a run whose service is stopped and restarted 4 times (more than
# max_failures, default 3) gets the checkpoint signal each time, waits again, is placed again
# after each restart (resuming from its checkpoint) and ends succeeded; its attempts 1-4 are
# "preempted", none "failed" (the store's attempts, read with the sqlite3 CLI); its ledger
# counts preemption (each wind-down: its checkpoint takes 90 service seconds), and no failure. After a kill -9 (no clean stop) the attempt is still a failure.
# Skipped (77) without curl, jq or sqlite3. About 25 s.
set -u
ASTRAEUS=$1; ASTRA=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../service/live_server_lib.sh"
live_test_begin curl jq sqlite3
W="$HERE/ckpt_workload.sh"

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 1}]}],
 "time_scale": 60, "lease_s": 36000, "local": {"grace_s": 5, "allow_root": true}}
JSON
SERVE_ARGS="--executor local --gpus 1" start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml > /dev/null || exit 1
export ASTRALYX_API=$API
ASTRALYX_TOKEN=$(new_token --workspace ml); export ASTRALYX_TOKEN

# restart_server SIGNAL: stops the server with SIGNAL, waits for it, starts it again on the same
# data directory and port.
restart_server() {
  kill "-$1" "$SERVER_PID"
  for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  wait "$SERVER_PID" 2>/dev/null
  rm -f "$WORK/port"
  "$ASTRAEUS" serve --executor local --gpus 1 --config "$WORK/astraeus.json" --data-dir "$WORK/data" \
      --listen "127.0.0.1:$SERVER_PORT" --port-file "$WORK/port" >> "$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/port" ] && return 0; sleep 0.1; done
  echo "the server did not come back"; tail -20 "$WORK/server.log"; return 1
}
wait_state() {
  for _ in $(seq $(( ${3:-20} * 10 ))); do
    [ "$("$ASTRA" runs show "$1" --json 2>/dev/null | jq -r .state)" = "$2" ] && return 0
    sleep 0.1
  done
  echo "run $1 is $("$ASTRA" runs show "$1" --json | jq -r .state), not $2"; return 1
}

# 40 steps of 0.2 s: 8 s of work in all; each attempt runs ~1 s before its service is stopped.
# Its checkpoint takes 1.5 s (90 s of the service's clock): the wind-down after each SIGTERM
# holds the GPU across a minute boundary, counted preemption as at any preemption's wind-down.
"$ASTRA" runs submit train --env CKPT_DELAY_S=1.5 -- sh "$W" 40 0.2 > /dev/null
for k in 1 2 3 4; do
  wait_state train running 20 || break
  sleep 1
  restart_server TERM || break
done
wait_state train succeeded 40
check "train succeeded after 4 clean restarts (max_failures 3)" '[ $? = 0 ]'
"$ASTRA" runs show train --json > "$WORK/train.json"
check "in 5 attempts" '[ "$(jq .attempts "$WORK/train.json")" = 5 ]'
outcomes=$(sqlite3 "$WORK/data/astraeus.db" "SELECT group_concat(outcome, ' ') FROM (SELECT a.outcome FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'train' ORDER BY a.number)")
check "attempts 1-4 preempted, 5 succeeded (got: $outcomes)" '[ "$outcomes" = "preempted preempted preempted preempted succeeded" ]'
check "attempt 1 checkpointed on the signal" "\"$ASTRA\" runs logs train --attempt 1 | grep -q 'checkpoint saved at step'"
saved=$("$ASTRA" runs logs train --attempt 4 | sed -n 's/^checkpoint saved at step \([0-9]*\)$/\1/p')
resumed=$("$ASTRA" runs logs train --attempt 5 | sed -n 's/^resumed from step \([0-9]*\)$/\1/p')
check "attempt 5 resumed from attempt 4's checkpoint ($saved = $resumed)" '[ -n "$saved" ] && [ "$resumed" = "$saved" ]'
curl -sS "$API/runs/train/goodput" -H "Authorization: Bearer $ASTRALYX_TOKEN" > "$WORK/goodput.json"
check "its ledger has preemption GPU-hours: $(jq -c .gpu_hours "$WORK/goodput.json")" \
  '[ "$(jq ".gpu_hours.preemption > 0" "$WORK/goodput.json")" = true ]'
check "and no failure GPU-hours" '[ "$(jq ".gpu_hours.failure" "$WORK/goodput.json")" = 0 ]'

# kill -9: no clean stop, the attempt is a failure (the rule before).
"$ASTRA" runs submit crash -- sh "$W" 1000 0.2 > /dev/null
wait_state crash running 20
restart_server KILL
wait_state crash running 20
first=$(sqlite3 "$WORK/data/astraeus.db" "SELECT a.outcome FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'crash' AND a.number = 1")
check "after kill -9 the attempt failed (got: $first)" '[ "$first" = failed ]'

echo "$passes passed, $fails failed"
[ "$fails" = 0 ] || { tail -40 "$WORK/server.log"; exit 1; }
