#!/usr/bin/env bash
# usage: local_nvml_test.sh ASTRAEUS_BINARY ASTRA_BINARY FAKE_LIBNVIDIA_ML
# The local executor's GPUs from NVML through dlopen, with the fake libnvidia-ml built by the
# tests (ASTRAEUS_NVML_LIBRARY; GPUs and utilization from $FAKE_NVML_FILE): `serve` without --gpus
# finds 2 GPUs (logged with their UUIDs), samples their utilization (every 0.1 s here) and a
# running run's minutes count productive at 50 %; without NVML and without --gpus, serve exits 2
# and says what to do. Skipped (77) without curl or jq. About 10 s.
set -u
ASTRAEUS=$1; ASTRA=$2; FAKE=$3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../service/live_server_lib.sh"
live_test_begin curl jq

ASTRAEUS_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$ASTRAEUS" serve --data-dir "$WORK/none" \
  --listen 127.0.0.1:0 > "$WORK/none.out" 2> "$WORK/none.err"
rc=$?
check "no NVML, no --gpus: exit 2 (got $rc)" '[ $rc = 2 ]'
check "and it says to declare GPUs with --gpus N" "grep -q -- '--gpus N declares N GPUs for CPU-only workers' '$WORK/none.err'"

printf 'GPU-11111111 FakeGPU 16384 50\nGPU-22222222 FakeGPU 16384 50\n' > "$WORK/gpus.txt"
cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 8}]}],
 "time_scale": 60, "local": {"allow_root": true, "utilization_period_s": 0.1}}
JSON
export ASTRAEUS_NVML_LIBRARY=$FAKE FAKE_NVML_FILE=$WORK/gpus.txt
SERVE_ARGS="--executor local" start_server "$WORK/astraeus.json" || exit 1
unset ASTRAEUS_NVML_LIBRARY FAKE_NVML_FILE
admin workspace add ml > /dev/null || exit 1
export ASTRALYX_API=$API ASTRALYX_TOKEN; ASTRALYX_TOKEN=$(new_token --workspace ml)
check "the GPUs NVML found are logged" "grep -q 'gpu.found.*GPU-11111111' '$WORK/server.log' && grep -q 'gpu.found.*GPU-22222222' '$WORK/server.log'"
check "the machine has NVML's 2 GPUs, not the config's 8" "grep -q 'executor.local gpus=2 nvml=yes' '$WORK/server.log'"
code=$(curl -s -o /dev/null -w "%{http_code}" -X POST "$API/runs" -H "Authorization: Bearer $ASTRALYX_TOKEN" \
  -d '{"name":"big","workers":3,"command":["true"]}')
check "a gang of 3 GPUs does not fit 2 (400)" "[ $code = 400 ]"
"$ASTRA" runs submit busy --workers 2 -- sh -c 'echo "gpus [$CUDA_VISIBLE_DEVICES]"; sleep 4' > /dev/null
for _ in $(seq 150); do [ "$("$ASTRA" runs show busy --json | jq -r .state)" = succeeded ] && break; sleep 0.1; done
check "busy succeeded" '[ "$("$ASTRA" runs show busy --json | jq -r .state)" = succeeded ]'
check "worker 1 got GPU 1" '[ "$("$ASTRA" runs logs busy --worker 1)" = "gpus [1]" ]'
curl -sS "$API/runs/busy/goodput" -H "Authorization: Bearer $ASTRALYX_TOKEN" > "$WORK/busy.json"
check "its running minutes at 50 % count productive" "jq -e '.gpu_hours.productive > 0' '$WORK/busy.json' > /dev/null"
echo "local_nvml: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
