#!/usr/bin/env python3
"""A real `astraeus agent` against fake service replicas on 127.0.0.1 (issue 23, docs/agents.md
"Fencing"). usage: agent_fencing_live.py ASTRAEUS_BINARY WORK_DIR

The agent is given three addresses: a closed port (no answer), a follower (503 naming the leader)
and the leader (lease generation 5). It must reach the leader through the other two. The leader's
first heartbeat reply is a deposed leader's reply replayed (generation 4) carrying a launch: the
agent must refuse it (no worker started, its marker never created, a log line naming 4 and 5),
come back to the leader and register again, and obey the same launch at generation 5 (the
positive control: the launch's form works). The highest generation is kept in its state file.
Exit 0 when every check passed; prints FAIL lines otherwise. Bounded: about 10 s, at most 40 s.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BIN, WORK = sys.argv[1], sys.argv[2]
STALE_MARKER = os.path.join(WORK, "stale-ran")
OK_MARKER = os.path.join(WORK, "current-ran")
lock = threading.Lock()
state = {"registrations": 0, "heartbeats": 0, "follower_hits": 0, "started": set(), "acked": 0,
         "stale_sent": False}


def launch(seq, run, marker):
    return {"seq": seq, "op": "launch", "run": run, "attempt": 1, "worker": 0, "run_name": "r%d" % run,
            "workspace": "ws", "workers": 1, "gpus": [0], "argv": ["/bin/sh", "-c", "touch " + marker]}


class Handler(BaseHTTPRequestHandler):
    role = "leader"
    leader_address = ""

    def log_message(self, *a):
        pass

    def answer(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(n) or b"{}")
        if self.role == "follower":
            with lock:
                state["follower_hits"] += 1
            return self.answer(503, {"error": "unavailable: this replica is a follower", "status": "follower",
                                     "leader": "replica-b", "leader_address": self.leader_address,
                                     "generation": 5, "retry_after_s": 1}, [("Retry-After", "1")])
        with lock:
            if self.path == "/v1/agent/logs":
                return self.answer(200, {"have": 0})
            if self.path == "/v1/agent/register":
                state["registrations"] += 1
                return self.answer(200, {"machine": 1, "heartbeat_s": 0.2, "lost_after_s": 10, "adopted": [],
                                         "killed": [], "events_acked": state["acked"], "generation": 5})
            state["heartbeats"] += 1
            for e in body.get("events", []):
                state["acked"] = max(state["acked"], e.get("seq", 0))
                if e.get("kind") == "started":
                    state["started"].add(e.get("run"))
            reply = {"heartbeat_s": 0.2, "events_acked": state["acked"], "commands": [], "generation": 5}
            if not state["stale_sent"]:
                # The deposed leader's reply, replayed: generation 4, a launch of run 7.
                state["stale_sent"] = True
                reply = {"heartbeat_s": 0.2, "events_acked": state["acked"], "generation": 4,
                         "commands": [launch(1, 7, STALE_MARKER)]}
            elif state["registrations"] >= 2:
                reply["commands"] = [launch(1, 8, OK_MARKER)]
            return self.answer(200, reply)


def serve(role, leader_address=""):
    h = type("H", (Handler,), {"role": role, "leader_address": leader_address})
    s = ThreadingHTTPServer(("127.0.0.1", 0), h)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


leader = serve("leader")
lport = leader.server_address[1]
follower = serve("follower", "http://127.0.0.1:%d" % lport)
fport = follower.server_address[1]
dead = closed_port()
apis = "http://127.0.0.1:%d,http://127.0.0.1:%d/v1,http://127.0.0.1:%d" % (dead, fport, lport)
agent_dir = os.path.join(WORK, "agent")
cmd = [BIN, "agent", "--api", apis, "--token", "ast_fake", "--name", "m1", "--gpus", "1",
       "--work-dir", agent_dir, "--no-sandbox"]
if os.geteuid() == 0:
    cmd.append("--allow-root")  # CI runs as root
log_path = os.path.join(WORK, "agent.log")
with open(log_path, "w") as log:
    agent = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
deadline = time.time() + 30
while time.time() < deadline and agent.poll() is None:
    with lock:
        if 8 in state["started"]:
            break
    time.sleep(0.05)
time.sleep(0.3)  # a refused launch would have run by now too
agent.send_signal(signal.SIGTERM)
try:
    agent.wait(timeout=10)
except subprocess.TimeoutExpired:
    agent.kill()
    agent.wait()
leader.shutdown()
follower.shutdown()

text = open(log_path).read()
fails = 0


def check(what, ok):
    global fails
    if not ok:
        fails += 1
        print("FAIL: " + what)


stale_lines = [l for l in text.splitlines() if "agent.stale_generation" in l]
check("the stale reply is refused in one log line naming both generations",
      len(stale_lines) == 1 and "generation=4" in stale_lines[0] and "highest_seen=5" in stale_lines[0]
      and "commands_refused=1" in stale_lines[0])
check("run 7 (the stale launch) never started", 7 not in state["started"] and "run=r7" not in text)
check("run 7's marker was never created", not os.path.exists(STALE_MARKER))
check("run 8 (the same launch at generation 5) started", 8 in state["started"] and "agent.launched run=r8" in text)
check("run 8's marker was created", os.path.exists(OK_MARKER))
check("the agent moved past the closed port", "no answer" in text and "agent.service_moved" in text)
check("the follower was asked and named the leader",
      state["follower_hits"] >= 1 and "it names the leader http://127.0.0.1:%d" % lport in text)
check("it registered at the leader twice (before and after the stale reply)", state["registrations"] == 2)
state_file = os.path.join(agent_dir, "agent-m1.state")
check("the state file keeps generation 5",
      os.path.exists(state_file) and "generation 5\n" in open(state_file).read())
check("the agent stopped cleanly on SIGTERM", agent.returncode == 0)
if fails:
    print(text[-4000:])
print("agent fencing live: %d failed" % fails)
sys.exit(1 if fails else 0)
