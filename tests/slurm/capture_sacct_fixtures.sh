#!/bin/bash
# Captures the sacct fixtures of tests/fixtures/slurm/ from the test cluster
# (scripts/slurm-test-cluster.sh start; as root): jobs with GPUs on 1 and 2 nodes, a job requeued
# twice then cancelled, a job requeued by a node set DOWN, a job cancelled before it started, a job
# without GPUs. Writes OUT/sacct.json and OUT/sacct.txt (TZ=UTC). Not run by ctest: the fixtures
# are committed, and the live test (import_slurm_live_test.sh) checks the same path on fresh jobs.
set -euo pipefail
OUT=${1:?usage: capture_sacct_fixtures.sh OUT_DIR}
BASE=${ASTRAEUS_SLURM_BASE:-/tmp/astraeus-slurm}
export SLURM_CONF=${SLURM_CONF:-$BASE/etc/slurm.conf}
export TZ=UTC
mkdir -p "$OUT"
sacctmgr -i add account ml,vision >/dev/null 2>&1 || true
sacctmgr -i add user root account=ml,vision >/dev/null 2>&1 || true
state() { squeue -h -j "$1" -o %T 2>/dev/null || true; }
wait_state() {  # wait_state JOB STATE
  for _ in $(seq 1 300); do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.1; done
  echo "job $1 did not reach $2 (now: $(state "$1"))" >&2; return 1
}
job='#!/bin/bash
trap "exit 0" USR1 TERM
for i in $(seq 1 600); do sleep 1 & wait $!; done'

# a: 2 nodes x 8 GPUs, completes after 3 s
a=$(sbatch --parsable -A ml -J train-a -N2 --gres=gpu:8 -o /dev/null --wrap 'sleep 3')
# b: 1 node x 4 GPUs, requeued twice, then cancelled
b=$(echo "$job" | sbatch --parsable -A vision -J sweep-b -N1 --gres=gpu:4 --requeue -o /dev/null)
# c: 3 GPUs on 1 node, held, cancelled before it ever starts
c=$(echo "$job" | sbatch --parsable -A ml -J held-c --gres=gpu:3 --hold -o /dev/null)
# d: no GPUs
d=$(sbatch --parsable -A vision -J cpu-d -o /dev/null --wrap 'sleep 2')
wait_state "$b" RUNNING
for _ in 1 2; do
  sleep 2
  scontrol requeue "$b"
  wait_state "$b" PENDING
  sleep 1
  scontrol update JobId="$b" StartTime=now+1
  wait_state "$b" RUNNING
done
sleep 2
scancel "$b"
scancel "$c"
# e: 2 nodes x 2 GPUs; one of its nodes is set DOWN while it runs (requeued by Slurm), then it ends
e=$(echo "$job" | sbatch --parsable -A ml -J gang-e -N2 --gres=gpu:2 --requeue -o /dev/null)
wait_state "$e" RUNNING
sleep 2
node=$(squeue -h -j "$e" -o %N | sed 's/\[\([0-9]*\).*/\1/; s/gpu\([0-9]*\).*/gpu\1/')
[[ $node == gpu* ]] || node="gpu${node}"
scontrol update NodeName="$node" State=DOWN Reason=fixture-node-failure
wait_state "$e" PENDING
scontrol update JobId="$e" StartTime=now+1 || true
wait_state "$e" RUNNING
sleep 2
scancel "$e"
sleep 3
ids="$a,$b,$c,$d,$e"
sacct -a -D -j "$ids" --json > "$OUT/sacct.json"
sacct -a -X -D -P -j "$ids" \
  --format=JobID,JobName,Account,Partition,State,Submit,Start,End,NodeList,AllocTRES,ReqTRES,ExitCode > "$OUT/sacct.txt"
echo "jobs: a=$a b=$b c=$c d=$d e=$e"
cat "$OUT/sacct.txt"
