#!/usr/bin/env bash
# usage: bench/agents_bench.sh BUILD_DIR [AGENTS] [DURATION_S]
# Node-agent benchmark (docs/performance.md, "Node agents"), loopback only, bounded:
#  1. an idle `astraeus agent --gpus 8` (heartbeat every 10 s): its CPU time and RSS over
#     DURATION_S seconds (from /proc/PID/stat and /proc/PID/status);
#  2. `astraeus serve --executor agents` with AGENTS (default 1000) simulated agents heartbeating
#     every 10 s through BUILD_DIR/bench/astraeus_bench_agents (8 client threads): heartbeat
#     p50/p99 and the service's CPU over DURATION_S (default 60) seconds.
set -u
BUILD=$1
AGENTS=${2:-1000}
DURATION=${3:-60}
ASTRAEUS=$BUILD/astraeus
CLIENT=$BUILD/bench/astraeus_bench_agents
[ -x "$ASTRAEUS" ] && [ -x "$CLIENT" ] || { echo "build $ASTRAEUS and $CLIENT first (-DASTRAEUS_BENCH=ON)"; exit 2; }
WORK=$(mktemp -d)
. "$(dirname "$0")/../tests/service/live_server_lib.sh"
trap 'stop_all; rm -rf "$WORK"' EXIT
cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": []}], "agents": {"heartbeat_s": 10, "lost_after_s": 60}, "threads": 8}
JSON
SERVE_ARGS="--executor agents"
start_server "$WORK/astraeus.json" || exit 1
TOKEN=$(new_token --agent)  # the idle agent's (an agent token registers one machine)
# The simulated agents' tokens, one each (a token registers one machine; ~35 ms a token).
for _ in $(seq "$AGENTS"); do new_token --agent; done > "$WORK/tokens"
ticks=$(getconf CLK_TCK)
cpu_s() { awk -v t="$ticks" '{ sub(/.*\) /, ""); split($0, f, " "); printf "%.3f", (f[12] + f[13]) / t }' "/proc/$1/stat"; }

root=(); [ "$(id -u)" = 0 ] && root=(--allow-root)
"$ASTRAEUS" agent --api "http://127.0.0.1:$SERVER_PORT" --token "$TOKEN" --name idle-agent --gpus 8 \
  --work-dir "$WORK/agent" "${root[@]}" --log-level warn > "$WORK/agent.log" 2>&1 &
AGENT=$!
EXTRA_PIDS+=("$AGENT")
sleep 2
a0=$(cpu_s "$AGENT")
"$CLIENT" --origin "http://127.0.0.1:$SERVER_PORT" --token-file "$WORK/tokens" --agents "$AGENTS" --period-s 10 \
  --duration-s "$DURATION" --threads 8 --server-pid "$SERVER_PID"
rc=$?
a1=$(cpu_s "$AGENT")
echo "idle agent: CPU $(awk -v a="$a0" -v b="$a1" -v d="$DURATION" 'BEGIN { printf "%.3f s over ~%d s (%.3f %% of one core)", b - a, d, 100 * (b - a) / d }'), RSS $(awk '/VmRSS/ {printf "%.1f MB", $2/1024}' "/proc/$AGENT/status")"
echo "service RSS: $(awk '/VmRSS/ {printf "%.1f MB", $2/1024}' "/proc/$SERVER_PID/status")"
exit $rc
