#!/usr/bin/env bash
# usage: goodput_restart_test.sh ASTRAEUS_BINARY
# The goodput count across kill -9 (spec/goodput.md "The count": every second between a run's
# submission and its end counted once, in the category it was really in). A pool of 1 machine x
# 2 GPUs, the sim executor at the real clock (startup 2 s, stop 1 s): run a (2 GPUs, 4 s of work)
# is placed at once; run b (2 GPUs) waits for it, is placed when a ends and runs; the service is
# killed (SIGKILL) twice, in the same minute as b's placement (before the minute's count), and
# started again each time; then b is stopped by its owner. By hand, from the store's own times
# (sqlite3): b waited (placed - submitted) x 2 GPU-s, started 2 x 2, and its whole ledger is
# (ended - submitted) x 2 GPU-s; a held (ended - placed) x 2. Before the count was stored with
# each worker, a restart counted the time since the minute's start in b's state at the kill
# (running): b's waiting was 0. Skipped (77) without curl, jq or sqlite3. About 15-35 s (it
# waits for the first 40 s of a minute).
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq sqlite3

cat > "$WORK/cfg.json" <<'CFG'
{"pools": [{"name": "p", "machines": [{"count": 1, "gpus": 2}]}],
 "executor": {"startup_s": 2, "stop_s": 1}}
CFG
start_server "$WORK/cfg.json" || exit 1
admin workspace add ml > /dev/null || exit 1
TOKEN=$(new_token --workspace ml)
H="Authorization: Bearer $TOKEN"
post() { curl -sS -o /dev/null -w "%{http_code}" -X POST "$API/runs${2:-}" -H "$H" -H 'Content-Type: application/json' -d "$1"; }
state() { curl -sS "$API/runs/$1" -H "$H" | jq -r .state; }
until_state() { for _ in $(seq 100); do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }
gpu_s() { curl -sS "$API/runs/$1/goodput" -H "$H" | jq "$2 * 3600 | round"; }

while [ "$(( $(date +%s) % 60 ))" -gt 40 ] || [ "$(( $(date +%s) % 60 ))" -lt 1 ]; do sleep 0.5; done
check "submit a: 201" "[ \"\$(post '{\"name\":\"a\",\"workers\":1,\"gpus_per_worker\":2,\"sim_duration_s\":4}')\" = 201 ]"
check "submit b: 201" "[ \"\$(post '{\"name\":\"b\",\"workers\":1,\"gpus_per_worker\":2,\"sim_duration_s\":3600}')\" = 201 ]"
check "b runs after a" "until_state b running"
sleep 0.5
restart_server KILL "$WORK/cfg.json"
check "after the first SIGKILL: b running" "until_state b running"
sleep 0.5
restart_server KILL "$WORK/cfg.json"
check "after the second SIGKILL: b running" "until_state b running"
check "b is in the minute of its placement (before its first count)" \
  "[ \$(( \$(store_sql \"SELECT a.started_s FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'b'\") / 60 )) = \$(( \$(date +%s) / 60 )) ]"
check "stop b: 202" "[ \"\$(post \"\" /b/stop)\" = 202 ]"
check "b stopped" "until_state b stopped"
read -r b_sub b_end <<< "$(store_sql "SELECT submitted_s, ended_s FROM runs WHERE name = 'b'" | tr '|' ' ')"
b_start=$(store_sql "SELECT a.started_s FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'b' AND number = 1")
read -r a_start a_end <<< "$(store_sql "SELECT a.started_s, a.ended_s FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'a'" | tr '|' ' ')"
echo "b's ledger: $(curl -sS "$API/runs/b/goodput" -H "$H" | jq -c .gpu_hours)"
echo "b: submitted $b_sub, placed $b_start, ended $b_end; a: placed $a_start, ended $a_end"
check "b waited: (placed - submitted) x 2 = $(( (b_start - b_sub) * 2 )) GPU-s, and did wait" \
  "[ \$(( b_start - b_sub )) -gt 0 ] && [ \"\$(gpu_s b .waiting_gpu_hours)\" = $(( (b_start - b_sub) * 2 )) ]"
check "b started: 2 s x 2 GPUs = 4 GPU-s" "[ \"\$(gpu_s b .held_gpu_hours.starting)\" = 4 ]"
check "b's whole ledger: (ended - submitted) x 2 = $(( (b_end - b_sub) * 2 )) GPU-s" \
  "[ \"\$(gpu_s b '(.allocated_gpu_hours + .waiting_gpu_hours)')\" = $(( (b_end - b_sub) * 2 )) ]"
check "b held: (ended - placed) x 2 = $(( (b_end - b_start) * 2 )) GPU-s" \
  "[ \"\$(gpu_s b .allocated_gpu_hours)\" = $(( (b_end - b_start) * 2 )) ]"
check "a held: (ended - placed) x 2 = $(( (a_end - a_start) * 2 )) GPU-s" \
  "[ \"\$(gpu_s a .allocated_gpu_hours)\" = $(( (a_end - a_start) * 2 )) ]"
check "the restart added the stored pending count (log)" "grep -q goodput.resumed '$WORK/serve.1.log'"

echo "goodput_restart_test: $passes passed, $fails failed"
[ "$fails" = 0 ]
