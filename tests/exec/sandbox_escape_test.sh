#!/usr/bin/env bash
# usage: sandbox_escape_test.sh ASTRAEUS_BINARY ASTRA_BINARY SOURCE_DIR
# The worker sandbox against real escapes (docs/security.md): `astraeus serve --executor local`
# as root with the default configuration (no allow_root, sandbox required), two workspaces, and
# runs whose workers (tests/exec/sandbox_attacks.sh) try to read the store and the data folder,
# read/write the other workspace's run folder, log and checkpoint, read another run's secret in
# /proc/*/environ and kill its worker, outlive their attempt (setsid, double fork, a TERM-proof
# daemon), make the service follow planted links (log -> /etc/shadow, next attempt's log -> a
# file of the machine, next attempt's folder -> a folder to chown), make the restarted service
# kill a forged pid, use a GPU they were not given (device nodes of major 195), exceed their
# memory and process limits. Every attempt fails and every run's own work succeeds.
# With SANDBOX_OFF=1 the same runs go with local.sandbox.enabled false and allow_root (the
# protections off): the checks must then fail (how each was checked to test something).
# Skipped (77) when not root or without curl, jq, python3. About 40 s.
set -u
ASTRAEUS=$1; ASTRA=$2; SRC=$3
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (uids, cgroups, namespaces)"; exit 77; }
. "$HERE/../service/live_server_lib.sh"
live_test_begin curl jq python3
A="$SRC/tests/exec/sandbox_attacks.sh"
DATA=$WORK/data; RUNS=$WORK/data-runs
DEV=/dev/astraeus-gpu-test-$$
mkdir -p "$DEV" && for g in 0 1 2 3; do mknod "$DEV/nvidia$g" c 195 $g; done
trap 'stop_all; rm -rf "$DEV"; for d in /tmp /dev/shm /var/tmp /run/lock; do rm -f "$d/astraeus-bait-T$$" "$d/astraeus-planted-T$$"; done; pkill -KILL -f "decoy-$$" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
if [ -n "${SANDBOX_OFF:-}" ]; then LOCAL='"allow_root": true, "sandbox": {"enabled": false}'
else LOCAL='"sandbox": {"memory_bytes": 67108864, "pids_max": 64}'; fi
cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 4}]}], "max_failures": 5,
 "local": {"grace_s": 2, $LOCAL}}
JSON
SERVE_ARGS="--executor local --gpus 4" start_server "$WORK/astraeus.json" || exit 1
check "serve says which protections are on (7 lines, none off)" \
  '[ "$(grep -c "sandbox.protection" "$WORK/server.log")" = 7 ] && ! grep "sandbox.protection" "$WORK/server.log" | grep -q " on=no"'
admin workspace add ml > /dev/null && admin workspace add cv > /dev/null || exit 1
export ASTRALYX_API=$API
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv)
state() { ASTRALYX_TOKEN=$1 "$ASTRA" runs show "$2" --json | jq -r .state; }
wait_state() {  # TOKEN RUN STATE [SECONDS]
  for _ in $(seq $(( ${4:-20} * 10 ))); do [ "$(state "$1" "$2")" = "$3" ] && return 0; sleep 0.1; done
  echo "run $2 is $(state "$1" "$2"), not $3"; return 1
}
logs() { ASTRALYX_TOKEN=$1 "$ASTRA" runs logs "$2" "${@:3}" 2>&1; }
# attack TOKEN RUN ARGS...: runs the attack and waits for it to succeed; its log in $WORK/RUN.log
attack() {
  local tok=$1 run=$2; shift 2
  ASTRALYX_TOKEN=$tok "$ASTRA" runs submit "$run" -- sh "$A" "$@" > /dev/null
  wait_state "$tok" "$run" succeeded 30
  logs "$tok" "$run" > "$WORK/$run.log"
}
nothing_escaped() { ! grep -q ESCAPED "$WORK/$1.log" && grep -q 'own work done' "$WORK/$1.log"; }

# The victim: ml's run with a secret in its environment, alive until the test says go.
ASTRALYX_TOKEN=$ML "$ASTRA" runs submit victim --env SECRET=ml-secret-$$ -- sh -c \
  'echo mine > "$ASTRAEUS_CHECKPOINT_DIR/secret"; echo victim up; while [ ! -e "$ASTRAEUS_CHECKPOINT_DIR/go" ]; do sleep 0.1; done; echo victim done' \
  victim-loop-$$ > /dev/null
wait_state "$ML" victim running 20
for _ in $(seq 50); do [ -s "$RUNS/ml/victim/checkpoint/secret" ] && break; sleep 0.1; done
VPID=$(pgrep -f "victim-loop-$$" | head -1)
check "the victim runs (pid $VPID)" '[ -n "$VPID" ]'
CG=$(dirname "$(grep -lx "$VPID" /sys/fs/cgroup/unified/astraeus-local-*/r1-a1-w0/cgroup.procs 2> /dev/null | head -1)")
[ -z "${SANDBOX_OFF:-}" ] && check "each worker has its own cgroup ($CG) holding its processes" \
  '[ "$CG" != . ] && grep -qx "$VPID" "$CG/cgroup.procs"'

attack "$CV" store store "$DATA" "$RUNS"
check "a worker cannot read the store nor list the data folder" 'nothing_escaped store'
attack "$CV" neighbour neighbour "$RUNS/ml/victim"
check "a worker cannot read nor write another workspace's log or checkpoint" 'nothing_escaped neighbour'
check "ml's checkpoint is untouched" '[ "$(cat "$RUNS/ml/victim/checkpoint/secret")" = mine ]'
attack "$CV" procs procs "$VPID" "ml-secret-$$"
check "a worker sees no other run's process nor its secret, and cannot kill it" 'nothing_escaped procs'
check "the victim is still alive" 'kill -0 "$VPID" 2> /dev/null && [ "$(state "$ML" victim)" = running ]'

attack "$ML" outlive outlive "T$$"
sleep 0.5
check "nothing outlives its attempt (setsid, double fork, TERM-proof)" \
  'nothing_escaped outlive && ! pgrep -f "escapee-T$$" > /dev/null'
ML_UID=$(grep -o "^uid [0-9]*" "$WORK/outlive.log" | cut -d" " -f2); CV_UID=$(grep -o "^uid [0-9]*" "$WORK/store.log" | cut -d" " -f2)
check "ml's uid ($ML_UID) is not cv's ($CV_UID), neither root" '[ -n "$ML_UID" ] && [ "$ML_UID" != "$CV_UID" ] && [ "$ML_UID" != 0 ] && [ "$CV_UID" != 0 ]'

echo untouched > "$WORK/victim.txt"; mkdir -p "$WORK/owned-dir"
ASTRALYX_TOKEN=$ML "$ASTRA" runs submit plant -- sh "$A" plant "$WORK/victim.txt" "$WORK/owned-dir" > /dev/null
wait_state "$ML" plant succeeded 40
logs "$ML" plant --attempt 1 > "$WORK/plant1.log"
check "a log replaced by a link to /etc/shadow is not served" '! grep -q "^root:" "$WORK/plant1.log"'
check "a link planted as the next attempt's log did not truncate its target" '[ "$(cat "$WORK/victim.txt")" = untouched ]'
check "a link planted as the next attempt's folder was not followed (no chown)" \
  '[ "$(stat -c %u "$WORK/owned-dir")" = 0 ] && [ -z "$(ls -A "$WORK/owned-dir")" ]'
logs "$ML" plant --attempt 3 > "$WORK/plant.log"
check "the planting run's attempt 3 succeeded with its log" 'grep -q "own work done" "$WORK/plant.log"'

attack "$CV" memory memory 200
check "a worker past its memory limit is killed (the run goes on), and cannot shield itself" \
  'nothing_escaped memory && grep -q "memory limit" "$WORK/memory.log" && grep -qx "oom_score_adj 0" "$WORK/memory.log"'
attack "$CV" pids pids 100
check "a worker cannot start more processes than pids_max" 'nothing_escaped pids'
attack "$CV" gpu gpu "$DEV"
check "a worker cannot open a GPU it was not given" 'nothing_escaped gpu'

# Folders every user may write (/tmp, /dev/shm, /var/tmp, /run/lock): each worker has its own, so
# a file left there is neither bait for the next run nor readable by another workspace's.
TMPDIRS="/tmp /dev/shm /var/tmp /run/lock"
for d in $TMPDIRS; do [ -d "$d" ] && echo bait > "$d/astraeus-bait-T$$"; done
attack "$CV" tmpdirs tmpdirs "T$$"
left=""; for d in $TMPDIRS; do [ -e "$d/astraeus-planted-T$$" ] && left="$left $d"; done
check "a worker sees none of the machine's files in $TMPDIRS" 'nothing_escaped tmpdirs && grep -q "wrote /var/tmp/" "$WORK/tmpdirs.log"'
check "files a worker leaves in $TMPDIRS stay its own (left on the machine in:$left)" '[ -z "$left" ]'
for d in $TMPDIRS; do rm -f "$d/astraeus-bait-T$$" "$d/astraeus-planted-T$$"; done

touch "$RUNS/ml/victim/checkpoint/go"
wait_state "$ML" victim succeeded 20
check "the victim's own work succeeded" '[ $? = 0 ]'

# A forged pid file and a kill -9 of the service: its workers die with it, the restarted service
# kills nothing else.
setsid sh -c "sleep 997; : decoy-$$" < /dev/null > /dev/null 2>&1 &
DECOY=$!
ASTRALYX_TOKEN=$ML "$ASTRA" runs submit forge -- sh "$A" forge "$DECOY" > /dev/null
wait_state "$ML" forge running 20
sleep 0.5
FPID=$(pgrep -f "sandbox_attacks.sh forge" | head -1)
kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2> /dev/null
rm -f "$WORK/port"
for _ in $(seq 50); do kill -0 "$FPID" 2> /dev/null || break; sleep 0.1; done
check "a kill -9 of the service takes its workers along" '! kill -0 "$FPID" 2> /dev/null'
"$ASTRAEUS" serve --executor local --gpus 4 --config "$WORK/astraeus.json" --data-dir "$DATA" --listen 127.0.0.1:0 \
    --port-file "$WORK/port" >> "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
API="http://127.0.0.1:$(cat "$WORK/port")/v1"; export ASTRALYX_API=$API
sleep 1
check "the restarted service killed no forged pid" 'kill -0 "$DECOY" 2> /dev/null'
kill -9 "$DECOY" 2> /dev/null

[ -n "${KEEP:-}" ] && echo "work: $WORK"
echo "sandbox_escape: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
