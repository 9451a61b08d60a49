#!/usr/bin/env bash
# A follower replica serves the users' reads (issue 23, docs/operations.md "Replicas"): two
# `astraeus serve --executor sim` replicas on a fresh database of ASTRAEUS_TEST_PG (skipped, 77,
# when unset), lease 15 s renewed every 1 s (A stopped 3 s stays the leader), the follower's snapshot reloaded every 0.5 s, the
# service's clock 60x:
#  - runs submitted to the leader A are listed by the follower B within 20 s; GET /v1/runs/NAME
#    of an ended run is the same JSON on both (but "history": the states since each one loaded);
#    `astra runs list` prints the same on both; B's answers carry X-Astraeus-Role: follower and
#    X-Astraeus-Data-Age-Ms; B's /readyz stays 503 "follower";
#  - on B as on A: a workspace token sees its own runs only (another workspace's run: 404, the
#    list without it), a bad token 401, /v1/machines 403 for a workspace token;
#  - B refuses writes (POST /v1/runs, stop, agent endpoints, sessions) and a run's logs with 503
#    naming the leader and its address;
#  - B writes nothing: with A stopped (SIGSTOP), the database's data (the lease table aside) is the
#    same before and after 3 s of reads and writes sent to B (its session is read-only besides);
#  - after A's kill -9, B leads and takes writes.
# About 40 s. Usage: pg_follower_reads_test.sh ASTRAEUS_BIN ASTRA_BIN
set -u
BIN=$(realpath "$1")
ASTRA=$(realpath "$2")
. "$(dirname "$0")/pg_test_lib.sh"
pg_test_begin follower curl jq psql pg_dump
PA=""; PB=""
cleanup() {
    for p in $PA $PB; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
    pg_test_cleanup
}
trap cleanup EXIT

for r in a b; do
    sim_replica_config "$r" "$PG"
    jq '.lease_duration_s = 15 | .lease_renew_s = 1 | .follower_refresh_s = 0.5' "$T/$r.json" > "$T/$r.tmp" && mv "$T/$r.tmp" "$T/$r.json"
done
A() { "$BIN" admin "$@" --config "$T/a.json" --data-dir "$T/admin"; }
A init --org acme --cluster c1 >/dev/null || { echo "FAIL admin init"; exit 1; }
A workspace add ml >/dev/null && A workspace add cv >/dev/null || { echo "FAIL admin workspace add"; exit 1; }
AD=$(A token create --org-admin 2>/dev/null)
ML=$(A token create --workspace ml 2>/dev/null)
CV=$(A token create --workspace cv 2>/dev/null)

start_replica a || { echo "FAIL replica a does not start: $(tail -n 5 "$T/serve-a.log")"; exit 1; }
for _ in $(seq 100); do [ "$(ready_code a)" = 200 ] && break; sleep 0.1; done
start_replica b || { echo "FAIL replica b does not start: $(tail -n 5 "$T/serve-b.log")"; exit 1; }
get() {  # get R TOKEN PATH: the body; the status in $T/code
    curl -sS -m 5 -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $2" "$(url "$1")/v1$3" > "$T/code" 2>/dev/null
    cat "$T/body"
}
code() { cat "$T/code"; }
post() {  # post R TOKEN PATH BODY: the status; the body in $T/body
    curl -sS -m 5 -o "$T/body" -w '%{http_code}' -X POST -H "Authorization: Bearer $2" --data "$4" "$(url "$1")$3" 2>/dev/null
}
submit_as() {  # submit_as TOKEN NAME SIM_DURATION_S: A's status
    post a "$1" /v1/runs "{\"name\":\"$2\",\"workers\":1,\"gpus_per_worker\":2,\"sim_duration_s\":$3}"
}

# 1. Runs submitted to A, read on B.
check "r1, r2 (ml) and c1 (cv) acknowledged by a" test "$(submit_as "$ML" r1 60)$(submit_as "$ML" r2 60)$(submit_as "$CV" c1 60)" = 201201201
for _ in $(seq 200); do
    n=$(get b "$AD" '/runs?state=succeeded' | jq '.runs | length' 2>/dev/null)
    [ "${n:-0}" = 3 ] && [ "$(get a "$AD" '/runs?state=succeeded' | jq '.runs | length')" = 3 ] && break
    sleep 0.1
done
check "b lists the 3 runs ended on a (within 20 s; got ${n:-none})" test "${n:-0}" = 3
for name in r1 c1; do
    tok=$ML; [ "$name" = c1 ] && tok=$CV
    ja=$(get a "$tok" "/runs/$name" | jq -S 'del(.history)')
    jb=$(get b "$tok" "/runs/$name" | jq -S 'del(.history)')
    check "GET /v1/runs/$name: the same JSON on a and b ($(echo "$jb" | jq -c '{state, attempts, started_at, ended_at}'))" \
        test -n "$ja" -a "$ja" = "$jb"
done
ASTRALYX_TOKEN=$ML ASTRALYX_API="$(url a)/v1" "$ASTRA" runs list > "$T/list-a" 2>&1
ASTRALYX_TOKEN=$ML ASTRALYX_API="$(url b)/v1" "$ASTRA" runs list > "$T/list-b" 2>&1; rc=$?
check "astra runs list: the same output on a and b (rc $rc, $(wc -l < "$T/list-b") lines)" \
    sh -c "[ $rc = 0 ] && grep -q r1 '$T/list-b' && cmp -s '$T/list-a' '$T/list-b'"
hdr=$(curl -sS -D - -o /dev/null -H "Authorization: Bearer $ML" "$(url b)/v1/runs" | tr -d '\r')
age=$(echo "$hdr" | awk -F': ' 'tolower($1) == "x-astraeus-data-age-ms" {print $2}')
check "b's answers say follower and the data's age ($age ms, refresh 0.5 s)" \
    sh -c "echo '$hdr' | grep -qi '^x-astraeus-role: follower' && [ -n '$age' ] && [ '$age' -ge 0 ] && [ '$age' -lt 60000 ]"
check "a's answers carry no follower header" sh -c "! curl -sS -D - -o /dev/null -H 'Authorization: Bearer $ML' '$(url a)/v1/runs' | grep -qi '^x-astraeus-role: follower'"
rb=$(curl -sS -w ' %{http_code}' "$(url b)/readyz" | tr -d '\n')
check "b's /readyz stays 503 follower naming ra ($rb)" \
    test "$(echo "${rb% *}" | jq -r '"\(.status) \(.leader)"') ${rb##* }" = "follower ra 503"
check "b's /healthz 200 role follower" test "$(curl -sS "$(url b)/healthz" | jq -r .role)" = follower

# 2. The same visibility on B as on A.
for r in a b; do
    get "$r" "$ML" /runs/c1 > /dev/null
    check "$r: ml's token cannot read cv's run c1 ($(code))" test "$(code)" = 404
    check "$r: ml's list holds r1, r2 only" test "$(get "$r" "$ML" /runs | jq -c '[.runs[].name] | sort')" = '["r1","r2"]'
    get "$r" "astx_not_a_token" /runs > /dev/null
    check "$r: a bad token 401 ($(code))" test "$(code)" = 401
    get "$r" "$ML" /machines > /dev/null
    check "$r: /v1/machines 403 for a workspace token ($(code))" test "$(code)" = 403
done
# (the window's bounds aside: at time_scale 60 a snapshot's clock is behind the leader's)
ga=$(get a "$AD" '/goodput?by=workspace' | jq -S 'del(.start, .end)'); gb=$(get b "$AD" '/goodput?by=workspace' | jq -S 'del(.start, .end)')
check "b: the org admin's goodput rows equal a's ($(echo "$gb" | jq -c '[.rows[]? | .name // .workspace] // .' | head -c 100))" test "$ga" = "$gb"
[ "$ga" = "$gb" ] || diff <(echo "$ga") <(echo "$gb") | head -n 20
get b "$AD" /machines > /dev/null
check "b: /v1/machines 200 for the org admin, 4 machines" test "$(code) $(jq '.machines | length' "$T/body")" = "200 4"
get b "$ML" /fairness > /dev/null
check "b: /v1/fairness 200" test "$(code)" = 200

# 3. Writes and logs refused by B, naming the leader.
refused() { test "$1" = 503 && test "$(jq -r '"\(.status) \(.leader) \(.leader_address)"' "$T/body")" = "follower ra http://replica-a.example:8080"; }
c=$(post b "$ML" /v1/runs '{"name":"rb1","workers":1,"gpus_per_worker":1,"sim_duration_s":60}')
check "b: POST /v1/runs 503 naming the leader ($c $(head -c 200 "$T/body"))" refused "$c"
c=$(post b "$ML" /v1/runs/r1/stop '{}')
check "b: POST /v1/runs/r1/stop 503 naming the leader ($c)" refused "$c"
c=$(post b "$ML" /v1/agent/heartbeat '{}')
check "b: an agent endpoint 503 naming the leader ($c)" refused "$c"
get b "$ML" /runs/r1/logs > /dev/null
check "b: a run's logs 503 naming the leader ($(code))" refused "$(code)"
check "b never stored rb1" test "$(sql "SELECT COUNT(*) FROM runs WHERE name = 'rb1'")" = 0

# 4. B writes nothing: A stopped, the data before and after B's work.
check "b reads through its own session (application astraeus-follower; read-only: FollowerSnapshot gtest)" \
    test "$(psql "$ASTRAEUS_TEST_PG" -Atqc "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = '$DB' AND application_name = 'astraeus-follower'")" -ge 1
kill -STOP "$PA"
sleep 1
lease=$(sql "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE '%lease%'" | sed 's/^/-T /' | tr '\n' ' ')
dump() { pg_dump --data-only --no-owner $lease "$PG" | grep -v -e '^--' -e '^\\' > "$T/dump-$1.sql"; md5sum < "$T/dump-$1.sql" | cut -c1-12; }
before=$(dump before)
end=$(($(date +%s) + 3))
while [ "$(date +%s)" -lt "$end" ]; do
    get b "$ML" /runs > /dev/null; get b "$AD" /goodput > /dev/null; get b "$ML" /fairness > /dev/null
    get b "$ML" /runs/r1 > /dev/null; get b "$AD" /machines > /dev/null; get b "$ML" /stalls > /dev/null
    post b "$ML" /v1/runs '{"name":"rb2","workers":1,"gpus_per_worker":1}' > /dev/null
    sleep 0.1
done
after=$(dump after)
still=$(ready_code b)
kill -CONT "$PA"
check "b still followed meanwhile (/readyz $still)" test "$still" = 503
check "b wrote nothing in 3 s of reads and refused writes (data $before / $after)" test "$before" = "$after"
[ "$before" = "$after" ] || diff "$T/dump-before.sql" "$T/dump-after.sql" | head -n 20

# 5. A killed: B leads and takes writes.
kill -9 "$PA"; wait "$PA" 2>/dev/null; PA=""
for _ in $(seq 500); do [ "$(ready_code b)" = 200 ] && break; sleep 0.05; done
check "b leads after a's kill -9 (generation 2)" test "$(curl -sS "$(url b)/readyz" | jq -r '"\(.role) \(.generation)"')" = "leader 2"
c=$(post b "$ML" /v1/runs '{"name":"r3","workers":1,"gpus_per_worker":1,"sim_duration_s":60}')
check "b takes a submission now ($c)" test "$c" = 201
check "r3 is in the database" test "$(sql "SELECT COUNT(*) FROM runs WHERE name = 'r3'")" = 1
hdr=$(curl -sS -D - -o /dev/null -H "Authorization: Bearer $ML" "$(url b)/v1/runs" | tr -d '\r')
check "b's answers no longer say follower" sh -c "! echo '$hdr' | grep -qi '^x-astraeus-role: follower'"
kill -TERM "$PB"; wait "$PB"; rc=$?; PB=""
check "SIGTERM: b exits 0 (got $rc)" test "$rc" = 0

echo "$passes passed, $fails failed"
if [ $fails -gt 0 ]; then tail -n 20 "$T/serve-a.log" "$T/serve-b.log"; exit 1; fi
exit 0
