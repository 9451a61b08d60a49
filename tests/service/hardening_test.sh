#!/usr/bin/env bash
# usage: hardening_test.sh ASTRAEUS_BINARY ASTRA_BINARY
# The faults of issue 14 against a live `astraeus serve` on 127.0.0.1, each with the value it must
# have: duplicate pool names (serve and admin init), store permissions (0700/0600), /healthz and
# /readyz, HTTP conformance (405 + Allow, 401 before 404, the Bearer scheme in any case,
# WWW-Authenticate), invalid UTF-8 (400) and long echoes (cut to 200 bytes), a worker larger than
# any machine (400), no scope="cluster" series for a workspace token, 50 connections stalled
# mid-request (a normal request is not delayed by more than 100 ms), `astra runs show` escaping
# control characters, runs on machines and pools removed from the configuration (requeued or
# failed at start), and a data directory run faster (time_scale > 1) refused at time_scale 1.
# Skipped (exit 77) without curl or jq. Bounded: about 30 s.
set -u
ASTRAEUS=$1; ASTRA=$2
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq stat

# --- duplicate pool names: a configuration error naming the file and the pool --------------------
cat > "$WORK/dup.json" <<JSON
{"pools": [{"name": "a100", "machines": [{"count": 2, "gpus": 8}]},
           {"name": "a100", "machines": [{"count": 1, "gpus": 8}]}]}
JSON
"$ASTRAEUS" serve --executor sim --config "$WORK/dup.json" --data-dir "$WORK/dupdata" --listen 127.0.0.1:0 > /dev/null 2> "$WORK/dup.err"
check "serve: duplicate pool names exit 2" '[ $? = 2 ]'
want="$WORK/dup.json: pools[1]: duplicate pool name 'a100' (also pools[0]): each pool needs its own name"
check "serve: the message names the file and the pool" "grep -qF \"\$want\" '$WORK/dup.err'"
"$ASTRAEUS" admin init --org acme --cluster main --config "$WORK/dup.json" --data-dir "$WORK/dupdata2" > /dev/null 2> "$WORK/dup2.err"
check "admin init: duplicate pool names exit 2" '[ $? = 2 ]'
check "admin init: the same message" "grep -qF \"\$want\" '$WORK/dup2.err'"
check "admin init: no store left behind" "[ ! -e '$WORK/dupdata2/astraeus.db' ]"

# --- the whole configuration checked by serve and admin init alike: file, entry, expected type ----
cfgcheck() {  # cfgcheck NAME JSON EXPECTED-MESSAGE
  printf '%s\n' "$2" > "$WORK/$1.json"
  "$ASTRAEUS" serve --executor sim --config "$WORK/$1.json" --data-dir "$WORK/${1}s" --listen 127.0.0.1:0 > /dev/null 2> "$WORK/$1.serr"
  local rs=$?
  "$ASTRAEUS" admin init --org acme --cluster main --config "$WORK/$1.json" --data-dir "$WORK/${1}a" > /dev/null 2> "$WORK/$1.aerr"
  local ra=$?
  check "$1: serve and admin init exit 2 ($rs, $ra)" "[ $rs = 2 ] && [ $ra = 2 ]"
  want_msg="$WORK/$1.json: $3"
  check "$1: both say: $3" "grep -qF -- \"\$want_msg\" '$WORK/$1.serr' && grep -qF -- \"\$want_msg\" '$WORK/$1.aerr'"
  check "$1: admin init left no store" "[ ! -e '$WORK/${1}a/astraeus.db' ]"
}
cfgcheck pool-space '{"pools": [{"name": " a", "machines": [{"count": 1, "gpus": 8}]}]}' \
  'pools[0]: pool name " a" is not a valid name'
cfgcheck pool-ctrl '{"pools": [{"name": "p\u001b[2J", "machines": [{"count": 1, "gpus": 8}]}]}' \
  'pools[0]: pool name "p\u001b[2J" is not a valid name'
cfgcheck policy '{"policy": "fifo-ish"}' "policy: unknown policy 'fifo-ish'"
cfgcheck placer '{"placer": "spread"}' "placer: unknown placement 'spread'"
cfgcheck metric '{"threshold_alerts": [{"metric": "cluster_goodput_week", "op": "<", "value": 0.5}]}' \
  "threshold_alerts[0]: unknown metric 'cluster_goodput_week'"
cfgcheck op '{"threshold_alerts": [{"metric": "workers_stalled", "op": ">=", "value": 1}]}' \
  "threshold_alerts[0]: bad operator '>='"
cfgcheck type '{"lease_s": "1800"}' "key 'lease_s' has the wrong type: expected an integer, got string"

# --- a live server: 2 machines x 8 GPUs, 60x clock -----------------------------------------------
cat > "$WORK/two.json" <<JSON
{"pools": [{"name": "a100", "machines": [{"count": 2, "gpus": 8}]}],
 "time_scale": 60, "executor": {"startup_s": 60}}
JSON
start_server "$WORK/two.json" || exit 1
admin workspace add ml > /dev/null && admin workspace add cv > /dev/null || exit 1
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv); OP=$(new_token --operator)

check "data directory is 0700" "[ \"\$(stat -c %a '$WORK/data')\" = 700 ]"
for f in astraeus.db astraeus.db-wal astraeus.db-shm serve.lock; do
  check "$f is 0600" "[ \"\$(stat -c %a '$WORK/data/$f')\" = 600 ]"
done
chmod 0644 "$WORK/data/astraeus.db"
admin workspace add nlp > /dev/null
check "an existing store readable by others is made 0600 when opened" "[ \"\$(stat -c %a '$WORK/data/astraeus.db')\" = 600 ]"
chmod 0755 "$WORK/data"
admin workspace add nlp2 > /dev/null
check "an existing data directory readable by others is made 0700 when opened" "[ \"\$(stat -c %a '$WORK/data')\" = 700 ]"

ROOT="http://127.0.0.1:$SERVER_PORT"
# status METHOD URL [curl args...]: the HTTP status; headers in $WORK/h.txt, body in $WORK/b.txt.
status() {
  local m=$1 u=$2; shift 2
  curl -sS -o "$WORK/b.txt" -D "$WORK/h.txt" -w '%{http_code}' -X "$m" "$u" "$@"
}
header() { grep -i "^$1:" "$WORK/h.txt" | head -1 | sed -e 's/^[^:]*: *//' -e 's/\r$//'; }

# --- health and readiness, without a token ------------------------------------------------------
check "GET /healthz: 200 ok" "[ \"\$(status GET $ROOT/healthz)\" = 200 ] && [ \"\$(jq -r .status '$WORK/b.txt')\" = ok ]"
ready=0
for _ in $(seq 50); do [ "$(status GET "$ROOT/readyz")" = 200 ] && { ready=1; break; }; sleep 0.1; done
check "GET /readyz: 200 ready" "[ $ready = 1 ] && [ \"\$(jq -r .status '$WORK/b.txt')\" = ready ]"

# --- HTTP conformance ---------------------------------------------------------------------------
A="Authorization: Bearer $ML"
check "DELETE /v1/runs: 405" "[ \"\$(status DELETE $API/runs -H '$A')\" = 405 ]"
check "405 has Allow: GET, HEAD, POST" "[ \"\$(header Allow)\" = 'GET, HEAD, POST' ]"
check "GET /v1/runs/x/stop: 405, Allow: POST" "[ \"\$(status GET $API/runs/x/stop -H '$A')\" = 405 ] && [ \"\$(header Allow)\" = POST ]"
check "PUT /v1/runs/x (no body): 405, Allow: GET, HEAD" "[ \"\$(status PUT $API/runs/x -H '$A')\" = 405 ] && [ \"\$(header Allow)\" = 'GET, HEAD' ]"
check "PUT /v1/nope (no body): 404" "[ \"\$(status PUT $API/nope -H '$A')\" = 404 ]"
check "unknown /v1 path without a token: 401" "[ \"\$(status GET $API/nope)\" = 401 ]"
check "401 has WWW-Authenticate: Bearer" "[ \"\$(header WWW-Authenticate)\" = 'Bearer realm=\"astraeus\"' ]"
check "wrong method without a token: 401 (not 405)" "[ \"\$(status DELETE $API/runs)\" = 401 ]"
check "unknown /v1 path with a token: 404" "[ \"\$(status GET $API/nope -H '$A')\" = 404 ]"
check "unknown path outside /v1: 404" "[ \"\$(status GET $ROOT/nope)\" = 404 ]"
check "scheme 'bearer' (lower case): 200" "[ \"\$(status GET $API/runs -H 'Authorization: bearer $ML')\" = 200 ]"
check "scheme 'BEARER' and two spaces: 200" "[ \"\$(status GET $API/runs -H 'Authorization: BEARER  $ML')\" = 200 ]"
check "POST without Content-Length (curl -X POST, no -d): no body, not 'could not be read'" \
  "[ \"\$(status POST $API/runs -H '$A')\" = 400 ] && jq -r .error '$WORK/b.txt' | grep -q '^malformed JSON'"
check "scheme Basic: 401 with WWW-Authenticate" "[ \"\$(status GET $API/runs -H 'Authorization: Basic eDp5')\" = 401 ] && [ -n \"\$(header WWW-Authenticate)\" ]"

# --- invalid UTF-8 and long echoes ---------------------------------------------------------------
printf '{"name": "r\xff\xfe"}' > "$WORK/bad-utf8.json"
check "invalid UTF-8 in a JSON body: 400" "[ \"\$(status POST $API/runs -H '$A' -H 'Content-Type: application/json' --data-binary @$WORK/bad-utf8.json)\" = 400 ]"
check "its error is JSON" "jq -e '.error | length > 0' '$WORK/b.txt' > /dev/null"
check "a name of invalid UTF-8 in the path: 404 with a JSON error" "[ \"\$(status GET '$API/runs/%FF%FE' -H '$A')\" = 404 ] && jq -e .error '$WORK/b.txt' > /dev/null"
long=$(head -c 100000 /dev/zero | tr '\0' 'x')
printf '{"name": "%s"}' "$long" > "$WORK/long.json"
check "a 100 kB name: 400" "[ \"\$(status POST $API/runs -H '$A' -H 'Content-Type: application/json' --data-binary @$WORK/long.json)\" = 400 ]"
msg=$(jq -r .error "$WORK/b.txt")
check "the echo is cut to 200 bytes + '...' (message of ${#msg} bytes)" \
  "[[ \"\$msg\" == *\"'\$(head -c 200 /dev/zero | tr '\\0' 'x')...'\"* ]] && [ \${#msg} -lt 400 ]"
printf '{"name": "ok", "%s": 1}' "$long" > "$WORK/longkey.json"
status POST "$API/runs" -H "$A" -H 'Content-Type: application/json' --data-binary @"$WORK/longkey.json" > /dev/null
check "a 100 kB unknown field name is echoed cut" "[ \$(jq -r .error '$WORK/b.txt' | wc -c) -lt 400 ]"

# --- body sizes: any Content-Type up to 1 MiB (form-typed ones too: curl -d) ---
# A 1 x 9 GPUs run (400 "no placement") shows the body was read and parsed; curl -d sends
# Content-Type: application/x-www-form-urlencoded, as a user's first try does.
for n in 8192 65536; do
  printf '{"name":"big","workers":1,"gpus_per_worker":9,"command":"%s"}' "$(head -c $n /dev/zero | tr '\0' 'x')" > "$WORK/cmd$n.json"
  check "a body with a $n-byte command, form-typed (curl -d): read (400 no placement, not 413)" \
    "[ \"\$(status POST $API/runs -H '$A' -d @$WORK/cmd$n.json)\" = 400 ] && jq -r .error '$WORK/b.txt' | grep -qF 'no placement for 1 x 9 GPUs'"
  check "the same body as application/json: read" \
    "[ \"\$(status POST $API/runs -H '$A' -H 'Content-Type: application/json' --data-binary @$WORK/cmd$n.json)\" = 400 ] && jq -r .error '$WORK/b.txt' | grep -qF 'no placement'"
done
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' > "$WORK/mib1.json"
check "a body of 1 MiB + 1 byte: 413" "[ \"\$(status POST $API/runs -H '$A' -H 'Content-Type: application/json' --data-binary @$WORK/mib1.json)\" = 413 ] && [ \"\$(jq -r .error '$WORK/b.txt')\" = 'the body is larger than 1 MiB' ]"
check "a multipart body (curl -F): 400 asking for JSON" \
  "[ \"\$(status POST $API/runs -H '$A' -F name=x)\" = 400 ] && jq -r .error '$WORK/b.txt' | grep -qF 'the API takes JSON'"
check "duplicate keys in a body: 400 naming the key" \
  "[ \"\$(status POST $API/runs -H '$A' -H 'Content-Type: application/json' -d '{\"name\":\"x1\",\"name\":\"x2\",\"workers\":1}')\" = 400 ] && [ \"\$(jq -r .error '$WORK/b.txt')\" = \"duplicate key 'name' in the JSON body\" ] && [ \"\$(status GET $API/runs/x2 -H '$A')\" = 404 ]"
check "a 100 kB header on a GET: 431 saying the headers are too large" \
  "[ \"\$(status GET $API/runs -H '$A' -H \"X-Big: \$long\")\" = 431 ] && jq -r .error '$WORK/b.txt' | grep -qF 'the request line and headers are larger than 32 KiB'"

# --- a worker larger than any machine ---------------------------------------------------------------
check "1 x 9 GPUs on 8-GPU machines: 400" \
  "[ \"\$(status POST $API/runs -H '$A' -H 'Content-Type: application/json' -d '{\"name\":\"big\",\"workers\":1,\"gpus_per_worker\":9}')\" = 400 ]"
check "its message" "jq -r .error '$WORK/b.txt' | grep -qF \"no placement for 1 x 9 GPUs: a worker's 9 GPUs must be on one machine, and pool a100's largest machine has 8 GPUs\""
check "nothing was created" "[ \"\$(status GET $API/runs/big -H '$A')\" = 404 ]"
# astra without --pool sends no pool: the cluster's first pool (a100 here, no pool "default").
ASTRALYX_API=$API ASTRALYX_TOKEN=$ML "$ASTRA" runs submit nopool --gpus-per-worker 9 -- true > /dev/null 2> "$WORK/nopool.err"
check "astra runs submit without --pool: the first pool's answer (exit 2, pool a100 named)" \
  "[ \$? = 2 ] && grep -qF \"pool a100's largest machine has 8 GPUs\" '$WORK/nopool.err'"
# An argument that is not UTF-8: a usage error naming the flag (it aborted with exit 134).
ASTRALYX_API=$API ASTRALYX_TOKEN=$ML "$ASTRA" runs submit u8 --command "$(printf 'x\x9by')" > /dev/null 2> "$WORK/u8.err"
check "astra --command of invalid UTF-8: exit 2 naming --command" "[ \$? = 2 ] && grep -qF 'the value of --command is not valid UTF-8' '$WORK/u8.err'"

# --- runs for the rest: one per machine, with control characters in command and image ------------
cmd=$(printf 'train \\u001b[31mRED\\u001b]0;owned\\u0007 \\u009b2J')
check "an image is refused (no executor declares a container runtime): 400" \
  "[ \"\$(status POST $API/runs -H '$A' -H 'Content-Type: application/json' -d '{\"name\":\"i\",\"workers\":1,\"gpus_per_worker\":8,\"image\":\"img\\u001b[2J\"}')\" = 400 ]"
check "submit a (8 GPUs) with escapes in its command: 201" \
  "[ \"\$(status POST $API/runs -H '$A' -H 'Content-Type: application/json' -d '{\"name\":\"a\",\"workers\":1,\"gpus_per_worker\":8,\"command\":\"$cmd\"}')\" = 201 ]"
check "submit b (8 GPUs): 201" \
  "[ \"\$(status POST $API/runs -H '$A' -H 'Content-Type: application/json' -d '{\"name\":\"b\",\"workers\":1,\"gpus_per_worker\":8}')\" = 201 ]"
ASTRALYX_API=$API ASTRALYX_TOKEN=$ML "$ASTRA" runs show a > "$WORK/show.txt" 2>&1
check "astra runs show: exit 0" '[ $? = 0 ]'
check "astra runs show: no ESC, BEL or C1 byte on the terminal" "! LC_ALL=C grep -q \$'[\\x1b\\x07]\\|\\xc2\\x9b' '$WORK/show.txt'"
check "astra runs show: the command escaped" "grep -qF \"Command:     /bin/sh -c 'train \\\\e[31mRED\\\\e]0;owned\\\\x07 \\\\x9b2J'\" '$WORK/show.txt'"

# --- metrics: a workspace token gets no scope="cluster" series -----------------------------------
sleep 2
curl -sS "$API/goodput/metrics" -H "$A" > "$WORK/ml.txt"
curl -sS "$API/goodput/metrics" -H "Authorization: Bearer $OP" > "$WORK/op.txt"
check "workspace token: its workspace series" "grep -q 'astraeus_goodput_gpu_hours{scope=\"workspace\",name=\"ml\"' '$WORK/ml.txt'"
check "workspace token: no scope=\"cluster\" series" "! grep -q 'scope=\"cluster\"' '$WORK/ml.txt'"
check "operator token: the cluster series" "grep -q 'astraeus_goodput_gpu_hours{scope=\"cluster\",name=\"main\"' '$WORK/op.txt'"

# --- 50 connections stalled mid-request ------------------------------------------------------------
# t_ms: the time of one normal API call in ms (curl's own timing, not the process start).
t_ms() { curl -sS -o /dev/null -w '%{time_total}' "$API/runs" -H "$A" | awk '{printf "%d", $1 * 1000}'; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
base=$(for _ in 1 2 3 4 5; do t_ms; echo; done | median)
fds=()
for _ in $(seq 50); do
  exec {fd}<>"/dev/tcp/127.0.0.1/$SERVER_PORT" || break
  printf 'GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' >&"$fd"
  fds+=("$fd")
done
check "50 stalled connections opened" "[ ${#fds[@]} = 50 ]"
sleep 0.3
stalled=$(for _ in 1 2 3 4 5; do t_ms; echo; done | median)
check "a call beside 50 stalled connections: ${stalled} ms vs ${base} ms alone (at most +100 ms)" \
  "[ $stalled -le $((base + 100)) ]"
for fd in "${fds[@]}"; do exec {fd}>&-; done

# --- configuration reconciled at start ---------------------------------------------------------------
for _ in $(seq 50); do
  [ "$(curl -sS "$API/runs?state=running" -H "$A" | jq '.runs | length')" = 2 ] && break; sleep 0.1
done
check "a and b running" "[ \"\$(curl -sS '$API/runs?state=running' -H '$A' | jq '.runs | length')\" = 2 ]"
on2=$(curl -sS "$API/runs" -H "$A" | jq -r '.runs[] | select(.machines[0] == "a100-2") | .name')
on1=$(curl -sS "$API/runs" -H "$A" | jq -r '.runs[] | select(.machines[0] == "a100-1") | .name')
check "one run on each machine ($on1 on a100-1, $on2 on a100-2)" '[ -n "$on1" ] && [ -n "$on2" ]'
stop_all; SERVER_PID=""
# serve_with CONFIG: restart on the same data directory with another configuration (its log:
# CONFIG.log).
serve_with() {
  rm -f "$WORK/port"
  "$ASTRAEUS" serve --executor sim --config "$1" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
      --port-file "$WORK/port" > "$1.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  API="http://127.0.0.1:$(cat "$WORK/port")/v1"
}
cat > "$WORK/one.json" <<JSON
{"pools": [{"name": "a100", "machines": [{"count": 1, "gpus": 8}]}],
 "time_scale": 60, "executor": {"startup_s": 60}}
JSON
serve_with "$WORK/one.json"
check "restart with a100-2 removed: listening" "[ -s '$WORK/port' ]"
# The run on a100-2 is requeued: pending until the run on a100-1 gives its GPUs back at its lease
# end (1800 s, long after this check). The restart does not let it preempt that run: it ran
# before (attempt 1), so it is no brand-new job, and the run on a100-1 keeps the lease it held.
# Nothing holds or accrues on a100-2 any more.
r2=$(curl -sS "$API/runs/$on2" -H "$A")
check "the run on a100-2 was requeued: pending, attempt 1, no machine" \
  "jq -e '.state == \"pending\" and .reason == \"requeued: machine a100-2 was removed from the configuration\" and .attempts == 1 and (.worker_list[0] | has(\"machine\") | not)' <<< '$r2' > /dev/null"
check "the server log says what happened" \
  "grep -q 'run.reconciled run=$on2 state=pending reason=\"machine a100-2 was removed from the configuration\"' '$WORK/one.json.log'"
check "no run holds a100-2" "[ \"\$(curl -sS '$API/runs' -H '$A' | jq '[.runs[].machines[] | select(. == \"a100-2\")] | length')\" = 0 ]"
m2() { curl -sS "$API/goodput?by=machine&days=1" -H "$A" | jq -c '[.rows[] | select(.machine == "a100-2") | .held_gpu_hours]'; }
before=$(m2); sleep 2; after=$(m2)
check "a100-2 has the time held before the restart ($before)" '[ "$before" != "[]" ] && [ -n "$before" ]'
check "a100-2 accrues nothing after the restart ($before, then $after)" '[ "$before" = "$after" ]'
check "the run on a100-1 keeps running its attempt 1 on a100-1 (not preempted by the restart)" \
  "[ \"\$(curl -sS '$API/runs/$on1' -H '$A' | jq -r '.state + \"/\" + (.attempts | tostring) + \"/\" + .worker_list[0].machine')\" = running/1/a100-1 ]"
check "no preemption after the restart" "! grep -q 'run.preempted' '$WORK/one.json.log'"
stop_all; SERVER_PID=""
cat > "$WORK/h100.json" <<JSON
{"pools": [{"name": "h100", "machines": [{"count": 1, "gpus": 8}]}], "time_scale": 60}
JSON
serve_with "$WORK/h100.json"
check "restart with pool a100 removed: both runs failed, ended" \
  "[ \"\$(curl -sS '$API/runs' -H '$A' | jq -r '[.runs[] | .state + \"/\" + .pool + \"/\" + (has(\"ended_at\") | tostring)] | join(\" \")')\" = 'failed/a100/true failed/a100/true' ]"
stop_all; SERVER_PID=""

# --- a data directory run faster is refused at time_scale 1 ------------------------------------------
echo '{"time_scale": 3600}' > "$WORK/fast.json"
echo '{"time_scale": 1}' > "$WORK/real.json"
# Times from the servers' port files, not from sleeps alone (a sanitizer build on a loaded
# machine took seconds to start: the fast one had run no time, the real one was still starting).
"$ASTRAEUS" serve --executor sim --config "$WORK/fast.json" --data-dir "$WORK/fast" --listen 127.0.0.1:0 \
  --port-file "$WORK/fast.port" > /dev/null 2>&1 &
fast=$!
for _ in $(seq 300); do [ -s "$WORK/fast.port" ] && break; sleep 0.1; done
sleep 2    # two hours of service time
kill -TERM "$fast"; wait "$fast"
"$ASTRAEUS" serve --executor sim --config "$WORK/real.json" --data-dir "$WORK/fast" --listen 127.0.0.1:0 \
  --port-file "$WORK/real.port" > /dev/null 2> "$WORK/real.err" &
real=$!
# Refused: it exits before it listens; serving: it writes its port file.
for _ in $(seq 300); do { kill -0 "$real" 2>/dev/null && [ ! -s "$WORK/real.port" ]; } || break; sleep 0.1; done
if kill -0 "$real" 2>/dev/null; then kill -TERM "$real"; wait "$real"; rc=running; else wait "$real"; rc=$?; fi
check "time_scale 1 on a data directory ahead of the real clock: refused (exit 1, got $rc)" '[ "$rc" = 1 ]'
check "the message says why" "grep -q 'ahead of the real clock' '$WORK/real.err' && grep -q 'time_scale > 1' '$WORK/real.err'"
echo '{"time_scale": 1}' > "$WORK/real.json"
"$ASTRAEUS" serve --executor sim --config "$WORK/real.json" --data-dir "$WORK/realdir" --listen 127.0.0.1:0 --port-file "$WORK/rport" > /dev/null 2>&1 &
EXTRA_PIDS+=($!)
for _ in $(seq 50); do [ -s "$WORK/rport" ] && break; sleep 0.1; done
check "time_scale 1 on a new data directory: serves" "[ \"\$(curl -sS -o /dev/null -w '%{http_code}' http://127.0.0.1:\$(cat '$WORK/rport')/healthz)\" = 200 ]"

echo "hardening: $passes passed, $fails failed"
[ "$fails" = 0 ]
