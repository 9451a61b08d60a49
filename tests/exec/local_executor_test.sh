#!/usr/bin/env bash
# usage: local_executor_test.sh ASTRAEUS_BINARY ASTRA_BINARY
# `astraeus serve --executor local --gpus 2` on 127.0.0.1 runs real processes (issue 10):
#  1. `astra runs submit hello -- sh -c 'echo hi'` succeeds with "hi" in its log;
#  2. the contract's environment of a 2-worker gang (ranks, world size, master, GPUs, --env);
#  3. a worker that exits 1 fails its gang: the other worker gets the checkpoint signal, the run
#     is retried and ends failed after max_failures (2) attempts;
#  4. a lease that is not renewed (another workspace waits): SIGTERM -> checkpoint -> requeued ->
#     attempt 2 resumes from the checkpointed step and succeeds; the preemption is not a failure;
#  5. the ledger of that run matches its state history under the minute rule, category by
#     category (tests/exec/ledger_check.py); `logs --follow` on a run still waiting for GPUs waits;
#  6. nothing outlives the server: no worker process is left after SIGTERM, and the running
#     worker got the checkpoint signal first (it saved its step: docs/agents.md).
# The service's clock runs 60x (1 s = 1 minute). Skipped (77) without curl or jq. About 30 s.
set -u
ASTRAEUS=$1; ASTRA=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../service/live_server_lib.sh"
live_test_begin curl jq python3
W="$HERE/ckpt_workload.sh"

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 2}]}],
 "time_scale": 60, "lease_s": 60, "max_failures": 2, "local": {"grace_s": 5, "allow_root": true}}
JSON
SERVE_ARGS="--executor local --gpus 2" start_server "$WORK/astraeus.json" || exit 1
# cv first: at a lease end with equal usage, ASTRAEA's water filling visits tenants in this order,
# so cv's waiting run takes the GPUs and ml's lease is not renewed.
admin workspace add cv > /dev/null || exit 1
admin workspace add ml > /dev/null || exit 1
export ASTRALYX_API=$API
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv)
export ASTRALYX_TOKEN=$ML

# wait_state RUN STATE [SECONDS]: polls until the run is in STATE (0) or the time is up (1).
wait_state() {
  for _ in $(seq $(( ${3:-20} * 10 ))); do
    [ "$("$ASTRA" runs show "$1" --json | jq -r .state)" = "$2" ] && return 0
    sleep 0.1
  done
  echo "run $1 is $("$ASTRA" runs show "$1" --json | jq -r .state), not $2"; return 1
}

# 1. hello
"$ASTRA" runs submit hello -- sh -c 'echo hi' > "$WORK/hello.txt"
check "submit hello exits 0" '[ $? = 0 ]'
check "its command is shown as given" "grep -q \"^Command: *sh -c 'echo hi'\$\" '$WORK/hello.txt'"
wait_state hello succeeded
check "hello succeeded" '[ $? = 0 ]'
check "hi in its log" '[ "$("$ASTRA" runs logs hello)" = hi ]'
# Without a command (a local executor runs one): astra's usage line, not the API's field name.
"$ASTRA" runs submit nocmd > /dev/null 2> "$WORK/nocmd.err"
check "submit without a command: exit 2" '[ $? = 2 ]'
check "submit without a command: the usage line: $(cat "$WORK/nocmd.err")" \
  "grep -qxF 'astra runs submit: no command given; usage: astra runs submit NAME [options] -- COMMAND [ARGS...] (or --command STRING)' '$WORK/nocmd.err'"
# Stopping hello, which ended: it says so (exit 0).
check "stop of an ended run says so" \
  "[ \"\$(\"$ASTRA\" runs stop hello)\" = \"run 'hello' already ended (succeeded): nothing to stop\" ]"
check "the log via the API (worker 0, attempt 1)" \
  '[ "$(curl -sS "$API/runs/hello/logs?worker=0&attempt=1" -H "Authorization: Bearer $ML" | jq -r .text)" = hi ]'
check "logs: not for another workspace (404)" \
  '[ "$(curl -s -o /dev/null -w "%{http_code}" "$API/runs/hello/logs" -H "Authorization: Bearer $CV")" = 404 ]'
check "logs: a worker out of range is a 400" \
  '[ "$(curl -s -o /dev/null -w "%{http_code}" "$API/runs/hello/logs?worker=1" -H "Authorization: Bearer $ML")" = 400 ]'
code=$(curl -s -o "$WORK/image.json" -w "%{http_code}" -X POST "$API/runs" -H "Authorization: Bearer $ML" \
  -d '{"name":"img","command":["true"],"image":"pytorch:2"}')
check "image is refused with a 400 that says why" "[ $code = 400 ] && grep -q 'container runtime' '$WORK/image.json'"
code=$(curl -s -o /dev/null -w "%{http_code}" -X POST "$API/runs" -H "Authorization: Bearer $ML" -d '{"name":"nocmd"}')
check "a run without a command is a 400 on the local executor" "[ $code = 400 ]"
code=$(curl -s -o /dev/null -w "%{http_code}" -X POST "$API/runs" -H "Authorization: Bearer $ML" \
  -d '{"name":"badenv","command":["true"],"env":{"1X":"y"}}')
check "a bad env name is a 400" "[ $code = 400 ]"

# 2. the environment of a 2-worker gang, an argv with spaces kept as one argument
"$ASTRA" runs submit envcheck --workers 2 --env FOO=bar --env 'SPACED=a b' -- \
  sh -c 'echo "$RANK $WORLD_SIZE $LOCAL_RANK $NODE_RANK [$CUDA_VISIBLE_DEVICES] $MASTER_ADDR $FOO $ASTRAEUS_RUN $ASTRAEUS_WORKSPACE $ASTRAEUS_WORKER $ASTRAEUS_WORKERS $ASTRAEUS_ATTEMPT"; echo "port $MASTER_PORT"; echo "$SPACED|$1"' \
  arg0 'one arg' > /dev/null
wait_state envcheck succeeded
check "envcheck succeeded" '[ $? = 0 ]'
"$ASTRA" runs logs envcheck --worker 0 > "$WORK/env0.txt"; "$ASTRA" runs logs envcheck --worker 1 > "$WORK/env1.txt"
check "worker 0's environment" "head -1 '$WORK/env0.txt' | grep -qx '0 2 0 0 \[0\] 127.0.0.1 bar envcheck ml 0 2 1'"
check "worker 1's environment" "head -1 '$WORK/env1.txt' | grep -qx '1 2 1 1 \[1\] 127.0.0.1 bar envcheck ml 1 2 1'"
check "one MASTER_PORT for the gang" "[ \"\$(grep port '$WORK/env0.txt')\" = \"\$(grep port '$WORK/env1.txt')\" ] && grep -Eq '^port [0-9]+$' '$WORK/env0.txt'"
check "arguments and env values kept as given" "grep -qx 'a b|one arg' '$WORK/env0.txt'"

# 3. a worker that exits 1 fails the gang; retried; failed after max_failures
"$ASTRA" runs submit crash --workers 2 -- sh "$W" 1000 0.2 1 > /dev/null
wait_state crash failed 30
check "crash ends failed" '[ $? = 0 ]'
check "after max_failures = 2 attempts" '[ "$("$ASTRA" runs show crash --json | jq .attempts)" = 2 ]'
check "astra runs show says how it failed: $("$ASTRA" runs show crash | grep '^State:')" \
  "\"$ASTRA\" runs show crash | grep -qx 'State: *failed (attempt 2 failed: worker 1 exited with code 1)'"
check "worker 1 failed on purpose (attempt 1)" "\"$ASTRA\" runs logs crash --worker 1 --attempt 1 | grep -q 'failing on purpose'"
check "worker 0 was stopped with the checkpoint signal (attempt 1)" \
  "\"$ASTRA\" runs logs crash --worker 0 --attempt 1 | grep -q 'checkpoint saved at step'"
check "worker 0 resumed from its checkpoint in attempt 2" \
  "\"$ASTRA\" runs logs crash --worker 0 --attempt 2 | grep -q 'resumed from step'"

# 4. a lease that is not renewed: ml's run holds both GPUs; cv's run waits; at the lease end
#    (60 service seconds = 1 s) ml's run is preempted, checkpoints, cv's short run goes, and ml's
#    run comes back as attempt 2 from its checkpoint.
"$ASTRA" runs submit train --workers 2 -- sh "$W" 40 0.1 > /dev/null
wait_state train running 10
check "train runs" '[ $? = 0 ]'
sleep 0.3
ASTRALYX_TOKEN=$CV "$ASTRA" runs submit quick --workers 2 -- sh -c 'sleep 0.3' > /dev/null
ASTRALYX_TOKEN=$CV wait_state quick succeeded 20
check "cv's run got the GPUs at the lease end and succeeded" '[ $? = 0 ]'
wait_state train succeeded 30
check "train succeeded" '[ $? = 0 ]'
"$ASTRA" runs show train --json > "$WORK/train.json"
check "train took 2 attempts (one preemption)" '[ "$(jq .attempts "$WORK/train.json")" = 2 ]'
saved=$("$ASTRA" runs logs train --worker 0 --attempt 1 | sed -n 's/^checkpoint saved at step \([0-9]*\)$/\1/p')
resumed=$("$ASTRA" runs logs train --worker 0 --attempt 2 | sed -n 's/^resumed from step \([0-9]*\)$/\1/p')
check "attempt 1 checkpointed on the signal (step $saved)" '[ -n "$saved" ] && [ "$saved" -gt 0 ]'
check "attempt 2 resumed from that step ($resumed)" '[ -n "$resumed" ] && [ "$resumed" = "$saved" ]'
check "and finished" "\"$ASTRA\" runs logs train --worker 0 --attempt 2 | grep -q 'finished at step 40'"
check "the history shows the preemption" \
  '[ "$(jq -r "[.history[] | .state + (.cause // \"\")] | join(\" \")" "$WORK/train.json")" = "pending starting running stoppingpreemption pending starting running succeeded" ]'

# 4b. preemptions never count as failures: "flaky" is preempted twice (cv's runs take the GPUs
#     at its lease ends), fails once in attempt 3 (max_failures = 2: retried) and succeeds in
#     attempt 4. (A limit of 3 placements would have ended it failed at attempt 3.)
"$ASTRA" runs submit flaky --workers 2 -- sh "$W" 100 0.1 1 3 > /dev/null  # 10 s of work: room for 2 lease ends
for k in 1 2; do
  wait_state flaky running 20
  sleep 0.3
  ASTRALYX_TOKEN=$CV "$ASTRA" runs submit "quick$k" --workers 2 -- sh -c 'sleep 0.3' > /dev/null
  ASTRALYX_TOKEN=$CV wait_state "quick$k" succeeded 20
done
wait_state flaky succeeded 40
check "flaky succeeded after 2 preemptions and 1 failure" '[ $? = 0 ]'
"$ASTRA" runs show flaky --json > "$WORK/flaky.json"
check "in 4 attempts" '[ "$(jq .attempts "$WORK/flaky.json")" = 4 ]'
check "attempt 3 failed on purpose" "\"$ASTRA\" runs logs flaky --worker 1 --attempt 3 | grep -q 'failing on purpose'"
check "its history: preempted, preempted, failed, succeeded" \
  '[ "$(jq -r "[.history[] | select(.state == \"stopping\") | .cause] | join(\" \")" "$WORK/flaky.json")" = "preemption preemption failure" ]'
check "--follow ends when the attempt is done" '[ "$(timeout 10 "$ASTRA" runs logs hello --follow)" = hi ]'

# 5. the ledger matches the history under the minute rule
curl -sS "$API/runs/train/goodput" -H "Authorization: Bearer $ML" > "$WORK/train_goodput.json"
python3 "$HERE/ledger_check.py" "$WORK/train.json" "$WORK/train_goodput.json" 2 > "$WORK/ledger.txt"
rc=$?; [ $rc = 0 ] || cat "$WORK/ledger.txt"
check "train's ledger matches its history, category by category" "[ $rc = 0 ]"

# 5b. a time limit (120 service seconds = 2 s of running) and an owner's stop: the checkpoint
#     signal, then stopped; the winding down counts as productive, not preemption.
"$ASTRA" runs submit limited --time-limit 120 -- sh "$W" 100000 0.1 > /dev/null
wait_state limited stopped 20
check "the time limit stopped it" '[ $? = 0 ]'
check "with the checkpoint signal" "\"$ASTRA\" runs logs limited | grep -q 'checkpoint saved at step'"
check "its history: running, stopping (limit), stopped" \
  '[ "$("$ASTRA" runs show limited --json | jq -r "[.history[] | .state + (.cause // \"\")] | join(\" \")")" = "pending starting running stoppinglimit stopped" ]'
"$ASTRA" runs submit owned -- sh "$W" 100000 0.1 > /dev/null
wait_state owned running 10
"$ASTRA" runs stop owned > /dev/null
wait_state owned stopped 20
check "the owner's stop: stopped after the checkpoint signal" \
  "[ \$? = 0 ] && \"$ASTRA\" runs logs owned | grep -q 'checkpoint saved at step'"
"$ASTRA" runs show owned --json > "$WORK/owned.json"
curl -sS "$API/runs/owned/goodput" -H "Authorization: Bearer $ML" > "$WORK/owned_goodput.json"
python3 "$HERE/ledger_check.py" "$WORK/owned.json" "$WORK/owned_goodput.json" 1 > "$WORK/ledger_owned.txt"
rc=$?; [ $rc = 0 ] || cat "$WORK/ledger_owned.txt"
check "owned's ledger matches its history (winding down = productive)" "[ $rc = 0 ]"

# 5c. `logs --follow` on a run that waits for GPUs (both held by another run for ~20 s: three
#     CLI calls under a sanitizer on a loaded machine took more than 5) waits for its first
#     attempt and prints its log (it was a 404 "has not started yet" at once).
"$ASTRA" runs submit blocker --gpus-per-worker 2 -- sleep 20 > /dev/null
"$ASTRA" runs submit waiter -- sh -c 'echo waited for the GPUs' > /dev/null
check "the waiter is pending while the blocker runs" \
  '[ "$("$ASTRA" runs show waiter --json | jq -r .state)" = pending ]'
timeout 40 "$ASTRA" runs logs waiter --follow > "$WORK/waiter.txt" 2>&1
check "logs --follow waits for a pending run's first attempt and prints its log" \
  "[ \$? = 0 ] && [ \"\$(cat '$WORK/waiter.txt')\" = 'waited for the GPUs' ]"

# 6. nothing outlives the server
"$ASTRA" runs submit long -- sh "$W" 100000 1 > /dev/null
wait_state long running 10
pg=$(pgrep -f "$W 100000 1" | head -1)
check "the worker's process group is alive" "[ -n '$pg' ] && kill -0 $pg 2>/dev/null"
kill -TERM "$SERVER_PID"; for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
check "the server stopped" "! kill -0 $SERVER_PID 2>/dev/null"
sleep 0.2
check "no worker process is left" "! kill -0 $pg 2>/dev/null && ! pgrep -f '$W 100000 1' > /dev/null"
check "the running worker got the checkpoint signal when the server stopped" \
  "grep -q 'checkpoint saved at step' '$WORK/data-runs/ml/long/attempt-1/worker-0.log'"
SERVER_PID=""

echo "local_executor: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
