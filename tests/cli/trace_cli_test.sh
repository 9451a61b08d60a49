#!/usr/bin/env bash
# `astraeus trace ...`: results, exit codes, one-line errors, no output left behind on failure.
# usage: trace_cli_test.sh ASTRAEUS_BINARY SOURCE_DIR
set -u
bin=$1; src=$2
fx=$src/tests/fixtures; philly=$src/data/philly
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { if eval "$2"; then passes=$((passes+1)); else echo "FAIL: $1"; fails=$((fails+1)); fi; }

# 1. stats, text and JSON (hand-made Helios fixture: 4 GPU jobs, 2 rows skipped).
"$bin" trace stats --trace "$fx/helios/cluster_log.csv" > "$tmp/s.txt" 2> "$tmp/s.err"
check "stats exits 0" '[ $? -eq 0 ]'
check "stats counts jobs" "grep -q '^jobs: *4$' '$tmp/s.txt'"
check "stats shows skipped rows" "grep -q 'skipped rows: *2 (CPU job (gpu_num = 0): 1, no duration: 1)' '$tmp/s.txt'"
"$bin" trace stats --trace "$fx/helios/cluster_log.csv" --json > "$tmp/s.json"
check "stats --json" "grep -q '\"jobs\": 4,' '$tmp/s.json'"

# 2. A malformed row: exit 2, one line naming file:line:field, no output file.
"$bin" trace convert --trace "$fx/helios/bad_gpu.csv" --out "$tmp/bad.csv" 2> "$tmp/e1"
rc=$?
check "bad row exits 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "bad row message" "grep -q \"bad_gpu.csv:3: field 'gpu_num': expected an integer >= 0, got '-1'\" '$tmp/e1'"
check "bad row: one line" '[ "$(wc -l < "$tmp/e1")" -eq 1 ]'
check "bad row leaves no output" '[ ! -e "$tmp/bad.csv" ] && [ -z "$(ls -A "$tmp" | grep tmp)" ]'

# 3. Unknown format lists the valid ones; usage errors exit 2.
"$bin" trace stats --trace "$fx/helios/cluster_log.csv" --format slurm 2> "$tmp/e2" > /dev/null
check "unknown format exits 2" '[ $? -eq 2 ]'
check "unknown format lists formats" "grep -q 'valid: reference, philly-joblog, helios, rfold, rfold-philly, native, auto' '$tmp/e2'"
"$bin" trace slice --trace "$fx/helios/cluster_log.csv" --out "$tmp/x.csv" 2> "$tmp/e3"
check "slice needs a window" '[ $? -eq 2 ] && grep -q "give either --from and --to, or --busiest-days N" "$tmp/e3"'
"$bin" trace slice --trace "$fx/helios/cluster_log.csv" --busiest-days 0 --out "$tmp/x.csv" 2> "$tmp/e3b"
check "--busiest-days 0 exits 2 naming the range" \
  '[ $? -eq 2 ] && grep -q -- "--busiest-days: Value 0 not in range 1 to 36500" "$tmp/e3b"'
# More days than the trace spans (the fixture's 4 GPU jobs are all submitted on 2020-06-09): the
# whole trace, with a note saying so.
"$bin" trace slice --trace "$fx/helios/cluster_log.csv" --busiest-days 1000 --out "$tmp/all.csv" 2> "$tmp/e3c"
check "--busiest-days past the trace's span: whole trace, and a note" \
  '[ $? -eq 0 ] && grep -q "note: the trace.s submissions span only 1 day, so the busiest 1000 days are all of it" "$tmp/e3c" && grep -q "wrote .* (4 jobs" "$tmp/e3c"'
"$bin" trace slice --trace "$fx/helios/cluster_log.csv" --from 2020-06-09 --to yesterday --out "$tmp/x.csv" 2> "$tmp/e4"
check "bad date exits 2" '[ $? -eq 2 ] && grep -q "expected a UTC date" "$tmp/e4" && [ ! -e "$tmp/x.csv" ]'
"$bin" trace convert --trace "$fx/helios/cluster_log.csv" --out "$tmp/no/such/dir/x.csv" 2> "$tmp/e5"
check "unwritable output exits 1" '[ $? -eq 1 ] && grep -q "does not exist" "$tmp/e5"'
"$bin" trace 2> /dev/null > /dev/null
check "trace without a subcommand exits 2" '[ $? -eq 2 ]'

# 4. slice by dates (UTC): Helios jobs at 10:41:01, 10:41:27, 15:59:59 and 23:30:00 UTC on 06-09.
"$bin" trace slice --trace "$fx/helios/cluster_log.csv" --from 2020-06-09T10:41:10 --to 2020-06-09T16:00:00 \
  --max-duration 300 --out "$tmp/win.csv" 2> /dev/null
check "slice by dates" "[ \$(grep -c '^14255' '$tmp/win.csv') -eq 2 ] && grep -q '^#epoch_utc,2020-06-09 10:41:10$' '$tmp/win.csv'"
check "slice re-bases and caps" "grep -q '^1425512,vchbv,4,17,249,1$' '$tmp/win.csv' && grep -q '^1425514,vcJkd,8,19129,300,1$' '$tmp/win.csv'"

# 4b. A trace without calendar dates (RFold: epoch 0): a date is refused (it selected nothing:
# 'no job is submitted in the window'), and a slice stays without dates (epoch 0, not 1970).
"$bin" trace slice --trace "$fx/rfold/trace.csv" --format rfold --from 2017-10-01 --to 2017-10-02 \
  --out "$tmp/nodate.csv" 2> "$tmp/e5"
rc=$?
check "date on a dateless trace exits 2 (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/nodate.csv" ]'
check "date on a dateless trace: message" "grep -qx \"astraeus trace slice: error: --from '2017-10-01': the trace has no calendar dates (its epoch is 0); give seconds since its start\" '$tmp/e5'"
"$bin" trace slice --trace "$fx/rfold/trace.csv" --format rfold --from 10 --to 1000000 \
  --out "$tmp/nodate.csv" 2> /dev/null
check "slice of a dateless trace keeps epoch 0" "grep -qx '#epoch_unix_s,0' '$tmp/nodate.csv'"

# 4c. assign-tenants --seed -1 exits 2 as simulate's does (it was taken as 2^64 - 1).
"$bin" trace assign-tenants --trace "$fx/rfold/trace.csv" --format rfold \
  --mix-from "$philly/sampled_jobs.json.gz" --seed -1 --out "$tmp/seed.csv" 2> "$tmp/e6"
rc=$?
check "assign-tenants --seed -1 exits 2 (got $rc), no output" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/seed.csv" ]'
check "assign-tenants --seed -1: message" "grep -qxF -e \"--seed: expected a non-negative integer, got '-1'\" '$tmp/e6'"

# 4d. --out naming the input is refused, the input untouched (convert in place replaced it).
cp "$fx/rfold/trace.csv" "$tmp/inplace.csv"
"$bin" trace convert --trace "$tmp/inplace.csv" --format rfold --out "$tmp/inplace.csv" 2> "$tmp/e7"
rc=$?
check "convert --out = --trace exits 2 (got $rc), input unchanged" \
  '[ "$rc" -eq 2 ] && cmp -s "$fx/rfold/trace.csv" "$tmp/inplace.csv"'
check "convert --out = --trace: message" \
  "grep -qxF \"astraeus trace convert: error: --out $tmp/inplace.csv is the input $tmp/inplace.csv; write to another file (it would replace the input)\" '$tmp/e7'"
"$bin" trace slice --trace "$tmp/inplace.csv" --format rfold --from 0 --to 1000000 \
  --out "$tmp/../$(basename "$tmp")/inplace.csv" 2> /dev/null
rc=$?
check "slice --out = --trace by another path exits 2 (got $rc), input unchanged" \
  '[ "$rc" -eq 2 ] && cmp -s "$fx/rfold/trace.csv" "$tmp/inplace.csv"'
rm "$tmp/inplace.csv"

# 5. The real Philly trace: busiest 14 days, tenants, byte-stable outputs, loss-free convert.
"$bin" trace slice --trace "$philly/philly_trace.csv.gz" --format rfold-philly --busiest-days 14 \
  --out "$tmp/b14.csv" 2> "$tmp/b14.err"
check "busiest 14 days of Philly" "grep -q 'busiest 14 days: 2017-10-16 .. 2017-10-29 UTC' '$tmp/b14.err'"
check "busiest 14 days: 28241 jobs" "[ \$(grep -vc '^#' '$tmp/b14.csv') -eq 28242 ]"
for run in a b; do
  "$bin" trace assign-tenants --trace "$tmp/b14.csv" --mix-from "$philly/sampled_jobs.json.gz" \
    --seed 5 --out "$tmp/$run.csv" 2> /dev/null
done
check "assign-tenants is seed-stable" "cmp -s '$tmp/a.csv' '$tmp/b.csv'"
check "assign-tenants names 11 VCs" "[ \$(grep -c '^#tenant,' '$tmp/a.csv') -eq 11 ]"
"$bin" trace convert --trace "$tmp/a.csv" --out "$tmp/c.csv" 2> /dev/null
check "convert native -> native is byte-identical" "cmp -s '$tmp/a.csv' '$tmp/c.csv'"
check "no temporary files left" '[ -z "$(ls -A "$tmp" | grep "\.tmp")" ]'

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
