# Shared helpers for the integration tests: a real server on loopback with its own secret, and
# checks on its counters. Source it; set BUILD to the build directory first.
set -euo pipefail

: "${BUILD:?set BUILD to the build directory}"
OUTBOARD="$BUILD/bin/outboard"
WORK=$(mktemp -d /tmp/outboard-test.XXXXXX)
TOKEN="$WORK/token"
SERVER_PID=""
PORT=""
trap cleanup EXIT

cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $WORK"; else rm -rf "$WORK"; fi
}

# fail MESSAGE: ends the test; the end of the server's log goes with it (what CI shows of a failure
# is all there is to go on: a server that died says so there).
fail() {
  echo "FAIL: $*" >&2
  if [ -s "$WORK/server.log" ]; then
    echo "--- the last 40 lines of the server's log ($WORK/server.log):" >&2
    tail -n 40 "$WORK/server.log" >&2
  fi
  exit 1
}
ok() { echo "ok: $*"; }

# curl is not ours and hangs at start (in setlocale) with ASan's runtime preloaded, as
# scripts/sanitize.sh preloads it into every test process: it runs without.
curl() { LD_PRELOAD= command curl "$@"; }

source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/local_server.sh"
"$OUTBOARD" token --file "$TOKEN" >/dev/null

# start_server [serve flags...]: starts a server on a free port; sets SERVER_PID and PORT.
start_server() {
  start_local_server "$OUTBOARD" "$WORK" "$@" || fail "server did not start"
  # A clean start says nothing of UCX's own (an error at every start had gone unnoticed: the copy
  # lanes asked for a wake-up fd their context had no feature for).
  ! grep "UCX  ERROR" "$WORK/server.log" || fail "UCX logged an error while the server started"
}

stop_server() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# server_logged PATTERN: whether the server's log has a line matching PATTERN (grep -E), allowing
# its log thread a moment to write it (the server logs asynchronously).
server_logged() {
  for _ in $(seq 20); do
    grep -qE "$1" "$WORK/server.log" && return 0
    sleep 0.1
  done
  return 1
}

# served_within SECONDS: the server answers a status request within SECONDS (tried again on a
# failure: a request made while a killed client has stalled the server's shared-memory queue
# waits, then fails when the server starts again on its own; transport_stall.sh).
served_within() {
  local until=$((SECONDS + $1))
  while [ $SECONDS -lt $until ]; do
    "$OUTBOARD" status --json >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  return 1
}

# status_field EXPR: evaluates a Python expression on the status document `s`.
status_field() {
  "$OUTBOARD" status --json | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)"
}

# run_checked NAME COMMAND...: runs a self-checking program (its last line "NAME: N passed, 0
# failed"), which must pass without falling back to local execution; its output in WORK/NAME.log.
run_checked() {  # name, then the command
  local name=$1; shift
  "$@" >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; fail "$name"; }
  grep -qE "^[a-z0-9_]+: [0-9]+ passed, 0 failed$" "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name: no clean verdict"; }
  ! grep -q "outboard: warning" "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name fell back to local execution"; }
  ok "$name: $(tail -n 1 "$WORK/$name.log")"
}

# opencl_vendors: skips the test (77) without PoCL; sets DIRECT (a vendors folder with PoCL
# alone: programs see the platform natively) and REMOTE (the build's, with Outboard's ICD).
opencl_vendors() {
  [ -f /etc/OpenCL/vendors/pocl.icd ] || { echo "skip: PoCL (pocl-opencl-icd) is not installed"; exit 77; }
  # PoCL sizes its device from the memory free when it starts (global memory, the largest
  # allocation and image sizes follow): a server started earlier than a direct run, under other
  # tests' load, described another device (clinfo's comparison failed). A fixed size, in GB, for
  # both.
  export POCL_MEMORY_LIMIT=${POCL_MEMORY_LIMIT:-4}
  DIRECT="$WORK/direct-vendors"
  mkdir -p "$DIRECT" && ln -sf /etc/OpenCL/vendors/pocl.icd "$DIRECT/"
  REMOTE="$BUILD/etc/OpenCL/vendors"
}

# cl_counter NAME: the server's opencl.NAME status figure.
cl_counter() { status_field "s['opencl']['$1']"; }

# other_event_polling: the opencl_event_polling mode this machine's default ("auto") does not pick
# (event_waiter.hpp: polling with 8 or more hardware threads).
other_event_polling() { [ "$(nproc)" -ge 8 ] && echo wait || echo poll; }

# opencl_side_by_side NAME MIN_READ MIN_WRITTEN: runs PROGRAMS/NAME (after opencl_vendors and
# start_server) on PoCL directly (its output in WORK/NAME.pocl.txt), then through the ICD
# (run_checked): the outputs must be the same line for line, the server's copy lanes must have
# moved at least MIN_READ bytes into the program's memory and MIN_WRITTEN from it, and the server
# must count no failure. Sets LANES_READ and LANES_WRITTEN to what they moved.
opencl_side_by_side() {
  local name=$1 read0 written0 failures
  OCL_ICD_VENDORS="$DIRECT" "$PROGRAMS/$name" >"$WORK/$name.pocl.txt" 2>&1 || { cat "$WORK/$name.pocl.txt"; fail "$name on PoCL"; }
  read0=$(cl_counter direct_bytes_read) written0=$(cl_counter direct_bytes_written) failures=$(cl_counter failures)
  run_checked "$name" timeout -s KILL 300 env OCL_ICD_VENDORS="$REMOTE" "$PROGRAMS/$name"
  diff "$WORK/$name.pocl.txt" "$WORK/$name.log" || fail "$name: results differ between PoCL and Outboard"
  LANES_READ=$(($(cl_counter direct_bytes_read) - read0)) LANES_WRITTEN=$(($(cl_counter direct_bytes_written) - written0))
  [ "$LANES_READ" -ge "$2" ] || fail "$name: the lanes read only $LANES_READ bytes into the program's memory"
  [ "$LANES_WRITTEN" -ge "$3" ] || fail "$name: the lanes fetched only $LANES_WRITTEN bytes from the program's memory"
  [ "$(cl_counter failures)" = "$failures" ] || fail "$name: the server counted failures: $failures -> $(cl_counter failures)"
}

# The server after its clients have gone (server_lifetime.sh, lanes.sh).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
idle_check() {  # WHEN: the server's CPU use over 10 s with no client must stay under 1% of a core
  [ "${IDLE_CHECK:-1}" = 1 ] || return 0
  sleep 5
  local t0 t1 hz
  hz=$(getconf CLK_TCK)
  t0=$(cpu_ticks)
  sleep 10
  t1=$(cpu_ticks)
  local pct
  pct=$(python3 -c "print(round(100.0 * ($t1 - $t0) / $hz / 10, 2))")
  if ! python3 -c "import sys; sys.exit(0 if $pct < 1.0 else 1)"; then
    # What it is doing: its tables, and where each thread is (a few samples).
    echo "--- status: $(status_field "s['transport'], s['load'], s['connections']" 2>&1)"
    # The threads that used the CPU over a second, busiest first, and where the busiest one is.
    local busy
    busy=$(python3 - "$SERVER_PID" <<'PY'
import os, sys, time
pid = sys.argv[1]
def ticks():
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            f = open(f"/proc/{pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()
            name = open(f"/proc/{pid}/task/{t}/comm").read().strip()
            out[t] = (int(f[11]) + int(f[12]), name)
        except OSError:
            pass
    return out
a = ticks(); time.sleep(1); b = ticks()
use = sorted(((b[t][0] - a.get(t, (0,))[0], t, b[t][1]) for t in b), reverse=True)
for d, t, n in use[:4]:
    print(f"thread {t} ({n}): {d} ticks in 1 s", file=sys.stderr)
print(use[0][1])
PY
)
    if command -v gdb >/dev/null && [ -n "$busy" ]; then
      for _ in 1 2 3; do
        gdb -p "$SERVER_PID" -batch -ex "info threads" 2>/dev/null | grep -E "LWP $busy\b" | head -2
        gdb -p "$SERVER_PID" -batch -ex "thread find $busy" 2>/dev/null | head -2
        gdb -p "$SERVER_PID" -batch -ex "thread apply all bt 16" 2>/dev/null |
          awk -v lwp="LWP $busy)" 'index($0, lwp) {on = 1; print; next} /^Thread/ {on = 0} on' | head -20
        sleep 0.3
      done
    fi
    fail "$1: the idle server used $pct% of a core over 10 s"
  fi
  ok "$1: idle, $pct% of a core over 10 s"
}
tables_check() {  # WHEN: only the status connection's peer is left, and no session but its own
  local t
  t=$(status_field "(s['transport']['peers'], s['transport']['retiring'], s['load']['sessions'])")
  [ "$t" = "(1, 0, 1)" ] || fail "$1: the server still holds per-connection state (peers, retiring, sessions): $t"
  ok "$1: peers, retiring, sessions $t (the status connection's own)"
  t=$(status_field "s['transport']['socket_handlers_guarded'] > 0")
  [ "$t" = True ] || fail "$1: UCX's connection handlers are not guarded against stale events (stale_socket_events.hpp)"
}
