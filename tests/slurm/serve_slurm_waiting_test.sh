#!/bin/bash
# Pending runs visible in Slurm (docs/slurm.md, "What an administrator sees"), on the test
# cluster's 4 nodes x 8 GPUs:
#  1. four runs (1 x 8) fill the cluster; two more, w1 and w2, wait: each has a held job
#     (`squeue -t PD`: PENDING, JobHeldUser, named astraeus-ml-<run>) whose comment is
#     "astraeus waiting: <the run's reason> | <its command>";
#  2. w1 stopped by its owner while pending: its job is gone from Slurm;
#  3. r1 stopped: w2 is placed and runs on r1's node in the job it waited in, its comment the
#     command again.
# Skipped (77) without the cluster.
# usage: serve_slurm_waiting_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
export TZ=UTC
slurm_serve_scratch astraeus-slurm-waiting
fail() { echo "FAIL: $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; exit 1; }
slurm_serve_ml
slurm_serve_start || fail "server did not start"
get() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/$1"; }
field() { get "$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get(sys.argv[1], ""))' "$2" 2>/dev/null; }
is() { [ "$(field "$1" state) $(field "$1" attempts)" = "$2" ]; }
submit() {
  curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
    --data "{\"name\": \"$1\", \"workers\": 1, \"gpus_per_worker\": 8, \"command\": \"sleep 600\"}" "$API/runs" > /dev/null
}
stop() { curl -sS -X POST -H "Authorization: Bearer $ML" "$API/runs/$1/stop" > /dev/null; }
job() { squeue -h -n "astraeus-ml-$1" -o %i; }
CMD="'/bin/sh' '-c' 'sleep 600'"  # the run's command as the job's comment shows it
# shown RUN: its job is PENDING, held by a user hold, its comment the run's reason and command.
shown() {
  local reason comment
  reason=$(field "$1" reason)
  [ -n "$reason" ] || return 1
  comment=$(squeue -h -t PD -n "astraeus-ml-$1" -o '%T|%r|%k')
  [ "$comment" = "PENDING|JobHeldUser|astraeus waiting: $reason | $CMD" ]
}

# 1. Four runs fill the cluster; w1, w2 wait in Slurm as held jobs.
for r in r1 r2 r3 r4; do submit $r; done
for r in r1 r2 r3 r4; do waitfor 300 is $r 'running 1' || fail "$r not running: $(get $r)"; done
submit w1
submit w2
waitfor 100 shown w1 || fail "w1 in Slurm: '$(squeue -h -n astraeus-ml-w1 -o '%T|%r|%k')' (reason '$(field w1 reason)')"
waitfor 100 shown w2 || fail "w2 in Slurm: '$(squeue -h -n astraeus-ml-w2 -o '%T|%r|%k')' (reason '$(field w2 reason)')"
is w1 'pending 0' || fail "w1: $(get w1)"
[ "$(squeue -h -t PD -o %j | grep -c '^astraeus-ml-w[12]$')" = 2 ] || fail "squeue -t PD: $(squeue -h -t PD -o '%i %j %r')"
echo "1. pending w1, w2 in squeue -t PD: $(squeue -h -t PD -n astraeus-ml-w1 -o '%j %r %k')"

# 2. w1 stopped while pending: its job is gone.
J1=$(job w1)
stop w1
waitfor 100 bash -c "[ -z \"\$(squeue -h -j $J1 -o %i 2>/dev/null)\" ]" || fail "w1's job $J1 still there: $(squeue -h -j "$J1" -o '%T %r')"
[ "$(field w1 state)" != pending ] || fail "w1 still pending: $(get w1)"
echo "2. w1 stopped while pending ($(field w1 state)): its job $J1 is gone"

# 3. r1 stopped: w2 runs in the job it waited in, on r1's node, its comment the command again.
J2=$(job w2)
N1=$(squeue -h -n astraeus-ml-r1 -o %N)
stop r1
waitfor 300 is w2 'running 1' || fail "w2 not running after r1 stopped: $(get w2)"
[ "$(squeue -h -n astraeus-ml-w2 -o '%i %T %N|%k')" = "$J2 RUNNING $N1|$CMD" ] ||
  fail "w2's job: '$(squeue -h -n astraeus-ml-w2 -o '%i %T %N|%k')' (want '$J2 RUNNING $N1|$CMD')"
# The job it waited in asks for the run's GPUs (it was submitted before any placement).
[ "$(squeue -h -j "$J2" -o %b)" = gres:gpu:8 ] || fail "w2's job $J2 asks for '$(squeue -h -j "$J2" -o %b)' (want gres:gpu:8)"
echo "3. w2 runs in its waiting job $J2 on $N1 (gres:gpu:8)"
echo PASS
