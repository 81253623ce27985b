#!/usr/bin/env bash
# Eight application threads calling BLAS at once through one connection, and two client processes
# served at the same time.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
start_server
"$OUTBOARD" run --offload always -- "$PROGRAMS/threads_check" >"$WORK/threads.log" 2>&1 ||
  { cat "$WORK/threads.log"; fail "threads_check"; }
grep -qE "^threads_check: [0-9]+ passed, 0 failed$" "$WORK/threads.log" || { cat "$WORK/threads.log"; fail "threads_check verdict"; }
! grep -q "outboard: warning" "$WORK/threads.log" || fail "threads fell back to local execution"
ok "8 threads: $(tail -n 1 "$WORK/threads.log")"

before_conn=$(status_field "s['connections']")
"$OUTBOARD" run --offload always -- "$PROGRAMS/level3_check" >"$WORK/p1.log" 2>&1 & p1=$!
"$OUTBOARD" run --offload always -- "$PROGRAMS/threads_check" >"$WORK/p2.log" 2>&1 & p2=$!
wait $p1 || { cat "$WORK/p1.log"; fail "first process"; }
wait $p2 || { cat "$WORK/p2.log"; fail "second process"; }
grep -qE "passed, 0 failed$" "$WORK/p1.log" && grep -qE "passed, 0 failed$" "$WORK/p2.log" || fail "two processes: verdicts"
[ "$(status_field "s['connections']")" -ge $((before_conn + 2)) ] || fail "the two processes did not both connect"
[ "$(status_field "s['errors']")" = 0 ] || fail "server errors"
ok "two client processes at once"
