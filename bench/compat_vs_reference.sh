#!/usr/bin/env bash
# usage: bench/compat_vs_reference.sh [BUILD_DIR] [OURS_RUNS] [REF_RUNS]
#        (defaults: build/release 30 3; REFERENCE_SIM=dir of the reference simulator, default
#        ../shared/reference-sim beside the repository; SCRATCH=work dir, default
#        /tmp/astraeus-vs-reference)
# Compat mode against the ASTRAEA reference simulator, same machine, same run, same inputs:
#  - fake_job.csv (the artifact's 500 jobs, 40x8) and a 5,000-job input made from the bundled
#    Philly trace by bench/make_compat_input.sh (40x8), both with the artifact's 20 tenants;
#  - the reference (CPython, the invocation of its RUNNING.md: fairness job order, fair quotas,
#    lease 900 s) and `astraeus simulate --mode compat` with the matching options, each timed as
#    a whole process with `perf stat -r` (task-clock: CPU time of the process; elapsed: wall)
#    and once with /usr/bin/time -v (peak RSS);
#  - the jobs compared one by one (fairness, preemptions, checkpoints, resumes, lease expiries,
#    end time, GPUs, submit time): every one must be identical;
#  - one row per input: jobs, reference and Astraeus CPU ms and wall ms, the CPU ratio (the
#    figure of issue 24: >= 300x) and the wall ratio, peak RSS, jobs identical.
# The reference is a measuring stick only: it is copied to SCRATCH and run from there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${1:-build/release}
OURS_RUNS=${2:-30}
REF_RUNS=${3:-3}
BIN="$ROOT/$BUILD/astraeus"
[ -x "$BIN" ] || { echo "compat_vs_reference: no $BIN (build first)" >&2; exit 2; }
REF=${REFERENCE_SIM:-$ROOT/../shared/reference-sim}
[ -f "$REF/main.py" ] || { echo "compat_vs_reference: no reference simulator in $REF" >&2; exit 2; }
command -v perf >/dev/null || { echo "compat_vs_reference: perf is needed (linux-perf)" >&2; exit 2; }
S=${SCRATCH:-/tmp/astraeus-vs-reference}
rm -rf "$S/refsim"; mkdir -p "$S"; cp -r "$REF" "$S/refsim"

A=data/astraea-artifact
bench/make_compat_input.sh 5000 "$S/in5k" 2>/dev/null
INPUTS=("fake_job:$ROOT/$A/fake_job.csv:$ROOT/$A/share.csv:$ROOT/$A/name.lst:40:8"
        "philly5k:$S/in5k/trace.csv:$S/in5k/share.csv:$S/in5k/name.lst:40:8")

# perf stat -r N PRE CMD... -> "task_clock_ms elapsed_ms" (means over the N runs). PRE runs
# before each run, untimed: it removes the outputs of the run before, so that every run writes
# new files, as a first run does (replacing files costs more on ext4, for both simulators).
measure() {
  local runs=$1 pre=$2; shift 2
  perf stat -r "$runs" --pre "$pre" -e task-clock -o "$S/perf.txt" "$@" >/dev/null 2>&1
  awk '/task-clock/ {gsub(",", "", $1); tc = $1} /seconds time elapsed/ {el = $1 * 1000}
       END {printf "%s %.2f\n", tc, el}' "$S/perf.txt"
}
rss_mb() { /usr/bin/time -v -o "$S/rss.txt" "$@" >/dev/null 2>&1
  awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$S/rss.txt"; }

printf '%-9s %6s %10s %10s %9s %9s %8s %8s %7s %7s %s\n' input jobs ref_cpu_ms ref_wall_ms \
  our_cpu_ms our_wall_ms cpu_x wall_x ref_MB our_MB jobs_identical
for in in "${INPUTS[@]}"; do
  IFS=: read -r name trace share names nodes gpn <<< "$in"
  ref_cmd=(/usr/bin/python3 main.py --block_scheduling 1 --num_node_p_switch "$nodes"
    --num_switch 1 --num_gpu_p_node "$gpn" --stavation_threshold 21600 --delay_threshold 300
    --schedule lease --placement consolidate --job_selection fairness --log_level ERROR
    --trace "$trace" --share "$share" --name_list "$names" --lease_term_interval 900
    --metrics True --metrics_path "$S/$name.ref.metrics.csv" --user_quota fair
    --dist_trace_path data/sacct_sh40.csv --fairness_output "$S/$name.ref.jobs.csv")
  our_cmd=("$BIN" simulate --mode compat --trace "$trace" --tenants "$share" --names "$names"
    --cluster "${nodes}x$gpn" --lease 900 --starvation 21600 --delay 300 --job-order fairness
    --quota fair --json --quiet --out "$S/$name.ours")
  pushd "$S/refsim" >/dev/null
  read -r ref_cpu ref_wall < <(measure "$REF_RUNS" \
    "rm -f $S/$name.ref.jobs.csv $S/$name.ref.metrics.csv logger.log" "${ref_cmd[@]}")
  ref_rss=$(rss_mb "${ref_cmd[@]}")
  popd >/dev/null
  read -r our_cpu our_wall < <(measure "$OURS_RUNS" "rm -rf $S/$name.ours" "${our_cmd[@]}")
  our_rss=$(rss_mb "${our_cmd[@]}")
  same=$(python3 - "$S/$name.ref.jobs.csv" "$S/$name.ours/jobs.csv" <<'EOF'
import csv, sys
ref = {r['job_id']: r for r in csv.DictReader(open(sys.argv[1]))}
ours = {r['job_id']: r for r in csv.DictReader(open(sys.argv[2])) if r['status'] == 'done'}
cols = [('fairness', 'fairness'), ('preempt_cnt', 'preemptions'), ('checkpoint_cnt', 'checkpoints'),
        ('resume_cnt', 'resumes'), ('lease_expiry_cnt', 'lease_expiries'), ('end_time', 'end_s'),
        ('num_gpu', 'gpus'), ('submit_time', 'submit_s')]
same = sum(1 for k in ref if k in ours and all(ref[k][a] == ours[k][b] for a, b in cols))
print(f"{same}/{len(ref)}" + ("" if same == len(ref) == len(ours) else f" (ours: {len(ours)} done) DIFFERENT"))
EOF
)
  jobs=$(($(grep -c '' "$trace") - 1))
  awk -v n="$name" -v j="$jobs" -v rc="$ref_cpu" -v rw="$ref_wall" -v oc="$our_cpu" -v ow="$our_wall" \
      -v rr="$ref_rss" -v orr="$our_rss" -v s="$same" 'BEGIN{
    printf "%-9s %6d %10.0f %10.0f %9.2f %9.2f %7.0fx %7.0fx %7s %7s %s\n", n, j, rc, rw, oc, ow, rc/oc, rw/ow, rr, orr, s}'
done
