#!/usr/bin/env bash
# The early connection (client/early_connect.cpp): a BLAS program under `outboard run` is
# connected, with its copy lanes, while it is still busy before its first call; with
# OUTBOARD_CONNECT_EARLY=0 it is not; a process without BLAS (here `sleep`, which the preloaded
# shim reaches too) never connects; its call is served remotely and right.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
sessions_of() { status_field "sum(1 for c in s['clients'] if c['client'].endswith(':$1') and c['authenticated'])"; }

OUTBOARD_OFFLOAD=always "$OUTBOARD" run -- "$PROGRAMS/first_call_check" 3000 >"$WORK/early.log" 2>&1 &
pid=$!
for _ in $(seq 40); do [ "$(sessions_of first_call_check)" = 1 ] && break; sleep 0.05; done
[ "$(sessions_of first_call_check)" = 1 ] || fail "the program did not connect before its first call"
server_logged "session.lanes" ||
  fail "the copy lanes were not set up before the first call"
[ "$(status_field "s['calls']")" = 0 ] || fail "a call was made during the program's sleep"
wait $pid || { cat "$WORK/early.log"; fail "first_call_check"; }
grep -q "first_call_check: 50 passed, 0 failed" "$WORK/early.log" || { cat "$WORK/early.log"; fail "wrong result"; }
[ "$(status_field "s['calls']")" = 1 ] || fail "the call was not served remotely"
ok "connected with its lanes before the first call; the call served remotely"

OUTBOARD_CONNECT_EARLY=0 OUTBOARD_OFFLOAD=always "$OUTBOARD" run -- "$PROGRAMS/first_call_check" 1500 >"$WORK/late.log" 2>&1 &
pid=$!
sleep 0.7
[ "$(sessions_of first_call_check)" = 0 ] || fail "OUTBOARD_CONNECT_EARLY=0 connected early"
wait $pid || { cat "$WORK/late.log"; fail "first_call_check with OUTBOARD_CONNECT_EARLY=0"; }
[ "$(status_field "s['calls']")" = 2 ] || fail "the late-connecting program's call was not served remotely"
ok "OUTBOARD_CONNECT_EARLY=0: connects at the first call"

"$OUTBOARD" run -- sleep 1 &
pid=$!
sleep 0.5
[ "$(sessions_of sleep)" = 0 ] || fail "a process without BLAS connected"
wait $pid
ok "a process without BLAS does not connect"
