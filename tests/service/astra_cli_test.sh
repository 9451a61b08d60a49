#!/usr/bin/env bash
# usage: astra_cli_test.sh ASTRAEUS_BINARY ASTRA_BINARY
# The page's three CLI commands (`astra astraeus goodput --by run --days 7`, `--weeks 8 --by pool`,
# `--run llm`) and `astra runs submit|list|show|stop` against a live `astraeus serve` on
# 127.0.0.1: the documented table shapes (rows add up), the exit codes (0 ok, 2 usage or 4xx
# with the server's message, 1 unreachable) and --json as the server's JSON.
# Skipped (exit 77) without curl or jq. Bounded: about 10 s.
set -u
ASTRAEUS=$1; ASTRA=$2
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 2, "gpus": 8}]},
           {"name": "small", "machines": [{"count": 1, "gpus": 4}]}],
 "time_scale": 60}
JSON
start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml > /dev/null || exit 1
export ASTRALYX_API=$API
export ASTRALYX_TOKEN; ASTRALYX_TOKEN=$(new_token --workspace ml)

# `astra --version` is astraeus's (it said "A subcommand is required").
check "astra --version = astraeus --version ($("$ASTRA" --version 2>&1))" \
  '[ -n "$("$ASTRAEUS" --version)" ] && [ "$("$ASTRA" --version)" = "$("$ASTRAEUS" --version)" ]'

# Runs: submit two (llm fills the default pool; sweep-7 waits behind it), list, show.
"$ASTRA" runs submit llm --workers 2 --gpus-per-worker 8 --command "python train.py" > "$WORK/submit.txt"
check "submit exits 0" '[ $? = 0 ]'
check "submit prints the run" "grep -q '^Name: *llm\$' '$WORK/submit.txt' && grep -q '^Workers: *2 x 8 GPUs\$' '$WORK/submit.txt'"
"$ASTRA" runs submit sweep-7 --workers 1 --gpus-per-worker 4 --pool small --time-limit 7200 > /dev/null
check "second submit exits 0" '[ $? = 0 ]'
"$ASTRA" runs submit llm --workers 1 --gpus-per-worker 1 > /dev/null 2> "$WORK/dup.err"
check "duplicate name: exit 2" '[ $? = 2 ]'
check "duplicate name: the server's message" "grep -q '^astra: HTTP 409: ' '$WORK/dup.err'"
"$ASTRA" runs submit huge --workers 4 --gpus-per-worker 8 > /dev/null 2> "$WORK/huge.err"
check "gang larger than the pool: exit 2 with a message" "[ \$? = 2 ] && grep -q 'no placement for 4 x 8 GPUs' '$WORK/huge.err'"
sleep 4   # four service minutes

"$ASTRA" runs list > "$WORK/list.txt"
check "runs list exits 0" '[ $? = 0 ]'
check "runs list header" "head -1 '$WORK/list.txt' | grep -Eq '^NAME +WORKSPACE +POOL +WORKERS +STATE +SUBMITTED +REASON\$'"
check "runs list: newest first" "[ \"\$(awk 'NR>1 {print \$1}' '$WORK/list.txt' | tr '\n' ' ')\" = 'sweep-7 llm ' ]"
check "runs list: llm 2 x 8 in ml" "grep -Eq '^llm +ml +default +2 x 8 +(starting|running) ' '$WORK/list.txt'"
"$ASTRA" runs show llm > "$WORK/show.txt"
check "runs show: workers table" "grep -Eq '^WORKER +STATE +MACHINE +ATTEMPT\$' '$WORK/show.txt' && [ \$(grep -Ec '^[01] +(starting|running) +default-[12] +1\$' '$WORK/show.txt') = 2 ]"
"$ASTRA" runs show nope > /dev/null 2> "$WORK/nope.err"
check "runs show unknown: exit 2, 404 message" "[ \$? = 2 ] && grep -q '^astra: HTTP 404: ' '$WORK/nope.err'"
"$ASTRA" runs list --json > "$WORK/list.json"
check "runs list --json is the server's JSON" \
  "[ \"\$(jq -r '[.runs[].name] | join(\" \")' '$WORK/list.json')\" = 'sweep-7 llm' ]"

# table_ok FILE KEY NROWS: the page's shape: "GPU-hours", the header with KEY, NROWS rows, TOTAL,
# a blank line, the footer; every row's HELD = USED + the six held columns (in tenths) and
# GOODPUT = 100 x used / held as shown, to the rounding of the shown tenths ("-" only when
# HELD is 0).
table_ok() {
  awk -v key="$2" -v n="$3" '
    NR == 1 && $0 != "GPU-hours" { bad = 1 }
    NR == 2 && $0 != sprintf("%-28s %s", key, "    HELD     USED GOODPUT    IDLE STALLED   START RESTART FAILURE PREEMPT WAITING") { bad = 1 }
    NR >= 3 && NR <= 3 + n {
      if (NR == 3 + n && substr($0, 1, 6) != "TOTAL ") bad = 1
      if (length($0) != 110 || split(substr($0, 30), f, " ") != 10) { bad = 1; next }
      held = int(f[1] * 10 + 0.5); used = int(f[2] * 10 + 0.5); sum = used
      for (i = 4; i <= 9; i++) sum += int(f[i] * 10 + 0.5)
      if (held != sum) bad = 1
      if (f[3] == "-") { if (held != 0) bad = 1 }
      else if (held > 0) {   # USED within 0.1 and HELD within 0.05 GPU-hour of the exact values
        pct = f[3] + 0
        lo = 100 * (used > 1 ? used - 1 : 0) / (held + 0.5) - 1
        hi = 100 * (used + 1) / (held > 0.6 ? held - 0.5 : 0.01) + 1
        if (pct < lo || pct > hi) bad = 1
      }
    }
    NR == 4 + n && $0 != "" { bad = 1 }
    NR == 5 + n && index($0, "USED = productive") != 1 { bad = 1 }
    END { if (NR != 5 + n) bad = 1; print(bad ? "bad" : "ok") }' "$1"
}

"$ASTRA" astraeus goodput --by run --days 7 > "$WORK/by_run.txt"
check "goodput --by run --days 7 exits 0" '[ $? = 0 ]'
check "goodput --by run: the page's table, 2 runs, rows add up" "[ \"\$(table_ok '$WORK/by_run.txt' RUN 2)\" = ok ]"
check "goodput --by run: llm and sweep-7 rows" "grep -q '^llm ' '$WORK/by_run.txt' && grep -q '^sweep-7 ' '$WORK/by_run.txt'"
check "goodput --by run: llm held GPU time" "awk '/^llm / { exit !(\$2 > 0) }' '$WORK/by_run.txt'"

"$ASTRA" astraeus goodput --weeks 8 --by pool > "$WORK/weeks.txt"
check "goodput --weeks 8 exits 0" '[ $? = 0 ]'
check "--weeks 8: 9 blocks (8 complete weeks + the current one)" \
  "[ \$(grep -Ec '^Week [0-9]{4}-W[0-9]{2} \\(from [0-9]{4}-[0-9]{2}-[0-9]{2}\\)\$' '$WORK/weeks.txt') = 9 ]"
check "--weeks 8: the current week is 2026-W48 (from 2026-11-23) or later" \
  "tail -n +1 '$WORK/weeks.txt' | grep -E '^Week ' | tail -1 | grep -Eq '^Week 20[0-9]{2}-W[0-9]{2} '"
check "--weeks 8: each block has the POOL header" \
  "[ \$(grep -Ec '^POOL +HELD +USED GOODPUT' '$WORK/weeks.txt') = 9 ]"
# The current week's block: the last one, with rows for the two pools (or the one before, if
# the service's week, 60x faster, turned during the test).
awk '/^Week /{n++} {if (n==9 && !/^Week /) print}' "$WORK/weeks.txt" > "$WORK/week_now.txt"
awk '/^Week /{n++} {if (n==8 && !/^Week /) print}' "$WORK/weeks.txt" | sed '$d' > "$WORK/week_before.txt"
check "--weeks 8: the current week's table, 2 pools, rows add up" \
  "[ \"\$(table_ok '$WORK/week_now.txt' POOL 2)\" = ok ] || [ \"\$(table_ok '$WORK/week_before.txt' POOL 2)\" = ok ]"

"$ASTRA" astraeus goodput --run llm > "$WORK/run.txt"
check "goodput --run llm exits 0" '[ $? = 0 ]'
check "goodput --run llm: one row and TOTAL" "[ \"\$(table_ok '$WORK/run.txt' RUN 1)\" = ok ]"
check "goodput --run llm: TOTAL equals the row" \
  "[ \"\$(sed -n 3p '$WORK/run.txt' | cut -c30-)\" = \"\$(sed -n 4p '$WORK/run.txt' | cut -c30-)\" ]"

# --json is the server's JSON as is (same keys as a direct call).
"$ASTRA" astraeus goodput --run llm --json > "$WORK/run.json"
curl -sS "$API/runs/llm/goodput" -H "Authorization: Bearer $ASTRALYX_TOKEN" > "$WORK/run.curl.json"
check "--run --json: the ledger's keys, as curl gets them" \
  "[ \"\$(jq -c keys '$WORK/run.json')\" = \"\$(jq -c keys '$WORK/run.curl.json')\" ] && [ \"\$(jq -r '.run + \" \" + (.held_gpu_hours | type)' '$WORK/run.json')\" = 'llm object' ]"

# Stop: the run winds down.
"$ASTRA" runs stop llm > "$WORK/stop.txt"
check "runs stop exits 0" '[ $? = 0 ]'
check "runs stop: stopping or stopped, by its owner" "grep -Eq '^State: +(stopping|stopped) \\(by its owner\\)\$' '$WORK/stop.txt'"

# Errors: usage, bad token, unreachable.
"$ASTRA" astraeus goodput --by team > /dev/null 2>&1
check "bad --by: exit 2" '[ $? = 2 ]'
ASTRALYX_TOKEN=astx_not_a_token "$ASTRA" runs list > /dev/null 2> "$WORK/401.err"
check "bad token: exit 2 with the server's message" "[ \$? = 2 ] && grep -q '^astra: HTTP 401: ' '$WORK/401.err'"
# A run name in two workspaces is ambiguous for an org-admin: the message says both ways to pick.
admin workspace add cv > /dev/null
ASTRALYX_TOKEN=$(new_token --workspace cv) "$ASTRA" runs submit llm --workers 1 --gpus-per-worker 8 > /dev/null
ADM=$(new_token --org-admin)
ASTRALYX_TOKEN=$ADM "$ASTRA" runs show llm > /dev/null 2> "$WORK/amb.err"
check "ambiguous run: exit 2, names ?workspace=NAME and astra's --workspace NAME" \
  "[ \$? = 2 ] && grep -qF \"run name 'llm' is in several workspaces: add ?workspace=NAME (astra: --workspace NAME)\" '$WORK/amb.err'"
ASTRALYX_TOKEN=$ADM "$ASTRA" runs stop llm --workspace cv > /dev/null
check "with --workspace: the run is found (stopped)" '[ $? = 0 ]'
env -u ASTRALYX_API "$ASTRA" runs list > /dev/null 2> "$WORK/noapi.err"
check "ASTRALYX_API unset: exit 2" "[ \$? = 2 ] && grep -q 'ASTRALYX_API is not set' '$WORK/noapi.err'"
# Logs of a run stopped before it ever started: it ended without starting (not "not started
# yet"), and --follow does not wait for it (sweep-7 holds the small pool's 4 GPUs meanwhile).
"$ASTRA" runs submit never --pool small --workers 1 --gpus-per-worker 4 > /dev/null
check "never waits behind sweep-7" '[ "$("$ASTRA" runs show never --json | jq -r ".state + \" \" + (.attempts|tostring)")" = "pending 0" ]'
"$ASTRA" runs stop never > /dev/null
"$ASTRA" runs logs never > /dev/null 2> "$WORK/never.err"
check "logs of a run stopped before it started: exit 2, it ended without starting" \
  "[ \$? = 2 ] && grep -qF \"astra: HTTP 404: run 'never' ended (stopped) without starting: no logs\" '$WORK/never.err'"
timeout 10 "$ASTRA" runs logs never --follow > /dev/null 2> "$WORK/never_follow.err"
check "logs --follow on it ends at once (exit 2, not the timeout's 124)" \
  "[ \$? = 2 ] && grep -qF 'ended (stopped) without starting' '$WORK/never_follow.err'"
# Stopping it again: it says the run already ended and how (it printed the run as if stopped
# now), exit 0 (it is not running, as asked; docs/api.md). It was stopped while pending: the
# cause is its history's "stopped".
"$ASTRA" runs stop never > "$WORK/again.txt" 2>&1
check "stop of an ended run: exit 0" '[ $? = 0 ]'
check "stop of an ended run says so: $(cat "$WORK/again.txt")" \
  "grep -qxF \"run 'never' already ended (stopped, by its owner): nothing to stop\" '$WORK/again.txt'"
stop_all; SERVER_PID=""
"$ASTRA" runs list > /dev/null 2> "$WORK/down.err"
check "server down: exit 1, cannot reach" "[ \$? = 1 ] && grep -q '^astra: cannot reach the API at ' '$WORK/down.err'"

echo "astra_cli_test: $passes passed, $fails failed"
[ $fails = 0 ]
