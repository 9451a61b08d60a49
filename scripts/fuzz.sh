#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang++-19, ASan + UBSan, fuzz/ only) and runs
# each one for a bounded time from its seed corpus (fuzz/corpus/<target>/; new inputs go to a
# scratch copy under build/fuzz/, the committed seeds are not changed).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]
# Prints one line per target: executions, coverage, corpus size; exits 1 if any target found a
# crash, a leak, a UB report or a timeout (its input is kept in build/fuzz/findings/<target>/).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER=${1:-60}
shift || true
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(fuzz_trace_reference fuzz_trace_philly fuzz_trace_helios fuzz_trace_rfold fuzz_trace_native
           fuzz_tenant_config fuzz_cluster_config fuzz_service_config fuzz_event_log
           fuzz_rest_body fuzz_query_params fuzz_rfc3339 fuzz_http_request
           fuzz_agent_body fuzz_base64 fuzz_logs_query fuzz_slurm_import)
fi
OUT=build/fuzz/runs
rm -rf "$OUT"; mkdir -p "$OUT" build/fuzz/findings
failed=0
for t in "${TARGETS[@]}"; do
  work="$OUT/$t"; mkdir -p "$work/corpus" "build/fuzz/findings/$t"
  cp fuzz/corpus/"$t"/* "$work/corpus/" 2>/dev/null || true
  # -timeout: one input over 60 s is a hang (an event log may make the count walk up to 800
  # days of minutes per worker: about 15 s under ASan); -rss_limit_mb: 2 GiB; leaks: ASan.
  rc=0
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  build/fuzz/fuzz/"$t" "$work/corpus" -max_total_time="$SECONDS_PER" -timeout=60 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="build/fuzz/findings/$t/" \
      > "$work/log" 2>&1 || rc=$?
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$work/log")
  cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -n 1 | awk '{print $2}')
  n=$(ls "$work/corpus" | wc -l)
  if [ $rc -ne 0 ]; then
    failed=1
    echo "$t: FOUND a problem (exit $rc) after ${execs:-?} executions; input in build/fuzz/findings/$t/"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$work/log" | head -n 8 | sed 's/^/    /'
  else
    printf '%-22s %10s executions in %s s, coverage %s, corpus %s\n' "$t" "${execs:-?}" "$SECONDS_PER" "${cov:-?}" "$n"
  fi
done
exit $failed
