#!/usr/bin/env bash
# usage: sched_trust_live_test.sh ASTRAEUS_BINARY
# `astraeus serve --executor sim` on 127.0.0.1, clock at 100x, policy astraea:
# 1. Packed placement on machines of different sizes. Pool h: machines of 2, 2 and 4 GPUs
#    (h-1, h-2, h-3). A 3 x 2 run needs 2 machines: h-3 holds 2 workers, h-1 (the smallest that
#    holds the third) the last: workers on h-3, h-3, h-1. After it ends, a 2 x 2 run goes on h-3
#    alone (per-worker best fit put them on h-1 and h-2, and the 3 x 2 on all three).
# 2. No needless preemption at lease ends. Pool n: 3 machines of 1 GPU, lease 900 s; 4 runs of
#    1 x 1 of one workspace. At each lease end (900 s, 1800 s) the 3 leases end together and the
#    waiting run is due: 1 run stops (`run.preempted`), 2 renew in place. By hand: 2 preemptions
#    by 2,100 s (before the fix: 3 per lease end: the 4 runs start in 4 rounds, one per
#    submission, so their leases end seconds apart, and each lease end swapped back in the run
#    the previous one had stopped; the service now ends a pool's leases that end within 60 s of
#    one together).
# Skipped (77) without curl or jq. Bounded: about 25 s.
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq

cat > "$WORK/cfg.json" <<'CFG'
{"pools": [{"name": "h", "machines": [{"count": 2, "gpus": 2}, {"count": 1, "gpus": 4}]},
           {"name": "n", "machines": [{"count": 3, "gpus": 1}]}],
 "policy": "astraea", "lease_s": 900, "time_scale": 100,
 "executor": {"startup_s": 1, "stop_s": 5}}
CFG
start_server "$WORK/cfg.json" || exit 1
admin workspace add ml > /dev/null || exit 1
TOKEN=$(new_token --workspace ml)
H="Authorization: Bearer $TOKEN"
post() { curl -sS -o "$WORK/post.json" -w '%{http_code}' -X POST "$API/runs" -H "$H" -H 'Content-Type: application/json' -d "$1"; }
show() { curl -sS "$API/runs/$1" -H "$H" | jq -r "$2"; }

# --- 2 first (its clock matters): 4 runs on 3 GPUs, submitted by one curl process (--next),
# milliseconds apart: at 100x, 0.6 real seconds between them would be 60 s of the clock, and
# leases begun more than kLeaseAlignS apart do not end together (a loaded machine's process
# starts made this test fail).
t0=$(date +%s.%N)
args=()
for k in 1 2 3 4; do
  [ $k -gt 1 ] && args+=(--next)
  args+=(-sS -o /dev/null -w '%{http_code}\n' -X POST "$API/runs" -H "$H" -H 'Content-Type: application/json'
         -d "{\"name\":\"r$k\",\"pool\":\"n\",\"workers\":1,\"gpus_per_worker\":1,\"sim_duration_s\":360000}")
done
codes=$(curl "${args[@]}" | paste -sd,)
check "submit r1..r4 (1 x 1, pool n): 201 each (got $codes)" "[ '$codes' = '201,201,201,201' ]"

# --- 1: packing on 2 + 2 + 4 GPUs.
check "submit big (3 x 2, pool h): 201" "[ \"\$(post '{\"name\":\"big\",\"pool\":\"h\",\"workers\":3,\"gpus_per_worker\":2,\"sim_duration_s\":300}')\" = 201 ]"
for _ in $(seq 50); do [ "$(show big .state)" != pending ] && break; sleep 0.1; done
m=$(show big '[.worker_list[].machine] | join(",")')
check "big's workers on h-3, h-3, h-1: 2 machines (got $m)" "[ '$m' = 'h-3,h-3,h-1' ]"
for _ in $(seq 150); do [ "$(show big .state)" = succeeded ] && break; sleep 0.1; done
check "big ended" "[ \"\$(show big .state)\" = succeeded ]"
check "submit small (2 x 2, pool h): 201" "[ \"\$(post '{\"name\":\"small\",\"pool\":\"h\",\"workers\":2,\"gpus_per_worker\":2,\"sim_duration_s\":36000}')\" = 201 ]"
for _ in $(seq 50); do [ "$(show small .state)" != pending ] && break; sleep 0.1; done
m=$(show small '[.worker_list[].machine] | join(",")')
check "small's workers both on h-3: 1 machine (got $m)" "[ '$m' = 'h-3,h-3' ]"

# --- 2: wait to 2,100 s of the clock (21 real s after the submissions).
sleep "$(awk -v t="$t0" -v now="$(date +%s.%N)" 'BEGIN { d = t + 21 - now; print (d > 0 ? d : 0) }')"
n=$(grep -c 'run.preempted run=r' "$WORK/server.log")
check "2 preemptions in pool n after 2 lease ends, 1 each (got $n)" "[ '$n' = 2 ]"
att=$(for k in 1 2 3 4; do show "r$k" .attempts; done | paste -sd+ | bc)
check "5 attempts in all: 3 first starts + 2 swaps (got $att)" "[ '$att' = 5 ]"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
