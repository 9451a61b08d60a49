#!/bin/bash
# `astraeus step-sandbox` (a Slurm step's sandbox, exec/sandbox/step_sandbox.hpp) without Slurm:
# run as a non-root user (nobody), as a step is, it must: run the command as that uid in a pid
# namespace of its own (the command is pid 2, its /proc shows only the namespace); cover the
# hidden folders (a secret there is gone, an empty folder instead) and bind the kept folder back
# (written through, seen on the host); give a private /tmp (a file planted there is not on the
# host's); end a setsid double-fork daemon with the command; pass the command's exit code and
# death signal on; pass a signal sent to the step's task (not by its parent) to the worker once;
# kill the step (its pid namespace) once its attempt file names a newer attempt.
# Skipped (77) when not root (it needs another user) or without unprivileged user namespaces.
# usage: step_sandbox_test.sh ASTRAEUS_BINARY
set -u
BIN=$1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (to run the step as user nobody)"; exit 77; }
runuser -u nobody -- unshare -U true 2>/dev/null || { echo "SKIP: no unprivileged user namespaces here"; exit 77; }
W=$(mktemp -d /var/tmp/step-sandbox-test.XXXXXX); chmod 755 "$W"
MARK="stepbox$$x$RANDOM"
trap 'pkill -KILL -f "[e]scapee-$MARK"; rm -f "/tmp/planted-$MARK"; rm -rf "$W"' EXIT
mkdir -p "$W/data" "$W/runs/a/ckpt" "$W/runs/b"
echo secret > "$W/data/store"; echo other > "$W/runs/b/secret"
chown -R nobody "$W/runs/a"; chmod 711 "$W/runs"
fails=0
check() { local what=$1; shift; if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi; }
box() { runuser -u nobody -- "$BIN" step-sandbox --hide "$W/data" --hide "$W/runs" --keep "$W/runs/a" -- "$@"; }

out=$(box bash -c 'echo "uid $(id -u) pid $$ procs $(ls /proc | grep -c "^[0-9]")"; ls -A '"$W/data"' | wc -l; ls '"$W/runs"';
  cat '"$W/runs/b/secret"' 2>&1; echo mine > '"$W/runs/a/ckpt/f"'; echo planted > /tmp/planted-'"$MARK"';
  setsid bash -c "(bash -c '"'"'sleep 60; : escapee-'"$MARK"''"'"' < /dev/null > /dev/null 2>&1 &)" < /dev/null > /dev/null 2>&1; sleep 0.2' 2>&1)
echo "$out"
check "runs as nobody, pid 2 of its own namespace, /proc of the namespace" \
  grep -qE "^uid $(id -u nobody) pid 2 procs [2-9]$" <<< "$out"
check "the hidden folder is empty (the store is gone)" grep -qx 0 <<< "$out"
check "the runs' root shows only the kept run" grep -qx a <<< "$out"
check "the other run's secret is gone" grep -q "runs/b/secret: No such file" <<< "$out"
check "the kept folder is written through" test "$(cat "$W/runs/a/ckpt/f" 2>/dev/null)" = mine
check "the step's /tmp is its own" test ! -e "/tmp/planted-$MARK"
check "the status line says what is on" grep -q "step sandbox: on: user namespace (uid $(id -u nobody) mapped to itself)" <<< "$out"
sleep 0.5
none_left() { ! pgrep -af "[e]scapee-$MARK"; }
check "the setsid double-fork daemon ended with the step" none_left
box bash -c 'exit 7' 2>/dev/null; rc=$?
check "the exit code is the worker's (7: $rc)" test "$rc" = 7
box bash -c 'kill -USR2 $$' 2>/dev/null; rc=$?
check "a worker's death signal is the task's (USR2: 128+12, got $rc)" test "$rc" = 140
box /nonexistent-$MARK 2>/dev/null; rc=$?
check "a command that cannot run: 127 (got $rc)" test "$rc" = 127
runuser -u nobody -- "$BIN" step-sandbox --hide relative -- true 2>/dev/null; rc=$?
check "a relative --hide is refused: 2 (got $rc)" test "$rc" = 2
# A signal to the task from someone else than its parent: to the worker, once.
box bash -c 'n=0; trap "n=\$((n+1))" TERM; echo up > '"$W/runs/a/up"'; for i in $(seq 30); do sleep 0.1; done; echo "terms $n" > '"$W/runs/a/terms"'' 2>/dev/null &
for _ in $(seq 50); do [ -e "$W/runs/a/up" ] && break; sleep 0.1; done
TASK=""  # the step's task: the step-sandbox process whose parent is runuser (not the init)
for p in $(pgrep -f "^$BIN step-sandbox"); do
  ps -o args= -p "$(ps -o ppid= -p "$p" | tr -d ' ')" | grep -q '^runuser' && TASK=$p
done
kill -TERM "$TASK"
wait
check "a TERM sent to the task reaches the worker once" test "$(cat "$W/runs/a/terms" 2>/dev/null)" = "terms 1"
# A stale attempt (attempt_guard.hpp): while the attempt file names the step's own attempt the
# worker runs on; once it names a newer one, the step's pid namespace is killed (137) with its
# setsid daemon, and the step says why. A step whose file was just written waits 1 s to start.
# The file lies where the Slurm executor puts it: the service's folder under the folder of all
# runs, which the step hides (only the run's own folder is bound back), 0711 / 0644 and root's, so
# that the step's user can neither rewrite it nor rename another file over it.
mkdir -m 0711 "$W/runs/.attempts"
AF="$W/runs/.attempts/a"
echo "1 0" > "$AF"; chmod 644 "$AF"
runuser -u nobody -- bash -c "echo '1 0' > '$AF'" 2>/dev/null; rc=$?
check "the step's user cannot rewrite the attempt file (got $rc)" test "$rc" != 0
runuser -u nobody -- bash -c "echo '1 0' > '$W/runs/a/f' && mv -f '$W/runs/a/f' '$AF'" 2>/dev/null; rc=$?
check "the step's user cannot rename a file over it (got $rc)" test "$rc" != 0
guard() { runuser -u nobody -- "$BIN" step-sandbox --hide "$W/runs" --keep "$W/runs/a" --attempt-file "$AF" -- "$@"; }
guard bash -c 'sleep 0.6; exit 0' 2>/dev/null; rc=$?
check "the step's own attempt in the file: the worker runs on (0, got $rc)" test "$rc" = 0
guard bash -c 'setsid bash -c "sleep 20; : stale-'"$MARK"'" < /dev/null > /dev/null 2>&1 & echo up > '"$W/runs/a/stale-up"'; exec sleep 20' 2> "$W/stale.err" &
GPID=$!
for _ in $(seq 100); do [ -e "$W/runs/a/stale-up" ] && break; sleep 0.1; done
check "the stale step's daemon runs before the change" pgrep -f "[s]tale-$MARK"
printf '2 %s\n' "$(date +%s%3N)" > "$AF.new" && mv "$AF.new" "$AF"
wait "$GPID"; rc=$?
check "a newer attempt in the file: the step is killed (137, got $rc)" test "$rc" = 137
sleep 0.2
check "no process of the stale step is left" bash -c '! pgrep -af "[s]tale-'"$MARK"'"'
check "the step says why" grep -q "attempt 1 is stale: $AF names attempt 2" "$W/stale.err"
written=$(date +%s%3N); printf '3 %s\n' "$written" > "$AF.new" && mv "$AF.new" "$AF"
started=$(guard bash -c 'date +%s%3N' 2>/dev/null)
check "a new attempt's worker starts 1 s after the write or later ($((started - written)) ms)" test "$((started - written))" -ge 1000
[ "$fails" = 0 ] && { echo PASS; exit 0; }
echo "FAILED: $fails"; exit 1
