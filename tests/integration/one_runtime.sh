#!/usr/bin/env bash
# One client runtime per process: a program that calls both BLAS and LAPACK (both shims) opens one
# session with the server, not one per shim, and prints one OUTBOARD_REPORT and writes one
# OUTBOARD_TRACE covering the routines of both; through `outboard run` (LD_PRELOAD) and through
# the compat directory.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
COMPAT="$BUILD/lib/outboard/compat"

snapshot() { "$OUTBOARD" status --json >"$WORK/$1.json" || fail "outboard status"; }
# field SNAPSHOT EXPR: a Python expression on the status document `s` of a snapshot.
field() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$WORK/$1.json"; }
routine() { field "$1" "s['calls_by_routine'].get('$2', 0)"; }

# `outboard status` connects too: what one costs in "connections", so it can be discounted.
snapshot s1
snapshot s2
status_cost=$(( $(field s2 "s['connections']") - $(field s1 "s['connections']") ))

check_one_runtime() {  # name, then the command (run in the background until it has made its calls)
  local name=$1; shift
  local hold="$WORK/$name.hold"
  snapshot "$name-before"
  OUTBOARD_OFFLOAD=always OUTBOARD_REPORT=1 OUTBOARD_TRACE="$WORK/$name.trace" "$@" --hold "$hold" \
    >"$WORK/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do [ -e "$hold" ] || ! kill -0 $pid 2>/dev/null && break; sleep 0.05; done
  [ -e "$hold" ] || { wait $pid; cat "$WORK/$name.log"; fail "$name did not make its calls"; }
  # While it lives: exactly one session of this process, which made all of its calls.
  snapshot "$name-live"
  rm -f "$hold"
  wait $pid || { cat "$WORK/$name.log"; fail "$name"; }
  local sessions=$(field "$name-live" "len([c for c in s['clients'] if ':$pid:' in c['client']])")
  [ "$sessions" = 1 ] || { field "$name-live" "s['clients']"; fail "$name: the process has $sessions sessions, not 1"; }
  local calls=$(field "$name-live" "[c['calls'] for c in s['clients'] if ':$pid:' in c['client']][0]")
  [ "$calls" -ge 8 ] || fail "$name: its session made $calls calls, not the 8 of both shims"
  local conns=$(( $(field "$name-live" "s['connections']") - $(field "$name-before" "s['connections']") - status_cost ))
  [ "$conns" = 1 ] || fail "$name: the process opened $conns connections, not 1"
  grep -qE "^blas_lapack_check: [0-9]+ passed, 0 failed$" "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name: no clean verdict"; }
  ! grep -q "outboard: warning" "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name fell back to local execution"; }
  # Both kinds of calls were served remotely.
  [ "$(routine "$name-live" dgemm)" -ge $(( $(routine "$name-before" dgemm) + 4 )) ] || fail "$name: dgemm not served remotely"
  [ "$(routine "$name-live" dgesv)" -ge $(( $(routine "$name-before" dgesv) + 2 )) ] || fail "$name: dgesv not served remotely"
  [ "$(routine "$name-live" dpotrf)" -ge $(( $(routine "$name-before" dpotrf) + 2 )) ] || fail "$name: dpotrf not served remotely"
  # One report at exit, listing the BLAS and the LAPACK routines.
  local reports=$(grep -c "^outboard: where the time went" "$WORK/$name.log")
  [ "$reports" = 1 ] || { cat "$WORK/$name.log"; fail "$name: $reports reports at exit, not 1"; }
  for r in dgemm dgesv dpotrf; do
    grep -qE "^outboard: $r +[1-9]" "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name: the report has no remote $r line"; }
  done
  # One trace, with the calls of both.
  python3 - "$WORK/$name.trace" <<'PY' || fail "$name: the trace does not hold the calls of both shims"
import json, sys
names = {c["name"].split()[0] for c in json.load(open(sys.argv[1]))["calls"]}
sys.exit(0 if {"dgemm", "dgesv", "dpotrf"} <= names else 1)
PY
  ok "$name: one session ($calls calls), one report and one trace for dgemm, dgesv and dpotrf"
}

check_one_runtime preload "$OUTBOARD" run -- "$PROGRAMS/blas_lapack_check"
check_one_runtime compat env LD_LIBRARY_PATH="$COMPAT" "$PROGRAMS/blas_lapack_check"
[ "$(status_field "s['errors']")" = 0 ] || fail "the server reported errors"
