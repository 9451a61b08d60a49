#!/usr/bin/env bash
# examples/train_ddp.py as the worker runner launches it: 2 processes (RANK 0 and 1), each in its
# own process group, with the contract's environment on 127.0.0.1 (a free port).
#   reference: 40 steps uninterrupted -> the final weights' checksum.
#   attempt 1: SIGTERM to both process groups mid-run -> every rank stops at the same step K > 0,
#              rank 0 writes step-K.pt, both exit 0, both progress files say K.
#   attempt 2: "resumed from step K" on both ranks, "done at step 40", progress 40, and the same
#              checksum as the uninterrupted reference (the resume lost and repeated nothing).
#   start-up:  SIGTERM while the ranks import torch and meet: both exit 0 at step 0.
#   failure:   --fail-at-step 5 --fail-rank 1: rank 1 exits 1 after 4 steps; rank 0 sees the peer
#              gone and exits 1 too (not after the 60-s timeout).
# Usage: train_ddp_test.sh SOURCE_DIR. Exit 77 (skip) when /usr/bin/python3 or torch is missing.
set -uo pipefail
src=${1:?usage: train_ddp_test.sh SOURCE_DIR}
py=/usr/bin/python3
script="$src/examples/train_ddp.py"
if [ ! -x "$py" ]; then echo "SKIP: $py not found (apt-get install python3-torch)"; exit 77; fi
if ! "$py" -c 'import torch.distributed' 2>/dev/null; then
  echo "SKIP: $py cannot import torch (apt-get install python3-torch; scripts/bootstrap.sh)"
  exit 77
fi

work=$(mktemp -d /tmp/train_ddp_test.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.out "$work"/*.err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The script as __main__, with SIGUSR2 dumping every thread's Python stack to stderr (a rank that
# hangs is dumped before the test fails: which line it waits on).
with_stack_dump='import faulthandler, runpy, signal, sys
faulthandler.register(signal.SIGUSR2, all_threads=True)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")'

# launch NAME ATTEMPT CHECKPOINT_DIR ARGS...: both ranks, each in its own session/process group.
launch() {
  local name=$1 attempt=$2 ckdir=$3 port r
  shift 3
  port=$(free_port)
  pids=()
  for r in 0 1; do
    setsid env ASTRAEUS_RUN=ddp ASTRAEUS_WORKSPACE=ml ASTRAEUS_WORKER=$r ASTRAEUS_WORKERS=2 \
      ASTRAEUS_ATTEMPT="$attempt" CUDA_VISIBLE_DEVICES= MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r NODE_RANK=$r ASTRAEUS_CHECKPOINT_DIR="$ckdir" \
      ASTRAEUS_PROGRESS_FILE="$work/$name.progress.$r" \
      "$py" -c "$with_stack_dump" "$script" "$@" >"$work/$name.$r.out" 2>"$work/$name.$r.err" &
    pids+=($!)
  done
  echo "$port" >"$work/$name.port"
}

# wait_all TIMEOUT_S: waits for both ranks; sets rc0 rc1 (124 when still running at the timeout).
rc0='' rc1=''
wait_all() {
  local deadline=$((SECONDS + $1)) i rcs=()
  for i in 0 1; do
    while kill -0 "${pids[$i]}" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    if kill -0 "${pids[$i]}" 2>/dev/null; then
      kill -USR2 "${pids[$i]}" 2>/dev/null && sleep 0.5  # its stacks into its .err
      rcs+=(124)
    else
      wait "${pids[$i]}"
      rcs+=($?)
    fi
  done
  rc0=${rcs[0]} rc1=${rcs[1]}
  [ "$rc0" != 124 ] && [ "$rc1" != 124 ] && pids=()
}

steps=40
# --- reference: uninterrupted
launch ref 1 "$work/ref-ck" --steps $steps
wait_all 120
[ "$rc0/$rc1" = "0/0" ] || fail "reference run exit codes $rc0/$rc1 (expected 0/0)"
grep -qx "done at step $steps" "$work/ref.0.out" || fail "reference: no 'done at step $steps'"
ref_sum=$(grep '^final loss ' "$work/ref.0.out" | sed 's/.* checksum //')
[ -n "$ref_sum" ] || fail "reference: no checksum line"
[ -z "$(ls -A "$work/ref-ck")" ] || fail "reference without --checkpoint-every saved a checkpoint"

# --- attempt 1: SIGTERM to both process groups once both ranks passed step 5
ck="$work/ck"
launch a1 1 "$ck" --steps $steps --step-sleep 0.1
port=$(cat "$work/a1.port")
deadline=$((SECONDS + 90))
until [ "$(cat "$work/a1.progress.0" 2>/dev/null || echo 0)" -ge 5 ] &&
      [ "$(cat "$work/a1.progress.1" 2>/dev/null || echo 0)" -ge 5 ]; do
  [ $SECONDS -lt $deadline ] || fail "attempt 1: progress never reached 5"
  kill -0 "${pids[0]}" 2>/dev/null || fail "attempt 1: rank 0 exited early"
  sleep 0.05
done
kill -TERM -- "-${pids[0]}" "-${pids[1]}"
wait_all 60
[ "$rc0/$rc1" = "0/0" ] || fail "attempt 1 after SIGTERM: exit codes $rc0/$rc1 (expected 0/0)"
for r in 0 1; do
  grep -qx "rank $r world 2 master 127.0.0.1:$port" "$work/a1.$r.out" || fail "attempt 1: rank $r line"
  grep -qx "no checkpoint in $ck: starting from step 0" "$work/a1.$r.out" || fail "attempt 1: rank $r start line"
done
k=$(sed -n 's/^stopped at step \([0-9]*\) by SIGTERM$/\1/p' "$work/a1.0.out")
[ -n "$k" ] || fail "attempt 1: rank 0 printed no 'stopped at step K by SIGTERM'"
grep -qx "stopped at step $k by SIGTERM" "$work/a1.1.out" || fail "attempt 1: rank 1 did not stop at step $k"
[ "$k" -ge 5 ] && [ "$k" -lt $steps ] || fail "attempt 1: stopped at step $k (expected 5..$((steps - 1)))"
grep -qx "checkpoint saved at step $k" "$work/a1.0.out" || fail "attempt 1: no 'checkpoint saved at step $k'"
! grep -q "checkpoint saved" "$work/a1.1.out" || fail "attempt 1: rank 1 saved a checkpoint"
[ "$(ls "$ck")" = "$(printf 'step-%012d.pt' "$k")" ] || fail "attempt 1: checkpoint dir holds '$(ls "$ck")'"
for r in 0 1; do
  [ "$(cat "$work/a1.progress.$r")" = "$k" ] || fail "attempt 1: progress file $r says $(cat "$work/a1.progress.$r"), expected $k"
done

# --- attempt 2: resumes from K, finishes, same weights as the uninterrupted run
launch a2 2 "$ck" --steps $steps
wait_all 120
[ "$rc0/$rc1" = "0/0" ] || fail "attempt 2: exit codes $rc0/$rc1 (expected 0/0)"
for r in 0 1; do
  grep -qx "resumed from step $k" "$work/a2.$r.out" || fail "attempt 2: rank $r did not print 'resumed from step $k'"
  grep -qx "done at step $steps" "$work/a2.$r.out" || fail "attempt 2: rank $r did not print 'done at step $steps'"
  [ "$(cat "$work/a2.progress.$r")" = "$steps" ] || fail "attempt 2: progress file $r is not $steps"
done
sum=$(grep '^final loss ' "$work/a2.0.out" | sed 's/.* checksum //')
[ "$sum" = "$ref_sum" ] || fail "attempt 2: checksum $sum differs from the uninterrupted run's $ref_sum"

# --- SIGTERM during start-up (torch import, rendezvous): a clean stop at step 0, not a crash
launch s 1 "$work/s-ck" --steps $steps
deadline=$((SECONDS + 60))
until grep -q '^rank 0 world' "$work/s.0.out" && grep -q '^rank 1 world' "$work/s.1.out"; do
  [ $SECONDS -lt $deadline ] || fail "start-up run: no rank lines"
  sleep 0.02
done
kill -TERM -- "-${pids[0]}" "-${pids[1]}"
wait_all 60
[ "$rc0/$rc1" = "0/0" ] || fail "SIGTERM during start-up: exit codes $rc0/$rc1 (expected 0/0)"
for r in 0 1; do
  grep -qx "stopped at step 0 by SIGTERM" "$work/s.$r.out" || fail "start-up run: rank $r did not stop at step 0"
done

# --- failure: rank 1 exits 1 before step 5; rank 0 notices and exits 1
launch f 1 "$work/f-ck" --steps $steps --fail-at-step 5 --fail-rank 1
wait_all 50
[ "$rc0/$rc1" = "1/1" ] || fail "failure run: exit codes $rc0/$rc1 (expected 1/1)"
grep -qx "rank 1 failing at step 5 (--fail-at-step)" "$work/f.1.err" || fail "failure run: rank 1 message"
grep -q "^rank 0: collective failed after step 4" "$work/f.0.err" || fail "failure run: rank 0 message"
[ "$(cat "$work/f.progress.1")" = 4 ] || fail "failure run: rank 1 progress $(cat "$work/f.progress.1"), expected 4"

# --fail-attempt 2 does not fail attempt 1; bad arguments exit 2.
launch g 1 "$work/g-ck" --steps 3 --fail-at-step 2 --fail-rank 0 --fail-attempt 2
wait_all 60
[ "$rc0/$rc1" = "0/0" ] || fail "--fail-attempt 2 in attempt 1: exit codes $rc0/$rc1 (expected 0/0)"
"$py" "$script" --steps -1 >/dev/null 2>"$work/bad.err"; rc=$?
[ $rc = 2 ] && grep -q -- "--steps must be >= 0" "$work/bad.err" || fail "--steps -1: exit $rc"
RANK=1 WORLD_SIZE=2 "$py" "$script" >/dev/null 2>"$work/bad.err"; rc=$?
[ $rc = 2 ] && grep -q "MASTER_ADDR and MASTER_PORT must be set" "$work/bad.err" || fail "no master: exit $rc"

echo "PASS: stopped at step $k on SIGTERM, resumed from $k, done at $steps with the uninterrupted checksum $ref_sum"
