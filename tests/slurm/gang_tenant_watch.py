#!/usr/bin/env python3
"""The gang inside its tenant on Slurm (tests/slurm/serve_slurm_gang_tenant_test.sh).

sample OUT API TOKEN SECONDS: every ~1 s for SECONDS, one JSON line to OUT with Slurm's view
  (`scontrol show node -o`: GPUs allocated per node, whoever holds them; `squeue`: the
  astraeus-* jobs) and the service's (GET /fairness: pending runs, their reasons and since when,
  the service clock; GET /runs: states; the gang's run, attempts and ledger).
check OUT GANG SUBMIT_REAL LEASE_S STARVATION_S TIME_SCALE: the assertions (exit 1 with the
  reasons), from the samples alone; prints the figures.
"""
import json
import subprocess
import sys
import time
import urllib.request
from datetime import datetime


def slurm(*args):
    return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout


def nodes_alloc():
    """node -> GPUs Slurm has allocated on it (any job's)."""
    out = {}
    for line in slurm("scontrol", "show", "node", "-o").splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if "NodeName" not in f:
            continue
        alloc = 0
        for tres in f.get("AllocTRES", "").split(","):
            if tres.startswith("gres/gpu="):
                alloc = int(tres.split("=", 1)[1])
        out[f["NodeName"]] = {"alloc": alloc, "state": f.get("State", "")}
    return out


def hostnames(nodelist):
    if not nodelist or nodelist.startswith("("):
        return []
    return slurm("scontrol", "show", "hostnames", nodelist).split()


def jobs():
    out = []
    for line in slurm("squeue", "-h", "-o", "%i|%j|%T|%b|%Q|%n|%N|%r").splitlines():
        i, name, state, gres, prio, req, nodes, reason = line.split("|", 7)
        if name.startswith("astraeus-"):
            # A PENDING job with a priority is released on the nodes Astraeus chose (ReqNodeList):
            # its GPUs there are promised to it, not idle; a held one has priority 0.
            released = state == "PENDING" and prio.strip() not in ("", "0")
            out.append({"id": i, "name": name, "state": state, "gres": gres,
                        "nodes": hostnames(nodes) if state == "RUNNING" else [],
                        "released_on": hostnames(req) if released else [], "reason": reason})
    return out


def api(base, token, path):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.load(r)


def epoch(rfc3339):
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def sample(out, base, token, seconds, gang):
    end = time.time() + float(seconds)
    with open(out, "a") as f:
        while time.time() < end:
            t0 = time.time()
            s = {"t": t0, "nodes": nodes_alloc(), "jobs": jobs()}
            try:
                fair = api(base, token, "/fairness")
                s["at"] = epoch(fair["pools"][0]["at"])
                s["free_gpus"] = fair["pools"][0]["free_gpus"]
                s["pending"] = [{"run": p["run"], "gpus": p["gpus"], "reason": p["reason"],
                                 "since": epoch(p["waiting_since"])} for p in fair["pending"]]
                s["runs"] = {r["name"]: r["state"] for r in api(base, token, "/runs?limit=100")["runs"]}
                g = api(base, token, "/runs/" + gang)
                s["gang"] = {"state": g["state"], "attempts": g["attempts"],
                             "machines": [w.get("machine") for w in g["worker_list"]],
                             "reason": g.get("reason", ""), "submitted": epoch(g["submitted_at"])}
                if "started_at" in g:
                    s["gang"]["started"] = epoch(g["started_at"])
                gp = api(base, token, "/runs/%s/goodput" % gang)
                s["gang"]["allocated_h"] = gp["allocated_gpu_hours"]
                s["gang"]["waiting_h"] = gp["waiting_gpu_hours"]
            except Exception as e:  # a sample without the service's view is left out by check
                s["api_error"] = str(e)
            s["t_end"] = time.time()
            f.write(json.dumps(s) + "\n")
            f.flush()
            time.sleep(max(0.0, 1.0 - (time.time() - t0)))


def check(out, gang, submit_real, lease_s, starvation_s, scale):
    submit_real, lease_s, starvation_s, scale = float(submit_real), float(lease_s), float(starvation_s), float(scale)
    lease_real, bound_real = lease_s / scale, starvation_s / scale
    samples = [json.loads(l) for l in open(out)]
    samples = [s for s in samples if "api_error" not in s]
    bad = []
    gang_job = "astraeus-ml-" + gang

    # 1. The gang's first start: in Slurm (its job RUNNING on 2 distinct nodes) and in the API.
    first = next((s for s in samples if any(j["name"] == gang_job and j["state"] == "RUNNING" for j in s["jobs"])), None)
    if first is None:
        bad.append("the gang's job never RUNNING in %d samples (%.0f s after its submission)" %
                   (len(samples), samples[-1]["t"] - submit_real if samples else 0))
    else:
        waited = first["t"] - submit_real
        job = next(j for j in first["jobs"] if j["name"] == gang_job)
        small_left = sorted(r for r, st in first["runs"].items() if r != gang and st not in ("succeeded", "failed", "cancelled"))
        print("gang %s RUNNING in Slurm %.1f s after its submission (bound %.0f s = %.0f service-s), on %s; "
              "small runs not done then: %d" % (gang, waited, bound_real, starvation_s, ",".join(job["nodes"]), len(small_left)))
        if waited > bound_real + 2:  # +2: the sample period and Slurm's start
            bad.append("the gang started %.1f s after its submission, past the starvation bound (%.0f s)" % (waited, bound_real))
        if len(set(job["nodes"])) != 2:
            bad.append("the gang's job runs on %s (want 2 distinct nodes)" % job["nodes"])
        if len(small_left) < 5:
            bad.append("only %d small runs were not done at the gang's start" % len(small_left))
        # Its ledger while it waited: waiting, nothing held (the last sample before its start).
        before = [s for s in samples if s["t"] < first["t"] and s["gang"]["state"] == "pending" and s["gang"]["attempts"] == 0]
        if before:
            s = before[-1]
            want = 16 * (s["at"] - s["gang"]["submitted"]) / 3600  # 16 GPUs asked for since its submission
            print("gang's ledger before its start: allocated %.4f GPU-h, waiting %.4f GPU-h (16 GPUs x %.0f service-s: %.4f)" %
                  (s["gang"]["allocated_h"], s["gang"]["waiting_h"], s["at"] - s["gang"]["submitted"], want))
            if s["gang"]["allocated_h"] != 0:
                bad.append("the gang was charged %.4f GPU-h before it started" % s["gang"]["allocated_h"])
        else:  # placed at once: its ledger after the start (below) says the same
            print("no sample of the gang pending before its start")
        # Its wait until its first start, once the ledger has it (the count is brought up to date
        # at events, not at every request): 16 GPUs x (first start - submission) as waiting.
        ran1 = [s for s in samples if s["gang"]["attempts"] == 1 and s["gang"]["state"] in ("running", "stopping")]
        if ran1 and "started" in ran1[-1]["gang"]:
            g = ran1[-1]["gang"]
            want = 16 * (g["started"] - g["submitted"]) / 3600
            waited_h = max(x["gang"]["waiting_h"] for x in ran1)
            print("gang's waiting in its ledger after its first start: %.4f GPU-h (16 GPUs x %.0f service-s to its start: %.4f)" %
                  (waited_h, g["started"] - g["submitted"], want))
            if abs(waited_h - want) > 0.05 + 0.05 * want:
                bad.append("the gang's wait in its ledger: %.4f GPU-h waiting (want %.4f)" % (waited_h, want))
        else:
            bad.append("no sample of the gang running its first attempt")
        # Held: what Slurm showed it RUNNING, no more (sample periods, at the service's clock rate).
        ran = sum(b["t"] - a["t"] for a, b in zip(samples, samples[1:])
                  if any(j["name"] == gang_job and j["state"] == "RUNNING" for j in a["jobs"]))
        held = samples[-1]["gang"]["allocated_h"] * 3600 / 16 / scale
        print("gang held %.1f s in its ledger (allocated %.4f GPU-h), RUNNING %.1f s in Slurm's samples" %
              (held, samples[-1]["gang"]["allocated_h"], ran))
        if held > ran + 3 + 0.1 * ran:
            bad.append("the gang was charged %.1f s of 16 GPUs, Slurm ran it %.1f s" % (held, ran))

    # 1b. Its due inside its tenant: eleven runs share 32 GPUs, so the gang (16 GPUs) is due one
    #     lease in 16 / (32/11) = 5.5, a wait of 4.5 leases, plus the lease rotations until two
    #     whole nodes' runs are at a lease end (measured with the rules: 61-74 s): every wait
    #     (submission or lease end to its next start, the last one open at the end) at most 7
    #     leases (84 s), below T_starve (8 leases), which is what it waits without the rules.
    due_wait = 7 * lease_real
    waits, since = [], submit_real
    for s in samples:
        running = any(j["name"] == gang_job and j["state"] == "RUNNING" for j in s["jobs"])
        if running and since is not None:
            waits.append(s["t"] - since)
            since = None
        elif not running and since is None:
            since = s["t"]
    if since is not None:
        waits.append(samples[-1]["t"] - since)
    print("gang's waits (s, the last one open at the end): %s; starts: %d" %
          (", ".join("%.0f" % w for w in waits), len(waits) - (since is not None)))
    if waits and max(waits) > due_wait:
        bad.append("the gang waited %.0f s at a stretch (its due: at most %.0f s, 7 leases)" % (max(waits), due_wait))

    # 2. Idle GPUs beside a waiting 1 x 4 run: a node with >= 4 GPUs free in Slurm while a 1 x 4
    #    run has waited more than one lease (service clock). GPUs of a job Astraeus released on
    #    the node that Slurm has not started yet (PENDING with a priority, its ReqNodeList) are not
    #    free. GPUs the rounds hold for the gang stay idle while its GPUs add up, at most one lease
    #    (the bound of tests/service/gang_in_tenant_test.cpp), or longer when the waiting run's
    #    reason says they are held for the gang: a stretch fails past one lease + 2 s (sampling).
    since, worst = None, 0.0
    for s in samples:
        free = {n: 8 - v["alloc"] for n, v in s["nodes"].items() if v["state"].split("+")[0] in ("IDLE", "MIXED", "ALLOCATED")}
        for j in s["jobs"]:
            for n in j.get("released_on", []):
                if n in free:
                    free[n] -= 8 if j["name"] == gang_job else 4
        fit = [n for n, f in free.items() if f >= 4]
        waiting = [p for p in s["pending"] if p["gpus"] == 4 and s["at"] - p["since"] > lease_s]
        unexplained = [p for p in waiting if not p["reason"].startswith("GPUs held for the waiting gang")]
        if fit and unexplained:
            since = s["t"] if since is None else since
            worst = max(worst, s["t"] - since)
            if s["t"] - since > lease_real + 2:
                bad.append("from %.1f s to %.1f s: nodes %s have >= 4 GPUs free in Slurm while %s waited > 1 lease (%s)" %
                           (since - submit_real, s["t"] - submit_real, ",".join("%s:%d" % (n, free[n]) for n in fit),
                            unexplained[0]["run"], unexplained[0]["reason"]))
        else:
            since = None
    print("longest stretch of >= 4 GPUs free in Slurm beside a 1 x 4 run waiting over a lease: %.1f s (lease %.0f s)" %
          (worst, lease_real))
    # 4. Each RUNNING job asks for its GPUs (squeue %b). (The nodes' AllocTRES lags squeue by a
    #    second or two at a job's start and end: not compared.)
    for s in samples:
        for j in s["jobs"]:
            per_node = 8 if j["name"] == gang_job else 4
            if j["state"] == "RUNNING" and j["gres"] != "gres:gpu:%d" % per_node:
                bad.append("at %.1f s: job %s (%s) RUNNING with '%s' (want gres:gpu:%d)" %
                           (s["t"] - submit_real, j["id"], j["name"], j["gres"], per_node))
    for b in sorted(set(bad), key=bad.index)[:12]:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "sample":
        sample(*sys.argv[2:])
    else:
        sys.exit(check(*sys.argv[2:]))
