#!/usr/bin/env bash
# usage: log_quota_live_test.sh ASTRAEUS_BINARY ASTRA_BINARY
# The per-workspace log quota with real workers (`serve --executor local`, docs/operations.md
# "Log quota"): log cap 2,048 bytes per worker, quota 3,072 bytes per workspace.
#  1. r1 writes 2,000 bytes: its one worker reserved 2,048 of the 3,072; all kept.
#  2. r2 writes 2,000 bytes: room 3,072 - 2,000 = 1,072 < 2,048, so r1's log (the oldest) is
#     removed (its note is what GET /logs gives) and r2 keeps its 2,000 bytes.
#  3. r3 writes 3,000 bytes: r2's log is removed in turn; r3 keeps 2,048 bytes and the cap's note.
#  4. Another workspace's log is untouched by ml's quota.
# Skipped (77) without curl or jq. About 10 s.
set -u
ASTRAEUS=$1; ASTRA=$2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../service/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 2}]}],
 "workspace_limits": {"log_bytes": 3072},
 "local": {"grace_s": 5, "allow_root": true, "log_cap_bytes": 2048}}
JSON
SERVE_ARGS="--executor local --gpus 2" start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml > /dev/null || exit 1
admin workspace add cv > /dev/null || exit 1
export ASTRALYX_API=$API
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv)

# run TOKEN NAME CHAR BYTES: submits a run that writes BYTES x CHAR and waits until it succeeded.
run() {
  ASTRALYX_TOKEN=$1 "$ASTRA" runs submit "$2" -- sh -c "printf '%$4s' '' | tr ' ' $3" > /dev/null || return 1
  for _ in $(seq 300); do
    [ "$(ASTRALYX_TOKEN=$1 "$ASTRA" runs show "$2" --json | jq -r .state)" = succeeded ] && return 0
    sleep 0.1
  done
  echo "run $2 did not succeed"; return 1
}
# text TOKEN NAME: the run's worker-0 log of attempt 1, as GET /logs gives it.
text() { curl -sS "$API/runs/$2/logs?worker=0&attempt=1" -H "Authorization: Bearer $1" | jq -r .text; }
NOTE="[astraeus: log removed: workspace 'ml' reached its log quota of 3072 bytes; its oldest logs are removed first]"

run "$CV" other z 2000; check "cv's run succeeded" '[ $? = 0 ]'
run "$ML" r1 a 2000; check "r1 succeeded" '[ $? = 0 ]'
check "r1's log: 2,000 x a" '[ "$(text "$ML" r1)" = "$(printf "%2000s" "" | tr " " a)" ]'
run "$ML" r2 b 2000; check "r2 succeeded" '[ $? = 0 ]'
check "r2's log: 2,000 x b" '[ "$(text "$ML" r2)" = "$(printf "%2000s" "" | tr " " b)" ]'
check "r1's log was removed for r2 (the oldest first): its note" '[ "$(text "$ML" r1)" = "$NOTE" ]'
run "$ML" r3 c 3000; check "r3 succeeded" '[ $? = 0 ]'
want3="$(printf "%2048s" "" | tr " " c)
[astraeus: log capped at 2048 bytes; later output dropped]"
check "r3's log: its 2,048 bytes and the cap's note" '[ "$(text "$ML" r3)" = "$want3" ]'
check "r2's log was removed for r3" '[ "$(text "$ML" r2)" = "$NOTE" ]'
check "cv's log is untouched by ml's quota" '[ "$(text "$CV" other)" = "$(printf "%2000s" "" | tr " " z)" ]'
# 5. A worker turns its ended attempt's folder into a link to cv's run folder; when ml's quota
#    then removes that attempt's log, the service must remove ml's own file, not cv's through
#    the link (nor write its note there).
RUNS=$WORK/data-runs
EVIL='if [ "$ASTRAEUS_ATTEMPT" = 1 ]; then echo "attempt 1"; exit 1; fi
mv attempt-1 attempt-1.moved && ln -s "$1" attempt-1 && echo "linked attempt-1 to $1"
while [ ! -e "$ASTRAEUS_CHECKPOINT_DIR/go" ]; do sleep 0.1; done'
ASTRALYX_TOKEN=$ML "$ASTRA" runs submit evil -- sh -c "$EVIL" evil "$RUNS/cv/other/attempt-1" > /dev/null
for _ in $(seq 300); do [ -L "$RUNS/ml/evil/attempt-1" ] && break; sleep 0.1; done
check "ml's worker linked its attempt-1 folder to cv's" '[ -L "$RUNS/ml/evil/attempt-1" ]'
run "$ML" trigger t 10; check "ml's next run succeeded" '[ $? = 0 ]'
touch "$RUNS/ml/evil/checkpoint/go"
check "cv's log is not removed through ml's link" '[ "$(text "$CV" other)" = "$(printf "%2000s" "" | tr " " z)" ]'
check "no note of ml's quota in cv's folder" '! grep -rqs "workspace .ml." "$RUNS/cv/"'
echo "log_quota_live: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
