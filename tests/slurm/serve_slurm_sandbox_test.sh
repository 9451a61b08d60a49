#!/bin/bash
# Slurm steps in Astraeus's sandbox (docs/slurm.md "What confines a step", docs/security.md):
# `astraeus serve --executor slurm` as root, workspaces ml and vision as the test cluster's users
# astraeus-ml and astraeus-vision. vision's run (the victim) keeps a secret in its checkpoint
# folder and a marked process alive, and watches its /tmp; ml's run (the attacker) then tries,
# from inside its step: to read the store and list the service's data directory; to list the
# runs' root and read the victim's folder and secret; to find the victim's process in /proc and
# kill it; to plant a file in /tmp for the victim; to leave a `setsid` daemon (double fork, a
# unique marker in its argv) that outlives its job. Every attempt fails (no ESCAPED line, each
# attempt's "blocked" line), both runs' own work succeeds (logs, checkpoints, state succeeded),
# the job's output says the sandbox is on, and afterwards no process with the marker is left and
# the host's /tmp has no planted file. With the bare step of before (run with an astraeus built
# before the step sandbox) the /proc, /tmp and daemon checks fail.
# Skipped (77) without the cluster, its tenants, or root. About 25 s.
# usage: serve_slurm_sandbox_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip
for u in astraeus-ml astraeus-vision; do
  getent passwd "$u" >/dev/null || slurm_skip "no Unix user $u (scripts/slurm-test-cluster.sh start makes it)"
done
[ "$(id -u)" = 0 ] || slurm_skip "needs root (only root submits Slurm jobs for other users)"
slurm_serve_scratch astraeus-slurm-sandbox
MARK="sbx$$x$RANDOM"
trap 'pkill -KILL -f "escapee-$MARK" 2>/dev/null; rm -f "/tmp/planted-$MARK"; slurm_serve_cleanup' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# The victim: its secret, a marked process, then until the go file: does /tmp hold the planted file?
cat > "$T/victim.sh" <<'EOF2'
#!/bin/bash
mark=$1
echo "secret of vision" > "$ASTRAEUS_CHECKPOINT_DIR/secret"
bash -c "while :; do sleep 0.2; done; : victim-loop-$mark" &
loop=$!
echo "victim up"
while [ ! -e "$ASTRAEUS_CHECKPOINT_DIR/go" ]; do
  [ -e "/tmp/planted-$mark" ] && { echo "ESCAPED: the attacker's file is in my /tmp"; break; }
  sleep 0.1
done
kill $loop
kill -0 $loop 2>/dev/null; echo "own work done"
echo done > "$ASTRAEUS_CHECKPOINT_DIR/victim-done"
EOF2
# The attacker: each attempt prints "blocked: WHAT" or "ESCAPED: WHAT".
cat > "$T/attack.sh" <<'EOF2'
#!/bin/bash
mark=$1 data=$2 runs=$3 vpid=$4
victim=$runs/vision/v
try() {  # try WHAT CMD...: CMD succeeding is an escape
  if "${@:2}" > /dev/null 2>&1; then echo "ESCAPED: $1"; else echo "blocked: $1"; fi
}
try "read the store" cat "$data/astraeus.db"
try "list the data directory" bash -c "ls -A '$data' | grep -q ."
try "list the runs' root and see vision" bash -c "ls '$runs' | grep -q vision"
try "list the victim's run folder" ls "$victim"
try "read the victim's secret" cat "$victim/checkpoint/secret"
try "find the victim's process in /proc" bash -c "grep -l '[v]ictim-loop-$mark' /proc/[0-9]*/cmdline"
try "signal the victim's process ($vpid)" kill -0 "$vpid"
try "kill the victim's process ($vpid)" kill -9 "$vpid"
# A file in /tmp for the victim (its step watches its /tmp for it).
echo planted > "/tmp/planted-$mark" && echo "my /tmp: written"
# A daemon: setsid, double fork, stdin/out/err closed; it should outlive this job.
setsid bash -c "(bash -c 'sleep 120; : escapee-$mark' < /dev/null > /dev/null 2>&1 &)" < /dev/null > /dev/null 2>&1
sleep 0.3
echo "own checkpoint" > "$ASTRAEUS_CHECKPOINT_DIR/ckpt"
echo "own work done"
EOF2
chmod 755 "$T/victim.sh" "$T/attack.sh"
slurm_serve_ml
"$BIN" admin workspace add vision --weight 1 --data-dir "$DATA" >/dev/null
VI=$("$BIN" admin token create --workspace vision --data-dir "$DATA" 2>/dev/null)
RUNS=$DATA-runs
slurm_serve_start || { echo "FAIL server did not start"; exit 1; }
post() { curl -sS -X POST -H "Authorization: Bearer $1" -H 'Content-Type: application/json' --data "$2" "$API/runs" > /dev/null; }
state() { curl -sS -H "Authorization: Bearer $1" "$API/runs/$2" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("state", ""))' 2>/dev/null; }
is() { [ "$(state "$1" "$2")" = "$3" ]; }

post "$VI" '{"name": "v", "workers": 1, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/victim.sh '"$MARK"'"}'
waitfor 300 grep -q "victim up" "$RUNS/vision/v/attempt-1/worker-0.log" 2>/dev/null ||
  { echo "FAIL the victim did not start: $(state "$VI" v)"; tail -5 "$T/server.log"; exit 1; }
VPID=$(pgrep -f "[v]ictim-loop-$MARK" | head -1)
check "the victim's marked process runs (host pid $VPID)" test -n "$VPID"
post "$ML" '{"name": "a", "workers": 1, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/attack.sh '"$MARK $DATA $RUNS ${VPID:-1}"'"}'
waitfor 300 is "$ML" a succeeded || bad "the attacker's run did not succeed: $(state "$ML" a)"
ALOG=$RUNS/ml/a/attempt-1/worker-0.log
cat "$ALOG"
check "each of the 8 attempts was made and blocked" test "$(grep -c '^blocked: ' "$ALOG")" = 8
check "nothing escaped from the attacker's step" bash -c "! grep -q ESCAPED '$ALOG'"
check "the attacker's own work: its log and checkpoint" \
  bash -c "grep -q 'own work done' '$ALOG' && [ \"\$(cat '$RUNS/ml/a/checkpoint/ckpt')\" = 'own checkpoint' ]"
check "the job's output says the step sandbox is on" grep -q "astraeus: step sandbox (task 0 on gpu[0-9]): on: user namespace" "$RUNS/ml/a/job.out"
grep "step sandbox" "$RUNS/ml/a/job.out"
# The job has ended (succeeded); its daemon must be gone with it.
sleep 1
none_left() { ! pgrep -af "[e]scapee-$MARK"; }
check "no process with the marker outlives the attacker's job" none_left
check "the host's /tmp has no planted file" test ! -e "/tmp/planted-$MARK"
check "the victim's process is alive" kill -0 "$VPID"
touch "$RUNS/vision/v/checkpoint/go"
waitfor 300 is "$VI" v succeeded || bad "the victim's run did not succeed: $(state "$VI" v)"
VLOG=$RUNS/vision/v/attempt-1/worker-0.log
cat "$VLOG"
check "the victim never saw the planted file, and did its work" bash -c "! grep -q ESCAPED '$VLOG' && grep -q 'own work done' '$VLOG'"
check "the victim's secret and checkpoint are intact" \
  bash -c "[ \"\$(cat '$RUNS/vision/v/checkpoint/secret')\" = 'secret of vision' ] && [ -e '$RUNS/vision/v/checkpoint/victim-done' ]"
if [ "$fails" = 0 ]; then echo PASS; exit 0; fi
echo "FAILED: $fails"; tail -20 "$T/server.log"; exit 1
