#!/bin/bash
# Astraeus on a cluster that keeps Slurm's scheduler (docs/slurm.md, "Two setups"): a second,
# private test cluster started here with SCHED=backfill (scripts/slurm-test-cluster.sh: partition
# `astraeus` = gpu1,gpu2 with 8 fake GPUs each, default partition `batch` = cpu1,cpu2, no GPUs;
# SchedulerType=sched/backfill, bf_interval=2; no slurmdbd) on free ports under its own BASE,
# stopped at the end (the shared cluster of .ci/run is not touched):
#  1. `scontrol show config` says sched/backfill;
#  2. `serve --executor slurm` without slurm.partitions is refused (exit 2, the reason);
#  3. with "slurm": {"partitions": ["astraeus"]} it logs the mode "owned partitions", runs a
#     2-node gang to `succeeded` in partition astraeus on gpu1+gpu2 (each rank's node read back);
#  4. meanwhile on `batch`: a `#SBATCH hetjob` script is accepted and both components run (one per
#     batch node) and complete; a small job of another user (astraeus-vision) backfills past a
#     bigger, higher-priority job that waits for resources (it would wait behind it under
#     sched/builtin).
# Skipped (77) when Slurm's daemons are not installed or not root. ~20 s.
# usage: serve_slurm_backfill_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPT=$HERE/../../scripts/slurm-test-cluster.sh
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "starting a Slurm test cluster needs root"
for p in slurmctld slurmd munged sbatch scontrol; do
  command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || skip "$p is not installed (scripts/bootstrap.sh)"
done
command -v curl >/dev/null || skip "curl is not installed"
free_port() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
PORT0=""
for k in $(seq 0 30); do   # slurmctld PORT0, slurmd PORT0+101.., PORT0+151..: all free
  p=$((17017 + 200 * k))
  free_port $p && free_port $((p + 101)) && free_port $((p + 102)) && free_port $((p + 151)) &&
    free_port $((p + 152)) && { PORT0=$p; break; }
done
[ -n "$PORT0" ] || skip "no free ports for a second test cluster"
export BASE=/tmp/astraeus-slurm-bf.$$ PORT0 SCHED=backfill NODES=2 BATCH=2 BF_INTERVAL=2 ACCT=none CGROUP=no
export SLURM_CONF=$BASE/etc/slurm.conf
T=$(mktemp -d /var/tmp/astraeus-slurm-bf.XXXXXX)
chmod 755 "$T"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill -TERM "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  bash "$SCRIPT" stop > "$T/stop.log" 2>&1 || cat "$T/stop.log"
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; exit 1; }
waitfor() { local n=$1 i; shift; for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done; return 1; }

bash "$SCRIPT" start > "$T/start.log" 2>&1 || { cat "$T/start.log"; fail "the backfill test cluster did not start"; }
grep 'cluster up' "$T/start.log"
# 1. Slurm's scheduler is backfill, the two partitions as configured.
sched=$(scontrol show config | awk '$1 == "SchedulerType" {print $3}')
[ "$sched" = sched/backfill ] || fail "SchedulerType is '$sched'"
parts=$(sinfo -h -o '%P %N' | sort | tr '\n' ';')
[ "$parts" = "astraeus gpu[1-2];batch* cpu[1-2];" ] || fail "partitions: '$parts'"
echo "scontrol show config: SchedulerType=$sched; partitions: $parts"

cat > "$T/config.json" <<'CONFIG'
{"organization": "acme", "cluster": "c1",
 "pools": [{"name": "astraeus", "machines": [{"count": 2, "gpus": 8}]}], "lease_s": 3600,
 "slurm": {"partitions": ["astraeus"]},
 "local": {"sandbox": {"users": {"ml": "astraeus-ml"}}}}
CONFIG
DATA="$T/data"
"$BIN" admin init --org acme --cluster c1 --config "$T/config.json" --data-dir "$DATA" >/dev/null || fail "admin init"
"$BIN" admin workspace add ml --weight 1 --data-dir "$DATA" >/dev/null || fail "workspace add"
ML=$("$BIN" admin token create --workspace ml --data-dir "$DATA" 2>/dev/null)

# 2. No partition named under backfill: refused at start.
grep -v '"slurm"' "$T/config.json" > "$T/bad.json"
timeout 20 "$BIN" serve --executor slurm --config "$T/bad.json" --data-dir "$DATA" --listen 127.0.0.1:0 > "$T/bad.out" 2>&1
rc=$?
grep -qF "Slurm runs SchedulerType=sched/backfill and no partition is named for Astraeus" "$T/bad.out" && [ $rc = 2 ] ||
  { cat "$T/bad.out"; fail "serve without slurm.partitions: exit $rc, want 2 and the reason"; }
echo "refused without slurm.partitions (exit $rc)"

# 3. Astraeus owns partition astraeus.
"$BIN" serve --executor slurm --slurm-grace 5 --config "$T/config.json" --data-dir "$DATA" \
  --listen 127.0.0.1:0 --port-file "$T/port" 2>> "$T/server.log" &
SERVER_PID=$!
waitfor 100 test -s "$T/port" || fail "server did not start"
API="http://127.0.0.1:$(cat "$T/port")/v1"
grep -q 'executor.slurm.mode.*owned partitions.*scheduler=sched/backfill\|executor.slurm.mode.*scheduler=sched/backfill.*owned partitions' "$T/server.log" ||
  fail "no mode line in the log: $(grep executor.slurm "$T/server.log")"
grep 'executor.slurm.mode' "$T/server.log" | head -1
curl -sS -X POST -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' \
  --data '{"name": "gang", "workers": 2, "gpus_per_worker": 8, "command": "bash -c \"echo $RANK $SLURMD_NODENAME $SLURM_JOB_PARTITION $CUDA_VISIBLE_DEVICES > $ASTRAEUS_CHECKPOINT_DIR/rank-$RANK; sleep 2\""}' \
  "$API/runs" > /dev/null || fail "submit"

# 4. Meanwhile on batch: a hetjob, and a small job of another user backfilling.
cat > "$T/het.sh" <<'EOF2'
#!/bin/bash
#SBATCH -p batch -n 1 -c 2
#SBATCH hetjob
#SBATCH -p batch -n 1 -c 4
srun --het-group=0,1 bash -c 'echo "het node=$SLURMD_NODENAME"'
EOF2
het=$(sbatch --parsable -o "$T/het.out" "$T/het.sh" 2> "$T/het.err") || fail "hetjob refused: $(cat "$T/het.err")"
echo "hetjob $het accepted: $(squeue -h -j "$het" -o '%i %P %T' | tr '\n' ' ')"
big_blocker=$(sbatch --parsable -p batch -N 2 -c 8 --time=10 -J running -o /dev/null --wrap 'sleep 300')
waitfor 300 bash -c "[ \"\$(squeue -h -j $big_blocker -o %T)\" = RUNNING ]" || fail "job $big_blocker does not run"
big=$(sbatch --parsable -p batch -N 2 -c 16 --time=10 -J big -o /dev/null --wrap 'sleep 1')
small=$(runuser -u astraeus-vision -- sbatch --parsable -p batch -D / -n 1 -c 4 --time=1 -J small -o /dev/null --wrap 'sleep 1') ||
  fail "sbatch as astraeus-vision"
prio() { squeue -h -j "$1" -o %Q; }
[ "$(prio "$big")" -gt "$(prio "$small")" ] || fail "big's priority $(prio "$big") is not above small's $(prio "$small")"
done_or_running() { case "$(squeue -h -j "$1" -o %T)" in RUNNING|COMPLETING|COMPLETED) return 0 ;; esac; return 1; }
waitfor 150 done_or_running "$small" || fail "small job $small did not backfill: $(squeue -h -j "$small" -o '%T %r')"
[ "$(squeue -h -j "$big" -o %T)" = PENDING ] || fail "big job $big is $(squeue -h -j "$big" -o %T), want PENDING"
echo "job $small of astraeus-vision (priority $(prio "$small")) backfilled while job $big (priority $(prio "$big")) waits: $(squeue -h -j "$big" -o %r)"
scancel "$big_blocker" "$big"

waitfor 200 bash -c "[ -z \"\$(squeue -h -j $het -t PD,R,CG -o %i)\" ]" || fail "hetjob $het did not end: $(squeue -h -j "$het" -o '%i %T %r')"
states=$(scontrol -o show job "$het" | grep -o 'JobState=[A-Z]*' | sort | uniq -c | awk '{print $1, $2}')
[ "$states" = "2 JobState=COMPLETED" ] || fail "hetjob $het components: $states"
[ "$(sort "$T/het.out" | tr '\n' ';')" = "het node=cpu1;het node=cpu2;" ] || fail "hetjob output: $(cat "$T/het.out")"
echo "hetjob $het: 2 components COMPLETED on cpu1 and cpu2"

state() { curl -sS -H "Authorization: Bearer $ML" "$API/runs/gang" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null; }
waitfor 400 bash -c "[ \"\$(curl -sS -H 'Authorization: Bearer $ML' '$API/runs/gang' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"state\"])')\" = succeeded ]" ||
  fail "gang is '$(state)', want succeeded"
job=$(squeue -h -t all -n astraeus-ml-gang -o %i)
info=$(squeue -h -t all -j "$job" -o '%T %P %N')
[ "$info" = "COMPLETED astraeus gpu[1-2]" ] || fail "gang's job $job: $info"
ck=$DATA-runs/ml/gang/checkpoint
ranks=$(cat "$ck"/rank-0 "$ck"/rank-1 2>/dev/null | tr '\n' ';')
[ "$ranks" = "0 gpu1 astraeus 0,1,2,3,4,5,6,7;1 gpu2 astraeus 0,1,2,3,4,5,6,7;" ] || fail "ranks: '$ranks'"
echo "gang succeeded: job $job $info; ranks: $ranks"
echo "PASS"
