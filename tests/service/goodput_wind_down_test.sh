#!/usr/bin/env bash
# usage: goodput_wind_down_test.sh ASTRAEUS_BINARY ASTRA_BINARY
# The issue's case in the live service: an idle run (it never uses its GPUs, no utilization
# source: `--gpus 2` declared, no NVML) stopped by its owner exits on the signal at once. Under
# the old minute rule its last minute counted 20 GPU-s of productive time; to the second its
# wind-down (well under a second) is at most 1 s x 2 GPUs of productive time (the service's clock
# has whole seconds: 0 when the exit falls in the stop's second, 2 when it crosses into the next),
# and its running time, from the gang's start to the stop, is idle and unmeasured:
# 2 GPUs x (stop - start) by the run's history. Then a 4 s start-up with `--running-at progress`
# (below). `serve --executor local` at the real clock. Skipped (77) without curl or jq. About 20 s.
set -u
ASTRAEUS=$1; ASTRA=$2
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 2}]}], "local": {"allow_root": true}}
JSON
SERVE_ARGS="--executor local --gpus 2" start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml > /dev/null || exit 1
export ASTRALYX_API=$API
ASTRALYX_TOKEN=$(new_token --workspace ml); export ASTRALYX_TOKEN
"$ASTRA" runs submit idle --gpus-per-worker 2 -- sh -c 'trap "exit 0" TERM; sleep 600 & wait' > /dev/null
for _ in $(seq 100); do
  [ "$("$ASTRA" runs show idle --json | jq -r .state)" = running ] && break; sleep 0.1
done
sleep 3
"$ASTRA" runs stop idle > /dev/null
for _ in $(seq 100); do
  [ "$("$ASTRA" runs show idle --json | jq -r .state)" = stopped ] && break; sleep 0.1
done
"$ASTRA" runs show idle --json > "$WORK/run.json"
"$ASTRA" astraeus goodput --run idle --json > "$WORK/ledger.json"
jq -c '[.history[] | [.state, .at_s]]' "$WORK/run.json"
jq -c '{gpu_hours, unmeasured_gpu_hours}' "$WORK/ledger.json"
g() { jq "(.gpu_hours.$1 // 0) * 3600 | round" "$WORK/ledger.json"; }
ran=$(jq '[.history[] | select(.state == "running") | .at_s] | first' "$WORK/run.json")
stop=$(jq '[.history[] | select(.state == "stopping") | .at_s] | first' "$WORK/run.json")
end=$(jq '.history[-1].at_s' "$WORK/run.json")
check "the run stopped" '[ "$(jq -r .state "$WORK/run.json")" = stopped ]'
check "the wind-down: stopped within a second of the stop ($stop -> $end)" '[ $((end - stop)) -le 1 ]'
check "productive: 2 GPUs x the wind-down's whole seconds, at most 2 GPU-s (got $(g productive))" \
  '[ "$(g productive)" = $((2 * (end - stop))) ]'
check "idle: 2 GPUs x (stop - running) = $((2 * (stop - ran))) GPU-s (got $(g idle))" '[ "$(g idle)" = $((2 * (stop - ran))) ]'
check "unmeasured = idle (no utilization source, no progress)" \
  '[ "$(jq "(.unmeasured_gpu_hours // 0) * 3600 | round" "$WORK/ledger.json")" = "$(g idle)" ]'

# A start-up decided by progress (`--running-at progress`): the worker sleeps 4 s, then reports
# step 1 and exits on the stop. Starting lasts from the placement to that first report: by hand
# at least 4 s x 2 GPUs = 8 GPU-s (the minute rule showed starting 0 and the time idle), and
# exactly 2 GPUs x (running - starting) by the history; nothing of it is idle.
"$ASTRA" runs submit ddp --gpus-per-worker 2 --running-at progress -- \
  sh -c 'trap "exit 0" TERM; sleep 4; echo 1 > "$ASTRAEUS_PROGRESS_FILE.t"; mv "$ASTRAEUS_PROGRESS_FILE.t" "$ASTRAEUS_PROGRESS_FILE"; sleep 600 & wait' > /dev/null
for _ in $(seq 150); do
  [ "$("$ASTRA" runs show ddp --json | jq -r .state)" = running ] && break; sleep 0.1
done
sleep 2
"$ASTRA" runs stop ddp > /dev/null
for _ in $(seq 100); do
  [ "$("$ASTRA" runs show ddp --json | jq -r .state)" = stopped ] && break; sleep 0.1
done
"$ASTRA" runs show ddp --json > "$WORK/ddp.json"
"$ASTRA" astraeus goodput --run ddp --json > "$WORK/ledger.json"
jq -c '[.history[] | [.state, .at_s]]' "$WORK/ddp.json"
jq -c '{gpu_hours, unmeasured_gpu_hours}' "$WORK/ledger.json"
placed=$(jq '[.history[] | select(.state == "starting") | .at_s] | first' "$WORK/ddp.json")
ran=$(jq '[.history[] | select(.state == "running") | .at_s] | first' "$WORK/ddp.json")
check "start-up by progress: starting = 2 x (running - placed) = $((2 * (ran - placed))) GPU-s (got $(g starting))" \
  '[ "$(g starting)" = $((2 * (ran - placed))) ]'
check "start-up by progress: at least the worker's 4 s x 2 GPUs (got $(g starting))" '[ "$(g starting)" -ge 8 ]'
check "after its first report the run is productive (progress decides), not idle (got idle $(g idle))" \
  '[ "$(g idle)" = 0 ] && [ "$(g productive)" -gt 0 ]'

echo "goodput_wind_down_test: $passes passed, $fails failed"
[ "$fails" = 0 ]
