#!/usr/bin/env bash
# Integration test of `astraeus serve` over real HTTP on 127.0.0.1 with a real SQLite file in a
# temporary directory (issue 6, "Done when" 1 and 3):
#  - admin init / workspace add / token create|list|revoke;
#  - the page's three curl calls give the documented shapes;
#  - two workspaces cannot see each other's runs or series;
#  - a bad token, a bad `by`, a period over 400 days, malformed JSON and other bad input get 4xx
#    with a message and change nothing;
#  - every second between a run's submission and its end is counted exactly once:
#    sum of its ledger = workers x GPUs per worker x (ended_at - submitted_at), checked on the
#    GPU-seconds behind the JSON's GPU-hours;
#  - crash safety: SIGKILL during a burst of submissions and minute counts, restart, every
#    acknowledged run is there, no counted GPU-second is lost, and the exact identity above
#    still holds for every run once they have all ended (nothing lost, nothing counted twice);
#  - machines lost and back (the simulated executor): runs fail, restart, still counted exactly.
# The service's clock runs 60 times faster than the real one (1 s = 1 minute) so that minute
# counts pass quickly. With ASTRA_BIN, the page's three `astra` commands too.
# Usage: service_test.sh ASTRAEUS_BIN [ASTRA_BIN]
set -euo pipefail
BIN=$(realpath "$1")
ASTRA=${2:+$(realpath "$2")}
T=$(mktemp -d)
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then kill -9 "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$T"
}
trap cleanup EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

cat > "$T/config.json" <<'EOF'
{"organization": "acme", "cluster": "c1",
 "pools": [{"name": "default", "machines": [{"count": 4, "gpus": 8}]}],
 "lease_s": 1800, "time_scale": 60,
 "executor": {"startup_s": 60, "stop_s": 30, "utilization_pct": 90}}
EOF
DATA="$T/data"
"$BIN" admin init --org acme --cluster c1 --config "$T/config.json" --data-dir "$DATA" >/dev/null
"$BIN" admin workspace add ml --weight 1 --data-dir "$DATA" >/dev/null
"$BIN" admin workspace add vision --weight 1 --data-dir "$DATA" >/dev/null
ML=$("$BIN" admin token create --workspace ml --data-dir "$DATA" 2>/dev/null)
VI=$("$BIN" admin token create --workspace vision --data-dir "$DATA" 2>/dev/null)
AD=$("$BIN" admin token create --org-admin --name boss --data-dir "$DATA" 2>/dev/null)
OLD=$("$BIN" admin token create --workspace ml --name old --data-dir "$DATA" 2>/dev/null)
re_add=$("$BIN" admin workspace add vision --weight 3 --data-dir "$DATA")
check "workspace add on an existing one says its old weight ($re_add)" \
    test "$re_add" = "workspace vision (id 2), weight 3 on cluster c1 (it existed; weight was 1)"
"$BIN" admin workspace add vision --weight 1 --data-dir "$DATA" > /dev/null
check "workspace list: both, with their weights" \
    bash -c "[ \"\$(\"$BIN\" admin workspace list --data-dir \"$DATA\" | awk '{print \$2, \$3}' | paste -sd,)\" = 'WORKSPACE WEIGHT,ml 1,vision 1' ]"
check "token shape astx_ + 43 base64url" bash -c "[[ '$ML' =~ ^astx_[A-Za-z0-9_-]{43}$ ]]"
OLD_ID=$("$BIN" admin token list --data-dir "$DATA" | awk '$2 == "old" {print $1}')
"$BIN" admin token revoke "$OLD_ID" --data-dir "$DATA" >/dev/null
check "token list shows the revoked token, never a token" \
    bash -c "\"$BIN\" admin token list --data-dir \"$DATA\" | grep -q ' old .* yes' && ! \"$BIN\" admin token list --data-dir \"$DATA\" | grep -q astx_"
check "the store keeps SHA-256 hashes only" \
    bash -c "! grep -a -q '$ML' \"$DATA/astraeus.db\" \"$DATA\"/astraeus.db-wal 2>/dev/null"

start_server() {
    rm -f "$T/port"
    "$BIN" serve --executor sim --config "$T/config.json" --data-dir "$DATA" --listen 127.0.0.1:0 \
        --port-file "$T/port" 2>>"$T/server.log" &
    SERVER_PID=$!
    for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
    [ -s "$T/port" ] || { echo "server did not start"; cat "$T/server.log"; exit 1; }
    API="http://127.0.0.1:$(cat "$T/port")/v1"
}
# req TOKEN METHOD PATH [BODY] -> prints "STATUS BODY"
req() {
    local tok=$1 method=$2 path=$3 body=${4:-}
    local args=(-sS -o "$T/out" -w '%{http_code}' -X "$method" -H "Authorization: Bearer $tok")
    # POST always sends a body (an empty one: Content-Length 0), as HTTP clients do.
    [ "$method" = POST ] && args+=(-H 'Content-Type: application/json' --data "$body")
    local code
    code=$(curl "${args[@]}" "$API$path")
    echo "$code $(cat "$T/out")"
}
status_of() { echo "${1%% *}"; }
body_of() { echo "${1#* }"; }
# expect CODE WHAT TOKEN METHOD PATH [BODY]: the status, and a JSON {"error": non-empty} for 4xx
expect() {
    local code=$1 what=$2; shift 2
    local r; r=$(req "$@")
    if [ "$(status_of "$r")" != "$code" ]; then bad "$what: got $(status_of "$r"), want $code: $(body_of "$r")"; return; fi
    if [ "$code" -ge 400 ] && ! body_of "$r" | jq -e '.error | length > 0' >/dev/null; then
        bad "$what: no error message: $(body_of "$r")"; return
    fi
    ok "$what ($code)"
}

start_server
# --- runs ----------------------------------------------------------------------------------------
r=$(req "$ML" POST /runs '{"name":"llm","pool":"default","workers":2,"gpus_per_worker":8,"sim_duration_s":600,"command":"train.py"}')
check "submit llm: 201" test "$(status_of "$r")" = 201
check "run object keys" bash -c "echo '$(body_of "$r")' | jq -e 'has(\"name\") and has(\"workspace\") and has(\"pool\") and has(\"workers\") and has(\"gpus_per_worker\") and has(\"state\") and has(\"submitted_at\") and has(\"attempts\") and (.worker_list | length == 2) and .workspace == \"ml\"' >/dev/null"
# (sweep-7 runs until its owner stops it: a run that could end by itself first, 15 real seconds
# here, made "sweep-7 was stopped" depend on how fast the checks between ran on a loaded machine.)
r=$(req "$VI" POST /runs '{"name":"sweep-7","workers":1,"gpus_per_worker":4,"sim_duration_s":360000}')
check "submit sweep-7 (vision): 201" test "$(status_of "$r")" = 201
r=$(req "$AD" POST /runs '{"name":"big","workspace":"vision","workers":4,"gpus_per_worker":8,"sim_duration_s":300}')
check "org admin submits for vision: 201" test "$(status_of "$r")" = 201
check "a gang that cannot place now waits with a reason" \
    bash -c "echo '$(body_of "$r")' | jq -e '.state == \"pending\" and (.reason | test(\"quota|placement\"))' >/dev/null"

runs_count() { req "$AD" GET /runs | cut -d' ' -f2- | jq '.runs | length'; }
N0=$(runs_count)
expect 401 "no token" "" GET /runs
expect 401 "bad token" "astx_notatoken" GET /runs
expect 401 "revoked token" "$OLD" GET /runs
expect 401 "bad token on submit" "astx_nope" POST /runs '{"name":"x","workers":1,"gpus_per_worker":1}'
expect 400 "malformed JSON" "$ML" POST /runs '{"name": "x", workers: }'
expect 400 "missing name" "$ML" POST /runs '{"workers":1,"gpus_per_worker":1}'
expect 400 "workers not an integer" "$ML" POST /runs '{"name":"x","workers":"two","gpus_per_worker":1}'
expect 400 "gang larger than the pool" "$ML" POST /runs '{"name":"x","workers":5,"gpus_per_worker":8}'
expect 400 "unknown pool" "$ML" POST /runs '{"name":"x","pool":"nope","workers":1,"gpus_per_worker":1}'
expect 400 "other workspace in the body" "$ML" POST /runs '{"name":"x","workspace":"vision","workers":1,"gpus_per_worker":1}'
expect 400 "org admin without workspace" "$AD" POST /runs '{"name":"x","workers":1,"gpus_per_worker":1}'
expect 409 "duplicate name" "$ML" POST /runs '{"name":"llm","workers":1,"gpus_per_worker":1}'
check "nothing changed by the bad requests" test "$(runs_count)" = "$N0"

expect 200 "ml sees its run" "$ML" GET /runs/llm
expect 404 "ml cannot see vision's run" "$ML" GET /runs/sweep-7
expect 404 "ml cannot see vision's run's goodput" "$ML" GET /runs/sweep-7/goodput
expect 404 "ml cannot stop vision's run" "$ML" POST /runs/sweep-7/stop
expect 404 "unknown run" "$ML" GET /runs/nope
check "ml lists only its runs" bash -c "[ \"\$(curl -sS -H 'Authorization: Bearer $ML' $API/runs | jq -c '[.runs[].name]')\" = '[\"llm\"]' ]"
check "vision lists only its runs, newest first" bash -c "[ \"\$(curl -sS -H 'Authorization: Bearer $VI' $API/runs | jq -c '[.runs[].name]')\" = '[\"big\",\"sweep-7\"]' ]"
expect 400 "bad state filter" "$ML" GET "/runs?state=bogus"
expect 403 "cluster goodput: org admins only" "$ML" GET "/organizations/acme/clusters/c1/goodput?by=run"
expect 404 "cluster goodput: unknown cluster" "$AD" GET "/organizations/acme/clusters/nope/goodput"

sleep 5   # five minutes of the service's clock: starts, runs, counts
# --- the page's three curl calls ---------------------------------------------------------------
LEDGER_KEYS='has("gpu_hours") and has("held_gpu_hours") and has("allocated_gpu_hours") and has("productive_gpu_hours") and has("lost_gpu_hours") and has("waiting_gpu_hours") and (.gpu_hours | keys == ["failure","idle","preemption","productive","restart","stalled","starting","waiting"])'
START=$(date -u -d '-1 day' +%Y-%m-%dT%H:%M:%SZ)
r=$(req "$ML" GET "/goodput?by=machine&start=$START")
check "curl 1: goodput?by=machine&start=...: 200" test "$(status_of "$r")" = 200
check "curl 1: shape {by,start,end,rows[{machine,...ledger}],total}" bash -c "echo '$(body_of "$r")' | jq -e '.by == \"machine\" and has(\"start\") and has(\"end\") and (.rows | length >= 1) and (.rows | all(has(\"machine\") and ($LEDGER_KEYS))) and (.total | $LEDGER_KEYS)' >/dev/null"
r=$(req "$ML" GET "/goodput/weekly?weeks=8&by=run")
check "curl 2: goodput/weekly?weeks=8&by=run: 9 weeks, ISO labels, rows per run" bash -c "echo '$(body_of "$r")' | jq -e '.by == \"run\" and (.weeks | length == 9) and (.weeks | all(.week | test(\"^[0-9]{4}-W[0-9]{2}$\"))) and (.weeks[-1].rows | all(has(\"run\") and ($LEDGER_KEYS)))' >/dev/null"
r=$(req "$ML" GET "/runs/llm/goodput")
check "curl 3: runs/llm/goodput: {run, workspace, ...ledger}" bash -c "echo '$(body_of "$r")' | jq -e '.run == \"llm\" and .workspace == \"ml\" and ($LEDGER_KEYS) and .allocated_gpu_hours > 0' >/dev/null"

# --- the page's three CLI commands (astra), as a workspace ---------------------------------------
if [ -n "$ASTRA" ]; then
    export ASTRALYX_API="$API" ASTRALYX_TOKEN="$ML"
    out=$("$ASTRA" astraeus goodput --by run --days 7 2>&1) || bad "astra goodput --by run --days 7: exit $?"
    check "astra goodput --by run --days 7: the page's table (llm row, TOTAL, no vision run)" \
        bash -c "echo \"\$1\" | head -2 | grep -q '^RUN  *HELD  *USED GOODPUT' && echo \"\$1\" | grep -q '^llm ' && echo \"\$1\" | grep -q '^TOTAL ' && ! echo \"\$1\" | grep -q sweep-7" _ "$out"
    out=$("$ASTRA" astraeus goodput --weeks 8 --by pool 2>&1) || bad "astra goodput --weeks 8 --by pool: exit $?"
    check "astra goodput --weeks 8 --by pool: pool rows" bash -c "echo \"\$1\" | grep -q '^default '" _ "$out"
    out=$("$ASTRA" astraeus goodput --run llm 2>&1) || bad "astra goodput --run llm: exit $?"
    check "astra goodput --run llm: its row" bash -c "echo \"\$1\" | grep -q '^llm '" _ "$out"
    check "astra runs show sweep-7 as ml: exit 2 (404)" bash -c "\"$ASTRA\" runs show sweep-7 >/dev/null 2>&1; [ \$? = 2 ]"
    unset ASTRALYX_API ASTRALYX_TOKEN
fi

# --- series visibility ---------------------------------------------------------------------------
check "ml's by=run rows: only its runs" bash -c "[ \"\$(curl -sS -H 'Authorization: Bearer $ML' '$API/goodput?by=run' | jq -c '[.rows[].run]')\" = '[\"llm\"]' ]"
check "ml's by=workspace rows: only ml" bash -c "[ \"\$(curl -sS -H 'Authorization: Bearer $ML' '$API/goodput?by=workspace' | jq -c '[.rows[].workspace]')\" = '[\"ml\"]' ]"
check "vision's by=workspace rows: only vision" bash -c "[ \"\$(curl -sS -H 'Authorization: Bearer $VI' '$API/goodput?by=workspace' | jq -c '[.rows[].workspace]')\" = '[\"vision\"]' ]"
check "org admin's cluster view: both workspaces" bash -c "[ \"\$(curl -sS -H 'Authorization: Bearer $AD' '$API/organizations/acme/clusters/c1/goodput?by=workspace' | jq -c '[.rows[].workspace]')\" = '[\"ml\",\"vision\"]' ]"
check "ml's metrics: no vision series" bash -c "! curl -sS -H 'Authorization: Bearer $ML' '$API/goodput/metrics' | grep -q vision"
check "metrics content type" bash -c "curl -sS -o /dev/null -w '%{content_type}' -H 'Authorization: Bearer $ML' '$API/goodput/metrics' | grep -q 'text/plain; version=0.0.4'"
expect 200 "alerts" "$ML" GET /alerts
expect 400 "bad by" "$ML" GET "/goodput?by=galaxy"
expect 400 "period over 400 days" "$ML" GET "/goodput?start=2024-01-01T00:00:00Z&end=2025-06-01T00:00:00Z"
expect 400 "bad time" "$ML" GET "/goodput?start=yesterday"
expect 400 "start after end" "$ML" GET "/goodput?start=2026-10-02T00:00:00Z&end=2026-10-01T00:00:00Z"
expect 400 "bad weeks" "$ML" GET "/goodput/weekly?weeks=99"
expect 200 "days shortcut" "$ML" GET "/goodput?by=run&days=7"

# --- exactness: every second between submission and end counted once --------------------------
# exact_all TOKEN: for every ended run, sum of gpu_hours x 3600 == W x G x (end - submit).
exact_all() {
    local tok=$1 good=1
    while read -r name; do
        local run led
        run=$(curl -sS -H "Authorization: Bearer $tok" "$API/runs/$name")
        led=$(curl -sS -H "Authorization: Bearer $tok" "$API/runs/$name/goodput")
        local want got
        want=$(echo "$run" | jq '.workers * .gpus_per_worker * ((.ended_at | fromdateiso8601) - (.submitted_at | fromdateiso8601))')
        got=$(echo "$led" | jq '[.gpu_hours[] * 3600] | add | round')
        if [ "$want" != "$got" ]; then echo "  run $name: counted $got GPU-s, want $want"; good=0; fi
    done < <(curl -sS -H "Authorization: Bearer $tok" "$API/runs" | jq -r '.runs[] | select(.ended_at != null) | .name')
    [ $good = 1 ]
}
expect 202 "owner stop" "$VI" POST /runs/sweep-7/stop
# wait_all_ended [SECONDS]: poll until no run is open; on timeout, name the open runs.
wait_all_ended() {
    local limit=${1:-60} left=""
    for _ in $(seq $((limit * 2))); do
        left=$(curl -sS -H "Authorization: Bearer $AD" "$API/runs" | jq -r '.runs[] | select(.ended_at == null) | "\(.name):\(.state)"')
        [ -z "$left" ] && return 0
        sleep 0.5
    done
    echo "  still open after ${limit} s:" $left
    return 1
}
check "every run ends (succeeded or stopped)" wait_all_ended
ended=$(curl -sS -H "Authorization: Bearer $AD" "$API/runs" | jq -r '[.runs[] | select(.name == "sweep-7" or .name == "llm") | "\(.name) \(.state)"] | join(", ")')
check "sweep-7 was stopped, llm succeeded ($ended)" bash -c "curl -sS -H 'Authorization: Bearer $AD' $API/runs | jq -e '([.runs[] | select(.name == \"sweep-7\")][0].state == \"stopped\") and ([.runs[] | select(.name == \"llm\")][0].state == \"succeeded\")' >/dev/null"
check "every second counted once (ledger = W x G x (end - submit))" exact_all "$AD"
check "the log says run.submitted before the round's run.placed" \
    awk '/run.submitted run=llm /{s=NR} /run.placed run=llm /{if(!p)p=NR} END{exit !(s && p && s < p)}' "$T/server.log"

# --- clean shutdown on SIGTERM -----------------------------------------------------------------
kill -TERM "$SERVER_PID"
for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
check "SIGTERM: clean exit" bash -c "! kill -0 $SERVER_PID 2>/dev/null && grep -q 'stopped' '$T/server.log'"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

# --- crash safety ------------------------------------------------------------------------------
start_server
ACKED="$T/acked"
: > "$ACKED"
(
    for i in $(seq 1 60); do
        ws_tok=$ML; [ $((i % 2)) = 0 ] && ws_tok=$VI
        code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $ws_tok" \
            --data "{\"name\":\"burst-$i\",\"workers\":1,\"gpus_per_worker\":$((1 + i % 8)),\"sim_duration_s\":$((120 + 30 * (i % 5)))}" \
            "$API/runs" 2>/dev/null || true)
        [ "$code" = 201 ] && echo "burst-$i" >> "$ACKED"
        sleep 0.05
    done
) &
BURST=$!
sleep 2.5
# What was counted before the crash, per run (GPU-seconds), as the server reported it.
curl -sS -H "Authorization: Bearer $AD" "$API/organizations/acme/clusters/c1/goodput?by=run&days=1" \
    | jq -r '.rows[] | "\(.run) \([.gpu_hours[] * 3600] | add | round)"' > "$T/before" || true
sleep 0.5
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
wait "$BURST" 2>/dev/null || true
SERVER_PID=""
NACK=$(wc -l < "$ACKED")
check "some submissions were acknowledged before the crash ($NACK)" test "$NACK" -ge 5
start_server
check "after restart: every acknowledged run is there" bash -c "
    names=\$(curl -sS -H 'Authorization: Bearer $AD' '$API/runs' | jq -r '.runs[].name')
    while read -r n; do echo \"\$names\" | grep -qx \"\$n\" || { echo \"  missing \$n\"; exit 1; }; done < '$ACKED'"
check "after restart: no counted GPU-second lost" bash -c "
    curl -sS -H 'Authorization: Bearer $AD' '$API/organizations/acme/clusters/c1/goodput?by=run&days=1' \
      | jq -r '.rows[] | \"\(.run) \([.gpu_hours[] * 3600] | add | round)\"' > '$T/after'
    while read -r n s; do
      a=\$(awk -v n=\"\$n\" '\$1 == n {print \$2}' '$T/after')
      [ -n \"\$a\" ] && [ \"\$a\" -ge \"\$s\" ] || { echo \"  \$n: \$s before, \${a:-none} after\"; exit 1; }
    done < '$T/before'"
check "after restart: every run ends" wait_all_ended 240
check "after restart: every second counted exactly once, across the crash" exact_all "$AD"
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""

# --- machine losses through the executor: runs fail, restart, and are still counted exactly ----
cat > "$T/lossy.json" <<'EOF2'
{"organization": "acme", "cluster": "c1",
 "pools": [{"name": "default", "machines": [{"count": 4, "gpus": 8}]}],
 "time_scale": 60,
 "executor": {"startup_s": 60, "stop_s": 30, "failure_hold_s": 60,
              "machine_failures_per_day": 48, "machine_repair_s": 300}}
EOF2
DATA="$T/lossy"
"$BIN" admin init --org acme --cluster c1 --config "$T/lossy.json" --data-dir "$DATA" >/dev/null
"$BIN" admin workspace add ml --data-dir "$DATA" >/dev/null
AD=$("$BIN" admin token create --org-admin --data-dir "$DATA" 2>/dev/null)
cp "$T/lossy.json" "$T/config.json"
start_server
for i in 1 2 3 4; do
    req "$AD" POST /runs "{\"name\":\"l$i\",\"workspace\":\"ml\",\"workers\":1,\"gpus_per_worker\":8,\"sim_duration_s\":1800}" >/dev/null
done
check "lossy cluster: every run ends" wait_all_ended
check "lossy cluster: a machine was lost and runs failed or restarted" bash -c "
    grep -q machine.lost '$T/server.log' &&
    curl -sS -H 'Authorization: Bearer $AD' '$API/goodput?by=run&days=1' | jq -e '.total.gpu_hours.failure > 0' >/dev/null"
check "lossy cluster: every second counted exactly once" exact_all "$AD"
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""

if [ $fails -gt 0 ]; then
    echo "$fails check(s) failed; server log:"; tail -n 40 "$T/server.log"
    exit 1
fi
echo "all service checks passed"
