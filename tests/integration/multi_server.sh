#!/usr/bin/env bash
# Several servers (OUTBOARD_SERVERS=a,b): a client spreads its calls by load, fails over to the
# other server when one dies mid-call (the call reruns there, not locally), and returns to a
# recovered server after OUTBOARD_RETRY_SECONDS. Results are checked by the programs; where the
# calls ran, by both servers' counters.
BUILD=$1
PROGRAMS=$2
source "$(dirname "$0")/lib.sh"

# Two servers with the same secret; A_PID/A_PORT and B_PID/B_PORT. A is restarted on its port.
start_named() {  # NAME [serve flags...]
  local name=$1; shift
  rm -f "$WORK/$name.port"
  "$OUTBOARD" serve --token-file "$TOKEN" --port-file "$WORK/$name.port" "$@" >>"$WORK/$name.log" 2>&1 &
  eval "${name}_PID=$!"
  for _ in $(seq 300); do [ -s "$WORK/$name.port" ] && break; sleep 0.05; done
  [ -s "$WORK/$name.port" ] || { cat "$WORK/$name.log"; fail "server $name did not start"; }
  eval "${name}_PORT=$(cat "$WORK/$name.port")"
}
calls_of() {  # PORT [routine]: calls that server served
  OUTBOARD_SERVERS="127.0.0.1:$1" "$OUTBOARD" status --json 2>/dev/null |
    python3 -c "import json,sys; s=json.load(sys.stdin); print(s['calls_by_routine'].get('${2:-}', 0) if '${2:-}' else s['calls'])" ||
    echo 0
}
stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
trap 'stop_pid "${A_PID:-}"; stop_pid "${B_PID:-}"; cleanup' EXIT

start_named A --port 0
start_named B --port 0
export OUTBOARD_TOKEN_FILE="$TOKEN" OUTBOARD_SERVERS="127.0.0.1:$A_PORT,127.0.0.1:$B_PORT"

# 1. Spread: 8 threads calling at once go to both servers (a busy server makes way).
run_checked threads_check "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/threads_check" --iters 6
a=$(calls_of "$A_PORT"); b=$(calls_of "$B_PORT")
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "8 threads' calls did not spread over both servers (A $a, B $b)"
ok "8 threads' calls spread: server A served $a, server B $b"

# 2. Failover mid-call: the server the FFT program's plan lives on is killed while it executes;
# the program's calls (the one cut off included) go on on the other server, not locally.
log="$WORK/failover.log"
OUTBOARD_CHUNK_BYTES=8388608 "$OUTBOARD" run --offload always --fallback fail -- "$PROGRAMS/fftw_long" --iterations 16 \
  >"$log" 2>&1 & prog=$!
victim=""
for _ in $(seq 600); do
  if [ "$(calls_of "$A_PORT" fftw_c2c)" -ge 2 ]; then victim=A; break; fi
  if [ "$(calls_of "$B_PORT" fftw_c2c)" -ge 2 ]; then victim=B; break; fi
  sleep 0.05
done
[ -n "$victim" ] || fail "neither server served fftw_long"
if [ "$victim" = A ]; then kill -9 "$A_PID"; wait "$A_PID" 2>/dev/null || true; A_PID=""; other=$B_PORT
else kill -9 "$B_PID"; wait "$B_PID" 2>/dev/null || true; B_PID=""; other=$A_PORT; fi
wait $prog || { cat "$log"; fail "fftw_long failed when server $victim died (OUTBOARD_FALLBACK=fail: no local rerun allowed)"; }
grep -qE "^fftw_long: 16 passed, 0 failed$" "$log" || { cat "$log"; fail "wrong FFT results after the failover"; }
grep -q "outboard: warning: server .* failed" "$log" || { cat "$log"; fail "no warning naming the failed server"; }
! grep -q "locally" "$log" || { cat "$log"; fail "a call ran locally although the other server was up"; }
served=$(calls_of "$other" fftw_c2c)
[ "$served" -gt 0 ] || fail "the other server served no transform after the failover"
ok "server $victim killed mid-run: fftw_long finished on the other server ($served transforms there), $(grep -c "outboard: warning" "$log") warning"

# 3. Return: with server A down, a long threads_check runs on B; A comes back on its port and,
# after OUTBOARD_RETRY_SECONDS, serves calls of the same process again.
if [ -n "${A_PID:-}" ]; then stop_pid "$A_PID"; A_PID=""; fi
[ -n "${B_PID:-}" ] || start_named B --port 0
export OUTBOARD_SERVERS="127.0.0.1:$A_PORT,127.0.0.1:$B_PORT"
log="$WORK/return.log"
OUTBOARD_RETRY_SECONDS=1 OUTBOARD_CONNECT_EARLY=0 "$OUTBOARD" run --offload always --fallback fail -- \
  "$PROGRAMS/threads_check" --threads 2 --iters 4000 --size 32 >"$log" 2>&1 & prog=$!
for _ in $(seq 200); do [ "$(calls_of "$B_PORT")" -gt 20 ] && break; sleep 0.05; done
start_named A --port "$A_PORT"
returned=0
for _ in $(seq 200); do
  returned=$(calls_of "$A_PORT")
  [ "$returned" -gt 0 ] && break
  kill -0 $prog 2>/dev/null || break
  sleep 0.05
done
wait $prog || { cat "$log"; fail "threads_check failed while server A came back"; }
grep -qE "^threads_check: [0-9]+ passed, 0 failed$" "$log" || { cat "$log"; fail "wrong results while server A came back"; }
[ "$returned" -gt 0 ] || { cat "$log"; fail "the client never returned to the recovered server A"; }
ok "server A back on port $A_PORT: the running client returned to it ($returned calls there)"
