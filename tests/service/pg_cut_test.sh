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
#    every run ends and each run's ledger = workers x GPUs x (end - submit) (pg_test_lib.sh).
# About 30 s. Usage: pg_cut_test.sh ASTRAEUS_BIN
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/pg_test_lib.sh"
pg_test_begin cut curl jq psql python3
PA=""; PB=""; PX=""
cleanup() {
    for p in $PA $PB $PX; do kill -9 "$p" 2>/dev/null; done
    pg_test_cleanup
}
trap cleanup EXIT

# The proxy to the test server (its host and port from ASTRAEUS_TEST_PG; libpq's defaults else).
pghost=$(echo "$ASTRAEUS_TEST_PG" | sed -n 's/.*host=\([^ ]*\).*/\1/p'); pghost=${pghost:-127.0.0.1}
pgport=$(echo "$ASTRAEUS_TEST_PG" | sed -n 's/.*port=\([0-9]*\).*/\1/p'); pgport=${pgport:-5432}
python3 "$HERE/tcp_cut_proxy.py" "$pghost" "$pgport" "$T/proxy-port" &
PX=$!
for _ in $(seq 50); do [ -s "$T/proxy-port" ] && break; sleep 0.1; done
[ -s "$T/proxy-port" ] || { echo "FAIL the proxy does not start"; exit 1; }
PG_A="$PG host=127.0.0.1 port=$(cat "$T/proxy-port")"

sim_replica_config a "$PG_A"
sim_replica_config b "$PG"
A() { "$BIN" admin "$@" --config "$T/b.json" --data-dir "$T/admin"; }
A init --org acme --cluster c1 >/dev/null || { echo "FAIL admin init"; exit 1; }
A workspace add ml >/dev/null || { echo "FAIL admin workspace add"; exit 1; }
AD=$(A token create --org-admin 2>/dev/null)
ML=$(A token create --workspace ml 2>/dev/null)

start_replica a || { echo "FAIL replica a does not start: $(tail -n 5 "$T/serve-a.log")"; exit 1; }
for _ in $(seq 50); do [ "$(ready_code a)" = 200 ] && break; sleep 0.1; done
start_replica b || { echo "FAIL replica b does not start: $(tail -n 5 "$T/serve-b.log")"; exit 1; }
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
