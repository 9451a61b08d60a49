#!/usr/bin/env bash
# usage: cli_contract_test.sh ASTRAEUS_BINARY SOURCE_DIR
set -u
bin=$1; src=$2
d=$src/data/astraea-artifact
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { if eval "$2"; then passes=$((passes+1)); else echo "FAIL: $1"; fails=$((fails+1)); fi; }

# 1. A bad row: exit 2, file:line:field on stderr, no output directory.
printf 'job_id,user,num_gpu,submit_time,duration\n1,Brown,2,0,100\n2,Brown,x,5,50\n' > "$tmp/bad.csv"
"$bin" simulate --trace "$tmp/bad.csv" --tenants "$d/share.csv" --out "$tmp/out1" --quiet \
  2> "$tmp/err1" > /dev/null
rc=$?
check "bad row exits 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "bad row message names file, line and field" \
  "grep -q \"bad.csv:3: field 'num_gpu': expected an integer from 1 to 1000000, got 'x'\" '$tmp/err1'"
check "bad row leaves no output" '[ ! -e "$tmp/out1" ]'

# 2. Unknown option values are errors listing the valid ones.
"$bin" simulate --trace "$d/fake_job.csv" --tenants "$d/share.csv" --job-order nope \
  --out "$tmp/out2" 2> "$tmp/err2" > /dev/null
rc=$?
check "unknown job order exits 2" '[ "$rc" -eq 2 ]'
check "unknown job order lists valid ones" "grep -q 'valid: fairness, disc_fairness' '$tmp/err2'"

# 3. Same input and seed: byte-identical files.
for run in a b; do
  "$bin" simulate --trace "$d/fake_job.csv" --tenants "$d/share.csv" --names "$d/name.lst" \
    --mode compat --lease 900 --starvation 21600 --out "$tmp/$run" --quiet > "$tmp/$run.txt" || exit 1
done
for f in jobs.csv tenants.csv summary.json manifest.json; do
  check "$f identical across runs" "cmp -s '$tmp/a/$f' '$tmp/b/$f'"
done
check "summary printed identically" "diff <(grep -v 'outputs in' '$tmp/a.txt') <(grep -v 'outputs in' '$tmp/b.txt') > /dev/null"
check "the summary shows the reference's average JCT" "grep -q 'avg 6068.50' '$tmp/a.txt'"

# 4. --help explains.
"$bin" simulate --help > "$tmp/help" 2>&1
check "--help lists --job-order" "grep -q -- '--job-order' '$tmp/help'"

# 5. Inputs that used to be accepted wrongly: a negative seed, a machine listed twice, an empty
#    policy entry.
"$bin" simulate --trace "$d/fake_job.csv" --seed -1 --out "$tmp/out5" > /dev/null 2> "$tmp/err5"
rc=$?
check "--seed -1 exits 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "--seed -1 says what was expected" "grep -q 'expected a non-negative integer' '$tmp/err5'"
printf 'machineId, number of GPUs\nm0,8\nm1,8\nm0,4\n' > "$tmp/dup.csv"
"$bin" simulate --trace "$d/fake_job.csv" --cluster "$tmp/dup.csv" --out "$tmp/out6" > /dev/null 2> "$tmp/err6"
rc=$?
check "a machine listed twice exits 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "a machine listed twice names both lines" "grep -q \"dup.csv:4: machine 'm0' is listed twice (first on line 2)\" '$tmp/err6'"
# --cluster MACHINESxGPUS with a number out of range: which one, what it must be (it said only
# "expected MACHINESxGPUS ..." for 0x8, a well-formed shape).
for c in "0x8|the number of machines must be from 1 to 1000000, got '0'" \
         "4x0|the GPUs per machine must be from 1 to 1024, got '0'" \
         "4x|the GPUs per machine must be from 1 to 1024, got ''"; do
  v=${c%%|*}; want=${c#*|}
  "$bin" simulate --trace "$d/fake_job.csv" --cluster "$v" --out "$tmp/out7" > /dev/null 2> "$tmp/err7"
  rc=$?
  check "--cluster $v exits 2 (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/out7" ]'
  check "--cluster $v says which number and the range: $(cat "$tmp/err7")" \
    "grep -qxF \"astraeus simulate: error: --cluster '$v': $want (expected MACHINESxGPUS, e.g. 40x8)\" '$tmp/err7'"
done
# One machine is "1 machine" in the summary's cluster line.
"$bin" simulate --trace "$d/fake_job.csv" --cluster 1x8 --out "$tmp/out7b" > "$tmp/sum7b" 2>&1
check "1x8 reads '1 machine, 8 GPUs': $(head -1 "$tmp/sum7b")" "grep -qF '(1 machine, 8 GPUs (1 x 8)' '$tmp/sum7b'"
# A native trace keeps a submit before its epoch (negative submit_s); simulate and compare refuse
# it naming the file, the job's line (6) and the field, and write nothing.
printf '#astraeus-trace,1\n#epoch_unix_s,0\n#tenant,a,1\njob_id,tenant,gpus,submit_s,duration_s,weight\n1,a,1,0,60,1\n2,a,1,-7,60,1\n' > "$tmp/neg.csv"
"$bin" simulate --trace "$tmp/neg.csv" --out "$tmp/out8" --quiet > /dev/null 2> "$tmp/err8"
rc=$?
check "a negative submit_s exits 2 (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/out8" ]'
check "a negative submit_s names file, line and field: $(cat "$tmp/err8")" \
  "grep -qF \"$tmp/neg.csv:6: field 'submit_s': simulate needs 0 <= submit_s <= 10000000000 s (seconds after the trace's epoch), got -7 (job 2)\" '$tmp/err8'"
"$bin" compare --trace "$tmp/neg.csv" --policies astraea,fifo --out "$tmp/out9" --quiet > /dev/null 2> "$tmp/err9"
rc=$?
check "compare too (got $rc): $(cat "$tmp/err9")" "[ \$rc -eq 2 ] && grep -qF 'neg.csv:6: field' '$tmp/err9'"
"$bin" compare --trace "$d/fake_job.csv" --policies astraea,,fifo --out "$tmp/out7" > /dev/null 2> "$tmp/err7"
rc=$?
check "an empty --policies entry exits 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "an empty --policies entry is named" "grep -q 'an empty entry' '$tmp/err7'"
# A run the engine refuses (a default-mode-only policy in compat mode) leaves no --out folder
# behind (check_output_dir had made it, empty).
"$bin" simulate --mode compat --policy tiresias --trace "$d/fake_job.csv" --tenants "$d/share.csv" \
  --out "$tmp/engine_s" --quiet > /dev/null 2> "$tmp/engine_s.err"
rc=$?
check "simulate refused by the engine (got $rc): no --out folder" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/engine_s" ]'
"$bin" compare --mode compat --policies astraea,tiresias --trace "$d/fake_job.csv" \
  --tenants "$d/share.csv" --out "$tmp/engine_c" --quiet > /dev/null 2> "$tmp/engine_c.err"
rc=$?
check "compare refused by the engine (got $rc): no --out folder" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/engine_c" ]'
mkdir "$tmp/keep13"
"$bin" simulate --mode compat --policy tiresias --trace "$d/fake_job.csv" --tenants "$d/share.csv" \
  --out "$tmp/keep13" --quiet > /dev/null 2>&1
check "an --out folder that existed before is kept" '[ -d "$tmp/keep13" ]'
rmdir "$tmp/keep13"
# --out naming a file: exit 2, said as such (it was "cannot create output directory: Not a
# directory"), the file untouched.
echo keep > "$tmp/a_file"
"$bin" simulate --trace "$d/fake_job.csv" --out "$tmp/a_file" --quiet > /dev/null 2> "$tmp/file.err"
rc=$?
check "--out a file exits 2 (got $rc)" '[ "$rc" -eq 2 ] && [ "$(cat "$tmp/a_file")" = keep ]'
check "--out a file: $(cat "$tmp/file.err")" \
  "grep -qxF \"astraeus simulate: error: $tmp/a_file: cannot create output directory: it exists and is not a directory\" '$tmp/file.err'"
rm "$tmp/a_file"
# --goodput-weeks on a trace without dates (epoch 0): a note says its weeks are 1970's.
"$bin" simulate --trace "$d/fake_job.csv" --tenants "$d/share.csv" --goodput --goodput-weeks 1 \
  --out "$tmp/weeks_out" --quiet > /dev/null 2> "$tmp/weeks.err"
rc=$?
check "--goodput-weeks on a dateless trace runs (got $rc) with a note: $(cat "$tmp/weeks.err")" \
  "[ \$rc -eq 0 ] && grep -qxF \"astraeus simulate: note: $d/fake_job.csv has no calendar dates (epoch 0): --goodput-weeks counts its time from 1970-01-01 (Thursday of 1970-W01)\" '$tmp/weeks.err'"
rm -rf "$tmp/weeks_out"
# Every tenant at weight 0: exit 2 naming the tenants file (it said only "the tenant weights sum
# to 0").
sed 's/,0\.1$/,0/' "$d/share.csv" > "$tmp/zero_share.csv"
"$bin" simulate --trace "$d/fake_job.csv" --tenants "$tmp/zero_share.csv" --out "$tmp/zero_out" --quiet \
  > /dev/null 2> "$tmp/zero.err"
rc=$?
check "all weights 0 exits 2 (got $rc), no output" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/zero_out" ]'
check "all weights 0 names the file: $(cat "$tmp/zero.err")" \
  "grep -qxF \"astraeus simulate: error: $tmp/zero_share.csv: every tenant's weight (or quota_gpus) is 0: give at least one tenant a positive one\" '$tmp/zero.err'"


# 9. Numeric options name their range and the text given (CLI11's own checks printed a 300-digit
#    range, and an overflowing --lease was clamped to 9223372036854775807).
num_err() { "$bin" simulate --trace "$d/fake_job.csv" "$@" --out "$tmp/out10" --quiet 2>&1 > /dev/null | head -1; }
check "--index-half-life -1" \
  "[ \"\$(num_err --index-half-life -1)\" = \"--index-half-life: expected a whole number from 0 to 10000000000, got '-1'\" ]"
check "--lease 99999999999999999999" \
  "[ \"\$(num_err --lease 99999999999999999999)\" = \"--lease: expected a whole number from 1 to 1000000000, got '99999999999999999999'\" ]"
# The command line states the simulator's own bounds (it said 0..1e10 for --lease, then the
# simulator refused 0 with 1..1e9).
check "--lease 0: the simulator's range" \
  "[ \"\$(num_err --lease 0)\" = \"--lease: expected a whole number from 1 to 1000000000, got '0'\" ]"
check "--checkpoint-cost 2000000: the simulator's range" \
  "[ \"\$(num_err --checkpoint-cost 2000000)\" = \"--checkpoint-cost: expected a whole number from 0 to 1000000, got '2000000'\" ]"
check "--gang-weight 5" \
  "[ \"\$(num_err --gang-weight 5)\" = \"--gang-weight: expected a number from 0 to 4, got '5'\" ]"
check "--index-tolerance nan" \
  "[ \"\$(num_err --index-tolerance nan)\" = \"--index-tolerance: expected a number from 0 to 1, got 'nan'\" ]"
check "no output directory after a bad number" '[ ! -e "$tmp/out10" ]'

# 11. The lease-end rules (docs/policies.md, "Two gangs"): off by default and then absent from
# the manifest (runs without them write the manifest they always wrote); recorded when set.
check "--victim-margin x" \
  "[ \"\$(num_err --victim-margin x)\" = \"--victim-margin: expected a number from -1 to 1000, got 'x'\" ]"
check "manifest without the lease-end rules names neither" \
  "! grep -q -e victim_margin -e preempt_horizon '$tmp/a/manifest.json'"
"$bin" simulate --trace "$d/fake_job.csv" --tenants "$d/share.csv" --lease 900 \
  --victim-margin 0.5 --preempt-horizon 3600 --out "$tmp/rules" --quiet > /dev/null
check "manifest records --victim-margin 0.5 --preempt-horizon 3600" \
  "python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))[\"options\"][\"astraea_improvements\"]; sys.exit(not (i[\"victim_margin\"] == 0.5 and i[\"preempt_horizon_s\"] == 3600))' '$tmp/rules/manifest.json'"

# 11b. The rules against needless preemptions (issue 21; docs/policies.md, "The default since
# issue 21"): on by default with the headroom scaled to the cluster (floor(0.003 x 1,120) = 3 GPUs)
# and recorded; --no-X and --X=false switch them off; compat (run a) records none.
"$bin" simulate --trace "$d/fake_job.csv" --tenants "$d/share.csv" --cluster reference-1120 \
  --out "$tmp/i21" --quiet > /dev/null
check "manifest records the issue-21 default (scaled headroom 3 GPUs on 1,120)" \
  "python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))[\"options\"][\"astraea_improvements\"]; sys.exit(not (i[\"arrival_headroom\"] == -1 and i[\"arrival_headroom_fraction\"] == 0.003 and i[\"arrival_headroom_gpus\"] == 3 and i[\"reclaim_within_quota\"] and i[\"free_before_victims\"] and i[\"placed_victims_only\"]))' '$tmp/i21/manifest.json'"
"$bin" simulate --trace "$d/fake_job.csv" --tenants "$d/share.csv" --cluster reference-1120 \
  --arrival-headroom 0 --no-reclaim-within-quota --free-before-victims=false --no-placed-victims-only \
  --out "$tmp/i21off" --quiet > /dev/null
check "--arrival-headroom 0 --no-reclaim-within-quota --free-before-victims=false --no-placed-victims-only" \
  "python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))[\"options\"][\"astraea_improvements\"]; sys.exit(not (\"arrival_headroom\" not in i and \"reclaim_within_quota\" not in i and not i[\"free_before_victims\"] and not i[\"placed_victims_only\"]))' '$tmp/i21off/manifest.json'"
check "compat manifest names no headroom and no reclaim" \
  "! grep -q -e arrival_headroom -e reclaim_within_quota '$tmp/a/manifest.json'"

# 12. A trace with no jobs is an error saying so (not "no tenants"), and so is one whose every row
# was left out; a bad --out is refused before the simulation, not after it.
printf 'job_id,user,num_gpu,submit_time,duration\n' > "$tmp/header_only.csv"
"$bin" simulate --trace "$tmp/header_only.csv" --format reference --out "$tmp/out12" --quiet \
  2> "$tmp/err12" > /dev/null
rc=$?
check "a header-only trace exits 2 (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/out12" ]'
check "a header-only trace says it has no jobs: $(cat "$tmp/err12")" \
  "grep -qF 'header_only.csv: no jobs to simulate (no job rows after the header)' '$tmp/err12'"
printf 'job_id,user,num_gpu,submit_time,duration\n1,Brown,0,0,100\n2,Brown,0,5,50\n' > "$tmp/cpu_only.csv"
"$bin" compare --trace "$tmp/cpu_only.csv" --format reference --policies astraea,fifo \
  --out "$tmp/out12b" --quiet 2> "$tmp/err12b" > /dev/null
rc=$?
check "compare on a trace of CPU-only rows exits 2 (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/out12b" ]'
check "and says every row was left out: $(cat "$tmp/err12b")" \
  "grep -qF 'cpu_only.csv: no jobs to simulate (every row was left out: 2 (' '$tmp/err12b'"
echo x > "$tmp/a_file"
for cmd in simulate compare; do
  "$bin" $cmd --trace "$d/fake_job.csv" --tenants "$d/share.csv" --out "$tmp/a_file/out" --quiet \
    2> "$tmp/err12c" > /dev/null
  rc=$?
  check "$cmd --out under a regular file exits 2 (got $rc)" '[ "$rc" -eq 2 ]'
  check "$cmd names the --out and why: $(cat "$tmp/err12c")" \
    "grep -qxF 'astraeus $cmd: error: $tmp/a_file/out: cannot create output directory: Not a directory' '$tmp/err12c'"
done

# A native trace's job of a tenant the --tenants file does not weigh: the trace, the job, the
# tenant and the tenants file are named (it said only "the tenants file"). Without --tenants a
# tenant named by a job row only is added with weight 1 (docs/formats/native.md).
printf '#astraeus-trace,1\n#tenant,a,1\njob_id,tenant,gpus,submit_s,duration_s,weight\n1,a,1,0,60,1\n2,b,1,0,60,1\n' > "$tmp/undeclared.csv"
echo '{"tenants": [{"name": "a", "weight": 1}]}' > "$tmp/only_a.json"
"$bin" simulate --trace "$tmp/undeclared.csv" --tenants "$tmp/only_a.json" --out "$tmp/out9" --quiet > /dev/null 2> "$tmp/err9"
rc=$?
check "a tenant without a weight exits 2 (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$tmp/out9" ]'
check "and names the trace, job, tenant and tenants file: $(cat "$tmp/err9")" \
  "grep -qxF \"astraeus simulate: error: $tmp/undeclared.csv: job 2: tenant 'b' has no weight in the tenants file $tmp/only_a.json (add it, or use --unknown-tenant default-weight)\" '$tmp/err9'"
"$bin" simulate --trace "$tmp/undeclared.csv" --out "$tmp/out9b" --quiet > "$tmp/sum9b" 2>&1
check "without --tenants: b is added (2 tenants)" "grep -qF ', 2 tenants:' '$tmp/sum9b'"

# `admin init` says which machines it stored and that `serve --executor local` (the default)
# uses this machine instead: it printed "4 machines, 32 GPUs" and then `serve --gpus 2` had 2.
"$bin" admin init --org acme --cluster c1 --data-dir "$tmp/svc1" > "$tmp/init1" 2>&1
check "admin init: the default configuration's machines: $(cat "$tmp/init1")" \
  "grep -qxF 'initialised $tmp/svc1: organisation acme, cluster c1, 1 pool, 4 machines, 32 GPUs (the default configuration)' '$tmp/init1'"
check "admin init: serve --executor local uses this machine" \
  "grep -qF '\`serve --executor local\` (the default) uses this machine alone, with its GPUs (from NVML, or --gpus N)' '$tmp/init1'"
# trace export --out onto the store: exit 2, the database untouched (it was replaced).
cp "$tmp/svc1/astraeus.db" "$tmp/db.before"
"$bin" trace export --data-dir "$tmp/svc1" --out "$tmp/svc1/astraeus.db" > /dev/null 2> "$tmp/export.err"
rc=$?
check "trace export onto the store exits 2 (got $rc), the store unchanged" \
  '[ "$rc" -eq 2 ] && cmp -s "$tmp/db.before" "$tmp/svc1/astraeus.db"'
check "trace export onto the store: $(cat "$tmp/export.err")" \
  "grep -qxF \"astraeus trace export: error: $tmp/svc1/astraeus.db is the service's store ($tmp/svc1/astraeus.db); write to another file\" '$tmp/export.err'"
# Run again on the same folder (the README's walk-through twice): exit 2 naming the folder and
# its organisation (it said only "the data directory is already initialised").
"$bin" admin init --org other --cluster c2 --data-dir "$tmp/svc1" > "$tmp/init1b" 2>&1
rc=$?
check "admin init twice exits 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "admin init twice names the folder: $(cat "$tmp/init1b")" \
  "grep -qxF 'astraeus admin: $tmp/svc1 is already initialised (organisation acme): use it as it is, or give another --data-dir' '$tmp/init1b'"
echo '{"pools": [{"name": "p", "machines": [{"count": 1, "gpus": 1}]}]}' > "$tmp/one.json"
"$bin" admin init --org acme --cluster c1 --config "$tmp/one.json" --data-dir "$tmp/svc2" > "$tmp/init2" 2>&1
check "admin init: one machine of one GPU: $(head -1 "$tmp/init2")" \
  "grep -qF ', 1 pool, 1 machine, 1 GPU ($tmp/one.json)' '$tmp/init2'"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
