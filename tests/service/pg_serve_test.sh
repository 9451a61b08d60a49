#!/usr/bin/env bash
# `astraeus serve` on the PostgreSQL store (issue 23), against a fresh database on the server of
# ASTRAEUS_TEST_PG (scripts/postgres-test-server.sh; skipped, 77, when unset):
#  - a config whose store.postgresql cannot be reached: serve exits 1 naming the file and the key;
#  - `astraeus admin --config` sets the tenancy up in the database (no SQLite file is made);
#  - a second `serve` on the same database follows (503 naming the leader; issue 23 replicas);
#  - runs are submitted 5 at a time while the server is killed (kill -9) in the middle of each
#    group, three times, and restarted: every acknowledged (201) run is in the database exactly
#    once, and once all have ended every run's ledger = workers x GPUs x (end - submit) in
#    GPU-seconds (the independent expectation: a minute lost or counted twice breaks it);
#  - the server's database connection cut: the next submission is acknowledged (reconnected).
# The service's clock runs 60x (1 s = 1 minute). About 20 s.
# Usage: pg_serve_test.sh ASTRAEUS_BIN
set -u
BIN=$(realpath "$1")
. "$(dirname "$0")/pg_test_lib.sh"
pg_test_begin serve curl jq psql
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then kill -9 "$SERVER_PID" 2>/dev/null || true; fi
    pg_test_cleanup
}
trap cleanup EXIT

cat > "$T/config.json" <<EOF
{"organization": "acme", "cluster": "c1",
 "pools": [{"name": "default", "machines": [{"count": 4, "gpus": 8}]}],
 "lease_s": 1800, "time_scale": 60,
 "executor": {"startup_s": 60, "stop_s": 30, "utilization_pct": 90},
 "store": {"postgresql": "$PG"}}
EOF
cat > "$T/bad.json" <<'EOF'
{"store": {"postgresql": "host=127.0.0.1 port=1 dbname=astraeus connect_timeout=5"}}
EOF

# 1. An unreachable database: exit 1, the file and the key named.
"$BIN" serve --executor sim --config "$T/bad.json" --data-dir "$T/bad" --listen 127.0.0.1:0 >"$T/bad.out" 2>&1
rc=$?
check "unreachable store: exit 1 (got $rc)" test "$rc" = 1
check "unreachable store: '$T/bad.json: store.postgresql: cannot connect to PostgreSQL' said ($(head -c 300 "$T/bad.out"))" \
    grep -q "$T/bad.json: store.postgresql: cannot connect to PostgreSQL" "$T/bad.out"

# 2. The tenancy through admin --config.
A() { "$BIN" admin "$@" --config "$T/config.json" --data-dir "$T/data"; }
A init --org acme --cluster c1 >/dev/null || { echo "FAIL admin init"; exit 1; }
A workspace add ml >/dev/null && A workspace add cv >/dev/null || { echo "FAIL admin workspace add"; exit 1; }
AD=$(A token create --org-admin 2>/dev/null)
ML=$(A token create --workspace ml 2>/dev/null)
CV=$(A token create --workspace cv 2>/dev/null)
check "admin: 2 workspaces and 3 tokens in the database" test "$(sql 'SELECT COUNT(*) FROM workspaces')/$(sql 'SELECT COUNT(*) FROM tokens')" = 2/3
check "admin: 4 machines x 8 GPUs in the database" test "$(sql "SELECT COUNT(*) || 'x' || MIN(gpus) FROM machines")" = 4x8
n_admin=$(A token list | grep -c org-admin)
check "admin token list reads the database (1 org-admin token, got $n_admin)" test "$n_admin" = 1

start_server() {
    rm -f "$T/port"
    "$BIN" serve --executor sim --config "$T/config.json" --data-dir "$T/data" --listen 127.0.0.1:0 \
        --port-file "$T/port" 2>>"$T/server.log" &
    SERVER_PID=$!
    for _ in $(seq 150); do
        [ -s "$T/port" ] && { API="http://127.0.0.1:$(cat "$T/port")/v1"; return 0; }
        kill -0 "$SERVER_PID" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# 3. Submissions in groups of 5, the server killed (-9) in the middle of groups 2, 4 and 6.
: > "$T/codes"
start_server || { echo "FAIL serve does not start: $(tail -n 5 "$T/server.log")"; exit 1; }
# A second serve on the same database (another data directory) follows: /readyz 503 naming the
# leader (the first server's replica id: HOSTNAME:DATA_DIR), a write 503 with Retry-After; SIGTERM ends it (0).
"$BIN" serve --executor sim --config "$T/config.json" --data-dir "$T/data2" --listen 127.0.0.1:0 \
    --port-file "$T/port2" >"$T/second.out" 2>&1 &
second=$!
for _ in $(seq 100); do [ -s "$T/port2" ] && break; kill -0 "$second" 2>/dev/null || break; sleep 0.1; done
P2=$(cat "$T/port2" 2>/dev/null)
ready2=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$P2/readyz" 2>/dev/null)
check "a second serve follows: /readyz 503 follower, leader $(hostname):$T/data ($ready2)" \
    test "$(echo "${ready2% *}" | jq -r '.status + " " + .leader') ${ready2##* }" = "follower $(hostname):$T/data 503"
hdr=$(curl -sS -D - -o /dev/null -X POST -H "Authorization: Bearer $ML" --data '{}' "http://127.0.0.1:$P2/v1/runs" 2>/dev/null | tr -d '\r')
check "a second serve: a write answered 503 with Retry-After: 2 ($(echo "$hdr" | head -1))" \
    bash -c "echo \"\$1\" | grep -q '^HTTP/1.1 503' && echo \"\$1\" | grep -qi '^Retry-After: 2\$'" _ "$hdr"
kill -TERM "$second"; wait "$second"; rc=$?
check "a follower stopped by SIGTERM: exit 0 (got $rc)" test "$rc" = 0
check "a follower wrote nothing (the lease still at generation 1)" test "$(sql 'SELECT generation FROM astraeus_leader_lease')" = 1

kills=0
for g in 1 2 3 4 5 6 7; do
    pids=()
    for k in 1 2 3 4 5; do
        i=$(( (g - 1) * 5 + k ))
        tok=$ML; [ $((i % 2)) = 0 ] && tok=$CV
        ( code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $tok" \
              --data "{\"name\":\"r$i\",\"workers\":$((1 + i % 2)),\"gpus_per_worker\":$((1 + i % 8)),\"sim_duration_s\":$((60 + 30 * (i % 3)))}" \
              "$API/runs" 2>/dev/null)
          echo "r$i $code" >> "$T/codes" ) &
        pids+=($!)
    done
    if [ $((g % 2)) = 0 ]; then
        sleep 0.0$((g * 2))
        kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; kills=$((kills + 1))
        wait "${pids[@]}"  # the group's requests: answered before the kill, or failed
        start_server || { echo "FAIL no restart after kill $kills: $(tail -n 5 "$T/server.log")"; exit 1; }
    else
        wait "${pids[@]}"
    fi
done
awk '$2 == 201 {print $1}' "$T/codes" | sort > "$T/acked"
echo "     $(wc -l < "$T/acked") of 35 submissions acknowledged across $kills kills"
check "3 kill -9s and restarts" test "$kills" = 3
check "some submissions acknowledged ($(wc -l < "$T/acked"))" test "$(wc -l < "$T/acked")" -ge 20
sql "SELECT name FROM runs" | sort > "$T/stored"
missing=$(comm -23 "$T/acked" "$T/stored" | tr '\n' ' ')
check "every acknowledged run is in the database${missing:+ (missing: $missing)}" test -z "$missing"
check "each run once ($(sql 'SELECT COUNT(*) FROM runs') rows, as many names; some unacknowledged ones were stored before the kill)" \
    test "$(sql 'SELECT COUNT(*) FROM runs')" = "$(sql 'SELECT COUNT(DISTINCT name) FROM runs')"

# 4. Every run ends; its ledger is exact.
runs_end_and_ledgers_exact "$API" "$T/stored"
check "every run ends (left: $left)" test "$left" = 0
check "every run's ledger = W x G x (end - submit): nothing lost or counted twice" test "$exact" = 1
check "no SQLite store made in the data directory" test ! -e "$T/data/astraeus.db"

# 5. The server's connection cut (pg_terminate_backend, as a database restart or a network cut
# does): the store connects again at its next statement, which it sends again when it was a
# read or a BEGIN (nothing done yet). So the next submission is acknowledged at once, no write
# fails, and the run is stored.
cut=$(sql "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '$DB' AND application_name = 'astraeus'")
check "the server's connection cut ($cut)" test "$cut" = 1
for _ in $(seq 50); do
    [ "$(sql "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = '$DB' AND application_name = 'astraeus'")" = 0 ] && break
    sleep 0.1
done
code=$(curl -sS -o "$T/late.json" -w "%{http_code}" -X POST -H "Authorization: Bearer $ML" \
    --data '{"name":"late","workers":1,"gpus_per_worker":1,"sim_duration_s":60}' "$API/runs" 2>/dev/null)
check "after the cut: the next submission acknowledged (201, got $code $(head -c 200 "$T/late.json"))" test "$code" = 201
check "after the cut: the run is in the database" test "$(sql "SELECT COUNT(*) FROM runs WHERE name = 'late'")" = 1
check "after the cut: the server connected again (1 connection)" \
    test "$(sql "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = '$DB' AND application_name = 'astraeus'")" = 1
check "after the cut: no failed write logged" bash -c "! grep -q store.write_failed '$T/server.log'"
kill -TERM "$SERVER_PID"; wait "$SERVER_PID"; rc=$?; SERVER_PID=""
check "SIGTERM: exit 0 (got $rc)" test "$rc" = 0

echo "$passes passed, $fails failed"
if [ $fails -gt 0 ]; then tail -n 30 "$T/server.log"; exit 1; fi
exit 0
