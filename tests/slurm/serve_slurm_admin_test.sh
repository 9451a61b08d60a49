#!/bin/bash
# Administrators win over `astraeus serve --executor slurm` (docs/slurm.md, "Sharing a cluster"):
#  1. hold: a foreign job (an ordinary `sbatch` holding every CPU of the four nodes, not their
#     GPUs: Astraeus sees only GPUs held outside it, serve_slurm_foreign_test.sh) fills the cluster;
#     run adm is placed by Astraeus and its job waits in Slurm; an administrator's `scontrol hold`
#     of that job -> the run is pending with the reason "held in Slurm ...", its attempt 1 ended
#     (preempted), no GPU-second charged; the foreign job ends, `scontrol release` -> attempt 2
#     runs on the same job (one job named astraeus-ml-adm).
#  2. cancel: `scancel` of that job -> the run ends `cancelled`, its reason saying who (uid 0
#     (root): sacct's "CANCELLED by 0") and when (sacct's End); never resubmitted (no job named
#     astraeus-ml-adm afterwards, one accounting record).
# (A drain followed: serve_slurm_test.sh, part 3.) Skipped (77) without the cluster or sacct.
# usage: serve_slurm_admin_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip sacct
export TZ=UTC
slurm_serve_scratch astraeus-slurm-admin
FOREIGN=""
cleanup() { [ -n "$FOREIGN" ] && scancel "$FOREIGN" 2>/dev/null; slurm_serve_cleanup; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; exit 1; }
START=$(date +%Y-%m-%dT%H:%M:%S)
slurm_serve_ml
# The job waits in Slurm (Resources) until the hold: no take-back of it meanwhile (the bound is
# tested by serve_slurm_foreign_test.sh).
python3 - "$T/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["slurm"] = {"pending_bound_s": 600}; json.dump(c, open(sys.argv[1], "w"))
PY
slurm_serve_start || fail "server did not start"
get() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/adm"; }
field() { get | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get(sys.argv[1], ""))' "$1" 2>/dev/null; }
is() { [ "$(field state) $(field attempts)" = "$1" ]; }

FOREIGN=$(sbatch --parsable -J someone-else -N 4 --ntasks-per-node=16 -o /dev/null --wrap 'sleep 600')
slurm_wait_state "$FOREIGN" RUNNING 300 || fail "the foreign job $FOREIGN does not run"
echo "foreign job $FOREIGN holds every node's 16 CPUs"
curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
  --data '{"name": "adm", "workers": 1, "gpus_per_worker": 8, "command": "sleep 600"}' "$API/runs" > /dev/null
waitfor 300 is 'starting 1' || fail "adm not starting: $(get)"
waitfor 100 bash -c '[ -n "$(squeue -h -n astraeus-ml-adm -o %i)" ]' || fail "no job named astraeus-ml-adm"
job=$(squeue -h -n astraeus-ml-adm -o %i)
waitfor 100 bash -c "[ \"\$(squeue -h -j $job -o '%T %Q')\" != 'PENDING 0' ]" || fail "job $job not released"
echo "job $job waits in Slurm: $(squeue -h -j "$job" -o '%T %r')"
scontrol hold "$job"
echo "after scontrol hold: $(squeue -h -j "$job" -o '%T %r %S')"
waitfor 100 is 'pending 1' || fail "adm not pending after the hold: $(get)"
reason=$(field reason)
echo "adm: pending, reason: $reason"
case "$reason" in "held in Slurm by an administrator"*"(job $job)") ;; *) fail "reason '$reason'" ;; esac
ghours=$(curl -sS -H "Authorization: Bearer $ML" "$API/runs/adm/goodput" | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocated_gpu_hours"])')
[ "$ghours" = 0 ] || [ "$ghours" = 0.0 ] || fail "held run charged $ghours GPU-hours"
outcome=$(sqlite3 "$DATA/astraeus.db" "SELECT a.outcome FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'adm' AND a.number = 1")
[ "$outcome" = preempted ] || fail "attempt 1 outcome '$outcome' (want preempted)"
sleep 2
is 'pending 1' || fail "adm placed again while held: $(get)"
[ "$(squeue -h -j "$job" -o %T)" = PENDING ] || fail "job $job not pending while held"
scancel "$FOREIGN"; FOREIGN=""
sleep 1
scontrol release "$job"
echo "released job $job"
waitfor 300 is 'running 2' || fail "adm not running as attempt 2 after the release: $(get)"
jobs=$(squeue -h -n astraeus-ml-adm -o '%i %T' | tr '\n' ' ')
[ "$jobs" = "$job RUNNING " ] || fail "jobs named astraeus-ml-adm: '$jobs' (want only $job RUNNING)"
echo "adm: attempt 2 runs on job $job"
sleep 1

scancel "$job"
echo "scancel $job"
waitfor 150 is 'cancelled 2' || fail "adm not cancelled: $(get)"
reason=$(field reason)
echo "adm: cancelled, reason: $reason"
sleep 3   # a resubmission would show by now
[ -z "$(squeue -h -n astraeus-ml-adm -o %i)" ] || fail "resubmitted: $(squeue -h -n astraeus-ml-adm -o '%i %T')"
is 'cancelled 2' || fail "adm changed after the cancel: $(get)"
waitfor 100 bash -c "sacct -a -X -n -P -j $job -o State | grep -q 'CANCELLED by'" || fail "no accounting record of the cancel"
rec=$(sacct -a -X -n -P -j "$job" -o State,End | tail -1)
echo "sacct: $rec"
by=$(echo "$rec" | cut -d'|' -f1 | sed 's/CANCELLED by //')
end=$(echo "$rec" | cut -d'|' -f2)
[ "$reason" = "cancelled in Slurm by uid $by ($(getent passwd "$by" | cut -d: -f1)) at ${end}Z (job $job)" ] ||
  fail "reason '$reason' against sacct '$rec'"
[ "$(sacct -a -X -n -P --name astraeus-ml-adm -S "$START" -o JobID | grep -c .)" = 1 ] ||
  fail "more than one job named astraeus-ml-adm: $(sacct -a -X -n -P --name astraeus-ml-adm -S "$START" -o JobID,State)"
echo PASS
