#!/usr/bin/env bash
# usage: follow_attempts_test.sh ASTRAEUS_BINARY ASTRA_BINARY
# `astraeus serve --executor local --gpus 2` on 127.0.0.1 (max_failures 3):
#  1. `astra runs logs R --follow` (no --attempt) on a run whose attempts all fail prints every
#     attempt's log in full and in order, a line "--- attempt K ---" before attempts 2 and 3
#     (each attempt read from offset 0, not from where the previous attempt's log ended), and
#     exits 3 (the run failed); with --attempt 2 it prints attempt 2 only and exits 0;
#  2. a working directory that does not exist: the worker's log says so, and does not blame
#     the program ("cannot enter working directory '/nonexistent...'", no "cannot run").
# Skipped (77) without curl or jq. About 10 s.
set -u
ASTRAEUS=$1; ASTRA=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../service/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 2}]}],
 "time_scale": 60, "lease_s": 600, "max_failures": 3, "local": {"grace_s": 5, "allow_root": true}}
JSON
SERVE_ARGS="--executor local --gpus 2" start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml > /dev/null || exit 1
export ASTRALYX_API=$API
ASTRALYX_TOKEN=$(new_token --workspace ml); export ASTRALYX_TOKEN

# 1. three failing attempts; attempt 1's log is longer than the start of attempt 2's lines
#    would need to be cut by a carried offset.
"$ASTRA" runs submit r --workers 1 --gpus-per-worker 1 -- /bin/sh -c \
  'if [ $ASTRAEUS_ATTEMPT = 1 ]; then echo first-attempt-line-aaaaaaaaaaaaaaaaaaaaaaaa; sleep 1; exit 1; fi; echo START-OF-ATTEMPT-$ASTRAEUS_ATTEMPT; for i in $(seq 20); do echo attempt $ASTRAEUS_ATTEMPT line $i; done; sleep 2; exit 1' \
  > /dev/null
check "submit r exits 0" '[ $? = 0 ]'
timeout 60 "$ASTRA" runs logs r --follow > "$WORK/follow.out" 2> "$WORK/follow.err"
rc=$?
{
  echo first-attempt-line-aaaaaaaaaaaaaaaaaaaaaaaa
  for k in 2 3; do
    echo "--- attempt $k ---"
    echo "START-OF-ATTEMPT-$k"
    for i in $(seq 20); do echo "attempt $k line $i"; done
  done
} > "$WORK/want.out"
check "--follow exits 3: the run failed (rc $rc, stderr: $(head -c 200 "$WORK/follow.err"))" '[ $rc = 3 ]'
check "--follow prints attempts 1, 2 and 3 in full, in order, with a header per new attempt" \
  'cmp -s "$WORK/want.out" "$WORK/follow.out" || { diff "$WORK/want.out" "$WORK/follow.out" | head -10; false; }'
check "stderr says the run failed" "grep -qx \"astra: run 'r' failed\" '$WORK/follow.err'"
check "the run failed after 3 attempts" \
  '[ "$("$ASTRA" runs show r --json | jq -r ".state, .attempts" | paste -sd " ")" = "failed 3" ]'
timeout 20 "$ASTRA" runs logs r --follow --attempt 2 > "$WORK/follow2.out"
rc=$?
check "--follow --attempt 2 exits 0 (rc $rc)" '[ $rc = 0 ]'
check "--follow --attempt 2 prints attempt 2 only" \
  '[ "$(cat "$WORK/follow2.out")" = "$(sed -n "/^START-OF-ATTEMPT-2$/,/^attempt 2 line 20$/p" "$WORK/want.out")" ]'

# 2. a working directory that does not exist
"$ASTRA" runs submit wd --workdir /nonexistent-astraeus-dir -- /bin/pwd > /dev/null
check "submit wd exits 0" '[ $? = 0 ]'
timeout 60 "$ASTRA" runs logs wd --follow --attempt 1 > "$WORK/wd.out" 2>&1
check "the worker's log names the working directory, not the program: $(head -c 200 "$WORK/wd.out")" \
  "[ \"\$(cat '$WORK/wd.out')\" = \"astraeus: cannot enter working directory '/nonexistent-astraeus-dir': No such file or directory\" ]"

stop_all
echo "follow_attempts: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
