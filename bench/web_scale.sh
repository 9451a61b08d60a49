#!/usr/bin/env bash
# usage: bench/web_scale.sh [BUILD_DIR] [--runs N] [--machines M] [--reps R]
# The web pages at scale: a live `astraeus serve` (BUILD_DIR/astraeus, simulated executor)
# seeded through the API with N runs (default 5000) on M machines (default 100), all ended
# (tests/web/scale_server.sh); then Debian's Chromium (tests/web/web_scale_bench.mjs) times R
# times (default 5) the first view of the Goodput and Runs views and their interactions (sort,
# more rows), in the page; prints each one's median and max in ms. docs/performance.md,
# "Web pages at scale", has the figures. Needs chromium, node 20+ and `npm ci --prefix tests/web`.
set -eu
BUILD=build/release; RUNS=5000; MACHINES=100; REPS=5
[ $# -gt 0 ] && [ "${1#--}" = "$1" ] && { BUILD=$1; shift; }
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --machines) MACHINES=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    *) echo "unknown option $1"; exit 2 ;;
  esac
done
ASTRAEUS=$(cd "$BUILD" && pwd)/astraeus
HERE=$(cd "$(dirname "$0")/../tests/web" && pwd)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
set +e
. "$HERE/../service/live_server_lib.sh"
. "$HERE/scale_server.sh"
live_test_begin curl node
start_scale_server "$RUNS" "$MACHINES" || exit 1
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$HERE" && BASE="$BASE" CHROMIUM="$CHROMIUM" ADMIN="$ADMIN" REPS="$REPS" node web_scale_bench.mjs
