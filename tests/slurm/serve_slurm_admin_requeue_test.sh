#!/bin/bash
# Administrators' requeues and a hold across a restart (docs/slurm.md, "Administrators win"):
#  1. `scontrol requeue` of a running run's job: attempt 1 ends `preempted` (not failed), the
#     service logs run.preempted_outside with the reason, and Astraeus places the run again on
#     the same job (attempt 2 running, Restarts=1), released only after Slurm finished the
#     requeue (started < cred_expire + 1 s after it);
#  2. `scontrol requeuehold`: attempt 2 ends `preempted`, the run is pending, its reason "held in
#     Slurm by an administrator (scontrol requeuehold) ...", the job stays PENDING (not placed
#     again while held);
#  3. the service is killed (SIGKILL), an administrator's `scontrol hold` is put on the job during
#     the outage, the service starts again: the run stays pending, its reason "held in Slurm by
#     an administrator ... after a restart", the job PENDING with priority 0 (not released);
#  4. `scontrol release`: the run runs again on the same job; no attempt failed.
# Skipped (77) without the cluster.
# usage: serve_slurm_admin_requeue_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
slurm_serve_scratch astraeus-slurm-requeue
fail() { echo "FAIL: $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; exit 1; }
slurm_serve_ml
slurm_serve_start || fail "server did not start"
get() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/rq"; }
field() { get | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get(sys.argv[1], ""))' "$1" 2>/dev/null; }
is() { [ "$(field state) $(field attempts)" = "$1" ]; }
outcome() { sqlite3 "$DATA/astraeus.db" "SELECT a.outcome FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'rq' AND a.number = $1"; }
curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
  --data '{"name": "rq", "workers": 1, "gpus_per_worker": 8, "command": "sleep 600"}' "$API/runs" > /dev/null
waitfor 300 is 'running 1' || fail "rq not running: $(get)"
job=$(squeue -h -n astraeus-ml-rq -o %i)

# 1. requeue: a preemption by an administrator, placed again by Astraeus.
requeued_at=$(date +%s)
scontrol requeue "$job"
echo "scontrol requeue $job"
waitfor 300 is 'running 2' || fail "rq not running as attempt 2 after the requeue: $(get)"
# Released only once Slurm finished the requeue (no longer COMPLETING): a release before that is
# undone by Slurm's BeginTime = now + cred_expire + 1 (11 s on the test cluster) and the job
# waited that long, or was taken back as not started (attempt 3) or seen running while PENDING.
started=$(date -d "$(squeue -h -j "$job" -o %S)" +%s)
echo "rq: attempt 2 started $((started - requeued_at)) s after the requeue"
[ $((started - requeued_at)) -lt 11 ] || fail "attempt 2 started $((started - requeued_at)) s after the requeue (want < 11: released before Slurm finished the requeue?)"
[ "$(outcome 1)" = preempted ] || fail "attempt 1 outcome '$(outcome 1)' (want preempted)"
grep -q "run.preempted_outside.*requeued: preempted in Slurm by an administrator (scontrol requeue) at .*(job $job" "$T/server.log" ||
  fail "no run.preempted_outside line: $(grep rq "$T/server.log" | tail -5)"
grep -o 'requeued: preempted in Slurm[^"]*' "$T/server.log" | head -1
[ "$(squeue -h -n astraeus-ml-rq -o '%i %T')" = "$job RUNNING" ] || fail "jobs: $(squeue -h -n astraeus-ml-rq -o '%i %T')"
scontrol show job "$job" | grep -q 'Restarts=1' || fail "job $job: $(scontrol show job "$job" | grep Restarts)"
echo "rq: attempt 1 preempted, attempt 2 runs on job $job (Restarts=1)"

# 2. requeuehold: held like an administrator's hold.
sleep 1
scontrol requeuehold "$job"
echo "scontrol requeuehold $job"
waitfor 150 is 'pending 2' || fail "rq not pending after the requeuehold: $(get)"
reason=$(field reason)
echo "rq: pending, reason: $reason"
case "$reason" in "held in Slurm by an administrator (scontrol requeuehold) since "*"(job $job)") ;; *) fail "reason '$reason'" ;; esac
[ "$(outcome 2)" = preempted ] || fail "attempt 2 outcome '$(outcome 2)' (want preempted)"
sleep 2
is 'pending 2' || fail "rq placed again while held: $(get)"
[ "$(squeue -h -j "$job" -o %T)" = PENDING ] || fail "job $job not pending while held"

# 3. a restart of the service with the job held by an administrator.
kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
scontrol hold "$job"
echo "killed the service; scontrol hold $job: $(squeue -h -j "$job" -o '%T %r')"
slurm_serve_start || fail "server did not start again"
waitfor 150 bash -c "grep -q 'run.held.*run=rq.*after a restart' '$T/server.log'" || fail "the restarted service did not see the hold: $(get)"
sleep 2
[ "$(field state)" = pending ] || fail "rq not pending after the restart: $(get)"
reason=$(field reason)
echo "rq after the restart: $(field state) $(field attempts), reason: $reason"
case "$reason" in "held in Slurm by an administrator"*"after a restart of astraeus serve) (job $job)") ;; *) fail "reason '$reason'" ;; esac
# Held: priority 0 (squeue's reason keeps the requeue's text, "job requeued in held state").
[ "$(squeue -h -j "$job" -o '%T %Q')" = "PENDING 0" ] || fail "job $job: $(squeue -h -j "$job" -o '%T %Q %r') (want PENDING 0: held)"
sleep 2
[ "$(field state)" = pending ] || fail "rq placed again while held after the restart: $(get)"

# 4. release: placed again, on the same job.
held_attempts=$(field attempts)
scontrol release "$job"
echo "scontrol release $job"
waitfor 300 is "running $((held_attempts + 1))" || fail "rq not running after the release: $(get)"
[ "$(squeue -h -n astraeus-ml-rq -o '%i %T')" = "$job RUNNING" ] || fail "jobs: $(squeue -h -n astraeus-ml-rq -o '%i %T')"
failed=$(sqlite3 "$DATA/astraeus.db" "SELECT count(*) FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'rq' AND a.outcome = 'failed'")
[ "$failed" = 0 ] || fail "$failed attempts failed"
echo "rq: attempts $(sqlite3 "$DATA/astraeus.db" "SELECT group_concat(a.outcome, ',') FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'rq'")"
echo PASS
