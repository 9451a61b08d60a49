#!/usr/bin/env bash
# usage: tenant_fairness_test.sh ASTRAEUS_BINARY
# F_u (a tenant's GPU-time received / deserved over the run) against a computation by hand.
# 2 GPUs (1 x 2), tenants A and B of weight 1 (quota 1 GPU each) and Z of weight 0 (quota 0).
# A and B each run two 1-GPU jobs of 7,200 s submitted at 0; Z one 1-GPU job of 600 s.
# By hand: A and B each hold 1 GPU (half the cluster) whenever they have work, and each deserves
# min(demand 2, quota 1) = 1 GPU for as long as it has work: F_u = 1.000 each, not 0.833. Z
# deserves min(1, 0) = 0 GPU-seconds: it has no F_u (null, as F_j of a job that deserved
# nothing), and the F_u statistics (min, Jain) are over A and B only.
set -u
bin=$1
command -v jq > /dev/null || { echo "SKIP: jq not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { if eval "$2"; then passes=$((passes+1)); else echo "FAIL: $1"; fails=$((fails+1)); fi; }
printf '#astraeus-trace,1\n#tenant,A,1\n#tenant,B,1\n#tenant,Z,0\njob_id,tenant,gpus,submit_s,duration_s,weight,name\n1,A,1,0,7200,1,A1\n2,A,1,0,7200,1,A2\n3,B,1,0,7200,1,B1\n4,B,1,0,7200,1,B2\n5,Z,1,0,600,1,Z1\n' > "$tmp/t.csv"
printf '{"tenants": [{"name": "A", "weight": 1}, {"name": "B", "weight": 1}, {"name": "Z", "weight": 0}]}\n' > "$tmp/w.json"
"$bin" simulate --trace "$tmp/t.csv" --tenants "$tmp/w.json" --cluster 1x2 --lease 900 --quiet --json \
  --out "$tmp/o" > "$tmp/s.json" || exit 1
fu() { jq -r --arg n "$1" '.tenant_fairness.tenants[] | select(.name == $n) | .fairness' "$tmp/s.json"; }
check "A: F_u 1.000 (got $(fu A))" "awk 'BEGIN{exit !($(fu A) > 0.9995 && $(fu A) < 1.0005)}'"
check "B: F_u 1.000 (got $(fu B))" "awk 'BEGIN{exit !($(fu B) > 0.9995 && $(fu B) < 1.0005)}'"
check "Z (weight 0): no F_u (got $(fu Z))" "[ '$(fu Z)' = null ]"
check "min F_u over A and B: 1.000" "[ \"\$(jq '.tenant_fairness.min * 1000 | round' '$tmp/s.json')\" = 1000 ]"
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
