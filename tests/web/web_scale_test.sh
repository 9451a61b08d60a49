#!/usr/bin/env bash
# usage: web_scale_test.sh ASTRAEUS_BINARY [RUNS] [MACHINES]
# The web pages at scale: `astraeus serve` (simulated executor) seeded through the public API
# with RUNS runs (default 5,000) on MACHINES machines (default 100), all ended (scale_server.sh);
# then Debian's Chromium through npm's playwright-core (web_scale_test.mjs) checks the Goodput
# view (100 rows of 5,000, sorted by the server), sorting, "Show 100 more", a run's page, the
# Runs view (goodput from the summaries, the next page), the Machines view and a machine's
# page against the REST API's full answers. No timing asserted (bench/web_scale.sh times it).
# Skipped (77) without chromium, node 20+, curl or `npm ci` in tests/web. About 30-40 s.
set -u
ASTRAEUS=$1; RUNS=${2:-5000}; MACHINES=${3:-100}
HERE=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || { echo "SKIP: no Chromium at $CHROMIUM (apt-get install chromium)"; exit 77; }
command -v node > /dev/null || { echo "SKIP: node not installed (apt-get install nodejs)"; exit 77; }
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || { echo "SKIP: node too old for playwright-core (needs 20 or later)"; exit 77; }
[ -d "$HERE/node_modules/playwright-core" ] || {
  echo "SKIP: playwright-core is not installed in tests/web (scripts/bootstrap.sh runs: npm ci --prefix tests/web)"; exit 77; }
. "$HERE/../service/live_server_lib.sh"
. "$HERE/scale_server.sh"
live_test_begin curl
start_scale_server "$RUNS" "$MACHINES" || exit 1
cd "$HERE" && BASE="$BASE" CHROMIUM="$CHROMIUM" ADMIN="$ADMIN" RUNS="$RUNS" MACHINES="$MACHINES" timeout 120 node web_scale_test.mjs
rc=$?
[ $rc = 0 ] || { echo "--- server log (tail)"; tail -20 "$WORK/server.log"; }
exit $rc
