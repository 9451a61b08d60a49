#!/bin/bash
# Utilization on Slurm: `serve --executor slurm` with the fake NVML library (the tests' fake
# libnvidia-ml, 8 GPUs at 50 %, passed to the jobs through ASTRAEUS_NVML_LIBRARY and
# FAKE_NVML_FILE): each step runs `astraeus gpu-sample` beside its worker, the executor reads its
# samples from the run's folder, and a busy run that reports no progress is productive, its only
# idle time the unmeasured start before its first sample (without samples it would be idle and
# unmeasured throughout). Skipped (77) without the cluster.
# usage: serve_slurm_nvml_test.sh ASTRAEUS_BINARY FAKE_LIBNVIDIA_ML
set -uo pipefail
BIN=$1
FAKE=$2
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
slurm_serve_scratch astraeus-serve-slurm-nvml
fails=0
check() { local what=$1; shift; if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi; }
for k in 0 1 2 3 4 5 6 7; do echo "GPU-0000000$k FakeGPU 16384 50"; done > "$T/gpus.txt"
slurm_serve_ml
export ASTRAEUS_NVML_LIBRARY=$FAKE FAKE_NVML_FILE=$T/gpus.txt
slurm_serve_start || { echo "server did not start"; cat "$T/server.log"; exit 1; }
curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
  --data '{"name": "busy", "workers": 1, "gpus_per_worker": 8, "command": "sleep 15"}' "$API/runs" > /dev/null
done_() { [ "$(curl -sS -H "Authorization: Bearer $ML" "$API/runs/busy" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = succeeded ]; }
check "the run succeeded" waitfor 900 done_
curl -sS -H "Authorization: Bearer $ML" "$API/runs/busy/goodput" > "$T/goodput.json"
check "a busy run on sampled GPUs is productive; idle only its unmeasured start" python3 - "$T/goodput.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
held = {k: round(v * 3600) for k, v in g["held_gpu_hours"].items()}
unmeasured = round(g.get("unmeasured_gpu_hours", 0) * 3600)
running = held["productive"] + held["idle"]
print(f"productive {held['productive']} idle {held['idle']} unmeasured {unmeasured} GPU-s")
sys.exit(0 if held["productive"] >= 8 * 10 and held["idle"] == unmeasured and 4 * held["idle"] <= running else 1)
PY
ls "$DATA"/runs/ml/busy/attempt-1/ 2>/dev/null | tr '\n' ' '; echo
echo "serve_slurm_nvml: $fails failed"
[ "$fails" -eq 0 ]
