#!/bin/bash
# The Slurm test cluster itself (scripts/slurm-test-cluster.sh): 4 nodes x 8 fake GPUs idle on
# 127.0.0.1; a 2-node gang of 8 GPUs each gets both nodes with CUDA_VISIBLE_DEVICES=0..7 on each;
# sacct records its GPUs (gres/gpu=16). Skipped (77) when the cluster is not up.
set -euo pipefail
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
fail() { echo "FAIL: $*" >&2; exit 1; }
nodes=$(sinfo -h -N -o '%N %G' | sort -u)
echo "$nodes"
[ "$(echo "$nodes" | grep -c ' gpu:8')" = 4 ] || fail "expected 4 nodes with gpu:8, got: $nodes"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
chmod 777 "$out"
jid=$(sbatch --parsable -N2 --gres=gpu:8 -o "$out/job.out" --wrap \
  'srun -l bash -c "echo node=\$SLURMD_NODENAME cvd=\$CUDA_VISIBLE_DEVICES"')
for _ in $(seq 1 300); do
  st=$(squeue -h -j "$jid" -o %T 2>/dev/null || true)
  [ -z "$st" ] || [ "$st" = COMPLETED ] && break
  sleep 0.1
done
cat "$out/job.out"
[ "$(grep -c 'cvd=0,1,2,3,4,5,6,7' "$out/job.out")" = 2 ] || fail "expected 2 tasks with 8 GPUs each"
[ "$(grep -o 'node=gpu[0-9]' "$out/job.out" | sort -u | wc -l)" = 2 ] || fail "expected 2 distinct nodes"
if grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF"; then
  tres=""
  for _ in $(seq 1 50); do
    tres=$(sacct -n -X -P -j "$jid" --format=AllocTRES 2>/dev/null | head -1)
    [ -n "$tres" ] && break
    sleep 0.1
  done
  echo "sacct AllocTRES: $tres"
  [[ $tres == *gres/gpu=16* ]] || fail "sacct AllocTRES has no gres/gpu=16: '$tres'"
fi
echo "PASS"
