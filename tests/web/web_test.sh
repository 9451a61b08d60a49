#!/usr/bin/env bash
# usage: web_test.sh ASTRAEUS_BINARY OUT_DIR [ASTRA_BINARY]
# The web pages in a real browser: starts `astraeus serve` on 127.0.0.1 (simulated executor, 60x
# clock) with seeded runs in two workspaces, a pool and a cluster named
# `<img src=x onerror=alert(1)>` and a run whose command is that string, then drives Debian's
# Chromium through npm's playwright-core (web_test.mjs): sign-in, each view, the figures against
# the REST API's and `astra`'s table for the same period, who sees what, names shown as text, a bad token refused,
# the live views (a page following a run it did not start, a hidden tab quiet, the server stopped
# and started again under open pages), a URL reopening the same view.
# Screenshots and the measured page budget go to OUT_DIR. Skipped (exit 77, with the reason)
# without chromium, node, curl or `npm ci` in tests/web. Bounded: it prints the seconds of each part.
set -u
ASTRAEUS=$1; mkdir -p "$2" && OUT=$(cd "$2" && pwd) || exit 1
# astra: the goodput views against the CLI's table for the same period (default: beside astraeus).
ASTRA=${3:-$(dirname "$ASTRAEUS")/astra}
[ -x "$ASTRA" ] || { echo "no astra binary at $ASTRA"; exit 1; }
ASTRA=$(cd "$(dirname "$ASTRA")" && pwd)/$(basename "$ASTRA")
HERE=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || { echo "SKIP: no Chromium at $CHROMIUM (apt-get install chromium)"; exit 77; }
command -v node > /dev/null || { echo "SKIP: node not installed (apt-get install nodejs)"; exit 77; }
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || { echo "SKIP: node $node_major is too old for playwright-core 1.65 (needs 20 or later)"; exit 77; }
command -v curl > /dev/null || { echo "SKIP: curl not installed"; exit 77; }
[ -d "$HERE/node_modules/playwright-core" ] || {
  echo "SKIP: playwright-core is not installed in tests/web (scripts/bootstrap.sh runs: npm ci --prefix tests/web)"; exit 77; }
mkdir -p "$OUT"
WORK=$(mktemp -d)
. "$HERE/../service/live_server_lib.sh"
trap 'stop_all; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT

XSS='<img src=x onerror=alert(1)>'
# Leases of 10 service hours (600 s here): no lease ends during the test, so llm keeps the
# default pool and vision waits until the checks that need a waiting run have run (with the
# default 1800 s, 30 s here, a slow run saw vision placed before the fairness checks).
cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 2, "gpus": 8}]},
           {"name": "$XSS", "machines": [{"count": 1, "gpus": 4}]}],
 "threshold_alerts": [{"metric": "workers_stalled", "scope": "", "op": ">", "value": 0, "for_s": 0}],
 "time_scale": 60, "stall_timeout_s": 120, "lease_s": 36000, "executor": {"stop_s": 180}}
JSON
admin init --org acme --cluster "$XSS" --config "$WORK/astraeus.json" > "$WORK/init.txt" || exit 1
# The simulated executor (named explicitly where the binary has several: it runs nothing).
SERVE_ARGS=()
"$ASTRAEUS" serve --help 2>&1 | grep -q -- '--executor' && SERVE_ARGS=(--executor sim)
"$ASTRAEUS" serve "${SERVE_ARGS[@]}" --config "$WORK/astraeus.json" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
    --port-file "$WORK/port" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 200); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || { echo "server did not listen"; cat "$WORK/server.log"; exit 1; }
BASE="http://127.0.0.1:$(cat "$WORK/port")"
admin workspace add ml > /dev/null && admin workspace add cv > /dev/null || exit 1
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv)
ADMIN=$(new_token --org-admin); OPERATOR=$(new_token --operator)

post() {  # post TOKEN PATH JSON
  curl -sS -f -o /dev/null -X POST "$BASE/v1$2" -H "Authorization: Bearer $1" -H 'Content-Type: application/json' -d "$3" \
    || { echo "seeding failed: POST $2 $3"; exit 1; }
}
# ml: llm fills the default pool; sweep-7 runs in the oddly named pool. cv: vision waits for
# the default pool, tiny waits behind sweep-7.
post "$ML" /runs "{\"name\":\"llm\",\"workers\":2,\"gpus_per_worker\":8,\"command\":\"$XSS\"}"
post "$ML" /runs "{\"name\":\"sweep-7\",\"workers\":1,\"gpus_per_worker\":4,\"pool\":\"$XSS\",\"time_limit_s\":7200}"
sleep 0.3
post "$CV" /runs '{"name":"vision","workers":2,"gpus_per_worker":8}'
post "$CV" /runs "{\"name\":\"tiny\",\"workers\":1,\"gpus_per_worker\":2,\"pool\":\"$XSS\"}"
# wait_for TOKEN PATH PATTERN: polls GET PATH (up to 20 s) until its JSON matches PATTERN.
wait_for() {
  for _ in $(seq 100); do
    curl -sS "$BASE/v1$2" -H "Authorization: Bearer $1" | grep -Eq "$3" && return 0
    sleep 0.2
  done
  echo "seeding: GET $2 never matched $3"; exit 1
}
wait_for "$ML" /runs/llm '"state":"running"'   # start-up: 60 service seconds
wait_for "$ML" /runs/sweep-7 '"state":"running"'
# llm's workers report progress once, then none: stalled after the 120 s stall timeout.
post "$ML" /runs/llm/progress '{"steps":[100,100]}'
wait_for "$ML" /stalls '"stalled":\[\{'
sleep 1

# The live views' checks stop this server and start it again on the same port and data
# (ASTRAEUS, WORK, SERVER_PID, SERVE_EXECUTOR); the new one's PID is in $WORK/server2.pid.
ASTRAEUS_ABS=$(cd "$(dirname "$ASTRAEUS")" && pwd)/$(basename "$ASTRAEUS")
cd "$HERE" && BASE="$BASE" OUT="$OUT" CHROMIUM="$CHROMIUM" XSS="$XSS" \
  ML="$ML" CV="$CV" ADMIN="$ADMIN" OPERATOR="$OPERATOR" ASTRA="$ASTRA" \
  ASTRAEUS="$ASTRAEUS_ABS" WORK="$WORK" SERVER_PID="$SERVER_PID" SERVE_EXECUTOR="${SERVE_ARGS[1]:-}" timeout 150 node web_test.mjs
rc=$?
[ -s "$WORK/server2.pid" ] && EXTRA_PIDS+=("$(cat "$WORK/server2.pid")")
[ $rc = 0 ] || [ ! -s "$WORK/server2.log" ] || { echo "--- restarted server log (tail)"; tail -20 "$WORK/server2.log"; }
[ $rc = 0 ] || { echo "--- server log (tail)"; tail -20 "$WORK/server.log"; }
exit $rc
