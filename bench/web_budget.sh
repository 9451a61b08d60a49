#!/usr/bin/env bash
# usage: bench/web_budget.sh [BUILD_DIR] [RUNS]
# The web pages' budget on loopback: RUNS cold loads (new browser context, empty cache) of the
# Goodput view by Debian's Chromium against a live `astraeus serve` with seeded runs; prints and
# writes BUILD_DIR/web-screenshots/web-budget.json: time to the first view (navigation start to
# the view rendered with its data; median, min, max), DOMContentLoaded, bytes transferred
# (headers included, as compressed on the wire) and responses. docs/web.md has the figures.
set -eu
BUILD=${1:-build/release}; RUNS=${2:-20}
BUDGET_RUNS=$RUNS exec bash "$(dirname "$0")/../tests/web/web_test.sh" "$BUILD/astraeus" "$BUILD/web-screenshots"
