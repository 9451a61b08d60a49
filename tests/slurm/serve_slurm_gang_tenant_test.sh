#!/bin/bash
# A gang inside its own tenant on Slurm (issue 20; docs/slurm.md, "A gang inside its tenant"), on
# the test cluster's 4 nodes x 8 GPUs: one workspace, ml, fills the cluster with eight 1 x 4 runs
# (submitted 1.5 s apart), two more 1 x 4 runs wait, then a 2 x 8 gang arrives. Leases of 60
# service-s and T_starve 480 service-s at time_scale 5 (12 s and 96 s), with the astraea policy's
# rules due_first and keep_reservation set in the configuration (explicitly: valid whatever their
# defaults are). Sampled every second for 120 s from the gang's submission (tests/slurm/
# gang_tenant_watch.py), from Slurm (`scontrol show node`, `squeue`) and the API:
#  1. the gang's job is RUNNING within T_starve of its submission, on 2 distinct nodes, while at
#     least 5 of the 1 x 4 runs are not done; and it gets its due: no wait (submission or lease end
#     to its next start) over 7 leases (84 s; without the rules it waits T_starve);
#  2. never a node with >= 4 GPUs free in Slurm (not promised to a job released there) for more
#     than one lease while a 1 x 4 run has waited more than one lease, unless the run's reason
#     says the GPUs are held for the gang;
#  3. the gang's ledger: nothing allocated before its start, its wait to its first start as
#     waiting (16 GPUs x the time), no more held than Slurm ran it;
#  4. every RUNNING job asks for its GPUs (squeue %b).
# ASTRAEUS_GANG_TENANT_RULES=off leaves the rules out (the control: the gang waits T_starve after
# its first lease, 92 s and more: 1b fails). Skipped (77) without the cluster.
# usage: serve_slurm_gang_tenant_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/slurm_test_env.sh"
slurm_cluster_or_skip
export TZ=UTC
slurm_serve_scratch astraeus-slurm-gang-tenant
SAMPLER=""
cleanup() { [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null; slurm_serve_cleanup; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; exit 1; }
LEASE_S=60 STARVE_S=480 SCALE=5
RULES='"scheduler": {"due_first": true, "keep_reservation": true},'
[ "${ASTRAEUS_GANG_TENANT_RULES:-on}" = off ] && RULES=''
cat > "$T/config.json" <<CONFIG
{"organization": "acme", "cluster": "c1",
 "pools": [{"name": "gpu", "machines": [{"count": 4, "gpus": 8}]}],
 "policy": "astraea", $RULES "lease_s": $LEASE_S, "starvation_s": $STARVE_S, "time_scale": $SCALE,
 "local": {"sandbox": {"users": {"ml": "astraeus-ml"}}}}
CONFIG
DATA="$T/data"
"$BIN" admin init --org acme --cluster c1 --config "$T/config.json" --data-dir "$DATA" >/dev/null
"$BIN" admin workspace add ml --weight 1 --data-dir "$DATA" >/dev/null
ML=$("$BIN" admin token create --workspace ml --data-dir "$DATA" 2>/dev/null)
slurm_serve_start || fail "server did not start"
started=$(grep -o 'scheduler.started.*' "$T/server.log" | head -1)
echo "$started"
if [ -n "$RULES" ]; then
  case "$started" in *due_first=true*) ;; *) fail "the rules are not in force: '$started'" ;; esac
  case "$started" in *keep_reservation=true*) ;; *) fail "the rules are not in force: '$started'" ;; esac
fi

# The workload: STEPS steps of 0.2 s, resumed from its checkpoint; on SIGTERM it saves one and
# exits 0; a step count in ASTRAEUS_PROGRESS_FILE (progress: productive time).
cat > "$T/worker.sh" <<'WORKER'
#!/bin/bash
step=0
[ -s "$ASTRAEUS_CHECKPOINT_DIR/ckpt.$RANK" ] && step=$(cat "$ASTRAEUS_CHECKPOINT_DIR/ckpt.$RANK")
trap 'echo $step > "$ASTRAEUS_CHECKPOINT_DIR/ckpt.$RANK"; exit 0' TERM
while [ "$step" -lt "$1" ]; do
  step=$((step + 1)); echo $step > "$ASTRAEUS_PROGRESS_FILE.tmp"; mv "$ASTRAEUS_PROGRESS_FILE.tmp" "$ASTRAEUS_PROGRESS_FILE"
  sleep 0.2 & wait $!
done
WORKER
chmod 755 "$T/worker.sh"
submit() {  # NAME WORKERS GPUS STEPS
  curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
    --data "{\"name\": \"$1\", \"workers\": $2, \"gpus_per_worker\": $3, \"command\": \"/bin/bash $T/worker.sh $4\"}" \
    "$API/runs" > /dev/null || fail "submit $1"
}
state() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null; }
all_running() { local r; for r in "$@"; do [ "$(state "$r")" = running ] || return 1; done; }

# Eight 1 x 4 runs of 120 s of work (none done in the test) fill the 32 GPUs; two more wait.
for k in 1 2 3 4 5 6 7 8; do submit s$k 1 4 600; sleep 1.5; done
waitfor 300 all_running s1 s2 s3 s4 s5 s6 s7 s8 || fail "the 1 x 4 runs do not all run: $(squeue -h -o '%j %T %N')"
submit s9 1 4 600
submit s10 1 4 600
sleep 1
# The gang (30 s of work), sampled from its submission for 120 s.
python3 "$HERE/gang_tenant_watch.py" sample "$T/samples.jsonl" "$API" "$ML" 120 gang &
SAMPLER=$!
GANG_AT=$(date +%s.%N)
submit gang 2 8 150
wait "$SAMPLER"; SAMPLER=""
echo "gang's attempts: $(curl -sS -H "Authorization: Bearer $ML" "$API/runs/gang/attempts" | python3 -c 'import json,sys; print([(a["number"], a["started_at"], a.get("outcome", "")) for a in json.load(sys.stdin)["attempts"]])')"
python3 "$HERE/gang_tenant_watch.py" check "$T/samples.jsonl" gang "$GANG_AT" $LEASE_S $STARVE_S $SCALE || fail "see above"
echo PASS
