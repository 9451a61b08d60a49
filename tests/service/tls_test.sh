#!/usr/bin/env bash
# usage: tls_test.sh ASTRAEUS_BINARY ASTRA_BINARY serve|prometheus
# TLS (issue 14) with a CA and a server certificate (127.0.0.1, localhost) made here by openssl:
#  serve:      `astraeus serve --tls-cert --tls-key` answers https; curl and `astra --cacert`
#              verify it, and refuse it without the CA; clear errors for bad or missing files,
#              a key that does not match, one flag without the other, a bad --cacert.
#  prometheus: a real Prometheus scrapes /v1/goodput/metrics over https, verifying the server
#              with the CA, with a bearer token (up == 1, the run's series).
# Skipped (exit 77) without openssl, curl or jq (and prometheus for the second). Bounded: 40 s.
set -u
ASTRAEUS=$1; ASTRA=$2; MODE=$3
if [ "$MODE" = prometheus ]; then
  command -v prometheus > /dev/null || { echo "SKIP: prometheus not installed (scripts/bootstrap.sh installs it)"; exit 77; }
fi
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin openssl curl jq

# A CA, a server certificate it signs, and a second CA that signs nothing of ours.
cd "$WORK" || exit 1
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj "/CN=Astraeus test CA" 2> /dev/null || exit 1
openssl req -x509 $ec -keyout other.key -out other-ca.pem -days 2 -subj "/CN=Other CA" 2> /dev/null || exit 1
openssl req $ec -keyout server.key -out server.csr -subj "/CN=127.0.0.1" 2> /dev/null || exit 1
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > ext.cnf
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
  -extfile ext.cnf 2> /dev/null || exit 1
cd - > /dev/null || exit 1

cat > "$WORK/astraeus.json" <<JSON
{"pools": [{"name": "default", "machines": [{"count": 2, "gpus": 8}]}], "time_scale": 60}
JSON
admin init --org acme --cluster main --config "$WORK/astraeus.json" > /dev/null || exit 1
admin workspace add ml > /dev/null || exit 1
ML=$(new_token --workspace ml); OP=$(new_token --operator)

# serve_tls ARGS...: `astraeus serve` with ARGS; sets RC to its exit code when it stops within
# 5 s, or to "running" (then it is the server, $SERVER_PID, on $PORT).
serve_tls() {
  rm -f "$WORK/port"
  "$ASTRAEUS" serve --executor sim --config "$WORK/astraeus.json" --data-dir "$WORK/data" --listen 127.0.0.1:0 \
      --port-file "$WORK/port" "$@" > "$WORK/serve.out" 2> "$WORK/serve.err" &
  local pid=$!
  RC=timeout
  for _ in $(seq 50); do
    [ -s "$WORK/port" ] && { SERVER_PID=$pid; PORT=$(cat "$WORK/port"); RC=running; return; }
    kill -0 "$pid" 2> /dev/null || { wait "$pid"; RC=$?; return; }
    sleep 0.1
  done
}

if [ "$MODE" = serve ]; then
  # Bad files: exit 2, the file and what is wrong.
  echo "not a certificate" > "$WORK/junk.pem"
  serve_tls --tls-cert "$WORK/none.pem" --tls-key "$WORK/server.key"
  check "no such cert file: exit 2 (got $RC)" '[ "$RC" = 2 ]'
  check "  message" "grep -qF -- '--tls-cert $WORK/none.pem: cannot read the file' '$WORK/serve.err'"
  serve_tls --tls-cert "$WORK/junk.pem" --tls-key "$WORK/server.key"
  check "a cert file that is not PEM: exit 2 (got $RC)" '[ "$RC" = 2 ]'
  check "  message" "grep -qF -- '--tls-cert $WORK/junk.pem: not a PEM certificate' '$WORK/serve.err'"
  serve_tls --tls-cert "$WORK/server.pem" --tls-key "$WORK/junk.pem"
  check "a key file that is not a key: exit 2 (got $RC)" '[ "$RC" = 2 ]'
  check "  message" "grep -qF -- '--tls-key $WORK/junk.pem: not an unencrypted PEM private key' '$WORK/serve.err'"
  serve_tls --tls-cert "$WORK/server.pem" --tls-key "$WORK/other.key"
  check "a key of another certificate: exit 2 (got $RC)" '[ "$RC" = 2 ]'
  check "  message" "grep -qF -- '--tls-key $WORK/other.key: the key does not match the certificate $WORK/server.pem' '$WORK/serve.err'"
  serve_tls --tls-cert "$WORK/server.pem"
  check "--tls-cert without --tls-key: exit 2 (got $RC)" '[ "$RC" = 2 ]'
  check "  message" "grep -qF 'TLS needs both --tls-cert FILE and --tls-key FILE' '$WORK/serve.err'"

  chmod 600 "$WORK/server.key"
  serve_tls --tls-cert "$WORK/server.pem" --tls-key "$WORK/server.key"
  check "serve with TLS: listening (got $RC)" '[ "$RC" = running ]'
  check "a key file of mode 0600: no warning" "! grep -q tls.key_readable '$WORK/serve.err'"
  URL="https://127.0.0.1:$PORT"
  # Forward-secret AEAD suites only (issue 18): TLS 1.2 ECDHE + AES-GCM/ChaCha20, or TLS 1.3.
  # ssl HOW...: the handshake's outcome with openssl s_client (exit status; output in ssl.txt).
  ssl() { openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$WORK/ca.pem" "$@" < /dev/null > "$WORK/ssl.txt" 2>&1; }
  check "TLS 1.2 static-RSA CBC-SHA1 (AES128-SHA): refused" "! ssl -tls1_2 -cipher AES128-SHA"
  check "TLS 1.2 ECDHE CBC (ECDHE-ECDSA-AES128-SHA): refused" "! ssl -tls1_2 -cipher ECDHE-ECDSA-AES128-SHA"
  check "TLS 1.1: refused" "! ssl -tls1_1 -cipher 'ALL:@SECLEVEL=0'"
  check "TLS 1.2 ECDHE-ECDSA-AES128-GCM-SHA256: accepted" \
    "ssl -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256 && grep -q 'Cipher is ECDHE-ECDSA-AES128-GCM-SHA256' '$WORK/ssl.txt'"
  check "TLS 1.2 ECDHE-ECDSA-CHACHA20-POLY1305: accepted" "ssl -tls1_2 -cipher ECDHE-ECDSA-CHACHA20-POLY1305"
  check "TLS 1.3: accepted" "ssl -tls1_3 && grep -q 'TLSv1.3' '$WORK/ssl.txt'"
  check "curl --cacert: /healthz over https (200)" \
    "[ \"\$(curl -sS --cacert '$WORK/ca.pem' -o /dev/null -w '%{http_code}' $URL/healthz)\" = 200 ]"
  check "curl --cacert via the name localhost (200)" \
    "[ \"\$(curl -sS --cacert '$WORK/ca.pem' -o /dev/null -w '%{http_code}' https://localhost:$PORT/healthz)\" = 200 ]"
  curl -sS -o /dev/null "$URL/healthz" 2> /dev/null
  check "curl without the CA: refused (exit 60, certificate problem)" '[ $? = 60 ]'
  check "plain http on the TLS port gets no answer" \
    "! curl -sS -m 3 -o /dev/null http://127.0.0.1:$PORT/healthz 2> /dev/null"
  check "the log says https" "grep -q 'http.listening.*scheme=https' '$WORK/serve.err'"
  export ASTRALYX_API="$URL/v1" ASTRALYX_TOKEN=$ML
  "$ASTRA" --cacert "$WORK/ca.pem" runs submit llm --workers 1 --gpus-per-worker 8 > "$WORK/submit.txt" 2>&1
  check "astra --cacert: submit over https (exit 0)" "[ \$? = 0 ] && grep -q '^Name: *llm\$' '$WORK/submit.txt'"
  "$ASTRA" --cacert "$WORK/ca.pem" runs list > "$WORK/list.txt" 2>&1
  check "astra --cacert: runs list (exit 0)" "[ \$? = 0 ] && grep -q '^llm ' '$WORK/list.txt'"
  "$ASTRA" runs list > /dev/null 2> "$WORK/nocacert.err"
  check "astra without the CA (system CAs): exit 1, not trusted" \
    "[ \$? = 1 ] && grep -q 'certificate is not trusted' '$WORK/nocacert.err'"
  "$ASTRA" --cacert "$WORK/other-ca.pem" runs list > /dev/null 2> "$WORK/other.err"
  check "astra --cacert of another CA: exit 1, not trusted" \
    "[ \$? = 1 ] && grep -q 'certificate is not trusted' '$WORK/other.err'"
  "$ASTRA" --cacert "$WORK/none.pem" runs list > /dev/null 2> "$WORK/none.err"
  check "astra --cacert of a missing file: exit 2, named" \
    "[ \$? = 2 ] && grep -qF -- '--cacert $WORK/none.pem: cannot read the file' '$WORK/none.err'"
  "$ASTRA" --cacert "$WORK/junk.pem" runs list > /dev/null 2> "$WORK/junk.err"
  check "astra --cacert of a file without a certificate: exit 2, named" \
    "[ \$? = 2 ] && grep -qF -- '--cacert $WORK/junk.pem: no PEM certificate' '$WORK/junk.err'"
  # The web pages' session over TLS (issue 22): the cookie is Secure and __Host- prefixed, and
  # a request from the server's https origin with it is served; an http Origin is not.
  code=$(curl -sS --cacert "$WORK/ca.pem" -o /dev/null -D "$WORK/sess.h" -w '%{http_code}' -X POST "$URL/v1/session" \
           -H 'X-Astraeus-CSRF: 1' -d "{\"token\":\"$ML\"}")
  cookie=$(grep -i '^set-cookie:' "$WORK/sess.h" | tr -d '\r')
  check "session over TLS: 201, cookie __Host-astraeus_session with Secure, HttpOnly, SameSite=Strict (got $code: $cookie)" \
    '[ "$code" = 201 ] && echo "$cookie" | grep -q "^[Ss]et-[Cc]ookie: __Host-astraeus_session=asts_" && echo "$cookie" | grep -q "; Secure" && echo "$cookie" | grep -q "; HttpOnly; SameSite=Strict"'
  secret=$(echo "$cookie" | sed -n 's/.*__Host-astraeus_session=\([^;]*\);.*/\1/p')
  code=$(curl -sS --cacert "$WORK/ca.pem" -o /dev/null -w '%{http_code}' -X POST "$URL/v1/runs/llm/stop" \
           -H "Cookie: __Host-astraeus_session=$secret" -H 'X-Astraeus-CSRF: 1' -H "Origin: http://127.0.0.1:$PORT")
  check "session over TLS: a stop from the http origin is refused (403, got $code)" '[ "$code" = 403 ]'
  code=$(curl -sS --cacert "$WORK/ca.pem" -o /dev/null -w '%{http_code}' -X POST "$URL/v1/runs/llm/stop" \
           -H "Cookie: __Host-astraeus_session=$secret" -H 'X-Astraeus-CSRF: 1' -H "Origin: $URL")
  check "session over TLS: a stop from the server's https origin is served (202, got $code)" '[ "$code" = 202 ]'
  # A key others can read: served, with a warning naming the file.
  kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2> /dev/null; SERVER_PID=""
  chmod 644 "$WORK/server.key"
  serve_tls --tls-cert "$WORK/server.pem" --tls-key "$WORK/server.key"
  check "a key file of mode 0644: serves (got $RC)" '[ "$RC" = running ]'
  check "  with a warning naming the file and its mode" \
    "grep -q 'tls.key_readable' '$WORK/serve.err' && grep -qF -- '--tls-key $WORK/server.key is readable by every user (mode 0644)' '$WORK/serve.err'"
fi

if [ "$MODE" = prometheus ]; then
  serve_tls --tls-cert "$WORK/server.pem" --tls-key "$WORK/server.key"
  check "serve with TLS: listening (got $RC)" '[ "$RC" = running ]'
  code=$(curl -sS --cacert "$WORK/ca.pem" -o /dev/null -w '%{http_code}' -X POST "https://127.0.0.1:$PORT/v1/runs" \
           -H "Authorization: Bearer $ML" -H 'Content-Type: application/json' -d '{"name":"llm","workers":1,"gpus_per_worker":8}')
  check "run submitted over https (201)" '[ "$code" = 201 ]'
  printf '%s\n' "$OP" > "$WORK/token"
  cat > "$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: astraeus-goodput
    scheme: https
    metrics_path: /v1/goodput/metrics
    tls_config:
      ca_file: $WORK/ca.pem
    authorization:
      type: Bearer
      credentials_file: $WORK/token
    static_configs:
      - targets: ['127.0.0.1:$PORT']
YAML
  promtool check config "$WORK/prometheus.yml" > /dev/null 2>&1
  check "promtool accepts the https scrape config" '[ $? = 0 ]'
  check "Prometheus ready on 127.0.0.1" 'start_prometheus "$WORK/prometheus.yml"'
  count() {
    local n
    n=$(curl -sS --get "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" 2> /dev/null \
          | jq -r '.data.result | length' 2> /dev/null)
    echo "${n:--1}"
  }
  scraped=0
  for _ in $(seq 60); do
    if [ "$(count 'up{job="astraeus-goodput"} == 1')" = 1 ] && \
       [ "$(count 'astraeus_run_goodput_gpu_hours{namespace="ml",run="llm"}')" -gt 0 ] 2> /dev/null; then
      scraped=1; break
    fi
    sleep 0.5
  done
  check "Prometheus scraped over https with the token (up == 1, the run's series) within 30 s of being ready" '[ $scraped = 1 ]'
  lasterr=$(curl -sS "http://127.0.0.1:$PPORT/api/v1/targets" | jq -r '.data.activeTargets[0].lastError // "no target"')
  check "the target has no scrape error ('$lasterr')" '[ -z "$lasterr" ]'
  check "the target's URL is https" \
    "[ \"\$(curl -sS 'http://127.0.0.1:$PPORT/api/v1/targets' | jq -r '.data.activeTargets[0].scrapeUrl')\" = 'https://127.0.0.1:$PORT/v1/goodput/metrics' ]"
  check "8 category series of the run" "[ \"\$(count 'astraeus_run_goodput_gpu_hours{namespace=\"ml\",run=\"llm\"}')\" = 8 ]"
  [ $scraped = 1 ] || { echo "--- prometheus.log"; tail -20 "$WORK/prometheus.log"; }
fi

echo "tls ($MODE): $passes passed, $fails failed"
[ "$fails" = 0 ]
