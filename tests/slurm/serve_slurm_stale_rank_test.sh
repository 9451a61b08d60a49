#!/bin/bash
# A stale rank after a node crash (docs/slurm.md, "A stale rank after a node crash"): a 2-node
# gang runs; the slurmd of its second node is killed with SIGKILL and the node set DOWN (what
# Slurm does itself after SlurmdTimeout), so Slurm requeues the job. On this one-host test
# cluster Slurm still ends that node's rank (its slurmstepd ends the tasks when srun aborts the
# step), so the rank that Slurm cannot end (as reported on a real cluster, until the node comes
# back) is made by hand beside it: a step sandbox of attempt 1 run as the workspace's user with
# the run's environment and --attempt-file, as the batch script runs it, writing heartbeats.
# Astraeus places the run again on other nodes and writes the run's current attempt (a file of
# the service's, outside the run's folder) before the release; the stale rank's sandbox reads it,
# kills its pid namespace and says why. The workspace's user (the stale rank's) tries to rewrite
# that file and to rename its own file over it, as a worker keeping itself alive would: refused. Checked: the
# stale rank's last heartbeat in the checkpoint folder comes before the new attempt's first, no
# process of attempt 1 is left, and the new attempt succeeds. (Slurm's second segment is
# ASTRAEUS_ATTEMPT=2; the service's attempt may be 3: it can place the run once more on the
# down node before it sees it down.) The node's slurmd is started again and the node resumed on
# exit. Skipped (77) without the cluster.
# usage: serve_slurm_stale_rank_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
slurm_serve_scratch astraeus-slurm-stale
VICTIM=""
revive() {
  if [ -n "$VICTIM" ]; then
    local pid; pid=$(cat "$SLURM_BASE/run/slurmd-$VICTIM.pid" 2>/dev/null)
    { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; } || slurmd -N "$VICTIM"
    for _ in $(seq 100); do scontrol update NodeName="$VICTIM" State=RESUME >/dev/null 2>&1; \
      sinfo -h -n "$VICTIM" -o %T | grep -qE '^(idle|mixed|allocated)' && break; sleep 0.1; done
  fi
}
cleanup() { revive; slurm_serve_cleanup; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; exit 1; }
slurm_serve_ml
slurm_serve_start || fail "server did not start"
RUNDIR="$DATA-runs/ml/stale"
AF="$DATA-runs/.attempts/ml/stale"  # the run's current attempt, the service's file
get() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/stale"; }
field() { get | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get(sys.argv[1], ""))' "$1" 2>/dev/null; }
is() { [ "$(field state) $(field attempts)" = "$1" ]; }
# The worker: a heartbeat (ns since the epoch) into the checkpoint folder every 0.1 s; attempt 1
# beats until it is killed, attempt 2 beats 30 times and succeeds.
cat > "$T/work.sh" <<'WORK'
f="$ASTRAEUS_CHECKPOINT_DIR/beat-$ASTRAEUS_ATTEMPT-$RANK"
n=0
while :; do
  date +%s%N >> "$f"; n=$((n + 1))
  [ "$ASTRAEUS_ATTEMPT" -ge 2 ] && [ "$n" -ge 30 ] && exit 0
  sleep 0.1
done
WORK
chmod 644 "$T/work.sh"
# Pids of the processes of attempt 1 of this run, on any node (one grep over every environ).
old_procs() {
  local f
  for f in $(grep -lzx "ASTRAEUS_RUN_DIR=$RUNDIR" /proc/[0-9]*/environ 2>/dev/null); do
    grep -qzx "ASTRAEUS_ATTEMPT=1" "$f" 2>/dev/null && { f=${f#/proc/}; echo "${f%/environ}"; }
  done
}
curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
  --data "{\"name\": \"stale\", \"workers\": 2, \"gpus_per_worker\": 8, \"command\": \"bash $T/work.sh\"}" "$API/runs" > /dev/null
waitfor 300 is 'running 1' || fail "stale not running: $(get)"
job=$(squeue -h -n astraeus-ml-stale -o %i)
waitfor 100 test -s "$RUNDIR/checkpoint/beat-1-1" || fail "rank 1 of attempt 1 does not beat"
batch=$(scontrol show job "$job" | sed -n 's/.*BatchHost=\([^ ]*\).*/\1/p')
VICTIM=$(scontrol show hostnames "$(squeue -h -j "$job" -o %N)" | grep -vx "$batch" | head -1)
[ -n "$VICTIM" ] || fail "no second node in $(squeue -h -j "$job" -o %N)"
[ "$(cut -d' ' -f1 "$AF")" = 1 ] || fail "$AF: $(cat "$AF")"
[ "$(stat -c '%u %a' "$AF") $(stat -c '%u %a' "$(dirname "$AF")")" = "$(id -u) 644 $(id -u) 711" ] ||
  fail "$AF: owner and mode $(stat -c '%u %a' "$AF"), folder $(stat -c '%u %a' "$(dirname "$AF")")"
# The attack: the job's user keeps attempt 1 current (a write, a rename over it, a new file).
runuser -u astraeus-ml -- bash -c "echo '1 0' > '$AF'" 2>/dev/null && fail "the job's user rewrote $AF"
runuser -u astraeus-ml -- bash -c "echo '1 0' > '$RUNDIR/fake' && mv -f '$RUNDIR/fake' '$AF'" 2>/dev/null &&
  fail "the job's user renamed a file over $AF"
runuser -u astraeus-ml -- bash -c "echo '1 0' > '$(dirname "$AF")/other'" 2>/dev/null &&
  fail "the job's user wrote into $(dirname "$AF")"
scontrol write batch_script "$job" - 2>/dev/null | grep -qF -- "--attempt-file '$AF'" ||
  fail "the batch script does not name $AF: $(scontrol write batch_script "$job" - 2>&1 | grep -o -- '--attempt-file [^ ]*')"
echo "$AF: the service's (0644 in a 0711 folder); the job's user could not rewrite it"
n1=$(old_procs | wc -l)
[ "$n1" -gt 0 ] || fail "no process of attempt 1 found by its environment"
echo "job $job on $(squeue -h -j "$job" -o %N) (batch host $batch): $n1 processes of attempt 1"

# The stale rank: attempt 1's step sandbox around the worker, as the batch script runs it.
runuser -u astraeus-ml -- env ASTRAEUS_RUN_DIR="$RUNDIR" ASTRAEUS_ATTEMPT=1 RANK=9 \
  ASTRAEUS_CHECKPOINT_DIR="$RUNDIR/checkpoint" SLURMD_NODENAME="$VICTIM" \
  "$BIN" step-sandbox --attempt-file "$AF" \
  -- bash "$T/work.sh" 2> "$T/stale.err" &
STALE=$!
waitfor 100 test -s "$RUNDIR/checkpoint/beat-1-9" || fail "the stale rank does not beat: $(cat "$T/stale.err")"
kill -9 "$(cat "$SLURM_BASE/run/slurmd-$VICTIM.pid")"
scontrol update NodeName="$VICTIM" State=DOWN Reason=astraeus-test-slurmd-crash
echo "killed the slurmd of $VICTIM (SIGKILL), node set DOWN"
down_ns=$(date +%s%N)
waitfor 100 bash -c "[ \"\$(squeue -h -j $job -o %T)\" != RUNNING ]" || fail "job $job not requeued"
again() { [ "$(field state)" = running ] && [ "$(field attempts)" -ge 2 ]; }
waitfor 300 again || fail "stale not running again: $(get)"
waitfor 100 bash -c "ls $RUNDIR/checkpoint/beat-2-* >/dev/null 2>&1" || fail "the second segment does not beat"
attempt=$(field attempts)
waitfor 100 test -z "$(old_procs)" ||
  fail "processes of attempt 1 still run beside attempt $attempt: $(ps -o pid,args -p "$(old_procs | paste -sd,)" | tail -n +2)"
echo "attempt $attempt runs; no process of attempt 1 left"
last1=$(cat "$RUNDIR"/checkpoint/beat-1-* | sort -n | tail -1)
first2=$(cat "$RUNDIR"/checkpoint/beat-2-* | sort -n | head -1)
echo "attempt 1's last heartbeat $last1, attempt 2's first $first2: $(((first2 - last1) / 1000000)) ms apart"
[ "$last1" -lt "$first2" ] || fail "attempt 1 beat after attempt 2 started"
wait "$STALE"; rc=$?
stale_last=$(sort -n "$RUNDIR/checkpoint/beat-1-9" | tail -1)
echo "the stale rank beat $(((stale_last - down_ns) / 1000000)) ms past the node's failure (Slurm's requeue)"
[ "$rc" = 137 ] || fail "the stale rank's sandbox exited $rc (want 137)"
grep -qE "attempt 1 is stale: $AF names attempt [2-9]" "$T/stale.err" ||
  fail "the stale rank did not say why: $(cat "$T/stale.err")"
cat "$T/stale.err"
[ "$(cut -d' ' -f1 "$AF")" = "$attempt" ] || fail "$AF: $(cat "$AF")"
waitfor 300 is "succeeded $attempt" || fail "stale did not succeed as attempt $attempt: $(get)"
[ -z "$(old_procs)" ] || fail "processes of attempt 1 left at the end"
echo PASS
