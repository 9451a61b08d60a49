#!/usr/bin/env bash
# usage: bench/scale_replicate.sh [BUILD_DIR] [K...]        (default: build/release 1 2 4 8 16)
# How the simulator's default mode grows with the work: the whole Philly workload (the main
# job's out/main/philly_vc.csv, made by scripts/main-job.sh if missing) replicated K times on the
# Philly inventory replicated K times (the same load: K copies of every job, same submit times,
# same tenants; K copies of every machine), then `astraeus simulate` (ASTRAEA, defaults) timed as
# a whole process with /usr/bin/time. Prints one row per K: jobs, wall and user seconds,
# microseconds per job, peak RSS (MB) and bytes per job. The traces and clusters are written
# under $SCALE_DIR (default /tmp/astraeus-scale) and reused. docs/performance.md has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build/release}; shift || true
KS=("$@"); [ ${#KS[@]} -gt 0 ] || KS=(1 2 4 8 16)
BIN="$BUILD/astraeus"
[ -x "$BIN" ] || { echo "scale_replicate: no $BIN (build first: cmake --build --preset release)" >&2; exit 2; }
BASE=out/main/philly_vc.csv
[ -f "$BASE" ] || bash scripts/main-job.sh >/dev/null
DIR=${SCALE_DIR:-/tmp/astraeus-scale}; mkdir -p "$DIR"
printf '%4s %10s %8s %8s %8s %8s %8s\n' k jobs wall_s user_s us/job rss_MB B/job
for k in "${KS[@]}"; do
  trace="$DIR/philly_x$k.csv"; cluster="$DIR/philly_x$k-machines.csv"
  if [ ! -s "$trace" ]; then
    # Header lines as they are; each job row k times with ids id*k+c (unique), in submit order.
    awk -F, -v k="$k" 'BEGIN{OFS=","} /^#/ || /^job_id/ {print; next}
      {id=$1; for (c=0; c<k; c++) {$1=id*k+c; print}}' "$BASE" > "$trace.tmp" && mv "$trace.tmp" "$trace"
  fi
  if [ ! -s "$cluster" ]; then
    # The `philly` preset's order (big machines first: 231 x 8 then 321 x 2), k times each.
    { echo "gpus"; for ((c=0; c<231*k; c++)); do echo 8; done
      for ((c=0; c<321*k; c++)); do echo 2; done; } > "$cluster"
  fi
  jobs=$(($(grep -vc '^#' "$trace") - 1))
  out="$DIR/out_x$k"
  /usr/bin/time -f '%e %U %M' -o "$DIR/time_x$k" "$BIN" simulate --trace "$trace" \
    --tenants data/astraea-artifact/philly-share-production.csv --cluster "$cluster" \
    --quiet --out "$out" >/dev/null
  read -r wall user rss_kb < "$DIR/time_x$k"
  awk -v k="$k" -v n="$jobs" -v w="$wall" -v u="$user" -v r="$rss_kb" 'BEGIN{
    printf "%4d %10d %8.2f %8.2f %8.2f %8.0f %8.0f\n", k, n, w, u, u*1e6/n, r/1024, r*1024/n}'
done
