#!/bin/bash
# Accounting cross-check of `astraeus serve --executor slurm` (real clock, time_scale 1): a 2-node
# gang runs, one of its nodes is drained (a lost machine: attempt 1 fails, Slurm's segment is
# requeued), it is placed again (attempt 2) and stopped by its owner. Each attempt Astraeus records
# (the store's attempts: placed at .. ended at) is compared with Slurm's record of the same
# segment (`sacct -D`: Start .. End, AllocTRES gres/gpu=16; the last record, cancelled while held,
# has no nodes and is not a segment): the same number of segments, each
# end within TOL seconds (default 3; measured +0..+2 s: Astraeus places before Slurm starts the job
# (0.7 s p50, and a resume waits for StartTime = now + 1), at 1-s resolution,
# and ends the attempt when it decides, before Slurm has ended the segment), and the GPU-seconds
# within 16 x 2 x TOL. The measured differences are printed. Skipped (77) without the cluster.
# usage: serve_slurm_accounting_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
TOL=${TOL:-3}
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip sacct
export TZ=UTC
T=$(mktemp -d /tmp/astraeus-slurm-acct.XXXXXX)
chmod 755 "$T"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill -TERM "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  for j in $(squeue -h -o '%i %j' 2>/dev/null | awk '$2 ~ /^astraeus-/ {print $1}'); do scancel "$j"; done
  for n in gpu1 gpu2 gpu3 gpu4; do scontrol update NodeName=$n State=RESUME >/dev/null 2>&1 || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
waitfor() { local n=$1; shift; for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done; return 1; }
cat > "$T/worker.sh" <<'EOF2'
#!/bin/bash
trap 'exit 0' TERM
while :; do sleep 0.2 & wait $!; done
EOF2
cat > "$T/config.json" <<'EOF2'
{"organization": "acme", "cluster": "c1",
 "pools": [{"name": "gpu", "machines": [{"count": 4, "gpus": 8}]}], "lease_s": 3600}
EOF2
DATA="$T/data"
"$BIN" admin init --org acme --cluster c1 --config "$T/config.json" --data-dir "$DATA" >/dev/null
"$BIN" admin workspace add ml --weight 1 --data-dir "$DATA" >/dev/null
ML=$("$BIN" admin token create --workspace ml --data-dir "$DATA" 2>/dev/null)
"$BIN" serve --executor slurm --slurm-grace 5 --config "$T/config.json" --data-dir "$DATA" \
  --listen 127.0.0.1:0 --port-file "$T/port" 2> "$T/server.log" &
SERVER_PID=$!
waitfor 100 test -s "$T/port" || { cat "$T/server.log"; fail "server did not start"; }
API="http://127.0.0.1:$(cat "$T/port")/v1"
state() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["state"], d["attempts"])' 2>/dev/null; }
curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
  --data '{"name": "acct", "workers": 2, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/worker.sh"}' "$API/runs" > /dev/null
is() { [ "$(state acct)" = "$1" ]; }
waitfor 300 is 'running 1' || { state acct; fail "attempt 1 not running"; }
job=$(squeue -h -n astraeus-acct -o %i | head -1)
sleep 3
node=$(scontrol show hostnames "$(squeue -h -n astraeus-acct -t R -o %N)" | head -1)
scontrol update NodeName="$node" State=DRAIN Reason=astraeus-acct-test
waitfor 300 is 'running 2' || { state acct; tail "$T/server.log"; fail "attempt 2 not running"; }
scontrol update NodeName="$node" State=RESUME
sleep 3
curl -sS -X POST -H "Authorization: Bearer $ML" -H "Content-Type: application/json" --data "" "$API/runs/acct/stop" > /dev/null
waitfor 300 is 'stopped 2' || fail "not stopped"
waitfor 100 bash -c "[ \$(sacct -a -X -D -n -P -j $job --format=Start | grep -vc Unknown) -ge 2 ]"
sleep 1
sacct -a -X -D -P -j "$job" --format=JobID,State,Start,End,NodeList,AllocTRES > "$T/sacct.txt"
cat "$T/sacct.txt"
sqlite3 "$DATA/astraeus.db" "SELECT a.number, a.started_s, a.ended_s, a.outcome FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = 'acct' ORDER BY a.number" > "$T/attempts.txt"
cat "$T/attempts.txt"
python3 - "$T/sacct.txt" "$T/attempts.txt" "$TOL" <<'PY'
import re, sys
from datetime import datetime, timezone
tol = float(sys.argv[3])
def t(s): return int(datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp())
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])][1:]
segs = [(t(r[2]), t(r[3]), int(re.search(r"gres/gpu=(\d+)", r[5]).group(1))) for r in rows if r[2] not in ("Unknown", "None") and r[4] != "None assigned"]
atts = [tuple(int(x) for x in l.split("|")[1:3]) for l in open(sys.argv[2]) if l.strip()]
print("slurm segments:", segs); print("astraeus attempts:", atts)
assert len(segs) == len(atts) == 2, (segs, atts)
worst = 0
for (s0, s1, g), (a0, a1) in zip(segs, atts):
    d0, d1 = s0 - a0, s1 - a1
    worst = max(worst, abs(d0), abs(d1))
    print(f"segment {s0}..{s1} ({g} GPUs, {g*(s1-s0)} GPU-s) vs attempt {a0}..{a1} ({16*(a1-a0)} GPU-s): start {d0:+d} s, end {d1:+d} s")
    assert g == 16, g
    assert abs(d0) <= tol and abs(d1) <= tol, (d0, d1)
print(f"PASS: every segment within {worst} s of Astraeus' attempt (tolerance {tol} s)")
PY
