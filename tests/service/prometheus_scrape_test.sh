#!/usr/bin/env bash
# usage: prometheus_scrape_test.sh ASTRAEUS_BINARY
# A real Prometheus (Debian's `prometheus`) scrapes a live `astraeus serve` on 127.0.0.1 with a
# bearer token (metrics_path /v1/goodput/metrics, every second) and holds the page's series;
# `promtool check metrics` on the live exposition finds no parse error and no lint finding but
# the documented base-unit one on the `_gpu_hours` names; a workspace token's scrape holds only
# its own workspace. Skipped (exit 77) when prometheus, promtool, curl or jq is missing.
# Bounded: about 15 s; every wait has a limit.
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin prometheus promtool curl jq

# A 16-GPU cluster whose clock runs 60x (a minute count every real second), one threshold alert
# so that the operator's astraeus_threshold_alerts_firing family exists.
cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 2, "gpus": 8}]}],
 "time_scale": 60,
 "threshold_alerts": [{"metric": "pool_goodput_hour", "scope": "default", "op": "<", "value": 0.5}]}
JSON
start_server "$WORK/astraeus.json" || exit 1
admin workspace add ml > /dev/null && admin workspace add cv > /dev/null || exit 1
OP=$(new_token --operator --name prometheus); ML=$(new_token --workspace ml); CV=$(new_token --workspace cv)
check "tokens created" '[[ $OP == astx_* && $ML == astx_* && $CV == astx_* ]]'

auth() { echo "Authorization: Bearer $1"; }
code=$(curl -sS -o "$WORK/submit.json" -w '%{http_code}' -X POST "$API/runs" -H "$(auth "$ML")" \
         -H 'Content-Type: application/json' -d '{"name":"llm","workers":2,"gpus_per_worker":8}')
check "run submitted (201)" '[ "$code" = 201 ]'
sleep 3   # three service minutes: counted minutes for the run

# The live exposition, as the operator sees it.
code=$(curl -sS -o "$WORK/metrics.txt" -D "$WORK/headers.txt" -w '%{http_code}' \
         "$API/goodput/metrics" -H "$(auth "$OP")")
check "metrics answer 200" '[ "$code" = 200 ]'
check "content type is the 0.0.4 exposition" \
  "grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' '$WORK/headers.txt'"
promtool check metrics < "$WORK/metrics.txt" > "$WORK/promtool.txt" 2>&1; rc=$?
check "promtool: no parse error (exit 0 or 3, got $rc)" '[ $rc = 0 ] || [ $rc = 3 ]'
check "promtool: no lint finding but the _gpu_hours base unit" \
  "! grep -v -E '^astraeus_(run_)?goodput_gpu_hours use base unit \"seconds\" instead of \"hours\"\$' '$WORK/promtool.txt' | grep -q ."
for m in astraeus_goodput_ratio astraeus_goodput_gpu_hours astraeus_run_goodput_gpu_hours \
         astraeus_run_goodput_ratio astraeus_workers_stalled astraeus_runs_with_straggler \
         astraeus_threshold_alerts_firing; do
  check "exposition has $m" "grep -q '^# TYPE $m gauge\$' '$WORK/metrics.txt'"
done
check "no 401 without a token" \
  '[ "$(curl -sS -o /dev/null -w "%{http_code}" "$API/goodput/metrics")" = 401 ]'

# A workspace token sees only its workspace: cv has no runs, so no ml series and no operator family.
curl -sS "$API/goodput/metrics" -H "$(auth "$CV")" > "$WORK/cv.txt"
check "cv's scrape has no namespace ml" "! grep -q 'namespace=\"ml\"' '$WORK/cv.txt'"
check "cv's scrape has no workspace ml" "! grep -q 'scope=\"workspace\",name=\"ml\"' '$WORK/cv.txt'"
check "cv's scrape has no threshold alerts" "! grep -q astraeus_threshold_alerts_firing '$WORK/cv.txt'"
check "cv's scrape has its own stalled gauge" "grep -q '^astraeus_workers_stalled{namespace=\"cv\"} 0\$' '$WORK/cv.txt'"

# A real Prometheus on loopback, scraping every second with the operator token from a file.
printf '%s\n' "$OP" > "$WORK/token"
cat > "$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: astraeus-goodput
    scheme: http
    metrics_path: /v1/goodput/metrics
    authorization:
      type: Bearer
      credentials_file: $WORK/token
    static_configs:
      - targets: ['127.0.0.1:$SERVER_PORT']
YAML
promtool check config "$WORK/prometheus.yml" > /dev/null 2>&1
check "promtool accepts the scrape config" '[ $? = 0 ]'
check "Prometheus ready on 127.0.0.1" 'start_prometheus "$WORK/prometheus.yml"'

# query PROMQL: prints the JSON result list of an instant query.
query() {
  curl -sS --get "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" 2>/dev/null
}
# count PROMQL: number of series in the answer (-1 when Prometheus does not answer).
count() {
  local n
  n=$(query "$1" | jq -r '.data.result | length' 2>/dev/null)
  echo "${n:--1}"
}
# value PROMQL: the value of the first series ("none" when there is none).
value() { query "$1" | jq -r '.data.result[0].value[1] // "none"' 2>/dev/null; }
scraped=0
for _ in $(seq 60); do
  if [ "$(count 'up{job="astraeus-goodput"} == 1')" = 1 ] && \
     [ "$(count 'astraeus_run_goodput_gpu_hours')" -gt 0 ] 2>/dev/null; then scraped=1; break; fi
  sleep 0.5
done
check "Prometheus scraped the server (up == 1) within 30 s of being ready" '[ $scraped = 1 ]'
[ $scraped = 1 ] || { echo "--- prometheus.log"; tail -20 "$WORK/prometheus.log"; }
lasterr=$(curl -sS "http://127.0.0.1:$PPORT/api/v1/targets" | jq -r '.data.activeTargets[0].lastError // "no target"')
check "the target has no scrape error ('$lasterr')" '[ -z "$lasterr" ]'

# The series, as Prometheus holds them.
check "8 category series of the run ml/llm" \
  '[ "$(count '\''astraeus_run_goodput_gpu_hours{namespace="ml",run="llm"}'\'')" = 8 ]'
llm_hours=$(value 'sum(astraeus_run_goodput_gpu_hours{namespace="ml",run="llm"})')
check "run ml/llm has GPU-hours (sum $llm_hours > 0)" "awk -v v='$llm_hours' 'BEGIN { exit !(v + 0 > 0) }'"
# (The service's hour passes in 60 real seconds here: right after an hour boundary the hour
# window may hold nothing yet, so hour-window ratios and rows are not required.)
check "cluster GPU-hours: 8 categories x 2 windows" \
  '[ "$(count '\''astraeus_goodput_gpu_hours{scope="cluster",name="main"}'\'')" = 16 ]'
check "cluster ratio over the day" \
  '[ "$(count '\''astraeus_goodput_ratio{scope="cluster",name="main",window="day"}'\'')" = 1 ]'
check "pool default: 8 categories over the day" \
  '[ "$(count '\''astraeus_goodput_gpu_hours{scope="pool",name="default",window="day"}'\'')" = 8 ]'
check "workspace ml: ratio over the day" \
  '[ "$(count '\''astraeus_goodput_ratio{scope="workspace",name="ml",window="day"}'\'')" = 1 ]'
check "machine series exist" '[ "$(count '\''astraeus_goodput_gpu_hours{scope="machine"}'\'')" -gt 0 ]'
check "workers stalled per namespace (ml and cv)" \
  '[ "$(count '\''astraeus_workers_stalled'\'')" = 2 ]'
check "runs with a straggler per namespace" '[ "$(count '\''astraeus_runs_with_straggler'\'')" = 2 ]'
check "threshold alerts (operator): pool_goodput_hour" \
  '[ "$(count '\''astraeus_threshold_alerts_firing{metric="pool_goodput_hour"}'\'')" = 1 ]'
check "ratios are within 0..1" \
  '[ "$(count '\''astraeus_goodput_ratio < 0 or astraeus_goodput_ratio > 1'\'')" = 0 ]'

echo "prometheus_scrape_test: $passes passed, $fails failed"
[ $fails = 0 ]
