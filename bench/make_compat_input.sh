#!/usr/bin/env bash
# usage: bench/make_compat_input.sh JOBS OUT_DIR [FIRST_ROW] [MAX_DURATION_S] [TIME_SCALE]
# A compat-mode input in the ASTRAEA reference simulator's formats, derived from the bundled
# Philly trace (data/philly/philly_trace.csv.gz, RFold's 111,549 rows): OUT_DIR/trace.csv
# (job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time, like
# data/astraea-artifact/fake_job.csv), OUT_DIR/share.csv and OUT_DIR/name.lst (the artifact's 20
# tenants, weight 0.1 each, copied). Deterministic: the same arguments make the same bytes.
#  - rows FIRST_ROW (default 20000) onwards, in the trace's arrival order, with 1-16 GPUs (fits
#    the fair quota of 16 GPUs a tenant on 40x8), the first JOBS of them;
#  - submit_time: arrival relative to the first kept row, divided by TIME_SCALE (default 2, so
#    about 24 h of the cluster's GPU time arrive over 40 h), whole seconds;
#  - duration: Philly's, whole seconds, at least 60 and at most MAX_DURATION_S (default 7200);
#  - user: one of the 20 tenants, by a hash of the Philly job id (not round robin);
#  - iterations/model_name/interval/expect_time: not read by either simulator; filled in.
# Used by bench/compat_vs_reference.sh (JOBS = 5000).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${1:?usage: make_compat_input.sh JOBS OUT_DIR [FIRST_ROW] [MAX_DURATION_S] [TIME_SCALE]}
OUT=${2:?usage: make_compat_input.sh JOBS OUT_DIR [FIRST_ROW] [MAX_DURATION_S] [TIME_SCALE]}
FIRST=${3:-20000}
DMAX=${4:-7200}
SCALE=${5:-2}
mkdir -p "$OUT"
cp data/astraea-artifact/share.csv "$OUT/share.csv"
cp data/astraea-artifact/name.lst "$OUT/name.lst"
# The tenant names in name.lst order (CR-separated in the original file).
names=$(tr '\r' '\n' < data/astraea-artifact/name.lst | grep -v '^$' | paste -sd, -)
models="alexnet,inception3,inception4,resnet50,resnet101,resnet152,vgg11,vgg16,vgg19"
zcat data/philly/philly_trace.csv.gz | awk -F, -v first="$FIRST" -v jobs="$JOBS" -v dmax="$DMAX" \
  -v scale="$SCALE" -v names="$names" -v models="$models" '
  BEGIN { nn = split(names, name, ","); nm = split(models, model, ",");
          print "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time" }
  /^#/ { next }
  { row++ }
  done || row <= first { next }
  {
    g = $5 + 0; if (g < 1 || g > 16) next
    if (n == 0) t0 = $2 + 0
    submit = int(($2 - t0) / scale)
    d = int($6 + 0); if (d < 60) d = 60; if (d > dmax) d = dmax
    h = ($1 * 2654435761) % 4294967296
    u = name[1 + (h % nn)]
    printf "%d,%s,%d,%d,%d,%s,%d,%d,%d\n", n, u, g, submit, d, model[1 + (h % nm)], d, 1, 2 * d
    if (++n == jobs) done = 1
  }'  > "$OUT/trace.csv"
echo "make_compat_input: $(($(wc -l < "$OUT/trace.csv") - 1)) jobs in $OUT/trace.csv" >&2
