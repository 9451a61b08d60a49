#!/bin/bash
# usage: agents_nvml_test.sh ASTRAEUS FAKE_LIBNVIDIA_ML
# GPU utilization from a node agent (docs/agents.md "GPU utilization"), CPU only, on 127.0.0.1:
# `astraeus agent` without --gpus loads the fake libnvidia-ml built by the tests (through
# ASTRAEUS_NVML_LIBRARY, as local_executor_nvml; GPUs and utilization from $FAKE_NVML_FILE):
# six GPUs at 50 50 4 6 3 4 %. It finds the 6 GPUs, samples them every 0.05 s and sends the
# samples with its heartbeats. Three 1-worker runs of 2 GPUs each run 7 s on it (time_scale 30:
# 3.5 service minutes); each run's goodput ledger is recomputed from its state history to the
# second (tests/exec/ledger_check.py's rule): every category but productive and idle must match
# to the GPU-second, and the running time is productive when the mean of its GPUs' levels is
# >= 5 % (GPUs 0,1: 50 % busy; 2,3: 5.0 % busy, the threshold; 4,5: 3.5 % idle), idle
# otherwise. A sampled machine leaves no running time undecided except before the run's first
# sample arrives: for a busy run, idle time is accepted only as that unmeasured start (idle =
# unmeasured, under a tenth of the running time). Skipped (77) without curl or python3.
set -u
ASTRAEUS=$1
FAKE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
for tool in curl python3; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
WORK=$(mktemp -d /tmp/astraeus-agents-nvml.XXXXXX)
# shellcheck source=live_server_lib.sh
source "$HERE/live_server_lib.sh"
AGENT=""
cleanup() {
  [ -n "$AGENT" ] && kill -TERM "$AGENT" 2> /dev/null
  stop_all
  [ -n "$AGENT" ] && { for _ in $(seq 50); do kill -0 "$AGENT" 2> /dev/null || break; sleep 0.1; done; kill -KILL "$AGENT" 2> /dev/null; }
  [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- server log"; grep -v http.request "$WORK/server.log" | tail -30
  echo "--- agent log"; tail -20 "$WORK/agent.log"
  exit 1
}
wait_until() {
  local end=$((SECONDS + $1))
  while [ $SECONDS -lt $end ]; do eval "$2" && return 0; sleep 0.2; done
  return 1
}
jq_py() {
  curl -s -H "Authorization: Bearer $1" "$API/$2" |
    python3 -c "import json,sys; d=json.load(sys.stdin); print($3)" 2> /dev/null
}

cat > "$WORK/cfg.json" << 'EOF2'
{"pools": [{"name": "default", "machines": []}], "lease_s": 36000, "time_scale": 30,
 "agents": {"heartbeat_s": 1, "lost_after_s": 600}}
EOF2
SERVE_ARGS="--executor agents"
start_server "$WORK/cfg.json" || fail "the service did not start"
admin workspace add ml > /dev/null || fail "workspace add"
AT=$(new_token --agent) || fail "agent token"
WT=$(new_token --workspace ml) || fail "workspace token"
OT=$(new_token --operator) || fail "operator token"

printf '%s\n' "GPU-00000000 FakeGPU 16384 50" "GPU-11111111 FakeGPU 16384 50" "GPU-22222222 FakeGPU 16384 4" \
  "GPU-33333333 FakeGPU 16384 6" "GPU-44444444 FakeGPU 16384 3" "GPU-55555555 FakeGPU 16384 4" > "$WORK/gpus.txt"
root=(); [ "$(id -u)" = 0 ] && root=(--allow-root)
ASTRAEUS_NVML_LIBRARY=$FAKE FAKE_NVML_FILE=$WORK/gpus.txt "$ASTRAEUS" agent --api "http://127.0.0.1:$SERVER_PORT" \
  --token "$AT" --name n1 --work-dir "$WORK/agent" --utilization-period 0.05 "${root[@]}" > "$WORK/agent.log" 2>&1 &
AGENT=$!
wait_until 20 '[ "$(jq_py "$OT" machines "[(m[\"state\"], m[\"gpus\"]) for m in d[\"machines\"]]")" = "[('"'up'"', 6)]" ]' ||
  fail "the agent did not register NVML's 6 GPUs: $(jq_py "$OT" machines d)"
[ "$(grep -c 'gpu.found' "$WORK/agent.log")" = 6 ] || fail "the agent did not log the 6 GPUs NVML found"
grep -q 'gpu.found.*GPU-33333333' "$WORK/agent.log" || fail "gpu.found without the UUID"
grep -q 'agent.gpus.*gpus=6.*nvml=yes' "$WORK/agent.log" || fail "the agent does not say it samples NVML"

for r in r1 r2 r3; do
  code=$(curl -s -o "$WORK/post.out" -w '%{http_code}' -X POST -H "Authorization: Bearer $WT" "$API/runs" \
    -d "{\"name\": \"$r\", \"workers\": 1, \"gpus_per_worker\": 2,
         \"command\": [\"sh\", \"-c\", \"echo gpus \$CUDA_VISIBLE_DEVICES; sleep 7\"]}")
  [ "$code" = 201 ] || fail "submit $r: HTTP $code $(cat "$WORK/post.out")"
done
for r in r1 r2 r3; do
  wait_until 40 '[ "$(jq_py "$WT" runs/$r "d[\"state\"]")" = succeeded ]' || fail "$r did not succeed: $(jq_py "$WT" runs/$r d)"
done
for r in r1 r2 r3; do
  curl -s -H "Authorization: Bearer $WT" "$API/runs/$r" > "$WORK/$r.run.json"
  curl -s -H "Authorization: Bearer $WT" "$API/runs/$r/goodput" > "$WORK/$r.goodput.json"
  gpus=$(sed -n 's/^gpus //p' "$WORK/agent/logs/ml/$r/attempt-1/worker-0.log")
  [ -n "$gpus" ] || fail "$r's log has no GPUs: $(cat "$WORK/agent/logs/ml/$r/attempt-1/worker-0.log")"
  echo "$r on GPUs $gpus"
  python3 - "$WORK/$r.run.json" "$WORK/$r.goodput.json" "$gpus" "$WORK/gpus.txt" << 'PY' || fail "$r's ledger"
import json, sys
run = json.load(open(sys.argv[1]))
ledger = json.load(open(sys.argv[2]))
got = {k: round(v * 3600) for k, v in ledger["gpu_hours"].items()}
unmeasured = round(ledger.get("unmeasured_gpu_hours", 0) * 3600)
idx = [int(g) for g in sys.argv[3].split(",")]
level = {i: float(l.split()[3]) for i, l in enumerate(open(sys.argv[4]))}
mean = sum(level[g] for g in idx) / len(idx)
busy = mean >= 5.0
gpus = len(idx)

def category(e, prev):  # tests/exec/ledger_check.py's, for a run that goes straight through
    s = e["state"]
    if s == "pending": return "waiting"
    if s == "starting": return "starting" if e["attempt"] <= 1 else "restart"
    if s == "running": return "running"
    raise ValueError("unexpected state " + s)

hist = run["history"]
assert hist[-1]["state"] == "succeeded", hist
cats = [(e["at_s"], category(e, hist[i - 1] if i else None)) for i, e in enumerate(hist[:-1])]
ended = hist[-1]["at_s"]
want = {}
for i, (since, c) in enumerate(cats):
    until = cats[i + 1][0] if i + 1 < len(cats) else ended
    want[c] = want.get(c, 0) + (until - since) * gpus
running = want.pop("running", 0)

bad = 0
for k in ["stalled", "starting", "restart", "failure", "preemption", "waiting"]:
    if want.get(k, 0) != got.get(k, 0):
        print(f"{k}: expected {want.get(k, 0)} GPU-s, service {got.get(k, 0)}"); bad += 1
print(f"mean level {mean:.1f} % -> {'busy' if busy else 'idle'}; running {running} GPU-s; "
      f"service productive {got.get('productive', 0)} idle {got.get('idle', 0)} unmeasured {unmeasured}")
if running < 2 * 60 * gpus:
    print("under 2 running minutes: the run was too short to judge"); bad += 1
if got.get("productive", 0) + got.get("idle", 0) != running:
    print(f"productive + idle != running {running}"); bad += 1
if busy:
    if got.get("idle", 0) != unmeasured or 10 * unmeasured > running:
        print(f"a busy run's idle GPU-s {got.get('idle', 0)} is not only its unsampled start ({unmeasured} unmeasured)"); bad += 1
else:
    if got.get("productive", 0) != 0:
        print("an idle run counted productive time"); bad += 1
sys.exit(1 if bad else 0)
PY
done
# The pairs are placed lowest GPUs first, so all three levels were exercised.
[ "$(cat "$WORK"/agent/logs/ml/r?/attempt-1/worker-0.log | sort | tr '\n' ' ')" = "gpus 0,1 gpus 2,3 gpus 4,5 " ] ||
  fail "the runs did not get GPUs 0,1 / 2,3 / 4,5: $(cat "$WORK"/agent/logs/ml/r?/attempt-1/worker-0.log)"
echo "PASS (agents_nvml)"
