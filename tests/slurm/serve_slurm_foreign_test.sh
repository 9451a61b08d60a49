#!/bin/bash
# `astraeus serve --executor slurm` beside jobs it did not submit (docs/slurm.md, "Sharing the
# nodes with jobs outside Astraeus"), on the test cluster's 4 nodes x 8 GPUs:
#  1. a foreign `sbatch --gres=gpu:4 -w gpu1` holds 4 of gpu1's GPUs: run a (1 x 8), which the
#     consolidating placer would put on gpu1, the first machine, is placed on gpu2;
#  2. a foreign 2-node job holds 4 GPUs of gpu3 and of gpu4: run b (1 x 8) fits no node (gpu1, gpu3,
#     gpu4: 4 free each; gpu2: run a): it waits, 0 attempts, its Slurm job held, 0 GPU-hours charged,
#     its reason naming the 3 nodes, their GPUs and the foreign jobs;
#  3. `scancel` of the gpu1 job: b is placed on gpu1, one attempt;
#  4. after the gpu3/gpu4 job ended, a foreign job holds gpu4's 8 GPUs and another every CPU of gpu3
#     (no GPU: not in the GPU view): run c (1 x 8) is placed on gpu3, its job sits PENDING in Slurm
#     (Resources); past the bound (5 s) it is taken back (held again), c waits, uncharged, its
#     attempt "not started" and not a failure, gpu3 withheld while the CPU job runs;
#  5. the gpu4 job ends: c runs on gpu4 (attempt 2, the same Slurm job).
# Skipped (77) without the cluster.
# usage: serve_slurm_foreign_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
export TZ=UTC
slurm_serve_scratch astraeus-slurm-foreign
F1="" F2="" F3="" F4=""
cleanup() { for j in $F1 $F2 $F3 $F4; do scancel "$j" 2>/dev/null; done; slurm_serve_cleanup; }
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
# b waits in Slurm as a held job (pending runs are shown there), never released.
[ "$(squeue -h -n astraeus-ml-b -o '%T %r')" = "PENDING JobHeldUser" ] || fail "b's Slurm job: $(squeue -h -n astraeus-ml-b -o '%T %r %N')"
uncharged b "waiting run b"
echo "2. jobs $F1, $F2 hold 4 GPUs each of gpu1, gpu3, gpu4: b waits ($want), 0 GPU-hours"

# 3. The gpu1 job ends: b is placed there.
scancel "$F1"; F1=""
waitfor 300 is b 'running 1' || fail "b not running after the cancel: $(get b)"
[ "$(node_of b)" = "RUNNING gpu1" ] || fail "b: '$(node_of b)' (want RUNNING gpu1)"
echo "3. scancel: b runs on gpu1 (attempt 1)"

# 4. CPUs held outside (not in the GPU view): c's job, released on gpu3, stays PENDING (Resources);
#    past the bound (pending_bound_s, 5 s) it is taken back: held again, c pending, uncharged, its
#    attempt "not started" (no failure), gpu3 withheld; gpu4's GPUs are held by F4, so c waits until
#    F4 ends, then runs on gpu4.
scancel "$F2"; F2=""
waitfor 100 seen 4 0 || fail "the service did not see gpu4 free again"
waitfor 100 seen 3 0 || fail "the service did not see gpu3 free again"
F4=$(sbatch --parsable -J someone-else-gpus -w gpu4 --gres=gpu:8 -o /dev/null --wrap 'sleep 600')
slurm_wait_state "$F4" RUNNING 300 || fail "foreign job $F4 does not run"
waitfor 100 seen 4 8 || fail "the service did not see job $F4's 8 GPUs on gpu4"
F3=$(sbatch --parsable -J someone-else-cpus -w gpu3 --ntasks-per-node=16 -o /dev/null --wrap 'sleep 600')
slurm_wait_state "$F3" RUNNING 300 || fail "foreign job $F3 does not run"
submit c
waitfor 300 is c 'starting 1' || fail "c not starting: $(get c)"
waitfor 100 bash -c '[ "$(squeue -h -n astraeus-ml-c -o "%T %r %n")" = "PENDING Resources gpu3" ]' ||
  fail "c's job: '$(squeue -h -n astraeus-ml-c -o '%T %r %N %Q')' (want PENDING Resources on gpu3)"
JC=$(squeue -h -n astraeus-ml-c -o %i)
waitfor 300 is c 'pending 1' || fail "c's job $JC was not taken back: $(get c)"
want="requeued: Slurm did not start job $JC on gpu3 within 5 s (Resources): placed again"
[ "$(field c reason)" = "$want" ] || fail "c's reason: '$(field c reason)' (want '$want')"
waitfor 50 bash -c '[ "$(squeue -h -j '"$JC"' -o "%T %r")" = "PENDING JobHeldUser" ]' ||
  fail "c's job after the take-back: '$(squeue -h -j "$JC" -o '%T %r %N')' (want PENDING JobHeldUser)"
waitfor 50 seen 3 8 || fail "gpu3 not withheld after the take-back: $(grep 'machine=gpu-3 ' "$T/server.log" | tail -1)"
grep 'machine.foreign' "$T/server.log" | grep 'machine=gpu-3 ' | tail -1 |
  grep -q "node gpu3 did not start Astraeus's job $JC (Resources): Slurm jobs outside Astraeus hold its CPUs or memory (job $F3)" ||
  fail "gpu3's withheld detail: $(grep 'machine=gpu-3 ' "$T/server.log" | tail -1)"
sleep 3  # a placement on gpu3 again would show by now
is c 'pending 1' || fail "c placed again on a node that did not start it: $(get c)"
uncharged c "run c, taken back"
outcomes() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/c/attempts" |
  python3 -c 'import json,sys; print(" ".join(a.get("outcome","-") for a in json.load(sys.stdin)["attempts"]))'; }
[ "$(outcomes)" = "not started" ] || fail "c's attempts: '$(outcomes)' (want 'not started')"
echo "4. job $F3 holds gpu3's CPUs: c's job $JC (Resources) taken back, c waits ($want), 0 GPU-hours"
scancel "$F4"; F4=""
waitfor 300 is c 'running 2' || fail "c not running after gpu4 freed: $(get c)"
[ "$(node_of c)" = "RUNNING gpu4" ] || fail "c: '$(node_of c)' (want RUNNING gpu4)"
[ "$(squeue -h -n astraeus-ml-c -o %i)" = "$JC" ] || fail "c has another job: $(squeue -h -n astraeus-ml-c -o %i)"
[ "$(outcomes)" = "not started -" ] || fail "c's attempts: '$(outcomes)' (want 'not started -')"
echo "5. gpu4 free: c runs there (attempt 2, the same job $JC), attempt 1 not started and not a failure"
echo PASS
