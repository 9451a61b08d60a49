#!/usr/bin/env bash
# usage: forecast_live_test.sh ASTRAEUS_BINARY ASTRA_BINARY
# A pending run's position, estimated start and reason, live (`astraeus serve --executor sim`,
# real-time clock, policy astraea, leases longer than the test). Pool p: p-1 and p-2, 4 GPUs
# each; p-2 drained first.
#   a (1 x 4, time limit 600 s) runs on p-1 from A (its started_at).
#   b (1 x 4, limit 300) would fit p-2: reason "waiting for GPUs of p-2 (drained)"; position 1;
#     estimated start: when a's limit ends it, A + 600 (within 5 s: a is placed up to the
#     executor's 1-s startup before A).
#   c (2 x 4, limit 300) needs both machines: "no machine up fits 2 x 4 GPUs today (it needs
#     p-2 (drained))"; position 2; estimated start unknown (null): p-2 may never come back.
# p-2 undrained: b starts on it; c, alone, position 1, starts when a ends (A + 600; b ends at
# its limit, 300 s after it started, before that).
# `astra runs show` and `astra runs list --pending` print the same. Skipped (77) without curl
# or jq. Bounded: about 10 s (polls up to 60 s for each state).
set -u
ASTRAEUS=$1; ASTRA=$2
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/cfg.json" <<'CFG'
{"pools": [{"name": "p", "machines": [{"count": 2, "gpus": 4}]}],
 "policy": "astraea", "lease_s": 86400, "time_scale": 1,
 "executor": {"startup_s": 1, "stop_s": 1}}
CFG
start_server "$WORK/cfg.json" || exit 1
admin workspace add ml > /dev/null || exit 1
TOKEN=$(new_token --workspace ml)
OT=$(new_token --operator)
H="Authorization: Bearer $TOKEN"
post() { curl -sS -o "$WORK/post.json" -w '%{http_code}' -X POST "$API/runs" -H "$H" -H 'Content-Type: application/json' -d "$1"; }
show() { curl -sS "$API/runs/$1" -H "$H" | jq -r "$2"; }
secs() { date -u -d "$1" +%s; }
# wait_for RUN JQ VALUE: polls (up to 60 s) until RUN's JQ is VALUE.
wait_for() { for _ in $(seq 600); do [ "$(show "$1" "$2")" = "$3" ] && return 0; sleep 0.1; done; return 1; }

check "drain p-2" "ASTRALYX_API=$API ASTRALYX_TOKEN=$OT '$ASTRA' machines drain p-2 > /dev/null"
check "submit a: 201" "[ \"\$(post '{\"name\":\"a\",\"workers\":1,\"gpus_per_worker\":4,\"time_limit_s\":600,\"sim_duration_s\":100000}')\" = 201 ]"
check "a runs" "wait_for a .state running"
A=$(secs "$(show a .started_at)")
check "submit b: 201" "[ \"\$(post '{\"name\":\"b\",\"workers\":1,\"gpus_per_worker\":4,\"time_limit_s\":300,\"sim_duration_s\":100000}')\" = 201 ]"
check "submit c: 201" "[ \"\$(post '{\"name\":\"c\",\"workers\":2,\"gpus_per_worker\":4,\"time_limit_s\":300,\"sim_duration_s\":100000}')\" = 201 ]"
check "b's reason names the drained machine" "wait_for b .reason 'waiting for GPUs of p-2 (drained)'"
check "c's reason: no machine up fits it" "wait_for c .reason 'no machine up fits 2 x 4 GPUs today (it needs p-2 (drained))'"
check "b: position 1" "[ \"\$(show b .position)\" = 1 ]"
check "c: position 2" "[ \"\$(show c .position)\" = 2 ]"
B=$(secs "$(show b .estimated_start)")
check "b starts when a's limit ends it: $A + 600 (got ${B:-none})" "[ -n '$B' ] && [ \$(( $B - $A - 600 )) -ge -5 ] && [ \$(( $B - $A - 600 )) -le 5 ]"
check "c: estimated start unknown (null)" "[ \"\$(show c .estimated_start)\" = null ]"
check "an RFC 3339 UTC time" "show b .estimated_start | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\$'"

export ASTRALYX_API=$API ASTRALYX_TOKEN=$TOKEN
"$ASTRA" runs show b > "$WORK/show.txt"
check "astra runs show b: position" "grep -Eq '^Position: +1 in pool p\$' '$WORK/show.txt'"
check "astra runs show b: estimated start" "grep -Eq '^Estimated start: +$(show b .estimated_start)\$' '$WORK/show.txt'"
check "astra runs show b: the reason" "grep -Eq '^State: +pending \\(waiting for GPUs of p-2 \\(drained\\)\\)\$' '$WORK/show.txt'"
"$ASTRA" runs list --pending > "$WORK/pending.txt"
check "astra runs list --pending: header" "head -1 '$WORK/pending.txt' | grep -Eq '^NAME +WORKSPACE +POOL +WORKERS +POSITION +ESTIMATED START +REASON\$'"
check "astra runs list --pending: b" "grep -Eq '^b +ml +p +1 x 4 +1 +$(show b .estimated_start) +waiting for GPUs of p-2 \\(drained\\)\$' '$WORK/pending.txt'"
check "astra runs list --pending: c" "grep -Eq '^c +ml +p +2 x 4 +2 +unknown +no machine up fits' '$WORK/pending.txt'"
check "astra runs list --pending: 2 runs" "[ \$(wc -l < '$WORK/pending.txt') = 3 ]"
"$ASTRA" runs list --pending --state running > /dev/null 2> "$WORK/both.err"
check "--pending with --state running: exit 2" "[ \$? = 2 ] && grep -q 'cannot go with --state' '$WORK/both.err'"

check "undrain p-2" "ASTRALYX_TOKEN=$OT '$ASTRA' machines undrain p-2 > /dev/null"
check "b starts on p-2" "wait_for b .state running"
check "c: position 1" "wait_for c .position 1"
C=$(secs "$(show c .estimated_start)")
check "c starts when a ends: $A + 600 (got ${C:-none})" "[ -n '$C' ] && [ \$(( $C - $A - 600 )) -ge -5 ] && [ \$(( $C - $A - 600 )) -le 5 ]"
check "a running run has no forecast" "[ \"\$(show a .position)\" = null ]"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
