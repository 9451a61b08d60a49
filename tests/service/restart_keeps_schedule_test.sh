#!/usr/bin/env bash
# usage: restart_keeps_schedule_test.sh ASTRAEUS_BINARY
# A restart of `astraeus serve` does not change what runs. One workspace, a pool of 1 machine x 2
# GPUs, lease_s 600, the service clock at 60x (1 real second = 1 minute; the clock resumes at the
# stored time after a restart): run a (1 x 2 GPUs) is placed at A and holds the pool; run b (1 x 2
# GPUs, brand new) waits. The server is killed with SIGKILL while a's lease is 120..300 s old (the
# window in which a brand-new job of its workspace may preempt a job whose lease just began, a
# "delay job"), restarted, stopped with SIGTERM and restarted again. By hand: a keeps attempt 1
# and its GPUs until its lease end A + 600 (stored before the first restart), and b starts then,
# not before: a's attempt 1 ends at A + 600 (outcome preempted: not re-selected at its lease end,
# b is the less served), b's attempt 1 starts at A + 600. Times are read from the SQLite store.
# Skipped (77) without curl, jq or sqlite3. Bounded: about 20 s.
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq sqlite3

cat > "$WORK/cfg.json" <<'CFG'
{"pools": [{"name": "p", "machines": [{"count": 1, "gpus": 2}]}],
 "lease_s": 600, "time_scale": 60, "executor": {"startup_s": 30, "stop_s": 30}}
CFG
start_server "$WORK/cfg.json" || exit 1
admin workspace add ml > /dev/null || exit 1
TOKEN=$(new_token --workspace ml)
H="Authorization: Bearer $TOKEN"
post() { curl -sS -o /dev/null -w '%{http_code}' -X POST "$API/runs" -H "$H" -H 'Content-Type: application/json' -d "$1"; }
state() { curl -sS "$API/runs/$1" -H "$H" | jq -r "$2"; }

check "submit a (1 x 2 GPUs): 201" "[ \"\$(post '{\"name\":\"a\",\"workers\":1,\"gpus_per_worker\":2,\"sim_duration_s\":36000}')\" = 201 ]"
check "submit b (1 x 2 GPUs): 201" "[ \"\$(post '{\"name\":\"b\",\"workers\":1,\"gpus_per_worker\":2,\"sim_duration_s\":36000}')\" = 201 ]"
t_submit=$(date +%s.%N)
for _ in $(seq 50); do [ "$(state a .state)" = running ] && break; sleep 0.1; done
check "a running, b pending" "[ \"\$(state a .state)/\$(state b .state)\" = running/pending ]"
read -r A lease_end <<< "$(store_sql "SELECT lease_start_s, lease_end_s FROM runs WHERE name = 'a'" | tr '|' ' ')"
check "a's lease: placed at A = $A, ends at A + 600 = $lease_end" "[ -n '$A' ] && [ '$lease_end' = \$(( A + 600 )) ]"

# SIGKILL 3.5 real seconds after the submissions: a's lease is about 210 s old (120..300).
sleep "$(awk -v t="$t_submit" -v now="$(date +%s.%N)" 'BEGIN { d = t + 3.5 - now; print (d > 0 ? d : 0) }')"
restart_server KILL "$WORK/cfg.json"
check "restart after SIGKILL: listening" "[ -s '$WORK/port' ]"
for k in 1 2 3; do
  check "after SIGKILL ($k): a running attempt 1, b pending" \
    "[ \"\$(state a '.state + \"/\" + (.attempts | tostring)')/\$(state b .state)\" = running/1/pending ]"
  sleep 0.3
done
check "after SIGKILL: a's lease end kept ($lease_end)" "[ \"\$(store_sql \"SELECT lease_end_s FROM runs WHERE name = 'a'\")\" = '$lease_end' ]"
restart_server TERM "$WORK/cfg.json"
check "restart after SIGTERM: listening" "[ -s '$WORK/port' ]"
check "after SIGTERM: a running attempt 1, b pending" \
  "[ \"\$(state a '.state + \"/\" + (.attempts | tostring)')/\$(state b .state)\" = running/1/pending ]"

# a's lease ends at A + 600: b starts then (at most 600 s = 10 real seconds after A).
for _ in $(seq 150); do [ "$(state b .attempts)" = 1 ] && break; sleep 0.1; done
check "one preemption logged in all (a's, at its lease end)" \
  "[ \"\$(cat '$WORK/server.log' '$WORK'/serve.*.log | grep -c 'run.preempted')\" = 1 ]"
a1=$(store_sql "SELECT t.ended_s || '/' || t.outcome FROM attempts t JOIN runs r ON r.id = t.run_id WHERE r.name = 'a' ORDER BY t.number" | tr '\n' ' ')
b1=$(store_sql "SELECT t.started_s FROM attempts t JOIN runs r ON r.id = t.run_id WHERE r.name = 'b' ORDER BY t.number" | tr '\n' ' ')
check "a's only attempt ends at its lease end: '$a1' = '$lease_end/preempted '" "[ '$a1' = '$lease_end/preempted ' ]"
check "b's attempt 1 starts at a's lease end: '$b1' = '$lease_end '" "[ '$b1' = '$lease_end ' ]"
check "b holds the pool" "[ \"\$(state b '.attempts | tostring')\" = 1 ] && [ \"\$(state b .state)\" != pending ]"

echo "restart_keeps_schedule: $passes passed, $fails failed"
[ "$fails" = 0 ]
