#!/usr/bin/env bash
# A leader cut off from its PostgreSQL database without a word (issue 23, docs/operations.md
# "Replicas"): two `astraeus serve` replicas on a fresh database of ASTRAEUS_TEST_PG (skipped, 77,
# when unset); replica A reaches the database through a TCP proxy (tcp_cut_proxy.py), B directly;
# sim executor, lease 3 s renewed every 1 s, the service's clock 60x. Runs are submitted to A,
# then the proxy is cut as a network partition cuts (nothing forwarded, nothing closed: A's
# renewal and store calls hang instead of failing). Checked:
#  - A stops by itself (exit 3, leader.deposed logged) within lease_duration_s + 1 s of the cut,
#    and before B leads (a hung renewal used to keep it leading: two leaders);
#  - B leads (generation 2) within 10 s of the cut; every run A acknowledged is in the database
#    exactly once; a submission sent to A after the cut is either not acknowledged or stored;
#    every run ends and each run's ledger = workers x GPUs x (end - submit) (pg_ledger_lib.sh).
# About 30 s. Usage: pg_cut_test.sh ASTRAEUS_BIN
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
[ -n "${ASTRAEUS_TEST_PG:-}" ] || { echo "SKIP: ASTRAEUS_TEST_PG is not set (scripts/postgres-test-server.sh start prints it)"; exit 77; }
for tool in curl jq psql python3; do command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }; done
T=$(mktemp -d)
DB=astraeus_cut_$$
PA=""; PB=""; PX=""
cleanup() {
    for p in $PA $PB $PX; do kill -9 "$p" 2>/dev/null; done
    psql "$ASTRAEUS_TEST_PG" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
    [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
psql "$ASTRAEUS_TEST_PG" -qc "CREATE DATABASE $DB" || { echo "cannot create the test database"; exit 1; }
PG="$ASTRAEUS_TEST_PG dbname=$DB"
sql() { psql "$PG" -Atqc "$1"; }
fails=0; passes=0
. "$HERE/pg_ledger_lib.sh"
check() { local what=$1; shift; if "$@"; then passes=$((passes + 1)); echo "ok   $what"; else fails=$((fails + 1)); echo "FAIL $what"; fi; }

# The proxy to the test server (its host and port from ASTRAEUS_TEST_PG; libpq's defaults else).
pghost=$(echo "$ASTRAEUS_TEST_PG" | sed -n 's/.*host=\([^ ]*\).*/\1/p'); pghost=${pghost:-127.0.0.1}
pgport=$(echo "$ASTRAEUS_TEST_PG" | sed -n 's/.*port=\([0-9]*\).*/\1/p'); pgport=${pgport:-5432}
python3 "$HERE/tcp_cut_proxy.py" "$pghost" "$pgport" "$T/proxy-port" &
PX=$!
for _ in $(seq 50); do [ -s "$T/proxy-port" ] && break; sleep 0.1; done
[ -s "$T/proxy-port" ] || { echo "FAIL the proxy does not start"; exit 1; }
PG_A="$PG host=127.0.0.1 port=$(cat "$T/proxy-port")"

for r in a b; do
    if [ "$r" = a ]; then conn=$PG_A; else conn=$PG; fi
    printf '%s\n' \
        '{"organization": "acme", "cluster": "c1",' \
        ' "pools": [{"name": "default", "machines": [{"count": 4, "gpus": 8}]}],' \
        ' "lease_s": 1800, "time_scale": 60,' \
        ' "executor": {"startup_s": 60, "stop_s": 30, "utilization_pct": 90},' \
        " \"lease_duration_s\": 3, \"lease_renew_s\": 1, \"replica\": \"r$r\", \"address\": \"http://replica-$r.example:8080\"," \
        " \"store\": {\"postgresql\": \"$conn\"}}" > "$T/$r.json"
done
A() { "$BIN" admin "$@" --config "$T/b.json" --data-dir "$T/admin"; }
A init --org acme --cluster c1 >/dev/null || { echo "FAIL admin init"; exit 1; }
A workspace add ml >/dev/null || { echo "FAIL admin workspace add"; exit 1; }
AD=$(A token create --org-admin 2>/dev/null)
ML=$(A token create --workspace ml 2>/dev/null)

start() {  # start R: serve replica R in $T/data-R; its PID in PA/PB, its port in port-R
    local r=$1
    "$BIN" serve --executor sim --config "$T/$r.json" --data-dir "$T/data-$r" --listen 127.0.0.1:0 \
        --port-file "$T/port-$r" 2>>"$T/serve-$r.log" &
    local pid=$!
    if [ "$r" = a ]; then PA=$pid; else PB=$pid; fi
    for _ in $(seq 150); do [ -s "$T/port-$r" ] && return 0; kill -0 "$pid" 2>/dev/null || return 1; sleep 0.1; done
    return 1
}
url() { echo "http://127.0.0.1:$(cat "$T/port-$1")"; }
ready_code() { curl -sS -m 1 -o /dev/null -w '%{http_code}' "$(url "$1")/readyz" 2>/dev/null; }
submit() {  # submit R NAME: the HTTP code (000: no answer within 2 s)
    local n=${2#r}; n=${n//[!0-9]/}; n=${n:-0}
    curl -sS -m 2 -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $ML" \
        --data "{\"name\":\"$2\",\"workers\":$((1 + n % 2)),\"gpus_per_worker\":$((1 + n % 4)),\"sim_duration_s\":600}" \
        "$(url "$1")/v1/runs" 2>/dev/null
}

start a || { echo "FAIL replica a does not start: $(tail -n 5 "$T/serve-a.log")"; exit 1; }
for _ in $(seq 50); do [ "$(ready_code a)" = 200 ] && break; sleep 0.1; done
start b || { echo "FAIL replica b does not start: $(tail -n 5 "$T/serve-b.log")"; exit 1; }
check "a leads through the proxy, b follows" test "$(ready_code a)/$(ready_code b)" = 200/503
: > "$T/acked"
for i in 1 2 3 4; do [ "$(submit a r$i)" = 201 ] && echo "r$i" >> "$T/acked"; done
check "4 runs acknowledged by a" test "$(wc -l < "$T/acked")" = 4
sleep 1

# The cut.
kill -USR1 "$PX"
t0=$(date +%s.%N)
code=$(submit a ghost)
[ "$code" = 201 ] && echo ghost >> "$T/acked"
ta=""; tb=""; rc=""
for _ in $(seq 300); do
    if [ -z "$ta" ] && ! kill -0 "$PA" 2>/dev/null; then ta=$(date +%s.%N); wait "$PA"; rc=$?; PA=""; fi
    if [ -z "$tb" ] && [ "$(ready_code b)" = 200 ]; then tb=$(date +%s.%N); fi
    [ -n "$ta" ] && [ -n "$tb" ] && break
    sleep 0.05
done
since() { [ -n "$1" ] && awk -v a="$t0" -v b="$1" 'BEGIN { printf "%.2f", b - a }' || echo never; }
echo "     after the cut: a exited at +$(since "$ta") s (rc ${rc:-none}), b led at +$(since "$tb") s (lease 3 s, renewal 1 s)"
check "a exits 3 by itself (got ${rc:-still running})" test "${rc:-x}" = 3
check "a logged leader.deposed ($(grep -o 'leader.deposed.*' "$T/serve-a.log" | head -c 200))" grep -q 'error leader.deposed' "$T/serve-a.log"
check "a stopped within lease_duration_s + 1 s of the cut ($(since "$ta") s)" \
    awk -v s="$(since "$ta")" 'BEGIN { exit !(s != "never" && s + 0 <= 4.0) }'
check "a stopped before b led (a at $(since "$ta") s, b at $(since "$tb") s): never two leaders" \
    awk -v a="$(since "$ta")" -v b="$(since "$tb")" 'BEGIN { exit !(a != "never" && b != "never" && a + 0 <= b + 0) }'
check "b leads within 10 s of the cut, generation 2" \
    test "$(awk -v b="$(since "$tb")" 'BEGIN { print (b != "never" && b + 0 <= 10) }')/$(curl -sS "$(url b)/readyz" | jq -r .generation)" = 1/2
check "the submission sent to a after the cut: not acknowledged, or stored (answer $code)" \
    test "$code" != 201 -o "$(sql "SELECT COUNT(*) FROM runs WHERE name = 'ghost'")" = 1
sort -o "$T/acked" "$T/acked"
sql "SELECT name FROM runs WHERE name <> 'ghost' OR '$code' = '201'" | sort > "$T/stored"
check "every acknowledged run in the database exactly once ($(tr '\n' ' ' < "$T/stored"))" cmp -s "$T/acked" "$T/stored"
sql "SELECT name FROM runs" | sort > "$T/all"
runs_end_and_ledgers_exact "$(url b)/v1" "$T/all"
check "every run ends (left: $left)" test "$left" = 0
check "every run's ledger = W x G x (end - submit) across the cut: no second lost or doubled" test "$exact" = 1
kill -TERM "$PB"; wait "$PB"; rc=$?; PB=""
check "SIGTERM: b exits 0 (got $rc)" test "$rc" = 0

echo "$passes passed, $fails failed"
if [ $fails -gt 0 ]; then tail -n 20 "$T/serve-a.log" "$T/serve-b.log"; exit 1; fi
exit 0
