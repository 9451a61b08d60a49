#!/usr/bin/env bash
# `astraeus goodput replay`: the page's table on a hand-computed fixture, --by, --json, --run,
# --weeks, --start/--end, stderr notes (samples, stragglers, alerts), and bad input (exit 2,
# FILE:LINE on stderr, nothing on stdout).
# usage: goodput_cli_test.sh ASTRAEUS_BINARY SOURCE_DIR
set -u
bin=$1; src=$2
fx=$src/tests/fixtures/goodput
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { if eval "$2"; then passes=$((passes+1)); else echo "FAIL: $1"; fails=$((fails+1)); fi; }

# 1. The table by run, byte for byte. two_runs.jsonl (a util line at the start of every running
# minute: each decides its minute, the log's sample period being 60 s), by hand (GPU-seconds):
#   llm (4 GPUs): waits 10:00-10:02 (480 not held), starts -10:05 (720), busy -10:20 (3600),
#     fails and holds -10:23 (720 failure), waits -10:33 (2400 failure, not held), restarts
#     -10:36 (720), busy -10:50 (3360): held 9120 = 2.5 GPU-h, used 6960 = 1.9, 76 %,
#     START/RESTART/FAILURE 720 = 0.2 each, WAITING 2880 = 0.8.
#   sweep-7 (2 GPUs): running at 4.9 % 10:00-10:30 (3600 idle = 1.0), preempted: stopping
#     -10:31 (120 held), waiting -10:50 (2280 not held = 0.6): held 3720 = 1.0, 0 %.
#   TOTAL: held 12840 = 3.6 (35.67 tenths; the columns' floors add to 35, the last tenth goes to
#     the largest remainder, USED's 120 s (tied with PREEMPT's, column order first): 2.0), 54 %,
#     WAITING 5160 = 1.4.
"$bin" goodput replay "$fx/two_runs.jsonl" --by run > "$tmp/run.txt" 2> "$tmp/run.err"
check "by run exits 0" '[ $? -eq 0 ]'
check "by run: the page's table" "cmp -s '$tmp/run.txt' '$fx/two_runs.by_run.txt'"
check "by run: nothing on stderr" '[ ! -s "$tmp/run.err" ]'
"$bin" goodput replay "$fx/two_runs.jsonl" > "$tmp/ws.txt"
check "default by workspace" "grep -q '^WORKSPACE  ' '$tmp/ws.txt' && grep -q '^ml  .* 2.5      1.9     76%' '$tmp/ws.txt' && grep -q '^research  ' '$tmp/ws.txt'"
"$bin" goodput replay "$fx/two_runs.jsonl" --by machine > "$tmp/m.txt"
# m1: starting 720 + busy 3600 + failure 720 = 5040 = 1.4; m2: restart 720 + busy 3360 = 1.1;
# m3: idle 3600 + preemption 120 = 1.0; machines hold no waits.
check "by machine" "grep -q '^m1  *1.4      1.0     71%     0.0     0.0     0.2     0.0     0.2     0.0     0.0$' '$tmp/m.txt' && grep -q '^m2  *1.1      0.9     82%' '$tmp/m.txt' && grep -q '^m3  *1.0      0.0      0%     1.0' '$tmp/m.txt'"
"$bin" goodput replay "$fx/two_runs.jsonl" --by pool > "$tmp/p.txt"
check "by pool" "grep -q '^a100  *3.6      2.0     54%     1.0     0.0     0.2     0.2     0.2     0.0     1.4$' '$tmp/p.txt'"

# 2. --run: one run's ledger since its submission.
"$bin" goodput replay "$fx/two_runs.jsonl" --run sweep-7 > "$tmp/one.txt"
check "--run" "[ \$(grep -c '^sweep-7 ' '$tmp/one.txt') -eq 1 ] && ! grep -q '^llm' '$tmp/one.txt'"

# 3. --json: the REST shape.
"$bin" goodput replay "$fx/two_runs.jsonl" --by run --json > "$tmp/j.json"
check "--json exits 0" '[ $? -eq 0 ]'
if command -v python3 > /dev/null; then
  check "--json values" "python3 - '$tmp/j.json' <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
assert j['by'] == 'run' and j['start'] == '2026-11-02T10:00:00Z' and j['end'] == '2026-11-02T10:50:00Z'
llm, sweep = j['rows']
assert llm['run'] == 'llm' and abs(llm['goodput'] - 6960 / 9120) < 1e-12
assert abs(llm['gpu_hours']['failure'] - 3120 / 3600) < 1e-12      # held 720 + waiting 2400
assert abs(llm['held_gpu_hours']['failure'] - 720 / 3600) < 1e-12
assert abs(sweep['waiting_gpu_hours'] - 2280 / 3600) < 1e-12
assert abs(j['total']['lost_gpu_hours'] - (12840 + 5160 - 6960) / 3600) < 1e-12
assert j['alerts'] == [] and j['runs_with_straggler'] == [] and j['invalid_utilization_samples'] == 0
EOF"
  "$bin" goodput replay "$fx/two_runs.jsonl" --run llm --json > "$tmp/r.json"
  check "--run --json" "python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j[\"run\"]==\"llm\" and abs(j[\"allocated_gpu_hours\"]-9120/3600)<1e-12' '$tmp/r.json'"
fi

# 4. --weeks: one block per ISO week, the current one last (2026-11-02 is a Monday, W45).
"$bin" goodput replay "$fx/two_runs.jsonl" --weeks 1 --by run > "$tmp/w.txt"
check "--weeks headers" "grep -q '^Week 2026-W44 (from 2026-10-26)$' '$tmp/w.txt' && grep -q '^Week 2026-W45 (from 2026-11-02)$' '$tmp/w.txt'"
check "--weeks: this week's rows" "[ \$(grep -c '^llm ' '$tmp/w.txt') -eq 1 ] && [ \$(grep -c '^TOTAL ' '$tmp/w.txt') -eq 2 ]"

# 5. --end: runs still going are counted to it; later events are not applied. At 10:10, llm
# has waited 2 min, started 3 min on 4 GPUs and run busy 5 (480 + 720 + 1200 GPU-s):
# held 1920 = 0.5 GPU-h, used 1200 = 0.3, goodput 62.5 % shown 63 %.
"$bin" goodput replay "$fx/two_runs.jsonl" --by run --end 2026-11-02T10:10:00Z > "$tmp/e.txt"
check "--end" "grep -q '^llm  *0.5      0.3     63%     0.0     0.0     0.2     0.0     0.0     0.0     0.1$' '$tmp/e.txt'"
"$bin" goodput replay "$fx/two_runs.jsonl" --by run --start 1793613600 --end 1793616600 > "$tmp/e2.txt"
check "Unix seconds for --start/--end" "cmp -s '$tmp/e2.txt' '$fx/two_runs.by_run.txt'"

# 6. stdin, notes on stderr only. samples.jsonl: 2 GPUs running 10:00-10:05; a sample of
# invalid values only at 10:00:30 (decides nothing), one valid 50 % at 10:01:30 (decides
# 10:01:30-10:03:30, 2 periods of 60 s): productive 120 s x 2 = 240 = 0.1 GPU-h (40 % of 600);
# the other 180 s x 2 = 360 have neither sample nor progress: idle, unmeasured, 0.1 GPU-h.
"$bin" goodput replay - --by run < "$fx/samples.jsonl" > "$tmp/s.txt" 2> "$tmp/s.err"
check "stdin" '[ $? -eq 0 ] && grep -q "^r  *0.2      0.1     40%" "$tmp/s.txt"'
check "invalid samples on stderr" "grep -q '^invalid utilization samples (rejected): 3, at <stdin>:4, <stdin>:5$' '$tmp/s.err' && grep -q '^utilization not measured for 0.1 GPU-h (counted idle)$' '$tmp/s.err'"
check "the unmeasured note under the table" "grep -q '^utilization not measured for 0.1 GPU-h (counted idle)$' '$tmp/s.txt'"
check "notes not on stdout" "! grep -q 'invalid' '$tmp/s.txt'"
# 60 GPU-s unmeasured (1 GPU running 60 s, no sample) is 0.017 GPU-h: shown 0.0 it read as
# "nothing unmeasured" (the note said "0.0 GPU-h"): no note on stdout or stderr.
printf '%s\n' '{"t":1793613600,"event":"submit","run":"r","workspace":"ml","pool":"a100","gpus":1}' \
  '{"t":1793613600,"event":"place","run":"r","worker":0,"machine":"m1"}' \
  '{"t":1793613600,"event":"start","run":"r","worker":0}' '{"t":1793613660,"event":"end","run":"r"}' > "$tmp/tiny.jsonl"
"$bin" goodput replay "$tmp/tiny.jsonl" --by run > "$tmp/tiny.txt" 2> "$tmp/tiny.err"
check "under 0.05 GPU-h unmeasured: no note" "[ \$? = 0 ] && grep -q '^r  *0.0 ' '$tmp/tiny.txt' && ! grep -q 'not measured' '$tmp/tiny.txt' '$tmp/tiny.err'"
"$bin" goodput replay "$fx/straggler.jsonl" > /dev/null 2> "$tmp/st.err"
check "stragglers on stderr" "grep -q '^runs with a straggler at 2026-11-02T10:12:00Z: llm (workers 2)$' '$tmp/st.err'"

# 7. goodput_drop in a generated scenario: 4 GPUs busy 24 h, idle 1 h, busy 1 h. It fires at
# T0 + 25 h (0 % against 100 %, 4 GPU-hours held) and resolves at T0 + 26 h.
awk 'BEGIN {
  t0 = 1793613600;
  print "{\"t\":" t0 ",\"event\":\"submit\",\"run\":\"llm\",\"workspace\":\"ml\",\"pool\":\"a100\",\"gpus\":4}";
  print "{\"t\":" t0 ",\"event\":\"place\",\"run\":\"llm\",\"machine\":\"m1\"}";
  print "{\"t\":" t0 ",\"event\":\"start\",\"run\":\"llm\"}";
  for (m = 0; m < 26 * 60; m++) {
    pct = (m >= 24 * 60 && m < 25 * 60) ? 0 : 90;
    print "{\"t\":" (t0 + m * 60) ",\"event\":\"util\",\"run\":\"llm\",\"worker\":0,\"gpus_pct\":[" pct "]}";
  }
  print "{\"t\":" (t0 + 26 * 3600) ",\"event\":\"end\",\"run\":\"llm\"}";
}' > "$tmp/drop.jsonl"
"$bin" goodput replay "$tmp/drop.jsonl" > /dev/null 2> "$tmp/d.err"
check "goodput_drop fires" "grep -q \"^2026-11-03T11:00:00Z alert goodput_drop workspace 'ml' firing (goodput 0% over the last hour, 100% over the 24 hours before)$\" '$tmp/d.err' && grep -q \"^2026-11-03T11:00:00Z alert goodput_drop pool 'a100' firing\" '$tmp/d.err'"
check "goodput_drop resolves" "grep -q \"^2026-11-03T12:00:00Z alert goodput_drop workspace 'ml' resolved\" '$tmp/d.err' && [ \$(wc -l < '$tmp/d.err') -eq 4 ]"
"$bin" goodput replay "$tmp/drop.jsonl" --json 2> /dev/null > "$tmp/d.json"
check "alerts in --json" "grep -q '\"name\": \"goodput_drop\"' '$tmp/d.json' && grep -q '\"state\": \"resolved\"' '$tmp/d.json'"
if command -v python3 > /dev/null; then
  # The keys and meanings of GET /v1/alerts (name, scope, target, state, since, value), then
  # the extras: workspace 'ml' fires at T0 + 25 h = 2026-11-03T11:00:00Z with 0 % against 100 %.
  check "--json alerts: the service's keys" "python3 - '$tmp/d.json' <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))['alerts']
assert len(a) == 4, a
f = a[0]
assert set(f) == {'name', 'scope', 'target', 'state', 'since', 'value', 'previous_day_goodput'}, list(f)
assert f['name'] == 'goodput_drop' and f['scope'] == 'workspace' and f['target'] == 'ml'
assert f['state'] == 'firing' and f['since'] == '2026-11-03T11:00:00Z' and f['value'] == 0
assert f['previous_day_goodput'] == 1 and 'at' not in f and 'alert' not in f
assert a[1]['scope'] == 'pool' and a[1]['target'] == 'a100' and a[1]['state'] == 'firing'
assert {x['since'] for x in a[2:]} == {'2026-11-03T12:00:00Z'} and {x['state'] for x in a[2:]} == {'resolved'}
EOF"
fi

# 8. Bad input: exit 2, FILE:LINE and what was expected on stderr, nothing on stdout.
"$bin" goodput replay "$fx/bad_order.jsonl" > "$tmp/b.out" 2> "$tmp/b.err"
check "out of order exits 2" '[ $? -eq 2 ]'
check "out of order message" "grep -q 'bad_order.jsonl:3: time 2026-11-02T10:04:59Z is before the previous event.s time 2026-11-02T10:05:00Z (events must be in time order)' '$tmp/b.err'"
check "out of order: nothing on stdout" '[ ! -s "$tmp/b.out" ]'
"$bin" goodput replay "$fx/bad_field.jsonl" --json > "$tmp/b2.out" 2> "$tmp/b2.err"
check "bad field exits 2, line 3 (a blank line counts)" "[ \$? -eq 2 ] && grep -q \"bad_field.jsonl:3: field 'worker': expected a worker index 0..1048575, got \\\"0\\\"\" '$tmp/b2.err' && [ ! -s '$tmp/b2.out' ]"
"$bin" goodput replay "$tmp/no-such.jsonl" > "$tmp/b3.out" 2> "$tmp/b3.err"
check "missing file exits 2" "[ \$? -eq 2 ] && grep -q 'no-such.jsonl: cannot open' '$tmp/b3.err' && [ ! -s '$tmp/b3.out' ]"
"$bin" goodput replay "$fx/two_runs.jsonl" --start 2025-09-28T10:49:59Z > "$tmp/b4.out" 2> "$tmp/b4.err"
check "401-day period exits 2" "[ \$? -eq 2 ] && grep -q 'a period is at most 400 days' '$tmp/b4.err' && [ ! -s '$tmp/b4.out' ]"
"$bin" goodput replay "$fx/two_runs.jsonl" --start 2025-09-28T10:50:00Z > /dev/null 2>&1
check "400-day period is fine" '[ $? -eq 0 ]'
"$bin" goodput replay "$fx/two_runs.jsonl" --start 2030-01-01T00:00:00Z > "$tmp/b6.out" 2> "$tmp/b6.err"
check "a start after the defaulted end exits 2 and says the end defaulted to the last event" \
  "[ \$? -eq 2 ] && grep -qF \"period 2030-01-01T00:00:00Z .. 2026-11-02T10:50:00Z: the period's start is after its end (--end was not given: it defaults to the last event, 2026-11-02T10:50:00Z; give --end)\" '$tmp/b6.err' && [ ! -s '$tmp/b6.out' ]"
"$bin" goodput replay "$fx/two_runs.jsonl" --by rack > "$tmp/b5.out" 2> "$tmp/b5.err"
check "bad --by exits 2" "[ \$? -eq 2 ] && grep -q 'expected workspace, run, machine or pool' '$tmp/b5.err' && [ ! -s '$tmp/b5.out' ]"
"$bin" goodput replay "$fx/two_runs.jsonl" --run nope > "$tmp/b6.out" 2> "$tmp/b6.err"
check "unknown --run exits 2" "[ \$? -eq 2 ] && grep -q \"no run 'nope'\" '$tmp/b6.err' && [ ! -s '$tmp/b6.out' ]"
"$bin" goodput replay "$fx/two_runs.jsonl" --end tomorrow > "$tmp/b7.out" 2> "$tmp/b7.err"
check "bad --end exits 2" "[ \$? -eq 2 ] && grep -q 'expected an RFC 3339 time' '$tmp/b7.err' && [ ! -s '$tmp/b7.out' ]"
# Lines that crashed or ran for minutes (every nlohmann exception is a FILE:LINE message, exit
# 2, nothing on stdout; a run asks for at most 2^20 GPUs), duplicate keys, too many samples,
# an empty log.
sub='{"t":1793613600,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":2}'
bad_line() {  # NAME LOG-TEXT EXPECTED-STDERR-LINE
  printf '%s\n' "$2" > "$tmp/bad.jsonl"
  timeout 20 "$bin" goodput replay "$tmp/bad.jsonl" > "$tmp/bl.out" 2> "$tmp/bl.err"
  local rc=$?
  check "$1" "[ $rc -eq 2 ] && [ ! -s '$tmp/bl.out' ] && [ \"\$(cat '$tmp/bl.err')\" = \"astraeus goodput replay: $3\" ]"
}
ovf="a number out of range (number overflow parsing '1e400'; numbers are at most 1.7976931348623157e308)"
bad_line "1e400 in gpus_pct" "$sub
{\"t\":1793613600,\"event\":\"util\",\"run\":\"r\",\"worker\":0,\"gpus_pct\":[1e400,50]}" "$tmp/bad.jsonl:2: field 'gpus_pct': $ovf"
bad_line "1e400 gpus" '{"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":1e400}' "$tmp/bad.jsonl:1: field 'gpus': $ovf"
bad_line "1e999 busy_pct" '{"event":"config","busy_pct":1e999}' "$tmp/bad.jsonl:1: field 'busy_pct': a number out of range (number overflow parsing '1e999'; numbers are at most 1.7976931348623157e308)"
bad_line "a float gpus" '{"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":2.5}' "$tmp/bad.jsonl:1: field 'gpus': expected GPUs per worker, an integer 1..1048576, got 2.5"
bad_line "10^6 x 10^6 GPUs" '{"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","workers":1000000,"gpus":1000000}' "$tmp/bad.jsonl:1: a run asks for at most 1048576 GPUs: workers x gpus = 1000000 x 1000000 = 1000000000000 is over 1048576"
bad_line "2*10^9 workers: the real bound" '{"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","workers":2000000000,"gpus":1}' "$tmp/bad.jsonl:1: field 'workers': expected the gang size, an integer 1..1048576, got 2000000000"
bad_line "duplicate key" '{"t":1,"event":"submit","run":"r","workspace":"w","pool":"p","gpus":1,"gpus":2}' "$tmp/bad.jsonl:1: duplicate key 'gpus'"
bad_line "3 samples for 2 GPUs" "$sub
{\"t\":1793613600,\"event\":\"util\",\"run\":\"r\",\"worker\":0,\"gpus_pct\":[1,2,3]}" "$tmp/bad.jsonl:2: field 'gpus_pct': 3 values, but run 'r' worker 0 has 2 GPUs (at most one value per GPU)"
bad_line "an empty log" '' "$tmp/bad.jsonl: no events"
bad_line "only a config line" '{"event":"config","busy_pct":5}' "$tmp/bad.jsonl: no events"
: > "$tmp/empty.jsonl"
"$bin" goodput replay "$tmp/empty.jsonl" --weeks 1 > "$tmp/em.out" 2> "$tmp/em.err"
check "an empty log with --weeks: no 1969 week" "[ \$? -eq 2 ] && [ ! -s '$tmp/em.out' ] && ! grep -q 1969 '$tmp/em.err'"
# 1024 x 1024 GPUs = 2^20 is accepted (and quick).
printf '%s\n' '{"t":1793613600,"event":"submit","run":"r","workspace":"w","pool":"p","workers":1024,"gpus":1024}' '{"t":1793617200,"event":"end","run":"r"}' > "$tmp/big.jsonl"
timeout 20 "$bin" goodput replay "$tmp/big.jsonl" > "$tmp/big.out" 2>&1
check "2^20 GPUs accepted" "[ \$? -eq 0 ] && grep -q '^w  ' '$tmp/big.out'"

# 9. Names from the log are escaped on a terminal (ESC, BEL, C1 as astra shows them); a gzip log
# is read; a directory is said to be one.
printf '%s\n' '{"t":1793613600,"event":"submit","run":"r\u001b]0;owned\u0007","workspace":"w\u001b[31m\u009b","pool":"p","gpus":1}' \
  '{"t":1793613600,"event":"place","run":"r\u001b]0;owned\u0007","worker":0,"machine":"m\u0007"}' \
  '{"t":1793613600,"event":"start","run":"r\u001b]0;owned\u0007"}' '{"t":1793617200,"event":"end","run":"r\u001b]0;owned\u0007"}' > "$tmp/esc.jsonl"
for by in run workspace machine; do
  "$bin" goodput replay "$tmp/esc.jsonl" --by $by > "$tmp/esc.$by" 2> "$tmp/esc.$by.err"
  check "escaped names --by $by: exit 0, no ESC, BEL or C1 byte" "[ \$? -eq 0 ] && ! LC_ALL=C grep -q \$'[\\x1b\\x07]\\|\\xc2\\x9b' '$tmp/esc.$by'"
done
check "the run name shown escaped" "grep -qF 'r\\e]0;owned\\x07 ' '$tmp/esc.run'"
check "the workspace name shown escaped" "grep -qF 'w\\e[31m\\x9b ' '$tmp/esc.workspace'"
check "the machine name shown escaped" "grep -qF 'm\\x07 ' '$tmp/esc.machine'"
"$bin" goodput replay "$tmp/esc.jsonl" --run "$(printf 'r\033]0;owned\007')x" > /dev/null 2> "$tmp/esc.err"
check "an unknown --run echoed escaped" "[ \$? -eq 2 ] && grep -qF \"no run 'r\\e]0;owned\\x07x'\" '$tmp/esc.err'"
gzip -c "$fx/two_runs.jsonl" > "$tmp/two_runs.jsonl.gz"
"$bin" goodput replay "$tmp/two_runs.jsonl.gz" --by run > "$tmp/gz.txt" 2> "$tmp/gz.err"
check "a gzip log is read: the same table" "[ \$? -eq 0 ] && cmp -s '$tmp/gz.txt' '$fx/two_runs.by_run.txt'"
head -c 20 "$tmp/two_runs.jsonl.gz" > "$tmp/cut.jsonl.gz"
"$bin" goodput replay "$tmp/cut.jsonl.gz" > /dev/null 2> "$tmp/cut.err"
check "a truncated gzip log: exit 2, said" "[ \$? -eq 2 ] && grep -q 'gzip' '$tmp/cut.err'"
mkdir -p "$tmp/adir"
"$bin" goodput replay "$tmp/adir" > /dev/null 2> "$tmp/dir.err"
check "a directory: exit 2, said" "[ \$? -eq 2 ] && [ \"\$(cat '$tmp/dir.err')\" = \"astraeus goodput replay: $tmp/adir: is a directory (expected a file)\" ]"
"$bin" goodput import-slurm "$tmp/adir" > /dev/null 2> "$tmp/sdir.err"
check "import-slurm, a directory: exit 2, said" "[ \$? -eq 2 ] && grep -qF '$tmp/adir: is a directory (expected a file)' '$tmp/sdir.err'"

"$bin" goodput > /dev/null 2>&1
check "goodput without a subcommand exits 2" '[ $? -eq 2 ]'
"$bin" goodput replay --help > "$tmp/h.txt" 2>&1
check "--help" "[ \$? -eq 0 ] && grep -q 'goodput-events.md' '$tmp/h.txt' && grep -q -- '--stall-timeout' '$tmp/h.txt'"

echo "goodput_cli: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
