#!/usr/bin/env bash
# Remote OpenCL when the server fails: an ordinary OpenCL program (opencl_faults, linked with
# -lOpenCL) runs a long kernel through the ICD while its server is killed (SIGKILL), or stopped
# (SIGSTOP: hung, not dead, found by OUTBOARD_TIMEOUT); its waits, events, callbacks and later
# calls must end with OpenCL errors, never hang nor crash. A kernel that outlasts the timeout on
# a live server is no failure. Servers that cannot be reached (none listening, one stopped) cost
# at most the connect timeout and leave the others' platforms listed.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"
opencl_vendors
# The program finds the ICD through OCL_ICD_VENDORS; the servers must not (they serve PoCL).
FAULTS="env OCL_ICD_VENDORS=$BUILD/etc/OpenCL/vendors $PROGRAMS/opencl_faults"
# Bounds that tell a hang from slowness (the checks are on results, not on these times).
HANG=120

# Servers this script stops: killed outright at exit (a stopped process ignores SIGTERM).
EXTRA_PIDS=()
trap 'for p in "${EXTRA_PIDS[@]}" ${SERVER_PID:-}; do kill -9 "$p" 2>/dev/null || true; done; cleanup' EXIT

# verdict LOG WHAT: the program's last line must say that every check passed.
verdict() {
  grep -qE "^opencl_faults: [0-9]+ passed, 0 failed$" "$1" || { cat "$1"; fail "$2"; }
  ok "$2: $(tail -n 1 "$1")"
}

# await_running LOG PID BEFORE: the program has enqueued its long kernel and the server has
# counted it (more than BEFORE kernels).
await_running() {
  for _ in $(seq 600); do
    kill -0 "$2" 2>/dev/null || { cat "$1"; fail "opencl_faults ended before the fault"; }
    if grep -q '^enqueued$' "$1" && [ "$(status_field "s['opencl']['kernels']")" -gt "$3" ]; then return 0; fi
    sleep 0.1
  done
  cat "$1"
  fail "the long kernel did not reach the server"
}

# (a) The server is killed while the kernel runs.
start_server
before=$(status_field "s['opencl']['kernels']")
timeout -s KILL $HANG $FAULTS lost >"$WORK/killed.log" 2>&1 &
prog=$!
await_running "$WORK/killed.log" $prog "$before"
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
rc=0
wait $prog || rc=$?
[ $rc != 137 ] || { cat "$WORK/killed.log"; fail "killed server: the program hung"; }
[ $rc -lt 128 ] || { cat "$WORK/killed.log"; fail "killed server: the program crashed (status $rc)"; }
verdict "$WORK/killed.log" "killed server: every wait and later call ended with an error"

# A kernel that may outlast the per-call timeout on a live server completes normally.
start_server
OUTBOARD_TIMEOUT=0.5 timeout -s KILL $HANG $FAULTS slow >"$WORK/slow.log" 2>&1 || { cat "$WORK/slow.log"; fail "slow kernel"; }
verdict "$WORK/slow.log" "a kernel longer than OUTBOARD_TIMEOUT on a live server"

# (b) The server hangs (SIGSTOP) while the kernel runs: OUTBOARD_TIMEOUT ends the waits.
before=$(status_field "s['opencl']['kernels']")
OUTBOARD_TIMEOUT=2 timeout -s KILL $HANG $FAULTS lost >"$WORK/stopped.log" 2>&1 &
prog=$!
await_running "$WORK/stopped.log" $prog "$before"
kill -STOP "$SERVER_PID"
rc=0
wait $prog || rc=$?
kill -CONT "$SERVER_PID"
[ $rc != 137 ] || { cat "$WORK/stopped.log"; fail "stopped server: the program hung"; }
[ $rc -lt 128 ] || { cat "$WORK/stopped.log"; fail "stopped server: the program crashed (status $rc)"; }
verdict "$WORK/stopped.log" "stopped server: every wait and later call ended with an error"
kill -9 "$SERVER_PID"  # its PoCL still runs the long kernel
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

# (c) Of three servers, one has no listener and one is stopped: the live one's platforms are
# listed, after at most the connect timeout.
mkdir -p "$WORK/hung"
cp "$TOKEN" "$WORK/hung/token"
start_local_server "$OUTBOARD" "$WORK/hung" || fail "second server did not start"
hung_pid=$SERVER_PID hung_port=$PORT
EXTRA_PIDS+=("$hung_pid")
kill -STOP "$hung_pid"
none_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_server
live=$PORT
start=$(date +%s.%N)
OUTBOARD_CONNECT_TIMEOUT=2 OUTBOARD_SERVERS="127.0.0.1:$none_port,127.0.0.1:$hung_port,127.0.0.1:$live" \
  timeout -s KILL $HANG $FAULTS list >"$WORK/list.log" 2>&1 || { cat "$WORK/list.log"; fail "listing with unreachable servers"; }
took=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
verdict "$WORK/list.log" "unreachable servers"
grep -q "^platform: .*\[127.0.0.1:$live\]$" "$WORK/list.log" || { cat "$WORK/list.log"; fail "the live server's platform is not listed"; }
! grep -qE "^platform: .*\[127.0.0.1:($none_port|$hung_port)\]$" "$WORK/list.log" || fail "an unreachable server's platform is listed"
ok "no listener and a stopped server left out; the live server's platforms listed (${took} s, connect timeout 2 s)"

# (d) A native call that does not return (NVIDIA's OpenCL hung so inside clEnqueueWriteBuffer on
# the H200 host, issue 36; OUTBOARD_TEST_CL_STALL stands in for it: the server's first kernel
# launch sleeps 12 s inside its native scope). Past opencl_stuck_seconds the server logs it and
# shows it in its status, and another program's work on that platform fails at once with the
# reason instead of joining the hang; when the call returns, the first program's work completes
# intact and the platform serves again.
kill -9 "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true
printf 'opencl_stuck_seconds = 1\n' >"$WORK/stuck.toml"
OUTBOARD_TEST_CL_STALL=ndrange@1:12 start_server --config "$WORK/stuck.toml"
# A program with its context, queue and buffer made before the stall; it reads (blocking) once
# the platform is refused.
timeout -s KILL $HANG $FAULTS refused-later "$WORK/go" >"$WORK/later.log" 2>&1 &
later=$!
for _ in $(seq 300); do grep -q '^ready$' "$WORK/later.log" && break; sleep 0.1; done
grep -q '^ready$' "$WORK/later.log" || { cat "$WORK/later.log"; fail "refused-later did not get ready"; }
timeout -s KILL $HANG $FAULTS slow >"$WORK/stalled.log" 2>&1 &
prog=$!
stuck=""
for _ in $(seq 150); do
  stuck=$(status_field "[(x['operation'], x['platform']) for x in s['opencl']['stuck']]")
  [ "$stuck" != "[]" ] && break
  sleep 0.1
done
[[ "$stuck" == "[('ndrange', 'Portable Computing Language')]" ]] || { cat "$WORK/server.log"; fail "the stuck launch is not in the status: $stuck"; }
server_logged "opencl.stuck .*operation=ndrange platform=\"Portable Computing Language\"" || fail "the stuck launch was not logged"
ok "a launch stuck past opencl_stuck_seconds: logged, in the status ($stuck)"
start=$(date +%s.%N)
timeout -s KILL $HANG $FAULTS refused >"$WORK/refused.log" 2>&1 || true
took=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
verdict "$WORK/refused.log" "another program's work on the stuck platform fails"
grep -q "outboard: OpenCL: create_context: the platform \"Portable Computing Language\" has not returned from another session.s ndrange" "$WORK/refused.log" ||
  { cat "$WORK/refused.log"; fail "the refusal does not say why"; }
kill -0 $prog 2>/dev/null || fail "the refused program outlasted the stall (${took} s): it waited instead of failing"
ok "refused in ${took} s, while the launch was still stuck, saying why"
touch "$WORK/go"
wait $later || true
verdict "$WORK/later.log" "the blocking read of a program that had its context before the stall fails"
grep -q "outboard: OpenCL: read: the platform \"Portable Computing Language\" has not returned" "$WORK/later.log" ||
  { cat "$WORK/later.log"; fail "the read's refusal does not say why"; }
kill -0 $prog 2>/dev/null || fail "the read was answered only after the stall"
ok "a blocking read on the stuck platform fails at once, saying why (a call its code alone answers)"
rc=0
wait $prog || rc=$?
[ $rc = 0 ] || { cat "$WORK/stalled.log"; fail "the stalled program failed (status $rc)"; }
verdict "$WORK/stalled.log" "the stalled program's work, once the call returned"
server_logged "opencl.unstuck platform=\"Portable Computing Language\"" || fail "the platform's return was not logged"
[ "$(status_field "len(s['opencl']['stuck'])")" = 0 ] || fail "still shown stuck after it returned"
timeout -s KILL $HANG $FAULTS served >"$WORK/served.log" 2>&1 || { cat "$WORK/served.log"; fail "served after the stall"; }
verdict "$WORK/served.log" "the platform serves again after the call returned"
