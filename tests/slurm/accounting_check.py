#!/usr/bin/env python3
"""One run's accounting in `astraeus serve --executor slurm` against Slurm's own records.

usage: accounting_check.py SACCT ATTEMPTS LEDGER IMPORT JOB SUBMITTED_S SEGMENTS GPUS TOL

SACCT: `sacct -a -X -D -P --format=JobID,JobName,Account,Partition,State,Submit,Start,End,
NodeList,AllocTRES,ReqTRES` of the run's job; ATTEMPTS: the store's "number|started_s|ended_s|
outcome" rows; LEDGER: GET /runs/{run}/goodput; IMPORT: `astraeus goodput import-slurm SACCT --by
run --json`. Asserts, printing each measured difference:
 1. SEGMENTS segments of GPUS GPUs and as many attempts (not resubmitted, not lost), each start
    and end within TOL seconds of Slurm's;
 2. the held GPU-seconds to the second: the attempts x GPUS against import-slurm's
    slurm_allocated_gpu_seconds, within GPUS x the boundary differences of 1.;
 3. the minute counts: the service's ledger against import-slurm's, within what the per-boundary
    differences imply: a boundary (submission, each start, each end) whose two times fall in
    different UTC minutes can move a whole minute (60 s x GPUS), one in the same minute only its
    seconds; and the run's end: the service ends it at its last segment's End, the records when
    its held job was cancelled, so their last partial minute may differ (held vs waiting);
 4. not counted twice: the ledger never holds more than the minutes from submission to the end.
Exits non-zero (AssertionError) on the first that fails.
"""
import json
import re
import sys
from datetime import datetime, timezone


def t(s):
    return int(datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp())


sacct, attempts, ledger_file, import_file, job = sys.argv[1:6]
submitted, want, G, tol = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8]), float(sys.argv[9])
lines = [l.rstrip("\n").split("|") for l in open(sacct)]
col = {h: i for i, h in enumerate(lines[0])}
rows = lines[1:]
segs = [(t(r[col["Start"]]), t(r[col["End"]]), int(re.search(r"gres/gpu=(\d+)", r[col["AllocTRES"]]).group(1)))
        for r in rows if r[col["Start"]] not in ("Unknown", "None") and r[col["NodeList"]] != "None assigned"]
atts = [tuple(int(x) for x in l.split("|")[1:3]) for l in open(attempts) if l.strip()]
print("slurm segments:", segs)
print("astraeus attempts:", atts)
assert len(segs) == want and len(atts) == want, f"{want} segments and attempts: not resubmitted, not lost"
# 1. Each segment against its attempt.
worst = 0
for (s0, s1, g), (a0, a1) in zip(segs, atts):
    d0, d1 = s0 - a0, s1 - a1
    worst = max(worst, abs(d0), abs(d1))
    print(f"segment {s0}..{s1} ({g} GPUs, {g * (s1 - s0)} GPU-s) vs attempt {a0}..{a1} "
          f"({G * (a1 - a0)} GPU-s): start {d0:+d} s, end {d1:+d} s")
    assert g == G, (g, G)
    assert abs(d0) <= tol and abs(d1) <= tol, (d0, d1)
print(f"per segment: every start and end within {worst} s of Slurm's (tolerance {tol:g} s)")
# 2. Held GPU-seconds to the second.
imp = {r["run"]: r for r in json.load(open(import_file))["rows"]}[job]
exact = imp["slurm_allocated_gpu_seconds"]
assert exact == sum(g * (s1 - s0) for s0, s1, g in segs), (exact, segs)
held_s = sum(G * (a1 - a0) for a0, a1 in atts)
exact_allowed = sum(G * (abs(s0 - a0) + abs(s1 - a1)) for (s0, s1, _), (a0, a1) in zip(segs, atts))
print(f"held GPU-seconds to the second: service {held_s}, import-slurm {exact} (allowed difference {exact_allowed})")
assert abs(held_s - exact) <= exact_allowed, (held_s, exact, exact_allowed)
# 3. Minute counts.
ledger = round(json.load(open(ledger_file))["allocated_gpu_hours"] * 3600)
imported = round(imp["allocated_gpu_hours"] * 3600)
pairs = [(submitted, min(t(r[col["Submit"]]) for r in rows))] + \
        [(a, s) for (s0, s1, _), (a0, a1) in zip(segs, atts) for a, s in ((a0, s0), (a1, s1))]
allowed = sum(G * (60 if a // 60 != s // 60 else abs(a - s)) for a, s in pairs)
end = segs[-1][1]
if rows[-1][col["NodeList"]] == "None assigned":
    allowed += G * (end - max(end // 60 * 60, pairs[0][0]))  # from the service's submission if later
print(f"held GPU-seconds: service ledger {ledger}, import-slurm {imported} (Slurm exact: {exact}); "
      f"difference {ledger - imported}, allowed {allowed} (boundaries {pairs})")
assert abs(ledger - imported) <= allowed, (ledger, imported, allowed)
# 4. Not counted twice.
assert ledger <= G * ((end // 60 + 1) * 60 - pairs[0][0] // 60 * 60), ledger
print("PASS")
