#!/usr/bin/env bash
# usage: stop_and_workers_live_test.sh ASTRAEUS_BINARY
# Two field bugs of `astraeus serve --executor sim`, clock at 60x (1 real s = 1 min):
# 1. A run its owner stops is leaving: no round preempts or places it again. Pool s: 1 machine x
#    2 GPUs, policy astraea-paper (a brand-new job may preempt a "delay job" of its workspace, one
#    whose lease is 120..300 s old). a (1 x 2) runs; b (1 x 2, brand new) waits. a is stopped when
#    its lease is about 180 s old, then c (1 x 2) is submitted, which runs a round: that round must
#    not preempt a (before the fix: run.preempted right after run.stop, then attempt 2 and
#    `count.bug ... not waiting to be placed`). By hand: a ends stopped with 1 attempt after its
#    240 s wind-down (4 real s: the checks of "stopping" have that margin on a loaded machine), b (submitted first) then starts; no run.preempted, no count.bug in the log.
# 2. Every worker's GPUs are on one machine. Pool p: 4 x 8 GPUs: six2 (2 x 6) gets one worker on
#    p-1 and one on p-2 (best fit: p-1 keeps 2 free < 6), 6 GPUs each; pool q (8 + 4 GPUs) holds at
#    most 1 worker of 6, so 2 x 6 there is a 400 naming the shape.
# Skipped (77) without curl or jq. Bounded: about 15 s.
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/cfg.json" <<'CFG'
{"pools": [{"name": "s", "machines": [{"count": 1, "gpus": 2}]},
           {"name": "p", "machines": [{"count": 4, "gpus": 8}]},
           {"name": "q", "machines": [{"count": 1, "gpus": 8}, {"count": 1, "gpus": 4}]}],
 "policy": "astraea-paper", "lease_s": 1800, "time_scale": 60,
 "executor": {"startup_s": 30, "stop_s": 240}}
CFG
start_server "$WORK/cfg.json" || exit 1
admin workspace add ml > /dev/null || exit 1
TOKEN=$(new_token --workspace ml)
H="Authorization: Bearer $TOKEN"
post() { curl -sS -o "$WORK/post.json" -w '%{http_code}' -X POST "$API/runs" -H "$H" -H 'Content-Type: application/json' -d "$1"; }
show() { curl -sS "$API/runs/$1" -H "$H" | jq -r "$2"; }

# --- 1: a stopping run is never preempted or placed again.
check "submit a (1 x 2, pool s): 201" "[ \"\$(post '{\"name\":\"a\",\"pool\":\"s\",\"workers\":1,\"gpus_per_worker\":2,\"sim_duration_s\":36000}')\" = 201 ]"
t0=$(date +%s.%N)
check "submit b (1 x 2, pool s): 201" "[ \"\$(post '{\"name\":\"b\",\"pool\":\"s\",\"workers\":1,\"gpus_per_worker\":2,\"sim_duration_s\":36000}')\" = 201 ]"
sleep "$(awk -v t="$t0" -v now="$(date +%s.%N)" 'BEGIN { d = t + 3 - now; print (d > 0 ? d : 0) }')"
check "control: before the stop a runs attempt 1 (lease ~180 s old), b pending" \
  "[ \"\$(show a '.state + \"/\" + (.attempts|tostring)')/\$(show b .state)\" = running/1/pending ]"
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$API/runs/a/stop" -H "$H" -H 'Content-Type: application/json' --data '')
check "stop a: 202 (got $code)" "[ '$code' = 202 ]"
check "a stopping right after the stop" "[ \"\$(show a .state)\" = stopping ]"
# A submission makes the pool's round run now (as other runs' events did in the field).
check "submit c (1 x 2, pool s): 201" "[ \"\$(post '{\"name\":\"c\",\"pool\":\"s\",\"workers\":1,\"gpus_per_worker\":2,\"sim_duration_s\":60}')\" = 201 ]"
check "a still stopping after that round" "[ \"\$(show a .state)/\$(show a ".history[-1].cause")\" = stopping/owner ]"
for _ in $(seq 150); do [ "$(show a .state)" = stopped ] && [ "$(show b .state)" != pending ] && break; sleep 0.1; done
check "a stopped with 1 attempt" "[ \"\$(show a '.state + \"/\" + (.attempts|tostring)')\" = stopped/1 ]"
check "b placed after a left" "[ \"\$(show b .state)\" != pending ]"
sleep 0.5
check "a never pending again" "[ \"\$(show a .state)\" = stopped ]"
check "no run.preempted for a in the log" "! grep -q 'run.preempted run=a' '$WORK/server.log'"
check "no count.bug in the log" "! grep -q 'count.bug' '$WORK/server.log'"

# --- 2: each worker on one machine.
check "submit six2 (2 x 6, pool p): 201" "[ \"\$(post '{\"name\":\"six2\",\"pool\":\"p\",\"workers\":2,\"gpus_per_worker\":6,\"sim_duration_s\":36000}')\" = 201 ]"
for _ in $(seq 50); do [ "$(show six2 .state)" != pending ] && break; sleep 0.1; done
machines=$(show six2 '[.worker_list[].machine] | join(",")')
check "six2's workers on two machines, one each (got $machines)" "[ '$machines' = 'p-1,p-2' ]"
code=$(post '{"name":"nofit","pool":"q","workers":2,"gpus_per_worker":6,"sim_duration_s":60}')
check "2 x 6 on 8 + 4 GPUs: 400 (got $code)" "[ '$code' = 400 ]"
check "the 400 names the shape and the rule" "jq -r .error '$WORK/post.json' | grep -q 'no placement for 2 x 6 GPUs: each worker'"
check "3 x 4 on 8 + 4 GPUs: 201" "[ \"\$(post '{\"name\":\"fit\",\"pool\":\"q\",\"workers\":3,\"gpus_per_worker\":4,\"sim_duration_s\":60}')\" = 201 ]"

echo "passed $passes, failed $fails"
[ "$fails" -eq 0 ] || { echo "--- server log"; tail -40 "$WORK/server.log"; }
[ "$fails" -eq 0 ]
