#!/bin/bash
# `astraeus serve --executor slurm` on the Slurm test cluster (4 nodes x 8 fake GPUs), the ml
# runs being examples/train_ddp.py (PyTorch DDP, gloo on CPU) when /usr/bin/python3 has torch:
#  1. a 2-node gang runs through Slurm with the worker environment (RANK, WORLD_SIZE, MASTER_ADDR,
#     CUDA_VISIBLE_DEVICES per node, ASTRAEUS_*), on the nodes Astraeus chose;
#  2. a second tenant's 4-node run: at the gang's lease end (ASTRAEA, not Slurm's queue) the gang
#     gets the checkpoint signal, checkpoints, is requeued held; the other tenant runs; then the
#     gang resumes from its checkpoint (attempt 2, Slurm's restart count 1);
#  3. a node set DRAIN is a lost machine: the run on it fails and is placed again elsewhere;
#  and a run that writes ASTRAEUS_PROGRESS_FILE has productive time (progress decides).
# The service clock runs 20x (lease 60 s = 3 s). Skipped (77) without the cluster.
# usage: serve_slurm_test.sh ASTRAEUS_BINARY SOURCE_DIR
set -uo pipefail
BIN=$1
SRC=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
slurm_serve_scratch astraeus-serve-slurm
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# The workload: prints its environment, resumes from the newest checkpoint, counts steps; on
# SIGTERM saves a checkpoint and exits 0 (the contract of the real-runs issue).
cat > "$T/worker.sh" <<'EOF2'
#!/bin/bash
step=0
if [ -s "$ASTRAEUS_CHECKPOINT_DIR/ckpt.$RANK" ]; then
  step=$(cat "$ASTRAEUS_CHECKPOINT_DIR/ckpt.$RANK"); echo "resumed from step $step"
fi
echo "rank $RANK world $WORLD_SIZE master $MASTER_ADDR:$MASTER_PORT node $SLURMD_NODENAME cvd $CUDA_VISIBLE_DEVICES attempt $ASTRAEUS_ATTEMPT run $ASTRAEUS_RUN workspace $ASTRAEUS_WORKSPACE local $LOCAL_RANK"
trap 'echo $step > "$ASTRAEUS_CHECKPOINT_DIR/ckpt.$RANK"; echo "checkpoint saved at step $step"; exit 0' TERM
while :; do step=$((step + 1)); echo $step > "$ASTRAEUS_PROGRESS_FILE.tmp"; mv "$ASTRAEUS_PROGRESS_FILE.tmp" "$ASTRAEUS_PROGRESS_FILE"; sleep 0.2 & wait $!; done
EOF2
chmod 755 "$T/worker.sh"
# The ml runs: the example training script (its own stdout lines: "rank R world W master A:P",
# "checkpoint saved at step K", "resumed from step K"), after one line with the rest of the
# environment; the shell workload above when PyTorch is missing.
ENVLINE='echo cvd $CUDA_VISIBLE_DEVICES attempt $ASTRAEUS_ATTEMPT run $ASTRAEUS_RUN workspace $ASTRAEUS_WORKSPACE local $LOCAL_RANK node $SLURMD_NODENAME'
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  ML_CMD="$ENVLINE; exec /usr/bin/python3 $SRC/examples/train_ddp.py --steps 1000000 --step-sleep 0.05 --timeout-s 120"
  echo "ml runs: examples/train_ddp.py"
else
  ML_CMD="$ENVLINE; exec /bin/bash $T/worker.sh"
  echo "ml runs: a shell workload (no PyTorch in /usr/bin/python3)"
fi
ml_run() { python3 -c 'import json,sys; print(json.dumps({"name": sys.argv[1], "workers": 2, "gpus_per_worker": 8, "command": sys.argv[2]}))' "$1" "$ML_CMD"; }
cat > "$T/config.json" <<'EOF2'
{"organization": "acme", "cluster": "c1",
 "pools": [{"name": "gpu", "machines": [{"count": 4, "gpus": 8}]}],
 "lease_s": 60, "time_scale": 20,
 "local": {"sandbox": {"users": {"ml": "astraeus-ml", "vision": "astraeus-vision"}}}}
EOF2
DATA="$T/data"
"$BIN" admin init --org acme --cluster c1 --config "$T/config.json" --data-dir "$DATA" >/dev/null
"$BIN" admin workspace add ml --weight 1 --data-dir "$DATA" >/dev/null
"$BIN" admin workspace add vision --weight 1 --data-dir "$DATA" >/dev/null
ML=$("$BIN" admin token create --workspace ml --data-dir "$DATA" 2>/dev/null)
VI=$("$BIN" admin token create --workspace vision --data-dir "$DATA" 2>/dev/null)
slurm_serve_start || { echo "server did not start"; cat "$T/server.log"; exit 1; }
post() { curl -sS -X POST -H "Authorization: Bearer $1" -H 'Content-Type: application/json' --data "$3" "$API$2"; }
state() { curl -sS -H "Authorization: Bearer $1" "$API/runs/$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null; }
is_state() { [ "$(state "$1" "$2")" = "$3" ]; }
log0() { cat "$DATA-runs/$1/$2/attempt-$3/worker-$4.log" 2>/dev/null; }

# 1. The gang.
post "$ML" /runs "$(ml_run gang)" > /dev/null
check "gang running" waitfor 300 is_state "$ML" gang running
job=$(squeue -h -n astraeus-ml-gang -o '%i %T %N %b' | head -1)
echo "slurm: $job"
check "one Slurm job RUNNING on 2 nodes with gpu:8" bash -c "[[ '$job' =~ RUNNING\ gpu\[[0-9,-]+\]\ gres:gpu:8 ]]"
check "workers' environment" waitfor 300 bash -c "grep -q 'rank 0 world 2 master 127.0.0.1:' '$DATA-runs/ml/gang/attempt-1/worker-0.log' && grep -q 'rank 1 world 2 master 127.0.0.1:' '$DATA-runs/ml/gang/attempt-1/worker-1.log'"
check "CUDA_VISIBLE_DEVICES 0-7 on each node, attempt 1, run and workspace" \
  bash -c "grep -q 'cvd 0,1,2,3,4,5,6,7 attempt 1 run gang workspace ml local 0 node gpu' '$DATA-runs/ml/gang/attempt-1/worker-0.log' && grep -q 'cvd 0,1,2,3,4,5,6,7 attempt 1' '$DATA-runs/ml/gang/attempt-1/worker-1.log'"
chosen=$(curl -sS -H "Authorization: Bearer $ML" "$API/runs/gang" | python3 -c 'import json,sys; print(",".join(sorted(w["machine"].replace("-", "") for w in json.load(sys.stdin)["worker_list"])))')
slurm_nodes=$(scontrol show hostnames "$(squeue -h -n astraeus-ml-gang -o %N)" | sort | paste -sd,)
check "Slurm runs it on the machines Astraeus chose ($chosen = $slurm_nodes)" test "$chosen" = "$slurm_nodes"
n0=$(grep -o 'node gpu[0-9]' "$DATA-runs/ml/gang/attempt-1/worker-0.log" | head -1)
n1=$(grep -o 'node gpu[0-9]' "$DATA-runs/ml/gang/attempt-1/worker-1.log" | head -1)
check "two different nodes ($n0, $n1)" test "$n0" != "$n1"

# 2. ml fills the other two nodes; vision's run arrives: at a lease end ASTRAEA (not Slurm's
#    queue) preempts one of ml's runs (ml holds the whole cluster, vision nothing): the checkpoint
#    signal, the checkpoint, requeue held; vision's run starts; once it is stopped, the preempted
#    run resumes from its checkpoint (attempt 2, Slurm's restart count 1).
post "$ML" /runs "$(ml_run fill)" > /dev/null
check "fill running" waitfor 300 is_state "$ML" fill running
post "$VI" /runs '{"name": "other", "workers": 2, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/worker.sh"}' > /dev/null
check "vision's run starts after a lease end" waitfor 300 is_state "$VI" other running
# Progress decides a Slurm run's running time (Slurm gives no utilization): its workers write
# ASTRAEUS_PROGRESS_FILE in the run's folder, which the executor reads at every poll.
productive() { curl -sS -H "Authorization: Bearer $VI" "$API/runs/other/goodput" | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("productive_gpu_hours", 0) > 0 else 1)'; }
check "a Slurm run reporting progress has productive time" waitfor 100 productive
# The victim is read from the service's log, not from the runs' states at one instant: with
# leases of 3 s and a grace of 5 s the two ml runs may trade places at their next lease ends (the
# less served one runs: ASTRAEA's order within a tenant), so a snapshot can show neither pending.
check "one ml run was preempted" waitfor 100 grep -Eq 'run\.preempted run=(gang|fill)$' "$T/server.log"
victim=$(grep -Eo 'run\.preempted run=(gang|fill)$' "$T/server.log" | head -1 | cut -d= -f2)
echo "first ml run preempted: ${victim:=gang} ($(grep -c 'run\.preempted' "$T/server.log") preemptions so far)"
check "it checkpointed on the signal" waitfor 100 grep -q 'checkpoint saved at step' "$DATA-runs/ml/$victim/attempt-1/worker-0.log"
# (ASTRAEA may already have placed it again: then Slurm shows the requeue in its restart count)
check "it is requeued in Slurm (PENDING held, or Restarts >= 1)" waitfor 100 bash -c "squeue -h -n astraeus-ml-$victim -o '%T %Q' | grep -q '^PENDING 0' || scontrol show job \$(squeue -h -n astraeus-ml-$victim -o %i | head -1) | grep -q 'Restarts=[1-9]'"
# The lease end reads as a preemption in the job's output: Astraeus's line (the batch shell's
# WINCH trap) comes before the first line Slurm writes for the requeue ("*** STEP N.0 ...
# CANCELLED ***"), and none of the preempted run's jobs says it failed on its own.
lease_line_first() {
  awk '/astraeus: stopped by Astraeus at/ { if (!l) l = NR } /\*\*\* STEP .* CANCELLED/ { if (!c) c = NR }
       END { exit !(l && (!c || l < c)) }' "$DATA-runs/ml/$victim/job.out"
}
check "the lease end is written in $victim's job output before Slurm's requeue lines" waitfor 50 lease_line_first
post "$VI" /runs/other/stop '' > /dev/null
# (The first attempt that resumes is usually 2; on a loaded machine attempt 2 can be preempted in
# turn before its worker got to its checkpoint, and a later attempt resumes.)
resumed() { grep -l 'resumed from step' "$DATA-runs/ml/$victim"/attempt-[2-9]/worker-0.log 2>/dev/null | head -1 | grep -o 'attempt-[0-9]*' | cut -d- -f2; }
has_resumed() { [ -n "$(resumed)" ]; }
check "$victim resumes (attempt >= 2) from its checkpoint" waitfor 400 has_resumed
k=$(resumed); k=${k:-2}
check "attempt $k sees ASTRAEUS_ATTEMPT=$k" waitfor 50 grep -q "attempt $k run" "$DATA-runs/ml/$victim/attempt-$k/worker-0.log"
restarts=$(scontrol show job "$(squeue -h -n astraeus-ml-$victim -o %i | head -1)" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
check "Slurm counted the requeue (Restarts=$restarts)" test "${restarts:-0}" -ge 1

# 3. A drained node is a lost machine; its run is placed again on the others.
post "$ML" /runs/fill/stop '' > /dev/null
check "gang running" waitfor 300 is_state "$ML" gang running
node=$(squeue -h -n astraeus-ml-gang -t R -o %N | head -1 | sed -E 's/gpu\[?([0-9]).*/gpu\1/')
# The job and its step are named after the run (not `bash`, `Command=(null)`).
gid=$(squeue -h -n astraeus-ml-gang -o %i | head -1)
check "the job's Command is the run (job $gid)" bash -c "scontrol show job $gid | grep -q 'Command=astraeus-ml-gang\b'"
check "the workers' step is named after the run" waitfor 50 bash -c "squeue -h -s -j $gid -o '%j' | grep -qx 'astraeus-ml-gang'"
scontrol update NodeName="$node" State=DRAIN Reason=astraeus-test
check "machine lost logged ($node)" waitfor 100 grep -q 'machine.lost' "$T/server.log"
check "the gang runs again, not on $node" waitfor 300 bash -c "[ \"\$(squeue -h -n astraeus-ml-gang -t R -o %N)\" != '' ] && ! squeue -h -n astraeus-ml-gang -t R -o %N | grep -q '$node\b'"
scontrol update NodeName="$node" State=RESUME
echo "--- server log (tail) ---"; tail -5 "$T/server.log"
echo "serve_slurm: $fails failed"
[ "$fails" -eq 0 ]
