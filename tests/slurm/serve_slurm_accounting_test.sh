#!/bin/bash
# Accounting cross-check of `astraeus serve --executor slurm` (real clock, time_scale 1): a 2-node
# gang runs, one of its nodes is drained (a lost machine: attempt 1 fails, Slurm's segment is
# requeued), it is placed again (attempt 2) and stopped by its owner. Checked against Slurm's own
# record of the same job (`sacct -D`: every segment's Start .. End, AllocTRES gres/gpu=16):
#  1. each attempt Astraeus records (the store's attempts: started at .. ended at, which for the
#     Slurm executor are the times its ledger holds the GPUs) against the same segment: the same
#     number, each start and end within TOL seconds (default 1);
#  2. the run's held GPU-seconds: to the second (the attempts x 16 GPUs against import-slurm's
#     slurm_allocated_gpu_seconds, within 16 x the boundary differences of 1.), and as minute
#     counts: the service's ledger (GET /runs/acct/goodput) against `astraeus goodput
#     import-slurm` of the same sacct records (--by run --json), the same up to
#     the tolerance that the per-boundary differences imply for the minute count, computed here:
#     a boundary (submission, each start, each end) whose two times fall in different UTC
#     minutes can move a whole minute (60 s x 16 GPUs), one in the same minute only its seconds
#     (|difference| x 16); and the run's end: the service ends it at its last segment's End, the
#     records when its held job was cancelled, so their last partial minute may differ (held vs
#     waiting). The measured differences are printed. Skipped (77) without the cluster.
# usage: serve_slurm_accounting_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
TOL=${TOL:-1}
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip sacct
export TZ=UTC
slurm_serve_scratch astraeus-slurm-acct
fail() { echo "FAIL: $*"; exit 1; }
cat > "$T/worker.sh" <<'EOF2'
#!/bin/bash
trap 'exit 0' TERM
while :; do sleep 0.2 & wait $!; done
EOF2
slurm_serve_ml
slurm_serve_start || { cat "$T/server.log"; fail "server did not start"; }
state() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["state"], d["attempts"])' 2>/dev/null; }
curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
  --data '{"name": "acct", "workers": 2, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/worker.sh"}' "$API/runs" > /dev/null
is() { [ "$(state acct)" = "$1" ]; }
waitfor 300 is 'running 1' || { state acct; fail "attempt 1 not running"; }
job=$(squeue -h -n astraeus-ml-acct -o %i | head -1)
sleep 3
node=$(scontrol show hostnames "$(squeue -h -n astraeus-ml-acct -t R -o %N)" | head -1)
scontrol update NodeName="$node" State=DRAIN Reason=astraeus-acct-test
waitfor 300 is 'running 2' || { state acct; tail "$T/server.log"; fail "attempt 2 not running"; }
scontrol update NodeName="$node" State=RESUME
sleep 3
curl -sS -X POST -H "Authorization: Bearer $ML" -H "Content-Type: application/json" --data "" "$API/runs/acct/stop" > /dev/null
waitfor 300 is 'stopped 2' || fail "not stopped"
curl -sS -H "Authorization: Bearer $ML" "$API/runs/acct/goodput" > "$T/ledger-acct.json"
# The service cancels the job it kept held for a resume when it shuts down: the job's records
# are then complete (its last record: the held wait after the last segment, cancelled).
kill -TERM "$SERVER_PID"; wait "$SERVER_PID"; SERVER_PID=""
slurm_accounting_check acct "$job" 2 16 "$TOL"
echo PASS
