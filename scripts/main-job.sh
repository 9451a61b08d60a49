#!/usr/bin/env bash
# The main job: ASTRAEA on the real Philly workload (docs/main-job.md).
#  1. gives each of the 111,549 real Philly jobs a virtual cluster drawn (seeded) from the real
#     per-GPU-count mix of the DRE sample's 11 Philly VCs;
#  2. simulates the whole workload on the Philly inventory (552 machines, 2,490 GPUs) under
#     ASTRAEA, default mode, and prints the summary;
#  3. cuts the busiest 14 days and runs ASTRAEA and the YARN-CS emulation side by side on
#     1,120 GPUs (the ASTRAEA paper's Philly experiment: lease 900 s, T_starve 6 h).
# Outputs go to out/main/. Needs the build (this script builds incrementally first).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release > /dev/null
cmake --build --preset release --target astraeus > /dev/null
bin=build/release/astraeus
out=out/main
weights=data/astraea-artifact/philly-share-production.csv
mkdir -p "$out"

echo "== 1. Virtual clusters for the real Philly arrivals (data/philly/, seed 1)"
"$bin" trace assign-tenants --trace data/philly/philly_trace.csv.gz --format rfold-philly \
  --mix-from data/philly/sampled_jobs.json.gz --seed 1 --out "$out/philly_vc.csv"

echo
echo "== 2. The whole Philly workload on the Philly inventory, ASTRAEA (default mode)"
"$bin" simulate --trace "$out/philly_vc.csv" --tenants "$weights" --cluster philly \
  --out "$out/full" "$@"

echo
echo "== 3. The busiest 14 days on 1,120 GPUs: ASTRAEA vs the YARN-CS emulation"
"$bin" trace slice --trace "$out/philly_vc.csv" --busiest-days 14 --out "$out/busiest14.csv"
"$bin" compare --trace "$out/busiest14.csv" --tenants "$weights" --cluster reference-1120 \
  --lease 900 --starvation 21600 --policies astraea,yarn-cs-emu --out "$out/busiest14" "$@"
