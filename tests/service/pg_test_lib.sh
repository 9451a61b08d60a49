# Sourced by the PostgreSQL service tests (pg_serve, pg_failover, pg_cut, pg_agents_failover).
#
# pg_test_begin NAME TOOL...: skips (exit 77) without ASTRAEUS_TEST_PG or one of the tools; sets
#   T (a temporary folder), DB (a fresh database astraeus_NAME_<pid> on that server, created
#   here), PG (its conninfo), sql QUERY (a read on it), check WHAT CMD... (counts passes and
#   fails). pg_test_cleanup drops the database and removes T (kept with KEEP=1): call it last in
#   the test's own EXIT trap.
pg_test_begin() {
  local name=$1 tool
  shift
  [ -n "${ASTRAEUS_TEST_PG:-}" ] || { echo "SKIP: ASTRAEUS_TEST_PG is not set (scripts/postgres-test-server.sh start prints it)"; exit 77; }
  for tool in "$@"; do command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }; done
  T=$(mktemp -d)
  DB=astraeus_${name}_$$
  psql "$ASTRAEUS_TEST_PG" -qc "CREATE DATABASE $DB" || { echo "cannot create the test database"; exit 1; }
  PG="$ASTRAEUS_TEST_PG dbname=$DB"
  fails=0; passes=0
}
pg_test_cleanup() {
  psql "$ASTRAEUS_TEST_PG" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}
sql() { psql "$PG" -Atqc "$1"; }
check() { local what=$1; shift; if "$@"; then passes=$((passes + 1)); echo "ok   $what"; else fails=$((fails + 1)); echo "FAIL $what"; fi; }

# Two `serve --executor sim` replicas, a and b (pg_failover, pg_cut). sim_replica_config R
# CONNINFO writes $T/R.json: 4 x 8 GPUs, the clock 60x, lease 3 s renewed every 1 s, replica rR
# advertising http://replica-R.example:8080, its store CONNINFO. start_replica R serves it in
# $T/data-R (log serve-R.log, port file port-R; its PID in PA or PB); url R, ready_code R (the
# /readyz code), submit R NAME (POST /v1/runs as $ML: the code; 000 without an answer in 2 s).
sim_replica_config() {
  printf '%s\n' \
    '{"organization": "acme", "cluster": "c1",' \
    ' "pools": [{"name": "default", "machines": [{"count": 4, "gpus": 8}]}],' \
    ' "lease_s": 1800, "time_scale": 60,' \
    ' "executor": {"startup_s": 60, "stop_s": 30, "utilization_pct": 90},' \
    " \"lease_duration_s\": 3, \"lease_renew_s\": 1, \"replica\": \"r$1\", \"address\": \"http://replica-$1.example:8080\"," \
    " \"store\": {\"postgresql\": \"$2\"}}" > "$T/$1.json"
}
start_replica() {
  local r=$1 pid
  rm -f "$T/port-$r"
  "$BIN" serve --executor sim --config "$T/$r.json" --data-dir "$T/data-$r" --listen 127.0.0.1:0 \
    --port-file "$T/port-$r" 2>>"$T/serve-$r.log" &
  pid=$!
  if [ "$r" = a ]; then PA=$pid; else PB=$pid; fi
  for _ in $(seq 150); do [ -s "$T/port-$r" ] && return 0; kill -0 "$pid" 2>/dev/null || return 1; sleep 0.1; done
  return 1
}
url() { echo "http://127.0.0.1:$(cat "$T/port-$1")"; }
ready_code() { curl -sS -m 1 -o /dev/null -w '%{http_code}' "$(url "$1")/readyz" 2>/dev/null; }
submit() {
  local n=${2#r}; n=${n//[!0-9]/}; n=${n:-0}
  curl -sS -m 2 -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $ML" \
    --data "{\"name\":\"$2\",\"workers\":$((1 + n % 2)),\"gpus_per_worker\":$((1 + n % 4)),\"sim_duration_s\":600}" \
    "$(url "$1")/v1/runs" 2>/dev/null
}

# runs_end_and_ledgers_exact API NAMES: waits (60 s at most) until every run the org-admin token
# $AD sees at API (".../v1") has ended, setting `left` (runs not ended); then compares each run
# named in the file NAMES, one a line, with W x G x (end - submit) GPU-seconds, printing both,
# and sets `exact` (1: all equal, 0: not).
runs_end_and_ledgers_exact() {
  local api=$1 names=$2 name want got
  for _ in $(seq 120); do
    left=$(curl -sS -H "Authorization: Bearer $AD" "$api/runs" | jq '[.runs[] | select(.ended_at == null)] | length')
    [ "$left" = 0 ] && break
    sleep 0.5
  done
  exact=1
  while read -r name; do
    want=$(curl -sS -H "Authorization: Bearer $AD" "$api/runs/$name" |
      jq '.workers * .gpus_per_worker * ((.ended_at | fromdateiso8601) - (.submitted_at | fromdateiso8601))')
    got=$(curl -sS -H "Authorization: Bearer $AD" "$api/runs/$name/goodput" | jq '[.gpu_hours[] * 3600] | add | round')
    echo "     $name: ledger $got GPU-s, W x G x (end - submit) = $want"
    [ "$want" = "$got" ] || exact=0
  done < "$names"
}
