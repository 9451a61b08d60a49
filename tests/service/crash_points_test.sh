#!/usr/bin/env bash
# Crash consistency at every store transaction boundary (src/astraeus/store/failpoint.hpp).
# For each failpoint, a real process (`astraeus admin` or `astraeus serve`) is killed there with
# ASTRAEUS_FAILPOINT=NAME[:N] (SIGKILL, as kill -9), then restarted without it, and:
#  - admin boundaries (migrate, init, add_pool, add_machine, workspace, add_token, revoke_token):
#    the process died at the point (137); re-running the command succeeds (or says it is already
#    done); the server then has every configured machine (32 GPUs), the workspace, a working
#    token and a revoked one that is refused;
#  - serve boundaries (apply before/after commit, at several hits: submissions, starts, minute
#    counts, ends): the server died at the point while runs were submitted; after a restart every
#    acknowledged (201) run is there, no GPU-second counted before the crash is lost, and once all
#    runs have ended every run's ledger equals workers x GPUs x (end - submit) exactly: the
#    independent expectation, which a second count of any second would break.
# The service's clock runs 60x (1 s = 1 minute).
# Usage: crash_points_test.sh ASTRAEUS_BIN
set -u
BIN=$(realpath "$1")
T=$(mktemp -d)
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then kill -9 "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$T"
}
trap cleanup EXIT
command -v curl >/dev/null && command -v jq >/dev/null || { echo "curl/jq missing: skipped"; exit 77; }
fails=0; passes=0
ok() { passes=$((passes + 1)); echo "ok   $*"; }
bad() { fails=$((fails + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

cat > "$T/config.json" <<'EOF'
{"organization": "acme", "cluster": "c1",
 "pools": [{"name": "default", "machines": [{"count": 4, "gpus": 8}]}],
 "lease_s": 1800, "time_scale": 60,
 "executor": {"startup_s": 60, "stop_s": 30, "utilization_pct": 90}}
EOF

# start_server DATA [FAILPOINT]: serve DATA in the background; 0 once listening, 1 if it died.
start_server() {
    local data=$1 fp=${2:-}
    rm -f "$T/port"
    ASTRAEUS_FAILPOINT=$fp "$BIN" serve --executor sim --config "$T/config.json" --data-dir "$data" \
        --listen 127.0.0.1:0 --port-file "$T/port" 2>>"$T/server.log" &
    SERVER_PID=$!
    for _ in $(seq 100); do
        [ -s "$T/port" ] && { API="http://127.0.0.1:$(cat "$T/port")/v1"; return 0; }
        kill -0 "$SERVER_PID" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# stop_server: SIGTERM and wait; prints the exit status.
stop_server() {
    kill -TERM "$SERVER_PID" 2>/dev/null
    local rc=0
    wait "$SERVER_PID" 2>/dev/null || rc=$?
    SERVER_PID=""
    echo "$rc"
}

# per_run TOKEN: "run gpu_seconds" of every run the token sees.
per_run() {
    curl -sS -H "Authorization: Bearer $1" "$API/goodput?by=run&days=1" |
        jq -r '.rows[] | "\(.run) \([.gpu_hours[] * 3600] | add | round)"'
}
wait_all_ended() {
    for _ in $(seq 120); do
        local left
        left=$(curl -sS -H "Authorization: Bearer $1" "$API/runs" | jq '[.runs[] | select(.ended_at == null)] | length')
        [ "$left" = 0 ] && return 0
        sleep 0.5
    done
    return 1
}
# exact_all TOKEN: every run's ledger = W x G x (end - submit), in GPU-seconds.
exact_all() {
    local tok=$1 good=1 name want got
    while read -r name; do
        want=$(curl -sS -H "Authorization: Bearer $tok" "$API/runs/$name" |
            jq '.workers * .gpus_per_worker * ((.ended_at | fromdateiso8601) - (.submitted_at | fromdateiso8601))')
        got=$(curl -sS -H "Authorization: Bearer $tok" "$API/runs/$name/goodput" | jq '[.gpu_hours[] * 3600] | add | round')
        if [ "$want" != "$got" ]; then echo "  run $name: counted $got GPU-s, want $want"; good=0; fi
    done < <(curl -sS -H "Authorization: Bearer $tok" "$API/runs" | jq -r '.runs[].name')
    [ $good = 1 ]
}

# --- admin boundaries ---------------------------------------------------------------------------
# admin_case POINT: run the whole admin setup with POINT armed (the command that reaches it dies),
# then again without; the server must see the full configuration.
admin_case() {
    local fp=$1 data="$T/admin-${1//[.:]/_}" rc died=0
    local -a steps=(
        "init --org acme --cluster c1 --config $T/config.json"
        "workspace add ml --weight 1"
        "token create --workspace ml --name keep"
        "token create --workspace ml --name gone"
        "token revoke GONE")
    local s out gone_id
    for s in "${steps[@]}"; do
        # The token to revoke is the last one named gone.
        gone_id=$("$BIN" admin token list --data-dir "$data" 2>/dev/null | awk '$2 == "gone" {id = $1} END {print id}')
        s=${s/GONE/$gone_id}
        # shellcheck disable=SC2086
        ASTRAEUS_FAILPOINT=$fp "$BIN" admin $s --data-dir "$data" >"$T/out" 2>"$T/err"
        rc=$?
        if [ $rc = 137 ] && grep -q "failpoint ${fp%%:*}: hit" "$T/err"; then died=1; break; fi
    done
    check "admin: the process died at $fp" test $died = 1
    # Again, without the failpoint, from the start: each step succeeds or was already done.
    local tok_keep="" tok_gone=""
    for s in "${steps[@]}"; do
        [[ $s == *GONE* ]] && continue  # below, once the new "gone" exists
        # shellcheck disable=SC2086
        out=$("$BIN" admin $s --data-dir "$data" 2>"$T/err")
        rc=$?
        if [ $rc != 0 ] && ! grep -q "already initialised" "$T/err"; then
            bad "admin after $fp: '$s' failed ($rc): $(cat "$T/err")"; return
        fi
        case "$s" in *"name keep"*) tok_keep=$out ;; *"name gone"*) tok_gone=$out ;; esac
    done
    # The token to revoke is the last one named gone (a crash may have left an unused row).
    gone_id=$("$BIN" admin token list --data-dir "$data" | awk '$2 == "gone" {id = $1} END {print id}')
    "$BIN" admin token revoke "$gone_id" --data-dir "$data" >/dev/null 2>&1
    if ! start_server "$data"; then bad "admin after $fp: the server does not start: $(tail -n 3 "$T/server.log")"; return; fi
    local code gpus
    code=$(curl -sS -o "$T/runs.json" -w '%{http_code}' -H "Authorization: Bearer $tok_keep" "$API/runs")
    check "admin after $fp: the new token works (200, got $code)" test "$code" = 200
    code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok_gone" "$API/runs")
    check "admin after $fp: the revoked token is refused (401, got $code)" test "$code" = 401
    # All 4 x 8 GPUs are there: a 4 x 8 gang is accepted (a missing machine makes it a 400).
    code=$(curl -sS -o "$T/sub.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $tok_keep" \
        --data '{"name":"full","workers":4,"gpus_per_worker":8,"sim_duration_s":60}' "$API/runs")
    check "admin after $fp: all 32 GPUs configured (4 x 8 gang: 201, got $code $(head -c 200 "$T/sub.json"))" test "$code" = 201
    gpus=$(curl -sS -H "Authorization: Bearer $tok_keep" "$API/runs/full" | jq -r '.workspace')
    check "admin after $fp: the run is in workspace ml" test "$gpus" = ml
    stop_server >/dev/null
}
for fp in store.migrate.before_commit store.migrate.after_commit \
          store.init.before_commit store.init.after_commit \
          store.add_pool.before_commit store.add_pool.after_commit \
          store.add_machine.before_commit store.add_machine.after_commit \
          store.add_machine.before_commit:3 store.add_machine.after_commit:3 \
          store.workspace.before_commit store.workspace.after_commit \
          store.add_token.before_commit store.add_token.after_commit \
          store.revoke_token.before_commit store.revoke_token.after_commit; do
    admin_case "$fp"
done

# --- serve boundaries -----------------------------------------------------------------------------
# serve_case POINT: submissions against a server armed at POINT until it dies; restart; check.
serve_case() {
    local fp=$1 data="$T/serve-${1//[.:]/_}"
    "$BIN" admin init --org acme --cluster c1 --config "$T/config.json" --data-dir "$data" >/dev/null
    "$BIN" admin workspace add ml --data-dir "$data" >/dev/null
    "$BIN" admin workspace add cv --data-dir "$data" >/dev/null
    local AD ML CV
    AD=$("$BIN" admin token create --org-admin --data-dir "$data" 2>/dev/null)
    ML=$("$BIN" admin token create --workspace ml --data-dir "$data" 2>/dev/null)
    CV=$("$BIN" admin token create --workspace cv --data-dir "$data" 2>/dev/null)
    : > "$T/acked"; : > "$T/before"
    if start_server "$data" "$fp"; then
        local i code tok
        for i in $(seq 1 40); do
            tok=$ML; [ $((i % 2)) = 0 ] && tok=$CV
            code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $tok" \
                --data "{\"name\":\"r$i\",\"workers\":$((1 + i % 2)),\"gpus_per_worker\":$((1 + i % 8)),\"sim_duration_s\":$((60 + 30 * (i % 3)))}" \
                "$API/runs" 2>/dev/null)
            [ "$code" = 201 ] && echo "r$i" >> "$T/acked"
            per_run "$AD" > "$T/before.new" 2>/dev/null && [ -s "$T/before.new" ] && cp "$T/before.new" "$T/before"
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.15
        done
        # Minute counts go on without requests: wait for the point a little longer.
        for _ in $(seq 60); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.25; done
    fi
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        bad "serve: $fp was not reached"; stop_server >/dev/null; return
    fi
    wait "$SERVER_PID" 2>/dev/null; local rc=$?
    SERVER_PID=""
    check "serve: died at $fp (137, got $rc)" bash -c "[ $rc = 137 ] && tail -n 5 '$T/server.log' | grep -q 'failpoint ${fp%%:*}: hit'"
    if ! start_server "$data"; then bad "serve after $fp: no restart: $(tail -n 3 "$T/server.log")"; return; fi
    local names missing=""
    names=$(curl -sS -H "Authorization: Bearer $AD" "$API/runs" | jq -r '.runs[].name')
    while read -r n; do [ -z "$n" ] || echo "$names" | grep -qx "$n" || missing="$missing $n"; done < "$T/acked"
    check "serve after $fp: all $(wc -l < "$T/acked") acknowledged runs are there${missing:+ (missing:$missing)}" test -z "$missing"
    per_run "$AD" > "$T/after"
    local lost=""
    while read -r n s; do
        a=$(awk -v n="$n" '$1 == n {print $2}' "$T/after")
        if [ -z "$a" ] || [ "$a" -lt "$s" ]; then lost="$lost $n:$s->${a:-none}"; fi
    done < "$T/before"
    check "serve after $fp: no GPU-second counted before the crash is lost${lost:+ ($lost)}" test -z "$lost"
    check "serve after $fp: every run ends" wait_all_ended "$AD"
    check "serve after $fp: every run's ledger = W x G x (end - submit), nothing counted twice" exact_all "$AD"
    stop_server >/dev/null
}
# Hits of apply: 1 = the first write (a submission), later ones mix submissions, placements,
# minute counts and ends.
for fp in store.apply.before_commit:1 store.apply.after_commit:1 \
          store.apply.before_commit:4 store.apply.after_commit:4 \
          store.apply.before_commit:15 store.apply.after_commit:15 \
          store.apply.before_commit:40 store.apply.after_commit:40; do
    serve_case "$fp"
done

# A server started on an empty data directory creates the tenancy itself (migrate, init,
# add_pool, add_machine): killed at each, restarted, it has the whole configuration.
empty_case() {
    local fp=$1 data="$T/empty-${1//[.:]/_}"
    if start_server "$data" "$fp"; then bad "serve on an empty store: $fp was not reached"; stop_server >/dev/null; return; fi
    wait "$SERVER_PID" 2>/dev/null; local rc=$?
    SERVER_PID=""
    check "serve on an empty store: died at $fp (137, got $rc)" test "$rc" = 137
    if ! start_server "$data"; then bad "serve after $fp: no restart: $(tail -n 3 "$T/server.log")"; return; fi
    stop_server >/dev/null
    "$BIN" admin workspace add ml --data-dir "$data" >/dev/null
    local tok code
    tok=$("$BIN" admin token create --workspace ml --data-dir "$data" 2>/dev/null)
    start_server "$data" || { bad "serve after $fp: no second restart"; return; }
    code=$(curl -sS -o "$T/sub.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $tok" \
        --data '{"name":"full","workers":4,"gpus_per_worker":8,"sim_duration_s":60}' "$API/runs")
    check "serve after $fp: all 32 GPUs configured (4 x 8 gang: 201, got $code)" test "$code" = 201
    stop_server >/dev/null
}
for fp in store.migrate.before_commit store.migrate.after_commit store.init.before_commit \
          store.init.after_commit store.add_pool.before_commit store.add_pool.after_commit \
          store.add_machine.before_commit:2 store.add_machine.after_commit:2; do
    empty_case "$fp"
done

echo "$passes passed, $fails failed"
if [ $fails -gt 0 ]; then tail -n 30 "$T/server.log"; exit 1; fi
exit 0
