# shellcheck shell=bash
# Sourced by the Slurm tests: finds the test cluster (scripts/slurm-test-cluster.sh) or skips.
# slurm_cluster_or_skip [sacct]: sets SLURM_CONF and SLURM_BASE; when the daemons are not up (or,
# with "sacct", when the cluster has no slurmdbd) prints why and exits 77 (ctest SKIP_RETURN_CODE).
# Env: ASTRAEUS_SLURM_BASE (default /tmp/astraeus-slurm, the script's default BASE).
slurm_skip() {
  echo "SKIP: $*"
  echo "SKIP: start the test cluster first: sudo scripts/slurm-test-cluster.sh start (.ci/run does)"
  exit 77
}
slurm_cluster_or_skip() {
  SLURM_BASE=${ASTRAEUS_SLURM_BASE:-/tmp/astraeus-slurm}
  export SLURM_CONF=$SLURM_BASE/etc/slurm.conf
  command -v sbatch >/dev/null 2>&1 || slurm_skip "Slurm's client commands are not installed (scripts/bootstrap.sh)"
  [ -s "$SLURM_BASE/env" ] || slurm_skip "no Slurm test cluster under $SLURM_BASE"
  timeout 10 scontrol ping 2>/dev/null | grep -q 'UP' ||
    slurm_skip "the Slurm test cluster's slurmctld ($SLURM_CONF) does not answer"
  if [ "${1:-}" = sacct ]; then
    grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF" ||
      slurm_skip "the Slurm test cluster runs without slurmdbd (no sacct): install slurmdbd and mariadb-server"
    timeout 10 sacct -n -X -S now-1minute >/dev/null 2>&1 || slurm_skip "sacct does not answer (slurmdbd)"
  fi
}
# slurm_wait_state JOB STATE [TENTHS]: waits until squeue shows STATE (default 30 s).
slurm_wait_state() {
  local i
  for ((i = 0; i < ${3:-300}; i++)); do
    [ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = "$2" ] && return 0
    sleep 0.1
  done
  echo "job $1 did not reach $2 (now: $(squeue -h -j "$1" -o %T 2>/dev/null))" >&2
  return 1
}
