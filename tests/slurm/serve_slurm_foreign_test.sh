#!/bin/bash
# `astraeus serve --executor slurm` beside jobs it did not submit (docs/slurm.md, "Sharing the
# nodes with jobs outside Astraeus"), on the test cluster's 4 nodes x 8 GPUs:
#  1. a foreign `sbatch --gres=gpu:4 -w gpu1` holds 4 of gpu1's GPUs: run a (1 x 8), which the
#     consolidating placer would put on gpu1, the first machine, is placed on gpu2;
#  2. a foreign 2-node job holds 4 GPUs of gpu3 and of gpu4: run b (1 x 8) fits no node (gpu1, gpu3,
#     gpu4: 4 free each; gpu2: run a): it waits, 0 attempts, no Slurm job, 0 GPU-hours charged,
#     its reason naming the 3 nodes, their GPUs and the foreign jobs;
#  3. `scancel` of the gpu1 job: b is placed on gpu1, one attempt;
#  4. a foreign job holding every CPU of gpu4 (no GPU: the view sees GPUs only) after the gpu3/gpu4
#     job ended: run c (1 x 8) is placed on gpu3 (the first free machine after a and b), its job
#     sits PENDING in Slurm (Resources) while the run is "starting": nothing charged until Slurm
#     starts it.
# Skipped (77) without the cluster.
# usage: serve_slurm_foreign_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
export TZ=UTC
slurm_serve_scratch astraeus-slurm-foreign
F1="" F2="" F3=""
cleanup() { for j in $F1 $F2 $F3; do scancel "$j" 2>/dev/null; done; slurm_serve_cleanup; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; exit 1; }
slurm_serve_ml
slurm_serve_start || fail "server did not start"
get() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/$1"; }
field() { get "$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get(sys.argv[1], ""))' "$2" 2>/dev/null; }
is() { [ "$(field "$1" state) $(field "$1" attempts)" = "$2" ]; }
ghours() {
  curl -sS -H "Authorization: Bearer $ML" "$API/runs/$1/goodput" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["allocated_gpu_hours"])'
}
submit() {
  curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
    --data "{\"name\": \"$1\", \"workers\": 1, \"gpus_per_worker\": 8, \"command\": \"sleep 600\"}" "$API/runs" > /dev/null
}
node_of() { squeue -h -n "astraeus-ml-$1" -o '%T %N'; }
# uncharged RUN WHY: the run's ledger holds 0 GPU-hours (else the test fails, saying WHY).
uncharged() {
  local g; g=$(ghours "$1")
  [ "$g" = 0 ] || [ "$g" = 0.0 ] || fail "$2: charged $g GPU-hours"
}
# seen N GPUS: the service logged the foreign view of machine gpu-N (the pool's N-th node) as GPUS.
seen() { grep 'machine.foreign' "$T/server.log" | grep "machine=gpu-$1 " | tail -1 | grep -Eq "gpus=$2( |$)"; }

# 1. 4 GPUs of gpu1 held outside: a goes to gpu2.
F1=$(sbatch --parsable -J someone-else -w gpu1 --gres=gpu:4 -o /dev/null --wrap 'sleep 600')
slurm_wait_state "$F1" RUNNING 300 || fail "foreign job $F1 does not run"
waitfor 100 seen 1 4 || fail "the service did not see job $F1's 4 GPUs on gpu1: $(grep machine.foreign "$T/server.log")"
submit a
waitfor 300 is a 'running 1' || fail "a not running: $(get a)"
[ "$(node_of a)" = "RUNNING gpu2" ] || fail "a: '$(node_of a)' (want RUNNING gpu2)"
echo "1. job $F1 holds 4 GPUs of gpu1; a runs on gpu2"

# 2. 4 GPUs of gpu3 and gpu4 held outside too: b fits no node and waits.
F2=$(sbatch --parsable -J someone-else-2 -N 2 -w gpu3,gpu4 --gres=gpu:4 -o /dev/null --wrap 'sleep 600')
slurm_wait_state "$F2" RUNNING 300 || fail "foreign job $F2 does not run"
waitfor 100 seen 4 4 || fail "the service did not see job $F2's GPUs on gpu4"
waitfor 100 seen 3 4 || fail "the service did not see job $F2's GPUs on gpu3"
submit b
want="4 GPUs of node gpu1 are held by Slurm jobs outside Astraeus (job $F1); 4 GPUs of node gpu3 are held by Slurm jobs outside Astraeus (job $F2); 4 GPUs of node gpu4 are held by Slurm jobs outside Astraeus (job $F2)"
waitfor 100 bash -c "[ \"\$(curl -sS -H 'Authorization: Bearer $ML' $API/runs/b | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"reason\"])')\" = '$want' ]" ||
  fail "b's reason: '$(field b reason)' (want '$want')"
sleep 3  # a placement would show by now
is b 'pending 0' || fail "b placed on a node whose GPUs are held: $(get b)"
[ -z "$(squeue -h -n astraeus-ml-b -o %i)" ] || fail "a Slurm job for b: $(node_of b)"
uncharged b "waiting run b"
echo "2. jobs $F1, $F2 hold 4 GPUs each of gpu1, gpu3, gpu4: b waits ($want), 0 GPU-hours"

# 3. The gpu1 job ends: b is placed there.
scancel "$F1"; F1=""
waitfor 300 is b 'running 1' || fail "b not running after the cancel: $(get b)"
[ "$(node_of b)" = "RUNNING gpu1" ] || fail "b: '$(node_of b)' (want RUNNING gpu1)"
echo "3. scancel: b runs on gpu1 (attempt 1)"

# 4. CPUs held outside (not seen): the run is placed, its job waits in Slurm, nothing charged.
scancel "$F2"; F2=""
waitfor 100 seen 4 0 || fail "the service did not see gpu4 free again"
waitfor 100 seen 3 0 || fail "the service did not see gpu3 free again"
F3=$(sbatch --parsable -J someone-else-cpus -w gpu3 --ntasks-per-node=16 -o /dev/null --wrap 'sleep 600')
slurm_wait_state "$F3" RUNNING 300 || fail "foreign job $F3 does not run"
submit c
waitfor 300 is c 'starting 1' || fail "c not starting: $(get c)"
waitfor 100 bash -c '[ "$(squeue -h -n astraeus-ml-c -o "%T %r %P")" = "PENDING Resources gpu" ]' ||
  fail "c's job: '$(squeue -h -n astraeus-ml-c -o '%T %r %N %Q')' (want PENDING Resources)"
sleep 3
is c 'starting 1' || fail "c: $(get c)"
uncharged c "run c, pending in Slurm"
echo "4. job $F3 holds gpu3's CPUs: c's job waits in Slurm (Resources), 0 GPU-hours"
scancel "$F3"; F3=""
waitfor 300 is c 'running 1' || fail "c not running after the cancel: $(get c)"
[ "$(node_of c)" = "RUNNING gpu3" ] || fail "c: '$(node_of c)' (want RUNNING gpu3)"
echo PASS
