#!/usr/bin/env python3
"""Two whole-cluster gangs of equal tenants, many random pairs, each lease-end rule.

Each pair: 1x8 GPUs, tenants A and B (weight 1 each), one 8-GPU gang each; a at 0 and b at a
random offset in [0, 1800) s, each with a random run time in [900, 28800) s (uniform, seed
given). Every pair is simulated (`astraeus simulate`, default mode, lease 900 s, T_starve
21600 s, checkpoint 5 s, restore 20 s) with each variant's flags; the table sums the
preemptions (lease-end swaps counted as resumes, plus mid-lease preemptions) and gives the mean
of the pairs' average JCT, the mean of A's JCT and B's JCT and the p5 of F_j over all jobs.

    python3 scripts/two_gangs_pairs.py --pairs 2000 --bin build/release/astraeus

Python 3 standard library only; docs/policies.md ("Two gangs") has the figures.
"""
import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile

VARIANTS = [
    ("default (alternate)", []),
    ("--victim-margin 0.5", ["--victim-margin", "0.5"]),
    ("--victim-margin 3", ["--victim-margin", "3"]),
    ("--preempt-horizon 3600", ["--preempt-horizon", "3600"]),
    ("--preempt-horizon 3600 --victim-margin 0.5",
     ["--preempt-horizon", "3600", "--victim-margin", "0.5"]),
]


def write_pair(path, rng):
    da = rng.randrange(900, 28800)
    db = rng.randrange(900, 28800)
    sb = rng.randrange(0, 1800)
    with open(path, "w") as f:
        f.write("#astraeus-trace,1\n#tenant,A,1\n#tenant,B,1\n")
        f.write("job_id,tenant,gpus,submit_s,duration_s,weight,name\n")
        f.write(f"1,A,8,0,{da},1,a\n2,B,8,{sb},{db},1,b\n")


def simulate(binary, trace, out, flags):
    cmd = [binary, "simulate", "--trace", trace, "--cluster", "1x8", "--lease", "900",
           "--starvation", "21600", "--policy", "astraea", "--quiet", "--out", out] + flags
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "jobs.csv")) as f:
        rows = list(csv.DictReader(f))
    return rows


def p5(values):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * 0.05
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default="build/release/astraeus")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"{args.bin}: not an executable (build it: cmake --build --preset release)")
    rng = random.Random(args.seed)
    stats = {name: {"swaps": 0, "jct": [], "fj": [], "a": [], "b": []} for name, _ in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "pair.csv")
        for _ in range(args.pairs):
            write_pair(trace, rng)
            for name, flags in VARIANTS:
                rows = simulate(args.bin, trace, os.path.join(tmp, "out"), flags)
                s = stats[name]
                jcts = []
                for r in rows:
                    s["swaps"] += int(r["resumes"]) + int(r["preemptions"])
                    jct = float(r["jct_s"])
                    jcts.append(jct)
                    s["a" if r["tenant"] == "A" else "b"].append(jct)
                    if r["fairness"] not in ("", "nan", "null"):
                        s["fj"].append(float(r["fairness"]))
                s["jct"].append(sum(jcts) / len(jcts))
    print(f"{args.pairs} pairs, seed {args.seed}")
    print("| rule | preemptions | mean avg JCT (s) | mean JCT A / B (s) | p5 F_j |")
    print("|---|---|---|---|---|")
    for name, _ in VARIANTS:
        s = stats[name]
        mean = lambda v: sum(v) / len(v)
        print(f"| {name} | {s['swaps']:,} | {mean(s['jct']):,.0f} | "
              f"{mean(s['a']):,.0f} / {mean(s['b']):,.0f} | {p5(s['fj']):.3f} |")


if __name__ == "__main__":
    main()
