#!/usr/bin/env bash
# Guards found by a user test: one server per data directory and per port, admin commands do
# not create a store at a mistyped --data-dir, workspace names are checked, a repeated query
# parameter is an error, and an organisation admin's by=run rows name their workspace (run
# names are unique per workspace only; astra shows "workspace/run" then).
# usage: serve_guards_test.sh ASTRAEUS_BINARY ASTRA_BINARY
set -u
ASTRAEUS=$1; ASTRA=$2
. "$(dirname "$0")/live_server_lib.sh"
live_test_begin curl jq

echo '{"time_scale": 60}' > "$WORK/cfg.json"
start_server "$WORK/cfg.json" || exit 1

"$ASTRAEUS" serve --executor sim --data-dir "$WORK/data" --listen 127.0.0.1:0 > "$WORK/second.log" 2>&1
rc=$?
check "a second server on the same data dir exits 1 (got $rc)" '[ "$rc" -eq 1 ]'
check "and says the data dir is in use" 'grep -q "another .astraeus serve. is using" "$WORK/second.log"'
"$ASTRAEUS" serve --executor sim --data-dir "$WORK/other" --listen "127.0.0.1:$SERVER_PORT" > "$WORK/port.log" 2>&1
rc=$?
check "a second server on the same port exits 1 (got $rc)" '[ "$rc" -eq 1 ]'
check "and says it cannot listen, naming the address: $(cat "$WORK/port.log")" \
  'grep -qxF "astraeus serve: cannot listen on 127.0.0.1:$SERVER_PORT (in use, or not a local address): Address already in use" "$WORK/port.log"'
# The port is bound before the data directory is created: a busy port left a store initialised as
# organisation "default" behind, and `admin init --org acme` then refused the directory.
check "and creates no data dir" '[ ! -e "$WORK/other" ]'
"$ASTRAEUS" admin init --org acme --cluster c1 --data-dir "$WORK/other" > "$WORK/other_init.out" 2>&1
rc=$?
check "admin init --org acme on that dir then succeeds (got $rc: $(cat "$WORK/other_init.out"))" \
  '[ "$rc" -eq 0 ] && grep -qF "acme" "$WORK/other_init.out"'
"$ASTRAEUS" serve --executor sim --data-dir "$WORK/agentport" --listen 127.0.0.1:0 \
  --agent-listen "127.0.0.1:$SERVER_PORT" > "$WORK/agentport.log" 2>&1
rc=$?
check "a busy --agent-listen port exits 1 and creates no data dir (got $rc)" '[ "$rc" -eq 1 ] && [ ! -e "$WORK/agentport" ]'
check "and names it: $(cat "$WORK/agentport.log")" \
  'grep -qxF "astraeus serve: --agent-listen: cannot listen on 127.0.0.1:$SERVER_PORT (in use, or not a local address): Address already in use" "$WORK/agentport.log"'

# A bad --executor is a usage error before the data directory is created.
"$ASTRAEUS" serve --executor bogus --data-dir "$WORK/bogus" --listen 127.0.0.1:0 > "$WORK/bogus.log" 2>&1
rc=$?
check "--executor bogus exits 2 and creates no data dir (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$WORK/bogus" ]'
check "and lists the executors: $(cat "$WORK/bogus.log")" \
  'grep -qxF "astraeus serve: --executor: expected local, sim, agents or slurm, got '"'bogus'"'" "$WORK/bogus.log"'

# A missing --config file: the reason is said.
"$ASTRAEUS" serve --executor sim --config "$WORK/no-such.json" --data-dir "$WORK/nocfg" --listen 127.0.0.1:0 > "$WORK/nocfg.log" 2>&1
rc=$?
check "a missing --config exits 2 (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$WORK/nocfg" ]'
check "and says why: $(cat "$WORK/nocfg.log")" \
  'grep -qxF "astraeus serve: cannot read the config file $WORK/no-such.json: No such file or directory" "$WORK/nocfg.log"'

# A --data-dir that is a regular file, or a directory this user cannot write in: said so, not
# "another astraeus serve is using it" (both used to say that).
echo x > "$WORK/not_a_dir"
"$ASTRAEUS" serve --executor sim --data-dir "$WORK/not_a_dir" --listen 127.0.0.1:0 > "$WORK/file.log" 2>&1
rc=$?
check "a --data-dir that is a file exits 1 (got $rc)" '[ "$rc" -eq 1 ]'
check "and says it is not a directory: $(cat "$WORK/file.log")" \
  'grep -qxF "astraeus serve: cannot create the data directory $WORK/not_a_dir: it exists and is not a directory" "$WORK/file.log"'
as_user=()  # root writes anywhere: the unwritable case runs as nobody, in a folder nobody can reach
ro_base=$WORK
if [ "$(id -u)" = 0 ] && command -v runuser > /dev/null; then
  ro_base=$WORK/ro-base; mkdir -p "$ro_base"; chmod 755 "$WORK" "$ro_base"; as_user=(runuser -u nobody --)
fi
if [ "$(id -u)" != 0 ] || [ ${#as_user[@]} -gt 0 ]; then
  mkdir "$ro_base/ro"
  [ ${#as_user[@]} -gt 0 ] && chown nobody "$ro_base/ro"
  chmod 500 "$ro_base/ro"
  "${as_user[@]}" "$ASTRAEUS" serve --executor sim --data-dir "$ro_base/ro" --listen 127.0.0.1:0 \
    > "$WORK/ro.log" 2>&1
  rc=$?
  chmod 700 "$ro_base/ro"
  check "a data dir this user cannot write in exits 1 (got $rc)" '[ "$rc" -eq 1 ]'
  check "and says why: $(cat "$WORK/ro.log")" \
    'grep -qxF "astraeus serve: cannot open $ro_base/ro/serve.lock (the data directory must be writable by this user): Permission denied" "$WORK/ro.log"'
fi

# As root the local executor sandboxes workers by default and says which protections are on; with
# the sandbox disabled and without local.user or local.allow_root it refuses every worker: the
# server says so when it starts (each run failed with the reason only in its own log).
if [ "$(id -u)" = 0 ]; then
  timeout -s TERM 3 "$ASTRAEUS" serve --executor local --gpus 1 --data-dir "$WORK/rootdata" \
    --listen 127.0.0.1:0 > "$WORK/root.log" 2>&1
  check "as root by default: the sandbox's protections are said at start, no refusal warning" \
    'grep -q "sandbox.protection name=identity on=yes" "$WORK/root.log" && ! grep -q "executor.root" "$WORK/root.log"'
  echo '{"local": {"sandbox": {"enabled": false}}}' > "$WORK/nosandbox.json"
  timeout -s TERM 3 "$ASTRAEUS" serve --config "$WORK/nosandbox.json" --executor local --gpus 1 \
    --data-dir "$WORK/rootdata2" --listen 127.0.0.1:0 > "$WORK/root2.log" 2>&1
  check "as root, sandbox off, without local.user/allow_root: a warning at start" \
    'grep -q "warning executor.root .*every worker will be refused" "$WORK/root2.log"'
fi

# A workers' user that does not exist: refused at start (every launch failed, run after run).
echo '{"local": {"user": "no-such-user-astraeus"}}' > "$WORK/nouser.json"
timeout -s TERM 5 "$ASTRAEUS" serve --config "$WORK/nouser.json" --executor local --gpus 1 \
  --data-dir "$WORK/nouserdata" --listen 127.0.0.1:0 > "$WORK/nouser.log" 2>&1
rc=$?
check "local.user that is no Unix user: exit 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "and names it" 'grep -q "local.user .no-such-user-astraeus. is not a Unix user" "$WORK/nouser.log"'

"$ASTRAEUS" admin token list --data-dir "$WORK/typo" > /dev/null 2> "$WORK/typo.err"
rc=$?
check "admin on a mistyped data dir exits 2 (got $rc)" '[ "$rc" -eq 2 ]'
check "and creates nothing" '[ ! -e "$WORK/typo" ]'
admin workspace add 'bad name/' > /dev/null 2> "$WORK/ws.err"
rc=$?
check "a bad workspace name exits 2 (got $rc)" '[ "$rc" -eq 2 ] && grep -q "bad workspace name" "$WORK/ws.err"'
# admin init: an empty organisation name (it became "default") or a cluster name with an escape
# sequence (stored and printed raw) is refused before anything is created; markup is fine (the
# pages escape it; tests/web uses such a cluster name).
"$ASTRAEUS" admin init --org '' --cluster c --data-dir "$WORK/init1" > /dev/null 2> "$WORK/init1.err"
rc=$?
check "admin init --org '' exits 2 and creates nothing (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$WORK/init1" ]'
check "and says why: $(cat "$WORK/init1.err")" \
  'grep -qxF "astraeus admin: bad organisation name '"''"': 1 to 63 bytes of UTF-8 without control characters or a space at either end" "$WORK/init1.err"'
"$ASTRAEUS" admin init --org acme --cluster "$(printf 'c\033[31m')" --data-dir "$WORK/init2" > /dev/null 2> "$WORK/init2.err"
rc=$?
check "a cluster name with an escape sequence exits 2 (got $rc)" '[ "$rc" -eq 2 ] && [ ! -e "$WORK/init2" ]'
check "and shows it escaped: $(cat "$WORK/init2.err")" 'grep -qF "bad cluster name '"'c\\e[31m'"'" "$WORK/init2.err"'
"$ASTRAEUS" admin init --org acme --cluster '<b>c1</b>' --data-dir "$WORK/init3" > "$WORK/init3.out" 2>&1
rc=$?
check "a cluster name with markup is accepted (got $rc)" '[ "$rc" -eq 0 ] && grep -qF "cluster <b>c1</b>," "$WORK/init3.out"'

admin workspace add ml --weight 1 > /dev/null
admin workspace add cv --weight 1 > /dev/null
ML=$(new_token --workspace ml); CV=$(new_token --workspace cv); ADMIN=$(new_token --org-admin)
for t in "$ML" "$CV"; do
  curl -sS -o /dev/null -X POST "$API/runs" -H "Authorization: Bearer $t" \
    -d '{"name":"k1","workers":1,"gpus_per_worker":1,"sim_duration_s":600}'
done
sleep 3  # a few service minutes
code=$(curl -sS -o "$WORK/dup.json" -w '%{http_code}' "$API/goodput?by=run&by=pool" -H "Authorization: Bearer $ADMIN")
check "a repeated query parameter: 400 (got $code)" '[ "$code" = 400 ] && grep -q "given more than once" "$WORK/dup.json"'
curl -sS "$API/goodput?by=run" -H "Authorization: Bearer $ADMIN" > "$WORK/runs.json"
check "by=run rows name their workspace" \
  '[ "$(jq -c "[.rows[] | [.workspace, .run]] | sort" "$WORK/runs.json")" = "[[\"cv\",\"k1\"],[\"ml\",\"k1\"]]" ]'
ASTRALYX_API=$API ASTRALYX_TOKEN=$ADMIN "$ASTRA" astraeus goodput --by run > "$WORK/table.txt"
check "astra shows workspace/run for an admin" 'grep -q "^cv/k1 " "$WORK/table.txt" && grep -q "^ml/k1 " "$WORK/table.txt"'
ASTRALYX_API=$API ASTRALYX_TOKEN=$ML "$ASTRA" astraeus goodput --by run > "$WORK/table_ml.txt"
check "a workspace token sees plain run names" 'grep -q "^k1 " "$WORK/table_ml.txt" && ! grep -q "cv" "$WORK/table_ml.txt"'

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
