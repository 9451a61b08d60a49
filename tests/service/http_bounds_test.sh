#!/usr/bin/env bash
# usage: http_bounds_test.sh ASTRAEUS_BINARY
# The HTTP layer's bounds (issue 18) against a live `astraeus serve --header-timeout 2
# --body-timeout 3 --agent-listen 127.0.0.1:0` on 127.0.0.1, with raw sockets
# (http_bounds_test.py): pipelining answered in order, conflicting lengths (400), header bounds
# (431, 414), absolute-form targets, unauthenticated bodies refused before they are read,
# chunked bodies refused at 1 MiB (413) without memory growth, slow clients cut at their
# deadlines, the agents' own listener. Skipped (exit 77) without python3. Bounded: about 40 s.
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin python3 curl
cat > "$WORK/c.json" <<JSON
{"pools": [{"name": "a100", "machines": [{"count": 2, "gpus": 8}]}], "time_scale": 60}
JSON
SERVE_ARGS="--executor sim --header-timeout 2 --body-timeout 3 --agent-listen 127.0.0.1:0 --agent-port-file $WORK/aport" \
  start_server "$WORK/c.json" || exit 1
admin workspace add ml > /dev/null || exit 1
ML=$(new_token --workspace ml); AG=$(new_token --agent)
for _ in $(seq 50); do [ -s "$WORK/aport" ] && break; sleep 0.1; done
check "the agents' listener is logged" "grep -q 'http.agents_listening' '$WORK/server.log'"
python3 "$(dirname "$0")/http_bounds_test.py" "$SERVER_PORT" "$(cat "$WORK/aport")" "$SERVER_PID" "$ML" "$AG"
rc=$?
check "http_bounds_test.py: every check passed" "[ $rc = 0 ]"
check "the server is still serving" "[ \"\$(curl -sS -o /dev/null -w '%{http_code}' http://127.0.0.1:$SERVER_PORT/healthz)\" = 200 ]"
echo "http bounds: $passes passed, $fails failed"
[ "$fails" = 0 ]
