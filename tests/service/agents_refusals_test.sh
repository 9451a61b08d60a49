#!/usr/bin/env bash
# usage: agents_refusals_test.sh ASTRAEUS_BINARY
# `astraeus serve --executor agents` and raw agent requests (curl): a token that never
# registered cannot claim a machine name bound to another token (403, logged
# agent.takeover_refused; no second binding); a second live agent for a registered machine is
# refused 409 and logged (agent.duplicate_refused) while the first one heartbeats, and taken
# once it is silent (a restart); `astraeus agent --token-file` refuses a file readable by
# others (exit 2). Skipped (77) without curl. About 15 s.
set -u
ASTRAEUS=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/live_server_lib.sh"
live_test_begin curl
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

echo "agents_refusals: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
