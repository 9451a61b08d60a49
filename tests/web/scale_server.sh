# Sourced by web_scale_test.sh (web_pages_scale) and bench/web_scale.sh: a live `astraeus serve`
# (simulated executor, 1800x clock: a service hour in 2 s, so that 5,000 runs end within
# seconds and the default 7-day period still holds them all for 5.6 minutes) on 127.0.0.1 with
# MACHINES machines of 8 GPUs in two pools (a100: 60%, h100: the rest), five workspaces, and RUNS runs seeded
# through the public API (scale_seed.mjs), all ended before it returns (the ledger is still).
# Per-workspace limits lifted (a workspace submits 1,000+ runs in seconds).
# Needs: $ASTRAEUS, node, and live_server_lib.sh sourced (live_test_begin called: $WORK).
# Sets: $BASE, $ADMIN (an org admin's token), $ML (workspace ml's token), $SEED_LOG.
# start_scale_server RUNS MACHINES: returns 1 (with the log's tail) when seeding fails.
SCALE_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
start_scale_server() {
  local runs=$1 machines=$2
  local a=$(( machines * 6 / 10 )); local b=$(( machines - a ))
  cat > "$WORK/scale.json" <<JSON
{"pools": [{"name": "a100", "machines": [{"count": $a, "gpus": 8}]},
           {"name": "h100", "machines": [{"count": $b, "gpus": 8}]}],
 "time_scale": 1800,
 "workspace_limits": {"pending_runs": 1000000, "submissions_per_minute": 1000000}}
JSON
  start_server "$WORK/scale.json" || return 1
  BASE="http://127.0.0.1:$SERVER_PORT"
  local tokens="" ws
  for ws in ml cv nlp rl speech; do
    admin workspace add "$ws" > /dev/null || return 1
    tokens="$tokens${tokens:+,}$ws=$(new_token --workspace "$ws")"
  done
  ML=${tokens#ml=}; ML=${ML%%,*}
  ADMIN=$(new_token --org-admin)
  SEED_LOG="$WORK/seed.txt"
  BASE="$BASE" TOKENS="$tokens" ADMIN="$ADMIN" POOLS=a100,h100 RUNS="$runs" \
    node "$SCALE_HERE/scale_seed.mjs" > "$SEED_LOG" 2>&1
  local rc=$?
  cat "$SEED_LOG"
  [ $rc = 0 ] || { echo "--- server log (tail)"; tail -20 "$WORK/server.log"; return 1; }
}
