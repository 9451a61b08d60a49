#!/bin/sh
# A worker that tries to escape its sandbox (run by sandbox_escape_test.sh): ATTACK ARGS...
# Prints "ESCAPED: what" when an attempt works and "blocked: what" when it does not, then does
# its own work (a file in its checkpoint folder, "own work done") and exits 0.
attack=$1; shift
escaped() { echo "ESCAPED: $*"; }
blocked() { echo "blocked: $*"; }
case "$attack" in
  store)  # $1: the service's data folder; $2: the runs' root
    if cat "$1/astraeus.db" > /dev/null 2>&1; then escaped "read $1/astraeus.db"; else blocked "read the store"; fi
    if [ -n "$(ls -A "$1" 2> /dev/null)" ]; then escaped "listed $1: $(ls "$1" | tr '\n' ' ')"; else blocked "list the data folder"; fi
    if cat ../../../astraeus.db ../../../data/astraeus.db > /dev/null 2>&1; then escaped "read ../../../astraeus.db"; else blocked "read the store by a relative path"; fi
    ;;
  neighbour)  # $1: the other workspace's run folder
    if cat "$1/attempt-1/worker-0.log" > /dev/null 2>&1; then escaped "read $1/attempt-1/worker-0.log"; else blocked "read the other workspace's log"; fi
    if cat "$1/checkpoint/secret" > /dev/null 2>&1; then escaped "read the other checkpoint"; else blocked "read the other checkpoint"; fi
    if echo pwned > "$1/checkpoint/secret" 2> /dev/null; then escaped "wrote the other checkpoint"; else blocked "write the other checkpoint"; fi
    ;;
  procs)  # $1: the other run's worker's pid (as the service sees it); $2 its secret
    found=$(grep -l "$2" /proc/[0-9]*/environ 2> /dev/null | head -1)
    if [ -n "$found" ]; then escaped "read the other run's secret in $found"; else blocked "read /proc/*/environ"; fi
    n=$(ls -d /proc/[0-9]* | wc -l)
    echo "processes seen: $n"
    if kill -9 "$1" 2> /dev/null; then escaped "killed pid $1"; else blocked "kill pid $1"; fi
    ;;
  outlive)  # $1: a tag for the leftovers' command lines
    setsid sh -c "sleep 1000; : escapee-$1" < /dev/null > /dev/null 2>&1 &
    ( sh -c "sh -c 'sleep 1001; : escapee-$1' & exit 0" & ) < /dev/null > /dev/null 2>&1
    sh -c "trap '' TERM HUP; sleep 1002; : escapee-$1" < /dev/null > /dev/null 2>&1 &
    sleep 0.3
    echo "left three processes behind"
    ;;
  plant)  # $1: a file of the service's machine the worker wants truncated; $2: a folder to chown
    here=$(pwd)
    if [ "$ASTRAEUS_ATTEMPT" = 1 ]; then
      ln -sf /etc/shadow "$here/attempt-1/worker-0.log" && echo "planted /etc/shadow as my log"
      mkdir -p "$here/attempt-2" 2> /dev/null
      ln -sf "$1" "$here/attempt-2/worker-0.log" && echo "planted $1 as attempt 2's log"
      ln -sfn "$2" "$here/attempt-3" && echo "planted $2 as attempt 3's folder"
    fi
    echo "$ASTRAEUS_ATTEMPT" > "$ASTRAEUS_CHECKPOINT_DIR/attempt"
    if [ "$ASTRAEUS_ATTEMPT" -lt 3 ]; then echo "failing attempt $ASTRAEUS_ATTEMPT on purpose"; exit 1; fi
    ;;
  forge)  # $1: a pid the worker wants the restarted service to kill
    echo "$1" > "attempt-1/worker-0.pgid"
    echo "-$1" > "attempt-1/worker-0.pid"
    echo "forged pid files for $1"
    sleep 1000
    ;;
  memory)  # $1: MB to allocate (and touch), after trying to shield itself from the OOM killer
    if echo -1000 2> /dev/null > /proc/self/oom_score_adj; then escaped "set oom_score_adj -1000"; else blocked "shield itself from the OOM killer"; fi
    echo "oom_score_adj $(cat /proc/self/oom_score_adj)"
    python3 -c "b = b'x' * ($1 * 1024 * 1024); print('allocated', len(b))" 2>&1
    rc=$?
    if [ $rc = 0 ]; then escaped "allocated $1 MB"; else blocked "allocate $1 MB (rc $rc)"; fi
    ;;
  pids)  # $1: processes to start (python: a shell dies when it cannot fork)
    python3 -c '
import os, sys, signal, time
n = int(sys.argv[1]); kids = []
try:
    for i in range(n):
        pid = os.fork()
        if pid == 0:
            time.sleep(5); os._exit(0)
        kids.append(pid)
except OSError as e:
    print("fork failed after", len(kids), "children:", e)
for k in kids: os.kill(k, signal.SIGKILL)
for k in kids: os.waitpid(k, 0)
print("started", len(kids))
sys.exit(0 if len(kids) >= n else 3)' "$1"
    if [ $? = 0 ]; then escaped "ran $1 processes"; else blocked "run $1 processes"; fi
    ;;
  tmpdirs)  # $1: a tag; the machine left astraeus-bait-TAG in each of these folders
    for d in /tmp /dev/shm /var/tmp /run/lock; do
      [ -d "$d" ] || continue
      if [ -e "$d/astraeus-bait-$1" ]; then escaped "saw the machine's $d/astraeus-bait-$1"; else blocked "see the machine's file in $d"; fi
      echo planted > "$d/astraeus-planted-$1" 2> /dev/null && echo "wrote $d/astraeus-planted-$1"
    done
    ;;
  gpu)  # $1: a folder of NVIDIA device nodes nvidia0..nvidia3 (major 195)
    given=${CUDA_VISIBLE_DEVICES%%,*}; other=$(( (given + 1) % 4 ))
    if ( exec 3< "$1/nvidia$other" ) 2> "$HOME/gpu.err"; then escaped "opened GPU $other (not mine)"; else
      case "$(cat "$HOME/gpu.err")" in *"ot permitted"*) blocked "open GPU $other (not permitted)";; *) escaped "GPU $other: the kernel allowed the open: $(cat "$HOME/gpu.err")";; esac
    fi
    ( exec 3< "$1/nvidia$given" ) 2>&1 | sed "s/^/my GPU $given: /"
    ;;
esac
echo "uid $(id -u) gid $(id -g)"
echo done > "$ASTRAEUS_CHECKPOINT_DIR/own" && echo "own work done"
exit 0
