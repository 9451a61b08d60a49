#!/usr/bin/env bash
# usage: agents_refusals_test.sh ASTRAEUS_BINARY
# `astraeus serve --executor agents` and raw agent requests (curl): a token that never
# registered cannot claim a machine name bound to another token (403, logged
# agent.takeover_refused; no second binding); a second live agent for a registered machine is
# refused 409 and logged (agent.duplicate_refused) while the first one heartbeats, and taken
# once it is silent (a restart); `astraeus agent --token-file` refuses a file readable by
# others (exit 2); an agent cannot ship the log of a worker that was never placed on its machine
# (another workspace's run, its past attempt or its current one: the stolen-token log forgery),
# while the machine that ran it still can. Skipped (77) without curl or jq. About 20 s.
set -u
ASTRAEUS=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/live_server_lib.sh"
live_test_begin curl jq
cat > "$WORK/cfg.json" << 'JSON'
{"pools": [{"name": "default", "machines": []}], "agents": {"heartbeat_s": 1, "lost_after_s": 4}}
JSON
SERVE_ARGS="--executor agents" start_server "$WORK/cfg.json" || exit 1
post() { curl -s -o "$WORK/post.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $1" "$API/$2" -d "$3"; }
T1=$(new_token --agent); T2=$(new_token --agent)
reg() { post "$1" agent/register "{\"name\": \"$2\", \"pool\": \"default\", \"gpus\": 2, \"session\": \"$3\", \"workers\": []}"; }
beat() { post "$1" agent/heartbeat "{\"name\": \"$2\", \"session\": \"$3\", \"commands_acked\": 0, \"events\": []}"; }

check "token 1 registers m1" '[ "$(reg "$T1" m1 s1)" = 200 ]'
code=$(reg "$T2" m1 s2)
check "token 2 (never registered) cannot take m1 over: 403 ($code)" '[ "$code" = 403 ] && grep -q "bound to another agent token" "$WORK/post.out"'
check "the takeover is logged" 'grep -q "agent.takeover_refused" "$WORK/server.log"'
check "token 2 still registers a machine of its own" '[ "$(reg "$T2" m2 t1)" = 200 ]'
check "m1 keeps its agent: its heartbeat is answered" '[ "$(beat "$T1" m1 s1)" = 200 ] && ! grep -q "\"register\":true" "$WORK/post.out"'
code=$(reg "$T1" m1 s3)
check "a second live agent for m1 (same token, new session) is refused: 409 ($code)" \
  '[ "$code" = 409 ] && grep -q "already has a live agent" "$WORK/post.out"'
check "the duplicate is logged" 'grep -q "agent.duplicate_refused" "$WORK/server.log"'
check "the first agent is undisturbed" '[ "$(beat "$T1" m1 s1)" = 200 ] && ! grep -q "\"register\":true" "$WORK/post.out"'
sleep 3.5   # the first agent silent for 3 heartbeats: a restart
check "once the first agent is silent, a new session of m1 is taken (a restart)" '[ "$(reg "$T1" m1 s3)" = 200 ]'

echo "$T1" > "$WORK/token"; chmod 644 "$WORK/token"
"$ASTRAEUS" agent --api "$API" --token-file "$WORK/token" --name m9 --gpus 1 --work-dir "$WORK/ag" > "$WORK/agent.out" 2>&1
rc=$?
check "a --token-file readable by others is refused (exit $rc)" '[ $rc = 2 ] && grep -q "readable or writable by others" "$WORK/agent.out"'

# Log forgery: m4's token ships a log for a run of another workspace that only ever ran on m3.
admin workspace add victim > /dev/null
TV=$(new_token --workspace victim); TO=$(new_token --org-admin); T3=$(new_token --agent); T4=$(new_token --agent)
check "m3 and m4 register" '[ "$(post "$T3" agent/register "{\"name\": \"m3\", \"gpus\": 1, \"session\": \"u3\"}")" = 200 ] &&
  [ "$(post "$T4" agent/register "{\"name\": \"m4\", \"gpus\": 1, \"session\": \"u4\"}")" = 200 ]'
for m in m1 m2 m4; do post "$TO" "machines/$m/drain" '{}' > /dev/null; done   # the run can only go to m3
check "the victim submits a run" '[ "$(post "$TV" runs "{\"name\": \"secret\", \"workers\": 1, \"gpus_per_worker\": 1, \"command\": [\"true\"]}")" = 201 ]'
RID=$(store_sql "select id from runs where name = 'secret'")
m3beat() { post "$T3" agent/events "{\"name\": \"m3\", \"session\": \"u3\", \"commands_acked\": $1, \"events\": [$2]}"; }
m3beat 0 "" > /dev/null
check "attempt 1 is launched on m3" 'jq -e ".commands[0].op == \"launch\" and .commands[0].run == $RID" "$WORK/post.out" > /dev/null'
m3beat 1 "{\"seq\": 1, \"kind\": \"started\", \"run\": $RID, \"attempt\": 1, \"worker\": 0}" > /dev/null
m3beat 1 "{\"seq\": 2, \"kind\": \"exited\", \"run\": $RID, \"attempt\": 1, \"worker\": 0, \"exit_code\": 1}" > /dev/null
for _ in $(seq 50); do
  [ "$(curl -s "$API/runs/secret" -H "Authorization: Bearer $TV" | jq .attempts)" = 2 ] && break; sleep 0.1
done
check "attempt 1 failed, attempt 2 is placed (on m3 again)" \
  '[ "$(curl -s "$API/runs/secret" -H "Authorization: Bearer $TV" | jq -r ".attempts, .worker_list[0].machine" | tr "\n" " ")" = "2 m3 " ]'
ship() {  # ship TOKEN MACHINE ATTEMPT TEXT: one chunk at offset 0 of worker 0's log
  post "$1" agent/logs "{\"name\": \"$2\", \"chunks\": [{\"run\": $RID, \"attempt\": $3, \"worker\": 0, \"offset\": 0, \"data\": \"$(printf %s "$4" | base64 -w0)\"}]}"
}
for a in 1 2; do
  code=$(ship "$T4" m4 $a "forged by m4")
  check "m4 cannot write attempt $a's log of a run that never ran there: an error for the chunk ($code)" \
    '[ "$code" = 200 ] && jq -e ".chunks[0].error | test(\"placed on m4\")" "$WORK/post.out" > /dev/null'
done
check "the refusal is logged" 'grep -q "agent.log_refused" "$WORK/server.log"'
code=$(ship "$T3" m3 1 "real line of m3")
check "m3, where attempt 1 ran, still ships its log after attempt 2 was placed ($code)" \
  '[ "$code" = 200 ] && jq -e ".chunks[0].have == 15" "$WORK/post.out" > /dev/null'
check "the victim reads m3's line only" \
  '[ "$(curl -s "$API/runs/secret/logs?attempt=1" -H "Authorization: Bearer $TV" | jq -r .text)" = "real line of m3" ]'

echo "agents_refusals: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
