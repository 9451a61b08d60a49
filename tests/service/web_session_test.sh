#!/usr/bin/env bash
# The web pages' sign-in sessions (issue 22; docs/security.md "Web sessions") against a live
# `astraeus serve` with curl: POST /v1/session trades a token for a cookie (its flags: HttpOnly,
# SameSite=Strict, Path=/, Max-Age from the config, no Secure over plain HTTP); the store keeps
# only the secret's SHA-256; a session sees what its token sees (a workspace's session only its
# workspace); the CSRF rule (no X-Astraeus-CSRF header, another Origin, Sec-Fetch-Site:
# cross-site: 403; bearer clients unaffected); sign-out ends it on the server; a revoked token
# ends its sessions; at most max_per_token sessions per token; an expired session is refused
# (a second server life with a 2 s lifetime). Skipped (exit 77) without curl, jq or sqlite3.
# usage: web_session_test.sh ASTRAEUS_BINARY
set -u
ASTRAEUS=$1
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq sqlite3 sha256sum

cat > "$WORK/cfg.json" <<'JSON'
{"time_scale": 60, "pools": [{"name": "default", "machines": [{"count": 2, "gpus": 8}]}],
 "web_sessions": {"lifetime_s": 3600, "max_per_token": 3}}
JSON
start_server "$WORK/cfg.json" || exit 1
BASE="http://127.0.0.1:$SERVER_PORT"
admin workspace add ml > /dev/null && admin workspace add cv > /dev/null || exit 1
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv); AGENT=$(new_token --agent)
ML2=$(admin token create --workspace ml --name ml-second 2> "$WORK/ml2.err")
ML2_ID=$(sed -n 's/^token \([0-9]*\) .*/\1/p' "$WORK/ml2.err")
for t in "$ML" "$CV"; do
  curl -sS -f -o /dev/null -X POST "$API/runs" -H "Authorization: Bearer $t" \
    -d '{"name":"r1","workers":1,"gpus_per_worker":1,"sim_duration_s":36000}' || { echo "seeding failed"; exit 1; }
done
curl -sS -f -o /dev/null -X POST "$API/runs" -H "Authorization: Bearer $ML" \
  -d '{"name":"r2","workers":1,"gpus_per_worker":1,"sim_duration_s":36000}' || { echo "seeding failed"; exit 1; }

X='X-Astraeus-CSRF: 1'
# sign_in TOKEN [HEADER...]: POST /v1/session; the status in $WORK/code, headers in $WORK/h.txt,
# body in $WORK/b.json.
sign_in() {
  local t=$1; shift
  curl -sS -o "$WORK/b.json" -D "$WORK/h.txt" -w '%{http_code}' -X POST "$API/session" \
    -H 'Content-Type: application/json' "$@" -d "{\"token\":\"$t\"}" > "$WORK/code"
}
# secret_of: the session secret of the Set-Cookie in $WORK/h.txt.
secret_of() { sed -n 's/^[Ss]et-[Cc]ookie: astraeus_session=\([^;]*\);.*/\1/p' "$WORK/h.txt" | tr -d '\r'; }
# as SECRET ARGS...: curl with the session cookie only (sent by hand: curl's cookie jar would drop
# an expired cookie itself, and the server's refusal is what is checked); prints the status,
# the body in $WORK/o.json, headers in $WORK/oh.txt.
as() {
  local s=$1; shift
  curl -sS -o "$WORK/o.json" -D "$WORK/oh.txt" -w '%{http_code}' -H "Cookie: astraeus_session=$s" "$@"
}
db() { sqlite3 "$WORK/data/astraeus.db" "$1"; }

# --- opening a session ------------------------------------------------------------------------
sign_in "$ML"
check "sign-in without X-Astraeus-CSRF: 403 (got $(cat "$WORK/code"))" '[ "$(cat "$WORK/code")" = 403 ] && jq -e ".error | test(\"X-Astraeus-CSRF\")" "$WORK/b.json" > /dev/null'
check "and no cookie" '! grep -qi "^set-cookie" "$WORK/h.txt"'
sign_in astx_not-a-real-token -H "$X"
check "a bad token: 401 (got $(cat "$WORK/code"))" '[ "$(cat "$WORK/code")" = 401 ] && ! grep -qi "^set-cookie" "$WORK/h.txt"'
sign_in "$AGENT" -H "$X"
check "an agent token: 403 (got $(cat "$WORK/code"))" '[ "$(cat "$WORK/code")" = 403 ]'
code=$(curl -sS -o "$WORK/b.json" -w '%{http_code}' -X POST "$API/session" -H "$X" -d '{"token":"a","extra":1}')
check "a body with another key: 400 (got $code)" '[ "$code" = 400 ]'
head -c 5000 /dev/zero | tr '\0' 'a' > "$WORK/big.txt"
code=$(curl -sS -o "$WORK/b.json" -w '%{http_code}' -X POST "$API/session" -H "$X" --data-binary @"$WORK/big.txt")
check "a body over 4 KiB: 413 (got $code, $(cat "$WORK/b.json"))" '[ "$code" = 413 ] && jq -e ".error == \"the body is larger than 4 KiB\"" "$WORK/b.json" > /dev/null'

before=$(date +%s)
sign_in "$ML" -H "$X"
after=$(date +%s)
check "sign-in with ml's token: 201 (got $(cat "$WORK/code"))" '[ "$(cat "$WORK/code")" = 201 ]'
cookie=$(grep -i '^set-cookie:' "$WORK/h.txt" | tr -d '\r')
echo "$cookie"
check "cookie: HttpOnly" 'echo "$cookie" | grep -q "; HttpOnly"'
check "cookie: SameSite=Strict" 'echo "$cookie" | grep -q "; SameSite=Strict"'
check "cookie: Path=/" 'echo "$cookie" | grep -q "; Path=/;"'
check "cookie: Max-Age=3600 (the config's lifetime_s)" 'echo "$cookie" | grep -q "; Max-Age=3600$"'
check "cookie: not Secure over plain HTTP, no Domain" '! echo "$cookie" | grep -qi "secure\|domain"'
check "answer: Cache-Control: no-store" 'grep -qi "^cache-control: no-store" "$WORK/h.txt"'
S1=$(secret_of)
check "the secret: asts_ + 43 base64url characters, not the token" '[[ "$S1" =~ ^asts_[A-Za-z0-9_-]{43}$ ]] && [ "$S1" != "$ML" ]'
exp=$(date -d "$(jq -r .expires_at "$WORK/b.json")" +%s)
check "answer: whoami of ml and expires_at = sign-in + 3600 s ($exp vs $before..$after)" \
  'jq -e ".scope == \"workspace\" and .workspace == \"ml\"" "$WORK/b.json" > /dev/null && [ "$exp" -ge $((before + 3600)) ] && [ "$exp" -le $((after + 3600)) ]'
h1=$(printf '%s' "$S1" | sha256sum | cut -d' ' -f1)
check "the store holds the secret's SHA-256, never the secret" \
  '[ "$(db "SELECT count(*) FROM sessions WHERE hash = '"'$h1'"'")" = 1 ] && ! grep -qa "$S1" "$WORK/data/astraeus.db" "$WORK"/data/astraeus.db-wal 2> /dev/null'

# --- what a session sees: its token's scope ---------------------------------------------------
code=$(as "$S1" "$API/whoami")
check "GET /whoami with the cookie: ml (got $code)" '[ "$code" = 200 ] && jq -e ".workspace == \"ml\"" "$WORK/o.json" > /dev/null'
code=$(as "$S1" "$API/runs")
check "GET /runs with ml's session: ml's two runs only (got $code)" \
  '[ "$code" = 200 ] && [ "$(jq -r "[.runs[] | .workspace + \"/\" + .name] | sort | join(\",\")" "$WORK/o.json")" = "ml/r1,ml/r2" ]'
code=$(as "$S1" "$API/runs/r1?workspace=cv")
check "cv's run through ml's session: 404, as with ml's token (got $code)" '[ "$code" = 404 ]'
code=$(as "$S1" -X POST "$API/runs/r1/stop?workspace=cv" -H "$X" -H "Origin: $BASE")
check "stopping cv's run through ml's session: 404 (got $code)" '[ "$code" = 404 ]'
code=$(as "$S1" "$API/organizations/acme/clusters/main/goodput")
check "the organisation's goodput through a workspace session: 403, as with its token (got $code)" '[ "$code" = 403 ]'
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Cookie: astraeus_session=asts_$(printf 'x%.0s' $(seq 43))" "$API/runs")
check "an unknown session: 401 (got $code)" '[ "$code" = 401 ]'
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Cookie: astraeus_session=\"'; DROP TABLE sessions;--" "$API/runs")
check "a malformed cookie: 401 (got $code)" '[ "$code" = 401 ]'
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Cookie: other=1" "$API/runs")
check "no session cookie, no token: 401 (got $code)" '[ "$code" = 401 ]'

# --- CSRF: requests that change state need the pages' proof -----------------------------------
state() { curl -sS "$API/runs/$1" -H "Authorization: Bearer $ML" | jq -r .state; }
code=$(as "$S1" -X POST "$API/runs/r1/stop")
check "POST stop with the cookie, no X-Astraeus-CSRF (a form of another site): 403 (got $code)" \
  '[ "$code" = 403 ] && jq -e ".error | test(\"X-Astraeus-CSRF\")" "$WORK/o.json" > /dev/null'
code=$(as "$S1" -X POST "$API/runs/r1/stop" -H "$X" -H "Origin: http://evil.example")
check "POST stop with the cookie from another origin: 403 (got $code)" \
  '[ "$code" = 403 ] && jq -e ".error | test(\"cross-origin\")" "$WORK/o.json" > /dev/null'
code=$(as "$S1" -X POST "$API/runs/r1/stop" -H "$X" -H "Origin: http://127.0.0.1:1")
check "POST stop with the cookie from another port of the same host (same site): 403 (got $code)" '[ "$code" = 403 ]'
code=$(as "$S1" -X POST "$API/runs/r1/stop" -H "$X" -H "Origin: $BASE" -H "Sec-Fetch-Site: same-site")
check "POST stop with Sec-Fetch-Site: same-site: 403 (got $code)" '[ "$code" = 403 ]'
code=$(as "$S1" "$API/runs" -H "Sec-Fetch-Site: cross-site")
check "even a GET with the cookie from another site: 403 (got $code)" '[ "$code" = 403 ]'
st=$(state r1)
# Not stopped: starting or running (the sim executor's start-up, 60 s, is 1 s at time_scale 60; the
# checks above may take less).
check "after the refused stops, r1 is not stopped (got $st)" '[ "$st" = running ] || [ "$st" = starting ]'
code=$(as "$S1" -X POST "$API/runs/r1/stop" -H "$X" -H "Origin: $BASE" -H "Sec-Fetch-Site: same-origin")
check "POST stop with the cookie, the header and the server's own Origin: 202 (got $code)" '[ "$code" = 202 ]'
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$API/runs/r2/stop" -H "Authorization: Bearer $ML" -H "Origin: http://evil.example")
check "bearer clients are unaffected: POST stop without the header, any Origin: 202 (got $code)" '[ "$code" = 202 ]'
code=$(curl -sS -o /dev/null -w '%{http_code}' "$API/runs" -H "Authorization: Bearer $CV" -H "Cookie: astraeus_session=$S1")
check "a bearer token and a cookie: the token decides (cv sees its run)" '[ "$code" = 200 ]'

# --- sign-out ends the session on the server --------------------------------------------------
code=$(as "$S1" -X DELETE "$API/session")
check "DELETE /session without X-Astraeus-CSRF: 403 (got $code)" '[ "$code" = 403 ] && [ "$(as "$S1" "$API/whoami")" = 200 ]'
code=$(as "$S1" -X DELETE "$API/session" -H "$X" -H "Origin: $BASE")
check "sign-out: 204 (got $code)" '[ "$code" = 204 ]'
check "sign-out: the cookie is cleared (Max-Age=0)" 'grep -i "^set-cookie: astraeus_session=;" "$WORK/oh.txt" | grep -q "Max-Age=0"'
check "sign-out: gone from the store" '[ "$(db "SELECT count(*) FROM sessions WHERE hash = '"'$h1'"'")" = 0 ]'
code=$(as "$S1" "$API/whoami")
check "the signed-out session's cookie, sent again: 401 and cleared (got $code)" \
  '[ "$code" = 401 ] && grep -qi "^set-cookie: astraeus_session=;" "$WORK/oh.txt"'

# --- a revoked token ends its sessions --------------------------------------------------------
sign_in "$ML2" -H "$X"; S2=$(secret_of)
check "ml-second's session works" '[ "$(as "$S2" "$API/whoami")" = 200 ]'
admin token revoke "$ML2_ID" > /dev/null
code=$(as "$S2" "$API/whoami")
check "after \`admin token revoke\`, its session: 401 (got $code)" '[ "$code" = 401 ]'
check "and its sessions are gone from the store" '[ "$(db "SELECT count(*) FROM sessions WHERE token_id = $ML2_ID")" = 0 ]'

# --- at most max_per_token (3) sessions per token: the oldest ends -----------------------------
CVS=()
for k in 1 2 3 4; do sign_in "$CV" -H "$X"; CVS+=("$(secret_of)"); done
check "cv's 4th sign-in ends its 1st session (401)" '[ "$(as "${CVS[0]}" "$API/whoami")" = 401 ]'
check "cv's 2nd, 3rd and 4th sessions work" \
  '[ "$(as "${CVS[1]}" "$API/whoami")" = 200 ] && [ "$(as "${CVS[2]}" "$API/whoami")" = 200 ] && [ "$(as "${CVS[3]}" "$API/whoami")" = 200 ]'
CV_ID=$(db "SELECT id FROM tokens WHERE name = 'cv'")
check "the store holds 3 sessions of cv" '[ "$(db "SELECT count(*) FROM sessions WHERE token_id = $CV_ID")" = 3 ]'
code=$(as "${CVS[3]}" "$API/runs")
check "cv's session sees cv's run only (got $code)" '[ "$code" = 200 ] && [ "$(jq -r "[.runs[].workspace] | unique | join(\",\")" "$WORK/o.json")" = cv ]'

# --- expiry: the same data directory served again with a 2 s lifetime --------------------------
stop_all; SERVER_PID=""
cat > "$WORK/short.json" <<'JSON'
{"time_scale": 60, "pools": [{"name": "default", "machines": [{"count": 2, "gpus": 8}]}],
 "web_sessions": {"lifetime_s": 2}}
JSON
rm -f "$WORK/port"
"$ASTRAEUS" serve --executor sim --config "$WORK/short.json" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
    --port-file "$WORK/port" > "$WORK/server2.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 200); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || { echo "the second server did not listen"; cat "$WORK/server2.log"; exit 1; }
API="http://127.0.0.1:$(cat "$WORK/port")/v1"
code=$(as "${CVS[3]}" "$API/whoami")
check "a session survives a restart of the service (got $code)" '[ "$code" = 200 ]'
sign_in "$ML" -H "$X"; S3=$(secret_of); t0=$(date +%s)
check "a 2 s lifetime: Max-Age=2" 'grep -i "^set-cookie:" "$WORK/h.txt" | tr -d "\r" | grep -q "; Max-Age=2$"'
while [ "$(date +%s)" -le $((t0 + 3)) ]; do sleep 0.5; done
code=$(as "$S3" "$API/whoami")
check "after its lifetime the session is refused: 401, expired (got $code $(cat "$WORK/o.json"))" \
  '[ "$code" = 401 ] && jq -e ".error | test(\"expired\")" "$WORK/o.json" > /dev/null'
check "while ml's token still works" '[ "$(curl -sS -o /dev/null -w "%{http_code}" "$API/whoami" -H "Authorization: Bearer $ML")" = 200 ]'

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
