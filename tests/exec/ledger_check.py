#!/usr/bin/env python3
"""The goodput ledger of one run, recomputed from its state history to the second (spec/goodput.md
"The count"), compared category by category with the service's answer.

usage: ledger_check.py RUN_JSON GOODPUT_JSON GPUS
RUN_JSON: GET /v1/runs/{run} (its "history": when each state began, service-clock seconds);
each state counts for the seconds until the next one began, times GPUS.
GOODPUT_JSON: GET /v1/runs/{run}/goodput. The run must have ended. Running time is productive or
idle by samples and progress reports, which the history does not hold: it is checked as
productive + idle together (with the owner's wind-down, productive by itself), and the idle part
no sample or progress decided (unmeasured_gpu_hours) at most the idle part. Exit 0 when every
category matches to the GPU-second, 1 otherwise (the differences printed).
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
        return "running"
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
    ended = hist[-1]["at_s"]

    want = {}
    for i, (since, k) in enumerate(cats):
        until = cats[i + 1][0] if i + 1 < len(cats) else ended
        want[k] = want.get(k, 0) + (until - since) * gpus
    bad = 0
    g_of = lambda k: round(got.get(k, 0) * 3600)
    rows = [(k, want.get(k, 0), g_of(k)) for k in
            ["stalled", "starting", "restart", "failure", "preemption", "waiting"]]
    rows.append(("productive+idle", want.get("running", 0) + want.get("productive", 0),
                 g_of("productive") + g_of("idle")))
    for k, w, g in rows:
        mark = "ok" if w == g else "MISMATCH"
        print(f"{k:15s} expected {w:6d} GPU-s  service {g:6d} GPU-s  {mark}")
        bad += w != g
    unmeasured = round(json.load(open(sys.argv[2])).get("unmeasured_gpu_hours", 0) * 3600)
    if unmeasured > g_of("idle"):
        print(f"unmeasured {unmeasured} GPU-s is more than idle {g_of('idle')}  MISMATCH")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
