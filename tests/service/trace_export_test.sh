#!/usr/bin/env bash
# usage: trace_export_test.sh ASTRAEUS_BINARY
# `astraeus trace export` on a real service's store: a live `astraeus serve --executor sim`
# (clock 60x) runs five runs in two workspaces (weights 2 and 1) with different gangs: three
# succeed, one is stopped by its owner, one is still running when the server stops. The export
# (trace, tenants, machine list) is checked by value: run ids, gangs, workspaces, weights, and each
# duration against the sum of the run's attempts read from the store with the sqlite3 CLI (an
# independent reader), at least the sim executor's work for the succeeded runs (120, 60, 60 s:
# their attempts also hold the start-up); the store
# is not changed by the export; a mistyped --data-dir is an error naming the path and creates
# nothing. Then `astraeus simulate` runs the export and its jobs.csv has the same jobs, gangs and
# workspaces. Skipped (exit 77) when curl, jq or sqlite3 is missing. Bounded: about 15 s.
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq sqlite3

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 2, "gpus": 8}]}], "time_scale": 60}
JSON
start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml --weight 2 > /dev/null && admin workspace add cv --weight 1 > /dev/null || exit 1
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv)
submit() {  # TOKEN NAME WORKERS GPUS_PER_WORKER SIM_DURATION_S
  curl -sS -o /dev/null -w '%{http_code}' -X POST "$API/runs" -H "Authorization: Bearer $1" \
    -H 'Content-Type: application/json' \
    -d "{\"name\":\"$2\",\"workers\":$3,\"gpus_per_worker\":$4,\"sim_duration_s\":$5}"
}
check "train submitted" '[ "$(submit "$ML" train 2 4 120)" = 201 ]'
check "eval submitted" '[ "$(submit "$ML" eval 1 1 60)" = 201 ]'
check "sweep submitted" '[ "$(submit "$CV" sweep 1 2 60)" = 201 ]'
check "long submitted" '[ "$(submit "$CV" long 1 4 100000)" = 201 ]'
check "stopme submitted" '[ "$(submit "$CV" stopme 1 1 100000)" = 201 ]'
# Wait (at most 15 s) until train, eval and sweep have succeeded (2 service minutes = 2 s).
for _ in $(seq 150); do
  n=$(curl -sS "$API/runs" -H "Authorization: Bearer $ML" | jq '[.runs[]? // .[]? | select(.state=="succeeded")] | length' 2>/dev/null)
  m=$(curl -sS "$API/runs" -H "Authorization: Bearer $CV" | jq '[.runs[]? // .[]? | select(.state=="succeeded")] | length' 2>/dev/null)
  [ "${n:-0}" = 2 ] && [ "${m:-0}" = 1 ] && break
  sleep 0.1
done
check "ml's two runs and cv's sweep succeeded (ml $n, cv $m)" '[ "${n:-0}" = 2 ] && [ "${m:-0}" = 1 ]'
code=$(curl -sS -o "$WORK/stop.json" -w "%{http_code}" -X POST "$API/runs/stopme/stop" -H "Authorization: Bearer $CV" -d "")
check "stopme stopped ($code $(cat "$WORK/stop.json"))" '[[ "$code" == 20? ]]'
sleep 2
# While the server runs: the store is read beside it.
"$ASTRAEUS" trace export --data-dir "$WORK/data" --out "$WORK/live.csv" 2> "$WORK/live.err"
check "export beside the running server exits 0: $(cat "$WORK/live.err")" '[ $? = 0 ]'
check "the live export has 5 jobs" '[ "$(grep -v "^#" "$WORK/live.csv" | tail -n +2 | wc -l)" = 5 ]'
stop_all; SERVER_PID=""

DB="$WORK/data/astraeus.db"
sum_before=$(md5sum < "$DB")
"$ASTRAEUS" trace export --data-dir "$WORK/data" --out "$WORK/exported.csv" 2> "$WORK/export.err"
check "export exits 0: $(cat "$WORK/export.err")" '[ $? = 0 ]'
check "the store is unchanged by the export" '[ "$(md5sum < "$DB")" = "$sum_before" ]'

# Expected rows from the store itself: id,workspace,gpus,submit (Unix s),work (sum of attempts;
# an open attempt up to the clock's last event), in submit order.
LAST=$(sqlite3 "$DB" "SELECT value FROM meta WHERE key='last_event_s'")
sqlite3 -csv "$DB" "SELECT r.id, w.name, r.workers*r.gpus_per_worker, r.submitted_s,
   SUM((CASE WHEN a.ended_s >= 0 THEN a.ended_s ELSE MAX($LAST, a.started_s) END) - a.started_s), r.name
   FROM runs r JOIN workspaces w ON w.id = r.workspace_id JOIN attempts a ON a.run_id = r.id
   GROUP BY r.id ORDER BY r.submitted_s, r.id" > "$WORK/expected.csv"
EPOCH=$(head -1 "$WORK/expected.csv" | cut -d, -f4)
awk -F, -v e="$EPOCH" '{print $1","$2","$3","$4-e","$5",1,"$6}' "$WORK/expected.csv" > "$WORK/expected_rows.csv"
grep -v '^#' "$WORK/exported.csv" | tail -n +2 > "$WORK/rows.csv"
check "trace has 5 jobs" '[ "$(wc -l < "$WORK/rows.csv")" = 5 ]'
check "trace rows = the store's runs (id, workspace, gpus, submit, sum of attempts, name)" \
  'diff "$WORK/expected_rows.csv" "$WORK/rows.csv"'
check "column header" 'grep -qx "job_id,tenant,gpus,submit_s,duration_s,weight,name" "$WORK/exported.csv"'
row() { grep ",$1\$" "$WORK/rows.csv"; }
# The attempts of a succeeded run span its start-up and its sim work (sim_duration_s).
work() { row "$1" | cut -d, -f5; }
check "train: ml, 2x4 = 8 GPUs, attempts >= 120 s of work ($(row train))" \
  '[[ "$(row train)" == *,ml,8,*,1,train ]] && [ "$(work train)" -ge 120 ]'
check "eval: ml, 1 GPU, >= 60 s ($(row eval))" '[[ "$(row eval)" == *,ml,1,*,1,eval ]] && [ "$(work eval)" -ge 60 ]'
check "sweep: cv, 2 GPUs, >= 60 s ($(row sweep))" '[[ "$(row sweep)" == *,cv,2,*,1,sweep ]] && [ "$(work sweep)" -ge 60 ]'
check "long: cv, 4 GPUs, work so far > 0" '[[ "$(row long)" =~ ,cv,4,[0-9]+,([1-9][0-9]*),1,long$ ]]'
check "stopme: cv, 1 GPU" '[[ "$(row stopme)" == *,cv,1,* ]]'
check "long flagged as still running" 'grep -q "^# run [0-9]* (running): still running" "$WORK/exported.csv"'
check "stopme flagged as not finished" 'grep -q "^# run [0-9]* (stopped): did not finish" "$WORK/exported.csv"'
check "epoch = earliest submit" 'grep -qx "#epoch_unix_s,$EPOCH" "$WORK/exported.csv"'
check "tenants: ml weight 2, cv weight 1" \
  '[ "$(jq -c "[.tenants[] | [.name, .weight == (if .name == \"ml\" then 2 else 1 end)]]" "$WORK/exported-tenants.json")" = "[[\"ml\",true],[\"cv\",true]]" ]'
check "machine list: 2 machines of 8 GPUs in pool default" \
  '[ "$(tail -n +2 "$WORK/exported-machines.csv" | cut -d, -f2,3 | sort | uniq -c | tr -s " ")" = " 2 default,8" ]'

# A mistyped data directory: an error naming the path; nothing is created.
"$ASTRAEUS" trace export --data-dir "$WORK/dat" --out "$WORK/x.csv" 2> "$WORK/bad.err"; rc=$?
check "mistyped --data-dir exits 2" '[ $rc = 2 ]'
check "the error names the path" 'grep -q "$WORK/dat" "$WORK/bad.err"'
check "nothing created at the mistyped path" '[ ! -e "$WORK/dat" ] && [ ! -e "$WORK/x.csv" ]'
mkdir "$WORK/empty"
"$ASTRAEUS" trace export --data-dir "$WORK/empty" --out "$WORK/x.csv" 2> "$WORK/bad2.err"; rc=$?
check "a directory without a store: exit 2, names astraeus.db, creates no store" \
  '[ $rc = 2 ] && grep -q "$WORK/empty/astraeus.db" "$WORK/bad2.err" && [ -z "$(ls -A "$WORK/empty")" ]'
"$ASTRAEUS" trace export --data-dir "$WORK/data" --out "$WORK/late.csv" --since 2999-01-01T00:00:00Z 2> /dev/null
check "--since after every run: exit 2" '[ $? = 2 ]'

# Simulate the export: the same jobs, gangs and workspaces.
"$ASTRAEUS" simulate --trace "$WORK/exported.csv" --tenants "$WORK/exported-tenants.json" \
  --cluster "$WORK/exported-machines.csv" --out "$WORK/sim" --quiet > "$WORK/sim.txt" 2>&1
check "simulate exits 0: $(tail -3 "$WORK/sim.txt")" '[ $? = 0 ] && [ -s "$WORK/sim/jobs.csv" ]'
head -1 "$WORK/sim/jobs.csv" > "$WORK/jobs_header"
cols=$(head -1 "$WORK/sim/jobs.csv")
idx() { echo "$cols" | tr , '\n' | grep -nx "$1" | cut -d: -f1; }
I=$(idx job_id); T=$(idx tenant); G=$(idx gpus)
tail -n +2 "$WORK/sim/jobs.csv" | awk -F, -v i="$I" -v t="$T" -v g="$G" '{print $i","$t","$g}' | sort > "$WORK/sim_jobs"
cut -d, -f1-3 "$WORK/expected.csv" | sort > "$WORK/exp_jobs"
check "jobs.csv has columns job_id, tenant, gpus ($cols)" '[ -n "$I" ] && [ -n "$T" ] && [ -n "$G" ]'
check "jobs.csv: the same 5 jobs, gangs and workspaces" 'diff "$WORK/exp_jobs" "$WORK/sim_jobs"'

# A workspace of weight 0 (it only borrows): its '#tenant,interns,0' line reads back and the
# export simulates (it was refused: "expected a weight > 0, got '0'").
admin workspace add interns --weight 0 > /dev/null || exit 1
"$ASTRAEUS" trace export --data-dir "$WORK/data" --out "$WORK/zero.csv" 2> /dev/null
check "weight-0 workspace exported" 'grep -qx "#tenant,interns,0" "$WORK/zero.csv"'
"$ASTRAEUS" simulate --trace "$WORK/zero.csv" --tenants "$WORK/zero-tenants.json" \
  --cluster "$WORK/zero-machines.csv" --out "$WORK/sim0" --quiet > "$WORK/sim0.txt" 2>&1
check "and simulated: $(tail -1 "$WORK/sim0.txt")" '[ $? = 0 ] && [ -s "$WORK/sim0/jobs.csv" ]'

echo "trace_export: $passes passed, $fails failed"
[ "$fails" = 0 ]
