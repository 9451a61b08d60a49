#!/bin/sh
# A worker for the node agents' log tests (tests/service/agents_test.sh `logs`, `logs_service_kill`):
# prints LINES numbered lines, one every PAUSE seconds; worker 1's lines are 300 bytes long and
# it prints a burst of 100 of them after its line 5 (about 30 KB at once: many shipping chunks)
# and 300 more right before it exits (about 90 KB: a run that has ended must show them all).
# Ends with one line on stderr. tests/service/agents_test.sh's expected_log prints the same text.
# Usage: agent_log_worker.sh LINES PAUSE
lines=$1; pause=$2
pad=""
[ "$RANK" = 1 ] && pad=" $(printf '%0280d' 0)"
i=1
while [ "$i" -le "$lines" ]; do
  echo "worker $RANK line $i$pad"
  if [ "$RANK" = 1 ] && [ "$i" = 5 ]; then
    k=1
    while [ "$k" -le 100 ]; do echo "worker 1 burst $k$pad"; k=$((k + 1)); done
  fi
  sleep "$pause"
  i=$((i + 1))
done
if [ "$RANK" = 1 ]; then  # a last burst, right before the exit: the exit waits until it is shipped
  k=1
  while [ "$k" -le 300 ]; do echo "worker 1 tail $k$pad"; k=$((k + 1)); done
fi
echo "worker $RANK done on stderr" >&2
