#!/usr/bin/env bash
# How old a follower replica's data is (issue 23, docs/operations.md "Replicas"): two `astraeus
# serve --executor sim` replicas on a fresh database of ASTRAEUS_TEST_PG, time_scale 1, the
# follower reloading every REFRESH s (default 2); N runs (default 2000) submitted to the leader
# (4 at a time), then: X-Astraeus-Data-Age-Ms of 40 follower answers (min / median / max), and
# for 5 more runs the seconds from the leader's 201 to the run on the follower's GET /v1/runs/NAME.
# Usage: ASTRAEUS_TEST_PG=... bench/follower_data_age.sh build/release/astraeus [N] [REFRESH]
set -u
BIN=$(realpath "$1"); N=${2:-2000}; REFRESH=${3:-2}
. "$(dirname "$0")/../tests/service/pg_test_lib.sh"
pg_test_begin follower_age curl jq psql
PA=""; PB=""
trap 'for p in $PA $PB; do kill -9 "$p" 2>/dev/null; done; pg_test_cleanup' EXIT
for r in a b; do
  sim_replica_config "$r" "$PG"
  jq ".time_scale = 1 | .lease_duration_s = 6 | .lease_renew_s = 2 | .follower_refresh_s = $REFRESH | .workspace_limits = {\"pending_runs\": 1000000, \"submissions_per_minute\": 1000000}" \
    "$T/$r.json" > "$T/$r.tmp" && mv "$T/$r.tmp" "$T/$r.json"
done
A() { "$BIN" admin "$@" --config "$T/a.json" --data-dir "$T/admin"; }
A init --org acme --cluster c1 >/dev/null && A workspace add ml >/dev/null || exit 1
ML=$(A token create --workspace ml 2>/dev/null)
start_replica a || exit 1
for _ in $(seq 100); do [ "$(ready_code a)" = 200 ] && break; sleep 0.1; done
start_replica b || exit 1
seq "$N" | xargs -P 4 -I{} curl -sS -o /dev/null -X POST -H "Authorization: Bearer $ML" \
  --data '{"name":"r{}","workers":1,"gpus_per_worker":1,"sim_duration_s":86400}' "$(url a)/v1/runs"
echo "runs in the database: $(sql 'SELECT COUNT(*) FROM runs')"
sleep $((REFRESH * 2 + 2))
for _ in $(seq 40); do
  curl -sS -D - -o /dev/null -H "Authorization: Bearer $ML" "$(url b)/v1/runs?limit=1" | tr -d '\r' |
    awk -F': ' 'tolower($1) == "x-astraeus-data-age-ms" {print $2}'
  sleep 0.1
done | sort -n > "$T/ages"
echo "X-Astraeus-Data-Age-Ms over 40 answers: min $(head -1 "$T/ages"), median $(sed -n 20p "$T/ages"), max $(tail -1 "$T/ages") (refresh $REFRESH s)"
for i in 1 2 3 4 5; do
  curl -sS -o /dev/null -X POST -H "Authorization: Bearer $ML" --data "{\"name\":\"late$i\",\"workers\":1,\"gpus_per_worker\":1}" "$(url a)/v1/runs"
  t0=$(date +%s.%N)
  for _ in $(seq 600); do
    [ "$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $ML" "$(url b)/v1/runs/late$i")" = 200 ] && break
    sleep 0.02
  done
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "late%d on the follower after %.2f s\n", '"$i"', b - a }'
done
