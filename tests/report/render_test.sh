#!/usr/bin/env bash
# usage: render_test.sh ASTRAEUS_BINARY SOURCE_DIR SCREENSHOT.png
# The comparison report renders in headless Chromium (Debian's `chromium`, installed by
# scripts/bootstrap.sh) from a file:// URL with no console message at all (the page has no
# JavaScript, so any message is an error: a bad SVG attribute, a blocked fetch, a script), its
# DOM holds the tables and every chart, and a screenshot is taken (kept at SCREENSHOT.png).
# Exits 77 (ctest: skipped) when Chromium is not installed.
set -u
bin=$1; src=$2; shot=$3
d=$src/data/astraea-artifact
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then echo "chromium not installed: skipped (run scripts/bootstrap.sh)"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { if eval "$2"; then passes=$((passes+1)); else echo "FAIL: $1"; fails=$((fails+1)); fi; }

# Two policies x two leases: four runs.
"$bin" compare --trace "$d/fake_job.csv" --tenants "$d/share.csv" --policies astraea,yarn-cs-emu \
  --lease 900,1800 --out "$tmp/out" --quiet > /dev/null || { echo "FAIL: compare"; exit 1; }
page="file://$tmp/out/report.html"
chrome() {
  timeout 120 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
    --user-data-dir="$tmp/profile" --hide-scrollbars "$@"
}
rm -f "$shot"
chrome --enable-logging=stderr --v=0 --window-size=1280,2400 --screenshot="$shot" "$page" \
  > "$tmp/log" 2>&1
rc=$?
check "chromium exits 0 (got $rc)" '[ "$rc" -eq 0 ]'
check "no console messages (errors, uncaught exceptions)" \
  "! grep -E ':CONSOLE|Uncaught|Failed to load|net::ERR' '$tmp/log'"
check "screenshot taken" "[ -s '$shot' ] && [ \"\$(head -c 8 '$shot' | od -An -tx1 | tr -d ' \n')\" = 89504e470d0a1a0a ]"
check "screenshot is not blank (> 40 kB of PNG)" "[ \$(stat -c %s '$shot') -gt 40000 ]"

chrome --dump-dom "$page" > "$tmp/dom.html" 2> /dev/null
# the JCT / F_u trade-off + 2 CDFs + 4 tenant panels + utilization = 8 charts, each with lines drawn.
check "DOM has 8 charts" "[ \$(grep -o '<svg ' '$tmp/dom.html' | wc -l) -eq 8 ]"
check "DOM has the two tables" "[ \$(grep -o '<table>' '$tmp/dom.html' | wc -l) -eq 2 ]"
check "charts have their lines" "[ \$(grep -o '<path class=\"s\"' '$tmp/dom.html' | wc -l) -ge 20 ]"
check "the worst-served tenant is named" "grep -q 'worst-served tenant: ' '$tmp/dom.html'"
check "no script in the page" "! grep -q '<script' '$tmp/dom.html'"
if [ "$fails" -gt 0 ]; then echo "--- chromium log:"; grep -v -i dbus "$tmp/log" | tail -20; fi
echo "$passes passed, $fails failed (screenshot: $shot)"
[ "$fails" -eq 0 ]
