#!/usr/bin/env bash
# usage: bench/load_service.sh BUILD_DIR [load client options...]
# The service's load benchmark (docs/performance.md, "Service under load"): starts
# `astraeus serve` on 127.0.0.1 (any free port, a temp data dir) with a simulated 1,000-GPU
# cluster (125 machines x 8 GPUs, clock 10x), four workspaces and an org-admin token, then runs
# BUILD_DIR/bench/astraeus_load_service: 1,000 submissions at 100/s, then goodput queries at
# 50/s for 20 s; p50/p99 per request kind. Loopback only; bounded (about 35 s).
# `--flood 10000 --workspaces ml,cv`: ml submits 10,000 runs back to back while cv's calls go
# on (the per-workspace limits are lifted here so that the flood gets through).
set -u
BUILD=$1; shift
ASTRAEUS=$BUILD/astraeus
CLIENT=$BUILD/bench/astraeus_load_service
[ -x "$ASTRAEUS" ] && [ -x "$CLIENT" ] || { echo "build $ASTRAEUS and $CLIENT first (-DASTRAEUS_BENCH=ON)"; exit 2; }
WORK=$(mktemp -d)
. "$(dirname "$0")/../tests/service/live_server_lib.sh"
trap 'stop_all; rm -rf "$WORK"' EXIT

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 125, "gpus": 8}]}], "time_scale": 10,
 "workspace_limits": {"pending_runs": 200000, "submissions_per_minute": 1000000}}
JSON
start_server "$WORK/astraeus.json" || exit 1
for ws in ml cv nlp rl; do admin workspace add "$ws" > /dev/null || exit 1; done
TOKEN=$(new_token --org-admin)
echo "server: $API (pid $SERVER_PID), $(cat "$WORK/init.txt")"
"$CLIENT" --api "$API" --token "$TOKEN" --workspaces ml,cv,nlp,rl "$@"
rc=$?
echo "server RSS: $(ps -o rss= -p "$SERVER_PID" | awk '{printf "%.0f MB", $1/1024}'), database: $(du -sh "$WORK/data" | cut -f1)"
curl -sS "$API/runs?state=running" -H "Authorization: Bearer $TOKEN" | \
  jq -r '"runs running at the end: \(.runs | length)"' 2>/dev/null
# The scheduling round time, when the server logs it (an event with "round" and a us= field).
if grep -q 'round.*us=' "$WORK/server.log"; then
  grep -o 'round.*us=[0-9]*' "$WORK/server.log" | sed 's/.*us=//' | sort -n | \
    awk '{v[NR]=$1} END {if (NR) printf "scheduling rounds: %d, p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", NR, v[int(NR*0.5+0.5)]/1000, v[int(NR*0.99+0.5)]/1000, v[NR]/1000}'
else
  echo "scheduling round time: not exposed by the server (no round timing in its log)"
fi
exit $rc
