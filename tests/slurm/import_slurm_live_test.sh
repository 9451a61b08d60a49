#!/bin/bash
# `astraeus goodput import-slurm` on the live Slurm test cluster: a 2-node gang requeued once then
# cancelled, and a 1-GPU job; sacct --json and --parsable2 of them give the same ledger; every
# segment is there; Slurm's allocated GPU-seconds per run equal the sum over sacct's own rows
# (GPUs x (End - Start)) computed independently here. Skipped (77) without the cluster or sacct.
# usage: import_slurm_live_test.sh ASTRAEUS_BINARY
set -euo pipefail
bin=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip sacct
export TZ=UTC
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sacctmgr -i add account ml,vision >/dev/null 2>&1 || true
sacctmgr -i add user root account=ml,vision >/dev/null 2>&1 || true
job='#!/bin/bash
trap "exit 0" TERM USR1
for i in $(seq 1 600); do sleep 1 & wait $!; done'
a=$(echo "$job" | sbatch --parsable -A ml -J live-gang -N2 --gres=gpu:2 --requeue -o /dev/null)
b=$(sbatch --parsable -A vision -J live-one --gres=gpu:1 -o /dev/null --wrap 'sleep 2')
slurm_wait_state "$a" RUNNING
sleep 1
scontrol requeue "$a"
slurm_wait_state "$a" PENDING
sleep 1   # a relaunch in the requeue's second fails the job (credential revoked)
scontrol update JobId="$a" StartTime=now+1
slurm_wait_state "$a" RUNNING
sleep 2
scancel "$a"
for _ in $(seq 1 100); do   # both ended, and in slurmdbd
  n=$(sacct -n -X -D -P -j "$a,$b" --format=State 2>/dev/null | grep -c -E 'COMPLETED|CANCELLED' || true)
  [ "$n" -ge 2 ] && break
  sleep 0.2
done
sacct -a -D -j "$a,$b" --json > "$tmp/s.json"
sacct -a -X -D -P -j "$a,$b" \
  --format=JobID,JobName,Account,Partition,State,Submit,Start,End,NodeList,AllocTRES,ReqTRES > "$tmp/s.txt"
cat "$tmp/s.txt"
[ "$(grep -c "^$a|" "$tmp/s.txt")" = 2 ] || fail "expected 2 segments of job $a (REQUEUED, CANCELLED)"
grep -q "^$a|live-gang|ml|gpu|REQUEUED|" "$tmp/s.txt" || fail "no REQUEUED segment of job $a"
"$bin" goodput import-slurm "$tmp/s.json" --by run --json > "$tmp/j.json" 2> "$tmp/j.err" || { cat "$tmp/j.err"; fail "import of sacct --json"; }
"$bin" goodput import-slurm "$tmp/s.txt" --by run --json > "$tmp/t.json" 2>/dev/null || fail "import of sacct --parsable2"
cmp -s "$tmp/j.json" "$tmp/t.json" || { diff "$tmp/j.json" "$tmp/t.json" | head; fail "json and parsable2 differ"; }
python3 - "$tmp/s.txt" "$tmp/j.json" "$a" "$b" <<'PY'
import json, re, sys
from datetime import datetime, timezone
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
head, rows = rows[0], rows[1:]
col = {h: i for i, h in enumerate(head)}
def t(s): return int(datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp())
want = {}
for r in rows:
    g = int(re.search(r"gres/gpu=(\d+)", r[col["AllocTRES"]]).group(1))
    want[r[col["JobID"]]] = want.get(r[col["JobID"]], 0) + g * (t(r[col["End"]]) - t(r[col["Start"]]))
d = json.load(open(sys.argv[2]))
got = {r["run"]: r["slurm_allocated_gpu_seconds"] for r in d["rows"]}
print("sacct rows:", want, "import:", got)
assert got == want, (got, want)
assert d["segments"] == 3 and d["jobs"] == 2, d
a = sys.argv[3]
assert want[a] >= 4 * 3, want   # 2 nodes x 2 GPUs, at least 1 s + 2 s running
held = {r["run"]: round(r["allocated_gpu_hours"] * 3600) for r in d["rows"]}
# Counted to the second: the import's held time (its table's HELD) is sacct's AllocTRES x
# (End - Start), computed here, to the GPU-second.
assert held == want, (held, want)
PY
echo PASS
