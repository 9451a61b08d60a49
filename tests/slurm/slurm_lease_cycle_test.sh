#!/bin/bash
# Runs tests/slurm/slurm_lease_cycle.cpp (one lease cycle), or another such program (slurm_fencing.cpp),
# on the Slurm test cluster; skipped (77)
# when it is not up. usage: slurm_lease_cycle_test.sh BINARY [CYCLES]
set -euo pipefail
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 777 "$dir"
"$1" "$dir" "${2:-1}"
