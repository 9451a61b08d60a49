# shellcheck shell=bash
# Sourced by the Slurm tests: finds the test cluster (scripts/slurm-test-cluster.sh) or skips.
# slurm_cluster_or_skip [sacct]: sets SLURM_CONF and SLURM_BASE; when the daemons are not up (or,
# with "sacct", when the cluster has no slurmdbd) prints why and exits 77 (ctest SKIP_RETURN_CODE).
# Env: ASTRAEUS_SLURM_BASE (default /tmp/astraeus-slurm, the script's default BASE).
slurm_skip() {
  echo "SKIP: $*"
  echo "SKIP: start the test cluster first: sudo scripts/slurm-test-cluster.sh start (.ci/run does)"
  exit 77
}
slurm_cluster_or_skip() {
  SLURM_BASE=${ASTRAEUS_SLURM_BASE:-/tmp/astraeus-slurm}
  export SLURM_CONF=$SLURM_BASE/etc/slurm.conf
  command -v sbatch >/dev/null 2>&1 || slurm_skip "Slurm's client commands are not installed (scripts/bootstrap.sh)"
  [ -s "$SLURM_BASE/env" ] || slurm_skip "no Slurm test cluster under $SLURM_BASE"
  timeout 10 scontrol ping 2>/dev/null | grep -q 'UP' ||
    slurm_skip "the Slurm test cluster's slurmctld ($SLURM_CONF) does not answer"
  # One test at a time on the shared cluster, whichever checkout or ctest runs it (their cleanup
  # cancels every astraeus-* job): an exclusive lock held until this test's shell exits.
  exec 9> "$SLURM_BASE.lock"
  flock -w 240 9 || slurm_skip "another Slurm test held $SLURM_BASE.lock for 240 s"
  if [ "${1:-}" = sacct ]; then
    grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF" ||
      slurm_skip "the Slurm test cluster runs without slurmdbd (no sacct): install slurmdbd and mariadb-server"
    timeout 10 sacct -n -X -S now-1minute >/dev/null 2>&1 || slurm_skip "sacct does not answer (slurmdbd)"
  fi
}
# slurm_wait_state JOB STATE [TENTHS]: waits until squeue shows STATE (default 30 s).
slurm_wait_state() {
  local i
  for ((i = 0; i < ${3:-300}; i++)); do
    [ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = "$2" ] && return 0
    sleep 0.1
  done
  echo "job $1 did not reach $2 (now: $(squeue -h -j "$1" -o %T 2>/dev/null))" >&2
  return 1
}
# slurm_accounting_check RUN JOB SEGMENTS GPUS TOL: after the service has stopped (it cancels the
# jobs it kept held), Slurm's records of JOB (sacct) against the store's attempts of RUN, its
# ledger ($T/ledger-RUN.json, saved by the caller) and `import-slurm` of the same records
# (tests/slurm/accounting_check.py says what is asserted). Needs $T, $BIN, $DATA; fails the test.
slurm_accounting_check() {
  local run=$1 job=$2
  waitfor 100 bash -c "sacct -a -X -D -n -P -j $job --format=State | grep -q CANCELLED" ||
    fail "$run: job $job not cancelled at shutdown"
  sacct -a -X -D -P -j "$job" \
    --format=JobID,JobName,Account,Partition,State,Submit,Start,End,NodeList,AllocTRES,ReqTRES > "$T/sacct-$run.txt"
  cat "$T/sacct-$run.txt"
  sqlite3 "$DATA/astraeus.db" "SELECT a.number, a.started_s, a.ended_s, a.outcome FROM attempts a JOIN runs r ON r.id = a.run_id WHERE r.name = '$run' ORDER BY a.number" > "$T/attempts-$run.txt"
  cat "$T/attempts-$run.txt"
  "$BIN" goodput import-slurm "$T/sacct-$run.txt" --by run --json > "$T/import-$run.json" 2> "$T/import.err" ||
    { cat "$T/import.err"; fail "$run: import-slurm of the sacct records"; }
  python3 "$(dirname "${BASH_SOURCE[0]}")/accounting_check.py" "$T/sacct-$run.txt" "$T/attempts-$run.txt" \
    "$T/ledger-$run.json" "$T/import-$run.json" "$job" \
    "$(sqlite3 "$DATA/astraeus.db" "SELECT submitted_s FROM runs WHERE name = '$run'")" "$3" "$4" "$5" ||
    fail "$run: accounting"
}

# The `serve --executor slurm` tests' scaffolding.
# slurm_serve_scratch PREFIX: $T = a new folder /var/tmp/PREFIX.XXXXXX (0755: the jobs' nodes read
# it; not under /tmp, which each step sees as its own empty tmpfs: the step sandbox), removed on
# exit unless KEEP; on exit the service ($SERVER_PID) is stopped, every astraeus-* job cancelled
# and the four nodes resumed.
slurm_serve_scratch() {
  T=$(mktemp -d "/var/tmp/$1.XXXXXX")
  chmod 755 "$T"
  SERVER_PID=""
  trap slurm_serve_cleanup EXIT
}
slurm_serve_cleanup() {
  [ -n "$SERVER_PID" ] && kill -TERM "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  for j in $(squeue -h -o '%i %j' 2>/dev/null | awk '$2 ~ /^astraeus-/ {print $1}'); do scancel "$j"; done
  for n in gpu1 gpu2 gpu3 gpu4; do scontrol update NodeName=$n State=RESUME >/dev/null 2>&1 || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$T"
}
# waitfor TENTHS CMD...: until CMD succeeds, every 0.1 s; 1 when it never did.
waitfor() {
  local n=$1 i; shift
  for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done
  return 1
}
# slurm_serve_ml: $T/config.json (pool gpu: the 4 nodes x 8 GPUs, lease 1 h; workspace ml's jobs
# run as the test cluster's user astraeus-ml in account ml) and a data directory $DATA with the
# workspace ml (weight 1) and its token $ML; the runs' folders are $DATA-runs. Needs $BIN.
slurm_serve_ml() {
  cat > "$T/config.json" <<'CONFIG'
{"organization": "acme", "cluster": "c1",
 "pools": [{"name": "gpu", "machines": [{"count": 4, "gpus": 8}]}], "lease_s": 3600,
 "local": {"sandbox": {"users": {"ml": "astraeus-ml", "vision": "astraeus-vision"}}}}
CONFIG
  DATA="$T/data"
  "$BIN" admin init --org acme --cluster c1 --config "$T/config.json" --data-dir "$DATA" >/dev/null
  "$BIN" admin workspace add ml --weight 1 --data-dir "$DATA" >/dev/null
  ML=$("$BIN" admin token create --workspace ml --data-dir "$DATA" 2>/dev/null)
}
# slurm_serve_start: `serve --executor slurm --slurm-grace 5` on $T/config.json and $DATA, its log
# appended to $T/server.log; sets SERVER_PID and API. Returns 1 when it does not listen in 10 s.
slurm_serve_start() {
  rm -f "$T/port"
  "$BIN" serve --executor slurm --slurm-grace 5 --config "$T/config.json" --data-dir "$DATA" \
    --listen 127.0.0.1:0 --port-file "$T/port" 2>> "$T/server.log" &
  SERVER_PID=$!
  waitfor 100 test -s "$T/port" || return 1
  API="http://127.0.0.1:$(cat "$T/port")/v1"
}
