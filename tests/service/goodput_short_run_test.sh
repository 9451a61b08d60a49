#!/usr/bin/env bash
# usage: goodput_short_run_test.sh ASTRAEUS_BINARY ASTRA_BINARY
# `goodput --by run` and `--run NAME` agree on a run that has held GPUs for less than a minute
# (its first count comes at the next minute end): it has a row in `--by run` (it was left out
# while `--run NAME` showed it), with the same values. A live `serve --executor local --gpus 2`
# at the real clock (time_scale 1), a run of 2 GPUs placed a moment ago. Skipped (77) without curl
# or jq. About 5 s.
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
# Wait for the start of a minute's first 40 s, so that the run holds its GPUs < 20 s before the
# queries, within one minute: nothing of it is counted yet (by hand: 0 GPU-hours).
while [ "$(( $(date +%s) % 60 ))" -ge 40 ]; do sleep 1; done
"$ASTRA" runs submit short --gpus-per-worker 2 -- sleep 30 > /dev/null
for _ in $(seq 50); do
  [ "$("$ASTRA" runs show short --json | jq -r .state)" = running ] && break; sleep 0.1
done
"$ASTRA" astraeus goodput --by run --json > "$WORK/by_run.json"
"$ASTRA" astraeus goodput --run short --json > "$WORK/run.json"
placed=$("$ASTRA" runs show short --json | jq '[.history[] | select(.state == "starting") | .at_s] | first')
now=$(date +%s)
check "the run is placed, in the same minute as now" '[ "$placed" != null ] && [ $((placed / 60)) = $((now / 60)) ]'
check "--by run has a row for it: $(jq -c '[.rows[].run]' "$WORK/by_run.json")" \
  '[ "$(jq -r "[.rows[] | select(.run == \"short\")] | length" "$WORK/by_run.json")" = 1 ]'
check "its held GPU-hours: 0 (nothing counted within its first minute), as --run says" \
  '[ "$(jq ".rows[] | select(.run == \"short\") | .allocated_gpu_hours" "$WORK/by_run.json")" = 0 ] && [ "$(jq .allocated_gpu_hours "$WORK/run.json")" = 0 ]'
check "the row has its workspace" '[ "$(jq -r ".rows[] | select(.run == \"short\") | .workspace" "$WORK/by_run.json")" = ml ]'

echo "goodput_short_run_test: $passes passed, $fails failed"
[ "$fails" = 0 ]
