#!/usr/bin/env bash
# `astraeus goodput import-slurm`: Slurm accounting -> goodput events -> the table, on fixtures:
#  - tests/fixtures/slurm/site-sacct.txt: a hand-written `sacct --parsable2` (fields in another
#    order, a step row, typed gres, a requeued job, a node failure, a job still running, one still
#    waiting, one without GPUs), every time on a minute boundary so the minute count is exact;
#  - tests/fixtures/slurm/cluster-sacct.{json,txt}: real `sacct --json` and `--parsable2` of the
#    same jobs on the Slurm test cluster (tests/slurm/capture_sacct_fixtures.sh), with requeued
#    segments and a NODE_FAIL;
#  - bad input: exit 2, FILE:LINE / FILE: jobs[i].field on stderr, nothing on stdout.
# usage: import_slurm_test.sh ASTRAEUS_BINARY SOURCE_DIR
set -u
bin=$1; src=$2
fx=$src/tests/fixtures/slurm
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { if eval "$2"; then passes=$((passes+1)); else echo "FAIL: $1"; fails=$((fails+1)); fi; }
imp() { "$bin" goodput import-slurm "$@"; }
# GPU-seconds of a JSON number of GPU-hours (rounded to the second)
gs() { python3 -c "import json,sys; d=json.load(open('$1')); print(round(eval('d' + sys.argv[1]) * 3600))" "$2"; }

# 1. site-sacct.txt, by hand (GPU-hours; the records end at 14:00, the latest time in them):
#   100 (ml, a100, 16 GPUs): waits 10:00-10:30 (8.0 first placement), holds a01+a02 10:30-12:00
#     (24.0), REQUEUED: waits 12:00-12:30 (8.0 preemption), holds a02+a03 12:30-14:00 (24.0):
#     held 48.0, waiting 16.0; machines a01 12.0, a02 24.0, a03 12.0.
#   101 (vision, v100, gres/gpu:v100=4): holds v1 11:00-11:45 (3.0), NODE_FAIL: waits -12:15 (2.0
#     failure), holds v2 12:15-13:00 (3.0), FAILED: held 6.0, waiting 2.0.
#   102: no GPUs, left out. 100.batch: a step, skipped.
#   103 (ml, a100, 3 GPUs on a[04-05], RUNNING): waits 13:00-13:30 (1.5), holds 13:30-14:00
#     (1.5: a04 2 GPUs = 1.0, a05 1 GPU = 0.5; a note says the split is not in sacct).
#   104 (ml, a100, PENDING, ReqTRES gres/gpu=2): waits 13:50-14:00 (0.333).
#   ml: held 49.5, waiting 17.833 = 17.8; vision 6.0 / 2.0; TOTAL 55.5 / 19.833 = 19.8.
imp "$fx/site-sacct.txt" > "$tmp/ws.txt" 2> "$tmp/ws.err"
check "site by workspace exits 0" '[ $? -eq 0 ]'
check "site by workspace: the table" "cmp -s '$tmp/ws.txt' '$fx/site.by_workspace.txt'"
check "site: notes on stderr" "grep -q 'site-sacct.txt: 4 jobs with GPUs, 6 segments$' '$tmp/ws.err' && grep -q '^jobs without GPUs (left out): 1$' '$tmp/ws.err' && grep -q '^jobs still running or waiting at 2026-11-02T14:00:00Z (counted up to it): 2$' '$tmp/ws.err' && grep -q '^job 103: 3 GPUs on 2 nodes, split as evenly as possible' '$tmp/ws.err'"
(cd "$fx" && imp site-sacct.txt --by run) > "$tmp/run.txt" 2>/dev/null
check "site by run" "grep -q '^100  *48.0  *-  *-  *-  *-  *-  *-  *-  *-  *16.0$' '$tmp/run.txt' && grep -q '^101  *6.0 .* 2.0$' '$tmp/run.txt' && grep -q '^103  *1.5 .* 1.5$' '$tmp/run.txt' && grep -q '^104  *0.0 .* 0.3$' '$tmp/run.txt' && grep -q '^TOTAL  *55.5 .* 19.8$' '$tmp/run.txt'"
imp "$fx/site-sacct.txt" --by machine > "$tmp/m.txt" 2>/dev/null
check "site by machine" "[ \"\$(awk 'NR>2 && NF==11 {print \$1, \$2}' '$tmp/m.txt' | tr '\n' ' ')\" = 'a01 12.0 a02 24.0 v1 3.0 v2 3.0 a03 12.0 a04 1.0 a05 0.5 TOTAL 55.5 ' ]"
imp "$fx/site-sacct.txt" --by pool > "$tmp/p.txt" 2>/dev/null
check "site by pool" "grep -q '^a100  *49.5 .* 17.8$' '$tmp/p.txt' && grep -q '^v100  *6.0 .* 2.0$' '$tmp/p.txt'"
imp "$fx/site-sacct.txt" --weeks 1 --by pool > "$tmp/w.txt" 2>/dev/null
check "site --weeks 1" "grep -q '^Week 2026-W44 (from 2026-10-26)$' '$tmp/w.txt' && grep -q '^Week 2026-W45 (from 2026-11-02)$' '$tmp/w.txt' && [ \$(grep -c '^a100  *49.5' '$tmp/w.txt') -eq 1 ]"
imp "$fx/site-sacct.txt" --by run --json > "$tmp/run.json" 2>/dev/null
check "site --json: held 100 = 172800 GPU-s" "[ \$(gs '$tmp/run.json' \"['rows'][0]['allocated_gpu_hours']\") -eq 172800 ]"
check "site --json: 100 waits 28800 first + 28800 preemption" "[ \$(gs '$tmp/run.json' \"['rows'][0]['waiting_gpu_hours_by_cause']['first_placement']\") -eq 28800 ] && [ \$(gs '$tmp/run.json' \"['rows'][0]['waiting_gpu_hours_by_cause']['preemption']\") -eq 28800 ]"
check "site --json: 101 waits 7200 after its node failure" "[ \$(gs '$tmp/run.json' \"['rows'][1]['waiting_gpu_hours_by_cause']['failure']\") -eq 7200 ]"
check "site --json: Slurm's own figure beside it" "python3 -c \"import json; d=json.load(open('$tmp/run.json')); assert [r['slurm_allocated_gpu_seconds'] for r in d['rows']] == [172800, 21600, 5400, 0]; assert d['not_recorded_by_slurm'][0] == 'productive'; assert 'goodput' not in d['total']\""
imp "$fx/site-sacct.txt" --run 101 --end 2026-11-02T12:00:00Z > "$tmp/one.txt" 2>/dev/null
# up to 12:00: held 11:00-11:45 (3.0), failure wait 11:45-12:00 (1.0)
check "--run 101 --end 12:00" "grep -q '^101  *3.0 .* 1.0$' '$tmp/one.txt'"
imp "$fx/site-sacct.txt" --events-out "$tmp/ev.jsonl" > /dev/null 2>&1
check "--events-out: a goodput event log that replay reads" "\"$bin\" goodput replay '$tmp/ev.jsonl' --by run > '$tmp/replay.txt' 2> '$tmp/replay.err' && grep -q '^100  *48.0 ' '$tmp/replay.txt' && grep -q '^utilization not measured for 55.5 GPU-h (counted idle)$' '$tmp/replay.err'"
check "--events-out: the requeue is a preemption, the node failure a fail" "grep -q '\"event\":\"stop\",\"reason\":\"preemption\",\"run\":\"100\",\"t\":1793620800' '$tmp/ev.jsonl' && grep -q '\"event\":\"fail\",\"run\":\"101\",\"t\":1793619900' '$tmp/ev.jsonl'"

# 2. The real captures: JSON and parsable2 give the same; by hand (all within 11:57, counted to
#    the second, so the held time equals Slurm's own figure on every job):
#    2: 16 GPUs 11:57:06-:09 = 48 GPU-s held.  3: 4 GPUs, segments :06-:08, :10-:12, :14-:16, then
#    cancelled at :16: 4 x 6 = 24 held (Slurm: 24), the 2 x 2 s between segments 4 x 4 = 16
#    waiting (the minute rule gave 40 held, 0 waiting).  4: held 3 GPUs, never started: 3 x 10 =
#    30 waiting.  5: no GPUs.  6: 4 GPUs on gpu[1-2] NODE_FAIL :16-:19, again :20-:22: 4 x 5 = 20
#    held (Slurm: 20), the second :19-:20 between them 4 x 1 = 4 waiting.
imp "$fx/cluster-sacct.json" --by run --json > "$tmp/cj.json" 2> "$tmp/cj.err"
check "cluster json exits 0" '[ $? -eq 0 ]'
imp "$fx/cluster-sacct.txt" --by run --json > "$tmp/ct.json" 2>/dev/null
check "cluster: json = parsable2" "cmp -s '$tmp/cj.json' '$tmp/ct.json'"
check "cluster: figures by hand" "python3 -c \"
import json; d = json.load(open('$tmp/cj.json'))
got = {r['run']: (round(r['allocated_gpu_hours']*3600), round(r['waiting_gpu_hours']*3600), r['slurm_allocated_gpu_seconds']) for r in d['rows']}
assert got == {'2': (48, 0, 48), '3': (24, 16, 24), '4': (0, 30, 0), '6': (20, 4, 20)}, got
assert all(h == s for h, _, s in got.values()), got
assert d['jobs'] == 4 and d['segments'] == 7 and d['jobs_without_gpus'] == 1, d\""
imp "$fx/cluster-sacct.json" --by machine > "$tmp/cm.txt" 2>/dev/null
# job 3's first segment on gpu3 (:06-:08) is counted there (to the second), then on gpu1.
check "cluster: machines from the nodes" "[ \"\$(awk 'NR>2 && NF==11 {print \$1}' '$tmp/cm.txt' | tr '\n' ' ')\" = 'gpu1 gpu2 gpu3 TOTAL ' ]"
imp - --format parsable2 < "$fx/cluster-sacct.txt" > "$tmp/stdin.txt" 2>/dev/null
check "stdin" "grep -q '^ml  ' '$tmp/stdin.txt' && grep -q '^vision  ' '$tmp/stdin.txt'"

# 3. Bad input: exit 2, one clear message, nothing on stdout.
bad() {  # bad NAME CONTENT EXPECTED_STDERR_SUBSTRING [ARGS...]
  local name=$1 content=$2 want=$3; shift 3
  printf '%s' "$content" > "$tmp/$name"
  (cd "$tmp" && "$bin" goodput import-slurm "$name" "$@") > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  check "bad $name: exit 2" "[ $rc -eq 2 ]"
  check "bad $name: nothing on stdout" "[ ! -s '$tmp/out' ]"
  check "bad $name: says '$want'" "grep -qF -- \"$want\" '$tmp/err' || { cat '$tmp/err'; false; }"
}
H='JobID|Account|Partition|State|Submit|Start|End|NodeList|AllocTRES'
bad nohdr.txt $'JobID|State|Submit|Start|End|NodeList|Account|Partition\n1|COMPLETED|x|x|x|n1|a|p\n' \
  "nohdr.txt:1: header: no field 'AllocTRES'"
bad badtime.txt "$H"$'\n1|ml|gpu|COMPLETED|2026-11-02T10:00:00|yesterday|2026-11-02T11:00:00|n1|gres/gpu=1\n' \
  "badtime.txt:2: field 'Start': expected a time YYYY-MM-DDTHH:MM:SS (UTC), Unix seconds, or Unknown; got 'yesterday'"
bad fields.txt "$H"$'\n\n1|ml|gpu|COMPLETED|2026-11-02T10:00:00\n' "fields.txt:3: 5 fields, the header has 9"
bad tres.txt "$H"$'\n1|ml|gpu|COMPLETED|2026-11-02T10:00:00|2026-11-02T10:00:00|2026-11-02T11:00:00|n1|gres/gpu=two\n' \
  "tres.txt:2: field 'AllocTRES': 'gres/gpu=two': expected a GPU count (gres/gpu=N)"
bad hosts.txt "$H"$'\n1|ml|gpu|COMPLETED|2026-11-02T10:00:00|2026-11-02T10:00:00|2026-11-02T11:00:00|n[3-1]|gres/gpu=1\n' \
  "hosts.txt:2: field 'NodeList': hostlist 'n[3-1]': range '3-1' ends below its start"
bad back.txt "$H"$'\n7|ml|gpu|REQUEUED|2026-11-02T10:00:00|2026-11-02T10:00:00|2026-11-02T11:00:00|n1|gres/gpu=1\n7|ml|gpu|COMPLETED|2026-11-02T10:30:00|2026-11-02T10:30:00|2026-11-02T12:00:00|n1|gres/gpu=1\n' \
  "back.txt:3: job 7: Start 2026-11-02T10:30:00Z is before the previous segment's End 2026-11-02T11:00:00Z"
bad nogpu.txt "$H"$'\n1|ml|cpu|COMPLETED|2026-11-02T10:00:00|2026-11-02T10:00:00|2026-11-02T11:00:00|n1|cpu=4\n' \
  "nogpu.txt: no job with GPUs (allocated TRES without gres/gpu: is AccountingStorageTRES=gres/gpu set in slurm.conf?)"
bad notjson.json '{"jobs": [' "notjson.json: not valid JSON"
bad notime.json '{"jobs": [{"job_id": 5, "account": "ml", "partition": "gpu", "state": {"current": "COMPLETED"}}]}' \
  "notime.json: jobs[0]: missing field 'time'"
bad badstart.json '{"jobs": [{"job_id": 5, "account": "ml", "partition": "gpu", "state": {"current": "COMPLETED"}, "time": {"submission": 1793613600, "start": "soon"}}]}' \
  "badstart.json: jobs[0].time.start: expected an integer, got"
bad fmt.txt "$H" "--format: expected auto, json or parsable2, got 'csv'" --format csv
# Cut short, run without -D, in a local time zone: refused, naming the file and the line.
bad cut.txt "$H"$'\n1|ml|gpu|COMPLETED|2026-11-02T10:00:00|2026-11-02T10:00:00|2026-11-02T11:00:00|n1|gres/gpu=1' \
  "cut.txt:2: the last line has no line end: the output looks cut short"
bad nodup.txt "$H|Restarts"$'\n7|ml|gpu|COMPLETED|2026-11-02T10:30:00|2026-11-02T10:30:00|2026-11-02T12:00:00|n1|gres/gpu=1|1\n' \
  "nodup.txt:2: job 7 was requeued 1 times (Restarts) but has 1 record(s): run sacct with -D (--duplicates)"
# The same check in JSON (restart_cnt, Slurm 23.02+): job 7 requeued twice, one record.
bad nodup.json '{"jobs": [{"job_id": 7, "account": "ml", "partition": "gpu", "state": {"current": "COMPLETED"}, "restart_cnt": 2, "time": {"submission": 1793613600, "start": 1793613600, "end": 1793617200}, "nodes": "n1", "tres": {"allocated": [{"type": "gres", "name": "gpu", "count": 1}]}}]}' \
  "nodup.json: jobs[0]: job 7 was requeued 2 times (restart_cnt) but has 1 record(s): run sacct with -D (--duplicates)"
ONE="$H"$'\n1|ml|gpu|COMPLETED|2026-11-02T10:00:00|2026-11-02T10:00:00|2026-11-02T11:00:00|n1|gres/gpu=2\n'
# Without a restart count nothing can tell whether sacct ran with -D: read, and said on stderr
# (and in --json's notes); with Restarts (0: never requeued) nothing is said.
printf '%s' "$ONE" > "$tmp/norestarts.txt"
"$bin" goodput import-slurm "$tmp/norestarts.txt" --by run --json > "$tmp/nr.json" 2> "$tmp/nr.err"
check "no restart count: read, and the note on stderr and in --json" "[ $? -eq 0 ] && grep -q '^no restart count in the input (sacct.s Restarts field; restart_cnt in the JSON of Slurm 23.02+): requeued segments missing from it (sacct without -D) cannot be detected; add Restarts to --format$' '$tmp/nr.err' && grep -q 'no restart count in the input' '$tmp/nr.json'"
printf '%s\n' "$H|Restarts" '1|ml|gpu|COMPLETED|2026-11-02T10:00:00|2026-11-02T10:00:00|2026-11-02T11:00:00|n1|gres/gpu=2|0' > "$tmp/withrestarts.txt"
"$bin" goodput import-slurm "$tmp/withrestarts.txt" --by run > /dev/null 2> "$tmp/wr.err"
check "with Restarts: no such note" "[ $? -eq 0 ] && ! grep -q 'no restart count' '$tmp/wr.err'"
TZ=America/New_York bad localtz.txt "$ONE" \
  "localtz.txt:2: field 'Submit': a time without a zone, and this machine's local time zone is not UTC (UTC-05:00)"
bad badzone.txt "$ONE" "--timezone 'Mars/Base': no such zone" --timezone Mars/Base
# ... and read when --timezone names the zone: 10:00 in New York (EST) is 15:00 UTC; +05:00 gives
# 05:00 UTC; 2 GPUs x 1 h = 2.0 GPU-h held either way.
printf '%s' "$ONE" > "$tmp/one.txt"
TZ=America/New_York "$bin" goodput import-slurm "$tmp/one.txt" --by run --json --timezone America/New_York > "$tmp/ny.json" 2>/dev/null
check "--timezone America/New_York: 10:00 EST is 15:00 UTC" "grep -q '\"start\": \"2026-11-02T15:00:00Z\"' '$tmp/ny.json' && grep -q '\"allocated_gpu_hours\": 2.0' '$tmp/ny.json'"
TZ=America/New_York "$bin" goodput import-slurm "$tmp/one.txt" --by run --json --timezone +05:00 > "$tmp/p5.json" 2>/dev/null
check "--timezone +05:00: 10:00 is 05:00 UTC" "grep -q '\"start\": \"2026-11-02T05:00:00Z\"' '$tmp/p5.json'"
check "Unix seconds need no zone" "printf '%s\n' '$H' '1|ml|gpu|COMPLETED|1793613600|1793613600|1793617200|n1|gres/gpu=2' > '$tmp/unix.txt' && TZ=America/New_York '$bin' goodput import-slurm '$tmp/unix.txt' > /dev/null 2>&1"

# Job arrays and heterogeneous jobs. A pending array 68_[0-5] asking 1 GPU each is 6 runs: from
# 10:00 to --end 11:00, 6 x 1 GPU x 1 h = 6.0 GPU-h waiting (the record as one run gave 1.0).
# Het job 80: components 80+0 (4 GPUs) and 80+1 (2 GPUs), 10:00:10-10:10:10: 2400 and 1200 GPU-s.
printf '%s\n' "$H|ReqTRES" '68_[0-5]|ml|gpu|PENDING|2026-11-02T10:00:00|Unknown|Unknown|None assigned||gres/gpu=1' \
  '69_[1,3-4%2]|ml|gpu|PENDING|2026-11-02T10:30:00|Unknown|Unknown|None assigned||gres/gpu=2' \
  '80+0|ml|gpu|COMPLETED|2026-11-02T10:00:00|2026-11-02T10:00:10|2026-11-02T10:10:10|n1|gres/gpu=4|gres/gpu=4' \
  '80+1|ml|gpu|COMPLETED|2026-11-02T10:00:00|2026-11-02T10:00:10|2026-11-02T10:10:10|n2|gres/gpu=2|gres/gpu=2' > "$tmp/arr.txt"
"$bin" goodput import-slurm "$tmp/arr.txt" --by run --json --end 2026-11-02T11:00:00Z > "$tmp/arr.json" 2>/dev/null
check "arrays: one run per element, het components each their own" "python3 -c \"
import json; d = json.load(open('$tmp/arr.json'))
got = {r['run']: (round(r['allocated_gpu_hours']*3600), round(r['waiting_gpu_hours']*3600)) for r in d['rows']}
want = {f'68_{k}': (0, 3600) for k in range(6)}
want.update({f'69_{k}': (0, 3600) for k in (1, 3, 4)})
want.update({'80+0': (2400, 40), '80+1': (1200, 20)})
assert got == want, got
assert round(d['total']['waiting_gpu_hours'] * 3600) == 6 * 3600 + 3 * 3600 + 60, d['total']\""
"$bin" goodput import-slurm "$tmp/arr.txt" --by run --end now > "$tmp/now.txt" 2>/dev/null
check "--end now: counted up to the current time" "[ $? -eq 0 ] && grep -q '^68_5 ' '$tmp/now.txt'"

"$bin" goodput import-slurm "$tmp/missing.json" > "$tmp/out" 2> "$tmp/err"
check "missing file: exit 2 and says so" "[ $? -eq 2 ] && grep -q 'missing.json: cannot open' '$tmp/err'"

# --events-out naming the input: exit 2, the input untouched (it was replaced by the events).
cp "$fx/site-sacct.txt" "$tmp/in.txt"
imp "$tmp/in.txt" --timezone UTC --events-out "$tmp/in.txt" > /dev/null 2> "$tmp/err"
rc=$?
check "--events-out = input exits 2 (got $rc), input unchanged" \
  '[ "$rc" -eq 2 ] && cmp -s "$fx/site-sacct.txt" "$tmp/in.txt"'
check "--events-out = input: message" \
  "grep -qF -e \"--events-out $tmp/in.txt is the input $tmp/in.txt; write to another file (it would replace the input)\" '$tmp/err'"

echo "import_slurm: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
