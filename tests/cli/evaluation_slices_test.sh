#!/usr/bin/env bash
# usage: evaluation_slices_test.sh ASTRAEUS_BINARY SOURCE_DIR
# Issue 13's Done-when 2 on the real Philly arrivals (data/philly/, tenants by seed 1, the busiest
# 14 days, as scripts/main-job.sh makes them): on every slice of docs/evaluation.md that differs
# from the light one, the default astraea is no worse than astraea-paper on any figure (average
# JCT, p5 F_j, the worst tenant's windowed F_u, the longest wait, preemptions), meets the targets
# on reference-1120, and the own-GPU hold is what bounds the longest wait on 100x8 (without it a
# gang waits 188,677 s). The pinned values are docs/evaluation.md's (the default since issue 21). About 25 s (release).
set -u
bin=$1; src=$2
command -v jq > /dev/null || { echo "SKIP: jq not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { if eval "$2"; then passes=$((passes+1)); else echo "FAIL: $1"; fails=$((fails+1)); fi; }
weights=$src/data/astraea-artifact/philly-share-production.csv

"$bin" trace assign-tenants --trace "$src/data/philly/philly_trace.csv.gz" --format rfold-philly \
  --mix-from "$src/data/philly/sampled_jobs.json.gz" --seed 1 --out "$tmp/vc.csv" > /dev/null || exit 1
"$bin" trace slice --trace "$tmp/vc.csv" --busiest-days 14 --out "$tmp/b14.csv" > /dev/null || exit 1
sim() { "$bin" "$@" --trace "$tmp/b14.csv" --tenants "$weights" --lease 900 --starvation 21600 --quiet --json; }

# fig FILE POLICY: "avg_jct p5_fj worst_windowed_fu max_wait preemptions" of one policy, as
# docs/evaluation.md reports them: seconds whole, fairness to 3 decimals (on 210x8 the two p5 F_j
# differ in the 5th decimal, 0.99447 against 0.99449: equal at the precision the issue states).
fig() {
  jq -r --arg p "$2" '.[$p].summary | "\(.jct_s.mean | round) \(.job_fairness.p5 * 1000 | round / 1000) \(.tenant_fairness.worst_over_time * 1000 | round / 1000) \(.longest_wait_s.max | round) \(.preemptions)"' "$1"
}
for c in reference-1120 210x8 100x8; do
  sim compare --cluster "$c" --policies astraea,astraea-paper --out "$tmp/$c" > "$tmp/$c.json" || exit 1
  read -r j f u w p <<< "$(fig "$tmp/$c.json" astraea)"
  read -r J F U W P <<< "$(fig "$tmp/$c.json" astraea-paper)"
  echo "$c: astraea $j $f $u $w $p; astraea-paper $J $F $U $W $P"
  check "$c: avg JCT $j <= $J" "[ $j -le $J ]"
  check "$c: p5 F_j $f >= $F" "awk 'BEGIN{exit !($f >= $F)}'"
  check "$c: worst windowed F_u $u >= $U" "awk 'BEGIN{exit !($u >= $U)}'"
  check "$c: longest wait $w <= $W" "[ $w -le $W ]"
  check "$c: preemptions $p <= $P" "[ $p -le $P ]"
  echo "$w" > "$tmp/$c.wait"
done
# The targets on the overloaded reference cluster (avg JCT <= 40,000 s is out of reach: see
# docs/evaluation.md), and the figures docs/evaluation.md gives.
read -r j f u w p <<< "$(fig "$tmp/reference-1120.json" astraea)"
check "reference-1120: worst windowed F_u $u >= 0.95" "awk 'BEGIN{exit !($u >= 0.95)}'"
check "reference-1120: p5 F_j $f >= 0.90" "awk 'BEGIN{exit !($f >= 0.90)}'"
check "reference-1120: longest wait $w <= 21600 + 900" "[ $w -le 22500 ]"
check "reference-1120: avg JCT 43,863 s as documented (got $j)" "[ $j -eq 43863 ]"
check "210x8: longest wait 21,672 s as documented (got $(cat "$tmp/210x8.wait"))" "[ $(cat "$tmp/210x8.wait") -eq 21672 ]"
check "100x8: longest wait 21,945 s as documented (got $(cat "$tmp/100x8.wait"))" "[ $(cat "$tmp/100x8.wait") -eq 21945 ]"
# Without the own-GPU hold, the over-served tenant's starving gang on 100x8 waits ten times longer.
nohold=$(sim simulate --cluster 100x8 --no-own-hold --out "$tmp/nohold" | jq '.longest_wait_s.max | round')
check "100x8 --no-own-hold: longest wait 188,677 s (got $nohold)" "[ '$nohold' = 188677 ]"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
