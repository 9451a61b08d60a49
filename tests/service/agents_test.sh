#!/bin/bash
# End-to-end tests of the node agents (docs/agents.md), CPU only, on 127.0.0.1: `astraeus serve
# --executor agents` and three `astraeus agent --gpus 2` processes (a1, a2, a3), running
# tests/service/agent_worker.sh as 2-worker gangs of 2 GPUs each (so each gang spans 2 machines).
# Usage: agents_test.sh ASTRAEUS ASTRA SCENARIO, SCENARIO one of
#   gang          a gang runs to success, its environment right (ranks, world size, master
#                 address and port, GPUs); agent and non-agent tokens kept apart
#   drain         draining the machine of a running gang: the checkpoint signal, a preemption
#                 (not a failure), the gang resumes elsewhere from its checkpoint, the drained
#                 machine stays empty; undrain makes it take work again
#   agent_kill    kill -9 of an agent mid-run: the machine is lost, the run fails and finishes on
#                 the others; the orphaned worker processes are killed when the agent returns
#   service_kill  kill -9 of the service mid-run: after its restart the agents re-attach, the
#                 workers keep running (adopted, same attempt), no GPU-second lost or counted twice
#   logs          a gang's workers print known lines (worker 1 a burst of many shipping chunks):
#                 `astra runs logs` (plain and --follow) and GET /runs/{run}/logs return exactly
#                 them, read from the service's copies (the agents ship them; 4 KiB chunks)
#   logs_service_kill  the same with a kill -9 of the service mid-run and a restart: no line
#                 lost or duplicated
#   interruptions one run through three interruptions, as a user met them (issue 19): an agent
#                 kill -9 (machine lost: failure), a drain (preemption) and an agent restart
#                 (its workers killed: failure); the run's failure, preemption and restart
#                 GPU-seconds equal the gaps this test measures on its own clock (a poller
#                 records each state change), within 2 s per event x 4 GPUs; each worker's
#                 checkpoint takes 3 s, so every interruption holds the GPUs a few seconds
#   ddp_drain     the example PyTorch DDP script (examples/train_ddp.py, gloo on CPU) as the gang:
#                 ranks and master right, a drain -> checkpoint -> resumed from that step on the
#                 other machines -> done (skipped, 77, without python3-torch)
# Exit 0 pass, 1 fail, 77 skip (curl or python3 missing).
set -u
ASTRAEUS=$1
ASTRA=$2
SCENARIO=$3
HERE=$(cd "$(dirname "$0")" && pwd)
for tool in curl python3; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
if [ "$SCENARIO" = ddp_drain ] && ! /usr/bin/python3 -c "import torch" 2> /dev/null; then
  echo "SKIP: /usr/bin/python3 cannot import torch (Debian's python3-torch)"; exit 77
fi
WORK=$(mktemp -d /tmp/astraeus-agents.XXXXXX)
# shellcheck source=live_server_lib.sh
source "$HERE/live_server_lib.sh"
declare -A AGENT_PID=()
declare -A AGENT_TOKEN=()  # one agent token per machine: a token registers one machine name

cleanup() {
  local p
  [ -n "${POLLER:-}" ] && kill "$POLLER" 2> /dev/null
  for p in "${AGENT_PID[@]}"; do kill -TERM "$p" 2> /dev/null || true; done
  stop_all
  for p in "${AGENT_PID[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2> /dev/null || true
  done
  # Nothing a test started may outlive it: worker groups recorded by the agents.
  for f in "$WORK"/agents/agent-*.state; do
    [ -f "$f" ] || continue
    while read -r pg _; do [ -n "$pg" ] && kill -KILL -- "-$pg" 2> /dev/null; done < "$f"
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
  echo "FAIL ($SCENARIO): $*"
  echo "--- server log"; grep -v http.request "$WORK/server.log" | tail -40
  for n in a1 a2 a3; do echo "--- agent $n"; tail -15 "$WORK/$n.log" 2> /dev/null; done
  exit 1
}

# wait_until SECONDS 'COMMAND': polls every 0.2 s until COMMAND succeeds; 1 on timeout.
wait_until() {
  local end=$((SECONDS + $1))
  while [ $SECONDS -lt $end ]; do
    eval "$2" && return 0
    sleep 0.2
  done
  return 1
}

# jq_py TOKEN PATH 'PYEXPR': GET $API/PATH, prints PYEXPR of the JSON answer `d`.
jq_py() {
  curl -s -H "Authorization: Bearer $1" "$API/$2" |
    python3 -c "import json,sys; d=json.load(sys.stdin); print($3)" 2> /dev/null
}
run_field() { jq_py "$WT" "runs/$1" "$2"; }
post() { curl -s -o "$WORK/post.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $1" "$API/$2" -d "$3"; }

start_agent() {
  local root=()
  [ "$(id -u)" = 0 ] && root=(--allow-root)  # CI runs as root: workers as root, said explicitly
  [ -n "${AGENT_TOKEN[$1]:-}" ] || AGENT_TOKEN[$1]=$(new_token --agent) || fail "agent token for $1"
  "$ASTRAEUS" agent --api "http://127.0.0.1:$SERVER_PORT" --token "${AGENT_TOKEN[$1]}" --name "$1" --gpus 2 \
    --work-dir "$WORK/agents" "${root[@]}" ${AGENT_ARGS:-} >> "$WORK/$1.log" 2>&1 &
  AGENT_PID[$1]=$!
}

submit() {  # submit NAME STEPS PAUSE
  local code
  code=$(post "$WT" runs "{\"name\": \"$1\", \"workers\": 2, \"gpus_per_worker\": 2,
          \"command\": \"$HERE/agent_worker.sh $2 $3\"}")
  [ "$code" = 201 ] || fail "submit $1: HTTP $code $(cat "$WORK/post.out")"
}

# ledger_of RUN: the run's ledger recomputed from its history to the second (every state for the
# seconds until the next, tests/exec/ledger_check.py; 4 GPUs: 2 workers x 2) must match the
# service's, category by category (the stopping, failed and waiting-again seconds of the drain or
# the lost machine included; under the old minute rule they went to the state at each count).
ledger_of() {
  local run=$1
  curl -s -H "Authorization: Bearer $WT" "$API/runs/$run" > "$WORK/$run.run.json"
  curl -s -H "Authorization: Bearer $WT" "$API/runs/$run/goodput" > "$WORK/$run.goodput.json"
  python3 "$HERE/../exec/ledger_check.py" "$WORK/$run.run.json" "$WORK/$run.goodput.json" 4 > "$WORK/$run.ledger.txt" ||
    fail "$run's ledger does not match its history: $(cat "$WORK/$run.ledger.txt")"
  echo "$run's ledger (to the second, from its history):"; cat "$WORK/$run.ledger.txt"
}

progress_of() {  # progress_of RUN ATTEMPT WORKER: the step in its progress file (0: none)
  cat "$WORK/agents/progress/ml/$1/attempt-$2/worker-$3" 2> /dev/null || echo 0
}
log_of() { cat "$WORK/agents/logs/ml/$1/attempt-$2/worker-$3.log" 2> /dev/null; }

# expected_log WORKER LINES: what tests/service/agent_log_worker.sh LINES prints as that worker.
expected_log() {
  python3 -c '
import sys
w, n = int(sys.argv[1]), int(sys.argv[2])
pad = " " + "0" * 280 if w == 1 else ""
out = []
for i in range(1, n + 1):
    out.append("worker %d line %d%s\n" % (w, i, pad))
    if w == 1 and i == 5:
        out += ["worker 1 burst %d%s\n" % (k, pad) for k in range(1, 101)]
if w == 1:
    out += ["worker 1 tail %d%s\n" % (k, pad) for k in range(1, 301)]
out.append("worker %d done on stderr\n" % w)
sys.stdout.write("".join(out))' "$1" "$2"
}
# rest_log RUN WORKER: the log's text from GET /runs/RUN/logs (fails unless "done").
rest_log() {
  curl -s -H "Authorization: Bearer $WT" "$API/runs/$1/logs?worker=$2" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["done"], d; sys.stdout.write(d["text"])'
}
# check_logs RUN LINES: both workers' logs, by the CLI and the REST call, are exactly the lines.
check_logs() {
  local w
  for w in 0 1; do
    expected_log $w "$2" > "$WORK/want.$w"
    rest_log "$1" $w > "$WORK/rest.$w" || fail "GET runs/$1/logs?worker=$w"
    cmp -s "$WORK/want.$w" "$WORK/rest.$w" || fail "REST log of worker $w differs: $(diff "$WORK/want.$w" "$WORK/rest.$w" | head -5 | cut -c1-80)"
    ASTRALYX_API=$API ASTRALYX_TOKEN=$WT "$ASTRA" runs logs "$1" --worker $w > "$WORK/cli.$w" || fail "astra runs logs $1 --worker $w"
    cmp -s "$WORK/want.$w" "$WORK/cli.$w" || fail "astra runs logs of worker $w differs: $(diff "$WORK/want.$w" "$WORK/cli.$w" | head -5 | cut -c1-80)"
    # The service's copy, not the agents' files: those are under $WORK/agents.
    cmp -s "$WORK/want.$w" "$WORK/data/runs/ml/$1/attempt-1/worker-$w.log" || fail "the service's copy of worker $w"
  done
}

# --- the cluster: a service and three agents ------------------------------------------------------
cat > "$WORK/cfg.json" << 'EOF'
{"pools": [{"name": "default", "machines": []}], "lease_s": 3600,
 "agents": {"heartbeat_s": 1, "lost_after_s": 4}}
EOF
SERVE_ARGS="--executor agents"
case "$SCENARIO" in logs*) AGENT_ARGS="--log-chunk-bytes 4096" ;; esac
start_server "$WORK/cfg.json" || fail "the service did not start"
admin workspace add ml > /dev/null || fail "workspace add"
WT=$(new_token --workspace ml) || fail "workspace token"
OT=$(new_token --operator) || fail "operator token"
for n in a1 a2 a3; do start_agent $n; done
AT=${AGENT_TOKEN[a1]}  # a1's agent token (a token registers one machine)
wait_until 20 '[ "$(jq_py "$OT" machines "sum(1 for m in d[\"machines\"] if m[\"state\"] == \"up\")")" = 3 ]' ||
  fail "three agents did not register: $(curl -s -H "Authorization: Bearer $OT" "$API/machines")"

case "$SCENARIO" in
gang)
  # Tokens: agent tokens call only the agent endpoints, and only agent tokens call them.
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $AT" "$API/runs")
  [ "$code" = 403 ] || fail "an agent token listed runs (HTTP $code)"
  code=$(post "$WT" agent/heartbeat '{"name": "a1", "session": "x"}')
  [ "$code" = 403 ] || fail "a workspace token called an agent endpoint (HTTP $code)"
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $WT" "$API/machines")
  [ "$code" = 403 ] || fail "a workspace token listed machines (HTTP $code)"
  # An agent token registers one machine: a1's token naming another machine is refused (403,
  # saying which machine it is bound to), as agent and as a raw request; a1 itself re-registering
  # with its token (same name) is fine.
  code=$(post "$AT" agent/register '{"name": "a9", "pool": "default", "gpus": 2, "session": "s9", "workers": []}')
  [ "$code" = 403 ] || fail "a1's token registered machine a9 (HTTP $code $(cat "$WORK/post.out"))"
  grep -q "is bound to machine 'a1'" "$WORK/post.out" || fail "the refusal does not say the binding: $(cat "$WORK/post.out")"
  code=$(post "$AT" agent/heartbeat '{"name": "a2", "session": "x", "commands_acked": 0, "events": []}')
  [ "$code" = 403 ] || fail "a1's token heartbeated as a2 (HTTP $code)"
  "$ASTRAEUS" agent --api "http://127.0.0.1:$SERVER_PORT" --token "$AT" --name a4 --gpus 2 \
    --work-dir "$WORK/agents-a4" --allow-root >> "$WORK/a4.log" 2>&1 &
  AGENT_PID[a4]=$!
  wait_until 10 'grep -q "agent.register_refused.*403.*bound to machine .a1." "$WORK/a4.log" 2> /dev/null' ||
    fail "a second agent with a1's token was not refused: $(tail -5 "$WORK/a4.log")"
  kill -TERM "${AGENT_PID[a4]}"
  [ "$(jq_py "$OT" machines "sorted(m['name'] for m in d['machines'])")" = "['a1', 'a2', 'a3']" ] ||
    fail "machines after the refused agent: $(jq_py "$OT" machines "[m['name'] for m in d['machines']]")"
  # a1 restarted: the same name registers again with its token (a new session).
  kill -TERM "${AGENT_PID[a1]}"
  wait_until 10 '! kill -0 "${AGENT_PID[a1]}" 2> /dev/null' || fail "a1 did not stop"
  start_agent a1
  wait_until 20 '[ "$(grep -c "agent.registered" "$WORK/a1.log")" = 2 ] &&
    [ "$(jq_py "$OT" machines "sum(1 for m in d[\"machines\"] if m[\"state\"] == \"up\")")" = 3 ]' ||
    fail "a1 did not register again with its own token: $(tail -3 "$WORK/a1.log")"
  submit g 5 0.2
  wait_until 30 '[ "$(run_field g "d[\"state\"]")" = succeeded ]' || fail "g did not succeed: $(run_field g d)"
  [ "$(run_field g "d[\"attempts\"]")" = 1 ] || fail "g took more than one attempt"
  # Run 1, attempt 1: MASTER_PORT = 29500 + (1 * 7 + 1) % 2000 = 29508; each worker has its
  # machine's two GPUs; one worker per machine, so LOCAL_RANK 0 for both.
  for w in 0 1; do
    want="rank $w world 2 master 127.0.0.1:29508 gpus 0,1 local_rank 0 node_rank $w attempt 1"
    log_of g 1 $w | grep -qx "$want" || fail "worker $w's environment: want '$want', log: $(log_of g 1 $w)"
    log_of g 1 $w | grep -qx "done at step 5" || fail "worker $w did not finish its 5 steps"
    [ "$(progress_of g 1 $w)" = 5 ] || fail "worker $w's progress file"
  done
  hosts=$(grep -l "agent.launched run=g " "$WORK"/a?.log | wc -l)
  [ "$hosts" = 2 ] || fail "the gang ran on $hosts machines, not 2"
  ;;

drain)
  submit d 400 0.1
  wait_until 30 '[ "$(run_field d "d[\"state\"]")" = running ] && [ "$(progress_of d 1 0)" -ge 5 ]' ||
    fail "d is not running with progress"
  M=$(run_field d "d[\"worker_list\"][0][\"machine\"]")
  [ -n "$M" ] || fail "no machine for worker 0"
  out=$(ASTRALYX_API=$API ASTRALYX_TOKEN=$OT "$ASTRA" machines drain "$M") || fail "astra machines drain: $out"
  echo "$out" | grep -q "1 run(s) stopped" || fail "drain answer: $out"
  wait_until 30 '[ "$(run_field d "d[\"attempts\"]")" = 2 ] && [ "$(run_field d "d[\"state\"]")" = running ]' ||
    fail "d did not resume: $(run_field d d)"
  for w in 0 1; do
    k=$(log_of d 1 $w | sed -n 's/^checkpoint saved at step \([0-9]*\)$/\1/p')
    [ -n "$k" ] && [ "$k" -gt 0 ] || fail "worker $w saved no checkpoint on the signal: $(log_of d 1 $w)"
    wait_until 10 'log_of d 2 $w | grep -qx "resumed from step $k"' ||
      fail "attempt 2 worker $w did not resume from step $k: $(log_of d 2 $w)"
    log_of d 2 $w | grep -q "attempt 2" || fail "attempt 2 environment"
  done
  grep -q "run.preempted run=d" "$WORK/server.log" || fail "the drain was not a preemption"
  ! grep -q "run.failed run=d" "$WORK/server.log" || fail "the drain counted as a failure"
  line=$(jq_py "$OT" machines "[(m['state'], m['gpus_used'], len(m['runs'])) for m in d['machines'] if m['name'] == '$M'][0]")
  [ "$line" = "('drained', 0, 0)" ] || fail "the drained machine is not empty: $line"
  ASTRALYX_API=$API ASTRALYX_TOKEN=$OT "$ASTRA" machines list | grep -q "^$M .*drained" || fail "astra machines list"
  ASTRALYX_API=$API ASTRALYX_TOKEN=$OT "$ASTRA" machines undrain "$M" > /dev/null || fail "undrain"
  [ "$(jq_py "$OT" machines "[m['state'] for m in d['machines'] if m['name'] == '$M'][0]")" = up ] || fail "undrain: not up"
  post "$WT" runs/d/stop '{}' > /dev/null
  wait_until 30 '[ "$(run_field d "d[\"state\"]")" = stopped ]' || fail "d did not stop"
  ledger_of d
  ;;

agent_kill)
  submit k 60 0.1
  wait_until 30 '[ "$(run_field k "d[\"state\"]")" = running ] && [ "$(progress_of k 1 0)" -ge 3 ]' ||
    fail "k is not running with progress"
  M=$(run_field k "d[\"worker_list\"][0][\"machine\"]")
  pgid=$(awk '/ run 1 attempt 1 / {print $1; exit}' "$WORK/agents/agent-$M.state")
  [ -n "$pgid" ] || fail "no worker group in $M's state file"
  kill -KILL "${AGENT_PID[$M]}"
  sleep 1
  # The worker died with its agent: with the sandbox (as root) its pid namespace goes with its
  # init at once; without it, its helper in the same group is an orphan now.
  if grep -q "sandbox.protection name=pid_namespace on=yes" "$WORK/$M.log"; then
    wait_until 10 '! kill -0 -- "-$pgid" 2> /dev/null' || fail "the sandboxed worker's group $pgid outlived its agent"
  else
    kill -0 -- "-$pgid" 2> /dev/null || fail "expected an orphan left in group $pgid"
  fi
  wait_until 30 '[ "$(run_field k "d[\"attempts\"]")" -ge 2 ]' || fail "k was not placed again"
  grep -q "machine.lost machine=$M" "$WORK/server.log" || fail "$M was not declared lost"
  grep -q "run.failed run=k" "$WORK/server.log" || fail "k did not fail with its machine"
  start_agent "$M"
  wait_until 15 '! kill -0 -- "-$pgid" 2> /dev/null' || fail "the orphaned group $pgid survived the agent's return"
  wait_until 60 '[ "$(run_field k "d[\"state\"]")" = succeeded ]' || fail "k did not finish: $(run_field k d)"
  # The returned agent ships the rest of its killed worker's log (agent-<name>.logs).
  wait_until 15 'cmp -s "$WORK/agents/logs/ml/k/attempt-1/worker-0.log" "$WORK/data/runs/ml/k/attempt-1/worker-0.log"' ||
    fail "the service's copy of the killed worker's log is not the agent's file"
  grep -q "agent.logs_resumed streams=" "$WORK/$M.log" || fail "the returned agent did not take up its logs"
  wait_until 10 '[ "$(jq_py "$OT" machines "[m[\"state\"] for m in d[\"machines\"] if m[\"name\"] == \"$M\"][0]")" = up ]' ||
    fail "$M is not up again"
  ledger_of k
  ;;

interruptions)
  # Each worker's checkpoint takes 3 s on the signal: every interruption holds the GPUs a while.
  code=$(post "$WT" runs "{\"name\": \"x\", \"workers\": 2, \"gpus_per_worker\": 2,
          \"command\": \"$HERE/agent_worker.sh 100000 0.1 '' 3\"}")
  [ "$code" = 201 ] || fail "submit x: HTTP $code $(cat "$WORK/post.out")"
  python3 "$HERE/run_state_poller.py" "$API" "$WT" x "$WORK/x.states" &
  POLLER=$!
  running_on() {  # running_on ATTEMPT: waits until the run runs that attempt (then 2 s more)
    local att=$1
    wait_until 60 '[ "$(run_field x "d[\"state\"] + \" \" + str(d[\"attempts\"])")" = "running $att" ]' ||
      fail "x is not running attempt $att: $(run_field x d)"
    sleep 2
  }
  running_on 1
  # 1. kill -9 of the agent of worker 0's machine: lost after lost_after_s, the run fails and is
  #    placed again on the other two machines.
  M=$(run_field x "d['worker_list'][0]['machine']")
  kill -KILL "${AGENT_PID[$M]}"
  running_on 2
  start_agent "$M"   # back (it kills its orphans), idle
  wait_until 20 '[ "$(jq_py "$OT" machines "[m[\"state\"] for m in d[\"machines\"] if m[\"name\"] == \"$M\"][0]")" = up ]' ||
    fail "$M did not come back"
  # 2. a drain of worker 0's machine: a preemption; placed again on the other two.
  D=$(run_field x "d['worker_list'][0]['machine']")
  ASTRALYX_API=$API ASTRALYX_TOKEN=$OT "$ASTRA" machines drain "$D" > /dev/null || fail "drain $D"
  running_on 3
  ASTRALYX_API=$API ASTRALYX_TOKEN=$OT "$ASTRA" machines undrain "$D" > /dev/null || fail "undrain $D"
  # 3. a restart of the agent of worker 1's machine (SIGTERM kills its workers at once): a failure.
  R=$(run_field x "d['worker_list'][1]['machine']")
  kill -TERM "${AGENT_PID[$R]}"
  wait_until 10 '! kill -0 "${AGENT_PID[$R]}" 2> /dev/null' || fail "agent $R did not stop"
  start_agent "$R"
  running_on 4
  post "$WT" runs/x/stop '{}' > /dev/null
  wait_until 30 '[ "$(run_field x "d[\"state\"]")" = stopped ]' || fail "x did not stop"
  wait "$POLLER"
  curl -s -H "Authorization: Bearer $WT" "$API/runs/x/goodput" > "$WORK/x.goodput.json"
  python3 "$HERE/interruptions_check.py" "$WORK/x.states" "$WORK/x.goodput.json" 4 2 failure preemption failure ||
    fail "x's failure, preemption and restart time against the gaps measured here"
  ledger_of x
  ;;

service_kill)
  submit s 80 0.1
  wait_until 30 '[ "$(run_field s "d[\"state\"]")" = running ] && [ "$(progress_of s 1 0)" -ge 3 ]' ||
    fail "s is not running with progress"
  groups=$(awk '/ run 1 attempt 1 / {print $1}' "$WORK"/agents/agent-a?.state | sort | tr '\n' ' ')
  [ "$(echo $groups | wc -w)" = 2 ] || fail "want 2 worker groups, got '$groups'"
  kill -KILL "$SERVER_PID"
  sleep 2
  for g in $groups; do kill -0 -- "-$g" 2> /dev/null || fail "worker group $g died with the service"; done
  "$ASTRAEUS" serve --executor agents --config "$WORK/cfg.json" --data-dir "$WORK/data" \
    --listen "127.0.0.1:$SERVER_PORT" >> "$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  wait_until 60 '[ "$(run_field s "d[\"state\"]")" = succeeded ]' || fail "s did not finish: $(run_field s d)"
  [ "$(run_field s "d[\"attempts\"]")" = 1 ] || fail "s was restarted (attempts $(run_field s "d['attempts']"))"
  for w in 0 1; do
    ! log_of s 1 $w | grep -q "resumed" || fail "worker $w restarted"
    log_of s 1 $w | grep -qx "done at step 80" || fail "worker $w did not finish: $(log_of s 1 $w)"
  done
  [ "$(cat "$WORK"/a?.log | grep -c "adopted=1")" -ge 2 ] || fail "the agents did not re-attach their workers"
  # Every GPU-second from submission to the end counted once: 4 GPUs x (end - submit).
  held=$(jq_py "$WT" runs/s/goodput "round(d['allocated_gpu_hours'] * 3600)")
  span=$(jq_py "$WT" runs/s "__import__('calendar').timegm(__import__('time').strptime(d['ended_at'], '%Y-%m-%dT%H:%M:%SZ')) - __import__('calendar').timegm(__import__('time').strptime(d['submitted_at'], '%Y-%m-%dT%H:%M:%SZ'))")
  [ "$held" = $((4 * span)) ] || fail "held GPU-seconds $held, want 4 x $span = $((4 * span))"
  ;;

logs)
  code=$(post "$WT" runs "{\"name\": \"l\", \"workers\": 2, \"gpus_per_worker\": 2,
          \"command\": [\"$HERE/agent_log_worker.sh\", \"30\", \"0.1\"]}")
  [ "$code" = 201 ] || fail "submit l: HTTP $code $(cat "$WORK/post.out")"
  wait_until 30 '[ "$(run_field l "d[\"state\"]")" = running ]' || fail "l is not running: $(run_field l d)"
  ASTRALYX_API=$API ASTRALYX_TOKEN=$WT timeout 60 "$ASTRA" runs logs l --worker 1 --follow > "$WORK/follow.1" &
  follow=$!
  # POST /agent/logs: agent tokens only; a worker's log only from the machine it is placed on
  # (run l is run 1); at most 512 KiB of log bytes per request.
  code=$(post "$WT" agent/logs '{"name": "a1", "chunks": []}')
  [ "$code" = 403 ] || fail "a workspace token shipped logs (HTTP $code)"
  # The machine that runs no worker of l, from the agents' own launch lines (the machines list
  # shows no runs at all once l has ended, which a loaded machine reached first).
  wait_until 30 '[ "$(cat "$WORK"/a?.log | grep -c "agent.launched run=l attempt=1")" = 2 ]' ||
    fail "l's two workers were not launched"
  other=$(for a in a1 a2 a3; do grep -q "agent.launched run=l attempt=1" "$WORK/$a.log" || echo "$a"; done | head -1)
  [ -n "$other" ] || fail "no machine without a worker of l"
  code=$(post "${AGENT_TOKEN[$other]}" agent/logs "{\"name\": \"$other\", \"chunks\": [{\"run\": 1, \"attempt\": 1, \"worker\": 0,
          \"offset\": 0, \"data\": \"eHh4\"}]}")
  [ "$code" = 200 ] && grep -q '"error":"worker 0 of run .l. is not placed on' "$WORK/post.out" ||
    fail "a machine not placed wrote a worker's log: HTTP $code $(cat "$WORK/post.out")"
  python3 -c 'import base64,json; print(json.dumps({"name": "a1", "chunks": [{"run": 1, "attempt": 1, "worker": 0,
    "offset": 0, "data": base64.b64encode(b"x" * (513 << 10)).decode()}]}))' > "$WORK/big.json"
  code=$(curl -s -o "$WORK/post.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $AT" "$API/agent/logs" \
         --data-binary @"$WORK/big.json")
  [ "$code" = 413 ] || fail "513 KiB of logs in one request: HTTP $code $(head -c 200 "$WORK/post.out")"
  wait_until 30 '[ "$(run_field l "d[\"state\"]")" = succeeded ]' || fail "l did not succeed: $(run_field l d)"
  wait "$follow" || fail "astra runs logs --follow failed"
  expected_log 1 30 > "$WORK/want.f"
  cmp -s "$WORK/want.f" "$WORK/follow.1" || fail "astra runs logs --follow differs: $(diff "$WORK/want.f" "$WORK/follow.1" | head -5 | cut -c1-80)"
  check_logs l 30
  [ "$(stat -c %s "$WORK/want.1")" -gt 30000 ] || fail "worker 1's log is not many 4 KiB chunks"
  ;;

logs_service_kill)
  code=$(post "$WT" runs "{\"name\": \"lk\", \"workers\": 2, \"gpus_per_worker\": 2,
          \"command\": [\"$HERE/agent_log_worker.sh\", \"60\", \"0.3\"]}")
  [ "$code" = 201 ] || fail "submit lk: HTTP $code $(cat "$WORK/post.out")"
  wait_until 30 '[ "$(jq_py "$WT" "runs/lk/logs?worker=1" "d[\"size\"]")" -gt 30000 ] 2> /dev/null' ||
    fail "worker 1's burst did not reach the service"
  # 18 s of printing (0.3 s a line): still printing now, so shipments fail while the service is
  # down (at 0.1 s a line a loaded machine saw the run end before the kill).
  [ "$(run_field lk "d[\"state\"]")" = running ] || fail "lk ended before the service was killed"
  kill -KILL "$SERVER_PID"
  sleep 2  # the workers print on, the agents' requests fail
  "$ASTRAEUS" serve --executor agents --config "$WORK/cfg.json" --data-dir "$WORK/data" \
    --listen "127.0.0.1:$SERVER_PORT" >> "$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  wait_until 60 '[ "$(run_field lk "d[\"state\"]")" = succeeded ]' || fail "lk did not finish: $(run_field lk d)"
  [ "$(run_field lk "d[\"attempts\"]")" = 1 ] || fail "lk was restarted"
  grep -q "agent.logs_failed" "$WORK"/a?.log || fail "no log shipment failed while the service was down"
  check_logs lk 60
  ;;

ddp_drain)
  ROOT=$(cd "$HERE/../.." && pwd)
  code=$(post "$WT" runs "{\"name\": \"ddp\", \"workers\": 2, \"gpus_per_worker\": 2,
          \"command\": [\"/usr/bin/python3\", \"$ROOT/examples/train_ddp.py\", \"--steps\", \"300\",
                      \"--step-sleep\", \"0.05\"]}")
  [ "$code" = 201 ] || fail "submit ddp: HTTP $code $(cat "$WORK/post.out")"
  wait_until 60 '[ "$(progress_of ddp 1 0)" -ge 20 ]' || fail "ddp made no progress: $(log_of ddp 1 0)"
  for w in 0 1; do
    log_of ddp 1 $w | grep -qx "rank $w world 2 master 127.0.0.1:29508" || fail "ddp rank $w: $(log_of ddp 1 $w)"
  done
  M=$(run_field ddp "d[\"worker_list\"][0][\"machine\"]")
  ASTRALYX_API=$API ASTRALYX_TOKEN=$OT "$ASTRA" machines drain "$M" > /dev/null || fail "drain $M"
  wait_until 60 'log_of ddp 1 0 | grep -q "^checkpoint saved at step "' || fail "no checkpoint: $(log_of ddp 1 0)"
  k=$(log_of ddp 1 0 | sed -n 's/^checkpoint saved at step \([0-9]*\)$/\1/p' | tail -1)
  [ "$k" -gt 0 ] || fail "checkpoint at step '$k'"
  wait_until 90 '[ "$(run_field ddp "d[\"state\"]")" = succeeded ]' || fail "ddp did not finish: $(run_field ddp d)"
  [ "$(run_field ddp "d[\"attempts\"]")" = 2 ] || fail "ddp took $(run_field ddp "d['attempts']") attempts, want 2"
  log_of ddp 2 0 | grep -qx "resumed from step $k" || fail "attempt 2 did not resume from $k: $(log_of ddp 2 0)"
  log_of ddp 2 0 | grep -qx "done at step 300" || fail "attempt 2 did not finish"
  [ "$(jq_py "$OT" machines "[m['gpus_used'] for m in d['machines'] if m['name'] == '$M'][0]")" = 0 ] || fail "$M not empty"
  ;;

*) echo "unknown scenario $SCENARIO"; exit 2 ;;
esac
echo "PASS ($SCENARIO)"
