#!/usr/bin/env bash
# `outboard status --watch`: redraws the status on one connection until Ctrl-C (status 0), and
# stops with a message (status 1) when the server goes away.
BUILD=$1
source "$(dirname "$0")/lib.sh"
start_server

refreshes() { grep -c "^every .* s: outboard status" "$1" || true; }
# wait_refreshes FILE N: until the watch has drawn N times (60 s at most)
wait_refreshes() { for _ in $(seq 600); do [ "$(refreshes "$1")" -ge "$2" ] && return 0; sleep 0.1; done; return 1; }

# Ctrl-C ends it cleanly. (A background job of a script starts with SIGINT ignored; the watch
# installs its own handler, as it does in a terminal.)
"$OUTBOARD" status --watch 0.2 >"$WORK/int.out" 2>"$WORK/int.err" &
watch=$!
wait_refreshes "$WORK/int.out" 3 || { cat "$WORK/int.out" "$WORK/int.err"; fail "the watch did not refresh"; }
connections=$(status_field "s['connections']")
sleep 1
# One connection for the whole watch: only this status_field's own connections were added.
[ "$(status_field "s['connections']")" = $((connections + 1)) ] || fail "the watch connects anew for each refresh"
kill -INT $watch
rc=0; wait $watch || rc=$?
[ $rc = 0 ] || { cat "$WORK/int.err"; fail "Ctrl-C: status $rc, not 0"; }
grep -q "^  calls  *[0-9]*, errors" "$WORK/int.out" || { cat "$WORK/int.out"; fail "the watch does not show the status"; }
ok "--watch 0.2: $(refreshes "$WORK/int.out") refreshes on one connection; Ctrl-C ends it with status 0"

# The default period, and --json, until the server goes away.
"$OUTBOARD" status --watch --json >"$WORK/gone.out" 2>"$WORK/gone.err" &
watch=$!
wait_refreshes "$WORK/gone.out" 1 || { cat "$WORK/gone.out" "$WORK/gone.err"; fail "the watch did not start"; }
grep -q '^every 2 s: ' "$WORK/gone.out" || { cat "$WORK/gone.out"; fail "--watch without seconds does not refresh every 2 s"; }
grep -q '"uptime_seconds"' "$WORK/gone.out" || fail "--watch --json does not print the document"
stop_server
rc=0
for _ in $(seq 300); do kill -0 $watch 2>/dev/null || break; sleep 0.1; done
wait $watch || rc=$?
[ $rc = 1 ] || { cat "$WORK/gone.err"; fail "server gone: status $rc, not 1"; }
grep -q "^outboard status: the server 127.0.0.1:$PORT went away: " "$WORK/gone.err" || { cat "$WORK/gone.err"; fail "no clear message"; }
ok "server gone: $(cat "$WORK/gone.err")"

# A bad period is refused before connecting.
if "$OUTBOARD" status --watch 0 >/dev/null 2>"$WORK/bad.err"; then fail "--watch 0 accepted"; fi
grep -q -- "--watch takes seconds" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "no message for --watch 0"; }
ok "--watch 0 is refused: $(cat "$WORK/bad.err")"
