#!/usr/bin/env python3
"""Records when a run's state changes, on this test's own clock (not the service's).

usage: run_state_poller.py API TOKEN RUN OUT
Polls GET API/runs/RUN every 0.05 s and appends "UNIX_TIME STATE ATTEMPTS" to OUT (flushed) each
time (state, attempts) changes; UNIX_TIME (seconds, 3 decimals) is taken when the answer arrived.
Ends when the run has ended (stopped, succeeded, failed) or after 600 s; a failed request is
retried. A change is seen at most one poll (0.05 s plus the request's time) after it happened.
"""
import json
import sys
import time
import urllib.request

api, token, run, out = sys.argv[1:5]
req = urllib.request.Request(f"{api}/runs/{run}", headers={"Authorization": f"Bearer {token}"})
last = None
deadline = time.time() + 600
with open(out, "a") as f:
    while time.time() < deadline:
        try:
            d = json.load(urllib.request.urlopen(req, timeout=5))
        except Exception:  # the service busy or restarting: poll again
            time.sleep(0.05)
            continue
        now = time.time()
        cur = (d["state"], d["attempts"])
        if cur != last:
            f.write(f"{now:.3f} {cur[0]} {cur[1]}\n")
            f.flush()
            last = cur
        if d["state"] in ("stopped", "succeeded", "failed"):
            break
        time.sleep(0.05)
