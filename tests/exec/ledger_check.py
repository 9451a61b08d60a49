#!/usr/bin/env python3
"""The goodput ledger of one run, recomputed from its state history under the minute rule
(spec/goodput.md "The count"), compared category by category with the service's answer.

usage: ledger_check.py RUN_JSON GOODPUT_JSON GPUS
RUN_JSON: GET /v1/runs/{run} (its "history": when each state began, service-clock seconds);
a minute's count takes the state that began strictly before its end; the last, partial count
takes the state the run ended from.
GOODPUT_JSON: GET /v1/runs/{run}/goodput. The run must have ended. Running minutes count as
idle (no utilization samples on a machine without NVML). Exit 0 when every category matches
to the GPU-second, 1 otherwise (the differences printed).
"""
import json
import sys


def category(entry, previous):
    state, cause = entry["state"], entry.get("cause", "")
    if state == "pending":
        if previous is None:
            return "waiting"
        if previous["state"] == "stopping" and previous.get("cause") == "preemption":
            return "preemption"
        if previous["state"] == "stopping" and previous.get("cause") == "failure":
            return "failure"
        return "waiting"
    if state == "starting":
        return "starting" if entry["attempt"] <= 1 else "restart"
    if state == "running":
        return "idle"
    if state == "stopping":
        return {"preemption": "preemption", "failure": "failure"}.get(cause, "productive")
    raise ValueError("no category for state " + state)


def main():
    run = json.load(open(sys.argv[1]))
    got = json.load(open(sys.argv[2]))["gpu_hours"]
    gpus = int(sys.argv[3])
    hist = run["history"]
    if hist[-1]["state"] not in ("succeeded", "failed", "stopped"):
        print("the run has not ended: " + hist[-1]["state"])
        return 1
    cats = []  # (since_s, category) of every state before the end
    for i, e in enumerate(hist[:-1]):
        cats.append((e["at_s"], category(e, hist[i - 1] if i > 0 else None)))
    submitted, ended = hist[0]["at_s"], hist[-1]["at_s"]

    def at(t):  # the category just before t: the last state that began strictly before t
        c = cats[0][1]
        for since, k in cats:
            if since < t:
                c = k
        return c

    want = {}
    prev = submitted
    b = (submitted // 60 + 1) * 60
    while b <= ended:
        want[at(b)] = want.get(at(b), 0) + (b - prev) * gpus
        prev = b
        b += 60
    if ended > prev:  # the last count: in the state it ended from (even one begun at `ended`)
        want[cats[-1][1]] = want.get(cats[-1][1], 0) + (ended - prev) * gpus
    bad = 0
    for k in ["productive", "idle", "stalled", "starting", "restart", "failure", "preemption", "waiting"]:
        w = want.get(k, 0)
        g = round(got.get(k, 0) * 3600)
        mark = "ok" if w == g else "MISMATCH"
        print(f"{k:11s} expected {w:6d} GPU-s  service {g:6d} GPU-s  {mark}")
        bad += w != g
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
