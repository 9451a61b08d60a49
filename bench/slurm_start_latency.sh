#!/bin/bash
# Admission -> RUNNING on a Slurm test cluster, as Astraeus admits a job (docs/slurm.md, "Two
# setups"): a held 1-node job with 8 GPUs in PARTITION, then `scontrol update ReqNodeList=NODE
# SiteFactor=1000000 StartTime=now+1` and `scontrol release`; the time until squeue shows it
# RUNNING (polled every 20 ms), N times. Prints each and p50 / p90 / max. Needs SLURM_CONF.
# usage: bench/slurm_start_latency.sh PARTITION NODE [N=20]
set -euo pipefail
part=$1 node=$2 n=${3:-20}
echo "SchedulerType: $(scontrol show config | awk '$1 == "SchedulerType" {print $3}'); $(scontrol show config | awk '$1 == "SchedulerParameters" {print $3}')"
out=()
for i in $(seq "$n"); do
  j=$(sbatch --parsable --hold -p "$part" -N 1 --gres=gpu:8 -J latency -o /dev/null --wrap 'sleep 0.3')
  sleep 0.5
  t0=$(date +%s.%N)
  scontrol update JobId="$j" ReqNodeList="$node" SiteFactor=1000000 StartTime=now+1
  scontrol release "$j"
  while [ "$(squeue -h -j "$j" -o %T)" = PENDING ]; do sleep 0.02; done
  dt=$(echo "$(date +%s.%N) - $t0" | bc)
  out+=("$dt")
  printf '%s ' "$dt"
  while [ -n "$(squeue -h -j "$j" -t R,CG -o %i)" ]; do sleep 0.1; done
done
echo
printf '%s\n' "${out[@]}" | sort -n | awk '{a[NR]=$1} END {printf "n=%d p50=%.2f s p90=%.2f s max=%.2f s\n", NR, a[int((NR+1)/2)], a[int(NR*0.9+0.5)], a[NR]}'
