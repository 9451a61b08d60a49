#!/bin/bash
# Restarts of `astraeus serve --executor slurm` (kill -9): the runs' Slurm jobs are adopted (found
# by their name and working directory), not submitted again nor lost.
#  1. mid-run: a 2-node gang runs; the service is killed with SIGKILL, the job keeps running in
#     Slurm meanwhile, the service is started again on the same data directory: the run is still
#     attempt 1, running, on the same job (one job of that name, Restarts=0, its workers not
#     started again); then its owner stops it.
#  2. while a run waits to be resumed: a 4-node gang loses a node (DRAIN: attempt 1 fails, its job
#     is requeued held and kept for the resume; the gang cannot be placed on 3 nodes); the service
#     is killed and started again; the node comes back: attempt 2 runs on the same job
#     (Restarts=1), no second job.
# No GPU-second lost or counted twice: Slurm's segments (sacct -D) against the attempts the
# service recorded (within 1 s at each end), the held GPU-seconds to the second, and the ledger's
# minute count against `astraeus goodput import-slurm` of the same records (the allowance of
# serve_slurm_accounting_test.sh, computed). Skipped (77) without the cluster or sacct.
# usage: serve_slurm_restart_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip sacct
export TZ=UTC
slurm_serve_scratch astraeus-slurm-restart
fail() { echo "FAIL: $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; exit 1; }
cat > "$T/worker.sh" <<'EOF2'
#!/bin/bash
# Writes its pid once, then works until the checkpoint signal.
echo $$ >> "$ASTRAEUS_RUN_DIR/pids-$SLURM_PROCID"
trap 'exit 0' TERM
while :; do sleep 0.2 & wait $!; done
EOF2
slurm_serve_ml
serve() { slurm_serve_start || fail "server did not start"; }
serve
state() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["state"], d["attempts"])' 2>/dev/null; }
is() { [ "$(state rst)" = "$1" ]; }
curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
  --data '{"name": "rst", "workers": 2, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/worker.sh"}' "$API/runs" > /dev/null
waitfor 300 is 'running 1' || { state rst; fail "attempt 1 not running"; }
job=$(squeue -h -n astraeus-ml-rst -o %i | head -1)
run_dir="$DATA-runs/ml/rst"
waitfor 100 test -s "$run_dir/pids-1" || fail "worker 1 did not start"
sleep 2
kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
echo "killed the service (SIGKILL) with job $job running"
sleep 2
[ "$(squeue -h -j "$job" -o %T)" = RUNNING ] || fail "job $job is not running while the service is down"
serve
echo "service restarted"
sleep 2   # a few polls
is 'running 1' || { state rst; fail "after the restart the run is not attempt 1 running: $(state rst)"; }
jobs=$(squeue -h -n astraeus-ml-rst -o '%i %T' | tr '\n' ' ')
[ "$jobs" = "$job RUNNING " ] || fail "after the restart: jobs named astraeus-ml-rst: '$jobs' (want only $job RUNNING)"
restarts=$(scontrol show job "$job" | grep -o 'Restarts=[0-9]*')
[ "$restarts" = Restarts=0 ] || fail "job $job was requeued ($restarts)"
[ "$(wc -l < "$run_dir/pids-0")" = 1 ] && [ "$(wc -l < "$run_dir/pids-1")" = 1 ] || fail "a worker was started again"
echo "after the restart: job $job adopted ($restarts), workers not restarted"
sleep 1
curl -sS -X POST -H "Authorization: Bearer $ML" -H "Content-Type: application/json" --data "" "$API/runs/rst/stop" > /dev/null
waitfor 300 is 'stopped 1' || fail "not stopped: $(state rst)"
curl -sS -H "Authorization: Bearer $ML" "$API/runs/rst/goodput" > "$T/ledger-rst.json"

# 2. A restart while a run waits to be resumed on its held job.
curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
  --data '{"name": "park", "workers": 4, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/worker.sh"}' "$API/runs" > /dev/null
ispark() { [ "$(state park)" = "$1" ]; }
waitfor 300 ispark 'running 1' || fail "park: attempt 1 not running: $(state park)"
job2=$(squeue -h -n astraeus-ml-park -o %i | head -1)
sleep 1
scontrol update NodeName=gpu4 State=DRAIN Reason=astraeus-restart-test
held() { [ "$(squeue -h -j "$job2" -o '%T %Q')" = "PENDING 0" ]; }
waitfor 300 ispark 'pending 1' || fail "park: not pending after the lost machine: $(state park)"
waitfor 100 held || fail "park: job $job2 not held: $(squeue -h -j "$job2" -o '%T %Q')"
kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
echo "killed the service (SIGKILL) with job $job2 held for a resume"
serve
echo "service restarted"
sleep 1
ispark 'pending 1' || fail "park: after the restart: $(state park)"
scontrol update NodeName=gpu4 State=RESUME
waitfor 300 ispark 'running 2' || fail "park: attempt 2 not running: $(state park)"
jobs=$(squeue -h -n astraeus-ml-park -o '%i %T' | tr '\n' ' ')
[ "$jobs" = "$job2 RUNNING " ] || fail "park: jobs named astraeus-ml-park: '$jobs' (want only $job2 RUNNING)"
restarts=$(scontrol show job "$job2" | grep -o 'Restarts=[0-9]*')
[ "$restarts" = Restarts=1 ] || fail "park: job $job2 $restarts (want Restarts=1: resumed once)"
echo "after the restart: run park resumed on its job $job2 ($restarts)"
sleep 1
curl -sS -X POST -H "Authorization: Bearer $ML" -H "Content-Type: application/json" --data "" "$API/runs/park/stop" > /dev/null
waitfor 300 ispark 'stopped 2' || fail "park: not stopped: $(state park)"
curl -sS -H "Authorization: Bearer $ML" "$API/runs/park/goodput" > "$T/ledger-park.json"
kill -TERM "$SERVER_PID"; wait "$SERVER_PID"; SERVER_PID=""

# The records of both jobs against the service's (within 1 s at each end).
slurm_accounting_check rst "$job" 1 16 1
slurm_accounting_check park "$job2" 2 32 1
echo PASS
