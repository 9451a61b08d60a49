#!/bin/bash
# Goodput against Slurm's own accounting on the live test cluster (issue 19): the GPU time
# Astraeus counts as held equals, to the GPU-second,
#  - sacct's AllocTRES gres/gpu x (End - Start) of every segment, computed here (python3, not
#    Astraeus' code), per job and in total;
#  - sreport's cluster utilization (`sreport -t seconds cluster utilization --tres=gres/gpu`,
#    Allocated) over the same whole UTC hours: slurmdbd's rollup, forced for the current hour by
#    astraeus_slurm_roll_usage (sreport reads only rolled-up hours);
# for `astraeus goodput import-slurm` (its --json per run and in total, and its printed table,
# HELD to the tenth) and for the ledger of `astraeus serve --executor slurm` (each run's held
# GPU-seconds against its job's segments, within GPUs x the seconds its attempts' boundaries
# differ from Slurm's, printed). Jobs: two runs of the service (a 2 x 8 GPU gang stopped by its
# owner, a 1 x 4 GPU run that ends by itself), and beside the service a job array of 3 x 1 GPU
# and a 2-GPU job requeued once. Every job on the cluster in those hours is counted (sreport
# sees them all). Skipped (77) without the cluster or slurmdbd. About 40 s.
# usage: goodput_crosscheck_test.sh ASTRAEUS_BINARY ROLL_USAGE_BINARY
set -uo pipefail
BIN=$1; ROLL=$2
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip sacct
command -v sreport > /dev/null || slurm_skip "sreport is not installed (slurm-client)"
export TZ=UTC
slurm_serve_scratch astraeus-slurm-xcheck
fail() { echo "FAIL: $*"; exit 1; }
t0=$(date +%s)
sacctmgr -i add account ml > /dev/null 2>&1 || true
sacctmgr -i add user root account=ml > /dev/null 2>&1 || true
cat > "$T/worker.sh" <<'EOF2'
#!/bin/bash
trap 'exit 0' TERM
while :; do sleep 0.2 & wait $!; done
EOF2
slurm_serve_ml
slurm_serve_start || { cat "$T/server.log"; fail "server did not start"; }
post() { curl -sS -f -o /dev/null -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' --data "$2" "$API$1"; }
state() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null; }
is() { [ "$(state "$1")" = "$2" ]; }
post /runs '{"name": "busy", "workers": 2, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/worker.sh"}' || fail "submit busy"
post /runs '{"name": "short", "workers": 1, "gpus_per_worker": 4, "command": "sleep 3"}' || fail "submit short"
# Beside the service: a job array and a job requeued once (its two segments).
arr=$(sbatch --parsable -A ml -J xcheck-array --array=0-2 --gres=gpu:1 -o /dev/null --wrap 'sleep 2')
rq=$(sbatch --parsable -A ml -J xcheck-requeue --gres=gpu:2 --requeue -o /dev/null --wrap 'sleep 5')
slurm_wait_state "$rq" RUNNING || fail "requeue job not running"
sleep 1
scontrol requeue "$rq"
slurm_wait_state "$rq" PENDING || fail "requeue job not pending again"
sleep 1   # a relaunch in the requeue's second fails the job (credential revoked)
scontrol update JobId="$rq" StartTime=now+1
waitfor 300 is busy running || fail "busy not running"
sleep 4
post /runs/busy/stop "" || fail "stop busy"
waitfor 300 is busy stopped || fail "busy not stopped: $(state busy)"
waitfor 300 is short succeeded || fail "short did not succeed: $(state short)"
for r in busy short; do curl -sS -H "Authorization: Bearer $ML" "$API/runs/$r/goodput" > "$T/ledger-$r.json"; done
kill -TERM "$SERVER_PID"; wait "$SERVER_PID"; SERVER_PID=""
# Everything ended, in slurmdbd too (sreport's rollup counts a running job to the hour's end).
waitfor 300 bash -c '[ -z "$(squeue -h)" ]' || { squeue; fail "jobs still on the cluster"; }
sleep 1
h0=$(( t0 / 3600 * 3600 - 3600 )); now=$(date +%s); h1=$(( now / 3600 * 3600 + 3600 ))
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%S; }
for _ in $(seq 50); do   # slurmdbd has the last records
  sacct -a -X -D -P -n -S "$(iso $h0)" -E "$(iso $h1)" --format=State | grep -q -E 'RUNNING|COMPLETING' || break
  sleep 0.2
done
sacct -a -X -D -P -S "$(iso $h0)" -E "$(iso $h1)" \
  --format=JobID,JobName,Account,Partition,State,Submit,Start,End,NodeList,AllocTRES,ReqTRES > "$T/sacct.txt"
cat "$T/sacct.txt"
"$ROLL" "$h0" "$h1" || fail "slurmdbd's rollup of $(iso $h0) .. $(iso $h1)"
# One hour at a time: over several hours whose end is in the future, sreport cuts the period at
# the current hour's start (measured); a single hour, the current one included, is reported whole.
: > "$T/sreport.txt"
for ((h = h0; h < h1; h += 3600)); do
  sreport -t seconds -n -P cluster utilization --tres=gres/gpu start="$(iso $h)" end="$(iso $((h + 3600)))" >> "$T/sreport.txt" ||
    fail "sreport"
done
cat "$T/sreport.txt"
"$BIN" goodput import-slurm "$T/sacct.txt" --by run --json --start "$(iso $h0)Z" --end "$(iso $h1)Z" > "$T/import.json" 2> "$T/import.err" ||
  { cat "$T/import.err"; fail "import-slurm --json"; }
"$BIN" goodput import-slurm "$T/sacct.txt" --by run --start "$(iso $h0)Z" --end "$(iso $h1)Z" > "$T/import.txt" 2> "$T/import.err" ||
  { cat "$T/import.err"; fail "import-slurm (table)"; }
cat "$T/import.txt"
sqlite3 "$DATA/astraeus.db" "SELECT r.name, a.number, a.started_s, a.ended_s FROM attempts a JOIN runs r ON r.id = a.run_id ORDER BY r.name, a.number" > "$T/attempts.txt"
python3 - "$T" "$h0" "$h1" "$arr" "$rq" "$t0" <<'PY' || fail "cross-check"
import json, re, sys
from datetime import datetime, timezone
T, h0, h1, arr, rq, t0 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
def ts(s): return int(datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp())
lines = [l.rstrip("\n").split("|") for l in open(f"{T}/sacct.txt")]
col = {h: i for i, h in enumerate(lines[0])}
# Slurm's figure, computed here: every segment that ran (a start and nodes), GPUs x (End - Start),
# per job and clipped to the window's hours.
per_job, window, names = {}, 0, {}
for r in lines[1:]:
    if r[col["Start"]] in ("Unknown", "None") or r[col["NodeList"]] == "None assigned":
        continue
    m = re.search(r"gres/gpu=(\d+)", r[col["AllocTRES"]])
    g = int(m.group(1)) if m else 0
    s, e = ts(r[col["Start"]]), ts(r[col["End"]])
    per_job[r[col["JobID"]]] = per_job.get(r[col["JobID"]], 0) + g * (e - s)
    if ts(r[col["Submit"]]) >= t0:  # this test's service jobs (earlier runs reuse the names)
        names.setdefault(r[col["JobName"]], []).append((s, e, g))
    window += g * max(0, min(e, h1) - max(s, h0))
print("sacct GPUs x (End - Start) per job:", per_job, "in the window:", window)
assert f"{arr}_0" in per_job and f"{arr}_2" in per_job and per_job[f"{arr}_1"] >= 2, per_job
assert len([1 for r in lines[1:] if r[col["JobID"]] == rq]) == 2, "the requeued job's two segments"
# sreport (slurmdbd's rollup): Allocated GPU-seconds over the same hours.
reps = [l.strip().split("|") for l in open(f"{T}/sreport.txt") if l.strip()]
print("sreport, hour by hour:", reps)
assert reps and all(r[1] == "gres/gpu" for r in reps), reps
sreport_alloc = sum(int(r[2]) for r in reps)
assert sreport_alloc == window, f"sreport {sreport_alloc} vs sacct {window}"
# import-slurm: its --json per run and in total, to the GPU-second.
imp = json.load(open(f"{T}/import.json"))
got = {r["run"]: round(r["allocated_gpu_hours"] * 3600) for r in imp["rows"]}
exact = {r["run"]: r["slurm_allocated_gpu_seconds"] for r in imp["rows"] if "slurm_allocated_gpu_seconds" in r}
held = {k: v for k, v in got.items() if v}
print("import-slurm held per run:", held)
assert held == {k: v for k, v in per_job.items() if v}, (held, per_job)
assert not exact or all(exact[k] == per_job.get(k, 0) for k in exact), exact
total = round(imp["total"]["allocated_gpu_hours"] * 3600)
assert total == sreport_alloc, f"import-slurm total {total} vs sreport {sreport_alloc}"
# Its printed table: HELD per run and TOTAL, to the tenth (half away from zero), as computed here.
tenth = lambda s: f"{(s + 180) // 360 // 10}.{(s + 180) // 360 % 10}"
table = {}
for l in open(f"{T}/import.txt"):
    f = l.split()
    if len(f) == 11 and f[0] not in ("RUN",):
        table[f[0]] = f[1]
print("import-slurm table HELD:", table)
assert table.get("TOTAL") == tenth(sreport_alloc), (table.get("TOTAL"), tenth(sreport_alloc))
for k, v in per_job.items():
    if v:  # jobs without GPUs have no row
        assert table.get(k) == tenth(v), (k, table.get(k), tenth(v))
# The service's ledger of each run against its job's segments.
atts = {}
for l in open(f"{T}/attempts.txt"):
    name, n, a0, a1 = l.strip().split("|")
    atts.setdefault(name, []).append((int(a0), int(a1)))
for run in ("busy", "short"):
    segs = names[f"astraeus-ml-{run}"]
    slurm = sum(g * (e - s) for s, e, g in segs)
    ledger = round(json.load(open(f"{T}/ledger-{run}.json"))["allocated_gpu_hours"] * 3600)
    g = segs[0][2]
    allowed = sum(g * (abs(s - a0) + abs(e - a1)) for (s, e, _), (a0, a1) in zip(segs, atts[run]))
    print(f"{run}: service ledger held {ledger} GPU-s, sacct {slurm} GPU-s (segments {segs}, attempts {atts[run]}); "
          f"difference {ledger - slurm}, allowed {allowed}")
    assert len(segs) == len(atts[run]), (segs, atts[run])
    assert abs(ledger - slurm) <= allowed, (run, ledger, slurm, allowed)
print("PASS")
PY
echo PASS
