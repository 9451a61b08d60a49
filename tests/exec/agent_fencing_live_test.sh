#!/usr/bin/env bash
# usage: agent_fencing_live_test.sh ASTRAEUS_BINARY
# A real `astraeus agent` given three addresses (a closed port, a follower, the leader) against
# fake replicas (agent_fencing_live.py): it reaches the leader, refuses a deposed leader's replayed
# reply (lease generation 4 below 5: no worker started) and obeys the same launch at generation 5.
# Skipped (exit 77) without python3. Bounded: about 10 s.
set -u
command -v python3 > /dev/null || { echo "SKIP: python3 not installed"; exit 77; }
WORK=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
timeout 60 python3 "$(dirname "$0")/agent_fencing_live.py" "$1" "$WORK"
