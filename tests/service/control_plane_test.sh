#!/usr/bin/env bash
# The control plane against bad clients (issue 18), over real HTTP on 127.0.0.1:
# - GET /v1/runs in pages (limit, cursor) with summary fields only, filters by state, pool and
#   name, the history on its own call, and `astra runs list` following the cursor;
# - Idempotency-Key on POST /v1/runs: a replay answers the first reply byte for byte (also after a
#   restart), another body 422, and `astra runs submit` whose first reply is lost (a proxy that
#   drops it) retries with the same key: one run;
# - per-workspace limits (workspace_limits): pending runs and submissions per minute, 429 with
#   Retry-After, other workspaces unaffected;
# - GET /v1/goodput's sort, dir and limit (rows sorted and cut by the server, rows_total, 400s);
# usage: control_plane_test.sh ASTRAEUS_BINARY ASTRA_BINARY
set -u
ASTRAEUS=$1; ASTRA=$2
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq

echo '{"time_scale": 1}' > "$WORK/cfg.json"
start_server "$WORK/cfg.json" || exit 1
admin workspace add ml > /dev/null
admin workspace add cv > /dev/null
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv)
get() { curl -sS -H "Authorization: Bearer $1" "$API$2"; }
code_of() { curl -sS -o "$WORK/body.json" -w '%{http_code}' -H "Authorization: Bearer $1" "$API$2"; }
submit() {  # submit TOKEN NAME [EXTRA-CURL-ARGS...]: the status code (body in $WORK/submit.json)
  local tok=$1 name=$2; shift 2
  curl -sS -o "$WORK/submit.json" -w '%{http_code}' -X POST "$API/runs" -H "Authorization: Bearer $tok" \
    "$@" -d "{\"name\":\"$name\",\"workers\":1,\"gpus_per_worker\":1,\"sim_duration_s\":3600}"
}

# --- pages ----------------------------------------------------------------------------------------
for i in $(seq -w 1 25); do submit "$ML" "p$i" > /dev/null; done
for i in 1 2 3; do submit "$CV" "c$i" > /dev/null; done
names=""; cursor=""; pages=0
while :; do
  get "$ML" "/runs?limit=10${cursor:+&cursor=$cursor}" > "$WORK/page.json"
  pages=$((pages + 1))
  names="$names $(jq -r '[.runs[].name] | join(" ")' "$WORK/page.json")"
  cursor=$(jq -r '.next_cursor // empty' "$WORK/page.json")
  [ -n "$cursor" ] && [ $pages -lt 10 ] || break
done
want=$(for i in $(seq -w 25 -1 1); do printf ' p%s' "$i"; done)
check "25 runs in 3 pages of 10, 10, 5, newest first, none twice (got $pages pages:$names)" \
  '[ "$pages" = 3 ] && [ "$names" = "$want" ]'
get "$ML" "/runs?limit=10" > "$WORK/p1.json"
check "a page has summary fields only (no command, worker_list, history)" \
  '[ "$(jq "[.runs[] | has(\"command\") or has(\"worker_list\") or has(\"history\")] | any" "$WORK/p1.json")" = false ] &&
   [ "$(jq -r ".runs[0] | [.name, .workspace, (.workers|tostring), (.machines|type)] | join(\" \")" "$WORK/p1.json")" = "p25 ml 1 array" ]'
check "the default page is 100 runs: all 25, no next_cursor" \
  '[ "$(get "$ML" /runs | jq "(.runs | length), has(\"next_cursor\")" | tr "\n" " ")" = "25 false " ]'
check "name filter: contains, any case (P1 -> p10..p19)" \
  '[ "$(get "$ML" "/runs?name=P1" | jq -r "[.runs[].name] | join(\",\")")" = "p19,p18,p17,p16,p15,p14,p13,p12,p11,p10" ]'
check "another workspace sees only its own 3" '[ "$(get "$CV" "/runs?limit=1000" | jq ".runs | length")" = 3 ]'
check "state filter: 0 succeeded" '[ "$(get "$ML" "/runs?state=succeeded" | jq ".runs | length")" = 0 ]'
check "pool filter: an unknown pool has no runs" '[ "$(get "$ML" "/runs?pool=nope" | jq ".runs | length")" = 0 ]'
for bad in "limit=0" "limit=1001" "limit=x" "cursor=abc" "cursor=1.2.3" "colour=red"; do
  code=$(code_of "$ML" "/runs?$bad")
  check "GET /runs?$bad: 400 (got $code: $(cat "$WORK/body.json"))" '[ "$code" = 400 ] && grep -q "${bad%%=*}" "$WORK/body.json"'
done
code=$(code_of "$ML" "/runs/p03/history")
check "GET /runs/p03/history: 200 with its states" \
  '[ "$code" = 200 ] && [ "$(jq -r "[.run, .workspace, .history[0].state] | join(\" \")" "$WORK/body.json")" = "p03 ml pending" ]'
check "GET /runs/nope/history: 404" '[ "$(code_of "$ML" /runs/nope/history)" = 404 ]'
export ASTRALYX_API="$API" ASTRALYX_TOKEN="$ML"
"$ASTRA" runs list --page-size 10 > "$WORK/astra_list.txt"
check "astra runs list follows the cursor: 25 runs from pages of 10" \
  '[ "$(tail -n +2 "$WORK/astra_list.txt" | wc -l)" = 25 ] && [ "$(sed -n 2p "$WORK/astra_list.txt" | cut -d" " -f1)" = p25 ]'
"$ASTRA" runs list --limit 7 --page-size 3 --json > "$WORK/astra_7.json"
check "astra runs list --limit 7: the 7 newest" \
  '[ "$(jq -r "[.runs[].name] | join(\",\")" "$WORK/astra_7.json")" = "p25,p24,p23,p22,p21,p20,p19" ]'

# --- GET /v1/goodput: the rows sorted and cut by the server (sort, dir, limit, rows_total) ---------
get "$ML" "/goodput?by=run" > "$WORK/gp_all.json"
get "$ML" "/goodput?by=run&sort=name&dir=desc&limit=3" > "$WORK/gp_3.json"
all_n=$(jq '.rows | length' "$WORK/gp_all.json")
check "goodput by run: rows_total is every row ($all_n, at least 3), 3 rows sent" \
  '[ "$all_n" -ge 3 ] && [ "$(jq .rows_total "$WORK/gp_all.json")" = "$all_n" ] && [ "$(jq .rows_total "$WORK/gp_3.json")" = "$all_n" ] &&
   [ "$(jq ".rows | length" "$WORK/gp_3.json")" = 3 ]'
check "sort=name&dir=desc&limit=3: the 3 last names of the full list, in order; the total over every row" \
  '[ "$(jq -c "[.rows[].run] | sort | reverse | .[0:3]" "$WORK/gp_all.json")" = "$(jq -c "[.rows[].run]" "$WORK/gp_3.json")" ] &&
   [ "$(jq -c .total "$WORK/gp_all.json")" = "$(jq -c .total "$WORK/gp_3.json")" ]'
code=$(code_of "$ML" "/goodput?by=run&sort=colour")
check "sort=colour: 400 naming the keys (got $code: $(cat "$WORK/body.json"))" \
  '[ "$code" = 400 ] && grep -q "name, held, productive, goodput, idle" "$WORK/body.json"'
for bad in "dir=asc" "sort=held&dir=up" "limit=0" "limit=100001" "limit=x"; do
  code=$(code_of "$ML" "/goodput?by=run&$bad")
  check "GET /goodput?by=run&$bad: 400 (got $code: $(cat "$WORK/body.json"))" '[ "$code" = 400 ] && grep -q "dir\|limit" "$WORK/body.json"'
done
code=$(code_of "$ML" "/goodput?by=run&colour=red")
check "GET /goodput?colour=red: 400 listing sort, dir, limit among the parameters" '[ "$code" = 400 ] && grep -q "sort, dir, limit" "$WORK/body.json"'
get "$ML" "/goodput/weekly?by=run&weeks=1" > "$WORK/wk_all.json"
get "$ML" "/goodput/weekly?by=run&weeks=1&limit=2" > "$WORK/wk_2.json"
check "goodput/weekly limit=2: at most 2 rows a week, rows_total and total over every row (web_pages_scale cuts 5,000)" \
  '[ "$(jq -c "[.weeks[] | [(.rows | length), .rows_total, .total]]" "$WORK/wk_2.json")" = "$(jq -c "[.weeks[] | [([.rows | length, 2] | min), (.rows | length), .total]]" "$WORK/wk_all.json")" ]'
check "goodput/weekly limit=0: 400" '[ "$(code_of "$ML" "/goodput/weekly?limit=0")" = 400 ] && grep -q limit "$WORK/body.json"'
check "GET /runs: each summary's goodput is the run's own (p25)" \
  '[ "$(get "$ML" "/runs?name=p25" | jq -c ".runs[0].goodput")" = "$(get "$ML" /runs/p25/goodput | jq -c .goodput)" ]'
check "GET /runs: matches counts every page (25 runs, pages of 10)" '[ "$(jq .matches "$WORK/p1.json")" = 25 ]'

# --- Idempotency-Key ------------------------------------------------------------------------------
code=$(submit "$ML" i1 -H 'Idempotency-Key: k-1'); cp "$WORK/submit.json" "$WORK/first.json"
check "first submit with a key: 201 (got $code)" '[ "$code" = 201 ]'
code=$(submit "$ML" i1 -H 'Idempotency-Key: k-1')
check "the same key and body: 201 and the first reply byte for byte (got $code)"   '[ "$code" = 201 ] && cmp -s "$WORK/first.json" "$WORK/submit.json"'
code=$(submit "$ML" i1)
check "the same body without a key: 409 (got $code)" '[ "$code" = 409 ]'
code=$(submit "$ML" i2 -H 'Idempotency-Key: k-1')
check "the same key, another body: 422 naming the key (got $code)"   '[ "$code" = 422 ] && grep -q "k-1" "$WORK/submit.json"'
code=$(submit "$CV" i1 -H 'Idempotency-Key: k-1')
check "the same key from another token is its own: 201 (got $code)" '[ "$code" = 201 ]'
code=$(submit "$ML" i3 -H "Idempotency-Key: $(head -c 300 /dev/zero | tr '\0' k)")
check "a 300-byte key: 400 (got $code)" '[ "$code" = 400 ] && grep -q "Idempotency-Key" "$WORK/submit.json"'
check "one run i1 in ml" '[ "$(get "$ML" "/runs?name=i1" | jq ".runs | length")" = 1 ]'
# Durable: the key survives a restart (kill -9: nothing but the store remains).
kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; rm -f "$WORK/port"
"$ASTRAEUS" serve --executor sim --config "$WORK/cfg.json" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
    --port-file "$WORK/port" > "$WORK/server2.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
API="http://127.0.0.1:$(cat "$WORK/port")/v1"
code=$(submit "$ML" i1 -H 'Idempotency-Key: k-1')
check "after kill -9 and a restart: the same key answers the first reply (got $code)"   '[ "$code" = 201 ] && cmp -s "$WORK/first.json" "$WORK/submit.json"'
# astra's retry: a proxy in front of the server forwards the first request and drops its reply
# (the run is made, the client sees the connection close), then relays the others.
cat > "$WORK/drop_first.py" <<'PY'
import socket, sys, threading
listen = socket.socket(); listen.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listen.bind(("127.0.0.1", 0)); listen.listen(8)
open(sys.argv[2], "w").write(str(listen.getsockname()[1]))
upstream = ("127.0.0.1", int(sys.argv[1]))
def read_request(c):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = c.recv(65536)
        if not chunk: return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"): n = int(line.split(b":")[1])
    while len(body) < n: body += c.recv(65536)
    return head + b"\r\n\r\n" + body
def relay(c, drop):
    req = read_request(c)
    u = socket.create_connection(upstream)
    u.sendall(req.replace(b"Connection: keep-alive", b"Connection: close"))
    resp = b""
    while True:
        chunk = u.recv(65536)
        if not chunk: break
        resp += chunk
        if b"\r\n\r\n" in resp:
            head, _, body = resp.partition(b"\r\n\r\n")
            n = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
            if n and len(body) >= n[0]: break
    u.close()
    if not drop: c.sendall(resp)
    c.close()
first = True
while True:
    c, _ = listen.accept()
    threading.Thread(target=relay, args=(c, first)).start()
    first = False
PY
python3 "$WORK/drop_first.py" "$(cat "$WORK/port")" "$WORK/proxy_port" &
EXTRA_PIDS+=($!)
for _ in $(seq 50); do [ -s "$WORK/proxy_port" ] && break; sleep 0.1; done
ASTRALYX_API="http://127.0.0.1:$(cat "$WORK/proxy_port")/v1" ASTRALYX_TOKEN="$ML" \
  "$ASTRA" runs submit lost-reply --sim-duration 600 --json > "$WORK/astra_submit.json" 2> "$WORK/astra_submit.err"
rc=$?
check "astra: first reply lost, retried with the same key: exit 0 and the run (rc $rc: $(cat "$WORK/astra_submit.err"))" \
  '[ "$rc" = 0 ] && [ "$(jq -r .name "$WORK/astra_submit.json")" = lost-reply ] && grep -q "retrying" "$WORK/astra_submit.err"'
check "and the run exists once" '[ "$(get "$ML" "/runs?name=lost-reply" | jq ".runs | length")" = 1 ]'

# --- per-workspace limits -------------------------------------------------------------------------
L="$WORK/lim"
cat > "$WORK/lim.json" <<'JSON'
{"pools": [{"name": "default", "machines": [{"count": 1, "gpus": 8}]}],
 "workspace_limits": {"pending_runs": 3, "submissions_per_minute": 6}}
JSON
"$ASTRAEUS" admin init --org acme --cluster main --config "$WORK/lim.json" --data-dir "$L" > /dev/null
for w in ml cv nlp; do "$ASTRAEUS" admin workspace add $w --data-dir "$L" > /dev/null; done
LML=$("$ASTRAEUS" admin token create --workspace ml --data-dir "$L" 2>/dev/null)
LCV=$("$ASTRAEUS" admin token create --workspace cv --data-dir "$L" 2>/dev/null)
LNLP=$("$ASTRAEUS" admin token create --workspace nlp --data-dir "$L" 2>/dev/null)
rm -f "$WORK/lport"
"$ASTRAEUS" serve --executor sim --config "$WORK/lim.json" --data-dir "$L" --listen 127.0.0.1:0 \
    --port-file "$WORK/lport" > "$WORK/lim.log" 2>&1 &
EXTRA_PIDS+=($!)
for _ in $(seq 100); do [ -s "$WORK/lport" ] && break; sleep 0.1; done
API="http://127.0.0.1:$(cat "$WORK/lport")/v1"
lsubmit() {  # lsubmit TOKEN NAME: status code; headers in $WORK/h.txt, body in $WORK/submit.json
  curl -sS -D "$WORK/h.txt" -o "$WORK/submit.json" -w '%{http_code}' -X POST "$API/runs" \
    -H "Authorization: Bearer $1" -d "{\"name\":\"$2\",\"workers\":1,\"gpus_per_worker\":8,\"sim_duration_s\":3600}"
}
codes=""; for i in 0 1 2 3; do codes="$codes$(lsubmit "$LML" "a$i") "; done
check "ml: one running and 3 pending accepted (got $codes)" '[ "$codes" = "201 201 201 201 " ]'
code=$(lsubmit "$LML" a4)
check "ml's 4th pending run: 429 naming workspace_limits.pending_runs, with Retry-After (got $code)" \
  '[ "$code" = 429 ] && grep -q "pending_runs" "$WORK/submit.json" && grep -qi "^Retry-After: [0-9]" "$WORK/h.txt"'
codes=""
for i in 1 2 3 4 5 6; do
  codes="$codes$(lsubmit "$LCV" "b$i") "
  curl -sS -o /dev/null -X POST "$API/runs/b$i/stop" -H "Authorization: Bearer $LCV" -d ''
done
code=$(lsubmit "$LCV" b7)
ra=$(awk -F': ' 'tolower($1) == "retry-after" {print $2+0}' "$WORK/h.txt")
check "cv: 6 submissions in a minute pass (got $codes), the 7th is a 429 with Retry-After 1..10 (got $code, $ra)" \
  '[ "$codes" = "201 201 201 201 201 201 " ] && [ "$code" = 429 ] && grep -q "submissions_per_minute" "$WORK/submit.json" && [ "$ra" -ge 1 ] && [ "$ra" -le 10 ]'
code=$(lsubmit "$LNLP" c1)
check "nlp is not limited by the others (got $code)" '[ "$code" = 201 ]'
echo '{"workspace_limits": {"pending_runs": 0}}' > "$WORK/badlim.json"
"$ASTRAEUS" serve --executor sim --config "$WORK/badlim.json" --data-dir "$WORK/badlim" --listen 127.0.0.1:0 > "$WORK/badlim.log" 2>&1
rc=$?
check "workspace_limits.pending_runs 0: serve exits 2 naming it (rc $rc)" '[ "$rc" = 2 ] && grep -q "pending_runs" "$WORK/badlim.log"'

echo "control plane: $passes passed, $fails failed"
[ "$fails" = 0 ]
