#!/usr/bin/env python3
"""A run's failure, preemption and restart GPU-seconds against the gaps a test measured itself.

usage: interruptions_check.py STATES GOODPUT_JSON GPUS TOL_S KIND...
STATES: run_state_poller.py's record ("UNIX_TIME STATE ATTEMPTS" per change, the test's clock);
GOODPUT_JSON: GET /runs/{run}/goodput after the run ended; KIND: what interrupted attempt 1, 2,
... in order, "failure" or "preemption". For each interruption k (of attempt k):
  its gap  = from the first time the run was seen not running on attempt k (after running on it)
             to the first time it was seen on attempt k + 1 (placed again);
  restart  = from that placement to the first time it was seen running on attempt k + 1.
Expected: gpu_hours[KIND] = GPUS x the sum of its gaps, gpu_hours["restart"] = GPUS x the sum of
the restarts, each within GPUS x TOL_S per event (the polls' delay and the service's whole-second
clock). Prints every measured gap and the service's figures; exit 1 on a mismatch.
"""
import json
import sys

states_file, goodput_file, gpus, tol = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
kinds = sys.argv[5:]
seen = [(float(t), s, int(a)) for t, s, a in (l.split() for l in open(states_file) if l.strip())]
print("seen by the test:", " | ".join(f"{t:.2f} {s} {a}" for t, s, a in seen))
got = {k: json.load(open(goodput_file))["gpu_hours"].get(k, 0) * 3600 for k in ("failure", "preemption", "restart")}


def first(pred, after=0.0):
    return next((t for t, s, a in seen if t >= after and pred(s, a)), None)


want = {"failure": 0.0, "preemption": 0.0, "restart": 0.0}
events = {"failure": 0, "preemption": 0, "restart": 0}
for k, kind in enumerate(kinds, start=1):
    ran = first(lambda s, a: s == "running" and a == k)
    left = first(lambda s, a: not (s == "running" and a == k), ran)
    placed = first(lambda s, a: a == k + 1)
    running = first(lambda s, a: s == "running" and a == k + 1)
    assert None not in (ran, left, placed, running), f"attempt {k}: {ran} {left} {placed} {running}"
    print(f"interruption {k} ({kind}): not running at {left:.2f}, placed again {placed - left:.2f} s later, "
          f"running {running - placed:.2f} s after that")
    want[kind] += gpus * (placed - left)
    want["restart"] += gpus * (running - placed)
    events[kind] += 1
    events["restart"] += 1
bad = 0
for k in ("failure", "preemption", "restart"):
    allowed = gpus * tol * max(1, events[k])
    ok = abs(got[k] - want[k]) <= allowed
    print(f"{k}: ledger {got[k]:.0f} GPU-s, measured {want[k]:.1f} GPU-s ({events[k]} event(s)), "
          f"difference {got[k] - want[k]:+.1f}, allowed {allowed:g}: {'ok' if ok else 'MISMATCH'}")
    bad += not ok
sys.exit(1 if bad else 0)
