#!/usr/bin/env bash
# usage: compare_test.sh ASTRAEUS_BINARY SOURCE_DIR
# `astraeus compare`: sweeps add a column, outputs are byte-identical across runs and across
# thread counts (parallel = sequential), bad sweep lists are clear errors, simulate takes one value.
set -u
bin=$1; src=$2
d=$src/data/astraea-artifact
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { if eval "$2"; then passes=$((passes+1)); else echo "FAIL: $1"; fails=$((fails+1)); fi; }
run() { "$bin" compare --trace "$d/fake_job.csv" --tenants "$d/share.csv" --quiet "$@"; }

# 1. A sweep: policies x values, run twice in parallel and once sequentially.
run --policies astraea,yarn-cs-emu --lease 900,1800 --threads 2 --out "$tmp/a" > "$tmp/a.txt" || exit 1
run --policies astraea,yarn-cs-emu --lease 900,1800 --threads 2 --out "$tmp/b" > "$tmp/b.txt" || exit 1
run --policies astraea,yarn-cs-emu --lease 900,1800 --threads 1 --out "$tmp/c" > "$tmp/c.txt" || exit 1
files=$(cd "$tmp/a" && ls)
check "all outputs written" '[ "$(echo $files | wc -w)" -eq 11 ]'
for f in $files; do
  check "$f identical across runs" "cmp -s '$tmp/a/$f' '$tmp/b/$f'"
  check "$f identical with --threads 1" "cmp -s '$tmp/a/$f' '$tmp/c/$f'"
done
check "printed table identical" "diff '$tmp/a.txt' <(sed 's|$tmp/c|$tmp/a|' '$tmp/c.txt') > /dev/null"
check "no timestamps in the report" "! grep -Eq '20[0-9][0-9]-[0-9][0-9]-[0-9][0-9][ T][0-9]' '$tmp/a/report.html'"
check "table has a lease_s column" "grep -Eq '^  policy +lease_s +avg JCT' '$tmp/a/compare.txt'"
check "four rows (in each of the two tables): two policies x two leases" \
  "[ \$(grep -Ec '^  (astraea|yarn-cs-emu) +(900|1800)\*? +[0-9]' '$tmp/a/compare.txt') -eq 8 ]"
check "yarn-cs-emu's own lease is flagged" "grep -Eq '^  yarn-cs-emu +900\* ' '$tmp/a/compare.txt'"
check "per-run files carry the swept value" "[ -s '$tmp/a/astraea.lease_s=1800.jobs.csv' ]"
check "JSON rows carry the swept value" \
  "grep -A1 '\"sweep\": {' '$tmp/a/compare.json' | grep -q '\"lease_s\": 1800'"
check "the swept value reaches the run" \
  "python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(j[\"astraea.lease_s=900\"][\"manifest\"][\"options\"][\"lease_s\"] != 900)' '$tmp/a/compare.json'"
check "report is one self-contained file" \
  "[ \$(stat -c %s '$tmp/a/report.html') -lt 5000000 ] && ! grep -Eq '<script|<link|https?:|url\(' '$tmp/a/report.html'"

# 2. Two swept options make a grid: 1 policy x 2 x 2.
run --policies astraea --lease 900,1800 --starvation 3600,21600 --out "$tmp/g" > /dev/null || exit 1
check "grid has both columns" "grep -Eq '^  policy +lease_s +starvation_s +avg JCT' '$tmp/g/compare.txt'"
check "grid has 2 x 2 rows in each table" \
  "[ \$(grep -Ec '^  astraea +(900|1800) +(3600|21600) +[0-9]' '$tmp/g/compare.txt') -eq 8 ]"

# 3. A single value is no sweep: no extra column, files named by policy as before.
run --policies astraea --lease 900 --out "$tmp/s" > /dev/null || exit 1
check "single value: no sweep column" "grep -Eq '^  policy +avg JCT' '$tmp/s/compare.txt'"
check "single value: files by policy" "[ -s '$tmp/s/astraea.jobs.csv' ] && [ -s '$tmp/s/report.html' ]"

check "every job finished: no done column" "! grep -Eq ' done\$' '$tmp/s/compare.txt'"

# 3b. A policy that drops jobs says so: yarn-cs on 8x8 finishes 239 of the 500 jobs (simulate
#     --policy yarn-cs: 261 over their VC's static quota), astraea all 500.
run --policies astraea,yarn-cs --cluster 8x8 --out "$tmp/d" > /dev/null || exit 1
check "done column when a run dropped jobs" "grep -Eq '^  policy +avg JCT .* preempt +done\$' '$tmp/d/compare.txt'"
check "yarn-cs: 239/500 done" "grep -Eq '^  yarn-cs .* 239/500\$' '$tmp/d/compare.txt'"
check "astraea: 500/500 done" "grep -Eq '^  astraea .* 500/500\$' '$tmp/d/compare.txt'"
check "the note says the others were dropped" "grep -q 'the others were dropped' '$tmp/d/compare.txt'"
"$bin" simulate --trace "$d/fake_job.csv" --tenants "$d/share.csv" --cluster 8x8 --policy yarn-cs --quiet \
  --out "$tmp/y" > /dev/null || exit 1
check "simulate agrees: 239 of 500 done" "python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))[\"jobs\"]; sys.exit(not (j[\"done\"] == 239 and j[\"total\"] == 500))' '$tmp/y/summary.json'"

# 4. Bad lists are clear errors (exit 2, no output).
run --lease 300,abc --out "$tmp/e1" 2> "$tmp/e1" > /dev/null; rc=$?
check "bad item exits 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "bad item is named" "grep -q \"astraeus compare: error: --lease: 'abc' is not a whole number of seconds\" '$tmp/e1'"
run --delay 300,300 --out "$tmp/o2" 2> "$tmp/e2" > /dev/null; rc=$?
check "repeated value exits 2" '[ "$rc" -eq 2 ] && grep -q -- "--delay: 300 is given twice" "$tmp/e2"'
check "errors leave no output" '[ ! -e "$tmp/o2" ]'
"$bin" compare --trace "$d/fake_job.csv" --tenants "$d/share.csv" --names "$d/name.lst" \
  --mode compat --checkpoint-cost 5,10 --out "$tmp/o3" 2> "$tmp/e3" > /dev/null; rc=$?
check "compat: sweeping checkpoint cost is refused" \
  '[ "$rc" -eq 2 ] && grep -q "compat mode charges no checkpoint" "$tmp/e3"'

# 5. simulate keeps one value and says where lists go.
"$bin" simulate --trace "$d/fake_job.csv" --tenants "$d/share.csv" --lease 300,900 \
  --out "$tmp/o4" 2> "$tmp/e4" > /dev/null; rc=$?
check "simulate rejects a list (exit 2, got $rc)" '[ "$rc" -eq 2 ]'
check "simulate says lists are for compare" "grep -q 'a list (a sweep) is for .astraeus compare.' '$tmp/e4'"
"$bin" simulate --trace "$d/fake_job.csv" --tenants "$d/share.csv" --lease 900 --quiet \
  --out "$tmp/o5" > /dev/null
check "simulate takes one value" '[ "$?" -eq 0 ] && grep -q "\"lease_s\": 900" "$tmp/o5/manifest.json"'
# The manifest records astraea's changes as each run used them (all off for astraea-paper).
"$bin" compare --trace "$d/fake_job.csv" --tenants "$d/share.csv" --policies astraea,astraea-paper \
  --gang-weight 0.5 --no-own-hold --out "$tmp/o7" --quiet > /dev/null 2>&1
check "manifest: astraea's improvements as used (gang_weight 0.5, reserve_own off; paper all off)" \
  "jq -e '(.astraea.manifest.options.astraea_improvements | .gang_weight == 0.5 and .reserve_own == false and .reserve == true and .index_half_life_s == 28800) and (.\"astraea-paper\".manifest.options.astraea_improvements | .gang_weight == 0 and .reserve == false and .reserve_own == false and .history_ties == false)' '$tmp/o7/compare.json' > /dev/null"

# --threads -1: the range and the value (CLI11's own check printed a 300-digit range).
run --threads -1 --out "$tmp/o6" 2> "$tmp/e6" > /dev/null; rc=$?
check "--threads -1 exits 2 and names the range (got $rc)" \
  '[ "$rc" -eq 2 ] && [ "$(head -1 "$tmp/e6")" = "--threads: expected a whole number from 0 to 999999999, got '"'-1'"'" ]'

# 7. Columns line up with their headers: every line of each table has the header's length (the
# policy column was 13 wide, so yarn-cs-elastic's rows stood 2 characters right of the header,
# and the fairness header's right half stood 1 character left of its values).
run --policies astraea,yarn-cs-elastic --cluster 40x8 --out "$tmp/al" > /dev/null || exit 1
lengths() { awk -v first="$1" '$1 == "policy" { n++ } n == first && ($1 == "policy" || $2 ~ /^[0-9]/) { print length($0) }' "$tmp/al/compare.txt" | sort -u | tr '\n' ' '; }
check "table 1: header and rows of one length (got $(lengths 1))" '[ "$(lengths 1)" = "99 " ]'
check "avg wait and max wait are told apart (different measures side by side)" \
  "grep -qF 'any hourly sample. avg wait = the mean queueing delay (submit to first start, s);' '$tmp/al/compare.txt'"
check "table 2: header and rows of one length (got $(lengths 2))" '[ "$(lengths 2)" = "114 " ]'

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
