#!/usr/bin/env bash
# usage: local_ddp_test.sh ASTRAEUS_BINARY ASTRA_BINARY SOURCE_DIR
# examples/train_ddp.py (PyTorch DDP, gloo, CPU) as a 2-worker gang of `astraeus serve
# --executor local --gpus 2`: the environment is right (rank, world size, master address and
# port), it is running at its first progress report (--running-at progress), progress arrives
# from its progress files, a lease that is not renewed ends it with SIGTERM -> checkpoint ->
# requeued -> attempt 2 resumes from the checkpointed step (not 0) and finishes; its ledger
# matches its history under the minute rule, category by category.
# Skipped (77) without curl, jq or Debian's python3-torch. About 30 s.
set -u
ASTRAEUS=$1; ASTRA=$2; SRC=$3
HERE=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 -c 'import torch' 2> /dev/null || { echo "SKIP: /usr/bin/python3 has no torch (apt-get install python3-torch)"; exit 77; }
. "$HERE/../service/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 2}]}],
 "time_scale": 60, "lease_s": 60, "local": {"grace_s": 20, "allow_root": true}}
JSON
SERVE_ARGS="--executor local --gpus 2" start_server "$WORK/astraeus.json" || exit 1
admin workspace add cv > /dev/null || exit 1   # first: it wins the GPUs at a lease end
admin workspace add ml > /dev/null || exit 1
export ASTRALYX_API=$API
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv)
export ASTRALYX_TOKEN=$ML
wait_state() {
  for _ in $(seq $(( ${3:-20} * 10 ))); do
    [ "$("$ASTRA" runs show "$1" --json | jq -r .state)" = "$2" ] && return 0
    sleep 0.1
  done
  echo "run $1 is $("$ASTRA" runs show "$1" --json | jq -r .state), not $2"; return 1
}
PROGRESS="$WORK/data-runs/ml/ddp/attempt-1/worker-1.progress"

"$ASTRA" runs submit ddp --workers 2 --running-at progress -- \
  /usr/bin/python3 "$SRC/examples/train_ddp.py" --steps 150 --step-sleep 0.05 > /dev/null
wait_state ddp running 60
check "ddp is running (at its first progress report)" '[ $? = 0 ]'
for _ in $(seq 100); do [ "$(cat "$PROGRESS" 2>/dev/null || echo 0)" -ge 10 ] && break; sleep 0.1; done
check "worker 1's progress file counts steps" '[ "$(cat "$PROGRESS")" -ge 10 ]'
ASTRALYX_TOKEN=$CV "$ASTRA" runs submit quick --workers 2 -- sh -c 'sleep 0.3' > /dev/null
ASTRALYX_TOKEN=$CV wait_state quick succeeded 60
check "cv's run took the GPUs at ddp's lease end" '[ $? = 0 ]'
wait_state ddp succeeded 90
check "ddp succeeded" '[ $? = 0 ]'
"$ASTRA" runs show ddp --json > "$WORK/ddp.json"
check "two attempts" '[ "$(jq .attempts "$WORK/ddp.json")" = 2 ]'
for w in 0 1; do for a in 1 2; do "$ASTRA" runs logs ddp --worker $w --attempt $a > "$WORK/log$w-$a.txt"; done; done
port1=$(sed -n 's/^rank 0 world 2 master 127.0.0.1:\([0-9]*\)$/\1/p' "$WORK/log0-1.txt")
check "rank 0 world 2, master 127.0.0.1 (attempt 1)" '[ -n "$port1" ]'
check "rank 1 world 2, the same master" "grep -qx 'rank 1 world 2 master 127.0.0.1:$port1' '$WORK/log1-1.txt'"
saved=$(sed -n 's/^checkpoint saved at step \([0-9]*\)$/\1/p' "$WORK/log0-1.txt")
resumed=$(sed -n 's/^resumed from step \([0-9]*\)$/\1/p' "$WORK/log0-2.txt")
check "attempt 1 saved a checkpoint on SIGTERM (step $saved)" '[ -n "$saved" ] && [ "$saved" -gt 0 ] && grep -q "stopped at step $saved by SIGTERM" "$WORK/log0-1.txt"'
check "attempt 2 resumed from it ($resumed)" '[ -n "$resumed" ] && [ "$resumed" = "$saved" ]'
check "both ranks resumed from it" "grep -qx 'resumed from step $saved' '$WORK/log1-2.txt'"
check "and finished" "grep -qx 'done at step 150' '$WORK/log0-2.txt'"
check "history: running at progress, preempted, restarted" \
  '[ "$(jq -r "[.history[] | .state + (.cause // \"\")] | join(\" \")" "$WORK/ddp.json")" = "pending starting running stoppingpreemption pending starting running succeeded" ]'
curl -sS "$API/runs/ddp/goodput" -H "Authorization: Bearer $ML" > "$WORK/ddp_goodput.json"
python3 "$HERE/ledger_check.py" "$WORK/ddp.json" "$WORK/ddp_goodput.json" 2 > "$WORK/ledger.txt"
rc=$?; [ $rc = 0 ] || cat "$WORK/ledger.txt"
check "ddp's ledger matches its history, category by category" "[ $rc = 0 ]"
check "with starting and restart time (torch's start-up, counted until the first progress)" \
  "grep -Eq '^starting +expected +[1-9]' '$WORK/ledger.txt' && grep -Eq '^restart +expected +[1-9]' '$WORK/ledger.txt'"

echo "local_ddp: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
