#!/bin/bash
# usage: agents_cli_test.sh ASTRAEUS
# `astraeus agent` and `astraeus serve` options a new user gets wrong, on 127.0.0.1, CPU only:
# - `--api` with /v1 (ASTRALYX_API's form) registers like the bare origin; another path exits 2
#   naming the value;
# - a bad token, a revoked token (at registration and while registered) and a token bound to
#   another machine name each make the agent exit 3 within seconds, the service's reason in its
#   output (it retried every second forever before);
# - `--log-level loud` exits 2 with CLI11's message naming the levels, for serve and agent.
# Skipped (77) without curl, python3 or timeout.
set -u
ASTRAEUS=$1
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=live_server_lib.sh
source "$HERE/live_server_lib.sh"
live_test_begin curl python3 timeout
root=(); [ "$(id -u)" = 0 ] && root=(--allow-root)

# agent_run LOG ARGS...: runs an agent in the foreground for at most 15 s; prints its exit status.
agent_run() {
  local log=$1; shift
  timeout -s KILL 15 "$ASTRAEUS" agent --gpus 1 --work-dir "$WORK/agent" "${root[@]}" "$@" > "$log" 2>&1
  echo $?
}

# --- options refused at start (no server) ---
rc=0; timeout 10 "$ASTRAEUS" serve --log-level loud --data-dir "$WORK/nodata" --listen 127.0.0.1:0 \
  > "$WORK/serve_loud.log" 2>&1 || rc=$?
check "serve --log-level loud exits 2 (got $rc: $(head -c 300 "$WORK/serve_loud.log"))" '[ $rc = 2 ]'
check "serve --log-level loud names the levels" 'grep -q "loud not in {debug,info,warn,error}" "$WORK/serve_loud.log"'
rc=$(agent_run "$WORK/agent_loud.log" --api http://127.0.0.1:9 --token x --log-level loud)
check "agent --log-level loud exits 2 (got $rc)" '[ "$rc" = 2 ]'
check "agent --log-level loud names the levels" 'grep -q "loud not in {debug,info,warn,error}" "$WORK/agent_loud.log"'
for bad in "http://127.0.0.1:9/api" "127.0.0.1:9" "http://127.0.0.1:x/v1"; do
  rc=$(agent_run "$WORK/agent_url.log" --api "$bad" --token x)
  check "agent --api $bad exits 2 (got $rc)" '[ "$rc" = 2 ]'
  check "agent --api $bad: the message names the value ($(cat "$WORK/agent_url.log"))" \
    'grep -qF -- "--api '"'$bad'"'" "$WORK/agent_url.log"'
done

# --- a service with agents ---
cat > "$WORK/cfg.json" << 'EOF2'
{"pools": [{"name": "default", "machines": []}], "lease_s": 36000,
 "agents": {"heartbeat_s": 1, "lost_after_s": 600}}
EOF2
SERVE_ARGS="--executor agents"
start_server "$WORK/cfg.json" || { echo "FAIL: the service did not start"; exit 1; }
OT=$(new_token --operator)
AT=$(new_token --agent --name agent-n1)
machines() {
  curl -s -H "Authorization: Bearer $OT" "$API/machines" |
    python3 -c 'import json,sys; print(sorted((m["name"], m["state"]) for m in json.load(sys.stdin)["machines"]))' 2> /dev/null
}
wait_until() {
  local end=$((SECONDS + $1))
  while [ $SECONDS -lt $end ]; do eval "$2" && return 0; sleep 0.2; done
  return 1
}

# /v1 and /v1/ (as ASTRALYX_API) register: $API is http://127.0.0.1:PORT/v1.
for api in "$API" "$API/"; do
  "$ASTRAEUS" agent --api "$api" --token "$AT" --name n1 --gpus 1 --work-dir "$WORK/agent" "${root[@]}" \
    > "$WORK/agent_v1.log" 2>&1 &
  pid=$!
  EXTRA_PIDS+=("$pid")
  check "agent --api $api registers (machines: $(machines); log: $(tail -3 "$WORK/agent_v1.log"))" \
    'wait_until 10 "grep -q agent.registered \"$WORK/agent_v1.log\""'
  check "agent --api $api: machine n1 up ($(machines))" '[ "$(machines)" = "[('"'n1', 'up'"')]" ]'
  kill -TERM "$pid"
  wait_until 5 "! kill -0 $pid 2> /dev/null" || kill -KILL "$pid" 2> /dev/null
  rc=0; wait "$pid" || rc=$?
  check "agent --api $api: exits 0 on SIGTERM (got $rc)" '[ $rc = 0 ]'
done

# A token the service does not know: 401, exit 3 at once.
start=$SECONDS
rc=$(agent_run "$WORK/agent_bad.log" --api "$API" --token astx_not_a_token --name n9)
check "bad token: exit 3 (got $rc; $(tail -3 "$WORK/agent_bad.log"))" '[ "$rc" = 3 ]'
check "bad token: exits within 5 s (took $((SECONDS - start)) s)" '[ $((SECONDS - start)) -le 5 ]'
check "bad token: the reason (401) in the output" 'grep -q "register_refused status=.\?401" "$WORK/agent_bad.log" &&
  grep -q "refused the registration (HTTP 401)" "$WORK/agent_bad.log"'
check "bad token: registered nothing" '[ "$(grep -c agent.registered "$WORK/agent_bad.log")" = 0 ]'

# n1's token for another machine name: 403 naming both machines, exit 3.
rc=$(agent_run "$WORK/agent_other.log" --api "$API" --token "$AT" --name n2)
check "token bound to n1, agent n2: exit 3 (got $rc; $(tail -3 "$WORK/agent_other.log"))" '[ "$rc" = 3 ]'
check "token bound to n1, agent n2: the message names both machines" \
  'grep -q "refused the registration (HTTP 403).*bound to machine .n1.*machine .n2." "$WORK/agent_other.log"'
check "n2 was not added ($(machines))" '[ "$(machines | grep -c n2)" = 0 ] && [ "$(machines | grep -c n1)" = 1 ]'

# A revoked token, revoked while its agent runs: it heartbeats, is refused, registers again, is
# refused (401) and exits 3.
RT=$(new_token --agent --name agent-n3)
"$ASTRAEUS" agent --api "$API" --token "$RT" --name n3 --gpus 1 --work-dir "$WORK/agent" "${root[@]}" \
  > "$WORK/agent_revoked.log" 2>&1 &
pid=$!
EXTRA_PIDS+=("$pid")
check "n3 registers" 'wait_until 10 "grep -q agent.registered \"$WORK/agent_revoked.log\""'
rid=$(admin token list | awk '$2 == "agent-n3" {print $1}')
admin token revoke "$rid" > /dev/null 2>&1
start=$SECONDS
check "revoked while running: the agent exits within 8 s" \
  'wait_until 8 "! kill -0 $pid 2> /dev/null"'
kill -KILL "$pid" 2> /dev/null  # still there: failed above; never wait forever
rc=0; wait "$pid" || rc=$?
check "revoked while running: exit 3 (got $rc; $(tail -4 "$WORK/agent_revoked.log"))" '[ $rc = 3 ]'
check "revoked while running: the 401 in the output" 'grep -q "refused the registration (HTTP 401)" "$WORK/agent_revoked.log"'
# The same revoked token at start: exit 3.
rc=$(agent_run "$WORK/agent_revoked2.log" --api "$API" --token "$RT" --name n3)
check "revoked token at start: exit 3 (got $rc)" '[ "$rc" = 3 ]'

# Connection refused keeps retrying (no exit): a port nothing listens on.
port=$(free_port)
"$ASTRAEUS" agent --api "http://127.0.0.1:$port/v1" --token "$AT" --name n1 --gpus 1 --work-dir "$WORK/agent" \
  "${root[@]}" > "$WORK/agent_noserver.log" 2>&1 &
pid=$!
EXTRA_PIDS+=("$pid")
sleep 2.5
check "no server: the agent still retries after 2.5 s" 'kill -0 $pid 2> /dev/null'
check "no server: it retried ($(grep -c register_failed "$WORK/agent_noserver.log") failures)" \
  '[ "$(grep -c "register_failed.*connection refused" "$WORK/agent_noserver.log")" -ge 2 ]'

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
