#!/bin/bash
# Tenants apart on Slurm (docs/slurm.md, "Tenants"): `astraeus serve --executor slurm` as root
# with workspaces ml and vision mapped to the test cluster's users astraeus-ml and astraeus-vision
# (local.sandbox.users), accounts by default the workspaces' names:
#  1. each run's job shows its workspace's user and account in `squeue` and in `sacct` (read here,
#     not through Astraeus); a worker's `id -u` is its user's, not 0; a worker of one workspace
#     cannot read the other's run folder (nor a file in its checkpoint folder); the run's log is
#     served (GET /runs/{run}/logs) although the job's user wrote it;
#  2. never silently root: a workspace without a Unix user (nlp: the sandbox's uid range, no
#     passwd entry) and one whose Slurm account does not exist (cv, slurm.accounts -> "nosuch"
#     is refused at start, so cv -> its own name "cv", which slurmdbd does not know) fail their
#     run with the reason on the run; no job of theirs reaches Slurm;
#  3. `serve` refuses to start when the configuration names a Unix user or a Slurm account that
#     does not exist.
# Skipped (77) without the cluster, sacct, or the cluster's tenants.
# usage: serve_slurm_tenants_test.sh ASTRAEUS_BINARY
set -uo pipefail
BIN=$1
. "$(dirname "$0")/slurm_test_env.sh"
slurm_cluster_or_skip sacct
for u in astraeus-ml astraeus-vision; do
  getent passwd "$u" >/dev/null || slurm_skip "no Unix user $u (scripts/slurm-test-cluster.sh start makes it)"
done
[ "$(id -u)" = 0 ] || slurm_skip "needs root (only root submits Slurm jobs for other users)"
slurm_serve_scratch astraeus-slurm-tenants
fail() { echo "FAIL: $*"; [ -f "$T/server.log" ] && tail -20 "$T/server.log"; exit 1; }
START=$(date +%Y-%m-%dT%H:%M:%S)
UML=$(id -u astraeus-ml); UVI=$(id -u astraeus-vision)

# The worker: its uid, then every 0.3 s whether it can read the other tenant's run folder and
# the secret in the other's checkpoint folder (argument 1: the other run's folder).
cat > "$T/tenant.sh" <<'EOF2'
#!/bin/bash
echo "uid $(id -u) gid $(id -g) user $(id -un)"
echo "secret of $ASTRAEUS_WORKSPACE" > "$ASTRAEUS_CHECKPOINT_DIR/secret"
trap 'exit 0' TERM
while :; do
  if ls "$1" >/dev/null 2>&1; then echo "other folder: listed"; else echo "other folder: denied"; fi
  if s=$(cat "$1/checkpoint/secret" 2>/dev/null); then echo "other secret: read '$s'"; else echo "other secret: denied"; fi
  sleep 0.3 & wait $!
done
EOF2
chmod 755 "$T/tenant.sh"
cat > "$T/config.json" <<'CONFIG'
{"organization": "acme", "cluster": "c1", "max_failures": 1,
 "pools": [{"name": "gpu", "machines": [{"count": 4, "gpus": 8}]}], "lease_s": 3600,
 "local": {"sandbox": {"users": {"ml": "astraeus-ml", "vision": "astraeus-vision", "cv": "astraeus-ml"}}}}
CONFIG
DATA="$T/data"
"$BIN" admin init --org acme --cluster c1 --config "$T/config.json" --data-dir "$DATA" >/dev/null
declare -A TOK
for w in ml vision nlp cv; do
  "$BIN" admin workspace add $w --weight 1 --data-dir "$DATA" >/dev/null
  TOK[$w]=$("$BIN" admin token create --workspace $w --data-dir "$DATA" 2>/dev/null)
done

# 3. Configurations naming what does not exist are refused at start (exit 2, a clear reason).
refused() {  # refused CONFIG_JSON WANT
  echo "$1" > "$T/bad.json"
  "$BIN" serve --executor slurm --config "$T/bad.json" --data-dir "$DATA" --listen 127.0.0.1:0 > "$T/bad.out" 2>&1 &
  local pid=$! i
  for ((i = 0; i < 100; i++)); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then kill $pid; wait $pid; fail "serve started with $1"; fi
  wait $pid; local rc=$?
  [ $rc != 0 ] && grep -qF "$2" "$T/bad.out" || { cat "$T/bad.out"; fail "serve with $1: exit $rc, want a refusal saying '$2'"; }
  echo "refused at start: $(grep -F "$2" "$T/bad.out" | head -1)"
}
refused '{"local": {"sandbox": {"users": {"ml": "astraeus-no-such-user"}}}}' "Unix user 'astraeus-no-such-user'"
refused '{"slurm": {"accounts": {"ml": "nosuch"}}}' "the Slurm account 'nosuch', which slurmdbd does not know"

slurm_serve_start || fail "server did not start"
post() { curl -sS -X POST -H "Authorization: Bearer ${TOK[$1]}" -H 'Content-Type: application/json' --data "$2" "$API/runs" > /dev/null; }
field() { curl -sS -H "Authorization: Bearer ${TOK[$1]}" "$API/runs/$2" | python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$3" 2>/dev/null; }
is() { [ "$(field "$1" "$2" state)" = "$3" ]; }
post ml '{"name": "a", "workers": 1, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/tenant.sh '"$DATA"'-runs/vision/b"}'
post vision '{"name": "b", "workers": 1, "gpus_per_worker": 8, "command": "/bin/bash '"$T"'/tenant.sh '"$DATA"'-runs/ml/a"}'
waitfor 300 is ml a running || fail "ml's run a not running: state $(field ml a state), reason $(field ml a reason)"
waitfor 300 is vision b running || fail "vision's run b not running: state $(field vision b state), reason $(field vision b reason)"

# 1. Slurm sees the tenants (squeue, sacct), the workers are theirs.
for x in "ml a astraeus-ml $UML" "vision b astraeus-vision $UVI"; do
  set -- $x; w=$1 run=$2 user=$3 uid=$4
  got=$(squeue -h -n "astraeus-$w-$run" -o '%u %a %T')
  echo "squeue astraeus-$w-$run: $got"
  [ "$got" = "$user $w RUNNING" ] || fail "squeue: job astraeus-$w-$run is '$got' (want '$user $w RUNNING')"
  waitfor 100 bash -c "sacct -a -X -n -P --name astraeus-$w-$run -S $START -o User,Account,UID | grep -qx '$user|$w|$uid'" ||
    fail "sacct: astraeus-$w-$run is '$(sacct -a -X -n -P --name "astraeus-$w-$run" -S "$START" -o User,Account,UID)' (want '$user|$w|$uid')"
  echo "sacct astraeus-$w-$run: $(sacct -a -X -n -P --name "astraeus-$w-$run" -S "$START" -o JobID,User,Account,UID,State | head -1)"
  log=$DATA-runs/$w/$run/attempt-1/worker-0.log
  waitfor 100 grep -q '^uid ' "$log" || fail "$w/$run: no id line in $log"
  line=$(grep '^uid ' "$log" | head -1)
  echo "$w/$run worker: $line"
  [ "$line" = "uid $uid gid $(id -g "$user") user $user" ] || fail "$w/$run worker is '$line' (want uid $uid, user $user)"
  [ "$(stat -c '%U %a' "$DATA-runs/$w/$run")" = "$user 700" ] || fail "$w/$run folder: $(stat -c '%U %a' "$DATA-runs/$w/$run")"
done
for x in "ml a" "vision b"; do
  set -- $x
  log=$DATA-runs/$1/$2/attempt-1/worker-0.log
  waitfor 100 bash -c "[ \$(grep -c '^other secret' '$log') -ge 3 ]" || fail "$1/$2: the worker did not try the other's folder"
  grep -q 'other folder: listed\|other secret: read' "$log" && fail "$1/$2 reached the other tenant's folder: $(grep -m1 'listed\|read' "$log")"
  echo "$1/$2: the other tenant's folder and secret: $(grep '^other' "$log" | sort | uniq -c | tr -s ' ' | paste -sd,)"
done
# The other's secret exists (the denial is not a missing file).
[ "$(cat "$DATA-runs/vision/b/checkpoint/secret")" = "secret of vision" ] || fail "vision's secret not written"
text=$(curl -sS -H "Authorization: Bearer ${TOK[ml]}" "$API/runs/a/logs" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("text", ""))')
case "$text" in "uid $UML "*) echo "GET /runs/a/logs: $(echo "$text" | head -1)" ;; *) fail "GET /runs/a/logs: '$(echo "$text" | head -2)'" ;; esac

# 2. Never silently root: no Unix user (nlp), no Slurm account (cv).
post nlp '{"name": "n", "workers": 1, "gpus_per_worker": 8, "command": "id -u"}'
post cv '{"name": "c", "workers": 1, "gpus_per_worker": 8, "command": "id -u"}'
waitfor 300 is nlp n failed || fail "nlp's run: state $(field nlp n state) (want failed)"
waitfor 300 is cv c failed || fail "cv's run: state $(field cv c state) (want failed)"
rn=$(field nlp n reason); rc=$(field cv c reason)
echo "nlp/n failed: $rn"
echo "cv/c failed: $rc"
case "$rn" in "attempt 1 failed: cannot submit the Slurm job: workspace 'nlp' runs as uid "*", which is no Unix user of this machine"*) ;;
  *) fail "nlp's reason '$rn'" ;; esac
case "$rc" in "attempt 1 failed: cannot submit the Slurm job: "*"account"*"(user astraeus-ml, uid $UML, account 'cv'"*) ;;
  *) fail "cv's reason '$rc'" ;; esac
for j in astraeus-nlp-n astraeus-cv-c; do
  [ -z "$(squeue -h -n $j -o %i)" ] || fail "a job $j reached Slurm: $(squeue -h -n $j -o '%i %u %a %T')"
  [ -z "$(sacct -a -X -n -P --name $j -S "$START" -o JobID)" ] || fail "a job $j is in Slurm's accounting"
done
echo PASS
