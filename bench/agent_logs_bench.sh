#!/usr/bin/env bash
# usage: bench/agent_logs_bench.sh BUILD_DIR [MEGABYTES] [CHUNK_BYTES]
# Agents' log shipping (docs/performance.md, "Node agents: log shipping"), loopback only, bounded:
# `astraeus serve --executor agents` and one `astraeus agent --gpus 1 --log-chunk-bytes CHUNK_BYTES`
# (default 262144); a 1-worker run prints MEGABYTES (default 48, under the 64 MiB cap) of
# 101-byte lines at once and exits. Its exit is reported only once its whole log is at the
# service, so the time from `running` to `succeeded` is the time to ship it: the throughput, and
# the CPU time the agent and the service spent (from /proc/PID/stat).
set -u
BUILD=$1
MB=${2:-48}
CHUNK=${3:-262144}
ASTRAEUS=$BUILD/astraeus
[ -x "$ASTRAEUS" ] || { echo "build $ASTRAEUS first"; exit 2; }
WORK=$(mktemp -d)
. "$(dirname "$0")/../tests/service/live_server_lib.sh"
trap 'stop_all; rm -rf "$WORK"' EXIT
cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": []}], "agents": {"heartbeat_s": 1, "lost_after_s": 30}}
JSON
SERVE_ARGS="--executor agents"
start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml > /dev/null || exit 1
AT=$(new_token --agent)
WT=$(new_token --workspace ml)
ticks=$(getconf CLK_TCK)
cpu_s() { awk -v t="$ticks" '{ sub(/.*\) /, ""); split($0, f, " "); printf "%.3f", (f[12] + f[13]) / t }' "/proc/$1/stat"; }
root=(); [ "$(id -u)" = 0 ] && root=(--allow-root)
"$ASTRAEUS" agent --api "http://127.0.0.1:$SERVER_PORT" --token "$AT" --name a1 --gpus 1 \
  --work-dir "$WORK/agent" --log-chunk-bytes "$CHUNK" "${root[@]}" --log-level warn > "$WORK/agent.log" 2>&1 &
AGENT=$!
EXTRA_PIDS+=("$AGENT")
state() { curl -s -H "Authorization: Bearer $WT" "$API/runs/big" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("state", ""))'; }
sleep 2
bytes=$((MB * 1000 * 1000))
a0=$(cpu_s "$AGENT"); s0=$(cpu_s "$SERVER_PID")
curl -s -o /dev/null -X POST -H "Authorization: Bearer $WT" "$API/runs" -d "{\"name\": \"big\", \"workers\": 1,
  \"gpus_per_worker\": 1, \"command\": \"yes $(printf '%0100d' 0) | head -c $bytes\"}"
end=$((SECONDS + 600))
until [ "$(state)" = running ] || [ "$(state)" = succeeded ]; do [ $SECONDS -lt $end ] || exit 1; sleep 0.02; done
t0=$(date +%s.%N)
until [ "$(state)" = succeeded ]; do [ $SECONDS -lt $end ] || { echo "not done in 600 s"; exit 1; }; sleep 0.05; done
t1=$(date +%s.%N)
a1=$(cpu_s "$AGENT"); s1=$(cpu_s "$SERVER_PID")
copy=$WORK/data/runs/ml/big/attempt-1/worker-0.log
[ "$(stat -c %s "$copy")" = "$bytes" ] || { echo "the service's copy has $(stat -c %s "$copy") bytes, want $bytes"; exit 1; }
cmp -s "$copy" "$WORK/agent/logs/ml/big/attempt-1/worker-0.log" || { echo "copy differs"; exit 1; }
awk -v b="$bytes" -v t0="$t0" -v t1="$t1" -v a="$(awk -v x="$a0" -v y="$a1" 'BEGIN{print y-x}')" \
    -v s="$(awk -v x="$s0" -v y="$s1" 'BEGIN{print y-x}')" -v c="$CHUNK" 'BEGIN {
  printf "%.1f MB shipped in %.2f s (running -> succeeded): %.1f MB/s, chunk %d bytes\n", b / 1e6, t1 - t0, b / 1e6 / (t1 - t0), c
  printf "agent CPU %.2f s, service CPU %.2f s (%.3f s per MB together)\n", a, s, (a + s) / (b / 1e6) }'
