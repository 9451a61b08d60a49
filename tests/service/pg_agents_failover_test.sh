#!/usr/bin/env bash
# Node agents following the leader among two `astraeus serve --executor agents` replicas on one
# PostgreSQL database (issue 23, docs/agents.md "Several service addresses"), on a fresh database
# of ASTRAEUS_TEST_PG (skipped, 77, when unset); lease 3 s renewed every 1 s:
#  - replica A leads, B follows; an agent given B's address first, then A's, is answered 503 by
#    B naming A and registers at A (generation 1);
#  - a run launched there (a real worker process), A killed (kill -9): B leads (generation 2), the
#    agent finds A silent, moves to B and registers again; B adopts the worker (the same process
#    still runs, the run still in attempt 1 and running) and the agent remembers generation 2 in
#    its state file;
#  - b killed too, and a's address answered by a fake replaying the deposed a's answers
#    (generation 1: its registration answer, a heartbeat answer with a kill of r1's worker): the
#    agent refuses them (agent.stale_generation naming 1 and 2), and the worker lives on.
# About 20 s. Usage: pg_agents_failover_test.sh ASTRAEUS_BIN
set -u
BIN=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/pg_test_lib.sh"
pg_test_begin agents_failover curl jq psql python3
PA=""; PB=""; PFAKE=""; PG_AGENT=""
cleanup() {
    [ -n "$PG_AGENT" ] && { kill -TERM "$PG_AGENT" 2>/dev/null; for _ in $(seq 50); do kill -0 "$PG_AGENT" 2>/dev/null || break; sleep 0.1; done; kill -9 "$PG_AGENT" 2>/dev/null; }
    for p in $PA $PB $PFAKE; do { kill -9 "$p"; wait "$p"; } 2>/dev/null; done
    if [ -f "$T/agent/agent-m1.state" ]; then  # nothing a test started may outlive it
        while read -r pg _; do case "$pg" in [0-9]*) kill -KILL -- "-$pg" 2>/dev/null ;; esac; done < "$T/agent/agent-m1.state"
    fi
    pg_test_cleanup
}
trap cleanup EXIT
wait_until() { local end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do eval "$2" && return 0; sleep 0.2; done; return 1; }

# Fixed ports: each replica's advertised address is the URL the agent is given.
read -r PORT_a PORT_b < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
for r in a b; do
    port_var=PORT_$r
    printf '%s\n' \
        '{"organization": "acme", "cluster": "c1",' \
        ' "pools": [{"name": "default", "machines": []}], "lease_s": 3600,' \
        ' "agents": {"heartbeat_s": 1, "lost_after_s": 20},' \
        " \"lease_duration_s\": 3, \"lease_renew_s\": 1, \"replica\": \"r$r\", \"address\": \"http://127.0.0.1:${!port_var}\"," \
        " \"store\": {\"postgresql\": \"$PG\"}}" > "$T/$r.json"
done
A() { "$BIN" admin "$@" --config "$T/a.json" --data-dir "$T/admin"; }
A init --org acme --cluster c1 >/dev/null || { echo "FAIL admin init"; exit 1; }
A workspace add ml >/dev/null || { echo "FAIL admin workspace add"; exit 1; }
WT=$(A token create --workspace ml 2>/dev/null)
AT=$(A token create --agent 2>/dev/null)

start() {  # start R: serve replica R on its fixed port
    local r=$1 port_var=PORT_$1
    "$BIN" serve --executor agents --config "$T/$r.json" --data-dir "$T/data-$r" --listen "127.0.0.1:${!port_var}" \
        2>>"$T/serve-$r.log" &
    if [ "$r" = a ]; then PA=$!; else PB=$!; fi
}
url() { local port_var=PORT_$1; echo "http://127.0.0.1:${!port_var}"; }
ready_code() { curl -sS -o /dev/null -w '%{http_code}' "$(url "$1")/readyz" 2>/dev/null; }
run_field() { curl -sS -H "Authorization: Bearer $WT" "$(url "$1")/v1/runs/r1" 2>/dev/null | jq -r "$2"; }

start a
wait_until 15 '[ "$(ready_code a)" = 200 ]' || { echo "FAIL replica a does not lead: $(tail -n 5 "$T/serve-a.log")"; exit 1; }
start b
wait_until 15 '[ "$(ready_code b)" = 503 ]' || { echo "FAIL replica b does not follow: $(tail -n 5 "$T/serve-b.log")"; exit 1; }

root=(); [ "$(id -u)" = 0 ] && root=(--allow-root)  # CI runs as root
"$BIN" agent --api "$(url b),$(url a)" --token "$AT" --name m1 --gpus 2 --work-dir "$T/agent" --no-sandbox \
    "${root[@]}" > "$T/agent.log" 2>&1 &
PG_AGENT=$!
wait_until 20 'grep -q "agent.registered.*service=$(url a) generation=1" "$T/agent.log"'
check "the agent, told b first, is sent to the leader a by b's 503 and registers there at generation 1" \
    grep -q "agent.service_moved from=$(url b) to=$(url a) why=\"a follower; it names the leader $(url a)\"" "$T/agent.log"
check "... and registered at a, generation 1" grep -q "agent.registered.*service=$(url a) generation=1" "$T/agent.log"

code=$(curl -sS -o "$T/post.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $WT" "$(url a)/v1/runs" \
    -d "{\"name\": \"r1\", \"workers\": 1, \"gpus_per_worker\": 1, \"command\": \"$HERE/agent_worker.sh 100000 0.2\"}")
check "r1 acknowledged by a (HTTP $code)" test "$code" = 201
wait_until 20 '[ "$(run_field a .state)" = running ]'
check "r1 runs on the agent's machine" test "$(run_field a .state)" = running
pid=$(grep -o 'agent.launched run=r1 .*pid=[0-9]*' "$T/agent.log" | head -n 1 | sed 's/.*pid=//')
check "the agent launched r1's worker (pid '$pid')" test -n "$pid"

kill -9 "$PA"; wait "$PA" 2>/dev/null; PA=""
t0=$(date +%s.%N)
wait_until 15 '[ "$(ready_code b)" = 200 ]'
check "b leads after a's kill -9: generation 2" test "$(curl -sS "$(url b)/readyz" | jq -r '"\(.role) \(.generation)"')" = "leader 2"
while [ $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print (b - a < 20) }') = 1 ]; do
    grep -q "agent.registered.*service=$(url b) generation=2" "$T/agent.log" && break; sleep 0.05
done
echo "     the agent registered at b $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s after a's kill -9 (lease 3 s, renewal 1 s, agent retry 1 s; printed, not asserted)"
check "the agent moved to b when a stopped answering" grep -q "agent.service_moved from=$(url a) to=$(url b) why=\"no answer" "$T/agent.log"
check "the agent registered at b at generation 2, its worker adopted" \
    grep -q "agent.registered.*service=$(url b) generation=2 adopted=1" "$T/agent.log"
check "r1's worker process kept running through the take-over (pid $pid)" kill -0 "$pid"
wait_until 10 '[ "$(run_field b .state)" = running ]'
check "r1 still running on b, attempt 1 ($(run_field b '"\(.state) \(.attempts)"'))" test "$(run_field b '"\(.state) \(.attempts)"')" = "running 1"
check "the agent remembers generation 2 (state file)" grep -qx "generation 2" "$T/agent/agent-m1.state"
check "the agent refused nothing (no stale generation met)" bash -c "! grep -q agent.stale_generation '$T/agent.log'"

# The deposed leader's answers replayed on a's address; b gone, so the agent goes round both.
kill -9 "$PB"; wait "$PB" 2>/dev/null; PB=""
python3 - "$PORT_a" > "$T/fake.log" 2>&1 <<'PY' &
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
kill = {"seq": 1, "op": "kill", "run": 1, "attempt": 1, "worker": 0}
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/v1/agent/register":
            body = {"machine": 1, "heartbeat_s": 1, "lost_after_s": 20, "adopted": [],
                    "killed": [{"run": 1, "attempt": 1, "worker": 0}], "events_acked": 0, "generation": 1}
        else:
            body = {"commands": [kill], "events_acked": 0, "heartbeat_s": 1, "generation": 1}
        data = json.dumps(body).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
PFAKE=$!
wait_until 15 '[ "$(grep -c "agent.stale_generation.*generation=1 highest_seen=2" "$T/agent.log")" -ge 2 ]'
check "the agent refuses the deposed leader's replayed answers (generation 1 < 2), logged naming both" \
    grep -q "agent.stale_generation reply=registration generation=1 highest_seen=2 service=$(url a)" "$T/agent.log"
check "r1's worker lives on: the deposed leader's kill was not applied (pid $pid)" kill -0 "$pid"
check "no signal was sent by the agent" bash -c "! grep -q 'agent.signal' '$T/agent.log'"
check "the agent still remembers generation 2" grep -qx "generation 2" "$T/agent/agent-m1.state"

echo "$passes passed, $fails failed"
if [ $fails -gt 0 ]; then tail -n 30 "$T/agent.log"; tail -n 15 "$T/serve-a.log" "$T/serve-b.log"; exit 1; fi
exit 0
