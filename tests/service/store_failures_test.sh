#!/usr/bin/env bash
# The service on a bad day (issue 18): a full disk and a damaged store.
# - Disk full: the data directory on a 3 MiB tmpfs made by the test, filled up while the service
#   runs. The service keeps answering (reads 200, /healthz 200, /readyz 503 saying why), refuses
#   writes with 507 and a clear message, holds its rounds, never exits; a run that succeeds
#   meanwhile is written once space is freed (the service retries every 2 s), and after a kill -9
#   and a restart it is still succeeded, with one attempt (it never runs again).
# - A damaged store: 8 KiB of garbage written in the middle of astraeus.db; `serve` refuses to
#   start, naming the file and PRAGMA quick_check.
# Needs root (mount) for the first part; skips it (77 when nothing ran) otherwise.
# usage: store_failures_test.sh ASTRAEUS_BINARY
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq
MNT=""
cleanup_mount() { [ -n "$MNT" ] && { umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null; }; }
trap 'stop_all; cleanup_mount; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT

# --- a damaged store ----------------------------------------------------------------------------
echo '{"time_scale": 60}' > "$WORK/cfg.json"
start_server "$WORK/cfg.json" || exit 1
admin workspace add ml > /dev/null
ML=$(new_token --workspace ml)
for i in $(seq 1 30); do
  curl -sS -o /dev/null -X POST "$API/runs" -H "Authorization: Bearer $ML" \
    -d "{\"name\":\"d$i\",\"workers\":1,\"gpus_per_worker\":1,\"sim_duration_s\":60}"
done
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
"$ASTRAEUS" admin token list --data-dir "$WORK/data" > /dev/null  # checkpoints the WAL into the file
db="$WORK/data/astraeus.db"
size=$(stat -c %s "$db")
head -c 8192 /dev/urandom | dd of="$db" bs=1 seek=$((size / 2 / 4096 * 4096)) conv=notrunc status=none
"$ASTRAEUS" serve --executor sim --config "$WORK/cfg.json" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
  > "$WORK/damaged.log" 2>&1 &
pid=$!
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then kill -KILL $pid; rc=running; else wait $pid; rc=$?; fi
check "a damaged store ($size bytes, 8 KiB of garbage at the middle): serve refuses to start (rc $rc: $(head -c 300 "$WORK/damaged.log"))" \
  '[ "$rc" = 1 ] && grep -q "astraeus.db" "$WORK/damaged.log" && grep -qi "damaged\|malformed\|not a database" "$WORK/damaged.log"'

# --- a full disk --------------------------------------------------------------------------------
if [ "$(id -u)" != 0 ] || ! { mkdir -p "$WORK/mnt" && mount -t tmpfs -o size=3m tmpfs "$WORK/mnt"; }; then
  echo "SKIP disk full: needs root to mount a tmpfs"
  echo "store failures: $passes passed, $fails failed"
  [ "$fails" = 0 ] || exit 1
  exit 77
fi
MNT="$WORK/mnt"
D="$MNT/data"
cat > "$WORK/full.json" <<'JSON'
{"time_scale": 60, "pools": [{"name": "default", "machines": [{"count": 1, "gpus": 8}]}]}
JSON
"$ASTRAEUS" admin init --org acme --cluster main --config "$WORK/full.json" --data-dir "$D" > /dev/null
"$ASTRAEUS" admin workspace add ml --data-dir "$D" > /dev/null
T=$("$ASTRAEUS" admin token create --workspace ml --data-dir "$D" 2>/dev/null)
serve_full() {
  rm -f "$WORK/fport"
  "$ASTRAEUS" serve --executor sim --config "$WORK/full.json" --data-dir "$D" --listen 127.0.0.1:0 \
    --port-file "$WORK/fport" >> "$WORK/full.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/fport" ] && break; sleep 0.1; done
  API="http://127.0.0.1:$(cat "$WORK/fport")/v1"
}
serve_full
post() { curl -sS -o "$WORK/post.json" -w '%{http_code}' -X POST "$API/runs" -H "Authorization: Bearer $T" -d "$1"; }
# "done" runs 120 service seconds (2 s real): it is running when the disk fills, and succeeds then.
code=$(post '{"name":"done","workers":1,"gpus_per_worker":8,"sim_duration_s":120}')
check "a run submitted before the disk fills: 201 (got $code)" '[ "$code" = 201 ]'
dd if=/dev/zero of="$MNT/fill" bs=64k status=none 2>/dev/null
# SQLite's WAL may still hold some frames: submit until the store refuses (bounded).
code=""; n=0
while [ $n -lt 300 ]; do
  n=$((n + 1)); code=$(post "{\"name\":\"x$n\",\"workers\":1,\"gpus_per_worker\":8,\"sim_duration_s\":60}")
  [ "$code" = 507 ] && break
done
check "disk full: a submission is refused with 507 (after $n, got $code: $(cat "$WORK/post.json"))" \
  '[ "$code" = 507 ] && grep -q "store" "$WORK/post.json"'
code=$(post '{"name":"later","workers":1,"gpus_per_worker":8,"sim_duration_s":60}')
check "and the next one too, saying why (got $code)" '[ "$code" = 507 ] && grep -q "writes are refused" "$WORK/post.json"'
code=$(curl -sS -o "$WORK/list.json" -w '%{http_code}' "$API/runs?limit=1000" -H "Authorization: Bearer $T")
check "reads are served: GET /runs 200 (got $code)" '[ "$code" = 200 ] && jq -e ".runs | length > 0" "$WORK/list.json" > /dev/null'
check "/healthz 200" '[ "$(curl -sS -o /dev/null -w "%{http_code}" "${API%/v1}/healthz")" = 200 ]'
code=$(curl -sS -o "$WORK/ready.json" -w '%{http_code}' "${API%/v1}/readyz")
check "/readyz 503 saying the store refuses writes (got $code)" '[ "$code" = 503 ] && grep -q "refuses writes" "$WORK/ready.json"'
check "the log says so" 'grep -q "store.write_failed" "$WORK/full.log"'
sleep 4  # "done" succeeds meanwhile (in memory: its write waits for space)
check "the service is still up after 4 s on a full disk" 'kill -0 "$SERVER_PID"'
state=$(curl -sS "$API/runs/done" -H "Authorization: Bearer $T" | jq -r .state)
check "'done' succeeded meanwhile (got $state)" '[ "$state" = succeeded ]'
rm -f "$MNT/fill"
for _ in $(seq 50); do grep -q "store.recovered" "$WORK/full.log" && break; sleep 0.2; done
check "space freed: the service writes what it held (store.recovered)" 'grep -q "store.recovered" "$WORK/full.log"'
code=$(post '{"name":"after","workers":1,"gpus_per_worker":8,"sim_duration_s":60}')
check "and takes writes again: 201 (got $code)" '[ "$code" = 201 ]'
kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
serve_full
got=$(curl -sS "$API/runs/done" -H "Authorization: Bearer $T" | jq -r '"\(.state) \(.attempts)"')
check "after kill -9 and a restart: 'done' is still succeeded with 1 attempt, never run again (got $got)" \
  '[ "$got" = "succeeded 1" ]'
check "and 'after' is there" '[ "$(curl -sS -o /dev/null -w "%{http_code}" "$API/runs/after" -H "Authorization: Bearer $T")" = 200 ]'

echo "store failures: $passes passed, $fails failed"
[ "$fails" = 0 ]
