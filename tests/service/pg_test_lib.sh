# Sourced by pg_serve_test.sh and pg_failover_test.sh. runs_end_and_ledgers_exact API NAMES: waits
# (60 s at most) until every run the org-admin token $AD sees at API (".../v1") has ended, setting
# `left` (runs not ended); then compares each run named in the file NAMES, one a line, with
# W x G x (end - submit) GPU-seconds, printing both, and sets `exact` (1: all equal, 0: not).
runs_end_and_ledgers_exact() {
  local api=$1 names=$2 name want got
  for _ in $(seq 120); do
    left=$(curl -sS -H "Authorization: Bearer $AD" "$api/runs" | jq '[.runs[] | select(.ended_at == null)] | length')
    [ "$left" = 0 ] && break
    sleep 0.5
  done
  exact=1
  while read -r name; do
    want=$(curl -sS -H "Authorization: Bearer $AD" "$api/runs/$name" |
      jq '.workers * .gpus_per_worker * ((.ended_at | fromdateiso8601) - (.submitted_at | fromdateiso8601))')
    got=$(curl -sS -H "Authorization: Bearer $AD" "$api/runs/$name/goodput" | jq '[.gpu_hours[] * 3600] | add | round')
    echo "     $name: ledger $got GPU-s, W x G x (end - submit) = $want"
    [ "$want" = "$got" ] || exact=0
  done < "$names"
}
