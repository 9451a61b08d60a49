#!/bin/bash
# slurm-test-cluster.sh: a throw-away Slurm 22.05 cluster (Debian 12 packages) on ONE host, for
# Astraeus' Slurm tests and for developers: munged + slurmctld + 4 x slurmd ("nodes" gpu1..gpu4 with
# 8 fake GPUs each, gres backed by symlinks to /dev/null) on 127.0.0.1, and, when the packages are
# installed, a private MariaDB + slurmdbd so that `sacct` works (ACCT=slurmdbd). No systemd: every
# daemon is started by hand and stopped by the PID in its pid file. Everything (config, state, logs,
# pid files, munge key and socket, database) lives under $BASE.
# Measured facts and traps: docs/slurm.md ("The test cluster").
#
# Usage (as root):  scripts/slurm-test-cluster.sh start|stop|status|env
#   start   (re)creates $BASE, starts the daemons, waits until every node is idle and one warm-up job
#           has run (the first scheduling pass comes ~3 s after slurmctld starts). Exit 0 when up.
#           Also the tests' tenants: Unix users astraeus-ml, astraeus-vision (when missing) and,
#           with slurmdbd, Slurm accounts ml and vision with those users (TENANTS).
#   stop    cancels every job, `scontrol shutdown`, then TERM (KILL after 15 s) by pid file; also ends
#           this cluster's leftover slurmstepd (found by SLURM_CONF in their environment); then
#           deletes the Unix users start made (once no other test cluster runs), removes $BASE (all it made; KEEP=1 keeps it, e.g.
#           to read the logs). Exit 0.
#   status  exit 0 when the controller answers, with the node list; 1 otherwise.
#   env     prints `export SLURM_CONF=...` for this cluster.
# Env: BASE (/tmp/astraeus-slurm)  KEEP (stop: keep $BASE)  NODES (4)  GPUS (8)  CPUS (16)  PORT0 (16817: slurmctld; slurmd i
#      listens on PORT0+100+i)  CREDEXP (10 s)  ACCT (auto: slurmdbd when slurmdbd and mariadbd are
#      installed, else none)  DBDPORT (16819)  DBPORT (16306)
#      CGROUP (no: proctrack/linuxproc + task/none; yes: proctrack/cgroup + task/cgroup and a
#      cgroup.conf; auto: yes when the cgroup v1 freezer and memory hierarchies are writable and
#      no other cluster's slurm_gpu* cgroups are in use there. Default no: docs/slurm.md says why)
#      SCHED (builtin: SchedulerType=sched/builtin, one partition `gpu` = every node, what
#      Astraeus needs when it schedules the whole cluster; backfill: SchedulerType=sched/backfill
#      for a cluster Astraeus shares, with partition `astraeus` = the GPU nodes gpu1..gpuNODES,
#      which Astraeus owns, and the default partition `batch` = BATCH more nodes cpu1..cpuBATCH
#      (no GPUs) for other users; they do not overlap (docs/slurm.md, "Two setups")
#      BATCH (2: the batch nodes of SCHED=backfill, CPUS CPUs each; slurmd i listens on PORT0+150+i;
#      two, because Slurm puts the components of a hetjob on different nodes)
#      BF_INTERVAL (30, Slurm's default: bf_interval of SCHED=backfill, in seconds)
set -euo pipefail
BASE=${BASE:-/tmp/astraeus-slurm}
NODES=${NODES:-4}; GPUS=${GPUS:-8}; CPUS=${CPUS:-16}
PORT0=${PORT0:-16817}; CREDEXP=${CREDEXP:-10}
DBDPORT=${DBDPORT:-16819}; DBPORT=${DBPORT:-16306}
CGROUP=${CGROUP:-no}
SCHED=${SCHED:-builtin}; BATCH=${BATCH:-2}; BF_INTERVAL=${BF_INTERVAL:-30}
case "$SCHED" in builtin|backfill) ;; *) echo "SCHED must be builtin or backfill (got '$SCHED')" >&2; exit 2 ;; esac
[ "$SCHED" = backfill ] || BATCH=0
if [ -z "${ACCT:-}" ]; then
  ACCT=none
  if command -v slurmdbd >/dev/null 2>&1 && [ -x /usr/sbin/mariadbd ]; then ACCT=slurmdbd; fi
fi
export SLURM_CONF=$BASE/etc/slurm.conf
MUNGE_SOCK=$BASE/munge/munge.socket

# Slurm's cgroup v1 plugin (22.05, built for several slurmd per host) puts each node's jobs under
# /sys/fs/cgroup/<controller>/slurm_<node>/uid_U/job_J/step_S. Two clusters on one host with the
# same node names would share those folders (and job ids): auto falls back to linuxproc then.
cgroup_ok() {
  local c
  for c in freezer memory; do
    grep -q " /sys/fs/cgroup/$c .* cgroup .*[ ,]$c\(,\|$\)" /proc/self/mountinfo || return 1
    [ -w "/sys/fs/cgroup/$c" ] || return 1
    if compgen -G "/sys/fs/cgroup/$c/slurm_gpu*/uid_*" >/dev/null; then return 1; fi
  done
}
cgroup_sweep() {   # the empty slurm_gpu* folders Slurm leaves behind (rmdir: only empty ones go)
  local d
  for d in /sys/fs/cgroup/*/slurm_gpu*; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  return 0
}

log() { echo "[slurm-test-cluster $(date +%T.%N | cut -c1-12)] $*"; }
die() { log "ERROR: $*" >&2; exit 1; }

write_conf() {
  local h; h=$(hostname -s)
  mkdir -p "$BASE"/{etc,state,spool,run,log,dev,munge}
  for n in $(seq 1 "$NODES"); do
    # SlurmdSpoolDir must exist before slurmd starts (else a race: "Domain socket directory").
    mkdir -p "$BASE/spool/gpu$n" "$BASE/dev/gpu$n"
    # A gres/gpu needs one device file per GPU (a count-only GPU is dropped and the node goes
    # INVAL; a regular file is "not a valid character or block device"): symlinks to /dev/null.
    for i in $(seq 0 $((GPUS-1))); do ln -sfn /dev/null "$BASE/dev/gpu$n/nvidia$i"; done
  done
  local p1=$((PORT0+101)) pN=$((PORT0+100+NODES))
  for n in $(seq 1 "$BATCH"); do mkdir -p "$BASE/spool/cpu$n"; done
  local acct proctrack=proctrack/linuxproc task=task/none
  if [ "$CGROUP" = yes ] || { [ "$CGROUP" = auto ] && cgroup_ok; }; then
    proctrack=proctrack/cgroup task=task/cgroup
    # Slurm's confinement of each job and step (docs/slurm.md, "What confines a step"):
    # ConstrainCores=no: the 4 fake nodes share this host's few cores, and a cpuset of each job's
    # abstract CPUs would pin every job to core 0; ConstrainDevices=no: the fake GPUs are
    # symlinks to /dev/null (c 1:3), which the devices controller would deny to every job.
    cat > "$BASE/etc/cgroup.conf" <<CG
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
CgroupAutomount=no
ConstrainCores=no
ConstrainRAMSpace=yes
ConstrainSwapSpace=no
ConstrainDevices=no
CG
  fi
  local acct
  if [ "$ACCT" = slurmdbd ]; then
    acct="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBDPORT
# the munge socket for slurmctld/sacctmgr -> slurmdbd traffic (AuthInfo is not used there)
AccountingStoragePass=$MUNGE_SOCK
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/none"
    cat > "$BASE/etc/slurmdbd.conf" <<DBD
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBDPORT
SlurmUser=root
PidFile=$BASE/run/slurmdbd.pid
LogFile=$BASE/log/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DBPORT
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
DBD
    chmod 600 "$BASE/etc/slurmdbd.conf"
  else
    # AccountingStorageTRES=gres/gpu is fatal without slurmdbd in 22.05.
    acct="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
  fi
  # sched/builtin + priority/multifactor with every weight 0: every job sits at priority 1 and what
  # Astraeus sets (SiteFactor) is obeyed strictly. (builtin + basic walks jobs in submit order.)
  # SCHED=backfill: a cluster that keeps Slurm's scheduler for its other users: sched/backfill and
  # a site's own (here: age and size) priority weights; Astraeus owns partition `astraeus`.
  local sched="SchedulerType=sched/builtin" params="" weights="PriorityWeightAge=0
PriorityWeightJobSize=0"
  local parts="PartitionName=gpu Nodes=gpu[1-$NODES] Default=YES MaxTime=INFINITE State=UP"
  local batch_nodes=""
  if [ "$SCHED" = backfill ]; then
    sched="SchedulerType=sched/backfill"
    params=",bf_interval=$BF_INTERVAL"
    weights="PriorityWeightAge=0
PriorityWeightJobSize=1000"
    # (the age factor needs slurmdbd: "PriorityWeightAge can only be used with SlurmDBD")
    [ "$ACCT" = slurmdbd ] && weights="PriorityWeightAge=1000
PriorityMaxAge=1-0
PriorityWeightJobSize=1000"
    parts="PartitionName=astraeus Nodes=gpu[1-$NODES] Default=NO MaxTime=INFINITE State=UP OverSubscribe=NO
PartitionName=batch Nodes=cpu[1-$BATCH] Default=YES MaxTime=INFINITE State=UP"
    batch_nodes="NodeName=cpu[1-$BATCH] NodeHostname=$h NodeAddr=127.0.0.1 Port=[$((PORT0+151))-$((PORT0+150+BATCH))] CPUs=$CPUS RealMemory=64000 State=UNKNOWN"
  fi
  cat > "$BASE/etc/slurm.conf" <<EOF
# generated by scripts/slurm-test-cluster.sh
ClusterName=astraeus
SlurmctldHost=$h(127.0.0.1)
SlurmctldPort=$PORT0
SlurmdPort=$((PORT0+1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK,cred_expire=$CREDEXP
CredType=cred/munge
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/%n
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=$proctrack
TaskPlugin=$task
MpiDefault=none
SwitchType=switch/none
$acct
# Astraeus's fencing check for replicas (scripts/slurm/job_submit.lua, copied beside slurm.conf)
JobSubmitPlugins=lua
JobCompType=jobcomp/filetxt
JobCompLoc=$BASE/log/jobcomp.txt
$sched
PriorityType=priority/multifactor
$weights
PriorityWeightFairshare=0
PriorityWeightPartition=0
PriorityWeightQOS=0
PriorityWeightAssoc=0
PriorityFavorSmall=NO
SchedulerParameters=sched_interval=1,sched_min_interval=0,batch_sched_delay=0,enable_user_top$params
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
MinJobAge=86400
MailProg=/bin/true
KillWait=2
MessageTimeout=5
InactiveLimit=0
CompleteWait=0
SlurmdTimeout=30
UnkillableStepTimeout=10
NodeName=gpu[1-$NODES] NodeHostname=$h NodeAddr=127.0.0.1 Port=[$p1-$pN] CPUs=$CPUS RealMemory=64000 Gres=gpu:$GPUS State=UNKNOWN
$batch_nodes
$parts
EOF
  {
    echo "AutoDetect=off"
    for n in $(seq 1 "$NODES"); do
      echo "NodeName=gpu$n Name=gpu File=$BASE/dev/gpu$n/nvidia[0-$((GPUS-1))]"
    done
  } > "$BASE/etc/gres.conf"
  cp "$(dirname "$0")/slurm/job_submit.lua" "$BASE/etc/job_submit.lua"
}

alive() {   # process exists and is not a zombie (without systemd, PID 1 may reap orphans late)
  [ -n "${1:-}" ] && [ -r "/proc/$1/stat" ] || return 1
  local st; st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

pid_of() { [ -s "$1" ] && cat "$1" || true; }

start_db() {   # private MariaDB on 127.0.0.1:$DBPORT, then slurmdbd on 127.0.0.1:$DBDPORT
  local d=$BASE/mysql
  mkdir -p "$d"; chown mysql:mysql "$d"   # its pid file and log must be in a mysql-owned folder
  mariadb-install-db --user=mysql --datadir="$d/data" --auth-root-authentication-method=socket \
    --skip-test-db >"$BASE/log/mariadb-install.log" 2>&1 || die "mariadb-install-db failed (see $BASE/log/mariadb-install.log)"
  setsid /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$d/data" --socket="$d/mysqld.sock" \
    --pid-file="$d/mysqld.pid" --port="$DBPORT" --bind-address=127.0.0.1 --skip-name-resolve \
    --log-error="$d/mysqld.err" --innodb-buffer-pool-size=32M </dev/null >/dev/null 2>&1 &
  local ok=0
  for _ in $(seq 1 150); do
    if mariadb --no-defaults -S "$d/mysqld.sock" -uroot -e 'select 1' >/dev/null 2>&1; then ok=1; break; fi
    sleep 0.1
  done
  [ $ok = 1 ] || die "mariadbd did not answer within 15 s (see $d/mysqld.err)"
  mariadb --no-defaults -S "$d/mysqld.sock" -uroot -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
  log "mariadbd pid $(pid_of "$d/mysqld.pid")"
  slurmdbd            # daemonizes; finds slurmdbd.conf next to $SLURM_CONF
  ok=0
  for _ in $(seq 1 50); do
    if timeout 5 sacctmgr -n list cluster >/dev/null 2>&1; then ok=1; break; fi
    sleep 0.2
  done
  [ $ok = 1 ] || die "slurmdbd did not answer (see $BASE/log/slurmdbd.log)"
  sacctmgr -i add cluster astraeus >/dev/null 2>&1 || true   # also creates account root + user root
  log "slurmdbd pid $(pid_of "$BASE/run/slurmdbd.pid")"
}

# The tenants the Slurm tests use (docs/slurm.md, "Tenants"): Unix user astraeus-W for each
# workspace W of $TENANTS, and with slurmdbd a Slurm account W with that user. Users made here are
# listed in $BASE/made-users and deleted again by stop (users that existed before are kept).
TENANTS=${TENANTS:-ml vision}
make_tenants() {
  local w u
  : > "$BASE/made-users"
  register_cluster
  for w in $TENANTS; do
    u=astraeus-$w
    if ! getent passwd "$u" >/dev/null; then
      useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group "$u" ||
        die "useradd $u failed"
      echo "$u" >> "$BASE/made-users"
    fi
  done
  if [ "$ACCT" = slurmdbd ]; then
    local accts; accts=$(echo "$TENANTS" | tr -s ' ' ',')
    sacctmgr -i add account "$accts" cluster=astraeus >/dev/null 2>&1 || true
    for w in $TENANTS; do
      sacctmgr -i add user "astraeus-$w" account="$w" cluster=astraeus >/dev/null 2>&1 || true
      sacctmgr -n -P list assoc user="astraeus-$w" account="$w" format=user | grep -qx "astraeus-$w" ||
        die "no Slurm association of user astraeus-$w with account $w"
    done
  fi
  log "tenants: $(for w in $TENANTS; do echo -n "$w=astraeus-$w($(id -u "astraeus-$w")) "; done)"
}

# The tenant users are shared by every test cluster on the host (another BASE, other ports): start
# registers its BASE in a host-wide list, and a stop hands the users it made to a host-wide list and
# deletes them only when no other cluster is registered, so that stopping one cluster never takes
# the users from under another one still running.
SHARED_MADE_USERS=/tmp/astraeus-slurm-test-made-users
RUNNING_CLUSTERS=/tmp/astraeus-slurm-test-clusters
register_cluster() { echo "$BASE" >> "$RUNNING_CLUSTERS"; }
remove_tenants() {   # the Unix users start made (their accounts go with the database in $BASE)
  local u others=''
  if [ -s "$BASE/made-users" ]; then cat "$BASE/made-users" >> "$SHARED_MADE_USERS"; fi
  rm -f "$BASE/made-users"
  if [ -f "$RUNNING_CLUSTERS" ]; then
    local b
    for b in $(grep -vxF "$BASE" "$RUNNING_CLUSTERS" | sort -u || true); do   # still alive only
      alive "$(pid_of "$b/run/slurmctld.pid")" && others+="$b "
    done
    others=${others% }
    if [ -n "$others" ]; then tr ' ' '\n' <<<"$others" > "$RUNNING_CLUSTERS"; else rm -f "$RUNNING_CLUSTERS"; fi
  fi
  [ -s "$SHARED_MADE_USERS" ] || return 0
  if [ -n "$others" ]; then
    log "kept users $(sort -u "$SHARED_MADE_USERS" | tr '\n' ' ')(test cluster $others still runs)"
    return 0
  fi
  while read -r u; do
    [ -n "$u" ] && getent passwd "$u" >/dev/null && userdel "$u" 2>/dev/null && log "removed user $u"
  done < <(sort -u "$SHARED_MADE_USERS")
  rm -f "$SHARED_MADE_USERS"
}

start() {
  [ "$(id -u)" = 0 ] || die "must run as root (munged runs as user munge; the daemons as root)"
  local p
  for p in slurmctld slurmd munged sinfo scontrol; do
    command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] ||
      die "$p is not installed (run scripts/bootstrap.sh: Debian's slurm-wlm, munge)"
  done
  if status >/dev/null 2>&1; then log "already running under $BASE"; return 0; fi
  stop >/dev/null 2>&1 || true    # leftovers of an earlier, broken start
  local t0; t0=$(date +%s.%N)
  # Another cluster's (or program's) port: slurmctld would die with "Address already in use".
  local port
  for port in "$PORT0" $(seq $((PORT0+101)) $((PORT0+100+NODES))) $(seq $((PORT0+151)) $((PORT0+150+BATCH))); do
    if ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then die "port $port is in use (choose another PORT0)"; fi
  done
  rm -rf "$BASE"
  write_conf
  # munge with a private key and socket (AuthInfo=socket=...): nothing in /etc or /run touched.
  dd if=/dev/urandom of="$BASE/munge/munge.key" bs=1024 count=1 status=none
  chown -R munge:munge "$BASE/munge"; chmod 755 "$BASE/munge"; chmod 400 "$BASE/munge/munge.key"
  runuser -u munge -- /usr/sbin/munged --socket="$MUNGE_SOCK" --key-file="$BASE/munge/munge.key" \
      --pid-file="$BASE/munge/munged.pid" --log-file="$BASE/munge/munged.log" \
      --seed-file="$BASE/munge/munged.seed" --force
  log "munged pid $(pid_of "$BASE/munge/munged.pid")"
  if [ "$ACCT" = slurmdbd ]; then start_db; fi
  make_tenants
  slurmctld           # daemonizes; writes SlurmctldPidFile
  for n in $(seq 1 "$NODES"); do slurmd -N "gpu$n"; done   # one slurmd per fake node
  for n in $(seq 1 "$BATCH"); do slurmd -N "cpu$n"; done
  local up=0
  for _ in $(seq 1 150); do
    if [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l || true)" -ge $((NODES+BATCH)) ]; then up=1; break; fi
    sleep 0.1
  done
  if ! alive "$(pid_of "$BASE/run/slurmctld.pid")"; then
    tail -5 "$BASE/log/slurmctld.log" >&2 || true; KEEP=1 stop >/dev/null 2>&1 || true; die "slurmctld died"
  fi
  [ $up = 1 ] || { sinfo -N >&2 || true; KEEP=1 stop >/dev/null 2>&1 || true; die "the $((NODES+BATCH)) nodes did not become idle within 15 s"; }
  # Warm-up: the first scheduling pass comes ~3 s after slurmctld starts; wait for it here so that
  # timing-sensitive tests do not see it.
  local jid
  jid=$(sbatch --parsable -J warmup -o /dev/null --wrap true) || die "sbatch of the warm-up job failed"
  local done_=0
  for _ in $(seq 1 100); do
    local st; st=$(squeue -h -j "$jid" -o %T 2>/dev/null || true)
    if [ -z "$st" ] || [ "$st" = COMPLETED ]; then done_=1; break; fi
    sleep 0.1
  done
  [ $done_ = 1 ] || log "warning: warm-up job $jid did not finish within 10 s"
  echo "export SLURM_CONF=$SLURM_CONF" > "$BASE/env"
  sinfo -N -o '%N %T %G %c'
  log "process tracking: $(grep -h '^ProctrackType\|^TaskPlugin' "$SLURM_CONF" | tr '\n' ' ')"
  log "scheduler: $(scontrol show config | awk '$1 == "SchedulerType" {print $3}'); partitions: $(sinfo -h -o '%P=%N' | tr '\n' ' ')"
  log "cluster up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s (ACCT=$ACCT); $(cat "$BASE/env")"
}

stop_pids() {   # stop_pids NAME PID...: TERM all at once, wait up to 15 s, then KILL
  local name=$1; shift
  local pids=() p
  for p in "$@"; do alive "$p" && pids+=("$p"); done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 150); do
    local n=0
    for p in "${pids[@]}"; do if alive "$p"; then n=$((n+1)); fi; done
    [ $n = 0 ] && { log "stopped $name (${pids[*]})"; return 0; }
    sleep 0.1
  done
  log "$name still alive after TERM, sending KILL (${pids[*]})"; kill -KILL "${pids[@]}" 2>/dev/null || true
}

stepd_pids() {   # this cluster's slurmstepd processes (they outlive slurmd by design)
  local f p
  for f in /proc/[0-9]*/comm; do
    p=${f#/proc/}; p=${p%/comm}
    [ "$(cat "$f" 2>/dev/null || true)" = slurmstepd ] || continue
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$SLURM_CONF" && echo "$p"
  done
  return 0
}

stop() {
  local ctld; ctld=$(pid_of "$BASE/run/slurmctld.pid")
  if alive "$ctld"; then
    # 1. End the jobs first: slurmstepd and the jobs' processes outlive slurmd and slurmctld.
    local jobs; jobs=$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ' || true)
    # shellcheck disable=SC2086
    if [ -n "${jobs// }" ]; then scancel $jobs 2>/dev/null || true; fi
    for _ in $(seq 1 100); do
      [ -z "$(squeue -h -t RUNNING,COMPLETING,CONFIGURING -o %A 2>/dev/null || true)" ] && break; sleep 0.1
    done
    # 2. slurmctld forwards the shutdown to every slurmd: all gone in ~0.1 s.
    scontrol shutdown >/dev/null 2>&1 || true
  fi
  # 3. Whatever is left, by pid file (a slurmd whose controller is gone lingers ~15 s on TERM).
  local f pids=()
  for f in "$BASE"/run/slurmd-*.pid; do [ -e "$f" ] && pids+=("$(pid_of "$f")"); done
  stop_pids slurmd "${pids[@]}"
  stop_pids slurmctld "$ctld"
  stop_pids slurmdbd "$(pid_of "$BASE/run/slurmdbd.pid")"
  stop_pids mariadbd "$(pid_of "$BASE/mysql/mysqld.pid")"
  stop_pids munged "$(pid_of "$BASE/munge/munged.pid")"
  mapfile -t pids < <(stepd_pids)
  stop_pids slurmstepd "${pids[@]}"
  rm -f "$BASE/env"
  if grep -q '^ProctrackType=proctrack/cgroup' "$SLURM_CONF" 2>/dev/null; then cgroup_sweep; fi
  remove_tenants
  # 4. Everything it made lives under $BASE (config, state, spool, logs, munge, database): gone,
  #    unless KEEP=1 (to read the logs). Only a tree this script generated is removed.
  if [ -z "${KEEP:-}" ] && [ -n "$BASE" ] && [ "$BASE" != / ] &&
     head -1 "$BASE/etc/slurm.conf" 2>/dev/null | grep -qx '# generated by scripts/slurm-test-cluster.sh'; then
    local size; size=$(du -sh "$BASE" 2>/dev/null | cut -f1 || true)
    rm -rf "$BASE"
    log "removed $BASE ($size)"
  fi
  log "stopped"
}

status() {
  [ -s "$SLURM_CONF" ] || { echo "no cluster under $BASE"; return 1; }
  alive "$(pid_of "$BASE/run/slurmctld.pid")" || { echo "slurmctld is not running ($BASE)"; return 1; }
  timeout 10 scontrol ping >/dev/null 2>&1 || { echo "slurmctld does not answer ($BASE)"; return 1; }
  sinfo -N -o '%N %T %G %c'
  squeue
}

case "${1:-}" in
  start)  start ;;
  stop)   stop ;;
  status) status ;;
  env)    echo "export SLURM_CONF=$SLURM_CONF" ;;
  *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
