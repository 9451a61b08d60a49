#!/usr/bin/env bash
# Progress reports through the API (POST /v1/runs/{run}/progress) against a live server: a gang
# of 3 where worker 2 advances 10x slower is a straggler (rate < half the gang's median over 10
# minutes), and workers that stop reporting are stalled after the stall timeout (30 min), counted from
# their last progress. The service clock runs 600x (1 real second = 10 minutes).
# usage: progress_test.sh ASTRAEUS_BINARY
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/cfg.json" <<'CFG'
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 8}]}],
 "time_scale": 600, "stall_timeout_s": 1800,
 "executor": {"startup_s": 60, "utilization_pct": 90}}
CFG
start_server "$WORK/cfg.json" || exit 1
admin workspace add ml --weight 1 > /dev/null
TOKEN=$(new_token --workspace ml)
OPS=$(new_token --operator)
H="Authorization: Bearer $TOKEN"
post() { curl -sS -o "$WORK/body" -w '%{http_code}' -X POST "$API/$1" -H "$H" -H 'Content-Type: application/json' -d "$2"; }

code=$(post runs '{"name":"gang","workers":3,"gpus_per_worker":2,"sim_duration_s":360000}')
check "submit answers 201 (got $code)" '[ "$code" = 201 ]'
for _ in $(seq 100); do
  [ "$(curl -sS "$API/runs/gang" -H "$H" | jq -r .state)" = running ] && break; sleep 0.1
done
check "the run is running" '[ "$(curl -sS "$API/runs/gang" -H "$H" | jq -r .state)" = running ]'

# Bad bodies change nothing and say what was expected.
code=$(post runs/gang/progress '{"steps":[1,2]}')
check "steps of the wrong length: 400 (got $code)" '[ "$code" = 400 ] && grep -q "list of 3 step counters" "$WORK/body"'
code=$(post runs/gang/progress '{"worker":3,"step":1}')
check "worker out of range: 400 (got $code)" '[ "$code" = 400 ] && grep -q "from 0 to 2" "$WORK/body"'
code=$(post runs/gang/progress '{"steps":[1,2,')
check "malformed JSON: 400 (got $code)" '[ "$code" = 400 ] && grep -q "malformed JSON" "$WORK/body"'
code=$(post runs/nope/progress '{"worker":0,"step":1}')
check "unknown run: 404 (got $code)" '[ "$code" = 404 ]'
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$API/runs/gang/progress" -H "Authorization: Bearer $OPS" -d '{"worker":0,"step":1}')
check "operators cannot report progress: 403 (got $code)" '[ "$code" = 403 ]'

# Reports every ~2-3 service minutes for ~20 minutes: workers 0 and 1 at 100 steps, worker 2 at 10.
for k in $(seq 1 9); do
  post runs/gang/progress "{\"steps\":[$((k*100)),$((k*100)),$((k*10))]}" > /dev/null
  sleep 0.25
done
post runs/gang/progress '{"steps":[1000,1000,100]}' > /dev/null
check "worker 2 is the straggler" \
  '[ "$(jq -c "[.workers[] | .straggler]" "$WORK/body")" = "[false,false,true]" ]'
metrics=$(curl -sS "$API/goodput/metrics" -H "$H")
check "astraeus_runs_with_straggler counts it" \
  "grep -q '^astraeus_runs_with_straggler{namespace=\"ml\"} 1$' <<< \"\$metrics\""
check "nobody is stalled yet" "grep -q '^astraeus_workers_stalled{namespace=\"ml\"} 0$' <<< \"\$metrics\""

# No report for > 30 service minutes (the timeout): all three workers are stalled.
sleep 4
metrics=$(curl -sS "$API/goodput/metrics" -H "$H")
check "three workers stalled after the timeout" \
  "grep -q '^astraeus_workers_stalled{namespace=\"ml\"} 3$' <<< \"\$metrics\""
stalled=$(curl -sS "$API/runs/gang/goodput" -H "$H" | jq '.held_gpu_hours.stalled')
# The timeout (30 minutes) x 6 GPUs = 3 GPU-hours at least moved to stalled.
check "the run's ledger has >= 1 stalled GPU-hour (got $stalled)" "jq -e '. >= 1' <<< '$stalled' > /dev/null"

# Progress again ends the stall.
post runs/gang/progress '{"steps":[2000,2000,2000]}' > /dev/null
check "progress again: nobody stalled" '[ "$(jq -c "[.workers[] | .stalled]" "$WORK/body")" = "[false,false,false]" ]'

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
