#!/usr/bin/env bash
# Two `astraeus serve` replicas on one PostgreSQL database (issue 23, docs/operations.md
# "Replicas"), on a fresh database of ASTRAEUS_TEST_PG (skipped, 77, when unset); sim executor,
# lease 3 s renewed every 1 s, the service's clock 60x (1 s = 1 minute):
#  - replica A leads (/readyz 200 role leader, astraeus_leader{replica="ra"} 1, generation 1),
#    B follows (/readyz 503 naming ra and its address, astraeus_leader{replica="rb"} 0);
#  - runs submitted to A, A killed (kill -9) while they run: B leads (generation 2); the take-over
#    time (kill to B's /readyz 200) is printed, not asserted; every acknowledged run is in the
#    database exactly once, runs submitted to B after it are acknowledged, every run ends, and each
#    run's ledger = workers x GPUs x (end - submit) (a second lost or doubled across the
#    take-over breaks it; as service_pg_serve's restarts);
#  - A restarted follows; B stopped (SIGSTOP) until A takes over (generation 3), then woken
#    (SIGCONT) with a submission sent to it: B exits 3 with leader.deposed logged, and the
#    submission is not stored (its write fenced or never made).
# About 40 s. Usage: pg_failover_test.sh ASTRAEUS_BIN
set -u
BIN=$(realpath "$1")
[ -n "${ASTRAEUS_TEST_PG:-}" ] || { echo "SKIP: ASTRAEUS_TEST_PG is not set (scripts/postgres-test-server.sh start prints it)"; exit 77; }
for tool in curl jq psql; do command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }; done
T=$(mktemp -d)
DB=astraeus_failover_$$
PA=""; PB=""
cleanup() {
    for p in $PA $PB; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
    psql "$ASTRAEUS_TEST_PG" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
    [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
psql "$ASTRAEUS_TEST_PG" -qc "CREATE DATABASE $DB" || { echo "cannot create the test database"; exit 1; }
PG="$ASTRAEUS_TEST_PG dbname=$DB"
sql() { psql "$PG" -Atqc "$1"; }
fails=0; passes=0
. "$(dirname "$0")/pg_ledger_lib.sh"
check() { local what=$1; shift; if "$@"; then passes=$((passes + 1)); echo "ok   $what"; else fails=$((fails + 1)); echo "FAIL $what"; fi; }

for r in a b; do
    printf '%s\n' \
        '{"organization": "acme", "cluster": "c1",' \
        ' "pools": [{"name": "default", "machines": [{"count": 4, "gpus": 8}]}],' \
        ' "lease_s": 1800, "time_scale": 60,' \
        ' "executor": {"startup_s": 60, "stop_s": 30, "utilization_pct": 90},' \
        " \"lease_duration_s\": 3, \"lease_renew_s\": 1, \"replica\": \"r$r\", \"address\": \"http://replica-$r.example:8080\"," \
        " \"store\": {\"postgresql\": \"$PG\"}}" > "$T/$r.json"
done
A() { "$BIN" admin "$@" --config "$T/a.json" --data-dir "$T/admin"; }
A init --org acme --cluster c1 >/dev/null || { echo "FAIL admin init"; exit 1; }
A workspace add ml >/dev/null || { echo "FAIL admin workspace add"; exit 1; }
AD=$(A token create --org-admin 2>/dev/null)
ML=$(A token create --workspace ml 2>/dev/null)

# start R: serve replica R (a or b) in data directory $T/data-R; its PID in PA/PB, port in port-R.
start() {
    local r=$1
    rm -f "$T/port-$r"
    "$BIN" serve --executor sim --config "$T/$r.json" --data-dir "$T/data-$r" --listen 127.0.0.1:0 \
        --port-file "$T/port-$r" 2>>"$T/serve-$r.log" &
    local pid=$!
    if [ "$r" = a ]; then PA=$pid; else PB=$pid; fi
    for _ in $(seq 150); do [ -s "$T/port-$r" ] && return 0; kill -0 "$pid" 2>/dev/null || return 1; sleep 0.1; done
    return 1
}
url() { echo "http://127.0.0.1:$(cat "$T/port-$1")"; }
ready_code() { curl -sS -o /dev/null -w '%{http_code}' "$(url "$1")/readyz" 2>/dev/null; }
metric() {  # metric R NAME: the value of series NAME on replica R's metrics
    curl -sS -H "Authorization: Bearer $AD" "$(url "$1")/v1/goodput/metrics" 2>/dev/null | awk -v n="$2" '$1 == n {print $2}'
}

# 1. A leads, B follows.
start a || { echo "FAIL replica a does not start: $(tail -n 5 "$T/serve-a.log")"; exit 1; }
for _ in $(seq 50); do [ "$(ready_code a)" = 200 ] && break; sleep 0.1; done
start b || { echo "FAIL replica b does not start: $(tail -n 5 "$T/serve-b.log")"; exit 1; }
ra=$(curl -sS "$(url a)/readyz")
check "a leads: /readyz 200, role leader, generation 1 ($ra)" test "$(echo "$ra" | jq -r '"\(.role) \(.replica) \(.generation)"')" = "leader ra 1"
rb=$(curl -sS -w ' %{http_code}' "$(url b)/readyz")
check "b follows: /readyz 503 naming ra at its address ($rb)" \
    test "$(echo "${rb% *}" | jq -r '"\(.status) \(.leader) \(.leader_address)"') ${rb##* }" = "follower ra http://replica-a.example:8080 503"
check "a's metrics: astraeus_leader{replica=\"ra\"} 1, generation 1" test "$(metric a 'astraeus_leader{replica="ra"}')/$(metric a astraeus_leader_generation)" = 1/1
check "b's metrics: astraeus_leader{replica=\"rb\"} 0, generation 1" test "$(metric b 'astraeus_leader{replica="rb"}')/$(metric b astraeus_leader_generation)" = 0/1
age=$(metric a astraeus_leader_lease_age_seconds)
check "a's lease age within its renewal period (<= 1.5 s: $age)" awk -v a="$age" 'BEGIN { exit !(a >= 0 && a <= 1.5) }'

# 2. Runs submitted to a (10 minutes of work each: 10 s here), a killed while they run.
submit() {  # submit R NAME: the HTTP code
    local n=${2#r}; n=${n//[!0-9]/}; n=${n:-0}
    curl -sS -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $ML" \
        --data "{\"name\":\"$2\",\"workers\":$((1 + n % 2)),\"gpus_per_worker\":$((1 + n % 4)),\"sim_duration_s\":600}" \
        "$(url "$1")/v1/runs" 2>/dev/null
}
: > "$T/acked"
for i in 1 2 3 4 5 6; do [ "$(submit a r$i)" = 201 ] && echo "r$i" >> "$T/acked"; done
check "6 runs acknowledged by a" test "$(wc -l < "$T/acked")" = 6
sleep 1
kill -9 "$PA"; wait "$PA" 2>/dev/null
t0=$(date +%s.%N)
for _ in $(seq 300); do [ "$(ready_code b)" = 200 ] && break; sleep 0.05; done
t1=$(date +%s.%N)
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
echo "     take-over: b ready $took s after a's kill -9 (lease 3 s, renewal 1 s)"
rb=$(curl -sS "$(url b)/readyz")
check "b leads after a's kill: generation 2 ($rb)" test "$(echo "$rb" | jq -r '"\(.role) \(.replica) \(.generation)"')" = "leader rb 2"
check "b's metrics: astraeus_leader{replica=\"rb\"} 1, generation 2" test "$(metric b 'astraeus_leader{replica="rb"}')/$(metric b astraeus_leader_generation)" = 1/2
for i in 7 8 9; do [ "$(submit b r$i)" = 201 ] && echo "r$i" >> "$T/acked"; done
check "3 more runs acknowledged by b" test "$(wc -l < "$T/acked")" = 9
sort -o "$T/acked" "$T/acked"
sql "SELECT name FROM runs" | sort > "$T/stored"
check "every acknowledged run in the database exactly once ($(tr '\n' ' ' < "$T/stored"))" cmp -s "$T/acked" "$T/stored"

runs_end_and_ledgers_exact "$(url b)/v1" "$T/stored"
check "every run ends (left: $left)" test "$left" = 0
check "every run's ledger = W x G x (end - submit) across the take-over: no second lost or doubled" test "$exact" = 1

# 3. A deposed leader that wakes up: b stopped until a (restarted, following) takes over.
start a || { echo "FAIL replica a does not restart: $(tail -n 5 "$T/serve-a.log")"; exit 1; }
check "a restarted follows b ($(ready_code a))" test "$(ready_code a)" = 503
kill -STOP "$PB"
for _ in $(seq 200); do [ "$(ready_code a)" = 200 ] && break; sleep 0.05; done
check "a leads while b is stopped: generation 3" test "$(curl -sS "$(url a)/readyz" | jq -r .generation)" = 3
kill -CONT "$PB"
code=$(submit b ghost)
wait "$PB"; rc=$?; PB=""
check "the woken deposed leader b exits 3 (got $rc; its submission answered '$code')" test "$rc" = 3
check "b logged leader.deposed ($(grep -o 'leader.deposed.*' "$T/serve-b.log" | head -c 300))" grep -q 'error leader.deposed' "$T/serve-b.log"
check "b's late submission is not stored" test "$(sql "SELECT COUNT(*) FROM runs WHERE name = 'ghost'")" = 0
check "a goes on: a new run acknowledged" test "$(submit a r10)" = 201
kill -TERM "$PA"; wait "$PA"; rc=$?; PA=""
check "SIGTERM: a exits 0 (got $rc)" test "$rc" = 0

echo "$passes passed, $fails failed"
if [ $fails -gt 0 ]; then tail -n 20 "$T/serve-a.log" "$T/serve-b.log"; exit 1; fi
exit 0
