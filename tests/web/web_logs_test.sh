#!/usr/bin/env bash
# usage: web_logs_test.sh ASTRAEUS_BINARY
# A run's log on its page follows the run across its attempts: `astraeus serve --executor local
# --gpus 2` (max_failures 3) runs a worker that fails its first two attempts; a page opened at
# submission (Debian's Chromium through npm's playwright-core, web_logs_test.mjs) shows, with no
# reload, every attempt's log in full and in order with "--- attempt K ---" before attempts 2
# and 3 (as `astra runs logs --follow` prints them). Skipped (77) without chromium, node 20+,
# curl or `npm ci` in tests/web. About 15 s.
set -u
ASTRAEUS=$1
HERE=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || { echo "SKIP: no Chromium at $CHROMIUM (apt-get install chromium)"; exit 77; }
command -v node > /dev/null || { echo "SKIP: node not installed (apt-get install nodejs)"; exit 77; }
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || { echo "SKIP: node too old for playwright-core (needs 20 or later)"; exit 77; }
[ -d "$HERE/node_modules/playwright-core" ] || {
  echo "SKIP: playwright-core is not installed in tests/web (scripts/bootstrap.sh runs: npm ci --prefix tests/web)"; exit 77; }
. "$HERE/../service/live_server_lib.sh"
live_test_begin curl

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 2}]}],
 "time_scale": 60, "lease_s": 600, "max_failures": 3, "local": {"grace_s": 5, "allow_root": true}}
JSON
SERVE_ARGS="--executor local --gpus 2" start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml > /dev/null || exit 1
ML=$(new_token --workspace ml)
cd "$HERE" && BASE="http://127.0.0.1:$SERVER_PORT" CHROMIUM="$CHROMIUM" ML="$ML" timeout 90 node web_logs_test.mjs
rc=$?
[ $rc = 0 ] || { echo "--- server log (tail)"; tail -20 "$WORK/server.log"; }
exit $rc
